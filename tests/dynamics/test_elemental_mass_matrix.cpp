// The CRBA on elemental (Denavit-Hartenberg) frames (elemental_mass_matrix.hpp): the frames
// recompose every joint pose, the mass matrix equals the closed form on random chains and
// branched trees (fixed and floating, every joint type, and deeper than the trees that use it
// by default), nearly parallel axes are refused, and the choice between it and the
// world-frame walk follows the depth of the tree.
#include <liembs/dynamics/closed_form.hpp>
#include <liembs/dynamics/elemental_mass_matrix.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/lie/se3.hpp>

#include <catch2/catch.hpp>

#include <random_trees.hpp>

#include <limits>

using namespace liembs;
using liembs::testing::random_state;
using liembs::testing::random_tree_model;
using liembs::testing::tree_options;
using liembs::testing::tree_variants;

namespace {

double relative_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.size() == 0 && b.size() == 0) return 0.0;  // a tree of fixed joints only
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

double pose_error(const Pose& a, const Pose& b) {
  return std::max((a.R - b.R).cwiseAbs().maxCoeff(), (a.r - b.r).cwiseAbs().maxCoeff() / (1.0 + b.r.norm()));
}

// Every variant of the dynamics tests, and deeper ones (chains and trees of 12 bodies).
std::vector<liembs::testing::TreeVariant> variants() {
  auto all = tree_variants();
  all.push_back({"fixed chain of 12", tree_options(12, false, false)});
  all.push_back({"floating branched tree of 12", tree_options(12, true, true)});
  return all;
}

// A two-node tree whose second axis is the first turned by `tilt` about x and moved by 0.3
// along x.
AlignedTree two_axes(double tilt) {
  KinematicTree tree;
  tree.parent = {-1, 0};
  tree.children = {{1}, {}};
  tree.reference.resize(2);
  tree.reference[1].R = Eigen::AngleAxisd(tilt, Vec3::UnitX()).toRotationMatrix();
  tree.reference[1].r = Vec3(0.3, 0.0, 0.0);
  Vec6 revolute = Vec6::Zero();
  revolute(2) = 1.0;
  tree.screw = {revolute, revolute};
  Mat6 inertia = Mat6::Identity();
  tree.inertia = {inertia, inertia};
  tree.dof_names = {"first", "second"};
  tree.dof_joint = {0, 1};
  return align_node_frames(tree);
}

}  // namespace

TEST_CASE("elemental frames recompose every joint pose", "[dynamics][elemental]") {
  for (const auto& variant : variants())
    for (unsigned seed = 1; seed <= 3; ++seed) {
      INFO(variant.name << ", seed " << seed);
      const AlignedTree aligned = align_node_frames(compile_tree(random_tree_model(seed, variant.options)));
      const ElementalFrames frames = elemental_frames(aligned);
      REQUIRE(frames.usable);
      const KinematicTree& tree = aligned.tree;
      const TreeState state = random_state(tree, 50 + seed);
      for (std::size_t k = 0; k < frames.joint.size(); ++k) {
        INFO("node " << k);
        const double q = state.q(static_cast<Eigen::Index>(k));
        // E_p^-1 (B_k exp(X_k q)) E_k, with E = F Z in the aligned node frames.
        const int p = tree.parent[k];
        const Pose parent_frame = p >= 0 ? frames.frame[static_cast<std::size_t>(p)] : Pose{};
        const Pose joint = se3::compose(tree.reference[k], se3::exp(tree.screw[k] * q));
        const Pose expected = se3::compose(se3::compose(se3::inverse(parent_frame), joint), frames.frame[k]);
        CHECK(pose_error(elemental_pose(frames.joint[k], q), expected) < 1e-12);
        // The first child of a node needs no Rz(gamma) Tz(b); the root's children do.
        if (p >= 0 && tree.children[static_cast<std::size_t>(p)].front() == static_cast<int>(k)) CHECK_FALSE(frames.joint[k].prefix);
        if (p < 0) CHECK(frames.joint[k].prefix);
      }
    }
}

TEST_CASE("the CRBA on elemental frames equals the closed form", "[dynamics][elemental]") {
  for (const auto& variant : variants())
    for (unsigned seed = 1; seed <= 3; ++seed) {
      INFO(variant.name << ", seed " << seed);
      const KinematicTree tree = compile_tree(random_tree_model(seed, variant.options));
      ElementalMassMatrix crba(align_node_frames(tree));
      REQUIRE(crba.usable());
      for (unsigned draw = 0; draw < 3; ++draw) {
        const TreeState state = random_state(tree, 100 * seed + draw);
        const Eigen::MatrixXd reference = closed_form::mass_matrix(tree, state);
        // Every entry is written, the zeros of unrelated degrees of freedom too.
        Eigen::MatrixXd mass = Eigen::MatrixXd::Constant(reference.rows(), reference.cols(), std::numeric_limits<double>::quiet_NaN());
        crba.compute(state.q, mass);
        CHECK(relative_error(mass, reference) < 1e-12);
      }
    }
}

TEST_CASE("elemental frames refuse nearly parallel axes and take exactly parallel ones", "[dynamics][elemental]") {
  CHECK(elemental_frames(two_axes(0.0)).usable);
  CHECK(elemental_frames(two_axes(M_PI)).usable);
  CHECK(elemental_frames(two_axes(0.7)).usable);
  CHECK_FALSE(elemental_frames(two_axes(1e-6)).usable);  // the common normal is 3e5 away
  for (const double tilt : {0.0, M_PI, 0.7}) {
    INFO("tilt " << tilt);
    const AlignedTree aligned = two_axes(tilt);
    ElementalMassMatrix crba(aligned);
    TreeState state;
    state.q = Eigen::Vector2d(0.4, -1.1);
    state.qd = Eigen::Vector2d::Zero();
    Eigen::MatrixXd mass = Eigen::MatrixXd::Constant(2, 2, std::numeric_limits<double>::quiet_NaN());
    crba.compute(state.q, mass);
    CHECK(relative_error(mass, closed_form::mass_matrix(aligned.tree, state)) < 1e-12);
  }
}

TEST_CASE("the CRBA on elemental frames is preferred on shallow trees only", "[dynamics][elemental]") {
  // A floating base with branches (walks of a few steps) against a chain of 48 (23.5 on average).
  const std::vector<JointType> revolute{JointType::revolute};
  CHECK(ElementalMassMatrix(align_node_frames(compile_tree(random_tree_model(3, tree_options(12, true, true, revolute))))).preferred());
  CHECK_FALSE(ElementalMassMatrix(align_node_frames(compile_tree(random_tree_model(3, tree_options(48, false, false, revolute))))).preferred());
}
