// The kinematics plugin (kinematic analysis of fully driven mechanisms, paper 004 §2.3):
// positions, velocities, accelerations and multipliers of a driven planar pendulum against
// their closed form; chord and full Newton agreeing, with their iteration counts; the time
// grid; the backward-Euler dynamics of the same zero-DoF mechanism converging to it at
// order 1 (reference note §4.5); refusal of mechanisms that are not fully driven; failures
// and options.
#include "../support/integrator_harness.hpp"

#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/invariants.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <filesystem>

using namespace liembs;
using Catch::Matchers::Contains;
using liembs::testing::integrate;
using liembs::testing::load_test_run;
using liembs::testing::Plugins;

namespace {

// A point mass m on a massless rod of length L in the vertical plane, q = (x, y), y up, with
// the rod's angle from the downward vertical driven: phi(t) = (pi/4) cos 2t (the law of paper
// 004's single pendulum). Two constraints:
//   rod     g1 = x^2 + y^2 - L^2,        J1 = 2 (x, y)
//   driver  g2 = x cos phi + y sin phi,  J2 = (cos phi, sin phi)   (q perpendicular to (c, s))
// g2' = J2 V + phi' (-x s + y c), so nu2 = phi' (x s - y c); g2'' = 0 gives
//   eta2 = -2 phi' (-x' s + y' c) - phi'' (-x s + y c) + phi'^2 (x c + y s).
// Closed form: q = L (sin phi, -cos phi); the driver's multiplier is -tau / L with the hinge
// torque tau = m L^2 phi'' + m g L sin phi, the rod's m (g cos phi + L phi'^2) / (2 L).
class DrivenPendulum final : public ForwardDynamics, public ConstrainedSystem {
 public:
  double mass = 78.0, length = 2.0, gravity = 9.81;
  double start_offset = 0.0;  // the initial state's angle error (the first solve corrects it)

  static double angle(double t) { return M_PI / 4.0 * std::cos(2.0 * t); }
  static double angle_rate(double t) { return -M_PI / 2.0 * std::sin(2.0 * t); }
  static double angle_acceleration(double t) { return -M_PI * std::cos(2.0 * t); }

  void velocity_rates(const State&, Eigen::VectorXd&) override { FAIL("the kinematic analysis needs no dynamics"); }
  std::size_t free_bodies() const override { return 0; }
  std::size_t joint_coordinates() const override { return 2; }
  State initial_state() const override {
    State state;
    state.coordinates = position(angle(0.0) + start_offset);
    state.velocities = Eigen::Vector2d::Zero();
    return state;
  }
  void body_motion(const State&, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses.clear();
    twists.clear();
  }
  ConstrainedSystem* constraints() override { return this; }

  Eigen::Index constraint_count() const override { return 2; }
  const std::vector<ConstraintBlock>& blocks() const override { return blocks_; }
  void evaluate(const State& state, DaeTerms& terms, unsigned what) override {
    const double x = state.coordinates(0), y = state.coordinates(1);
    const double vx = state.velocities(0), vy = state.velocities(1);
    const double t = state.time, phi = angle(t), rate = angle_rate(t), c = std::cos(phi), s = std::sin(phi);
    if (what & dae::mass) terms.mass = mass * Eigen::Matrix2d::Identity();
    if (what & dae::forces) terms.forces = Eigen::Vector2d(0.0, -mass * gravity);
    if (what & dae::residual) terms.residual = Eigen::Vector2d(x * x + y * y - length * length, x * c + y * s);
    if (what & dae::jacobian) terms.jacobian = (Eigen::Matrix2d() << 2 * x, 2 * y, c, s).finished();
    if (what & dae::velocity_rhs) terms.velocity_rhs = Eigen::Vector2d(0.0, rate * (x * s - y * c));
    if (what & dae::acceleration_rhs)
      terms.acceleration_rhs =
          Eigen::Vector2d(-2.0 * (vx * vx + vy * vy), -2.0 * rate * (-vx * s + vy * c) -
                                                          angle_acceleration(t) * (-x * s + y * c) +
                                                          rate * rate * (x * c + y * s));
  }

