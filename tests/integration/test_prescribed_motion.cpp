// Prescribed joint motion in runs (hybrid dynamics, docs/prescribed-motion.md): joints that
// follow q(t) from [model.prescribed] while the rest of the tree moves freely.
//   (a) at random states, the reported forces are the inverse dynamics (RNEA) of the full
//       accelerations, the free rows of which need no force, and ABA with those forces gives
//       the accelerations back (every representation, aba and crba-cholesky, fixed and
//       floating base, multi-DoF joints);
//   (b) a double pendulum whose pivot follows A sin(w t) against the reduced ODE of its free
//       elbow written out here (Lagrange's equations), integrated independently;
//   (c) with every joint prescribed, the trajectory's force columns are pure inverse dynamics;
//   (d) nothing prescribed is the ordinary run, and a joint held at a constant equals the
//       model with that joint fixed;
//   (e) RK4 keeps order 4 on (b); the energy balance E(t) - E(0) = W(t) holds;
//   (f) the error paths.
#include "../support/cli_process.hpp"
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/error.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/representation.hpp>
#include <liembs/sim/prescribed_motion.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace liembs;

namespace {

// The registry outlives the run (the components' code lives in the plugin libraries).
struct TextRun {
  std::unique_ptr<Registry> registry = std::make_unique<Registry>();
  Run run;
};

TextRun load_text(const std::string& text, const std::vector<std::string>& overrides = {},
                  RunPurpose purpose = RunPurpose::simulate) {
  TextRun loaded;
  loaded.registry->append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  auto document = ConfigDocument::from_string(text, "prescribed.toml");
  for (const auto& assignment : overrides) document->set_override(assignment);
  loaded.run = load_run(document, *loaded.registry, purpose);
  return loaded;
}

// A trajectory.csv: the header's names and the rows' numbers.
struct Trajectory {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  std::size_t column(const std::string& name) const {
    const auto found = std::find(names.begin(), names.end(), name);
    REQUIRE(found != names.end());
    return static_cast<std::size_t>(found - names.begin());
  }
};

Trajectory read_trajectory(const std::filesystem::path& file) {
  cli_test::CsvTable table = cli_test::parse_csv(cli_test::read_file(file));
  for (const auto& row : table.rows) REQUIRE(row.size() == table.names.size());
  return {std::move(table.names), std::move(table.rows)};
}

PrescribedMotion& prescribed_of(Run& run) {
  PrescribedMotion* prescribed = run.dynamics->capabilities().prescribed_motion;
  REQUIRE(prescribed != nullptr);
  return *prescribed;
}

// --- (b), (e): a planar double pendulum hanging along -y, both joints about z ---
struct Pendulum {
  double m1 = 1.2, c1 = 0.3, l1 = 0.6, I1 = 0.04;  // link 1: mass, COM distance, length, inertia about its COM
  double m2 = 0.8, c2 = 0.35, I2 = 0.03;
  double g = 9.81;
  double amplitude = 0.7, frequency = 2.5;         // shoulder: A sin(w t)
  double elbow_start = 0.4, elbow_rate_start = -0.5;

  double q1(double t) const { return amplitude * std::sin(frequency * t); }
  double q1d(double t) const { return amplitude * frequency * std::cos(frequency * t); }
  double q1dd(double t) const { return -amplitude * frequency * frequency * std::sin(frequency * t); }

