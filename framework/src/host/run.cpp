#include "run_json.hpp"
#include "../host/run_recorders.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/prescribed_motion.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/util/format.hpp>
#include <liembs/util/nearest_name.hpp>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <unistd.h>

namespace liembs {

namespace {

// "'link2' (principal moments 0, 0.01, 12.4)" for each body whose inertia has a zero
// principal moment (JSON models may have them), for the messages of a singular system.
std::string singular_inertia_bodies(const Model& model) {
  std::string out;
  for (const RigidBody& body : model.bodies) {
    const Vec3 moments = Eigen::SelfAdjointEigenSolver<Mat3>(body.inertia).eigenvalues();
    if (moments.minCoeff() > 1e-12 * moments.maxCoeff()) continue;
    out += std::string(out.empty() ? "" : ", ") + "'" + body.name + "' (principal moments " + format_number(moments(0), 3) +
           ", " + format_number(moments(1), 3) + ", " + format_number(moments(2), 3) + ")";
  }
  return out;
}

// The bodies the initial projection moved by more than RunSettings::initial_projection_tolerance
// (position in m, orientation in rad, velocity in m/s and rad/s, world frame), the largest
// move first, or "" when none did.
std::string initial_projection_moves(const Model& model, ForwardDynamics& dynamics, const State& given,
                                     const State& projected) {
  std::vector<Pose> before, after;
  std::vector<Vec6> twists_before, twists_after;
  dynamics.body_motion(given, before, twists_before);
  dynamics.body_motion(projected, after, twists_after);
  std::vector<std::pair<double, std::string>> moved;
  for (std::size_t b = 0; b < model.bodies.size() && b < before.size(); ++b) {
    const Pose &p0 = before[b], &p1 = after[b];
    const double amounts[4] = {
        (p1.r - p0.r).norm(), so3::log(p0.R.transpose() * p1.R).norm(),
        (p1.R * twists_after[b].tail<3>() - p0.R * twists_before[b].tail<3>()).norm(),
        (p1.R * twists_after[b].head<3>() - p0.R * twists_before[b].head<3>()).norm()};
    const double largest = *std::max_element(std::begin(amounts), std::end(amounts));
    if (!(largest > RunSettings::initial_projection_tolerance)) continue;
    static const char* const what[4] = {" m in position", " rad in orientation", " m/s in velocity", " rad/s in angular velocity"};
    std::string text;
    for (int k = 0; k < 4; ++k)
      if (amounts[k] > RunSettings::initial_projection_tolerance)
        text += std::string(text.empty() ? "" : ", ") + format_number(amounts[k], 3) + what[k];
    moved.emplace_back(largest, "'" + model.bodies[b].name + "' by " + text);
  }
  std::stable_sort(moved.begin(), moved.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [amount, text] : moved) out += std::string(out.empty() ? "" : "; ") + text;
  return out;
}

// Creates the component named by `section.name`; an unknown name is reported at the
// position of the `name` key.
template <class Interface>
std::unique_ptr<Interface> create_from_section(const Registry& registry, const ConfigTable& section,
                                               std::string& name) {
  name = section.string("name");
  try {
    registry.find(Interface::kind, name);
  } catch (const PluginError& error) {
    throw PluginError(section.location("name") + ": " + section.path_of("name") + ": " + error.what());
  }
  return registry.create<Interface>(name, section);
}

}  // namespace

std::unique_ptr<BatchEvaluator> bind_batch_evaluator(const Algorithm& algorithm, const DynamicsContext& context) {
  if (!algorithm.capabilities().batch_evaluation)
    throw ModelError("it has no batch evaluation for 'liembs eval' (it declares no batch_evaluation capability: it "
                     "only provides forward dynamics for runs)");
  return algorithm.bind_evaluator(context);
}

Run load_run(const std::shared_ptr<ConfigDocument>& document, Registry& registry, RunPurpose purpose) {
  ConfigTable root = document->root();
  const bool simulate = purpose == RunPurpose::simulate;
  Run run;
  run.config_file = document->file();
  run.title = root.string_or("title", run.config_file.stem().string());

  if (auto plugins = root.optional_table("plugins")) {
    std::vector<SearchPathEntry> paths;
    const auto base = run.config_file.parent_path();
    for (const auto& item : plugins->strings_or("paths", {})) {
      std::filesystem::path path(item);
      if (path.is_relative()) path = base / path;
      paths.push_back({path, plugins->location("paths") + " [plugins] paths", true, SearchTier::run_file});
    }
    registry.prepend_search_path(std::move(paths));
  }
  registry.load();

  run.model = std::make_shared<const Model>(load_model(root.table("model")));
  {
    const ConfigTable model = root.table("model");
    run.settings.allow_initial_projection = model.boolean_or("allow_initial_projection", false);
    run.settings.driver_swap_time =
        model.choice_or("driver_swap_time", {"step-start", "step-end"}, "step-start") == "step-end"
            ? RunSettings::DriverSwapTime::step_end
            : RunSettings::DriverSwapTime::step_start;
  }
  if (!simulate && run.model->has_prescribed_motion())
    root.table("model").fail("prescribed", "prescribed joint motion is for 'liembs run'; 'liembs eval' takes the "
                                           "motion from its input columns (algorithm 'hybrid-dynamics', "
                                           "docs/higher-order.md)");
  const auto no_options = ConfigDocument::from_string("", "(default options)");

  if (simulate || root.contains("simulation")) {
    const ConfigTable simulation = root.table("simulation");
    run.settings.end_time = simulation.number("end_time", Range::positive());
    run.settings.step_size = simulation.number("step_size", Range::positive());
    if (run.settings.step_size > run.settings.end_time)
      simulation.fail("step_size", "step size " + std::to_string(run.settings.step_size) +
                                       " is larger than end_time " + std::to_string(run.settings.end_time));
    if (run.settings.end_time / run.settings.step_size > 1e10)
      simulation.fail("step_size", "more than 1e10 steps requested");
    run.settings.output_every = simulation.integer_or("output_every", 1, 1);
  }

  if (simulate || root.contains("group")) {
    run.group = create_from_section<Group>(registry, root.table("group"), run.group_name);
  } else {
    run.group_name = "SE3";  // evaluations take base poses and body twists directly
    run.group = registry.create<Group>(run.group_name, no_options->root());
  }
  if (auto section = root.optional_table("algorithm")) {
    run.algorithm = create_from_section<Algorithm>(registry, *section, run.algorithm_name);
  } else {
    run.algorithm_name = run.model->joints.empty() ? "newton-euler" : "aba";
    run.algorithm = registry.create<Algorithm>(run.algorithm_name, no_options->root());
  }
  if (auto section = root.optional_table("representation")) {
    run.representation = create_from_section<Representation>(registry, *section, run.representation_name);
  } else if (!run.model->joints.empty() && run.algorithm->capabilities().uses_representation) {
    run.representation_name = "body-fixed";  // the default for trees
    run.representation = registry.create<Representation>(run.representation_name, no_options->root());
  }
  if (simulate || root.contains("integrator"))
    run.integrator = create_from_section<Integrator>(registry, root.table("integrator"), run.integrator_name);

  if (auto output = root.optional_table("output")) {
    if (output->contains("directory")) run.output_directory = output->string("directory");
    run.write_trajectory = output->boolean_or("trajectory", true);
  }

  document->reject_unused_keys();  // an unknown key in a plugin's table names its options (Registry)
  // Which plugin file gave each component (summary.json "provenance").
  const auto record_plugin = [&](Kind kind, const std::string& name) {
    const ComponentInfo& info = registry.find(kind, name);
    run.plugins.push_back({std::string(to_string(kind)), info.name, info.version, info.library,
                           registry.abi_fingerprint(info.library)});
  };
  record_plugin(Kind::group, run.group_name);
  record_plugin(Kind::algorithm, run.algorithm_name);
  if (run.representation) record_plugin(Kind::representation, run.representation_name);
  if (run.integrator) record_plugin(Kind::integrator, run.integrator_name);

  const DynamicsContext context{run.model, *run.group, run.group_name, run.representation.get(),
                                run.representation_name};
  const std::string where = run.config_file.string() + ": ";
  try {
    if (simulate) run.dynamics = run.algorithm->bind_forward_dynamics(context);
    else run.evaluator = bind_batch_evaluator(*run.algorithm, context);
    // DynamicsCapabilities::prescribed_motion absent: the stated fallback is to refuse the model.
    if (simulate && run.model->has_prescribed_motion() && !run.dynamics->capabilities().prescribed_motion)
      throw ModelError("it does not support prescribed joint motion ([model.prescribed]: it declares no "
                       "prescribed_motion capability); use 'aba' or 'crba-cholesky' on a tree (or driving "
                       "constraints in absolute coordinates)");
  } catch (const ModelError& error) {
    throw ModelError(where + "algorithm '" + run.algorithm_name + "'" +
                     (run.representation ? ", representation '" + run.representation_name + "'" : std::string()) +
                     ", group '" + run.group_name + "': " + error.what());
  }
  return run;
}

namespace {

// Names the first body whose motion is not finite, for the error message.
std::string first_non_finite(const Model& model, ForwardDynamics& dynamics, const State& state) {
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  dynamics.body_motion(state, poses, twists);
  for (std::size_t i = 0; i < poses.size(); ++i)
    if (!poses[i].R.allFinite() || !poses[i].r.allFinite() || !twists[i].allFinite())
      return "body '" + model.bodies[i].name + "'";
  return "the joint coordinates";
}

// RunOutput::observer as a recorder.
class Observer final : public RunRecorder {
 public:
  explicit Observer(const std::function<void(const RunSample&)>& observer) : observer_(observer) {}
  void record(const RunSample& sample) override { observer_(sample); }