  Eigen::Vector2d position(double phi) const { return length * Eigen::Vector2d(std::sin(phi), -std::cos(phi)); }
  Eigen::Vector2d velocity(double t) const {
    const double phi = angle(t);
    return length * angle_rate(t) * Eigen::Vector2d(std::cos(phi), std::sin(phi));
  }
  Eigen::Vector2d acceleration(double t) const {
    const double phi = angle(t), rate = angle_rate(t);
    return length * angle_acceleration(t) * Eigen::Vector2d(std::cos(phi), std::sin(phi)) +
           length * rate * rate * Eigen::Vector2d(-std::sin(phi), std::cos(phi));
  }
  Eigen::Vector2d multipliers(double t) const {
    const double phi = angle(t), rate = angle_rate(t);
    const double torque = mass * length * length * angle_acceleration(t) + mass * gravity * length * std::sin(phi);
    return {mass * (gravity * std::cos(phi) + length * rate * rate) / (2.0 * length), -torque / length};
  }

 private:
  std::vector<ConstraintBlock> blocks_{{"rod", 0, 1}, {"driver", 1, 1}};
};

double statistic(const Integrator& integrator, const std::string& name) {
  for (const auto& [key, value] : integrator.statistics())
    if (key == name) return value;
  FAIL("no statistic " << name);
  return 0.0;
}

}  // namespace

TEST_CASE("kinematic analysis of the driven pendulum matches its closed form at every step",
          "[kinematics]") {
  const Plugins plugins;
  DrivenPendulum pendulum;
  pendulum.start_offset = 0.05;  // the first position solve assembles the mechanism
  for (const char* newton : {"chord", "full"}) {
    auto kinematics = plugins.integrator("kinematics", std::string("newton = \"") + newton + "\"\ntolerance = 1e-10");
    double position_error = 0.0, velocity_error = 0.0, acceleration_error = 0.0, multiplier_error = 0.0;
    long long n = 0;
    bool on_grid = true;
    integrate(plugins, pendulum, *kinematics, 1e-3, 3.0, [&](const State& state) {
      ++n;
      on_grid = on_grid && state.time == static_cast<double>(n) * 1e-3;
      const double t = state.time;
      position_error = std::max(position_error, (state.coordinates - pendulum.position(DrivenPendulum::angle(t))).norm());
      velocity_error = std::max(velocity_error, (state.velocities - pendulum.velocity(t)).norm());
      acceleration_error = std::max(acceleration_error, (*kinematics->accelerations() - pendulum.acceleration(t)).norm());
      multiplier_error = std::max(multiplier_error,
                                  (*kinematics->multipliers() - pendulum.multipliers(t)).norm() /
                                      pendulum.multipliers(t).norm());
    });
    const double iterations = statistic(*kinematics, "newton_iterations_per_step");
    INFO(newton << ": max errors: position " << position_error << ", velocity " << velocity_error << ", acceleration "
                << acceleration_error << ", multipliers (relative) " << multiplier_error << "; iterations per step "
                << iterations);
    CHECK(on_grid);
    // Newton stops when ||delta q|| <= 1e-10; the next correction, the error left, is smaller.
    CHECK(position_error < 1e-10);
    CHECK(velocity_error < 1e-9);
    CHECK(acceleration_error < 1e-8);
    CHECK(multiplier_error < 1e-9);
    CHECK(statistic(*kinematics, "steps") == 3000);
    CHECK(statistic(*kinematics, "coordinates") == 2);
    CHECK(statistic(*kinematics, "constraints") == 2);
    if (std::string(newton) == "chord") {
      // One factorization for the positions and one for the velocity solve per step.
      CHECK(statistic(*kinematics, "matrix_factorizations") == 2 * 3000);
      CHECK(iterations > 2.0);
      CHECK(iterations < 5.0);
    } else {
      CHECK(statistic(*kinematics, "matrix_factorizations") ==
            statistic(*kinematics, "newton_iterations") + 3000);
      CHECK(iterations < 4.0);
    }
  }
}

