// Constrained runs from the configs in configs/paper-002 and configs/four-bar: the claims
// of paper 002 as properties (its reference note, section 6.3), convergence order, the
// agreement of relative and absolute coordinates and of the integrators, projection, and
// the failure paths.
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <map>

using namespace liembs;

namespace {

struct Outcome {
  RunSummary summary;
  std::vector<Pose> poses;  // of every model body at the end
  std::map<std::string, double> violation, velocity_violation;
  std::vector<std::string> redundant;  // rows dropped as structurally redundant
  std::map<std::string, double> statistics;  // the integrator's
};

Outcome run_config(const std::string& config, const std::vector<std::string>& overrides = {}) {
  Registry registry;  // declared first: the run's components live in its libraries
  registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/" + config);
  for (const auto& assignment : overrides) document->set_override(assignment);
  Run run = load_run(document, registry);
  Outcome outcome;
  outcome.summary = execute_run(run, RunOutput{});
  std::vector<Vec6> twists;
  run.dynamics->body_motion(outcome.summary.final_state, outcome.poses, twists);
  if (ConstrainedSystem* constraints = run.dynamics->constraints()) outcome.redundant = constraints->redundant_constraints();
  for (const auto& [name, value] : run.integrator->statistics()) outcome.statistics[name] = value;
  for (std::size_t i = 0; i < outcome.summary.constraint_names.size(); ++i) {
    outcome.violation[outcome.summary.constraint_names[i]] = outcome.summary.constraint_violation_max[i];
    outcome.velocity_violation[outcome.summary.constraint_names[i]] = outcome.summary.velocity_violation_max[i];
  }
  return outcome;
}

double pose_distance(const std::vector<Pose>& a, const std::vector<Pose>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max({d, (a[i].R - b[i].R).norm(), (a[i].r - b[i].r).norm()});
  return d;
}

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

}  // namespace

TEST_CASE("paper 002 heavy top: T0, the pivot exact on SE3, drifting on SO3xR3", "[constraints][paper-002]") {
  const Outcome se3 = run_config("paper-002/heavy-top.toml");
  const Outcome so3xr3 = run_config("paper-002/heavy-top.toml", {"group.name=SO3xR3"});
  // H0: 1/2 omega^T Theta omega + 1/2 m |v|^2 = 13972.40 J (the paper's "13.97 kJ").
  CHECK(std::abs(se3.summary.energy_initial - 13972.40) < 0.01);
  // H1: round-off on SE3 after 2000 steps; H2: orders of magnitude more on SO3xR3.
  CHECK(se3.violation.at("pivot") < 2000 * 1e-15);
  CHECK(se3.velocity_violation.at("pivot") < 2000 * 1e-15);
  CHECK(so3xr3.violation.at("pivot") > 1e-8);
  CHECK(so3xr3.violation.at("pivot") > 1e4 * se3.violation.at("pivot"));
  // H5 (gated loosely, as the note says): small energy drift on both groups.
  CHECK(se3.summary.energy_drift_max < 1e-6);
  CHECK(so3xr3.summary.energy_drift_max < 1e-6);
  // Both groups keep R orthonormal.
  CHECK(se3.summary.orthogonality_error_max < 1e-12);
  CHECK(so3xr3.summary.orthogonality_error_max < 1e-12);
}

TEST_CASE("paper 002 heavy top: SE3's exactness does not depend on the tableau, SO3xR3's drift does",
          "[constraints][paper-002]") {
  double previous_drift = 0.0;
  for (const char* tableau : {"rk4", "rk3", "heun", "euler"}) {
    INFO(tableau);
    const std::vector<std::string> settings{std::string("integrator.tableau=") + tableau, "simulation.end_time=0.5"};
    const Outcome se3 = run_config("paper-002/heavy-top.toml", settings);
    auto with_group = settings;
    with_group.push_back("group.name=SO3xR3");
    const Outcome so3xr3 = run_config("paper-002/heavy-top.toml", with_group);
    CHECK(se3.violation.at("pivot") < 500 * 1e-15);
    CHECK(so3xr3.violation.at("pivot") > previous_drift);  // lower order, larger drift
    previous_drift = so3xr3.violation.at("pivot");
  }
}

