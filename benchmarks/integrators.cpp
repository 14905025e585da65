// Cost per simulated second of each integrator (rkmk rk4, generalized-alpha, ida) at
// matched accuracy, on the paper-002 examples and the four-bar linkages (README.md,
// "Benchmarks"). Runs are loaded from the TOML files in configs/ and timed as whole runs
// (execute_run, no output folder), as `liembs run` would do them.
//
//   bench-integrators [--target ERROR] [--horizon SECONDS] [--show-ladder] [--newton-matrices]
//                     [Google Benchmark options]
//
// --newton-matrices compares instead the implicit integrators (generalized-alpha, ida, bdf of
// order 2) with their Newton matrices from analytic derivatives and from finite differences
// (newton_derivatives = "finite-differences"; "-fd" rows; generalized-alpha also with a new
// matrix every step, "-every-step"), on the absolute-coordinate
// four-bar and paper 004's four link, and on trees in relative coordinates (a chain, the
// floating torso, the spatial four-bar's loop closure) (docs/newton-matrices.md).
//
// Matched accuracy: for every row (example, formulation, group) a reference final state is
// computed with rkmk rk4 at a small step (its own error estimated against twice that step).
// For each integrator the step size (rkmk, generalized-alpha) or relative tolerance (ida) is
// the coarsest of a ladder whose final-pose error, and that of the next finer rung, is below
// the target. This choice is made once per benchmark, before its timing starts. The error is
// the largest distance of a body pose from the reference at the end time: max over the
// bodies of |R - R_ref| (Frobenius) and |r - r_ref| (m). The end time is 1 s, 0.25 s for the
// spherical double pendulum (see rows()).
#include "bench_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace liembs;
using liembs::bench::plugin_registry;

namespace {

double target_error = 1e-6;  // final-pose error every integrator must reach
double horizon_override = 0.0;  // --horizon: simulated seconds of every row (0: each row's own)
bool show_ladder = false;    // print every rung's error while calibrating
bool newton_matrices = false;  // --newton-matrices: the implicit integrators, analytic against differenced

// Reference solution: rkmk rk4 at this step, checked against twice the step.
constexpr double reference_step = 2e-5;
// ida's output interval (simulation.step_size); its internal steps are its own.
constexpr double ida_output_interval = 0.01;
// ida's absolute tolerance as a fraction of its relative tolerance (the defaults' ratio).
constexpr double ida_absolute_per_relative = 1e-2;

// One row group of the table: a config file with the formulation and group it runs in.
struct Row {
  std::string example;      // short name for the table
  std::string formulation;  // "absolute SE3", "relative", ...
  std::string config;       // path below configs/
  std::vector<std::string> overrides;
  double own_horizon = 1.0;  // simulated seconds per run
  double horizon() const { return horizon_override > 0 ? horizon_override : own_horizon; }
  std::string key() const { return example + "/" + formulation; }
};

enum class Control { step_size, relative_tolerance };

struct IntegratorChoice {
  std::string name;
  Control control;
  std::vector<double> ladder;  // coarse to fine
  std::vector<std::string> options = {};  // further integrator settings
  std::string label = {};                 // the table's name when not `name`
  const std::string& shown() const { return label.empty() ? name : label; }
};

std::string toml_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", x);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string short_number(double x, int digits = 2) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
  return buffer;
}

// Settings of one run of `integrator` at ladder rung `rung` over `horizon` seconds.
std::vector<std::string> integrator_settings(const IntegratorChoice& integrator, double rung, double horizon) {
  std::vector<std::string> settings{"integrator.name=" + integrator.name,
                                    "simulation.end_time=" + toml_number(horizon)};
  settings.insert(settings.end(), integrator.options.begin(), integrator.options.end());
  if (integrator.control == Control::step_size) {
    settings.push_back("simulation.step_size=" + toml_number(rung));
  } else {
    settings.push_back("simulation.step_size=" + toml_number(ida_output_interval));
    settings.push_back("integrator.relative_tolerance=" + toml_number(rung));
    settings.push_back("integrator.absolute_tolerance=" + toml_number(rung * ida_absolute_per_relative));
  }
  return settings;
}

Run load(const Row& row, const std::vector<std::string>& settings) {
  auto document = ConfigDocument::load(std::string(LIEMBS_BENCH_CONFIG_DIR) + "/" + row.config);
  for (const auto& assignment : row.overrides) document->set_override(assignment);
  for (const auto& assignment : settings) document->set_override(assignment);
  return load_run(document, plugin_registry());
}