TEST_CASE("kinematics: extrapolating with h V_n saves Newton iterations and gives the same solution",
          "[kinematics]") {
  const Plugins plugins;
  DrivenPendulum pendulum;
  auto previous = plugins.integrator("kinematics", "tolerance = 1e-12");
  auto extrapolated = plugins.integrator("kinematics", "tolerance = 1e-12\npredictor = \"velocity\"");
  const State a = integrate(plugins, pendulum, *previous, 1e-2, 1.0);
  const State b = integrate(plugins, pendulum, *extrapolated, 1e-2, 1.0);
  CHECK((a.coordinates - b.coordinates).norm() < 1e-12);
  CHECK((a.velocities - b.velocities).norm() < 1e-11);
  CHECK(statistic(*extrapolated, "newton_iterations") < statistic(*previous, "newton_iterations"));
  CHECK_THAT(extrapolated->description(), Contains("q_n exp(h V_n)"));
}

TEST_CASE("backward Euler on the zero-DoF pendulum converges at order 1 to the kinematic solution",
          "[kinematics][bdf]") {
  // Reference note §4.5: index-3 backward Euler keeps the positions exact (to the Newton
  // tolerance); velocities and accelerations are finite differences, |dV| ~ (h/2)|a|,
  // |dA| ~ h |a'|; the multipliers converge at order 1 too.
  DrivenPendulum pendulum;
  const Plugins plugins;
  const double end_time = 3.0;
  auto errors_at = [&](double h) {
    auto bdf = plugins.integrator("bdf", "newton_tolerance_h2 = 1e-13");
    const State end = integrate(plugins, pendulum, *bdf, h, end_time);
    return std::array<double, 4>{(end.coordinates - pendulum.position(DrivenPendulum::angle(end_time))).norm(),
                                 (end.velocities - pendulum.velocity(end_time)).norm(),
                                 (*bdf->accelerations() - pendulum.acceleration(end_time)).norm(),
                                 (*bdf->multipliers() - pendulum.multipliers(end_time)).norm()};
  };
  const auto coarse = errors_at(2e-3), fine = errors_at(1e-3);
  for (int k = 1; k < 4; ++k) {
    const double observed = std::log2(coarse[k] / fine[k]);
    INFO("quantity " << k << " (velocity, acceleration, multipliers): errors " << coarse[k] << " -> " << fine[k]
                     << ", observed order " << observed);
    CHECK(std::abs(observed - 1.0) < 0.1);
  }
  INFO("position errors " << coarse[0] << ", " << fine[0]);
  CHECK(coarse[0] < 1e-12);
  CHECK(fine[0] < 1e-12);
}