  // Lagrange's equations in relative angles from the downward vertical.
  void matrices(double t1, double t2, double t1d, double t2d, double& M11, double& M12, double& M22, double& b1,
                double& b2) const {
    const double k = m2 * l1 * c2;
    M11 = I1 + I2 + m1 * c1 * c1 + m2 * (l1 * l1 + c2 * c2) + 2 * k * std::cos(t2);
    M12 = I2 + m2 * c2 * c2 + k * std::cos(t2);
    M22 = I2 + m2 * c2 * c2;
    b1 = -k * std::sin(t2) * (2 * t1d * t2d + t2d * t2d) + (m1 * c1 + m2 * l1) * g * std::sin(t1) +
         m2 * c2 * g * std::sin(t1 + t2);
    b2 = k * std::sin(t2) * t1d * t1d + m2 * c2 * g * std::sin(t1 + t2);
  }
  // The reduced ODE of the free elbow: q2'' = -(M21 q1'' + b2) / M22.
  double elbow_acceleration(double t, double q2, double q2d) const {
    double M11, M12, M22, b1, b2;
    matrices(q1(t), q2, q1d(t), q2d, M11, M12, M22, b1, b2);
    return -(M12 * q1dd(t) + b2) / M22;
  }
  double shoulder_torque(double t, double q2, double q2d) const {
    double M11, M12, M22, b1, b2;
    matrices(q1(t), q2, q1d(t), q2d, M11, M12, M22, b1, b2);
    return M11 * q1dd(t) + M12 * elbow_acceleration(t, q2, q2d) + b1;
  }
  // (q2, q2') at `end` by classical RK4 with n steps, written here (independent of the plugins).
  std::pair<double, double> reference(double end, int n) const {
    double q = elbow_start, v = elbow_rate_start, t = 0.0;
    const double h = end / n;
    for (int i = 0; i < n; ++i) {
      const double k1q = v, k1v = elbow_acceleration(t, q, v);
      const double k2q = v + 0.5 * h * k1v, k2v = elbow_acceleration(t + 0.5 * h, q + 0.5 * h * k1q, k2q);
      const double k3q = v + 0.5 * h * k2v, k3v = elbow_acceleration(t + 0.5 * h, q + 0.5 * h * k2q, k3q);
      const double k4q = v + h * k3v, k4v = elbow_acceleration(t + h, q + h * k3q, k4q);
      q += h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q);
      v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
      t += h;
    }
    return {q, v};
  }

  std::string toml(const std::string& prescribed = "") const {
    std::ostringstream s;
    s.precision(17);
    s << "[model]\ngravity = [0.0, " << -g << ", 0.0]\n"
      << "[[model.bodies]]\nname = \"upper\"\nmass = " << m1 << "\ncenter_of_mass = [0.0, " << -c1
      << ", 0.0]\ninertia_diagonal = [" << I1 << ", 0.001, " << I1 << "]\n"
      << "[[model.bodies]]\nname = \"lower\"\nmass = " << m2 << "\ncenter_of_mass = [0.0, " << -(l1 + c2)
      << ", 0.0]\ninertia_diagonal = [" << I2 << ", 0.001, " << I2 << "]\n"
      << "[[model.joints]]\nname = \"shoulder\"\ntype = \"revolute\"\nparent = \"world\"\nchild = \"upper\"\n"
      << "axis = [0.0, 0.0, 1.0]\n"
      << "[[model.joints]]\nname = \"elbow\"\ntype = \"revolute\"\nparent = \"upper\"\nchild = \"lower\"\n"
      << "axis = [0.0, 0.0, 1.0]\npoint = [0.0, " << -l1 << ", 0.0]\ninitial_position = " << elbow_start
      << "\ninitial_velocity = " << elbow_rate_start << "\n"
      << "[model.prescribed]\n"
      << (prescribed.empty() ? "shoulder = \"" + std::to_string(amplitude) + " * sin(" + std::to_string(frequency) + " * t)\"\n"
                             : prescribed)
      << "[group]\nname = \"SE3\"\n[integrator]\nname = \"rkmk\"\ntableau = \"rk4\"\n"
      << "[simulation]\nend_time = 2.0\nstep_size = 1e-3\n";
    return s.str();
  }
};

const std::vector<std::string> representations{"body-fixed", "spatial", "hybrid", "mixed"};

// The elbow's (q, q') at the end of a run, and the summary.
struct PendulumRun {
  RunSummary summary;
  double q2 = 0.0, q2d = 0.0;
  double shoulder_torque = 0.0;  // reported at the end
};

