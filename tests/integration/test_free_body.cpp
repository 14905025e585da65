// A single rigid body integrated with rkmk on SE3 and SO3xR3: observed convergence order
// of each tableau against a converged reference, conservation of energy and spatial
// angular momentum to the integrator's order, agreement of both groups, and known
// closed-form solutions (torque-free symmetric top, free fall, constant torque).
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/state_space.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

using namespace liembs;
using liembs::testing::load_test_run;
using liembs::testing::simulate;

namespace {

struct Endpoint {
  Pose pose;
  Vec6 body_twist;
};

Endpoint final_point(const std::string& file, const std::vector<std::string>& overrides) {
  auto loaded = load_test_run(file, overrides);
  const RunSummary summary = execute_run(loaded.run, RunOutput{});
  const Eigen::VectorXd twists = body_twists(*loaded.run.group, summary.final_state);
  return {summary.final_state.poses.at(0), twists.head<6>()};
}

double distance(const Endpoint& a, const Endpoint& b) {
  return (a.pose.R - b.pose.R).norm() + (a.pose.r - b.pose.r).norm() + (a.body_twist - b.body_twist).norm();
}

std::vector<std::string> settings(const std::string& group, const std::string& tableau, double step) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", step);
  return {"group.name=" + group, "integrator.tableau=" + tableau, std::string("simulation.step_size=") + buffer};
}

struct TableauCase {
  const char* name;
  int order;
  double coarse_step;
};
const TableauCase tableau_cases[] = {{"euler", 1, 0.002}, {"heun", 2, 0.01}, {"rk3", 3, 0.02}, {"rk4", 4, 0.04}};

}  // namespace

TEST_CASE("each tableau converges at its order on both groups", "[integration][order]") {
  const Endpoint reference = final_point("free-body.toml", settings("SE3", "rk4", 1.0 / 4096));
  for (const char* group : {"SE3", "SO3xR3"}) {
    for (const auto& tableau : tableau_cases) {
      const double h = tableau.coarse_step;
      const double coarse = distance(final_point("free-body.toml", settings(group, tableau.name, h)), reference);
      const double fine = distance(final_point("free-body.toml", settings(group, tableau.name, h / 2)), reference);
      const double observed = std::log2(coarse / fine);
      INFO(group << " " << tableau.name << ": errors " << coarse << " -> " << fine << ", observed order " << observed);
      CHECK(std::abs(observed - tableau.order) < 0.2);
    }
  }
}

TEST_CASE("both groups give the same trajectory to the integrator's accuracy", "[integration]") {
  for (const auto& tableau : tableau_cases) {
    const double h = tableau.coarse_step;
    const double coarse = distance(final_point("free-body.toml", settings("SE3", tableau.name, h)),
                                   final_point("free-body.toml", settings("SO3xR3", tableau.name, h)));
    const double fine = distance(final_point("free-body.toml", settings("SE3", tableau.name, h / 2)),
                                 final_point("free-body.toml", settings("SO3xR3", tableau.name, h / 2)));
    INFO(tableau.name << ": SE3 vs SO3xR3 " << coarse << " -> " << fine);
    CHECK(coarse > 0.0);  // the groups are genuinely different discretizations
    CHECK(std::log2(coarse / fine) > tableau.order - 0.2);
  }
}

TEST_CASE("energy and spatial angular momentum are conserved to the integrator's order", "[integration][invariants]") {
  for (const char* group : {"SE3", "SO3xR3"}) {
    for (const auto& tableau : tableau_cases) {
      if (tableau.order < 2) continue;  // Lie-Euler's drift is first order but not monotone enough to resolve cleanly
      const double h = tableau.coarse_step;
      const RunSummary coarse = simulate("free-body.toml", settings(group, tableau.name, h));
      const RunSummary fine = simulate("free-body.toml", settings(group, tableau.name, h / 2));
      INFO(group << " " << tableau.name << ": energy drift " << coarse.energy_drift_max << " -> "
                 << fine.energy_drift_max << ", momentum drift " << coarse.angular_momentum_drift_max << " -> "
                 << fine.angular_momentum_drift_max);
      CHECK(std::log2(coarse.energy_drift_max / fine.energy_drift_max) > tableau.order - 0.2);
      CHECK(std::log2(coarse.angular_momentum_drift_max / fine.angular_momentum_drift_max) > tableau.order - 0.2);
      CHECK(fine.energy_drift_max < 1e-3);
      CHECK(fine.orthogonality_error_max < 1e-12);
    }
  }
}

TEST_CASE("torque-free symmetric body: the body angular velocity precesses at (I3 - I1) w3 / I1",
          "[integration][exact]") {
  const double I1 = 0.02, I3 = 0.035, w3 = 5.0, T = 2.0;
  const Vec3 w0(1.2, -0.7, w3);
  for (const char* group : {"SE3", "SO3xR3"}) {
    auto loaded = load_test_run("free-body.toml", {std::string("group.name=") + group, "model.bodies.0.center_of_mass=[0,0,0]",
                                                   "model.bodies.0.inertia=[[0.02,0,0],[0,0.02,0],[0,0,0.035]]",
                                                   "model.bodies.0.angular_velocity=[1.2,-0.7,5.0]",
                                                   "simulation.end_time=2.0", "simulation.step_size=0.001"});
    const RunSummary summary = execute_run(loaded.run, RunOutput{});
    const Vec3 w = body_twists(*loaded.run.group, summary.final_state).head<3>();
    const double rate = (I3 - I1) * w3 / I1, angle = rate * T;
    const Vec3 expected(w0.x() * std::cos(angle) - w0.y() * std::sin(angle),
                        w0.x() * std::sin(angle) + w0.y() * std::cos(angle), w3);
    INFO(group << ": omega " << w.transpose() << " expected " << expected.transpose());
    CHECK((w - expected).norm() < 1e-9);
  }
}

