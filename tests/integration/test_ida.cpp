// The ida integrator (SUNDIALS IDA in local coordinates of the group): agreement with
// converged references on a free body (ODE) and on a pendulum in Cartesian coordinates
// (DAE, both formulations), constraint drift of GGL, statistics, options and failures.
#include "../test_support.hpp"

#include "../support/cartesian_pendulum.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/algorithm.hpp>
#include <liembs/plugin/integrator.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/state_space.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace liembs;
using Catch::Matchers::Contains;
using liembs::testing::CartesianPendulum;
using liembs::testing::load_test_run;

namespace {

// A heavy top: one free body (centre of mass at the body origin) held at the world origin by
// a spherical joint at body point p, in the group's velocity coordinates (paper 002 sec. 3):
//   g = R p + r,
//   SE3 (V = (w, R^T r')):  J = [-R p~, R],  eta = -R w~ (w~ p + v),
//                           Q = (-w x Theta w, -m w x v + m R^T gravity)
//   SO3xR3 (V = (w, r')):   J = [-R p~, I],  eta = -R w~ w~ p,   Q = (-w x Theta w, m gravity).
class HeavyTop final : public ForwardDynamics, public ConstrainedSystem {
 public:
  explicit HeavyTop(const std::string& group_name) : hybrid_(group_name == "SO3xR3") {}

  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    DaeTerms terms;
    evaluate(state, terms, dae::all);
    solve_index1(terms, rates);
  }
  std::size_t free_bodies() const override { return 1; }
  std::size_t joint_coordinates() const override { return 0; }
  State initial_state() const override {
    State state;
    state.poses.resize(1);
    state.poses[0].r = -pivot_;  // R = I: the pivot at the world origin
    const Vec3 omega(0.3, 8.0, 4.0);
    state.velocities.resize(6);
    state.velocities << omega, pivot_.cross(omega);  // R = I: v = r' = p x w, J V = 0
    return state;
  }
  void body_motion(const State&, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses.clear();
    twists.clear();
  }
  ConstrainedSystem* constraints() override { return this; }

  Eigen::Index constraint_count() const override { return 3; }
  const std::vector<ConstraintBlock>& blocks() const override { return blocks_; }
  void evaluate(const State& state, DaeTerms& terms, unsigned what) override {
    const Mat3& R = state.poses[0].R;
    const Vec3 omega = state.velocities.head<3>(), v = state.velocities.tail<3>();
    const Mat3 omega_hat = skew(omega), pivot_hat = skew(pivot_);
    if (what & dae::mass) {
      terms.mass = Eigen::MatrixXd::Zero(6, 6);
      terms.mass.topLeftCorner<3, 3>() = inertia_;
      terms.mass.bottomRightCorner<3, 3>() = mass_ * Mat3::Identity();
    }
    if (what & dae::forces) {
      terms.forces.resize(6);
      terms.forces.head<3>() = -omega.cross(inertia_ * omega);
      terms.forces.tail<3>() = hybrid_ ? Vec3(mass_ * gravity_) : Vec3(-mass_ * omega.cross(v) + mass_ * R.transpose() * gravity_);
    }
    if (what & dae::residual) terms.residual = R * pivot_ + state.poses[0].r;
    if (what & dae::jacobian) {
      terms.jacobian.resize(3, 6);
      terms.jacobian.leftCols<3>() = -R * pivot_hat;
      terms.jacobian.rightCols<3>() = hybrid_ ? Mat3::Identity() : R;
    }
    if (what & dae::acceleration_rhs)
      terms.acceleration_rhs = hybrid_ ? Vec3(-R * omega_hat * omega_hat * pivot_) : Vec3(-R * omega_hat * (omega_hat * pivot_ + v));
  }

 private:
  static Mat3 skew(const Vec3& w) {
    Mat3 m;
    m << 0, -w.z(), w.y(), w.z(), 0, -w.x(), -w.y(), w.x(), 0;
    return m;
  }
  bool hybrid_;
  double mass_ = 2.5;
  Mat3 inertia_ = Eigen::Vector3d(0.05, 0.04, 0.012).asDiagonal();
  Vec3 pivot_{-0.3, 0.02, -0.01};  // body coordinates of the joint
  Vec3 gravity_{0.0, 0.0, -9.81};
  std::vector<ConstraintBlock> blocks_{{"pivot", 0, 3}};
};

