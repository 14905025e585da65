// Throughput of batch evaluation (issue 17, docs/benchmarks.md "Batch evaluation"): RNEA
// and ABA of the iiwa-like arm for 100,000 random states as
//   - the sum of the kernel calls (TreeDynamics, one state after the other, one core),
//   - BatchEvaluation in memory on 1 and 2 threads,
//   - evaluate_file (liembs eval) from .npy to .npy and from CSV to CSV on 1 and 2 threads.
// Wall-clock time (threads run beside the timing one) and the CPU time of the process per
// row (counter cpu_ns_per_row, all threads); rows per second are printed as items_per_second,
// and the ratios at the end.
#include <liembs/batch/evaluate_file.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/io/npy.hpp>
#include <liembs/plugin/representation.hpp>
#include <liembs/host/run.hpp>

#include "bench_support.hpp"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <string>

namespace fs = std::filesystem;
using namespace liembs;

namespace {

constexpr std::size_t rows = 100000;

// CPU time of the whole process (every thread), for rows per second per core.
double process_cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Runs `body` per iteration (after `untimed`); reports rows per second (wall) and CPU
// nanoseconds per row summed over the threads (counter cpu_ns_per_row).
template <class Body>
void timed(benchmark::State& bench, Body&& body, const std::function<void()>& untimed = {}) {
  double cpu = 0.0;
  for (auto _ : bench) {
    if (untimed) {
      bench.PauseTiming();
      untimed();
      bench.ResumeTiming();
    }
    const double start = process_cpu_seconds();
    body();
    cpu += process_cpu_seconds() - start;
  }
  bench.SetItemsProcessed(static_cast<std::int64_t>(bench.iterations() * rows));
  bench.counters["cpu_ns_per_row"] = cpu * 1e9 / static_cast<double>(bench.iterations() * rows);
}

struct Setup {
  std::string algorithm;
  Registry registry;
  Run run;
  std::unique_ptr<BatchEvaluation> batch;
  std::shared_ptr<const KinematicTree> tree;
  std::unique_ptr<TreeDynamics> dynamics;
  std::vector<double> states;
  fs::path dir;

  explicit Setup(const std::string& name) : algorithm(name) {
    bench::add_plugin_search_path(registry);  // LIEMBS_PLUGIN_PATH first, then the build tree
    auto document = ConfigDocument::load(LIEMBS_BENCH_CONFIG_DIR "/examples/iiwa-arm.toml");
    document->set_override("algorithm.name=" + algorithm);
    run = load_run(document, registry, RunPurpose::evaluate);
    batch = std::make_unique<BatchEvaluation>(run, 1);
    tree = std::make_shared<const KinematicTree>(compile_tree(*run.model));
    dynamics = run.representation->bind_tree(tree);
    std::mt19937 random(1);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    states.resize(rows * batch->input_count());
    for (double& value : states) value = 3.0 * uniform(random);
    dir = fs::temp_directory_path() / ("liembs-bench-eval-" + std::to_string(::getpid()) + "-" + algorithm);
    fs::create_directories(dir);
    std::ofstream npy(dir / "states.npy", std::ios::binary);
    npy << npy::header_bytes(rows, batch->input_count());
    npy.write(reinterpret_cast<const char*>(states.data()), static_cast<std::streamsize>(states.size() * 8));
    std::ofstream csv(dir / "states.csv");
    for (std::size_t c = 0; c < batch->input_count(); ++c) csv << (c ? "," : "") << batch->input_columns()[c];
    csv << '\n' << std::setprecision(17);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < batch->input_count(); ++c) csv << (c ? "," : "") << states[r * batch->input_count() + c];
      csv << '\n';
    }
  }
  ~Setup() { fs::remove_all(dir); }
};

Setup& setup(const std::string& algorithm) {
  static Setup rnea("rnea"), aba("aba");
  return algorithm == "rnea" ? rnea : aba;
}

void kernel_sum(benchmark::State& bench, const std::string& algorithm) {
  Setup& s = setup(algorithm);
  const int n = s.tree->dof();
  TreeState state;
  Eigen::VectorXd out;
  timed(bench, [&] {
    for (std::size_t r = 0; r < rows; ++r) {
      const double* in = s.states.data() + r * 3 * n;
      state.q = Eigen::Map<const Eigen::VectorXd>(in, n);
      state.qd = Eigen::Map<const Eigen::VectorXd>(in + n, n);
      if (algorithm == "rnea") s.dynamics->inverse_dynamics(state, Eigen::Map<const Eigen::VectorXd>(in + 2 * n, n), out);
      else s.dynamics->forward_dynamics(state, Eigen::Map<const Eigen::VectorXd>(in + 2 * n, n), out);
      benchmark::DoNotOptimize(out.data());
    }
  });
}

void in_memory(benchmark::State& bench, const std::string& algorithm) {
  Setup& s = setup(algorithm);
  s.batch->set_threads(static_cast<unsigned>(bench.range(0)));
  std::vector<double> outputs(rows * s.batch->output_count());
  timed(bench, [&] { s.batch->evaluate(s.states, outputs); });
}

