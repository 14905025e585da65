// Linearization of a tree about a state (liembs/host/linearization.hpp): A and B against
// central differences of f on the group in every representation (a fixed-base revolute-
// prismatic chain with gravity and loads, a floating-base arm with and without gravity) at
// random states with nonzero velocities; the base rows of f against differences of the
// logarithm; B = [0; M^-1] with M from CRBA; the central-difference fallback of a
// representation without derivatives agrees with the analytic A and B; a pendulum's
// eigenvalues in closed form at the bottom and the top; --at's integration; bad times and
// non-tree runs rejected.
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/plugin/representation.hpp>
#include <liembs/host/linearization.hpp>
#include <liembs/host/run.hpp>

#include <catch2/catch.hpp>

#include "../test_support.hpp"

#include <Eigen/Eigenvalues>

#include <cmath>
#include <iomanip>
#include <sstream>
#include <random>

using namespace liembs;
using namespace liembs::testing;
using Catch::Matchers::Contains;

namespace {

const std::vector<std::string> representations{"body-fixed", "spatial", "hybrid", "mixed"};

// A random state of the run's tree with nonzero velocities (and a turned, moved base).
TreeState random_state(const KinematicTree& tree, std::mt19937& random) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  const auto vector = [&](int n) {
    Eigen::VectorXd v(n);
    for (int i = 0; i < n; ++i) v(i) = value(random);
    return v;
  };
  TreeState state;
  state.q = 0.5 * vector(tree.dof());
  state.qd = vector(tree.dof());
  if (tree.floating_base) {
    state.base = se3::exp(Vec6(vector(6)));
    state.base_twist = Vec6(vector(6));
  }
  return state;
}

// Central differences of tree_state_rates in every state and input direction.
void difference(TreeDynamics& dynamics, const TreeState& state, const Eigen::VectorXd& force, Eigen::MatrixXd& A,
                Eigen::MatrixXd& B) {
  const int nv = dynamics.tree().velocity_dimension();
  const double h = 1e-5;
  A.resize(2 * nv, 2 * nv);
  B.resize(2 * nv, nv);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(2 * nv);
  for (int c = 0; c < 2 * nv; ++c) {
    const Eigen::VectorXd step = h * Eigen::VectorXd::Unit(2 * nv, c);
    A.col(c) = (tree_state_rates(dynamics, state, step, force) - tree_state_rates(dynamics, state, -step, force)) / (2 * h);
  }
  for (int c = 0; c < nv; ++c) {
    const Eigen::VectorXd step = h * Eigen::VectorXd::Unit(nv, c);
    B.col(c) = (tree_state_rates(dynamics, state, zero, force + step) -
                tree_state_rates(dynamics, state, zero, force - step)) / (2 * h);
  }
}

double relative_difference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