// One coordinate with q'' = 2 q^3, q(0) = q'(0) = 1: q = 1 / (1 - t) blows up at t = 1.
class BlowUp final : public ForwardDynamics {
 public:
  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    rates = Eigen::VectorXd::Constant(1, 2.0 * std::pow(state.coordinates[0], 3));
  }
  std::size_t free_bodies() const override { return 0; }
  std::size_t joint_coordinates() const override { return 1; }
  State initial_state() const override {
    State state;
    state.coordinates = Eigen::VectorXd::Ones(1);
    state.velocities = Eigen::VectorXd::Ones(1);
    return state;
  }
  void body_motion(const State&, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses.clear();
    twists.clear();
  }
};

struct Plugins {
  std::unique_ptr<Registry> registry = testing::build_tree_registry();
  std::unique_ptr<Group> group;
  explicit Plugins(const std::string& group_name = "SE3") {
    const auto no_options = ConfigDocument::from_string("", "(group options)");
    group = registry->create<Group>(group_name, no_options->root());
  }
  std::unique_ptr<Integrator> integrator(const std::string& name, const std::string& options) const {
    const auto document = ConfigDocument::from_string(options, "integrator-options.toml");
    auto integrator = registry->create<Integrator>(name, document->root());
    document->reject_unused_keys();
    return integrator;
  }
  std::unique_ptr<Integrator> ida(const std::string& options) const {
    const auto document = ConfigDocument::from_string(options, "ida-options.toml");
    auto integrator = registry->create<Integrator>("ida", document->root());
    document->reject_unused_keys();
    return integrator;
  }
};

struct PendulumRun {
  State final_state;
  double largest_violation = 0.0;  // max |g| over the output points
};

PendulumRun integrate(Integrator& integrator, const Group& group, ForwardDynamics& dynamics, double end_time,
                      double step) {
  const StateSpace space(group, dynamics.free_bodies(), dynamics.joint_coordinates());
  PendulumRun run;
  State state = dynamics.initial_state();
  integrator.start(space, state);
  const auto steps = static_cast<int>(std::lround(end_time / step));
  DaeTerms terms;
  for (int k = 0; k < steps; ++k) {
    integrator.step(space, dynamics, state, step);
    if (auto* system = dynamics.constraints()) {
      system->evaluate(state, terms, dae::residual);
      run.largest_violation = std::max(run.largest_violation, terms.residual.norm());
    }
  }
  run.final_state = state;
  return run;
}

std::map<std::string, double> statistics_of(const Integrator& integrator) {
  std::map<std::string, double> map;
  for (const auto& [name, value] : integrator.statistics()) map[name] = value;
  return map;
}

double pendulum_error(const CartesianPendulum& pendulum, const State& state, double end_time) {
  const auto [angle, rate] = pendulum.angle_reference(end_time);
  return (state.coordinates - pendulum.position(angle)).norm() +
         (state.velocities - pendulum.velocity(angle, rate)).norm();
}

// Free body: distance of the final pose and body twist from a reference.
double free_body_distance(const RunSummary& a, const RunSummary& b, const Group& group) {
  const Eigen::VectorXd twist_a = body_twists(group, a.final_state), twist_b = body_twists(group, b.final_state);
  return (a.final_state.poses[0].R - b.final_state.poses[0].R).norm() +
         (a.final_state.poses[0].r - b.final_state.poses[0].r).norm() + (twist_a - twist_b).norm();
}

}  // namespace