TEST_CASE("free fall: SO3xR3 integrates the centre of mass parabola exactly, SE3 to its order",
          "[integration][exact]") {
  const Vec3 g(0, 0, -9.81), r0(0.1, -0.2, 0.3), v0(0.3, -0.1, 0.2);
  const double T = 1.0;
  const Vec3 expected = r0 + v0 * T + 0.5 * g * T * T;
  const std::vector<std::string> common{"model.gravity=[0,0,-9.81]", "model.bodies.0.center_of_mass=[0,0,0]"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), common.begin(), common.end());
    return extra;
  };
  for (const char* tableau : {"heun", "rk3", "rk4"}) {
    const auto so3xr3 = final_point("free-body.toml", with(settings("SO3xR3", tableau, 0.05)));
    INFO(tableau << ": SO3xR3 position error " << (so3xr3.pose.r - expected).norm());
    CHECK((so3xr3.pose.r - expected).norm() < 1e-13);
  }
  const double coarse = (final_point("free-body.toml", with(settings("SE3", "rk4", 0.04))).pose.r - expected).norm();
  const double fine = (final_point("free-body.toml", with(settings("SE3", "rk4", 0.02))).pose.r - expected).norm();
  INFO("SE3 position error " << coarse << " -> " << fine);
  CHECK(coarse > 1e-12);  // the screw-motion update does not reproduce the parabola exactly
  CHECK(std::log2(coarse / fine) > 3.8);
}

TEST_CASE("applied loads: constant torque about a principal axis spins the body up linearly",
          "[integration][exact]") {
  // Body moment 0.07 about the body z axis, inertia 0.012 about it, no other rotation.
  for (const char* group : {"SE3", "SO3xR3"}) {
    auto loaded = load_test_run("free-body.toml",
                                {std::string("group.name=") + group, "model.bodies.0.center_of_mass=[0,0,0]",
                                 "model.bodies.0.inertia=[[0.03,0,0],[0,0.022,0],[0,0,0.012]]",
                                 "model.bodies.0.angular_velocity=[0,0,2.0]", "model.loads=[{body=\"body\", "
                                 "frame=\"body\", moment=[0,0,0.07]}, {body=\"body\", frame=\"world\", force=[0.3,0,0]}]"});
    const RunSummary summary = execute_run(loaded.run, RunOutput{});
    const Vec3 w = body_twists(*loaded.run.group, summary.final_state).head<3>();
    CHECK(std::abs(w.z() - (2.0 + 0.07 / 0.012 * 1.0)) < 1e-10);
    CHECK(w.head<2>().norm() < 1e-12);
    // Linear momentum grows by F T.
    std::vector<Pose> poses;
    std::vector<Vec6> twists;
    loaded.run.dynamics->body_motion(summary.final_state, poses, twists);
    const Invariants end = compute_invariants(*loaded.run.model, poses, twists);
    const Vec3 expected_momentum = 1.5 * Vec3(0.3, -0.1, 0.2) + Vec3(0.3, 0, 0) * 1.0;
    INFO(group << ": momentum " << end.linear_momentum.transpose());
    // Exact on SO3xR3 (translation decouples); to RK4 accuracy on SE3, whose body-frame
    // velocity couples to the rotation.
    CHECK((end.linear_momentum - expected_momentum).norm() < (std::string(group) == "SO3xR3" ? 1e-12 : 1e-6));
  }
}

TEST_CASE("StateSpace retractions check the sizes of increments and state", "[state-space]") {
  const auto registry = liembs::testing::build_tree_registry();
  for (const char* name : {"SE3", "SO3xR3"}) {
    const auto no_options = ConfigDocument::from_string("", "(group options)");
    const auto group = registry->create<Group>(name, no_options->root());
    const StateSpace space(*group, 1, 2);
    State state;
    state.poses.assign(1, Pose{});
    state.coordinates = Eigen::Vector2d(0.5, -1.0);
    // The configuration part alone leaves velocities alone, whatever their size (the
    // generalized-alpha trial state has none before its first step).
    Eigen::VectorXd increment = Eigen::VectorXd::Zero(8);
    increment(0) = 0.25;
    increment(7) = 2.0;
    space.retract_configuration(state, increment);
    CHECK(state.velocities.size() == 0);
    CHECK(state.coordinates(1) == 1.0);
    CHECK(std::abs(state.poses[0].R(1, 1) - std::cos(0.25)) < 1e-15);
    CHECK_THROWS_AS(space.retract(state, increment, Eigen::VectorXd::Zero(8)), std::logic_error);
    state.velocities = Eigen::VectorXd::Zero(8);
    space.retract(state, increment, Eigen::VectorXd::Ones(8));
    CHECK(state.velocities.sum() == 8.0);
    CHECK_THROWS_AS(space.retract_configuration(state, Eigen::VectorXd::Zero(7)), std::logic_error);
  }
}
