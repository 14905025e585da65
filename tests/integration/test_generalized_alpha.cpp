// The generalized-alpha integrator plugin: observed order 2 on the unconstrained free body
// (SE3 and SO3xR3) and on a constrained planar pendulum in Cartesian coordinates against an
// angle-coordinate reference; the constraints held to the Newton tolerance (index-3 and
// stabilized index-2); numerical damping set by rho_infinity; failed steps; options.
//
// The pendulum is tests/support/cartesian_pendulum.hpp; the oscillators are written here.
#include "../test_support.hpp"

#include "../support/cartesian_pendulum.hpp"
#include "../support/integrator_harness.hpp"

#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/invariants.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

using namespace liembs;
using Catch::Matchers::Contains;
using liembs::testing::CartesianPendulum;
using liembs::testing::load_test_run;
using liembs::testing::Plugins;
using liembs::testing::integrate;
using liembs::testing::state_distance;

namespace {


// Two uncoupled unit-mass oscillators, a soft one (omega = 1) and a stiff one
// (omega = 1000), as an ODE in joint coordinates (no constraints).
class SoftAndStiffOscillators final : public ForwardDynamics {
 public:
  static constexpr double soft_stiffness = 1.0, stiff_stiffness = 1e6;
  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    rates = Eigen::Vector2d(-soft_stiffness * state.coordinates(0), -stiff_stiffness * state.coordinates(1));
  }
  std::size_t free_bodies() const override { return 0; }
  std::size_t joint_coordinates() const override { return 2; }
  State initial_state() const override {
    State state;
    state.coordinates = Eigen::Vector2d(1.0, 1e-3);
    state.velocities = Eigen::Vector2d(0.0, 0.0);
    return state;
  }
  void body_motion(const State&, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses.clear();
    twists.clear();
  }
  static double soft_energy(const State& s) {
    return 0.5 * s.velocities(0) * s.velocities(0) + 0.5 * soft_stiffness * s.coordinates(0) * s.coordinates(0);
  }
  static double stiff_energy(const State& s) {
    return 0.5 * s.velocities(1) * s.velocities(1) + 0.5 * stiff_stiffness * s.coordinates(1) * s.coordinates(1);
  }
};

std::unique_ptr<Integrator> generalized_alpha(const Plugins& plugins, const std::string& options) {
  return plugins.integrator("generalized-alpha", options);
}

std::string number(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

// Distance of the free body's end point (pose and body twist) from a reference.
double free_body_distance(const std::vector<std::string>& overrides, const State& reference, const Group& group) {
  auto loaded = load_test_run("free-body.toml", overrides);
  const RunSummary summary = execute_run(loaded.run, RunOutput{});
  const Eigen::VectorXd twist = body_twists(*loaded.run.group, summary.final_state);
  const Eigen::VectorXd reference_twist = body_twists(group, reference);
  return (summary.final_state.poses[0].R - reference.poses[0].R).norm() +
         (summary.final_state.poses[0].r - reference.poses[0].r).norm() + (twist - reference_twist).norm();
}

}  // namespace

TEST_CASE("generalized-alpha converges at order 2 on the free body on SE3 and SO3xR3", "[generalized-alpha][order]") {
  auto reference_run = load_test_run("free-body.toml", {"simulation.step_size=" + number(1.0 / 4096)});
  const State reference = execute_run(reference_run.run, RunOutput{}).final_state;  // rkmk rk4
  for (const char* group : {"SE3", "SO3xR3"}) {
    for (const char* rho : {"0.9", "0.5"}) {
      auto settings = [&](double h) {
        return std::vector<std::string>{std::string("group.name=") + group, "integrator.name=generalized-alpha",
                                        std::string("integrator.rho_infinity=") + rho,
                                        "simulation.step_size=" + number(h)};
      };
      const double coarse = free_body_distance(settings(0.01), reference, *reference_run.run.group);
      const double fine = free_body_distance(settings(0.005), reference, *reference_run.run.group);
      const double observed = std::log2(coarse / fine);
      INFO(group << ", rho_inf " << rho << ": errors " << coarse << " -> " << fine << ", observed order " << observed);
      CHECK(std::abs(observed - 2.0) < 0.2);
    }
  }
}

