// The higher-order algorithms (H-GRNE, H-GABI) and the analytic first derivatives
// (derivative_algorithms.hpp) against automatic differentiation, an independent
// computation: ADOL-C's univariate Taylor propagation, its vector forward mode (fov_forward)
// and nested dual numbers on a plain scalar-templated RNEA/ABA (benchmarks/ad-baseline),
// which shares no code with the LieMBS kernels. These are also the checks bench-higher-order
// and bench-derivatives rely on before timing the baselines. Built only when ADOL-C is found.
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/loaders/urdf_import.hpp>

#include <adolc_taylor.hpp>
#include <nested_derivatives.hpp>
#include <scalar_tree_dynamics.hpp>

#include <random_trees.hpp>
#include <representation_plugins.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace liembs;
namespace ad = liembs::ad_baseline;
using liembs::testing::relative_error;

namespace {

struct Case {
  std::string name;
  std::shared_ptr<const KinematicTree> tree;
};

// The sweep of the dynamics tests (every joint type, chains and branched trees, fixed and
// floating) and the paper's aerial manipulator.
std::vector<Case> cases() {
  std::vector<Case> out;
  unsigned seed = 1;
  for (const auto& variant : liembs::testing::tree_variants())
    out.push_back({variant.name, std::make_shared<const KinematicTree>(
                                     compile_tree(liembs::testing::random_tree_model(seed++, variant.options)))});
  Model aerial = import_urdf(std::string(LIEMBS_SOURCE_DIR) + "/models/urdf/aerial-manipulator.urdf", true);
  aerial.gravity = Vec3(0, 0, -9.81);
  out.push_back({"aerial manipulator", std::make_shared<const KinematicTree>(compile_tree(aerial))});
  return out;
}

// Per order (column), the largest difference relative to that order's magnitude.
double worst_order_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  double worst = 0.0;
  for (Eigen::Index k = 0; k < b.cols(); ++k) worst = std::max(worst, relative_error(a.col(k), b.col(k)));
  return a.cols() == b.cols() ? worst : 1e300;
}

std::unique_ptr<HigherOrderDynamics> spatial_higher_order(const std::shared_ptr<const KinematicTree>& tree, int order) {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& [name, representation] : liembs::testing::build_tree_representations().loaded)
    if (name == "spatial") return representation->bind_higher_order(tree, order);
  FAIL("no spatial representation");
  return nullptr;
}

constexpr int max_order = 8;

// Of 30 random states, the one whose mass matrix is best conditioned. Near a singular
// configuration (a spherical joint's chain of revolutes with aligned axes) the derivatives of
// forward dynamics divide by small articulated inertias at every order and lose all digits.
TreeState conditioned_state(const std::shared_ptr<const KinematicTree>& tree, unsigned seed) {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  auto dynamics = liembs::testing::build_tree_representations().loaded.front().second->bind_tree(tree);
  Eigen::MatrixXd mass;
  TreeState best;
  double best_condition = 1e300;
  for (unsigned attempt = 0; attempt < 30; ++attempt) {
    const TreeState state = liembs::testing::random_state(*tree, seed + 1000 * attempt);
    dynamics->mass_matrix(state, mass);
    if (mass.size() == 0) return state;
    const Eigen::VectorXd eigenvalues = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(mass).eigenvalues();
    const double condition = eigenvalues.maxCoeff() / eigenvalues.minCoeff();
    if (condition < best_condition) best = state, best_condition = condition;
  }
  return best;
}

// u^(1..r+1), entries in [-1, 1].
Eigen::MatrixXd random_rates(const KinematicTree& tree, int r, unsigned seed) {
  const int nv = tree.velocity_dimension();
  return liembs::testing::random_vector(nv * (r + 1), seed).reshaped(nv, r + 1);
}

}  // namespace