// Checks A and B of one run file in every representation at random states.
void check_against_differences(const std::string& file, const std::vector<std::string>& overrides) {
  std::mt19937 random(7);
  for (const auto& name : representations) {
    INFO(file << ", representation " << name);
    auto list = overrides;
    list.push_back("representation.name=" + name);
    LoadedRun loaded = load_test_run(file, list);
    auto tree = std::make_shared<const KinematicTree>(compile_tree(*loaded.run.model, true));
    auto dynamics = loaded.run.representation->bind_tree(tree);
    auto derivatives = loaded.run.representation->bind_derivatives(tree);
    const int nv = tree->velocity_dimension();
    for (int trial = 0; trial < 3; ++trial) {
      const TreeState state = random_state(*tree, random);
      Eigen::VectorXd force = Eigen::VectorXd::Zero(nv);
      if (trial == 2) force = Eigen::VectorXd::Random(nv);
      const Linearization linearization = linearize_tree(*dynamics, derivatives.get(), state, force);
      CHECK(linearization.method == "analytic");
      REQUIRE(linearization.A.rows() == 2 * nv);
      REQUIRE(linearization.state_names.size() == static_cast<std::size_t>(2 * nv));
      REQUIRE(linearization.input_names.size() == static_cast<std::size_t>(nv));
      Eigen::MatrixXd A, B;
      difference(*dynamics, state, force, A, B);
      CHECK(relative_difference(linearization.A, A) < 1e-7);
      CHECK(relative_difference(linearization.B, B) < 1e-7);
      // B = [0; M^-1], M from CRBA.
      Eigen::MatrixXd mass;
      dynamics->mass_matrix(state, mass);
      CHECK(linearization.B.topRows(nv).isZero(0.0));
      CHECK(relative_difference(linearization.B.bottomRows(nv) * mass, Eigen::MatrixXd::Identity(nv, nv)) < 1e-10);
      // The configuration rates of f on the group: delta' from differences of
      // log(exp(delta) exp(s u)) in s at a perturbed delta.
      if (tree->floating_base) {
        Eigen::VectorXd dx = Eigen::VectorXd::Zero(2 * nv);
        dx.head<6>() << 0.03, -0.02, 0.05, 0.01, 0.04, -0.03;
        const Vec6 delta = dx.head<6>();
        const double s = 1e-5;
        const Vec6 rate = (se3::log(se3::compose(se3::exp(delta), se3::exp(Vec6(s * state.base_twist)))) -
                           se3::log(se3::compose(se3::exp(delta), se3::exp(Vec6(-s * state.base_twist))))) /
                          (2 * s);
        CHECK((tree_state_rates(*dynamics, state, dx, force).head<6>() - rate).norm() < 1e-8);
        // The base block -1/2 ad_{u0}, by differences of those rates in delta.
        CHECK(relative_difference(linearization.A.topLeftCorner(6, 6), -0.5 * se3::ad(state.base_twist)) < 1e-14);
      }
    }
  }
}

}  // namespace

TEST_CASE("linearization: A and B against differences of f on the group, fixed-base chain", "[linearization]") {
  check_against_differences("trees/slider-chain.toml", {});
}

TEST_CASE("linearization: A and B against differences of f on the group, floating base", "[linearization]") {
  check_against_differences("trees/floating-arm.toml", {});
  check_against_differences("trees/floating-arm.toml", {"model.gravity=[0.3, -1.0, -9.81]"});
}