TEST_CASE("paper 002 heavy top: the SO3xR3 drift and the error converge at the tableau's order",
          "[constraints][paper-002][order]") {
  // H3: at a fixed end time the pivot violation on SO3xR3 falls as h^4 with rk4.
  auto drift = [](double h) {
    return run_config("paper-002/heavy-top.toml",
                      {"group.name=SO3xR3", "simulation.end_time=0.25", "simulation.step_size=" + number(h)})
        .violation.at("pivot");
  };
  const double order = std::log2(drift(2e-3) / drift(1e-3));
  CHECK(std::abs(order - 4.0) < 0.3);
  // The trajectory itself: the final pose against a converged reference, on both groups.
  for (const char* group : {"SE3", "SO3xR3"}) {
    INFO(group);
    auto final_poses = [&](double h) {
      return run_config("paper-002/heavy-top.toml",
                        {std::string("group.name=") + group, "simulation.end_time=0.25", "simulation.step_size=" + number(h)})
          .poses;
    };
    const auto reference = final_poses(6.25e-5);
    const double observed = std::log2(pose_distance(final_poses(1e-3), reference) / pose_distance(final_poses(5e-4), reference));
    CHECK(std::abs(observed - 4.0) < 0.3);
  }
}

TEST_CASE("paper 002 heavy top: projection keeps SO3xR3 on the constraint, ida agrees with a converged rkmk",
          "[constraints][paper-002]") {
  const Outcome projected = run_config("paper-002/heavy-top.toml", {"group.name=SO3xR3", "integrator.projection=true"});
  CHECK(projected.violation.at("pivot") < 1e-12);
  CHECK(projected.velocity_violation.at("pivot") < 1e-11);

  for (const char* group : {"SE3", "SO3xR3"}) {
    INFO(group);
    const std::vector<std::string> horizon{std::string("group.name=") + group, "simulation.end_time=0.25"};
    auto reference_settings = horizon;
    reference_settings.push_back("simulation.step_size=1.25e-4");
    const Outcome reference = run_config("paper-002/heavy-top.toml", reference_settings);
    auto ida_settings = horizon;
    for (const char* s : {"integrator.name=ida", "integrator.relative_tolerance=1e-10", "integrator.absolute_tolerance=1e-12"})
      ida_settings.push_back(s);
    const Outcome ida = run_config("paper-002/heavy-top.toml", ida_settings);
    CHECK(pose_distance(ida.poses, reference.poses) < 1e-6);
    auto alpha_settings = horizon;
    for (const char* s : {"integrator.name=generalized-alpha", "simulation.step_size=1.25e-4"}) alpha_settings.push_back(s);
    const Outcome alpha = run_config("paper-002/heavy-top.toml", alpha_settings);
    CHECK(pose_distance(alpha.poses, reference.poses) < 1e-3);
  }
}

TEST_CASE("paper 002 spherical double pendulum: the ground joint exact on SE3, joint 2 alike on both",
          "[constraints][paper-002]") {
  const Outcome se3 = run_config("paper-002/spherical-double-pendulum.toml");
  const Outcome so3xr3 = run_config("paper-002/spherical-double-pendulum.toml", {"group.name=SO3xR3"});
  // D1
  CHECK(se3.violation.at("joint1") < 2000 * 1e-15);
  CHECK(so3xr3.violation.at("joint1") > 100 * se3.violation.at("joint1"));
  // D2: joint 2 worse than joint 1 in both, of the same order of magnitude on both groups.
  CHECK(se3.violation.at("joint2") > se3.violation.at("joint1"));
  CHECK(so3xr3.violation.at("joint2") > so3xr3.violation.at("joint1"));
  const double ratio = se3.violation.at("joint2") / so3xr3.violation.at("joint2");
  CHECK((ratio > 0.1 && ratio < 10.0));
  // D3: comparable total-energy drift.
  const double energy_ratio = se3.summary.energy_drift_max / so3xr3.summary.energy_drift_max;
  CHECK((energy_ratio > 0.1 && energy_ratio < 10.0));
}

