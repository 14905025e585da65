// Runs of trees (tests/data/trees) through load_run/execute_run: a passive double pendulum
// on every representation and forward-dynamics algorithm (energy conserved at the
// integrator's order, all combinations agree), a floating base with an arm on both groups
// (energy and spatial momentum conserved), a compound pendulum against an independent
// scalar integration and its small-amplitude period, a prismatic joint in free fall and a
// helical joint whose rotation and translation stay coupled by the pitch.
#include "../test_support.hpp"

#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/plugin/integrator.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/state_space.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace liembs;
using liembs::testing::load_test_run;

namespace {

const std::vector<std::string> representations{"body-fixed", "spatial", "hybrid", "mixed"};
const std::vector<std::string> forward_algorithms{"aba", "crba-cholesky"};

std::string format(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

std::vector<std::string> choices(const std::string& representation, const std::string& algorithm,
                                 std::vector<std::string> more = {}) {
  more.push_back("representation.name=" + representation);
  more.push_back("algorithm.name=" + algorithm);
  return more;
}

struct Outcome {
  RunSummary summary;
  std::vector<Pose> poses;  // of every model body at the final state
  std::vector<Vec6> twists;
  Invariants initial, final;
};

Outcome run_tree(const std::string& file, const std::vector<std::string>& overrides) {
  auto loaded = load_test_run("trees/" + file, overrides);
  Outcome outcome;
  {
    const State start = loaded.run.dynamics->initial_state();
    loaded.run.dynamics->body_motion(start, outcome.poses, outcome.twists);
    outcome.initial = compute_invariants(*loaded.run.model, outcome.poses, outcome.twists);
  }
  outcome.summary = execute_run(loaded.run, RunOutput{});
  loaded.run.dynamics->body_motion(outcome.summary.final_state, outcome.poses, outcome.twists);
  outcome.final = compute_invariants(*loaded.run.model, outcome.poses, outcome.twists);
  return outcome;
}

double state_distance(const State& a, const State& b) {
  double d = (a.coordinates - b.coordinates).norm() + (a.velocities - b.velocities).norm();
  for (std::size_t i = 0; i < a.poses.size(); ++i)
    d += (a.poses[i].R - b.poses[i].R).norm() + (a.poses[i].r - b.poses[i].r).norm();
  return d;
}

// theta'' = -k sin(theta) by classical RK4 with step h; returns (theta, theta') at time T.
std::pair<double, double> scalar_pendulum(double k, double theta, double omega, double T, double h) {
  const auto steps = static_cast<long>(std::llround(T / h));
  h = T / static_cast<double>(steps);
  for (long n = 0; n < steps; ++n) {
    const double k1t = omega, k1w = -k * std::sin(theta);
    const double k2t = omega + 0.5 * h * k1w, k2w = -k * std::sin(theta + 0.5 * h * k1t);
    const double k3t = omega + 0.5 * h * k2w, k3w = -k * std::sin(theta + 0.5 * h * k2t);
    const double k4t = omega + h * k3w, k4w = -k * std::sin(theta + h * k3t);
    theta += h / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t);
    omega += h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
  }
  return {theta, omega};
}

}  // namespace

TEST_CASE("double pendulum: every representation and algorithm conserves energy at order 4 and agrees",
          "[tree-run]") {
  State reference;
  bool have_reference = false;
  for (const auto& representation : representations) {
    for (const auto& algorithm : forward_algorithms) {
      const Outcome coarse = run_tree("double-pendulum.toml", choices(representation, algorithm, {"simulation.step_size=0.004"}));
      const Outcome fine = run_tree("double-pendulum.toml", choices(representation, algorithm, {"simulation.step_size=0.002"}));
      const double ratio = coarse.summary.energy_drift_max / fine.summary.energy_drift_max;
      INFO(representation << " / " << algorithm << ": energy drift " << coarse.summary.energy_drift_max << " -> "
                          << fine.summary.energy_drift_max << " (ratio " << ratio << ")");
      CHECK(coarse.summary.steps == 250);
      CHECK(fine.summary.energy_drift_max < 1e-6);
      CHECK(fine.summary.energy_drift_max > 0.0);
      CHECK(std::log2(ratio) > 4.0 - 0.2);
      CHECK(std::abs(fine.final.total_energy() - fine.initial.total_energy()) <
            1e-6 * std::abs(fine.initial.total_energy()));
      // The state is the joint coordinates and rates of a fixed-base tree.
      CHECK(fine.summary.final_state.poses.empty());
      CHECK(fine.summary.final_state.coordinates.size() == 2);
      CHECK(fine.summary.final_state.velocities.size() == 2);
      CHECK(fine.summary.final_state.coordinates.allFinite());
      if (!have_reference) {
        reference = fine.summary.final_state;
        have_reference = true;
        // It moved: the pendulum is not at its initial state.
        CHECK((reference.coordinates - Eigen::Vector2d(0.5, -0.4)).norm() > 0.1);
      } else {
        const double distance = state_distance(fine.summary.final_state, reference);
        INFO("distance to body-fixed / aba: " << distance);
        CHECK(distance < 1e-10);
      }
    }
  }
}