// What a run ended with: the model bodies' final poses and its step count.
struct Outcome {
  std::vector<Pose> poses;
  long long steps = 0;  // integrator steps (ida: internal steps, not output points)
  long long newton_iterations = 0;  // implicit integrators
};

Outcome outcome_of(Run& run, const RunSummary& summary) {
  Outcome outcome;
  std::vector<Vec6> twists;
  run.dynamics->body_motion(summary.final_state, outcome.poses, twists);
  outcome.steps = summary.steps;
  for (const auto& [name, value] : run.integrator->statistics()) {
    if (name == "steps") outcome.steps = static_cast<long long>(value);
    if (name == "newton_iterations") outcome.newton_iterations = static_cast<long long>(value);
  }
  return outcome;
}

Outcome simulate(const Row& row, const std::vector<std::string>& settings) {
  Run run = load(row, settings);
  const RunSummary summary = execute_run(run, RunOutput{});
  return outcome_of(run, summary);
}

double pose_error(const std::vector<Pose>& poses, const std::vector<Pose>& reference) {
  double error = 0.0;
  for (std::size_t i = 0; i < poses.size(); ++i)
    error = std::max({error, (poses[i].R - reference[i].R).norm(), (poses[i].r - reference[i].r).norm()});
  return error;
}

// rkmk's ladder stops 2.5 times above the reference step.
const IntegratorChoice rkmk{"rkmk", Control::step_size, {5e-2, 2e-2, 1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5}};
const IntegratorChoice generalized_alpha{
    "generalized-alpha",
    Control::step_size,
    {5e-2, 2e-2, 1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5, 5e-6, 2e-6}};
const IntegratorChoice ida{
    "ida", Control::relative_tolerance, {1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12}};
const std::vector<const IntegratorChoice*> all_integrators = {&rkmk, &generalized_alpha, &ida};

// --newton-matrices: analytic against differenced Newton matrices.
const std::string differences = "integrator.newton_derivatives=finite-differences";
const IntegratorChoice generalized_alpha_fd{"generalized-alpha", Control::step_size, generalized_alpha.ladder,
                                            {differences}, "generalized-alpha-fd"};
const IntegratorChoice ida_fd{"ida", Control::relative_tolerance, ida.ladder, {differences}, "ida-fd"};
const IntegratorChoice ida_dae{"ida", Control::relative_tolerance, ida.ladder, {"integrator.unconstrained_form=dae"},
                               "ida-dae"};
// A tree without loops in either form with analytic matrices (the default is one of them).
const IntegratorChoice generalized_alpha_ode{"generalized-alpha", Control::step_size, generalized_alpha.ladder,
                                             {"integrator.unconstrained_form=ode"}, "generalized-alpha-ode"};
const IntegratorChoice generalized_alpha_dae{"generalized-alpha", Control::step_size, generalized_alpha.ladder,
                                             {"integrator.unconstrained_form=dae"}, "generalized-alpha-dae"};
// A new iteration matrix every step (its default keeps one while Newton contracts fast): what
// the matrix itself costs, analytic against differenced.
const std::string every_step = "integrator.reuse_iteration_matrix=false";
const IntegratorChoice generalized_alpha_every_step{"generalized-alpha", Control::step_size, generalized_alpha.ladder,
                                                    {every_step}, "generalized-alpha-every-step"};
const IntegratorChoice generalized_alpha_fd_every_step{"generalized-alpha", Control::step_size, generalized_alpha.ladder,
                                                       {differences, every_step}, "generalized-alpha-fd-every-step"};
const std::vector<double> bdf_ladder{1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5, 5e-6, 2e-6};
const IntegratorChoice bdf{"bdf", Control::step_size, bdf_ladder, {"integrator.order=2"}, "bdf2"};
const IntegratorChoice bdf_fd{"bdf", Control::step_size, bdf_ladder, {"integrator.order=2", differences}, "bdf2-fd"};
const IntegratorChoice bdf_ode{"bdf", Control::step_size, bdf_ladder, {"integrator.order=2", "integrator.unconstrained_form=ode"},
                               "bdf2-ode"};