TEST_CASE("paper 002 floating bodies and 3-bar linkage: base joints exact on SE3, body-to-body joints alike",
          "[constraints][paper-002]") {
  {  // F1, F2
    const Outcome se3 = run_config("paper-002/floating-bodies.toml");
    const Outcome so3xr3 = run_config("paper-002/floating-bodies.toml", {"group.name=SO3xR3"});
    const double ratio = se3.violation.at("joint") / so3xr3.violation.at("joint");
    CHECK((ratio > 0.1 && ratio < 10.0));
    const double energy_ratio = se3.summary.energy_drift_max / so3xr3.summary.energy_drift_max;
    CHECK((energy_ratio > 0.1 && energy_ratio < 10.0));
    CHECK(se3.summary.angular_momentum_drift_max < 1e-8);  // force free: momentum conserved
  }
  {  // B1, B2, B3
    const Outcome se3 = run_config("paper-002/spherical-three-bar.toml");
    const Outcome so3xr3 = run_config("paper-002/spherical-three-bar.toml", {"group.name=SO3xR3"});
    for (const char* base : {"joint1", "joint3"}) {
      INFO(base);
      CHECK(se3.violation.at(base) < 2000 * 1e-15);
      CHECK(so3xr3.violation.at(base) > 100 * se3.violation.at(base));
    }
    const double ratio = se3.violation.at("joint2") / so3xr3.violation.at("joint2");
    CHECK((ratio > 0.1 && ratio < 10.0));
    const double energy_ratio = se3.summary.energy_drift_max / so3xr3.summary.energy_drift_max;
    CHECK((energy_ratio > 0.1 && energy_ratio < 10.0));
  }
}

TEST_CASE("four-bar linkages: relative and absolute coordinates, ida and generalized-alpha agree",
          "[constraints][four-bar][heavy]") {
  for (const char* config : {"four-bar/planar.toml", "four-bar/spatial.toml"}) {
    INFO(config);
    const std::vector<std::string> horizon{"simulation.end_time=0.5"};
    std::vector<std::vector<Pose>> results;
    for (const char* algorithm : {"aba", "newton-euler"}) {
      for (const char* group : {"SE3", "SO3xR3"}) {
        INFO(algorithm << " on " << group);
        const std::vector<std::string> common{std::string("algorithm.name=") + algorithm, std::string("group.name=") + group,
                                              "simulation.end_time=0.5"};
        auto ida = common;
        for (const char* s : {"integrator.relative_tolerance=5e-12", "integrator.absolute_tolerance=1e-13"}) ida.push_back(s);
        const Outcome by_ida = run_config(config, ida);
        auto alpha = common;
        for (const char* s : {"integrator.name=generalized-alpha", "simulation.step_size=1.25e-4"}) alpha.push_back(s);
        const Outcome by_alpha = run_config(config, alpha);
        CHECK(pose_distance(by_ida.poses, by_alpha.poses) < 1e-5);
        for (const auto& [joint, value] : by_ida.violation) CHECK(value < 1e-8);
        for (const auto& [joint, value] : by_alpha.violation) CHECK(value < 1e-9);
        results.push_back(by_ida.poses);
      }
    }
    for (std::size_t k = 1; k < results.size(); ++k) CHECK(pose_distance(results[k], results.front()) < 1e-7);
  }
}

TEST_CASE("ida at tight tolerances on the four-bars: convergence failures relax the multipliers' test, no step-size underflow",
          "[constraints][four-bar][ida][heavy]") {
  // At rtol 1e-11 to 1e-12 Newton on the multipliers fails at every step size; IDA kept
  // accepting ever smaller steps (1e-15 s) without returning IDA_CONV_FAIL, and the run
  // ended in the step-size underflow check. Each of these runs failed that way before.
  // The runs agree to about 3e-9, except one (spatial four-bar, rtol 7e-12 since CRBA's dots
  // are vectorized, rtol 1e-11 before: which one depends on the last bits of the dynamics),
  // 1.0e-7 from the others. Its relaxed restart falls at t = 0.2429 s, where a joint rate
  // crosses zero: there the rate's weight is atol = 1e-13 alone, the restart's order 1 never
  // rises (an error test failure every step), and 16000 steps of 1e-8 s follow. Hence the
  // bound below; the notes of issue 3 have the details.
  for (const char* config : {"four-bar/planar.toml", "four-bar/spatial.toml"}) {
    for (const char* group : {"SE3", "SO3xR3"}) {
      std::vector<Pose> previous;
      int relaxed_runs = 0;
      for (const char* rtol : {"1e-11", "7e-12", "5e-12", "4e-12", "2e-12", "1e-12"}) {
        INFO(config << " on " << group << ", rtol " << rtol);
        Outcome outcome;
        REQUIRE_NOTHROW(outcome = run_config(config, {std::string("group.name=") + group, "algorithm.name=aba", "simulation.end_time=0.5",
                                                      std::string("integrator.relative_tolerance=") + rtol,
                                                      "integrator.absolute_tolerance=1e-13"}));
        for (const auto& [joint, value] : outcome.violation) CHECK(value < 1e-9);
        if (!previous.empty()) CHECK(pose_distance(outcome.poses, previous) < 3e-7);
        previous = outcome.poses;
        relaxed_runs += outcome.statistics.at("multiplier_weights_relaxed") > 0.0 ? 1 : 0;
      }
      // The path under test is taken: these tolerances do make Newton fail (5 or 6 of the 6 runs).
      INFO(config << " on " << group);
      CHECK(relaxed_runs >= 3);
    }
  }
}