TEST_CASE("floating base with an arm: energy and spatial momentum conserved on SE3 and SO3xR3", "[tree-run]") {
  std::vector<Outcome> finals;
  for (const std::string group : {"SE3", "SO3xR3"}) {
    const Outcome coarse = run_tree("floating-arm.toml", {"group.name=" + group, "simulation.step_size=0.02"});
    const Outcome fine = run_tree("floating-arm.toml", {"group.name=" + group, "simulation.step_size=0.01"});
    INFO(group << ": energy drift " << coarse.summary.energy_drift_max << " -> " << fine.summary.energy_drift_max
               << ", angular momentum drift " << coarse.summary.angular_momentum_drift_max << " -> "
               << fine.summary.angular_momentum_drift_max);
    CHECK(fine.summary.final_state.poses.size() == 1);
    CHECK(fine.summary.final_state.coordinates.size() == 4);
    CHECK(fine.summary.final_state.velocities.size() == 10);
    CHECK(fine.summary.energy_drift_max < 1e-6);
    CHECK(fine.summary.angular_momentum_drift_max < 1e-6);
    CHECK(std::log2(coarse.summary.energy_drift_max / fine.summary.energy_drift_max) > 4.0 - 0.2);
    CHECK(std::log2(coarse.summary.angular_momentum_drift_max / fine.summary.angular_momentum_drift_max) > 4.0 - 0.2);
    CHECK(fine.summary.orthogonality_error_max < 1e-12);
    // Linear momentum too, and the arm actually moved the base.
    const double p0 = fine.initial.linear_momentum.norm();
    CHECK((fine.final.linear_momentum - fine.initial.linear_momentum).norm() < 1e-6 * p0);
    CHECK(fine.initial.angular_momentum.norm() > 0.1);
    finals.push_back(fine);
  }
  // Both groups describe the same motion, to the integrator's accuracy.
  for (std::size_t b = 0; b < finals[0].poses.size(); ++b) {
    INFO("body " << b);
    CHECK((finals[0].poses[b].R - finals[1].poses[b].R).norm() < 1e-6);
    CHECK((finals[0].poses[b].r - finals[1].poses[b].r).norm() < 1e-6);
    CHECK((finals[0].poses[b].r - finals[1].poses[b].r).norm() > 0.0);
  }
}

TEST_CASE("floating base with an arm: all representations and algorithms agree", "[tree-run]") {
  State reference;
  for (const auto& representation : representations) {
    for (const auto& algorithm : forward_algorithms) {
      const Outcome outcome = run_tree("floating-arm.toml", choices(representation, algorithm, {"simulation.end_time=0.5"}));
      if (representation == representations.front() && algorithm == forward_algorithms.front()) {
        reference = outcome.summary.final_state;
        continue;
      }
      INFO(representation << " / " << algorithm);
      CHECK(state_distance(outcome.summary.final_state, reference) < 1e-10);
    }
  }
}