// A representation without analytic derivatives (the test plugin 'skewed' binds tree
// dynamics only): central differences of f, said so; the same A and B as differences of the
// same dynamics, and as the analytic ones of its body-fixed recursions on its own tree.
TEST_CASE("linearization: central differences for a representation without derivatives", "[linearization]") {
  for (const char* file : {"trees/slider-chain.toml", "trees/floating-arm.toml"}) {
    INFO(file);
    auto registry = std::make_unique<Registry>();
    registry->append_search_path({{LIEMBS_TEST_BROKEN_PLUGIN_DIR "/skewed-representation", "test", true},
                                  {LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
    auto document = ConfigDocument::load(data_file(file));
    document->set_override("representation.name=skewed");
    Run run = load_run(document, *registry);
    const Linearization differenced = linearize_run(run, std::nullopt);
    CHECK(differenced.method == "central-differences");
    CHECK_THAT(differenced.fallback_reason, Contains("representation 'skewed' gives no analytic derivatives") &&
                                                Contains("declares no RepresentationCapabilities::derivatives"));
    // The analytic linearization of the same state in body-fixed differs only by the skewed
    // inertia (1 % on the last node): close, not equal.
    LoadedRun reference = load_test_run(file, {"representation.name=body-fixed"});
    const Linearization analytic = linearize_run(reference.run, std::nullopt);
    CHECK(analytic.method == "analytic");
    const double gap = relative_difference(differenced.A, analytic.A);
    CHECK(gap < 2e-2);
    CHECK(gap > 1e-6);
    // Against the differences of the skewed dynamics themselves.
    auto tree = std::make_shared<const KinematicTree>(compile_tree(*run.model, true));
    auto dynamics = run.representation->bind_tree(tree);
    Eigen::MatrixXd A, B;
    difference(*dynamics, differenced.state, differenced.force, A, B);
    CHECK(relative_difference(differenced.A, A) < 1e-12);
    CHECK(relative_difference(differenced.B, B) < 1e-12);
  }
}

// theta'' = -(m g l / I_pivot) sin(theta) (tests/data/trees/pendulum.toml): m = 1.5, l = 0.4,
// I_pivot = 0.02 + m l^2 = 0.26. At the bottom (theta = 0) the eigenvalues are +-i w, at the
// top +-w, w^2 = m g l / I_pivot.
TEST_CASE("linearization: a pendulum's eigenvalues at the bottom and the top", "[linearization]") {
  const double w = std::sqrt(1.5 * 9.81 * 0.4 / 0.26);
  for (const auto& name : representations) {
    for (const double theta : {0.0, M_PI}) {
      INFO(name << ", theta " << theta);
      std::ostringstream position;
      position << std::setprecision(17) << "model.joints.0.initial_position=" << theta;
      LoadedRun loaded = load_test_run("trees/pendulum.toml", {"representation.name=" + name, position.str(),
                                                               "model.joints.0.initial_velocity=0.0"});
      const Linearization linearization = linearize_run(loaded.run, std::nullopt);
      REQUIRE(linearization.A.rows() == 2);
      const Eigen::VectorXcd eigenvalues = linearization.A.eigenvalues();
      for (int k = 0; k < 2; ++k) {
        if (theta == 0.0) {
          CHECK(std::abs(eigenvalues(k).real()) < 1e-6);
          CHECK(std::abs(std::abs(eigenvalues(k).imag()) - w) < 1e-6 * w);
        } else {
          CHECK(std::abs(eigenvalues(k).imag()) < 1e-6);
          CHECK(std::abs(std::abs(eigenvalues(k).real()) - w) < 1e-6 * w);
        }
      }
      CHECK(std::abs(eigenvalues(0) + eigenvalues(1)) < 1e-6);
      CHECK(linearization.B(1, 0) == Approx(1.0 / 0.26).epsilon(1e-12));
    }
  }
}

// --at: the state the run's integrator reaches, the same as a run to that time; the run's
// settings are left as they were. Times outside [0, end_time] and non-tree runs are errors.
TEST_CASE("linearization: --at integrates with the run's integrator, and its errors", "[linearization]") {
  LoadedRun loaded = load_test_run("trees/floating-arm.toml");
  const Linearization at = linearize_run(loaded.run, 0.5);
  CHECK(at.time == Approx(0.5));
  CHECK(loaded.run.settings.end_time == 1.0);
  const RunSummary summary = simulate("trees/floating-arm.toml", {"simulation.end_time=0.5"});
  CHECK((at.state.q - summary.final_state.coordinates).norm() == 0.0);
  CHECK((at.state.base.r - summary.final_state.poses.front().r).norm() == 0.0);
  const Linearization initial = linearize_run(loaded.run, std::nullopt);
  CHECK(initial.time == 0.0);
  CHECK((initial.state.q - linearize_run(loaded.run, 0.0).state.q).norm() == 0.0);
  CHECK((initial.state.q - at.state.q).norm() > 1e-3);

  for (const double bad : {-0.1, 1.5, std::nan("")}) CHECK_THROWS_AS(linearize_run(loaded.run, bad), ConfigError);
  const auto error = [](const std::string& file) {
    try {
      LoadedRun run = load_test_run(file);
      linearize_run(run.run, std::nullopt);
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error("four-bar-loop.toml"), Contains("joint 'C' closes a loop") && Contains("linearize supports trees"));
  CHECK_THAT(error("prescribed-chain.toml"), Contains("prescribed motion") && Contains("linearize supports trees"));
  CHECK_THAT(error("free-body.toml"), Contains("algorithm 'newton-euler'") && Contains("linearize supports trees"));
}