TEST_CASE("the scalar RNEA and ABA equal LieMBS's RNEA and ABA", "[dynamics][higher-order][ad]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  unsigned seed = 100;
  for (const auto& c : cases()) {
    INFO(c.name);
    const ad::ScalarTree scalar(*c.tree);
    const TreeState state = liembs::testing::random_state(*c.tree, seed);
    const int n = c.tree->dof(), nv = c.tree->velocity_dimension();
    const Eigen::VectorXd acceleration = liembs::testing::random_vector(nv, seed + 1);
    const Eigen::VectorXd force = liembs::testing::random_vector(nv, seed + 2);
    ++seed;
    const Vec3 gamma = state.base.R.transpose() * c.tree->gravity;
    const Eigen::VectorXd qdd = acceleration.tail(n);
    Eigen::VectorXd scalar_force(nv), scalar_acceleration(nv);
    ad::inverse_dynamics<double>(scalar, gamma.data(), state.base_twist.data(), acceleration.data(), state.q.data(),
                                 state.qd.data(), qdd.data(), scalar_force.data());
    ad::forward_dynamics<double>(scalar, gamma.data(), state.base_twist.data(), state.q.data(), state.qd.data(),
                                 force.data(), scalar_acceleration.data());
    for (const auto& [name, representation] : liembs::testing::build_tree_representations().loaded) {
      INFO(name);
      auto dynamics = representation->bind_tree(c.tree);
      Eigen::VectorXd expected;
      dynamics->inverse_dynamics(state, acceleration, expected);
      CHECK(relative_error(scalar_force, expected) < 1e-10);
      dynamics->forward_dynamics(state, force, expected);
      CHECK(relative_error(scalar_acceleration, expected) < 1e-10);
    }
  }
}

TEST_CASE("ADOL-C's Taylor coefficients equal H-GRNE's at every order up to 8, in every representation",
          "[dynamics][higher-order][ad]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  unsigned seed = 200;
  for (const auto& c : cases()) {
    INFO(c.name);
    ad::AdolcInverseDynamics rnea(std::make_shared<const ad::ScalarTree>(*c.tree), 11);
    const TreeState state = liembs::testing::random_state(*c.tree, seed);
    const Eigen::MatrixXd rates = random_rates(*c.tree, max_order, seed + 1);
    ++seed;
    Eigen::MatrixXd ad_forces, forces;
    rnea.inverse_dynamics(state, rates, ad_forces);
    for (const auto& [name, representation] : liembs::testing::build_tree_representations().loaded) {
      INFO(name);
      auto higher = representation->bind_higher_order(c.tree, max_order);
      for (int r = 0; r <= max_order; ++r) {
        INFO("order " << r);
        higher->inverse_dynamics(state, rates.leftCols(r + 1), forces);
        CHECK(worst_order_error(forces, ad_forces.leftCols(r + 1)) < 1e-11);
      }
    }
  }
}

// Forward dynamics of order r solves with the articulated inertias at every order and feeds
// each order's round-off into the next: from H-GRNE's forces both H-GABI and ADOL-C's Taylor
// iteration return the rates with errors that grow geometrically in r (by about 10 per order;
// the problem's conditioning, the same in both). A wrong term of H-GABI would be an O(1)
// error where ADOL-C's is round-off, so: H-GABI as accurate as ADOL-C, and both accurate at
// low orders.
TEST_CASE("H-GABI returns the rates as accurately as ADOL-C's Taylor iteration at every order up to 8",
          "[dynamics][higher-order][ad]") {
  unsigned seed = 400;
  for (const auto& c : cases()) {
    INFO(c.name);
    ad::AdolcForwardDynamics aba(std::make_shared<const ad::ScalarTree>(*c.tree), 12);
    auto higher = spatial_higher_order(c.tree, max_order);
    const TreeState state = conditioned_state(c.tree, seed);
    const Eigen::MatrixXd rates = random_rates(*c.tree, max_order, seed + 1);
    ++seed;
    Eigen::MatrixXd forces, ad_rates, liembs_rates;
    higher->inverse_dynamics(state, rates, forces);
    aba.forward_dynamics(state, forces, ad_rates);
    higher->forward_dynamics(state, forces, liembs_rates);
    for (int k = 0; k <= max_order; ++k) {
      INFO("order " << k);
      const double ad_error = relative_error(ad_rates.col(k), rates.col(k));
      const double liembs_error = relative_error(liembs_rates.col(k), rates.col(k));
      CHECK(liembs_error <= std::max(100.0 * ad_error, 1e-10));
      if (k <= 2) CHECK(ad_error < 1e-8);
    }
  }
}

