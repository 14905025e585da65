// Cost per step of the implicit integrators against the length of a chain (issue 30, "long
// chains"; the table in docs/newton-matrices.md, "Long chains"). The model is a fixed-base
// serial chain of n revolute joints with random links (tests/support random_chain_urdf, seed
// 30), released from its random pose under gravity; each benchmark is one whole run (as
// `liembs run` does it, no output folder) of the row's integrator at h = 1 ms (ida: output
// interval 1 ms, its own steps), the model loaded before the timing starts.
//
//   bench-long-chains [--joints 100,250,500,1000,2000] [--horizon SECONDS] [--only NAME]
//                     [Google Benchmark options]
//
// The rows: each integrator with linear_solver = "gmres" (matrix-free Newton, "-gmres") and
// "dense" ("-dense"; bdf2-dense in bdf's default DAE form); without the key generalized-alpha
// takes GMRES from 256 velocity coordinates on, bdf and ida from 64. The dense rows, whose cost
// per step grows like n^3, run a shorter horizon at large n so that a row stays near a minute;
// the table gives each row's steps. ida: rtol 1e-6, atol 1e-8.
// --horizon sets one horizon for every row; --only runs the rows of one integrator label.
#include "bench_support.hpp"

#include <support/model_generators.hpp>

#include <liembs/config/config_table.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace liembs;
using liembs::bench::plugin_registry;

namespace {

constexpr double step_size = 1e-3;
double horizon_override = 0.0;
std::string only;
std::vector<int> joint_counts{100, 250, 500, 1000, 2000};

struct IntegratorChoice {
  std::string label;
  std::vector<std::string> settings;
  // Simulated seconds at n joints (horizon_override replaces it).
  double (*horizon)(int joints);
};

double full_second(int) { return 1.0; }
// The dense Newton matrices: n^3 per matrix, a shorter run at large n.
double dense_horizon(int joints) {
  if (joints <= 100) return 1.0;
  if (joints <= 250) return 0.2;
  if (joints <= 500) return 0.05;
  if (joints <= 1000) return 0.005;
  return 0.002;
}

// Each integrator with linear_solver = "gmres" (matrix-free Newton) and "dense".
const std::string gmres = "integrator.linear_solver=gmres", dense = "integrator.linear_solver=dense";
const std::string ida_tolerances[] = {"integrator.relative_tolerance=1e-6", "integrator.absolute_tolerance=1e-8"};
const std::vector<IntegratorChoice> choices{
    {"generalized-alpha-gmres", {"integrator.name=generalized-alpha", gmres}, full_second},
    {"generalized-alpha-dense", {"integrator.name=generalized-alpha", dense}, dense_horizon},
    {"ida-gmres", {"integrator.name=ida", ida_tolerances[0], ida_tolerances[1], gmres}, full_second},
    {"ida-dense", {"integrator.name=ida", ida_tolerances[0], ida_tolerances[1], dense}, dense_horizon},
    {"bdf2-gmres", {"integrator.name=bdf", "integrator.order=2", gmres}, full_second},
    {"bdf2-dense", {"integrator.name=bdf", "integrator.order=2", dense}, dense_horizon},
};

std::filesystem::path model_folder() {
  static const std::filesystem::path folder = [] {
    auto path = std::filesystem::temp_directory_path() / ("liembs-long-chains-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path;
  }();
  return folder;
}

// The run file of an n-joint chain (written once per n).
std::filesystem::path chain_config(int joints) {
  const auto folder = model_folder();
  const auto toml = folder / ("chain-" + std::to_string(joints) + ".toml");
  if (std::filesystem::exists(toml)) return toml;
  const auto urdf = folder / ("chain-" + std::to_string(joints) + ".urdf");
  std::ofstream(urdf) << test_models::random_chain_urdf(joints, 30, false);
  std::ofstream(toml) << "title = \"random chain of " << joints << " revolute joints\"\n"
                      << "[model]\nurdf = \"" << urdf.filename().string() << "\"\nfloating_base = false\n"
                      << "gravity = [0.0, 0.0, -9.81]\n"
                      << "[algorithm]\nname = \"aba\"\n[group]\nname = \"SE3\"\n"
                      << "[integrator]\nname = \"generalized-alpha\"\n"
                      << "[simulation]\nend_time = 1.0\nstep_size = " << step_size << "\n";
  return toml;
}

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", x);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

struct Measured {
  double horizon = 0.0;
  long long steps = 0;
  std::map<std::string, double> statistics;
  std::string description;
};
std::map<std::string, Measured> measured;  // by benchmark name

void run_chain(benchmark::State& state, const std::string& name, const IntegratorChoice& choice, int joints) {
  const double horizon = horizon_override > 0 ? horizon_override : choice.horizon(joints);
  auto document = ConfigDocument::load(chain_config(joints));
  for (const auto& setting : choice.settings) document->set_override(setting);
  document->set_override("simulation.end_time=" + number(horizon));
  Run run = load_run(document, plugin_registry());
  RunSummary summary;
  for (auto _ : state) summary = execute_run(run, RunOutput{});
  Measured& m = measured[name];
  m.horizon = horizon;
  m.steps = summary.steps;
  m.description = run.integrator->description();
  for (const auto& [key, value] : run.integrator->statistics()) m.statistics[key] = value;
  state.counters["steps"] = static_cast<double>(summary.steps);
}

// Keeps each benchmark's CPU time per iteration (in its unit, ms) for the table.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> milliseconds;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs)
      if (!run.error_occurred && run.run_type == Run::RT_Iteration)
        milliseconds[run.benchmark_name().substr(0, run.benchmark_name().find("/iterations:"))] =
            run.GetAdjustedCPUTime();
    ConsoleReporter::ReportRuns(runs);
  }
};