TEST_CASE("paper 004's order analysis (T7): backward Euler's vertical errors at T = 3 s are 1.925 h and 8.31 h, "
          "BDF2 converges at order 2",
          "[kinematics][bdf][paper-004]") {
  // Reference note §4.5 / T7: to leading order |dz'(3)| = (h/2)|z''(3)| = 1.925 h and
  // |dz''(3)| = h |z'''(3)| = 8.31 h (z vertical: y here), the positions exact.
  DrivenPendulum pendulum;
  const Plugins plugins;
  const double end_time = 3.0;
  const double jerk = [&] {  // z'''(3) by central differences of the closed-form z''
    const double d = 1e-4;
    return (pendulum.acceleration(end_time + d)(1) - pendulum.acceleration(end_time - d)(1)) / (2 * d);
  }();
  const double h = 1e-3;
  {
    auto bdf = plugins.integrator("bdf", "newton_tolerance_h2 = 1e-13");
    const State end = integrate(plugins, pendulum, *bdf, h, end_time);
    const double velocity_error = std::abs(end.velocities(1) - pendulum.velocity(end_time)(1)) / h;
    const double acceleration_error = std::abs((*bdf->accelerations())(1) - pendulum.acceleration(end_time)(1)) / h;
    INFO("|dz'(3)|/h = " << velocity_error << ", |dz''(3)|/h = " << acceleration_error << ", z''(3) = "
                         << pendulum.acceleration(end_time)(1) << ", z'''(3) = " << jerk);
    CHECK(0.5 * std::abs(pendulum.acceleration(end_time)(1)) == Approx(1.925).epsilon(1e-3));
    CHECK(std::abs(jerk) == Approx(8.31).epsilon(1e-3));
    CHECK(velocity_error == Approx(1.925).epsilon(0.01));
    CHECK(acceleration_error == Approx(8.31).epsilon(0.01));
  }
  auto bdf2_errors = [&](double step) {
    auto bdf = plugins.integrator("bdf", "order = 2\nnewton_tolerance_h2 = 1e-13");
    const State end = integrate(plugins, pendulum, *bdf, step, end_time);
    return std::array<double, 3>{(end.velocities - pendulum.velocity(end_time)).norm(),
                                 (*bdf->accelerations() - pendulum.acceleration(end_time)).norm(),
                                 (*bdf->multipliers() - pendulum.multipliers(end_time)).norm()};
  };
  const auto coarse = bdf2_errors(4e-3), fine = bdf2_errors(2e-3);
  for (int k = 0; k < 3; ++k) {
    const double observed = std::log2(coarse[k] / fine[k]);
    INFO("BDF2 quantity " << k << " (velocity, acceleration, multipliers): errors " << coarse[k] << " -> " << fine[k]
                          << ", observed order " << observed);
    CHECK(std::abs(observed - 2.0) < 0.15);
  }
}

TEST_CASE("kinematics refuses a mechanism that is not fully driven, naming its degrees of freedom",
          "[kinematics][failure]") {
  auto error_of = [](const std::string& file, std::vector<std::string> settings) {
    settings.push_back("integrator.name=kinematics");
    auto loaded = load_test_run(file, settings);
    const auto folder = std::filesystem::temp_directory_path() / "liembs-test-kinematics-refused";
    std::filesystem::remove_all(folder);
    std::string message = "no error";
    try {
      execute_run(loaded.run, RunOutput::into(folder));
    } catch (const ModelError& error) {
      message = error.what();
    }
    CHECK(!std::filesystem::exists(folder / "trajectory.csv"));
    CHECK(!std::filesystem::exists(folder / "summary.json"));
    std::filesystem::remove_all(folder);
    return message;
  };
  CHECK_THAT(error_of("../../configs/four-bar/spatial.toml", {"algorithm.name=newton-euler"}),
             Contains("not fully driven") && Contains("it has 1 degree of freedom") &&
                 Contains("18 velocity coordinates") && Contains("17 independent"));
  CHECK_THAT(error_of("../../configs/four-bar/planar.toml", {}), Contains("not fully driven") &&
                                                                     Contains("it has 1 degree of freedom"));
  CHECK_THAT(error_of("free-body.toml", {}), Contains("no constraints") && Contains("it has 6 degrees of freedom"));
}

TEST_CASE("kinematics failures name the time, the step and the worst constraint", "[kinematics][failure]") {
  const Plugins plugins;
  DrivenPendulum pendulum;
  const StateSpace space(*plugins.group, 0, 2);

  SECTION("a position iteration that cannot converge") {
    pendulum.start_offset = 0.3;
    auto kinematics = plugins.integrator("kinematics", "max_iterations = 1\ntolerance = 1e-14");
    State state = pendulum.initial_state();
    const State before = state;
    kinematics->start(space, state);
    try {
      kinematics->step(space, pendulum, state, 0.01);
      FAIL("one iteration cannot converge from 0.3 rad off");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("kinematics: the position iteration did not converge") &&
                              Contains("t = 0.01 s") && Contains("step size 0.01 s") &&
                              Contains("after 1 iterations") && Contains("worst constraint joint '"));
    }
    CHECK(state.time == before.time);
    CHECK(state.coordinates == before.coordinates);
  }

  SECTION("a singular Jacobian during the run: the mass at the pivot, where the rod row vanishes") {
    auto kinematics = plugins.integrator("kinematics", "");
    State state = pendulum.initial_state();
    kinematics->start(space, state);
    kinematics->step(space, pendulum, state, 0.01);  // the check of the degrees of freedom passes here
    state.coordinates.setZero();
    try {
      kinematics->step(space, pendulum, state, 0.01);
      FAIL("a singular Jacobian must fail the step");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("kinematics: the constraint Jacobian is singular at t = 0.02 s") &&
                              Contains("step size 0.01 s"));
    }
  }
}