TEST_CASE("nested dual numbers (the CasADi-style baseline) equal H-GRNE up to order 4 and invert it",
          "[dynamics][higher-order][ad]") {
  unsigned seed = 300;
  for (const auto& c : cases()) {
    INFO(c.name);
    const ad::ScalarTree scalar(*c.tree);
    auto higher = spatial_higher_order(c.tree, 4);
    const TreeState state = conditioned_state(c.tree, seed);
    const Eigen::MatrixXd rates = random_rates(*c.tree, 4, seed + 1);
    ++seed;
    Eigen::MatrixXd forces, nested;
    ad::MotionDerivatives motion;
    higher->inverse_dynamics(state, rates, forces);
    ad::nested_inverse_dynamics<4>(scalar, state, rates, motion, nested);
    CHECK(worst_order_error(nested, forces) < 1e-11);
    // The derivatives of ABA along the motion give its rates back from H-GRNE's forces.
    ad::nested_forward_dynamics<4>(scalar, state, forces, rates, motion, nested);
    CHECK(worst_order_error(nested, rates) < 1e-8);
  }
}

TEST_CASE("ADOL-C's forward-mode Jacobians of the scalar RNEA and ABA equal the analytic derivatives in every representation",
          "[dynamics][derivatives][ad]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  unsigned seed = 500;
  for (const auto& c : cases()) {
    INFO(c.name);
    auto scalar = std::make_shared<const ad::ScalarTree>(*c.tree);
    ad::AdolcInverseDynamics rnea(scalar, 15);
    ad::AdolcForwardDynamics aba(scalar, 16);
    const int nv = c.tree->velocity_dimension();
    const TreeState state = conditioned_state(c.tree, seed);
    const Eigen::VectorXd acceleration = liembs::testing::random_vector(nv, seed + 1);
    const Eigen::VectorXd force = liembs::testing::random_vector(nv, seed + 2, 5.0);
    ++seed;
    InverseDynamicsDerivatives ad_inverse, inverse;
    ForwardDynamicsDerivatives ad_forward, forward;
    rnea.derivatives(state, acceleration, ad_inverse);
    aba.derivatives(state, force, ad_forward);
    for (const auto& [name, representation] : liembs::testing::build_tree_representations().loaded) {
      INFO(name);
      auto derivatives = representation->bind_derivatives(c.tree);
      derivatives->inverse_dynamics_derivatives(state, acceleration, inverse);
      derivatives->forward_dynamics_derivatives(state, force, forward);
      CHECK(relative_error(ad_inverse.force, inverse.force) < 1e-10);
      CHECK(relative_error(ad_inverse.force_by_q, inverse.force_by_q) < 1e-10);
      CHECK(relative_error(ad_inverse.force_by_u, inverse.force_by_u) < 1e-10);
      CHECK(relative_error(ad_inverse.mass, inverse.mass) < 1e-10);
      CHECK(relative_error(ad_forward.acceleration, forward.acceleration) < 1e-9);
      CHECK(relative_error(ad_forward.acceleration_by_q, forward.acceleration_by_q) < 1e-9);
      CHECK(relative_error(ad_forward.acceleration_by_u, forward.acceleration_by_u) < 1e-9);
      CHECK(relative_error(ad_forward.acceleration_by_force, forward.acceleration_by_force) < 1e-9);
    }
  }
}

TEST_CASE("the AD baselines refuse models with loads and inputs of the wrong size", "[dynamics][higher-order][ad][errors]") {
  Model model = liembs::testing::random_tree_model(5, liembs::testing::tree_options(3, false, true));
  AppliedWrench load;
  load.body = 1;
  load.force = Vec3(1, 0, 0);
  model.loads.push_back(load);
  const KinematicTree loaded = compile_tree(model);
  CHECK_THROWS_WITH(ad::ScalarTree(loaded), Catch::Contains("loads are not supported"));
  model.loads.clear();
  auto scalar = std::make_shared<const ad::ScalarTree>(compile_tree(model));
  ad::AdolcInverseDynamics rnea(scalar, 13);
  ad::AdolcForwardDynamics aba(scalar, 14);
  TreeState state = liembs::testing::random_state(compile_tree(model), 1);
  Eigen::MatrixXd out;
  CHECK_THROWS_WITH(rnea.inverse_dynamics(state, Eigen::MatrixXd::Zero(3, 2), out), Catch::Contains("rows"));
  CHECK_THROWS_WITH(aba.forward_dynamics(state, Eigen::MatrixXd::Zero(3, 2), out), Catch::Contains("rows"));
  InverseDynamicsDerivatives inverse;
  ForwardDynamicsDerivatives forward;
  CHECK_THROWS_WITH(rnea.derivatives(state, Eigen::VectorXd::Zero(3), inverse), Catch::Contains("acceleration of"));
  CHECK_THROWS_WITH(aba.derivatives(state, Eigen::VectorXd::Zero(3), forward), Catch::Contains("force of"));
}

