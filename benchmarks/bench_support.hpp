#pragma once
// Shared by the benchmarks: the plugins loaded once, random states of a tree and a reporter
// that keeps the fastest repetition of every benchmark for the ratio tables.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/plugin/registry.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace liembs::bench {

// The plugins, loaded at the first call: LIEMBS_PLUGIN_PATH first (a saved copy of the plugins
// can be timed against the build's), then the build tree's. Call it before creating any Run,
// whose code lives in the plugin libraries, so that the registry outlives them.
inline Registry& plugin_registry() {
  static Registry registry;
  static bool initialised = false;
  if (!initialised) {
    registry.append_search_path(Registry::environment_search_path());
    registry.append_search_path({{LIEMBS_BENCH_PLUGIN_DIR, "build tree", true}});
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

// Collects CPU time per benchmark name for the ratio table: the fastest repetition
// (--benchmark_repetitions), the estimate least disturbed by other work on the machine.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      const double time = run.GetAdjustedCPUTime();
      const auto [entry, inserted] = times.emplace(run.benchmark_name(), time);
      if (!inserted) entry->second = std::min(entry->second, time);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> times;  // nanoseconds
};

}  // namespace liembs::bench
