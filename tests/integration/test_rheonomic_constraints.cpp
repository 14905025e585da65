// Rheonomic constraints g(q, t) = 0 (J V = nu(t), J V' = eta with the f'' terms) through the
// shared solvers and every integrator: a point mass on a rod of prescribed length
// L(t) = L0 (1 + a sin(w t)) in Cartesian coordinates (tests/support/cartesian_pendulum.hpp)
// against its exact reduction to the angle, theta'' = -(g sin theta + 2 L' theta') / L.
// A solver that still assumed J V = 0 would pull the mass off the moving rod end.
#include "../test_support.hpp"

#include "../support/cartesian_pendulum.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace liembs;
using liembs::testing::CartesianPendulum;

namespace {

struct Plugins {
  std::unique_ptr<Registry> registry = testing::build_tree_registry();
  std::unique_ptr<Group> group;
  Plugins() { group = registry->create<Group>("SE3", ConfigDocument::from_string("", "(group)")->root()); }
  std::unique_ptr<Integrator> integrator(const std::string& name, const std::string& options) const {
    const auto document = ConfigDocument::from_string(options, "integrator-options.toml");
    auto integrator = registry->create<Integrator>(name, document->root());
    document->reject_unused_keys();
    return integrator;
  }
};

CartesianPendulum driven_pendulum() {
  CartesianPendulum pendulum(0.7, 1.3, 1.0, 0.3);
  pendulum.length_amplitude = 0.2;
  pendulum.length_frequency = 3.0;
  return pendulum;
}

struct DrivenRun {
  State final_state;
  double largest_violation = 0.0, largest_velocity_violation = 0.0;  // |g|, |J V - nu| at the steps
};

DrivenRun integrate(const Plugins& plugins, Integrator& integrator, CartesianPendulum& pendulum, double end_time,
                    double step) {
  const StateSpace space(*plugins.group, 0, 2);
  State state = pendulum.initial_state();
  make_initial_state_consistent(space, pendulum, state);
  integrator.start(space, state);
  DrivenRun run;
  DaeTerms terms;
  Eigen::VectorXd violation;
  const auto steps = static_cast<int>(std::lround(end_time / step));
  for (int k = 0; k < steps; ++k) {
    integrator.step(space, pendulum, state, step);
    pendulum.evaluate(state, terms, dae::position_terms);
    velocity_violation(terms, state.velocities, violation);
    run.largest_violation = std::max(run.largest_violation, terms.residual.norm());
    run.largest_velocity_violation = std::max(run.largest_velocity_violation, violation.norm());
  }
  run.final_state = state;
  return run;
}

}  // namespace

TEST_CASE("velocity projections and consistent initial states use J V = nu", "[constraints][rheonomic]") {
  Plugins plugins;
  CartesianPendulum pendulum = driven_pendulum();
  const StateSpace space(*plugins.group, 0, 2);
  // At t = 0 the rod lengthens at L0 a w = 0.78 m/s; the file's velocities have no radial part.
  State state = pendulum.initial_state();
  state.velocities = Eigen::Vector2d(0.4, 0.1);
  state.coordinates *= 1.01;
  make_initial_state_consistent(space, pendulum, state);
  DaeTerms terms;
  pendulum.evaluate(state, terms, dae::position_terms);
  REQUIRE(terms.velocity_rhs.size() == 1);
  CHECK(terms.velocity_rhs(0) == Approx(2.0 * 1.3 * 1.3 * 0.2 * 3.0));
  Eigen::VectorXd violation;
  velocity_violation(terms, state.velocities, violation);
  CHECK(std::abs(terms.residual(0)) < 1e-12);
  CHECK(std::abs(violation(0)) < 1e-12);
  // The radial speed is the rod's: x x' + y y' = L L'.
  const auto [L, L_rate, L_acceleration] = pendulum.length_at(0.0);
  (void)L_acceleration;
  CHECK(state.coordinates.dot(state.velocities) == Approx(L * L_rate).epsilon(1e-12));

  // project_velocities at a later time, on the moving constraint.
  State later = pendulum.state_at(0.7, -0.2, 0.4);
  later.velocities += Eigen::Vector2d(0.05, -0.03);
  project_velocities(pendulum, later);
  pendulum.evaluate(later, terms, dae::position_terms);
  velocity_violation(terms, later.velocities, violation);
  CHECK(std::abs(violation(0)) < 1e-12);
  CHECK(std::abs(terms.velocity_rhs(0)) > 0.1);
}

