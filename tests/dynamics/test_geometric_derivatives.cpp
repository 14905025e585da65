// The derivatives of inverse dynamics with respect to the joints' geometric parameters
// (geometric_derivative_algorithms.hpp, paper 000 section 6.2) in every representation
// plugin, on random chains and branched trees with every joint type (fixed joints
// included), fixed and floating bases, with and without loads:
//   - d tau / d xi against central differences of the same representation's RNEA on
//     perturbed models: the child body of the joint and everything below it moved rigidly so
//     that its reference becomes B exp(xi) (the model's world-frame data moved, recompiled);
//   - d tau / d X against central differences of RNEA on models whose joint axes move
//     keeping their parameterization: unit axis direction e rotated on the sphere, the point
//     y on the axis shifted, the pitch of helical joints changed (revolute and prismatic
//     joints keep theirs); and, for the screws of rotating joints, against differences in all
//     six free screw coordinates of the compiled tree;
//   - the representations agree; tau equals RNEA; size errors.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/dynamics/tree_geometric_derivatives.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/representation.hpp>

#include <catch2/catch.hpp>

#include <derivative_checks.hpp>

#include <functional>
#include <random>

using namespace liembs;
using namespace liembs::testing::derivative_checks;

namespace {

// The bodies below joint j (its child included), through every joint.
std::vector<bool> subtree_bodies(const Model& model, std::size_t j) {
  std::vector<bool> below(model.bodies.size(), false);
  below[model.joints[j].child] = true;
  for (bool grew = true; grew;) {
    grew = false;
    for (const Joint& joint : model.joints)
      if (joint.parent != Joint::world && below[joint.parent] && !below[joint.child]) below[joint.child] = grew = true;
  }
  return below;
}

// The model with the subtree of joint j moved so that its reference becomes B exp(xi): the
// world motion D = A_child exp(xi) A_child^-1 applied to the bodies below the joint and to
// the screws of the joint and of every joint below it.
Model moved_reference(Model model, std::size_t j, const Vec6& xi) {
  const Pose& A = model.bodies[model.joints[j].child].reference_pose;
  const Pose D = se3::compose(se3::compose(A, se3::exp(xi)), se3::inverse(A));
  const Mat6 Ad_D = se3::Ad(D);
  const std::vector<bool> below = subtree_bodies(model, j);
  for (std::size_t b = 0; b < model.bodies.size(); ++b)
    if (below[b]) model.bodies[b].reference_pose = se3::compose(D, model.bodies[b].reference_pose);
  for (Joint& joint : model.joints)
    if (below[joint.child])
      for (Vec6& Y : joint.screws) Y = Ad_D * Y;
  return model;
}

// A joint screw Y = (e; y x e + h e) (or (0; e)) moved along a path that keeps its
// parameterization: e rotated by exp(s w~) (w perpendicular to e), y shifted by s dy, h
// changed by s dh (helical only). Returns Y(s); `rate` receives dY/ds at s = 0.
struct AxisPath {
  Vec3 w, dy;
  double dh = 0.0;
};
Vec6 moved_screw(const Vec6& Y, const AxisPath& path, double s, Vec6* rate = nullptr) {
  const Vec3 omega = Y.head<3>(), v = Y.tail<3>();
  Vec6 out, dY;
  if (omega.norm() > 0.0) {
    const Vec3 e = omega.normalized(), y = e.cross(v);  // the axis point nearest the origin
    const double h = e.dot(v);
    const double dh = std::abs(h) > 1e-12 ? path.dh : 0.0;  // a revolute joint keeps h = 0
    const Vec3 es = so3::exp(s * path.w) * e, ys = y + s * path.dy;
    out << es, ys.cross(es) + (h + s * dh) * es;
    const Vec3 de = path.w.cross(e);
    dY << de, path.dy.cross(e) + y.cross(de) + dh * e + h * de;
  } else {
    const Vec3 e = v.normalized();
    out << Vec3::Zero(), so3::exp(s * path.w) * e;
    dY << Vec3::Zero(), path.w.cross(e);
  }
  if (rate) *rate = dY;
  return out;
}

Eigen::VectorXd rnea(const Representation& representation, const Model& model, const TreeState& state,
                     const Eigen::VectorXd& acceleration) {
  auto tree = std::make_shared<const KinematicTree>(compile_tree(model));
  Eigen::VectorXd tau;
  representation.bind_tree(tree)->inverse_dynamics(state, acceleration, tau);
  return tau;
}
Eigen::VectorXd rnea(const Representation& representation, const KinematicTree& tree, const TreeState& state,
                     const Eigen::VectorXd& acceleration) {
  Eigen::VectorXd tau;
  representation.bind_tree(std::make_shared<const KinematicTree>(tree))->inverse_dynamics(state, acceleration, tau);
  return tau;
}

// The first node of the joint of node k (its degrees of freedom are consecutive nodes).
int first_node_of_joint(const KinematicTree& tree, int k) {
  while (k > 0 && tree.dof_joint[static_cast<std::size_t>(k - 1)] == tree.dof_joint[static_cast<std::size_t>(k)]) --k;
  return k;
}

Eigen::VectorXd central_difference(const std::function<Eigen::VectorXd(double)>& f) {
  return (f(fd_step) - f(-fd_step)) / (2.0 * fd_step);
}

void check_geometric_derivatives(const Model& model, unsigned seed) {
  GeometricDerivatives first;
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const auto random3 = [&] { return Vec3(uniform(random), uniform(random), uniform(random)); };
  for (std::size_t r = 0; r < plugins().loaded.size(); ++r) {
    // Named references, not a structured binding: clang 14 cannot capture bindings in lambdas.
    const auto& name = plugins().loaded[r].first;
    const auto& representation = plugins().loaded[r].second;
    INFO("representation " << name);
    auto tree = std::make_shared<const KinematicTree>(compile_tree(model));
    auto derivatives = representation->bind_geometric_derivatives(tree);
    REQUIRE(derivatives->representation() == name);
    const int nv = tree->velocity_dimension(), n = tree->dof();
    const TreeState state = random_state(*tree, 300 + seed);
    const Eigen::VectorXd acceleration = random_vector(nv, 400 + seed);
    GeometricDerivatives out;
    derivatives->inverse_dynamics_geometric_derivatives(state, acceleration, out);
    const std::vector<int> first_nodes = joint_first_nodes(*tree);
    REQUIRE(out.force_by_reference.rows() == nv);
    REQUIRE(out.force_by_reference.cols() == 6 * static_cast<Eigen::Index>(first_nodes.size()));
    REQUIRE(out.force_by_screw.rows() == nv);
    REQUIRE(out.force_by_screw.cols() == 6 * n);
    CHECK(relative_error(out.force, rnea(*representation, *tree, state, acceleration)) < roundoff_tolerance);

    // d tau / d xi, joint by joint, on perturbed models.
    Eigen::MatrixXd by_reference(nv, out.force_by_reference.cols());
    for (std::size_t m = 0; m < first_nodes.size(); ++m) {
      const std::size_t joint = tree->dof_joint[static_cast<std::size_t>(first_nodes[m])];
      for (int c = 0; c < 6; ++c)
        by_reference.col(6 * static_cast<Eigen::Index>(m) + c) = central_difference([&](double h) {
          return rnea(*representation, moved_reference(model, joint, h * Vec6::Unit(c)), state, acceleration);
        });
    }
    CHECK(relative_error(out.force_by_reference, by_reference) < fd_tolerance);

    // d tau / d X along paths that keep each axis a unit axis, two per degree of freedom.
    for (int k = 0; k < n; ++k) {
      const std::size_t joint = tree->dof_joint[static_cast<std::size_t>(k)];
      const std::size_t screw = static_cast<std::size_t>(k - first_node_of_joint(*tree, k));
      const Vec6 Y = model.joints[joint].screws[screw];
      const Mat6 to_child = se3::Ad_inverse(model.bodies[model.joints[joint].child].reference_pose);
      for (int path_index = 0; path_index < 2; ++path_index) {
        AxisPath path;
        const Vec3 axis = Y.head<3>().norm() > 0.0 ? Vec3(Y.head<3>().normalized()) : Vec3(Y.tail<3>().normalized());
        path.w = axis.cross(random3());  // perpendicular to the axis: e stays a unit vector
        path.dy = random3();
        path.dh = uniform(random);
        Vec6 rate;
        moved_screw(Y, path, 0.0, &rate);
        const Eigen::VectorXd expected = out.force_by_screw.middleCols<6>(6 * k) * (to_child * rate);
        const Eigen::VectorXd difference = central_difference([&](double h) {
          Model moved = model;
          moved.joints[joint].screws[screw] = moved_screw(Y, path, h);
          return rnea(*representation, moved, state, acceleration);
        });
        INFO("degree of freedom " << tree->dof_names[static_cast<std::size_t>(k)] << ", path " << path_index);
        CHECK(relative_error(expected, difference) < fd_tolerance);
      }
      // All six free coordinates of a rotating screw in the compiled tree (a prismatic
      // screw given a rotation of 1e-6 would have its axis 1e6 away: no usable difference).
      if (tree->screw[static_cast<std::size_t>(k)].head<3>().norm() > 0.5) {
        Eigen::MatrixXd by_screw(nv, 6);
        for (int c = 0; c < 6; ++c)
          by_screw.col(c) = central_difference([&](double h) {
            KinematicTree moved = *tree;
            moved.screw[static_cast<std::size_t>(k)] += h * Vec6::Unit(c);
            return rnea(*representation, moved, state, acceleration);
          });
        INFO("degree of freedom " << tree->dof_names[static_cast<std::size_t>(k)] << ", free coordinates");
        CHECK(relative_error(out.force_by_screw.middleCols<6>(6 * k), by_screw) < fd_tolerance);
      }
    }

    if (r == 0) {
      first = out;
    } else {
      CHECK(relative_error(out.force_by_reference, first.force_by_reference) < roundoff_tolerance);
      CHECK(relative_error(out.force_by_screw, first.force_by_screw) < roundoff_tolerance);
    }
  }
}

}  // namespace