TEST_CASE("a loop on a floating base: relative and absolute coordinates agree on both groups, momentum conserved",
          "[constraints][four-bar]") {
  // tests/data/floating-four-bar.toml, addressed from configs/ like the other files.
  const std::string config = "../tests/data/floating-four-bar.toml";
  const Outcome reference = run_config(config);
  CHECK(reference.summary.angular_momentum_drift_max < 1e-9);
  CHECK(reference.summary.energy_drift_max < 1e-8);
  for (const char* algorithm : {"aba", "newton-euler"}) {
    for (const char* group : {"SE3", "SO3xR3"}) {
      INFO(algorithm << " on " << group);
      const Outcome other =
          run_config(config, {std::string("algorithm.name=") + algorithm, std::string("group.name=") + group});
      CHECK(pose_distance(other.poses, reference.poses) < 1e-9);
      CHECK(other.summary.angular_momentum_drift_max < 1e-9);
      for (const auto& [joint, value] : other.violation) CHECK(value < 1e-9);
    }
  }
}

TEST_CASE("the planar loops' redundant rows are found and reported, the spatial ones have none",
          "[constraints][four-bar]") {
  const std::vector<std::string> brief{"integrator.name=rkmk", "simulation.end_time=0.01"};
  const Outcome relative = run_config("four-bar/planar.toml", brief);
  CHECK(relative.summary.constraint_names == std::vector<std::string>{"C"});
  CHECK(relative.redundant == std::vector<std::string>{"joint 'C': 3 of 5 rows redundant"});
  auto absolute_settings = brief;
  absolute_settings.push_back("algorithm.name=newton-euler");
  const Outcome absolute = run_config("four-bar/planar.toml", absolute_settings);
  CHECK(absolute.summary.constraint_names.size() == 4);
  std::size_t dropped = 0;  // 4 revolutes = 20 rows for 18 coordinates and mobility 1: 3 redundant
  for (const auto& note : absolute.redundant) dropped += static_cast<std::size_t>(note.at(note.find("': ") + 3) - '0');
  CHECK(dropped == 3);
  CHECK(run_config("four-bar/spatial.toml", brief).redundant.empty());
}

TEST_CASE("a projection that does not converge ends the run naming time, step size and joint",
          "[constraints][errors]") {
  const std::vector<std::string> settings{"group.name=SO3xR3", "integrator.projection=true",
                                          "integrator.projection_max_iterations=1",
                                          "integrator.projection_tolerance=1e-30"};
  CHECK_THROWS_AS(run_config("paper-002/heavy-top.toml", settings), SimulationError);
  CHECK_THROWS_WITH(run_config("paper-002/heavy-top.toml", settings),
                    Catch::Contains("rkmk step from t = 0 s with step size 0.001 s") &&
                        Catch::Contains("did not converge in 1 iterations") && Catch::Contains("joint 'pivot'"));
}

TEST_CASE("the initial projection keeps the joint rates the file gives, the spatial four-bar turns",
          "[constraints][four-bar]") {
  // configs/four-bar/spatial.toml gives only the crank's rate (joint A, 4 rad/s about the
  // world x axis); the others follow from the loop closure.
  for (const char* algorithm : {"aba", "newton-euler"}) {
    for (const char* group : {"SE3", "SO3xR3"}) {
      INFO(algorithm << " on " << group);
      Registry registry;
      registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
      auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/four-bar/spatial.toml");
      document->set_override(std::string("algorithm.name=") + algorithm);
      document->set_override(std::string("group.name=") + group);
      Run run = load_run(document, registry);
      StateSpace space(*run.group, run.dynamics->free_bodies(), run.dynamics->joint_coordinates());
      State state = run.dynamics->initial_state();
      ConstrainedSystem& constraints = *run.dynamics->constraints();
      make_initial_state_consistent(space, constraints, state);
      DaeTerms terms;
      constraints.evaluate(state, terms, dae::position_terms);
      CHECK(terms.residual.norm() < 1e-12);
      CHECK((terms.jacobian * state.velocities).norm() < 1e-10);
      std::vector<Pose> poses;
      std::vector<Vec6> twists;
      run.dynamics->body_motion(state, poses, twists);
      const std::size_t crank = 0;  // the first body of the file
      const Vec3 world_angular_velocity = poses[crank].R * twists[crank].head<3>();
      CHECK(world_angular_velocity.x() == Approx(4.0).epsilon(1e-10));
      CHECK(world_angular_velocity.tail<2>().norm() < 1e-10);
      // A linkage that moves: the crank falls from the top and has turned by more than a
      // radian after 0.2 s (about 2.6 rad).
      const Outcome outcome = run_config("four-bar/spatial.toml", {std::string("algorithm.name=") + algorithm,
                                                                   std::string("group.name=") + group,
                                                                   "integrator.name=rkmk", "simulation.end_time=0.2"});
      const Mat3& R = outcome.poses[crank].R;
      CHECK(std::abs(std::atan2(R(2, 1), R(1, 1))) > 1.0);
    }
  }
}