TEST_CASE("ida agrees with a converged rkmk reference on a free body and converges with the tolerance",
          "[ida]") {
  for (const char* group : {"SE3", "SO3xR3"}) {
    auto reference_run = load_test_run("free-body.toml", {std::string("group.name=") + group,
                                                          "simulation.step_size=0.000244140625"});
    const RunSummary reference = execute_run(reference_run.run, RunOutput{});
    auto error_at = [&](const std::string& rtol, const std::string& atol, const std::string& step) {
      auto loaded = load_test_run("free-body.toml",
                                  {std::string("group.name=") + group, "integrator.name=ida",
                                   "integrator.relative_tolerance=" + rtol, "integrator.absolute_tolerance=" + atol,
                                   "simulation.step_size=" + step});
      const RunSummary summary = execute_run(loaded.run, RunOutput{});
      const auto statistics = statistics_of(*loaded.run.integrator);
      INFO(group << " rtol " << rtol << " output step " << step);
      CHECK(statistics.at("rebases") >= 2);  // about 3.7 rad of rotation in 1 s, threshold 1 rad
      CHECK(statistics.at("steps") > 10);
      return free_body_distance(summary, reference, *loaded.run.group);
    };
    const double loose = error_at("1e-6", "1e-8", "0.01");
    const double tight = error_at("1e-10", "1e-12", "0.01");
    // Long output steps: IDA re-bases between its internal steps.
    const double long_outputs = error_at("1e-10", "1e-12", "0.5");
    INFO(group << ": errors rtol 1e-6 " << loose << ", rtol 1e-10 " << tight << " (output step 0.5: "
               << long_outputs << ")");
    CHECK(loose < 1e-4);
    CHECK(tight < 1e-7);
    CHECK(tight < loose / 100);
    CHECK(long_outputs < 1e-7);
  }
}

TEST_CASE("ida with both formulations agrees with the angle-coordinate pendulum", "[ida][dae]") {
  Plugins plugins;
  for (const char* formulation : {"ggl", "index1-projection"}) {
    CartesianPendulum pendulum;
    // At the default tolerances (rtol 1e-8) the errors are about 6e-7 (ggl) and 2e-5
    // (index-1: its position drift is projected away, but each projection restarts IDA).
    auto ida = plugins.ida(std::string("formulation = \"") + formulation +
                           "\"\nrelative_tolerance = 1e-10\nabsolute_tolerance = 1e-12");
    const double end_time = 3.0;
    const PendulumRun run = integrate(*ida, *plugins.group, pendulum, end_time, 0.01);
    const double error = pendulum_error(pendulum, run.final_state, end_time);
    INFO(formulation << ": error " << error << ", largest |g| " << run.largest_violation);
    CHECK(error < 1e-6);
    // Output points are IDA's interpolant (ggl) or projected (index1-projection).
    CHECK(run.largest_violation < (formulation == std::string("ggl") ? 1e-7 : 1e-10));
    CHECK_THAT(ida->description(), Contains(formulation == std::string("ggl") ? "GGL" : "index-1"));
  }
}

TEST_CASE("ida agrees with rkmk on a heavy top on both groups, re-basing the chart as it spins", "[ida][dae][heavy]") {
  for (const char* group_name : {"SE3", "SO3xR3"}) {
    Plugins plugins(group_name);
    HeavyTop top(group_name);
    const double end_time = 2.0;
    auto rkmk = plugins.integrator("rkmk", "tableau = \"rk4\"");
    const State reference = integrate(*rkmk, *plugins.group, top, end_time, 1e-4).final_state;
    for (const char* formulation : {"ggl", "index1-projection"}) {
      auto ida = plugins.ida(std::string("formulation = \"") + formulation +
                             "\"\nrelative_tolerance = 1e-10\nabsolute_tolerance = 1e-12");
      const PendulumRun run = integrate(*ida, *plugins.group, top, end_time, 0.02);
      const State& end = run.final_state;
      const double error = (end.poses[0].R - reference.poses[0].R).norm() +
                           (end.poses[0].r - reference.poses[0].r).norm() + (end.velocities - reference.velocities).norm();
      const auto statistics = statistics_of(*ida);
      INFO(group_name << " " << formulation << ": error " << error << ", largest |g| " << run.largest_violation
                      << ", rebases " << statistics.at("rebases") << ", steps " << statistics.at("steps"));
      CHECK(error < (formulation == std::string("ggl") ? 1e-6 : 1e-5));
      CHECK(run.largest_violation < 1e-9);
      if (formulation == std::string("ggl")) CHECK(statistics.at("rebases") >= 5);  // about 18 rad in 2 s
    }
  }
}

