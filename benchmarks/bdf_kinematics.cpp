// Cost of one step of the bdf integrator (index-3 backward Euler / BDF2) and of the
// kinematics analysis, at the paper 004 settings: h = 1e-3, Theta = 1e-3 for the dynamics
// (Table 10), ||delta q|| <= 1e-10 for the kinematics (Tables 8, 9). Runs are loaded from the
// TOML files in configs/ like `liembs run` (consistent initial state, the drivers' swaps
// before every step) and stepped directly; the state restarts from the initial one every
// 3000 steps (3 s, the paper's horizon), outside the timing.
//
//   bench-bdf-kinematics [Google Benchmark options]
//
// Counters: newton_iterations per step, size (velocity coordinates + constraint rows, the
// dynamics' Newton system; velocity coordinates, the kinematics' position system).
// The paper-004 mechanisms (configs/paper-004/) are timed when they exist, in each of the
// paper's rotation formulations (rA = SO3xR3, rp = euler-parameters, re = euler-angles); the
// spatial four-bar of configs/four-bar/ (1 degree of freedom, dynamics only) always.
#include "bench_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/host/run.hpp>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace liembs;
using liembs::bench::plugin_registry;

namespace {

double statistic(const Integrator& integrator, const std::string& name) {
  for (const auto& [key, value] : integrator.statistics())
    if (key == name) return value;
  return 0.0;
}

void step_run(benchmark::State& bench, const std::string& config, std::vector<std::string> overrides) {
  const std::filesystem::path file = std::filesystem::path(LIEMBS_BENCH_CONFIG_DIR) / config;
  auto document = ConfigDocument::load(file);
  overrides.push_back("simulation.step_size=1e-3");
  overrides.push_back("simulation.end_time=3.0");
  for (const auto& assignment : overrides) document->set_override(assignment);
  Run run = load_run(document, plugin_registry());
  ForwardDynamics& dynamics = *run.dynamics;
  ConstrainedSystem* constraints = dynamics.constraints();
  const StateSpace space(*run.group, dynamics.free_bodies(), dynamics.joint_coordinates());
  State initial = dynamics.initial_state();
  if (constraints) make_initial_state_consistent(space, *constraints, initial);

  const double h = 1e-3;
  const long long restart_every = 3000;
  State state = initial;
  run.integrator->start(space, state);
  long long steps = 0, since_restart = 0;
  for (auto _ : bench) {
    if (since_restart == restart_every) {
      bench.PauseTiming();
      state = initial;
      run.integrator->start(space, state);
      since_restart = 0;
      bench.ResumeTiming();
    }
    if (constraints) constraints->switch_drivers(state.time);
    run.integrator->step(space, dynamics, state, h);
    if (space.update_charts(state)) run.integrator->charts_switched(space, state);  // re near gimbal lock, as liembs run
    ++since_restart;
    ++steps;
  }
  (void)steps;
  const double integrator_steps = statistic(*run.integrator, "steps");
  bench.counters["newton_iterations"] =
      integrator_steps > 0 ? statistic(*run.integrator, "newton_iterations") / integrator_steps : 0.0;
  const auto n = static_cast<double>(space.velocity_dimension());
  const double m = constraints ? static_cast<double>(constraints->constraint_count()) : 0.0;
  bench.counters["size"] = run.integrator_name == "kinematics" ? n : n + m;
}

void register_benchmarks() {
  const std::string dynamics = "integrator.name=bdf", theta = "integrator.newton_tolerance=1e-3";
  struct Case {
    std::string name, config;
    std::vector<std::string> overrides;
  };
  std::vector<Case> cases = {
      {"bdf1/four-bar-spatial/SO3xR3", "four-bar/spatial.toml",
       {"algorithm.name=newton-euler", "group.name=SO3xR3", dynamics, theta}},
      {"bdf1/four-bar-spatial/SE3", "four-bar/spatial.toml",
       {"algorithm.name=newton-euler", "group.name=SE3", dynamics, theta}},
      {"bdf1-full/four-bar-spatial/SO3xR3", "four-bar/spatial.toml",
       {"algorithm.name=newton-euler", "group.name=SO3xR3", dynamics, theta, "integrator.newton_matrix=full"}},
      {"bdf1-full-fd/four-bar-spatial/SO3xR3", "four-bar/spatial.toml",
       {"algorithm.name=newton-euler", "group.name=SO3xR3", dynamics, theta, "integrator.newton_matrix=full",
        "integrator.newton_derivatives=finite-differences"}},
      {"bdf2/four-bar-spatial/SO3xR3", "four-bar/spatial.toml",
       {"algorithm.name=newton-euler", "group.name=SO3xR3", dynamics, theta, "integrator.order=2"}},
      {"bdf1-reused/four-bar-spatial/SO3xR3", "four-bar/spatial.toml",
       {"algorithm.name=newton-euler", "group.name=SO3xR3", dynamics, theta, "integrator.newton_matrix=quasi-newton-reused"}},
  };
  // Paper 004's three rotation formulations: rA (SO3xR3), rp (euler-parameters), re (euler-angles).
  const std::vector<std::pair<std::string, std::string>> formulations{
      {"rA", "group.name=SO3xR3"}, {"rp", "group.name=euler-parameters"}, {"re", "group.name=euler-angles"}};
  for (const char* mechanism : {"single-pendulum", "double-pendulum", "four-link", "slider-crank"}) {
    const std::string config = std::string("paper-004/") + mechanism + ".toml";
    if (!std::filesystem::exists(std::filesystem::path(LIEMBS_BENCH_CONFIG_DIR) / config)) continue;
    for (const auto& [formulation, group] : formulations) {
      cases.push_back({std::string("bdf1/") + mechanism + "/" + formulation, config, {group, dynamics, theta}});
      // The Newton matrix from differences of the DAE terms (and a dense LU), for comparison.
      cases.push_back({std::string("bdf1-fd/") + mechanism + "/" + formulation, config,
                       {group, dynamics, theta, "integrator.newton_derivatives=finite-differences"}});
      if (std::string(mechanism) != "double-pendulum")  // 2 degrees of freedom: no kinematic analysis
        cases.push_back({std::string("kinematics/") + mechanism + "/" + formulation, config,
                         {group, "integrator.name=kinematics", "integrator.tolerance=1e-10"}});
    }
  }
  for (const Case& c : cases)
    benchmark::RegisterBenchmark(c.name.c_str(), [c](benchmark::State& bench) { step_run(bench, c.config, c.overrides); })
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
