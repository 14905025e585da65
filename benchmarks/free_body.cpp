// Cost of the Lie group primitives and of one Munthe-Kaas RK4 step of a free body on each
// group, called through the plugin interfaces as a run does.
#include <liembs/config/config_table.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3xr3.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/host/run.hpp>

#include "bench_support.hpp"

#include <benchmark/benchmark.h>

using namespace liembs;

namespace {

Vec6 sample_twist() {
  Vec6 x;
  x << 0.3, -0.2, 0.5, 0.1, 0.4, -0.3;
  return x;
}

void se3_exp(benchmark::State& state) {
  Vec6 x = sample_twist();
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    Pose C = se3::exp(x);
    benchmark::DoNotOptimize(C);
  }
}
BENCHMARK(se3_exp);

void se3_dexpinv_left_apply(benchmark::State& state) {
  Vec6 x = sample_twist(), v = sample_twist().reverse();
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    Vec6 out = se3::dexpinv_left_apply(x, v);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(se3_dexpinv_left_apply);

void so3xr3_dexpinv_left_apply(benchmark::State& state) {
  Vec6 x = sample_twist(), v = sample_twist().reverse();
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    Vec6 out = so3xr3::dexpinv_left_apply(x, v);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(so3xr3_dexpinv_left_apply);

void rkmk_rk4_step(benchmark::State& bench, const char* group) {
  Registry registry;
  bench::add_plugin_search_path(registry);  // LIEMBS_PLUGIN_PATH first, then the build tree
  auto document = ConfigDocument::load(std::string(LIEMBS_BENCH_DATA_DIR) + "/free-body.toml");
  document->set_override(std::string("group.name=") + group);
  Run run = load_run(document, registry);
  StateSpace space(*run.group, run.model->bodies.size(), 0);
  State state = initial_state(*run.model, *run.group);
  run.integrator->start(space, state);
  for (auto _ : bench) run.integrator->step(space, *run.dynamics, state, 1e-4);
  benchmark::DoNotOptimize(state.velocities.data());
}
BENCHMARK_CAPTURE(rkmk_rk4_step, SE3, "SE3");
BENCHMARK_CAPTURE(rkmk_rk4_step, SO3xR3, "SO3xR3");

}  // namespace

BENCHMARK_MAIN();