// Each iteration writes a new output: the one before is removed untimed. Replacing an
// existing file would add the file system's deletion of the old one to the time, the same
// for every thread count (docs/benchmarks.md, "Batch evaluation": on this machine's ext4,
// the write-back ext4 starts when a file is renamed over another, and a synchronous
// discard of the old file's blocks).
void file(benchmark::State& bench, const std::string& algorithm, const char* input, const char* output) {
  Setup& s = setup(algorithm);
  s.batch->set_threads(static_cast<unsigned>(bench.range(0)));
  timed(bench, [&] { evaluate_file(*s.batch, s.dir / input, s.dir / output, algorithm); },
        [&] { fs::remove(s.dir / output); });
}

// The fastest repetition of each benchmark in wall-clock time (the threads' work is not in
// the CPU time of the timing thread).
class WallClockReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    // The fastest repetition; with --benchmark_report_aggregates_only, the median aggregate.
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type != Run::RT_Iteration && !median) continue;
      const double time = run.GetAdjustedRealTime() * 1e6;  // ms -> ns
      const auto [entry, inserted] = times.emplace(run.run_name.str(), time);
      if (!inserted) entry->second = std::min(entry->second, time);
      const auto counter = run.counters.find("cpu_ns_per_row");
      if (counter != run.counters.end()) {
        const auto [cpu_entry, cpu_inserted] = cpu_per_row.emplace(run.run_name.str(), counter->second.value);
        if (!cpu_inserted) cpu_entry->second = std::min(cpu_entry->second, counter->second.value);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> times;        // nanoseconds, wall clock
  std::map<std::string, double> cpu_per_row;  // nanoseconds of CPU (all threads) per row
};

}  // namespace

int main(int argc, char** argv) {
  for (const std::string algorithm : {"rnea", "aba"}) {
    benchmark::RegisterBenchmark(("iiwa/" + algorithm + "/kernel-sum").c_str(), kernel_sum, algorithm)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("iiwa/" + algorithm + "/batch").c_str(), in_memory, algorithm)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("iiwa/" + algorithm + "/npy").c_str(), file, algorithm, "states.npy", "out.npy")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("iiwa/" + algorithm + "/csv").c_str(), file, algorithm, "states.csv", "out.csv")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  WallClockReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto t = [&](const std::string& name) {
    const auto found = reporter.times.find(name);
    return found == reporter.times.end() ? 0.0 : found->second;
  };
  const auto c = [&](const std::string& name) {
    const auto found = reporter.cpu_per_row.find(name);
    return found == reporter.cpu_per_row.end() ? 0.0 : found->second;
  };
  // Per core: CPU time summed over the threads, so that other work on the machine does not
  // count; scaling: wall clock on 1 thread over wall clock on 2.
  if (reporter.cpu_per_row.empty()) return 0;  // nothing ran (--benchmark_list_tests, a filter that matches nothing)
  // CPU per row on 2 threads over 1: above 1 when the threads slow each other down (shared
  // cache lines, memory bandwidth); unlike the wall-clock scaling it means something on a
  // loaded machine too.
  std::printf("\n| algorithm | kernel sum: rows/s per core | batch / kernel sum (CPU) | .npy / kernel sum (CPU) | "
              ".npy rows/s per core | CSV rows/s per core | scaling on 2 threads (wall): batch, .npy, CSV | "
              "CPU per row, 2 threads / 1: batch, .npy, CSV |\n"
              "|---|---|---|---|---|---|---|---|\n");
  // A cell whose entries did not run (a --benchmark_filter) is left as "-".
  const auto cell = [](double numerator, double denominator, const char* format = "%.2f") {
    if (numerator == 0.0 || denominator == 0.0) return std::string("-");
    char text[32];
    std::snprintf(text, sizeof text, format, numerator / denominator);
    return std::string(text);
  };
  for (const std::string algorithm : {"rnea", "aba"}) {
    const std::string p = "iiwa/" + algorithm + "/";
    const double kernel = c(p + "kernel-sum/real_time");
    if (kernel == 0.0) continue;
    const auto ratio_of = [&](const auto& of, const std::string& a, const std::string& b) {
      return cell(of(p + a + "/real_time"), of(p + b + "/real_time"));
    };
    std::printf("| %s | %.0f | %s | %s | %s | %s | %s, %s, %s | %s, %s, %s |\n", algorithm.c_str(), 1e9 / kernel,
                ratio_of(c, "batch/1", "kernel-sum").c_str(), ratio_of(c, "npy/1", "kernel-sum").c_str(),
                cell(1e9, c(p + "npy/1/real_time"), "%.0f").c_str(), cell(1e9, c(p + "csv/1/real_time"), "%.0f").c_str(),
                ratio_of(t, "batch/1", "batch/2").c_str(), ratio_of(t, "npy/1", "npy/2").c_str(),
                ratio_of(t, "csv/1", "csv/2").c_str(), ratio_of(c, "batch/2", "batch/1").c_str(),
                ratio_of(c, "npy/2", "npy/1").c_str(), ratio_of(c, "csv/2", "csv/1").c_str());
  }
  return 0;
}