TEST_CASE("compound pendulum: large amplitude against a scalar integration, small-amplitude period",
          "[tree-run][exact]") {
  // tests/data/trees/pendulum.toml: m = 1.5, l = 0.4, I_pivot = 0.02 + m l^2.
  const double m = 1.5, l = 0.4, g = 9.81, I_pivot = 0.02 + m * l * l, k = m * g * l / I_pivot;
  SECTION("large amplitude") {
    const double theta0 = 2.0, omega0 = 0.3, T = 2.0;
    const auto [theta, omega] = scalar_pendulum(k, theta0, omega0, T, 1e-5);
    for (const auto& representation : representations) {
      const Outcome outcome = run_tree("pendulum.toml", choices(representation, "aba"));
      const State& state = outcome.summary.final_state;
      INFO(representation << ": q = " << state.coordinates(0) << " vs " << theta << " (difference "
                          << state.coordinates(0) - theta << "), q' = " << state.velocities(0) << " vs " << omega
                          << " (difference " << state.velocities(0) - omega << ")");
      CHECK(std::abs(state.coordinates(0) - theta) < 1e-8);
      CHECK(std::abs(state.velocities(0) - omega) < 1e-8);
      // The centre of mass stays at l from the pivot, in the plane normal to the axis.
      const Vec3 pivot(0.2, -0.1, 1.5), axis = Vec3(1, 1, 0).normalized();
      const Vec3 com = se3::transform_point(outcome.poses[0], Vec3(0, 0, -l));
      CHECK(std::abs((com - pivot).norm() - l) < 1e-12);
      CHECK(std::abs((com - pivot).dot(axis)) < 1e-12);
      CHECK(std::abs(com.z() - (pivot.z() - l * std::cos(state.coordinates(0)))) < 1e-12);
    }
  }
  SECTION("small amplitude: period 2 pi sqrt(I_pivot / (m g l)) (1 + theta0^2 / 16)") {
    const double theta0 = 0.01, T0 = 2.0 * M_PI * std::sqrt(I_pivot / (m * g * l));
    const Outcome outcome = run_tree("pendulum.toml", {"model.joints.0.initial_position=0.01",
                                                       "model.joints.0.initial_velocity=0.0",
                                                       "simulation.end_time=" + format(T0)});
    const double q = outcome.summary.final_state.coordinates(0), qd = outcome.summary.final_state.velocities(0);
    // Near the turning point q' = -omega^2 theta0 (t - T): the period is T0 + q'(T0) / (omega^2 theta0).
    const double period = T0 + qd / (k * theta0);
    INFO("q(T0) = " << q << ", q'(T0) = " << qd << ", period " << period << " vs small-angle " << T0);
    CHECK(std::abs(q - theta0) < 1e-8);
    CHECK(std::abs(period / T0 - 1.0) < 2e-5);                               // small-angle formula
    CHECK(std::abs(period / T0 - 1.0 - theta0 * theta0 / 16.0) < 1e-7);      // and its first correction
  }
}

TEST_CASE("released from rest at E(0) = 0: the energy drift is relative to the kinetic energy reached, order 4",
          "[tree-run]") {
  const Outcome coarse = run_tree("pendulum-from-rest.toml", {"simulation.step_size=0.004"});
  const Outcome fine = run_tree("pendulum-from-rest.toml", {"simulation.step_size=0.002"});
  REQUIRE(fine.initial.total_energy() == 0.0);
  REQUIRE(fine.initial.kinetic_energy == 0.0);
  // The bob swings down through 0.4 m: kinetic energy up to m g l = 5.9 J.
  const double kinetic_max = 1.5 * 9.81 * 0.4;
  CHECK(fine.summary.energy_scale == Approx(kinetic_max).epsilon(1e-4));
  CHECK(fine.summary.energy_drift_max > 0.0);
  CHECK(fine.summary.energy_drift_max < 1e-8);
  CHECK(std::log2(coarse.summary.energy_drift_max / fine.summary.energy_drift_max) > 4.0 - 0.3);
  // |E(t) - E(0)| over the scale, so the absolute drift is the relative one times m g l.
  CHECK(std::abs(fine.final.total_energy()) <= fine.summary.energy_drift_max * fine.summary.energy_scale * (1 + 1e-12));
}

TEST_CASE("prismatic joint under gravity: the free-fall parabola along the axis, exactly", "[tree-run][exact]") {
  const double q0 = 0.2, v0 = 0.5, T = 1.5;
  const Vec3 e = Vec3(1.0, 0.0, -1.0).normalized(), gravity(0.0, 0.0, -9.81);
  const double g_axis = gravity.dot(e);
  const double q_expected = q0 + v0 * T + 0.5 * g_axis * T * T, v_expected = v0 + g_axis * T;
  const Pose A = [] {
    Pose pose;
    pose.R = so3::exp(Vec3(0.1, 0.2, -0.3));
    pose.r = Vec3(0.3, 0.1, 2.0);
    return pose;
  }();
  for (const auto& representation : representations) {
    for (const auto& algorithm : forward_algorithms) {
      const Outcome outcome = run_tree("prismatic-fall.toml", choices(representation, algorithm));
      const State& state = outcome.summary.final_state;
      INFO(representation << " / " << algorithm << ": q = " << state.coordinates(0) << " vs " << q_expected
                          << " (difference " << state.coordinates(0) - q_expected << ")");
      CHECK(std::abs(state.coordinates(0) - q_expected) < 1e-12);
      CHECK(std::abs(state.velocities(0) - v_expected) < 1e-12);
      CHECK((outcome.poses[0].R - A.R).norm() < 1e-14);
      CHECK((outcome.poses[0].r - (A.r + state.coordinates(0) * e)).norm() < 1e-12);
      // Energy exactly conserved up to round-off (the solution is a polynomial of degree 2).
      CHECK(outcome.summary.energy_drift_max < 1e-12);
    }
  }
}