const std::vector<const IntegratorChoice*> newton_matrix_integrators = {
    &generalized_alpha, &generalized_alpha_fd, &generalized_alpha_ode, &generalized_alpha_dae,
    &generalized_alpha_every_step, &generalized_alpha_fd_every_step, &ida, &ida_fd, &ida_dae, &bdf, &bdf_fd, &bdf_ode};
std::vector<const IntegratorChoice*> integrators = all_integrators;

std::string benchmark_name(const Row& row, const IntegratorChoice& integrator) {
  return row.key() + "/" + integrator.shown();
}

struct Reference {
  std::vector<Pose> poses;
  double error_estimate = 0.0;  // |fine - coarse| / 15 (Richardson, order 4)
};

std::map<std::string, Reference> references;  // by row key

const Reference& reference_for(const Row& row) {
  auto found = references.find(row.key());
  if (found != references.end()) return found->second;
  const Outcome fine = simulate(row, integrator_settings(rkmk, reference_step, row.horizon()));
  const Outcome coarse = simulate(row, integrator_settings(rkmk, 2 * reference_step, row.horizon()));
  Reference reference{fine.poses, pose_error(coarse.poses, fine.poses) / 15.0};
  return references.emplace(row.key(), std::move(reference)).first->second;
}

// The ladder rung chosen for one benchmark.
struct Calibration {
  double rung = 0.0;
  double error = 0.0;
  long long steps = 0;
  bool reached = false;  // false: no rung met the target; the finest rung that ran is timed
  std::string note;      // failures at finer rungs, if any
};

Calibration calibrate(const Row& row, const IntegratorChoice& integrator) {
  const Reference& reference = reference_for(row);
  const std::size_t rungs = integrator.ladder.size();
  // Error of each rung that ran (NaN: the run failed, with its message).
  std::vector<double> errors(rungs, std::nan(""));
  std::vector<long long> steps(rungs, 0);
  std::vector<std::string> failures(rungs);
  // Failures finer than the chosen rung say why the target could not be reached with less
  // work; coarse rungs that blow up are expected and not reported.
  auto calibration_at = [&](std::size_t chosen) {
    Calibration calibration{integrator.ladder[chosen], errors[chosen], steps[chosen],
                            errors[chosen] < target_error, ""};
    for (std::size_t k = chosen + 1; k < rungs; ++k)
      if (!failures[k].empty())
        calibration.note +=
            (calibration.note.empty() ? "" : "; ") + short_number(integrator.ladder[k]) + ": " + failures[k];
    return calibration;
  };
  std::size_t finest_that_ran = rungs;
  for (std::size_t k = 0; k < rungs; ++k) {
    try {
      const Outcome outcome = simulate(row, integrator_settings(integrator, integrator.ladder[k], row.horizon()));
      errors[k] = pose_error(outcome.poses, reference.poses);
      steps[k] = outcome.steps;
      finest_that_ran = k;
    } catch (const std::exception& error) {
      failures[k] = std::string(error.what()).substr(0, 240);
    }
    if (show_ladder)
      std::cerr << "  " << benchmark_name(row, integrator) << " " << short_number(integrator.ladder[k]) << ": error "
                << short_number(errors[k]) << ", steps " << steps[k] << "\n";
    // Coarsest rung below the target whose finer neighbour is too (guards against an error
    // that is small at the end time by chance).
    if (k > 0 && errors[k - 1] < target_error && errors[k] < target_error) return calibration_at(k - 1);
  }
  // No two neighbours below the target: time the finest rung that ran.
  if (finest_that_ran < rungs) return calibration_at(finest_that_ran);
  Calibration none;
  for (std::size_t k = 0; k < rungs; ++k)
    none.note += (k ? "; " : "") + short_number(integrator.ladder[k]) + ": " + failures[k];
  return none;
}

std::map<std::string, Calibration> calibrations;  // by benchmark name