TEST_CASE("generalized-alpha on the free body reports its statistics and description", "[generalized-alpha]") {
  auto loaded = load_test_run("free-body.toml", {"integrator.name=generalized-alpha", "integrator.rho_infinity=0.6"});
  const RunSummary summary = execute_run(loaded.run, RunOutput{});
  const auto statistics = loaded.run.integrator->statistics();
  auto value = [&](const std::string& name) {
    for (const auto& [key, v] : statistics)
      if (key == name) return v;
    FAIL("no statistic " << name);
    return 0.0;
  };
  CHECK(value("steps") == summary.steps);
  CHECK(value("newton_iterations") >= summary.steps);
  // The iteration matrix is reused across steps while Newton contracts fast.
  CHECK(value("jacobian_evaluations") >= 1);
  CHECK(value("jacobian_evaluations") < 0.5 * summary.steps);
  CHECK(loaded.run.integrator->order() == 2);
  CHECK_THAT(loaded.run.integrator->description(), Contains("rho_inf = 0.6") && Contains("index2-stabilized"));
  CHECK(summary.energy_drift_max < 1e-3);
}

TEST_CASE("generalized-alpha: reusing the iteration matrix changes the result only within the Newton tolerance",
          "[generalized-alpha][constraints]") {
  // The spatial four-bar in absolute coordinates (18 velocity coordinates: a matrix costs 36
  // evaluations of the equations).
  auto run_with = [](const char* reuse) {
    auto loaded = load_test_run("../../configs/four-bar/spatial.toml",
                                {"algorithm.name=newton-euler", "integrator.name=generalized-alpha",
                                 "simulation.step_size=1e-4", "simulation.end_time=0.2",
                                 std::string("integrator.reuse_iteration_matrix=") + reuse});
    RunSummary summary = execute_run(loaded.run, RunOutput{});
    double matrices = 0.0;
    for (const auto& [key, v] : loaded.run.integrator->statistics())
      if (key == "jacobian_evaluations") matrices = v;
    return std::pair{summary, matrices};
  };
  const auto [reused, reused_matrices] = run_with("true");
  const auto [fresh, fresh_matrices] = run_with("false");
  CHECK(fresh_matrices == fresh.steps);
  CHECK(reused_matrices < 0.1 * fresh_matrices);
  const State& a = reused.final_state;
  const State& b = fresh.final_state;
  double distance = (a.velocities - b.velocities).lpNorm<Eigen::Infinity>();
  for (std::size_t i = 0; i < a.poses.size(); ++i)
    distance = std::max({distance, (a.poses[i].R - b.poses[i].R).norm(), (a.poses[i].r - b.poses[i].r).norm()});
  CHECK(distance < 1e-8);
}

TEST_CASE("generalized-alpha converges at order 2 on the Cartesian pendulum (index-3 and stabilized index-2)",
          "[generalized-alpha][order][constraints]") {
  const Plugins plugins;
  const double angle = 1.0, rate = 0.5, end_time = 1.0;
  CartesianPendulum pendulum(1.3, 1.2, angle, rate);
  const State reference = pendulum.reference_state(end_time);
  for (const char* level : {"index3", "index2-stabilized"}) {
    for (const char* rho : {"0.9", "0.3"}) {
      const std::string options =
          std::string("constraint_level = \"") + level + "\"\nrho_infinity = " + rho + "\n";
      auto error_at = [&](double h) {
        auto integrator = generalized_alpha(plugins, options);
        return state_distance(integrate(plugins, pendulum, *integrator, h, end_time), reference);
      };
      const double coarse = error_at(0.01), fine = error_at(0.005);
      const double observed = std::log2(coarse / fine);
      INFO(level << ", rho_inf " << rho << ": errors " << coarse << " -> " << fine << ", observed order " << observed);
      CHECK(std::abs(observed - 2.0) < 0.2);
      CHECK(fine < 1e-3);
    }
  }
}

TEST_CASE("index-3 keeps g at the Newton tolerance, stabilized index-2 keeps g and J V there",
          "[generalized-alpha][constraints]") {
  const Plugins plugins;
  CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
  DaeTerms terms;
  for (const char* level : {"index3", "index2-stabilized"}) {
    for (const double tolerance : {1e-10, 1e-12}) {
      auto integrator = generalized_alpha(plugins, std::string("constraint_level = \"") + level +
                                                  "\"\nnewton_tolerance = " + number(tolerance) + "\n");
      double worst_position = 0.0, worst_velocity = 0.0;
      integrate(plugins, pendulum, *integrator, 0.01, 5.0, [&](const State& state) {
        pendulum.evaluate(state, terms, dae::position_terms);
        worst_position = std::max(worst_position, std::abs(terms.residual(0)));
        worst_velocity = std::max(worst_velocity, std::abs((terms.jacobian * state.velocities)(0)));
      });
      INFO(level << ", tolerance " << tolerance << ": max |g| " << worst_position << ", max |J V| " << worst_velocity);
      CHECK(worst_position <= tolerance);
      if (std::string(level) == "index2-stabilized") {
        CHECK(worst_velocity <= tolerance);
      } else {
        // Index 3 does not enforce J V = 0: the hidden constraint drifts at the integrator's accuracy.
        CHECK(worst_velocity > 100 * tolerance);
      }
    }
  }
}