TEST_CASE("ida ggl with the pendulum's analytic Newton matrix and with difference quotients agree", "[ida][dae]") {
  // The pendulum gives C, K and P in closed form (cartesian_pendulum.hpp), rigid and with a
  // prescribed rod length (rheonomic: nu != 0).
  Plugins plugins;
  for (const double amplitude : {0.0, 0.2}) {
    CartesianPendulum pendulum;
    pendulum.length_amplitude = amplitude;
    auto run_with = [&](const char* derivatives) {
      auto ida = plugins.ida(std::string("newton_derivatives = \"") + derivatives +
                             "\"\nrelative_tolerance = 1e-10\nabsolute_tolerance = 1e-12");
      const PendulumRun run = integrate(*ida, *plugins.group, pendulum, 3.0, 0.01);
      return std::pair{run.final_state, statistics_of(*ida)};
    };
    const auto [analytic, a] = run_with("analytic");
    const auto [differenced, d] = run_with("finite-differences");
    INFO("amplitude " << amplitude << ": steps " << a.at("steps") << " / " << d.at("steps") << ", Newton iterations "
                      << a.at("newton_iterations") << " / " << d.at("newton_iterations") << ", residuals "
                      << a.at("residual_evaluations") << " / " << d.at("residual_evaluations"));
    CHECK(a.at("analytic_derivatives") == 1.0);
    CHECK(d.at("analytic_derivatives") == 0.0);
    CHECK((analytic.coordinates - differenced.coordinates).norm() + (analytic.velocities - differenced.velocities).norm() <
          1e-8);
    const State reference = pendulum.reference_state(3.0);
    CHECK((analytic.coordinates - reference.coordinates).norm() + (analytic.velocities - reference.velocities).norm() <
          1e-6);
    // The same iteration up to the step sequences of two adaptive runs (a few per cent either
    // way, up to 11 % in a -march=native build, whose fused multiply-adds round differently
    // near these tight tolerances); the difference quotients' residuals are saved. A wrong
    // term in the matrix slows Newton to linear convergence, several times the iterations.
    CHECK(a.at("newton_iterations") <= 1.2 * d.at("newton_iterations"));
    CHECK(a.at("residual_evaluations") < d.at("residual_evaluations"));
  }
}

TEST_CASE("ida ggl keeps the constraint without projection, index-1 without projection drifts", "[ida][dae]") {
  Plugins plugins;
  CartesianPendulum pendulum;
  const double end_time = 10.0;
  auto ggl = plugins.ida("formulation = \"ggl\"\nrelative_tolerance = 1e-6\nabsolute_tolerance = 1e-8");
  const PendulumRun ggl_run = integrate(*ggl, *plugins.group, pendulum, end_time, 0.05);
  auto index1 = plugins.ida(
      "formulation = \"index1-projection\"\nprojection = false\nrelative_tolerance = 1e-6\nabsolute_tolerance = 1e-8");
  const PendulumRun index1_run = integrate(*index1, *plugins.group, pendulum, end_time, 0.05);
  INFO("largest |g|: ggl " << ggl_run.largest_violation << ", index-1 without projection "
                           << index1_run.largest_violation);
  // GGL holds g = 0 at IDA's steps to the Newton tolerance; at output points, which IDA
  // interpolates, |g| is of the order of the local error (the tolerance), without drift.
  CHECK(ggl_run.largest_violation < 5e-6);
  CHECK(index1_run.largest_violation > 100 * ggl_run.largest_violation);
  CHECK(statistics_of(*ggl).at("projections") == 1);  // only the initial state
  CHECK(statistics_of(*index1).at("projections") == 0);
}

TEST_CASE("ida reports its statistics, cumulative over re-initialisations", "[ida]") {
  Plugins plugins;
  CartesianPendulum pendulum;
  auto ida = plugins.ida("formulation = \"index1-projection\"");
  integrate(*ida, *plugins.group, pendulum, 1.0, 0.1);
  auto statistics = statistics_of(*ida);
  for (const char* name : {"steps", "residual_evaluations", "jacobian_evaluations", "newton_iterations",
                           "nonlinear_convergence_failures", "error_test_failures", "rebases", "reinitializations",
                           "projections"})
    CHECK(statistics.count(name) == 1);
  CHECK(statistics.at("projections") == 11);  // the initial state and 10 output points
  CHECK(statistics.at("reinitializations") == 10);
  CHECK(statistics.at("rebases") == 0);  // no free bodies: no chart to re-base
  // Each of the 10 restarted segments takes several steps; a count reset by IDAReInit would
  // show only the last segment's.
  const double steps = statistics.at("steps");
  CHECK(steps > 10 * 5);
  CHECK(statistics.at("newton_iterations") >= steps);
  CHECK(statistics.at("residual_evaluations") > statistics.at("newton_iterations"));

  // A new run starts counting from zero.
  integrate(*ida, *plugins.group, pendulum, 0.1, 0.1);
  CHECK(statistics_of(*ida).at("steps") < steps / 5);
}