 private:
  const std::function<void(const RunSample&)>& observer_;
};

}  // namespace

// The step loop (as MuJoCo's mj_step over (m, d)): step, chart switch, finiteness check, and
// the complete sample to every recorder (host/run_recorders.hpp).
RunSummary execute_run(Run& run, const RunOutput& output) {
  ForwardDynamics& dynamics = *run.dynamics;
  const Model& model = *run.model;
  StateSpace space(*run.group, dynamics.free_bodies(), dynamics.joint_coordinates());
  State state = dynamics.initial_state();
  RunSampler sampler(run, space);
  RunSummary summary;
  ConstrainedSystem* const constraints = sampler.constraints();
  if (PrescribedMotion* const prescribed = sampler.prescribed()) {  // coordinates follow q(t)
    prescribed->prescribe(state);
    summary.prescribed_coordinates = prescribed->prescribed_coordinates();
  }
  if (constraints) {
    // Consistent initial conditions: the configuration onto g = 0, the velocities onto J V = nu
    // keeping the rates the file gives.
    const State given = state;
    try {
      summary.initial_projection_iterations = make_initial_state_consistent(space, *constraints, state);
    } catch (const SimulationError& error) {
      const std::string singular = singular_inertia_bodies(model);
      throw SimulationError(std::string("the initial state cannot be made consistent with the joints: ") + error.what() +
                            (singular.empty() ? "" : "; bodies with a singular inertia, which the constraints must hold "
                                                     "about its zero axis: " + singular));
    }
    // Absolute coordinates without joints (geometric constraints, the authors' JSON models): the
    // file gives every body's pose and velocity, and a projection that moves them is a file that
    // says something else than it meant (issue 33 item 4). Joints' coordinates are another
    // matter: a loop's unlisted coordinates follow from the projection by design.
    if (space.joint_coordinates() == 0 && model.joints.empty() && !run.settings.allow_initial_projection) {
      const std::string moved = initial_projection_moves(model, dynamics, given, state);
      if (!moved.empty())
        throw ModelError(run.config_file.string() + ": the initial state does not satisfy the constraints: making it " +
                         "consistent moves body " + moved + " (more than " +
                         format_number(RunSettings::initial_projection_tolerance, 3) +
                         "); correct the initial poses, velocities or drivers, or set [model] "
                         "allow_initial_projection = true to start from the projected state");
    }
    for (const auto& block : constraints->blocks()) summary.constraint_names.push_back(block.name);
  }

  RunMeasures measures(summary);
  std::unique_ptr<RunFiles> files;
  if (output.directory) files = std::make_unique<RunFiles>(run, *output.directory);
  std::unique_ptr<Observer> observer;
  if (output.observer) observer = std::make_unique<Observer>(output.observer);
  std::unique_ptr<RunProgress> progress;
  if (output.progress) progress = std::make_unique<RunProgress>(run.settings.end_time);
  std::vector<RunRecorder*> recorders{&measures};
  for (RunRecorder* recorder : {static_cast<RunRecorder*>(files.get()), static_cast<RunRecorder*>(observer.get()),
                                static_cast<RunRecorder*>(progress.get())})
    if (recorder) recorders.push_back(recorder);
  recorders.insert(recorders.end(), output.recorders.begin(), output.recorders.end());
  summary.columns = sampler.layout().columns;
  for (RunRecorder* recorder : recorders) recorder->begin(summary.columns);

  const double end_time = run.settings.end_time, step_size = run.settings.step_size;
  const auto steps = static_cast<long long>(std::ceil(end_time / step_size - 1e-9));
  const long long every = run.settings.output_every;
  auto is_row = [&](long long k) { return k % every == 0 || k == steps; };
  auto record = [&](long long k) {
    const RunSample sample = sampler.sample(state, k, is_row(k));
    for (RunRecorder* recorder : recorders) recorder->record(sample);
  };
  auto interrupted_where = [&] {
    return "at t = " + shortest_number(state.time) + " s (" + std::to_string(summary.steps) + " of " +
           std::to_string(steps) + " steps done)";
  };
  const auto start = std::chrono::steady_clock::now();
  record(0);
  run.integrator->start(space, state);
  for (long long k = 1; k <= steps; ++k) {
    throw_if_interrupted(interrupted_where);
    const double h = (k == steps) ? end_time - state.time : step_size;
    const double time_before = state.time;
    if (constraints)
      summary.driver_swaps += constraints->switch_drivers(
          run.settings.driver_swap_time == RunSettings::DriverSwapTime::step_end ? state.time + h : state.time);
    try {
      run.integrator->step(space, dynamics, state, h);
    } catch (const SimulationError& error) {
      // A driver at a singular point shows as a failed Newton iteration or a singular matrix:
      // say so first (the integrator's message names the symptom).
      const std::string driver = constraints ? singular_driver(*constraints, state) : std::string();
      if (!driver.empty()) throw SimulationError(driver + " (" + error.what() + ")");
      const std::string singular = singular_inertia_bodies(model);
      if (singular.empty()) throw;
      throw SimulationError(std::string(error.what()) + "; bodies with a singular inertia, which the constraints must "
                            "hold about its zero axis: " + singular);
    }
    if (!StateSpace::is_finite(state))
      throw SimulationError("the state of " + first_non_finite(model, dynamics, state) +
                            " is not finite after the step from t = " + shortest_number(time_before) +
                            " s with step size " + shortest_number(h) + " s (integrator '" + run.integrator_name +
                            "'); reduce simulation.step_size");
    // Euler angles near gimbal lock move to another chart between steps (same pose and body
    // twists); integrators with a history restart. The row takes the integrator's V' first,
    // in the chart it is in.
    if (is_row(k)) sampler.take_rates(state, k);
    if (space.update_charts(state)) {
      ++summary.chart_switches;
      run.integrator->charts_switched(space, state);
    }
    ++summary.steps;
    record(k);
  }
  throw_if_interrupted(interrupted_where);
  summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.simulated_seconds = state.time;
  summary.final_state = state;
  summary.method_choices = run_method_choices(run, constraints != nullptr);
  if (sampler.prescribed()) sampler.prescribed()->prescribe(summary.final_state);  // integrated alongside, never used: exact
  summary.normalization = sampler.layout().shape.normalization;
  summary.charts = space.chart_dimension() > 0;
  summary.constrained = constraints != nullptr;
  if (constraints) summary.redundant_constraints = constraints->redundant_constraints();
  summary.integrator_statistics = run.integrator->statistics();
  for (RunRecorder* recorder : recorders) recorder->end(summary);
  return summary;
}

std::vector<MethodChoice> run_method_choices(const Run& run, bool constrained) {
  std::vector<MethodChoice> choices = run.integrator->method_choices();
  const auto replace_all = [](std::string& text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  const std::string algorithm = "algorithm '" + run.algorithm_name + "'" +
                                (run.representation ? " (representation '" + run.representation_name + "')" : "");
  for (auto& choice : choices) {
    replace_all(choice.reason, "{algorithm}", algorithm);
    replace_all(choice.reason, "{group}", "group '" + run.group_name + "'");
  }
  if (constrained && !run.integrator->capabilities().multipliers)
    choices.push_back({"multipliers", "not-recorded",
                       "integrator '" + run.integrator_name + "' declares no multipliers (no multiplier.* columns)"});
  return choices;
}

nlohmann::ordered_json run_choices(const Run& run) {
  return {{"group", run.group_name},
          {"algorithm", run.algorithm_name},
          {"integrator", run.integrator_name},
          {"integrator_description", run.integrator->description()},
          {"representation",
           run.representation ? nlohmann::ordered_json(run.representation_name) : nlohmann::ordered_json(nullptr)}};
}

}  // namespace liembs