TEST_CASE("rho_inf = 1 conserves the pendulum's energy, rho_inf = 0 dissipates it", "[generalized-alpha][energy]") {
  // Stabilized index 2: with index 3 the algebraic mode has the double eigenvalue -rho_inf
  // and, at rho_inf = 1, lambda grows without bound (weak instability of the index-3 form).
  const Plugins plugins;
  CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
  const double initial_energy = pendulum.energy(pendulum.initial_state());
  auto energy_change = [&](const char* rho) {
    auto integrator =
        generalized_alpha(plugins, std::string("constraint_level = \"index2-stabilized\"\nrho_infinity = ") + rho);
    double largest_deviation = 0.0;
    const State end = integrate(plugins, pendulum, *integrator, 0.05, 30.0, [&](const State& state) {
      largest_deviation = std::max(largest_deviation, std::abs(pendulum.energy(state) - initial_energy));
    });
    return std::make_pair((pendulum.energy(end) - initial_energy) / initial_energy, largest_deviation / initial_energy);
  };
  const auto [undamped_change, undamped_deviation] = energy_change("1.0");
  const auto [damped_change, damped_deviation] = energy_change("0.0");
  INFO("relative energy change over 30 s (about 13 periods, 47 steps per period): rho 1 "
       << undamped_change << " (max " << undamped_deviation << "), rho 0 " << damped_change << " (max "
       << damped_deviation << ")");
  CHECK(undamped_deviation < 1e-2);
  CHECK(damped_change < -0.1);
  CHECK(std::abs(damped_change) > 10.0 * undamped_deviation);
}

TEST_CASE("rho_inf = 0 annihilates an unresolved stiff oscillation, rho_inf = 1 keeps it",
          "[generalized-alpha][energy]") {
  // omega h = 10 for the stiff oscillator, 0.01 for the soft one (an ODE: no constraints).
  const Plugins plugins;
  SoftAndStiffOscillators oscillators;
  const State initial = oscillators.initial_state();
  for (const char* rho : {"0.0", "1.0"}) {
    auto integrator = generalized_alpha(plugins, std::string("rho_infinity = ") + rho);
    std::vector<double> stiff_energies{SoftAndStiffOscillators::stiff_energy(initial)};
    const State end = integrate(plugins, oscillators, *integrator, 0.01, 2.0, [&](const State& state) {
      stiff_energies.push_back(SoftAndStiffOscillators::stiff_energy(state));
    });
    const double stiff_ratio = stiff_energies.back() / stiff_energies.front();
    const double soft_change = std::abs(SoftAndStiffOscillators::soft_energy(end) /
                                            SoftAndStiffOscillators::soft_energy(initial) - 1.0);
    INFO("rho_inf " << rho << ": stiff energy ratio " << stiff_ratio << ", soft energy change " << soft_change);
    CHECK(soft_change < 1e-4);
    if (std::string(rho) == "0.0") {
      CHECK(stiff_ratio < 1e-12);
      // After the first step (which overshoots: a_0 = A_0 is far from the discrete
      // solution's a at omega h = 10), the stiff energy decreases at every step.
      bool monotone = true;
      for (std::size_t k = 2; k < stiff_energies.size(); ++k)
        monotone = monotone && stiff_energies[k] <= stiff_energies[k - 1];
      CHECK(monotone);
    } else {
      CHECK(stiff_ratio > 0.5);
      CHECK(stiff_ratio < 2.0);
    }
  }
}

