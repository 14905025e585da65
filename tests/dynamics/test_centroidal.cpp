// The centroidal family (centroidal_algorithms.hpp) in every representation plugin, on the
// random trees of the dynamics tests: the centre of mass moves as its Jacobian says (central
// differences of the position along the state's motion), the momentum h_G = A_G u is the
// linear and angular momentum the runs report (compute_invariants, the columns of
// trajectory.csv), and the four representations agree to round-off.
#include <liembs/dynamics/centroidal_algorithms.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/sim/invariants.hpp>

#include <catch2/catch.hpp>

#include <random_trees.hpp>
#include <representation_plugins.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace liembs;

namespace {

using liembs::testing::relative_error;

TreeState moved(const KinematicTree& tree, const TreeState& state, double h) {
  TreeState out = state;
  out.q += h * state.qd;
  if (tree.floating_base) out.base = se3::compose(state.base, se3::exp(h * state.base_twist));
  return out;
}

}  // namespace

TEST_CASE("centroidal: centre of mass, its Jacobian and A_G agree with finite differences, the runs' momentum and "
          "across representations",
          "[dynamics][centroidal]") {
  liembs::testing::RepresentationPlugins representations(LIEMBS_TEST_PLUGIN_DIR);
  if (!representations.problems.empty()) FAIL(representations.problems);
  REQUIRE(representations.loaded.size() == liembs::testing::representation_names.size());
  constexpr double h = 1e-5;
  for (const auto& variant : liembs::testing::tree_variants())
    for (unsigned seed = 1; seed <= 3; ++seed) {
      INFO(variant.name << ", seed " << seed);
      const Model model = liembs::testing::random_tree_model(seed, variant.options);
      const auto tree = std::make_shared<const KinematicTree>(compile_tree(model));
      const TreeState state = liembs::testing::random_state(*tree, seed);
      std::vector<CentroidalQuantities> results;
      for (const auto& [name, representation] : representations.loaded) {
        INFO("representation " << name);
        const auto dynamics = representation->bind_tree(tree);
        CentroidalWorkspace workspace;
        CentroidalQuantities out;
        centroidal::compute(model.bodies, *dynamics, state, workspace, out);
        const int nv = tree->velocity_dimension();
        REQUIRE(out.center_of_mass_jacobian.cols() == nv);
        REQUIRE(out.momentum_matrix.cols() == nv);
        double mass = 0.0;
        for (const RigidBody& body : model.bodies) mass += body.mass;
        CHECK(std::abs(out.mass - mass) < 1e-12 * mass);

        if (nv == 0) {  // a chain of fixed joints: no motion to difference, no empty products
          results.push_back(out);
          continue;
        }
        // p_G' = J_G u: central differences of the centre of mass along the state's motion.
        Eigen::VectorXd u(nv);
        if (tree->floating_base) u << state.base_twist, state.qd;
        else u = state.qd;
        CentroidalQuantities ahead, behind;
        CentroidalWorkspace scratch;
        centroidal::compute(model.bodies, *dynamics, moved(*tree, state, h), scratch, ahead);
        centroidal::compute(model.bodies, *dynamics, moved(*tree, state, -h), scratch, behind);
        const Vec3 rate = (ahead.center_of_mass - behind.center_of_mass) / (2.0 * h);
        CHECK(relative_error(out.center_of_mass_jacobian * u, rate) < 1e-7);
        CHECK(relative_error(out.momentum.tail<3>(), mass * rate) < 1e-7);

        // The momentum the runs report: linear, and angular about the world origin = k_G + p_G x l.
        BodyKinematics kinematics;
        dynamics->body_kinematics(state, Eigen::VectorXd::Zero(nv), kinematics);
        const Invariants invariants = compute_invariants(model, kinematics.poses, kinematics.twists);
        CHECK(relative_error(out.momentum.tail<3>(), invariants.linear_momentum) < 1e-12);
        const Vec3 angular = out.momentum.head<3>() + out.center_of_mass.cross(Vec3(out.momentum.tail<3>()));
        CHECK(relative_error(angular, invariants.angular_momentum) < 1e-12);
        // A pure translation v of a floating base moves every body by R_0 v: the linear rows
        // of the base's linear columns are m R_0.
        if (tree->floating_base) {
          const Eigen::Matrix3d base_linear = out.momentum_matrix.block<3, 3>(3, 3);
          CHECK(relative_error(base_linear, mass * state.base.R) < 1e-12);
        }
        results.push_back(out);
      }
      for (std::size_t r = 1; r < results.size(); ++r) {
        INFO(representations.loaded[r].first << " vs " << representations.loaded[0].first);
        CHECK(relative_error(results[r].center_of_mass, results[0].center_of_mass) < 1e-12);
        CHECK(relative_error(results[r].center_of_mass_jacobian, results[0].center_of_mass_jacobian) < 1e-12);
        CHECK(relative_error(results[r].momentum_matrix, results[0].momentum_matrix) < 1e-12);
      }
    }
}

TEST_CASE("centroidal: bodies that are not the tree's are refused, a massless model is named", "[dynamics][centroidal]") {
  liembs::testing::RepresentationPlugins representations(LIEMBS_TEST_PLUGIN_DIR);
  if (!representations.problems.empty()) FAIL(representations.problems);
  const Model model = liembs::testing::random_tree_model(1, liembs::testing::tree_options(3, false, false));
  const auto tree = std::make_shared<const KinematicTree>(compile_tree(model));
  const auto dynamics = representations.loaded.front().second->bind_tree(tree);
  const TreeState state = liembs::testing::random_state(*tree, 1);
  CentroidalWorkspace workspace;
  CentroidalQuantities out;
  std::vector<RigidBody> fewer(model.bodies.begin(), model.bodies.end() - 1);
  CHECK_THROWS_WITH(centroidal::compute(fewer, *dynamics, state, workspace, out), Catch::Contains("bodies given for a tree of"));
  std::vector<RigidBody> massless = model.bodies;
  for (RigidBody& body : massless) body.mass = 0.0;
  CHECK_THROWS_WITH(centroidal::compute(massless, *dynamics, state, workspace, out), Catch::Contains("positive total mass"));
}