void time_integrator(benchmark::State& bench, const Row& row, const IntegratorChoice& integrator) {
  const std::string name = benchmark_name(row, integrator);
  if (!calibrations.count(name)) {
    try {
      calibrations[name] = calibrate(row, integrator);
    } catch (const std::exception& error) {  // the reference run failed
      bench.SkipWithError(error.what());
      return;
    }
  }
  const Calibration& calibration = calibrations[name];
  if (calibration.steps == 0) {
    bench.SkipWithError(("no rung of the ladder ran: " + calibration.note).c_str());
    return;
  }
  Run run = load(row, integrator_settings(integrator, calibration.rung, row.horizon()));
  RunSummary summary;
  for (auto _ : bench) summary = execute_run(run, RunOutput{});
  const Outcome outcome = outcome_of(run, summary);
  const double error = pose_error(outcome.poses, reference_for(row).poses);
  // Seconds of CPU time per simulated second (Google Benchmark shows it with an SI prefix).
  bench.counters["cpu_per_sim_s"] =
      benchmark::Counter(row.horizon(), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  bench.counters["steps"] = static_cast<double>(outcome.steps);
  bench.counters["error"] = error;
  if (outcome.newton_iterations > 0)
    bench.counters["newton_per_step"] = static_cast<double>(outcome.newton_iterations) / outcome.steps;
  bench.counters["cpu_per_step"] = benchmark::Counter(static_cast<double>(outcome.steps),
                                                      benchmark::Counter::kIsIterationInvariantRate |
                                                          benchmark::Counter::kInvert);
  bench.counters[integrator.control == Control::step_size ? "h" : "rtol"] = calibration.rung;
  if (!calibration.reached) bench.SetLabel("target not reached");
}

// Collects CPU time per benchmark name for the table: the median over repetitions
// (--benchmark_repetitions), since other processes on the machine inflate single timings;
// with --benchmark_report_aggregates_only, the median aggregate.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      const double seconds = run.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      if (run.run_type == Run::RT_Iteration) repetitions[run.run_name.str()].push_back(seconds);
      else if (run.aggregate_name == "median") medians[run.run_name.str()] = seconds;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // CPU seconds per run, median over the repetitions; 0 if the benchmark did not run.
  double seconds(const std::string& name) const {
    const auto found = repetitions.find(name);
    if (found == repetitions.end()) {
      const auto median = medians.find(name);
      return median == medians.end() ? 0.0 : median->second;
    }
    std::vector<double> times = found->second;
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  }
  std::map<std::string, std::vector<double>> repetitions;
  std::map<std::string, double> medians;
};

std::vector<Row> rows(bool newton_matrices) {
  std::vector<Row> result;
  if (newton_matrices) {
    for (const char* group : {"SE3", "SO3xR3"})
      result.push_back({"four-bar-spatial", std::string("absolute ") + group, "four-bar/spatial.toml",
                        {"algorithm.name=newton-euler", std::string("group.name=") + group}});
    for (const char* group : {"SO3xR3", "euler-parameters"})
      result.push_back({"four-link (004)", std::string("absolute ") + group, "paper-004/four-link.toml",
                        {"algorithm.name=newton-euler", std::string("group.name=") + group}});
    // Trees in relative coordinates: a fixed-base chain, the floating torso (nv = 30) and the
    // spatial four-bar's loop closure.
    result.push_back({"chain-6", "relative", "benchmarks/chain-6.toml", {}});
    result.push_back({"iiwa-arm", "relative", "benchmarks/iiwa-arm.toml", {}});
    for (const char* group : {"SE3", "SO3xR3"})
      result.push_back({"floating-torso", std::string("relative ") + group, "benchmarks/floating-torso.toml",
                        {std::string("group.name=") + group}});
    result.push_back({"four-bar-spatial", "relative", "four-bar/spatial.toml", {"algorithm.name=aba"}});
    return result;
  }
  for (const char* example : {"heavy-top", "spherical-double-pendulum", "floating-bodies", "spherical-three-bar"}) {
    // The double pendulum whips (body 2 starts at |omega| = 77 rad/s): its sensitivity to errors
    // grows so fast that a second order method cannot reach the target over 1 s in reasonable time.
    const double own_horizon = std::string(example) == "spherical-double-pendulum" ? 0.25 : 1.0;
    for (const char* group : {"SE3", "SO3xR3"})
      result.push_back({example, std::string("absolute ") + group, std::string("paper-002/") + example + ".toml",
                        {std::string("group.name=") + group}, own_horizon});
  }
  for (const char* linkage : {"planar", "spatial"}) {
    const std::string example = std::string("four-bar-") + linkage;
    const std::string config = std::string("four-bar/") + linkage + ".toml";
    // Relative coordinates of a fixed-base loop have no free body: the group plays no part.
    result.push_back({example, "relative", config, {"algorithm.name=aba"}});
    for (const char* group : {"SE3", "SO3xR3"})
      result.push_back({example, std::string("absolute ") + group, config,
                        {"algorithm.name=newton-euler", std::string("group.name=") + group}});
  }
  return result;
}