TEST_CASE("generalized-alpha with the pendulum's analytic derivatives and with differences gives the same motion",
          "[generalized-alpha][constraints]") {
  // The pendulum gives C, K and P in closed form (cartesian_pendulum.hpp); both constraint
  // levels, rigid and with a prescribed rod length (rheonomic).
  const Plugins plugins;
  for (const char* level : {"index3", "index2-stabilized"})
    for (const double amplitude : {0.0, 0.2}) {
      CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
      pendulum.length_amplitude = amplitude;
      auto run_with = [&](const char* derivatives) {
        auto integrator = generalized_alpha(plugins, std::string("constraint_level = \"") + level +
                                                         "\"\nnewton_derivatives = \"" + derivatives + "\"");
        const State end = integrate(plugins, pendulum, *integrator, 0.01, 2.0);
        std::map<std::string, double> statistics;
        for (const auto& [key, value] : integrator->statistics()) statistics[key] = value;
        return std::pair{end, statistics};
      };
      const auto [analytic, a] = run_with("analytic");
      const auto [differenced, d] = run_with("finite-differences");
      INFO(level << ", amplitude " << amplitude << ": Newton iterations " << a.at("newton_iterations") << " / "
                 << d.at("newton_iterations"));
      CHECK(a.at("analytic_derivatives") == 1.0);
      CHECK(d.at("analytic_derivatives") == 0.0);
      CHECK(state_distance(analytic, differenced) < 1e-8);
      CHECK(std::abs(a.at("newton_iterations") - d.at("newton_iterations")) <= 0.02 * d.at("newton_iterations"));
    }
}

TEST_CASE("a failed step throws SimulationError naming time, step size and constraint, state unchanged",
          "[generalized-alpha][failure]") {
  const Plugins plugins;
  const StateSpace space(*plugins.group, 0, 2);

  SECTION("forces that become NaN") {
    CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
    pendulum.forces_fail_after = 0.55;
    auto integrator = generalized_alpha(plugins, "");
    State state = pendulum.initial_state();
    integrator->start(space, state);
    for (int k = 0; k < 5; ++k) integrator->step(space, pendulum, state, 0.1);
    const State before = state;
    try {
      integrator->step(space, pendulum, state, 0.1);
      FAIL("a NaN residual must fail the step");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("t = 0.5 s") && Contains("step size 0.1 s") && Contains("not finite") &&
                              Contains("joint 'rod'") && Contains("|g|"));
    }
    CHECK(state.time == before.time);
    CHECK(state.coordinates == before.coordinates);
    CHECK(state.velocities == before.velocities);
  }

  SECTION("a Newton iteration that cannot converge in the allowed iterations") {
    CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
    auto integrator = generalized_alpha(plugins, "max_newton_iterations = 1\nconstraint_level = \"index2-stabilized\"");
    State state = pendulum.initial_state();
    const State before = state;
    integrator->start(space, state);
    try {
      integrator->step(space, pendulum, state, 2.0);
      FAIL("one Newton iteration cannot converge for a step of 2 s");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("did not converge") && Contains("t = 0 s") && Contains("step size 2 s") &&
                              Contains("scaled residual") && Contains("joint 'rod' (|g| = ") &&
                              Contains("|J V - nu|"));
    }
    CHECK(state.time == before.time);
    CHECK(state.coordinates == before.coordinates);
    CHECK(state.velocities == before.velocities);
    CHECK(StateSpace::is_finite(state));
  }
}

TEST_CASE("generalized-alpha options are checked", "[generalized-alpha][config]") {
  const Plugins plugins;
  CHECK_THAT(generalized_alpha(plugins, "rho_infinity = 0.5\nconstraint_level = \"index2-stabilized\"")->description(),
             Contains("rho_inf = 0.5") && Contains("index2-stabilized"));
  CHECK_THAT(generalized_alpha(plugins, "")->description(), Contains("rho_inf = 0.9") && Contains("index2-stabilized"));
  auto error_of = [&](const std::string& options) {
    try {
      generalized_alpha(plugins, options);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("rho_infinity = 1.5"), Contains("rho_infinity"));
  CHECK_THAT(error_of("constraint_level = \"index1\""), Contains("constraint_level") && Contains("index3"));
  CHECK_THAT(error_of("newton_tolerance = 0"), Contains("newton_tolerance"));
  CHECK_THAT(error_of("max_newton_iterations = 0"), Contains("max_newton_iterations"));
  CHECK_THAT(error_of("rho_inf = 0.5"), Contains("unknown key 'rho_inf'"));
  CHECK_THAT(error_of("newton_derivatives = \"exact\""), Contains("newton_derivatives") && Contains("analytic"));
  CHECK_THAT(error_of("newton_derivatives = true"), Contains("newton_derivatives"));
  CHECK_THAT(generalized_alpha(plugins, "newton_derivatives = \"finite-differences\"")->description(),
             Contains("Newton matrix by finite differences"));
  CHECK_THAT(generalized_alpha(plugins, "")->description(), Contains("Newton matrix analytic where available"));
}