TEST_CASE("the index-1 solve carries the f'' terms of eta", "[constraints][rheonomic]") {
  CartesianPendulum pendulum = driven_pendulum();
  // On the exact motion, the index-1 accelerations equal the second derivative of the exact
  // positions (by central differences of the reference).
  const double t = 0.9, dt = 1e-4;
  const auto [angle, rate] = pendulum.angle_reference(t);
  State state = pendulum.state_at(angle, rate, t);
  DaeTerms terms;
  pendulum.evaluate(state, terms, dae::all);
  Eigen::VectorXd accelerations;
  solve_index1(terms, accelerations);
  const auto [a_minus, r_minus] = pendulum.angle_reference(t - dt);
  const auto [a_plus, r_plus] = pendulum.angle_reference(t + dt);
  const Eigen::Vector2d finite_difference =
      (pendulum.velocity(a_plus, r_plus, t + dt) - pendulum.velocity(a_minus, r_minus, t - dt)) / (2.0 * dt);
  INFO("index-1 " << accelerations.transpose() << ", differences " << finite_difference.transpose());
  CHECK((accelerations - finite_difference).norm() < 1e-5);
}

TEST_CASE("every integrator follows a rod of prescribed length", "[constraints][rheonomic]") {
  Plugins plugins;
  const double end_time = 2.0;
  struct Case {
    const char* integrator;
    const char* options;
    double step, tolerance, drift;
  };
  const Case cases[] = {
      {"rkmk", "tableau = \"rk4\"\nprojection = true", 1e-3, 1e-8, 1e-11},
      {"generalized-alpha", "constraint_level = \"index2-stabilized\"", 1e-3, 1e-4, 1e-9},
      {"generalized-alpha", "constraint_level = \"index3\"\nrho_infinity = 0.5", 1e-3, 1e-4, 1e-2},
      {"ida", "formulation = \"ggl\"\nrelative_tolerance = 1e-10\nabsolute_tolerance = 1e-12", 0.01, 1e-6, 1e-7},
      {"ida", "formulation = \"index1-projection\"\nrelative_tolerance = 1e-10\nabsolute_tolerance = 1e-12", 0.01, 1e-6,
       1e-9},
      {"bdf", "order = 2\nnewton_tolerance_h2 = 1e-13", 1e-3, 5e-4, 1e-3},
      {"bdf", "order = 1\nnewton_matrix = \"full\"\nnewton_tolerance_h2 = 1e-13", 1e-3, 0.1, 0.05},
  };
  for (const Case& c : cases) {
    CartesianPendulum pendulum = driven_pendulum();
    auto integrator = plugins.integrator(c.integrator, c.options);
    const DrivenRun run = integrate(plugins, *integrator, pendulum, end_time, c.step);
    const State reference = pendulum.reference_state(end_time);
    const double error = (run.final_state.coordinates - reference.coordinates).norm() +
                         (run.final_state.velocities - reference.velocities).norm();
    INFO(c.integrator << " (" << c.options << "): error " << error << ", largest |g| " << run.largest_violation
                      << ", largest |J V - nu| " << run.largest_velocity_violation);
    CHECK(error < c.tolerance);
    CHECK(run.largest_violation < 1e-7);
    CHECK(run.largest_velocity_violation < c.drift);
  }
  // The reference itself moves far from a rod of constant length.
  CartesianPendulum fixed(0.7, 1.3, 1.0, 0.3);
  CHECK((fixed.reference_state(end_time).coordinates - driven_pendulum().reference_state(end_time).coordinates).norm() >
        0.1);
}