PendulumRun run_pendulum(const Pendulum& pendulum, const std::vector<std::string>& overrides) {
  TextRun loaded = load_text(pendulum.toml(), overrides);
  PendulumRun result;
  result.summary = execute_run(loaded.run, RunOutput{});
  const State& end = result.summary.final_state;
  result.q2 = end.coordinates(1);
  result.q2d = end.velocities(1);
  Eigen::VectorXd forces, rates;
  prescribed_of(loaded.run).prescribed_forces(end, forces, rates);
  REQUIRE(forces.size() == 1);
  result.shoulder_torque = forces(0);
  return result;
}

}  // namespace

TEST_CASE("prescribed pivot: the free elbow follows the reduced ODE, the pivot torque is Lagrange's", "[prescribed]") {
  const Pendulum pendulum;
  const auto [q2, q2d] = pendulum.reference(2.0, 20000);
  for (const std::string algorithm : {"aba", "crba-cholesky"})
    for (const auto& representation : representations) {
      CAPTURE(algorithm, representation);
      const PendulumRun run =
          run_pendulum(pendulum, {"algorithm.name=" + algorithm, "representation.name=" + representation});
      CHECK(run.q2 == Approx(q2).margin(1e-9));
      CHECK(run.q2d == Approx(q2d).margin(1e-8));
      // The prescribed coordinate of the final state is q(t) itself, not integrated (an
      // integrated one would be off by about 1e-9; q' is the expression's forward-mode
      // derivative, equal to the closed form up to rounding).
      CHECK(run.summary.final_state.coordinates(0) == pendulum.q1(2.0));
      CHECK(run.summary.final_state.velocities(0) == Approx(pendulum.q1d(2.0)).epsilon(4e-16).margin(1e-16));
      CHECK(run.shoulder_torque == Approx(pendulum.shoulder_torque(2.0, run.q2, run.q2d)).margin(1e-9));
      CHECK(run.summary.prescribed_coordinates == std::vector<std::string>{"shoulder"});
      // Energy is pumped in and out by the pivot: not conserved, but balanced by its work
      // (the trapezoidal rule's O(h^2) error).
      CHECK(run.summary.energy_drift_max > 1e-2);
      CHECK(std::abs(run.summary.prescribed_work) > 1e-3);
      CHECK(run.summary.energy_balance_error_max < 1e-5);
    }
}

TEST_CASE("prescribed pivot: RK4 keeps order 4, heun order 2", "[prescribed]") {
  const Pendulum pendulum;
  const auto [q2, q2d] = pendulum.reference(2.0, 40000);
  for (const auto& [tableau, order] : std::vector<std::pair<std::string, double>>{{"rk4", 4.0}, {"heun", 2.0}}) {
    std::vector<double> errors;
    for (const double h : {0.04, 0.02, 0.01}) {
      const PendulumRun run = run_pendulum(pendulum, {"integrator.tableau=" + tableau, "simulation.step_size=" + std::to_string(h)});
      errors.push_back(std::hypot(run.q2 - q2, run.q2d - q2d));
    }
    for (std::size_t k = 0; k + 1 < errors.size(); ++k) {
      const double observed = std::log2(errors[k] / errors[k + 1]);
      CAPTURE(tableau, errors, observed);
      CHECK(observed == Approx(order).margin(0.3));
    }
  }
}