TEST_CASE("helical joint: translation = pitch * rotation angle along the whole trajectory", "[tree-run][exact]") {
  // tests/data/trees/helical.toml.
  const double h = 0.05, m = 0.5, g = 9.81, q0 = 0.1, v0 = 3.0, step = 0.01;
  const Vec3 e = Vec3::UnitZ(), y(0.1, 0.2, 0.0);
  Pose A;
  A.R = so3::exp(Vec3(0.0, 0.0, 0.4));
  A.r = Vec3(0.1, 0.2, 1.0);
  // Generalized inertia: the body's moment about the screw axis plus m h^2; force -m g h.
  const Vec3 com = se3::transform_point(A, Vec3(0.03, 0.0, 0.01)) - y;
  const Vec3 com_radial = com - com.dot(e) * e;
  const Mat3 I_world = A.R * Vec3(0.002, 0.002, 0.003).asDiagonal() * A.R.transpose();
  const double I_line = e.dot(I_world * e) + m * com_radial.squaredNorm();
  const double acceleration = -m * g * h / (I_line + m * h * h);

  for (const auto& representation : representations) {
    for (const auto& algorithm : forward_algorithms) {
      INFO(representation << " / " << algorithm);
      auto loaded = load_test_run("trees/helical.toml", choices(representation, algorithm));
      Run& run = loaded.run;
      ForwardDynamics& dynamics = *run.dynamics;
      const StateSpace space(*run.group, dynamics.free_bodies(), dynamics.joint_coordinates());
      State state = dynamics.initial_state();
      std::vector<Pose> poses;
      std::vector<Vec6> twists;
      dynamics.body_motion(state, poses, twists);
      // The angle from the poses, unwrapped step by step (it exceeds pi).
      double angle = so3::log(Mat3(poses[0].R * A.R.transpose())).dot(e);
      CHECK(std::abs(angle - q0) < 1e-14);
      Mat3 previous = poses[0].R;
      double worst_coupling = 0.0, worst_pose = 0.0, worst_q = 0.0;
      run.integrator->start(space, state);
      const int steps = 100;
      for (int n = 1; n <= steps; ++n) {
        run.integrator->step(space, dynamics, state, step);
        dynamics.body_motion(state, poses, twists);
        const Pose& C = poses[0];
        angle += so3::log(Mat3(previous.transpose() * C.R)).dot(e);
        previous = C.R;
        // Rotation by `angle` about e, translation along e by h * angle, from the reference.
        const double axial = (C.r - A.r).dot(e);
        worst_coupling = std::max(worst_coupling, std::abs(axial - h * angle));
        const Pose expected = se3::compose(se3::exp(Vec6((Vec6() << e, y.cross(e) + h * e).finished() * angle)), A);
        worst_pose = std::max(worst_pose, (C.R - expected.R).norm() + (C.r - expected.r).norm());
        // And the joint coordinate is that angle, following q0 + v0 t + a t^2 / 2.
        const double t = n * step;
        worst_q = std::max({worst_q, std::abs(state.coordinates(0) - angle),
                            std::abs(state.coordinates(0) - (q0 + v0 * t + 0.5 * acceleration * t * t))});
      }
      INFO("final angle " << angle << ", axial coupling error " << worst_coupling << ", pose error " << worst_pose
                          << ", coordinate error " << worst_q);
      CHECK(std::abs(angle) > 2.0 * M_PI);  // several turns
      CHECK(worst_coupling < 1e-12);
      CHECK(worst_pose < 1e-12);
      CHECK(worst_q < 1e-10);
      CHECK(std::abs(state.velocities(0) - (v0 + acceleration * steps * step)) < 1e-10);
    }
  }
}