TEST_CASE("the run summary carries ida's statistics", "[ida]") {
  auto loaded = load_test_run("free-body.toml", {"integrator.name=ida"});
  const auto directory = std::filesystem::temp_directory_path() / ("liembs-test-ida-" + std::to_string(::getpid()));
  execute_run(loaded.run, RunOutput::into(directory));
  std::ifstream file(directory / "summary.json");
  std::stringstream text;
  text << file.rdbuf();
  std::filesystem::remove_all(directory);
  CHECK_THAT(text.str(), Contains("\"integrator_statistics\"") && Contains("\"error_test_failures\"") &&
                             Contains("\"rebases\"") && Contains("SUNDIALS IDA"));
}

TEST_CASE("ida failures are SimulationErrors naming the time, the step size and the worst constraint",
          "[ida][errors]") {
  Plugins plugins;
  SECTION("forces that become NaN in a constrained system") {
    for (const char* formulation : {"ggl", "index1-projection"}) {
      CartesianPendulum pendulum;
      pendulum.forces_fail_after = 0.537;
      auto ida = plugins.ida(std::string("formulation = \"") + formulation + "\"");
      const StateSpace space(*plugins.group, 0, 2);
      State state = pendulum.initial_state();
      ida->start(space, state);
      try {
        for (int k = 0; k < 100; ++k) {
          ida->step(space, pendulum, state, 0.01);
          REQUIRE(StateSpace::is_finite(state));
        }
        FAIL("no error for NaN forces");
      } catch (const SimulationError& error) {
        const std::string message = error.what();
        INFO(message);
        CHECK_THAT(message, Contains("t = 0.53") && Contains("step size") && Contains("IDA failed") &&
                                Contains("joint 'rod' (|g| = "));
        CHECK(state.time == Approx(0.53));  // the state of the last output point, finite
        CHECK(StateSpace::is_finite(state));
      }
    }
  }
  SECTION("analytic derivatives that throw: the message says the Newton matrix failed, not the residual") {
    CartesianPendulum pendulum;
    pendulum.derivatives_throw_after = 0.25;
    auto ida = plugins.ida("newton_derivatives = \"analytic\"");
    const StateSpace space(*plugins.group, 0, 2);
    State state = pendulum.initial_state();
    ida->start(space, state);
    try {
      for (int k = 0; k < 100; ++k) ida->step(space, pendulum, state, 0.01);
      FAIL("no error for derivatives that throw");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("IDA failed") && Contains("in the Newton matrix (analytic derivatives): pendulum "
                                                             "derivatives unavailable"));
      CHECK_THAT(message, !Contains("in the residual"));
      CHECK(StateSpace::is_finite(state));
    }
  }
  SECTION("a solution that blows up in finite time") {
    BlowUp blow_up;
    auto ida = plugins.ida("max_steps = 2000");
    const StateSpace space(*plugins.group, 0, 1);
    State state = blow_up.initial_state();
    ida->start(space, state);
    try {
      for (int k = 0; k < 20; ++k) ida->step(space, blow_up, state, 0.1);
      FAIL("no error for a finite-time blow-up at t = 1");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("reached t = 0.99") && Contains("step size"));
      CHECK(StateSpace::is_finite(state));
      CHECK(state.time == Approx(0.9));
    }
  }
}

TEST_CASE("ida options are checked", "[ida][config]") {
  Plugins plugins;
  auto error_of = [&](const std::string& options) {
    try {
      plugins.ida(options);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("formulation = \"index3\""), Contains("ggl, index1-projection"));
  CHECK_THAT(error_of("max_order = 6"), Contains("max_order"));
  CHECK_THAT(error_of("relative_tolerance = 0"), Contains("relative_tolerance"));
  CHECK_THAT(error_of("rebase_threshold = 7"), Contains("rebase_threshold"));
  CHECK_THAT(error_of("tolerance = 1e-6"), Contains("tolerance"));
  CHECK_THAT(error_of("newton_derivatives = \"exact\""), Contains("newton_derivatives") && Contains("analytic"));
  CHECK_THAT(error_of("newton_derivatives = 1"), Contains("newton_derivatives"));
  CHECK(error_of("formulation = \"ggl\"\nprojection = true\nmax_order = 3\nmax_steps = 10\nrebase_threshold = 0.5") ==
        "no error");
}
