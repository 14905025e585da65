#pragma once
// Shared by the benchmarks: the plugins loaded once, random states of a tree and a reporter
// that keeps the fastest repetition of every benchmark for the ratio tables.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/host/registry.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace liembs::bench {

// The benchmarks' plugin search path: LIEMBS_PLUGIN_PATH first, so that a saved copy of the
// plugins can be timed against the build's (scripts/compare-plugins), then the build tree's
// plugins at the tier of a program's own (SearchPathEntry's default tier is --plugin-path's,
// which would put the build tree before LIEMBS_PLUGIN_PATH).
inline void add_plugin_search_path(Registry& registry) {
  registry.append_search_path(Registry::environment_search_path());
  registry.append_search_path({{LIEMBS_BENCH_PLUGIN_DIR, "build tree", true, SearchTier::program}});
}

// The plugins, loaded at the first call (add_plugin_search_path). Call it before creating any
// Run, whose code lives in the plugin libraries, so that the registry outlives them.
inline Registry& plugin_registry() {
  static Registry registry;
  static bool initialised = false;
  if (!initialised) {
    add_plugin_search_path(registry);
    registry.load();
    initialised = true;
  }
  return registry;
}

// A state with q in [-3, 3], rates, accelerations and forces in [-1, 1], and (floating) a
// random base pose and twist.
struct Sample {
  TreeState state;
  Eigen::VectorXd acceleration, force;
};

inline Sample random_sample(const KinematicTree& tree, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Sample sample;
  const int n = tree.dof(), nv = tree.velocity_dimension();
  sample.state.q = Eigen::VectorXd::NullaryExpr(n, [&] { return 3.0 * uniform(random); });
  sample.state.qd = Eigen::VectorXd::NullaryExpr(n, [&] { return uniform(random); });
  if (tree.floating_base) {
    sample.state.base = se3::exp(Vec6::NullaryExpr([&] { return uniform(random); }));
    sample.state.base_twist = Vec6::NullaryExpr([&] { return uniform(random); });
  }
  sample.acceleration = Eigen::VectorXd::NullaryExpr(nv, [&] { return uniform(random); });
  sample.force = Eigen::VectorXd::NullaryExpr(nv, [&] { return uniform(random); });
  return sample;
}

// Collects CPU time per benchmark name for the ratio tables: the fastest repetition
// (--benchmark_repetitions), the estimate least disturbed by other work on the machine, or,
// when only aggregates are reported (--benchmark_report_aggregates_only), the median.
// Benchmarks that reported nothing (filtered out, --benchmark_list_tests) have no time.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      const double time = run.GetAdjustedCPUTime() * 1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit);  // ns
      if (run.run_type == Run::RT_Iteration) {
        const auto [entry, inserted] = fastest_.emplace(run.run_name.str(), time);
        if (!inserted) entry->second = std::min(entry->second, time);
      } else if (run.aggregate_name == "median") {
        medians_[run.run_name.str()] = time;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Nanoseconds per call, or NaN if the benchmark reported nothing.
  double time(const std::string& name) const {
    if (const auto found = fastest_.find(name); found != fastest_.end()) return found->second;
    if (const auto found = medians_.find(name); found != medians_.end()) return found->second;
    return std::nan("");
  }
  bool has(const std::string& name) const { return !std::isnan(time(name)); }
  bool empty() const { return fastest_.empty() && medians_.empty(); }

 private:
  std::map<std::string, double> fastest_, medians_;
};

}  // namespace liembs::bench