void print_table(const std::vector<Row>& table_rows, const RecordingReporter& reporter) {
  if (reporter.repetitions.empty() && reporter.medians.empty()) return;  // nothing ran (--benchmark_list_tests)
  std::cout << "\nMatched accuracy: final-pose error < " << short_number(target_error)
            << " at the end time against rkmk rk4 at h = " << short_number(reference_step)
            << " s. Cost: CPU time per simulated second (median of the repetitions).\n\n"
            << "| example | formulation | end time | integrator | h or rtol | error | steps | µs / step "
               "| ms / simulated s | / cheapest |\n"
            << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : table_rows) {
    double cheapest = 1e300;
    for (const auto* integrator : integrators) {
      const double seconds = reporter.seconds(benchmark_name(row, *integrator));
      if (seconds > 0) cheapest = std::min(cheapest, seconds);
    }
    for (const auto* integrator : integrators) {
      const std::string name = benchmark_name(row, *integrator);
      const double seconds = reporter.seconds(name);
      const auto calibration = calibrations.find(name);
      if (seconds == 0 || calibration == calibrations.end()) continue;
      const Calibration& c = calibration->second;
      const double ms_per_simulated_second = seconds * 1e3 / row.horizon();
      std::cout << "| " << row.example << " | " << row.formulation << " | " << short_number(row.horizon()) << " s | "
                << integrator->shown() << " | "
                << (integrator->control == Control::step_size ? "h = " : "rtol = ") << short_number(c.rung) << " | "
                << short_number(c.error) << (c.reached ? "" : " (target not reached)") << " | " << c.steps << " | "
                << std::fixed << std::setprecision(1) << seconds * 1e6 / static_cast<double>(c.steps) << " | "
                << std::fixed << std::setprecision(ms_per_simulated_second < 10 ? 2 : 1) << ms_per_simulated_second
                << " | " << std::setprecision(2) << seconds / cheapest << " |\n"
                << std::defaultfloat;
    }
  }
  // Failures are part of the result (an integrator that cannot run at a tolerance).
  bool any_failure = false;
  for (const auto& row : table_rows) {
    for (const auto* integrator : integrators) {
      const auto calibration = calibrations.find(benchmark_name(row, *integrator));
      if (calibration == calibrations.end() || calibration->second.note.empty()) continue;
      if (!any_failure) std::cout << "\nRuns that failed at rungs finer than the chosen one:\n";
      any_failure = true;
      std::cout << "  " << benchmark_name(row, *integrator) << " at " << calibration->second.note << "\n";
    }
  }
  // The reference must be far more accurate than the target for the errors above to mean anything.
  std::cout << "\nReference error estimates (|rk4(h) - rk4(2h)| / 15):\n";
  for (const auto& row : table_rows) {
    const auto found = references.find(row.key());
    if (found == references.end()) continue;
    std::cout << "  " << row.key() << ": " << short_number(found->second.error_estimate)
              << (found->second.error_estimate > 1e-2 * target_error ? "  (not small against the target)" : "") << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> arguments{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--target") == 0 && i + 1 < argc) target_error = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--horizon") == 0 && i + 1 < argc) horizon_override = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--show-ladder") == 0) show_ladder = true;
    else if (std::strcmp(argv[i], "--newton-matrices") == 0) newton_matrices = true;
    else arguments.push_back(argv[i]);
  }
  if (!(target_error > 0) || horizon_override < 0) {
    std::cerr << "bench-integrators: --target and --horizon must be positive\n";
    return 1;
  }
  if (newton_matrices) integrators = newton_matrix_integrators;
  const std::vector<Row> table_rows = rows(newton_matrices);
  try {
    plugin_registry();
  } catch (const std::exception& error) {
    std::cerr << "bench-integrators: " << error.what() << "\n";
    return 1;
  }
  for (const auto& row : table_rows)
    for (const auto* integrator : integrators)
      benchmark::RegisterBenchmark(
          benchmark_name(row, *integrator).c_str(),
          [row, integrator](benchmark::State& bench) { time_integrator(bench, row, *integrator); })
          ->Unit(benchmark::kMillisecond);

  int count = static_cast<int>(arguments.size());
  benchmark::Initialize(&count, arguments.data());
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_table(table_rows, reporter);
  return 0;
}