TEST_CASE("prescribed motion at random states: forces are RNEA of the accelerations, ABA returns them", "[prescribed]") {
  // A floating base with a branched tree of revolute, prismatic, universal and spherical
  // joints; some prescribed (every coordinate of a multi-DoF joint has its own q(t)).
  const std::string model = R"toml(
[model]
gravity = [0.0, 0.0, -9.81]
[[model.bodies]]
name = "base"
mass = 3.0
inertia_diagonal = [0.1, 0.12, 0.15]
position = [0.1, -0.2, 1.0]
rotation_vector = [0.2, 0.1, -0.3]
angular_velocity = [0.3, -0.2, 0.5]
linear_velocity = [0.4, 0.1, -0.2]
[[model.bodies]]
name = "a"
mass = 0.7
center_of_mass = [0.2, 0.0, 0.0]
inertia_diagonal = [0.01, 0.02, 0.025]
position = [0.3, 0.0, 1.0]
[[model.bodies]]
name = "b"
mass = 0.5
center_of_mass = [0.0, 0.1, 0.0]
inertia_diagonal = [0.01, 0.012, 0.015]
position = [0.6, 0.0, 1.0]
[[model.bodies]]
name = "c"
mass = 0.6
center_of_mass = [0.0, 0.0, -0.2]
inertia_diagonal = [0.02, 0.02, 0.01]
position = [0.0, 0.3, 1.0]
[[model.bodies]]
name = "d"
mass = 0.4
center_of_mass = [0.1, 0.1, 0.0]
inertia_diagonal = [0.01, 0.011, 0.012]
position = [0.0, 0.6, 1.0]
[[model.joints]]
name = "hip"
type = "revolute"
parent = "base"
child = "a"
axis = [0.0, 1.0, 0.2]
point = [0.3, 0.0, 1.0]
[[model.joints]]
name = "slide"
type = "prismatic"
parent = "a"
child = "b"
axis = [1.0, 0.1, 0.0]
[[model.joints]]
name = "ball"
type = "spherical"
parent = "base"
child = "c"
point = [0.0, 0.3, 1.0]
[[model.joints]]
name = "cross"
type = "universal"
parent = "c"
child = "d"
axes = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
point = [0.0, 0.6, 1.0]
[representation]
name = "body-fixed"
[group]
name = "SE3"
[integrator]
name = "rkmk"
[simulation]
end_time = 0.1
step_size = 0.01
[model.prescribed]
hip = "0.3*sin(2*t) + 0.1"
ball = ["0.2*cos(t)", "t^2/4", "-0.1*sin(3*t)"]
)toml";
  // The expressions above and their derivatives, written out: hip, ball[0..2] (tree order).
  auto prescribed_values = [](double t, double q[4], double qd[4], double qdd[4]) {
    q[0] = 0.3 * std::sin(2 * t) + 0.1, qd[0] = 0.6 * std::cos(2 * t), qdd[0] = -1.2 * std::sin(2 * t);
    q[1] = 0.2 * std::cos(t), qd[1] = -0.2 * std::sin(t), qdd[1] = -0.2 * std::cos(t);
    q[2] = t * t / 4, qd[2] = t / 2, qdd[2] = 0.5;
    q[3] = -0.1 * std::sin(3 * t), qd[3] = -0.3 * std::cos(3 * t), qdd[3] = 0.9 * std::sin(3 * t);
  };
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (const bool floating : {true, false})
    for (const std::string algorithm : {"aba", "crba-cholesky"})
      for (const auto& representation : representations) {
        CAPTURE(floating, algorithm, representation);
        std::vector<std::string> overrides{"algorithm.name=" + algorithm, "representation.name=" + representation};
        std::string text = model;
        if (!floating) {  // the base welded to the world
          text += "[[model.joints]]\nname = \"weld\"\ntype = \"fixed\"\nparent = \"world\"\nchild = \"base\"\n";
        }
        TextRun loaded = load_text(text, overrides);
        Run& run = loaded.run;
        PrescribedMotion& prescribed = prescribed_of(run);
        REQUIRE(prescribed.prescribed_coordinates() == std::vector<std::string>{"hip", "ball[0]", "ball[1]", "ball[2]"});
        auto tree = std::make_shared<const KinematicTree>(compile_tree(*run.model));
        auto dynamics = run.representation->bind_tree(tree);
        const int n = tree->dof(), nv = tree->velocity_dimension(), base = floating ? 6 : 0;
        // Tree nodes of the prescribed coordinates: hip, then ball's three.
        std::vector<int> nodes;
        for (const auto& name : prescribed.prescribed_coordinates())
          nodes.push_back(static_cast<int>(std::find(tree->dof_names.begin(), tree->dof_names.end(), name) -
                                           tree->dof_names.begin()));
        for (int sample = 0; sample < 5; ++sample) {
          State state = run.dynamics->initial_state();
          state.time = 0.3 + sample * 0.37;
          for (Eigen::Index i = 0; i < state.coordinates.size(); ++i) state.coordinates(i) = uniform(random);
          for (Eigen::Index i = 0; i < state.velocities.size(); ++i) state.velocities(i) = uniform(random);
          if (floating) state.poses.front().r += Vec3(uniform(random), uniform(random), uniform(random));
          Eigen::VectorXd rates, forces, prescribed_rates;
          run.dynamics->velocity_rates(state, rates);
          prescribed.prescribed_forces(state, forces, prescribed_rates);
          // The tree state with the prescribed coordinates from q(t) (the state's own
          // entries for them are random and must be ignored).
          double q[4], qd[4], qdd[4];
          prescribed_values(state.time, q, qd, qdd);
          TreeState tree_state;
          if (floating) {
            tree_state.base = state.poses.front();
            tree_state.base_twist = state.velocities.head<6>();  // SE3: the body twist
          }
          tree_state.q = state.coordinates;
          tree_state.qd = state.velocities.tail(n);
          for (int k = 0; k < 4; ++k) {
            tree_state.q(nodes[k]) = q[k];
            tree_state.qd(nodes[k]) = qd[k];
            CHECK(rates(base + nodes[k]) == Approx(qdd[k]).margin(1e-12));
            CHECK(prescribed_rates(k) == Approx(qd[k]).margin(1e-14));
          }
          Eigen::VectorXd tau;
          dynamics->inverse_dynamics(tree_state, rates, tau);
          Eigen::VectorXd expected = Eigen::VectorXd::Zero(nv);  // free rows: no force
          for (int k = 0; k < 4; ++k) expected(base + nodes[k]) = forces(k);
          const double scale = 1.0 + tau.cwiseAbs().maxCoeff();
          CHECK((tau - expected).cwiseAbs().maxCoeff() < 1e-10 * scale);
          Eigen::VectorXd back;
          dynamics->forward_dynamics(tree_state, expected, back);
          CHECK((back - rates).cwiseAbs().maxCoeff() < 1e-9 * (1.0 + rates.cwiseAbs().maxCoeff()));
          // The poses the run reports use q(t) too.
          std::vector<Pose> poses, expected_poses;
          std::vector<Vec6> twists, expected_twists;
          run.dynamics->body_motion(state, poses, twists);
          BodyKinematics kinematics;
          dynamics->body_kinematics(tree_state, Eigen::VectorXd::Zero(nv), kinematics);
          for (std::size_t b = 0; b < poses.size(); ++b) {
            CHECK((poses[b].r - kinematics.poses[b].r).norm() < 1e-12);
            CHECK((twists[b] - kinematics.twists[b]).norm() < 1e-12);
          }
        }
        // A short run goes through.
        const RunSummary summary = execute_run(run, RunOutput{});
        CHECK(summary.steps == 10);
      }
}