TEST_CASE("initial rates that contradict a loop, or given for a cut joint, are errors naming the joints",
          "[constraints][errors]") {
  // The spatial four-bar has one degree of freedom: the rocker's rate D follows from the crank's.
  CHECK_THROWS_WITH(run_config("four-bar/spatial.toml", {"model.initial_velocity.D=1.0", "simulation.end_time=0.01"}),
                    Catch::Contains("contradict the closed loops") && Catch::Contains("'D' = 1") &&
                        Catch::Contains("'A' (given 4, the loops allow"));
  for (const char* key : {"initial_velocity", "initial_position"}) {
    const std::string setting = std::string("model.") + key + ".B=[1.0, 0.0, 0.0]";
    CHECK_THROWS_AS(run_config("four-bar/spatial.toml", {setting}), ModelError);
    CHECK_THROWS_WITH(run_config("four-bar/spatial.toml", {setting}),
                      Catch::Contains("joint 'B' closes a kinematic loop") && Catch::Contains(std::string("its ") + key));
  }
}

TEST_CASE("ida converges at tight tolerances on the absolute-coordinate DAEs", "[constraints][ida][heavy]") {
  // Before ida relaxed the multipliers' Newton weights after a convergence failure,
  // rtol <= 1e-11 ended these runs in IDA_CONV_FAIL with the step size falling to 1e-13.
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases{
      {"paper-002/heavy-top.toml", {"group.name=SO3xR3"}},
      {"paper-002/spherical-double-pendulum.toml", {}},
      {"four-bar/planar.toml", {"algorithm.name=newton-euler"}},
      {"four-bar/spatial.toml", {"algorithm.name=newton-euler", "group.name=SO3xR3"}}};
  for (const auto& [config, settings] : cases) {
    INFO(config);
    auto horizon = settings;
    horizon.push_back("simulation.end_time=0.25");
    auto reference_settings = horizon;
    for (const char* s : {"integrator.name=rkmk", "simulation.step_size=6.25e-5"}) reference_settings.push_back(s);
    const Outcome reference = run_config(config, reference_settings);
    std::vector<double> errors, relaxed;
    for (const char* tolerance : {"1e-8", "1e-12"}) {
      auto ida_settings = horizon;
      ida_settings.push_back("integrator.name=ida");
      ida_settings.push_back(std::string("integrator.relative_tolerance=") + tolerance);
      ida_settings.push_back(std::string("integrator.absolute_tolerance=") + tolerance);
      const Outcome outcome = run_config(config, ida_settings);
      errors.push_back(pose_distance(outcome.poses, reference.poses));
      relaxed.push_back(outcome.statistics.at("multiplier_weights_relaxed"));
    }
    INFO("errors at rtol 1e-8 and 1e-12: " << errors[0] << ", " << errors[1]);
    // The fallback is exercised: full multiplier weights fail at 1e-12 and are kept at 1e-8.
    // (If a better Newton iteration makes 1e-12 converge without it, this check says so.)
    CHECK(relaxed[0] == 0.0);
    CHECK(relaxed[1] == 1.0);
    CHECK(errors[1] < 1e-8);
    CHECK(errors[1] < 0.05 * errors[0]);
  }
}

TEST_CASE("the angular momentum drift of a mechanism released from rest is relative to its largest momentum",
          "[constraints][invariants]") {
  // The single pendulum of paper 004 starts at rest (L(0) = 0): the drift max |L(t) - L(0)| /
  // max |L(t)| is then exactly 1, not max |L(t)| / 1e-300.
  const Outcome at_rest =
      run_config("paper-004/single-pendulum.toml", {"integrator.name=bdf", "simulation.end_time=0.2"});
  CHECK(at_rest.summary.angular_momentum_drift_max == Approx(1.0).epsilon(1e-12));
}