void print_table(const TableReporter& reporter) {
  if (reporter.milliseconds.empty()) return;
  std::cout << "\nCost per step (CPU time of the whole run / steps), random chain, h = 1 ms:\n\n| integrator |";
  for (const int n : joint_counts) std::cout << " n = " << n << " |";
  std::cout << "\n|---|";
  for (std::size_t i = 0; i < joint_counts.size(); ++i) std::cout << "---|";
  std::cout << "\n";
  for (const auto& choice : choices) {
    if (!only.empty() && choice.label != only) continue;
    std::cout << "| " << choice.label << " |";
    for (const int n : joint_counts) {
      const std::string name = choice.label + "/" + std::to_string(n);
      const auto found = reporter.milliseconds.find(name);
      const auto m = measured.find(name);
      if (found == reporter.milliseconds.end() || m == measured.end() || m->second.steps == 0) {
        std::cout << " — |";
        continue;
      }
      const double ms = found->second / static_cast<double>(m->second.steps);
      char text[64];
      std::snprintf(text, sizeof text, ms < 10 ? " %.2f ms" : " %.0f ms", ms);
      std::cout << text << " (" << m->second.steps << " steps) |";
    }
    std::cout << "\n";
  }
  std::cout << "\nIntegrator statistics per row:\n";
  for (const auto& [name, m] : measured) {
    std::cout << "  " << name << ": " << m.steps << " steps over " << m.horizon << " s";
    for (const auto& [key, value] : m.statistics)
      if (value != 0) std::cout << ", " << key << " " << value;
    std::cout << "\n";
  }
  if (!measured.empty()) std::cout << "  (" << measured.begin()->second.description << ")\n";
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) values.push_back(std::stoi(item));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> arguments{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--horizon") == 0 && i + 1 < argc)
      horizon_override = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--joints") == 0 && i + 1 < argc)
      joint_counts = parse_list(argv[++i]);
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else
      arguments.push_back(argv[i]);
  }
  int count = static_cast<int>(arguments.size());
  plugin_registry();
  for (const auto& choice : choices) {
    if (!only.empty() && choice.label != only) continue;
    for (const int n : joint_counts) {
      const std::string name = choice.label + "/" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&choice, n, name](benchmark::State& state) { run_chain(state, name, choice, n); })
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
  }
  benchmark::Initialize(&count, arguments.data());
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_table(reporter);
  std::filesystem::remove_all(model_folder());
  benchmark::Shutdown();
  return 0;
}