TEST_CASE("every joint prescribed: the trajectory's force columns are inverse dynamics", "[prescribed]") {
  const Pendulum pendulum;
  const std::string both = "shoulder = \"0.7 * sin(2.5 * t)\"\nelbow = \"0.4 + 0.3 * t - 0.2 * cos(3 * t)\"\n";
  auto text = pendulum.toml(both);
  // The elbow's initial values would conflict with its prescribed motion: drop them.
  for (const std::string key : {"initial_position", "initial_velocity"}) {
    const auto at = text.find(key);
    text.erase(at, text.find('\n', at) - at + 1);
  }
  const auto out = std::filesystem::temp_directory_path() / ("liembs-prescribed-" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  for (const std::string algorithm : {"aba", "crba-cholesky"}) {
    TextRun loaded = load_text(text, {"algorithm.name=" + algorithm, "simulation.output_every=50"});
    RunOutput output;
    output.directory = out;
    const RunSummary summary = execute_run(loaded.run, output);
    const Trajectory table = read_trajectory(out / "trajectory.csv");
    const std::size_t time = table.column("time"), shoulder = table.column("tau.shoulder"),
                      elbow = table.column("tau.elbow");
    REQUIRE(table.rows.size() == 41);
    auto tree = std::make_shared<const KinematicTree>(compile_tree(*loaded.run.model));
    auto dynamics = loaded.run.representation->bind_tree(tree);
    for (const auto& row : table.rows) {
      const double t = row[time];
      TreeState state;
      state.q = Eigen::Vector2d(pendulum.q1(t), 0.4 + 0.3 * t - 0.2 * std::cos(3 * t));
      state.qd = Eigen::Vector2d(pendulum.q1d(t), 0.3 + 0.6 * std::sin(3 * t));
      const Eigen::Vector2d acceleration(pendulum.q1dd(t), 1.8 * std::cos(3 * t));
      Eigen::VectorXd tau;
      dynamics->inverse_dynamics(state, acceleration, tau);
      CHECK(row[shoulder] == Approx(tau(0)).margin(1e-10));
      CHECK(row[elbow] == Approx(tau(1)).margin(1e-10));
      // Lagrange's form of the same torques.
      double M11, M12, M22, b1, b2;
      pendulum.matrices(state.q(0), state.q(1), state.qd(0), state.qd(1), M11, M12, M22, b1, b2);
      CHECK(row[shoulder] == Approx(M11 * acceleration(0) + M12 * acceleration(1) + b1).margin(1e-10));
      CHECK(row[elbow] == Approx(M12 * acceleration(0) + M22 * acceleration(1) + b2).margin(1e-10));
    }
    CHECK(summary.energy_balance_error_max < 1e-5);
    std::ifstream json(out / "summary.json");
    const std::string content((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
    CHECK(content.find("\"prescribed_joints\": [\n    \"shoulder\",\n    \"elbow\"\n  ]") != std::string::npos);
    CHECK(content.find("\"energy_balance_error_max_relative\"") != std::string::npos);
  }
  std::filesystem::remove_all(out);
}

TEST_CASE("nothing prescribed is the ordinary run, a joint held constant is a fixed joint", "[prescribed]") {
  const Pendulum pendulum;
  // An empty [model.prescribed] table: bit for bit the run without it.
  std::string ordinary = pendulum.toml("");
  const auto table_at = ordinary.find("[model.prescribed]");
  ordinary.erase(table_at, ordinary.find('\n', ordinary.find('\n', table_at) + 1) - table_at + 1);
  REQUIRE(ordinary.find("prescribed") == std::string::npos);
  std::string empty_table = ordinary;
  empty_table.insert(empty_table.find("[group]"), "[model.prescribed]\n");
  for (const std::string algorithm : {"aba", "crba-cholesky"}) {
    TextRun a = load_text(ordinary, {"algorithm.name=" + algorithm});
    TextRun b = load_text(empty_table, {"algorithm.name=" + algorithm});
    CHECK(b.run.dynamics->capabilities().prescribed_motion != nullptr);  // binds, prescribes nothing
    const RunSummary x = execute_run(a.run, RunOutput{}), y = execute_run(b.run, RunOutput{});
    CHECK(x.final_state.coordinates == y.final_state.coordinates);
    CHECK(x.final_state.velocities == y.final_state.velocities);
    CHECK(y.prescribed_coordinates.empty());
  }
  // The elbow held at 0 by a prescribed constant moves the pendulum as one rigid body on the
  // shoulder, which here is free from 0.3 rad: the model with the elbow fixed.
  std::string held = ordinary;
  for (const std::string key : {"initial_position", "initial_velocity"}) {
    const auto at = held.find(key);
    held.erase(at, held.find('\n', at) - at + 1);
  }
  held.insert(held.find("[group]"), "[model.initial_position]\nshoulder = 0.3\n");
  std::string fixed = held;
  held.insert(held.find("[group]"), "[model.prescribed]\nelbow = 0.0\n");
  const auto elbow_at = fixed.find("name = \"elbow\"");
  const auto type_at = fixed.find("type = \"revolute\"", elbow_at);
  fixed.replace(type_at, std::string("type = \"revolute\"").size(), "type = \"fixed\"");
  const auto axis_at = fixed.find("axis = ", elbow_at);
  fixed.erase(axis_at, fixed.find("[model.initial_position]") - axis_at);  // axis and point
  for (const std::string algorithm : {"aba", "crba-cholesky"}) {
    CAPTURE(algorithm);
    TextRun a = load_text(held, {"algorithm.name=" + algorithm});
    TextRun b = load_text(fixed, {"algorithm.name=" + algorithm});
    const RunSummary x = execute_run(a.run, RunOutput{}), y = execute_run(b.run, RunOutput{});
    CHECK(x.final_state.coordinates(1) == 0.0);
    CHECK(x.final_state.coordinates(0) == Approx(y.final_state.coordinates(0)).margin(1e-11));
    CHECK(x.final_state.velocities(0) == Approx(y.final_state.velocities(0)).margin(1e-10));
    // A held joint does no work: the energy is conserved as for the fixed joint.
    CHECK(x.prescribed_work == Approx(0.0).margin(1e-12));
    CHECK(x.energy_drift_max < 1e-9);
  }
}

TEST_CASE("prescribed motion: errors name the file, the key and the joint", "[prescribed]") {
  const Pendulum pendulum;
  const std::string text = pendulum.toml();
  auto message_of = [&](const std::vector<std::string>& overrides, RunPurpose purpose = RunPurpose::simulate) {
    try {
      load_text(text, overrides, purpose);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  using Catch::Matchers::Contains;
  CHECK_THAT(message_of({"model.prescribed.elbo=sin(t)"}),
             Contains("prescribed.toml") && Contains("model.prescribed.elbo") && Contains("unknown joint 'elbo'") &&
                 Contains("did you mean 'elbow'?"));
  CHECK_THAT(message_of({"model.prescribed.shoulder=sin(2*)"}),
             Contains("model.prescribed.shoulder") && Contains("cannot read the expression \"sin(2*)\""));
  CHECK_THAT(message_of({"model.prescribed.shoulder=sinus(t)"}), Contains("model.prescribed.shoulder"));
  CHECK_THAT(message_of({"model.prescribed.shoulder=true"}), Contains("model.prescribed.shoulder"));
  CHECK_THAT(message_of({"model.prescribed.elbow=0.1"}),
             Contains("model.prescribed.elbow") && Contains("joint 'elbow'") && Contains("initial_position"));
  CHECK_THAT(message_of({"model.prescribed.shoulder=[\"t\", \"t\"]"}),
             Contains("joint 'shoulder'") && Contains("expected 1 expression(s)"));
  CHECK_THAT(message_of({"algorithm.name=rnea"}, RunPurpose::evaluate),
             Contains("model.prescribed") && Contains("liembs eval"));
  CHECK_THAT(message_of({"algorithm.name=newton-euler"}),
             Contains("algorithm 'newton-euler'") && Contains("does not support prescribed joint motion"));
  // A multi-DoF joint needs one expression per coordinate.
  CHECK_THAT(message_of({"model.joints.0.type=universal", "model.joints.0.axes=[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]"}),
             Contains("model.prescribed.shoulder") && Contains("joint 'shoulder'") && Contains("2 coordinates"));
  // Non-finite values at run time stop the run with the joint, the expression and the time.
  {
    TextRun loaded = load_text(text, {"model.prescribed.shoulder=sqrt(0.5 - t)"});
    try {
      execute_run(loaded.run, RunOutput{});
      FAIL("no error");
    } catch (const SimulationError& error) {
      CHECK_THAT(error.what(), Contains("joint 'shoulder'") && Contains("sqrt(0.5 - t)") && Contains("not finite at t ="));
    }
  }
  // Closed loops are refused.
  {
    Registry registry;
    registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
    auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/four-bar/planar.toml");
    document->set_override("model.prescribed.B=t");
    CHECK_THROWS_WITH(load_run(document, registry), Contains("planar.toml") && Contains("closed loops"));
  }
}

TEST_CASE("aerial manipulator with prescribed arms: momentum conserved without external forces", "[prescribed]") {
  // configs/paper-003/aerial-manipulator-hybrid.toml in free fall with the thrust off, i.e.
  // in a frame without gravity: the prescribed joints' torques are internal, so the total
  // linear and angular momentum stay those of the start while the base turns and moves in
  // reaction to the arms, and the energy changes by exactly their work.
  for (const std::string algorithm : {"aba", "crba-cholesky"}) {
    CAPTURE(algorithm);
    Registry registry;
    registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
    auto document =
        ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-003/aerial-manipulator-hybrid.toml");
    // q2 starts moving (the arms carry momentum at t = 0, the energy scale is not zero).
    for (const std::string& assignment :
         std::vector<std::string>{"model.gravity=[0.0, 0.0, 0.0]", "model.loads.0.force=[0.0, 0.0, 0.0]",
                                  "model.prescribed.q2=0.6*sin(2*t)", "simulation.end_time=1.5",
                                  "algorithm.name=" + algorithm})
      document->set_override(assignment);
    Run run = load_run(document, registry);
    double largest_momentum_change = 0.0, largest_base_turn = 0.0, initial_momentum = 0.0;
    Vec3 angular0 = Vec3::Zero(), linear0 = Vec3::Zero();
    RunOutput output;
    output.observer = [&](const RunSample& sample) {
      if (sample.time == 0.0) {
        angular0 = sample.invariants.angular_momentum;
        linear0 = sample.invariants.linear_momentum;
        initial_momentum = angular0.norm() + linear0.norm();
      }
      largest_momentum_change = std::max({largest_momentum_change, (sample.invariants.angular_momentum - angular0).norm(),
                                          (sample.invariants.linear_momentum - linear0).norm()});
      largest_base_turn = std::max(largest_base_turn, Eigen::AngleAxisd(sample.poses.front().R).angle());
    };
    const RunSummary summary = execute_run(run, output);
    CHECK(summary.prescribed_coordinates == std::vector<std::string>{"q2", "q3", "q4", "q5"});  // depth-first, file order (docs/user-guide.md "Joint order")
    CHECK(initial_momentum > 1e-2);
    CHECK(largest_momentum_change < 1e-9 * initial_momentum);
    CHECK(largest_base_turn > 1e-2);       // while the base does react
    CHECK(summary.energy_drift_max > 1e-3);
    CHECK(summary.energy_balance_error_max < 1e-5);
  }
}

TEST_CASE("prescribed motion on every base parameterization without internal constraints", "[prescribed]") {
  // The aerial manipulator in hover: the free base ends in the same pose on SE3, SO3xR3 and
  // Euler angles; Euler parameters (a normalization constraint, a DAE) are refused.
  std::vector<Pose> reference;
  for (const std::string group : {"SE3", "SO3xR3", "euler-angles", "euler-parameters"}) {
    CAPTURE(group);
    Registry registry;
    registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
    auto document =
        ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-003/aerial-manipulator-hybrid.toml");
    document->set_override("group.name=" + group);
    document->set_override("simulation.end_time=1.0");
    if (group == "euler-parameters") {
      CHECK_THROWS_WITH(load_run(document, registry),
                        Catch::Matchers::Contains("group 'euler-parameters'") &&
                            Catch::Matchers::Contains("without internal constraints"));
      continue;
    }
    Run run = load_run(document, registry);
    const RunSummary summary = execute_run(run, RunOutput{});
    std::vector<Pose> poses;
    std::vector<Vec6> twists;
    run.dynamics->body_motion(summary.final_state, poses, twists);
    if (reference.empty()) {
      reference = poses;
      CHECK(poses.front().r.norm() > 1e-5);  // the base moved
      continue;
    }
    for (std::size_t b = 0; b < poses.size(); ++b) {
      CHECK((poses[b].r - reference[b].r).norm() < 1e-9);
      CHECK((poses[b].R - reference[b].R).norm() < 1e-9);
    }
  }
}