TEST_CASE("kinematics options are checked", "[kinematics][config]") {
  const Plugins plugins;
  CHECK_THAT(plugins.integrator("kinematics", "")->description(),
             Contains("chord Newton") && Contains("1e-10") && Contains("predictor q_n,"));
  auto error_of = [&](const std::string& options) {
    try {
      plugins.integrator("kinematics", options);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("newton = \"quasi\""), Contains("newton") && Contains("chord"));
  CHECK_THAT(error_of("predictor = \"linear\""), Contains("predictor") && Contains("velocity"));
  CHECK_THAT(error_of("tolerance = 0"), Contains("tolerance"));
  CHECK_THAT(error_of("max_iterations = 0"), Contains("max_iterations"));
  CHECK_THAT(error_of("newton_tolerance = 1e-3"), Contains("unknown key 'newton_tolerance'"));
}

TEST_CASE("kinematics of paper 004's single pendulum matches the closed form at T = 3 s", "[kinematics][paper-004]") {
  // Reference note section 4.2: z = -1.457754, z' = 0.600988, z'' = -3.849593 (the centre of
  // mass, the body origin), the driver's multiplier -284.198; Table 9: 3.80 iterations per step.
  for (const char* group : {"SO3xR3", "SE3"}) {
    auto loaded = load_test_run("../../configs/paper-004/single-pendulum.toml",
                                {std::string("group.name=") + group, "integrator.name=kinematics",
                                 "integrator.tolerance=1e-10", "simulation.step_size=1e-3"});
    const RunSummary summary = execute_run(loaded.run, RunOutput{});
    const State& end = summary.final_state;
    const Integrator& kinematics = *loaded.run.integrator;
    const Eigen::VectorXd twist = body_twists(*loaded.run.group, end);
    const Vec3 velocity = end.poses[0].R * twist.tail<3>();
    const Eigen::VectorXd& lambda = *kinematics.multipliers();
    const double iterations = statistic(kinematics, "newton_iterations_per_step");
    INFO(group << ": r = " << end.poses[0].r.transpose() << ", r' = " << velocity.transpose() << ", lambda = "
               << lambda.transpose() << ", iterations per step " << iterations);
    CHECK(end.time == 3.0);
    CHECK(end.poses[0].r.z() == Approx(-1.457754).margin(1e-6));
    CHECK(end.poses[0].r.y() == Approx(1.369289).margin(1e-6));
    CHECK(velocity.z() == Approx(0.600988).margin(1e-6));
    CHECK(velocity.y() == Approx(0.639815).margin(1e-6));
    if (std::string(group) == "SO3xR3") {  // V = (omega, r'), so V' ends with r''
      CHECK(kinematics.accelerations()->tail<3>().z() == Approx(-3.849593).margin(1e-6));
      CHECK(kinematics.accelerations()->tail<3>().y() == Approx(-4.661039).margin(1e-6));
    }
    CHECK(lambda(lambda.size() - 1) == Approx(-284.198).margin(1e-3));
    CHECK(statistic(kinematics, "coordinates") == 6);
    CHECK(statistic(kinematics, "constraints") == 6);
    CHECK(iterations > 2.5);
    CHECK(iterations < 5.0);
  }
}