TEST_CASE("geometric derivatives of inverse dynamics equal central differences on perturbed models in every representation",
          "[dynamics][derivatives][geometric]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& variant : tree_variants()) {
    INFO(variant.name);
    check_geometric_derivatives(random_tree_model(5, variant.options), 5);
  }
}

TEST_CASE("geometric derivatives with body- and world-frame loads equal central differences",
          "[dynamics][derivatives][geometric]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& variant : tree_variants()) {
    INFO(variant.name);
    check_geometric_derivatives(with_loads(random_tree_model(6, variant.options), 61), 6);
  }
}

TEST_CASE("the geometric derivatives refuse states and vectors of the wrong size", "[dynamics][derivatives][geometric][errors]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const Model model = random_tree_model(1, liembs::testing::tree_options(3, false, true));
  auto tree = std::make_shared<const KinematicTree>(compile_tree(model));
  auto derivatives = plugins().loaded.front().second->bind_geometric_derivatives(tree);
  const int nv = tree->velocity_dimension();
  const TreeState state = random_state(*tree, 1);
  GeometricDerivatives out;
  CHECK_THROWS_WITH(derivatives->inverse_dynamics_geometric_derivatives(state, Eigen::VectorXd::Zero(nv - 1), out),
                    Catch::Contains("acceleration has " + std::to_string(nv - 1) + " entries; expected " + std::to_string(nv)));
  TreeState short_state = state;
  short_state.q.resize(1);
  CHECK_THROWS_WITH(derivatives->inverse_dynamics_geometric_derivatives(short_state, Eigen::VectorXd::Zero(nv), out),
                    Catch::Contains("tree state has 1 coordinates"));

  // A representation plugin with only the REQUIRED operations declares no capability, and
  // the OPTIONAL one, if called anyway, is refused by the name of the capability.
  class BareRepresentation final : public Representation {
   public:
    std::unique_ptr<TreeDynamics> bind_tree(std::shared_ptr<const KinematicTree>) const override { return nullptr; }
    Vec6 twist_from_body(const Pose&, const Vec6& twist) const override { return twist; }
  };
  const BareRepresentation bare;
  CHECK_FALSE(bare.capabilities().geometric_derivatives);
  CHECK_FALSE(bare.capabilities().derivatives);
  CHECK_FALSE(bare.capabilities().higher_order);
  CHECK_THROWS_AS(bare.bind_geometric_derivatives(tree), ModelError);
  CHECK_THROWS_WITH(bare.bind_geometric_derivatives(tree), Catch::Contains("does not provide the derivatives by the joints' geometry") &&
                                                               Catch::Contains("RepresentationCapabilities::geometric_derivatives"));
}
