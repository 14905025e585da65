#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/dynamics/tree_geometric_derivatives.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/model/topology.hpp>

#include <cmath>

namespace liembs {

TreeDynamics::~TreeDynamics() = default;
TreeDerivatives::~TreeDerivatives() = default;
TreeGeometricDerivatives::~TreeGeometricDerivatives() = default;
HigherOrderDynamics::~HigherOrderDynamics() = default;

namespace {

// Spatial inertia of a body, about and in the frame `node` in which the body frame has
// pose `offset`: Ad_{offset^-1}^T M_b Ad_{offset^-1}.
Mat6 inertia_in_node_frame(const RigidBody& body, const Pose& offset) {
  const Mat6 to_body = se3::Ad_inverse(offset);
  return to_body.transpose() * body.spatial_inertia() * to_body;
}

}  // namespace

KinematicTree compile_tree(const Model& model, bool cut_loops) {
  const Topology topology = analyze_topology(model);
  require_single_tree(model, topology, cut_loops);

  KinematicTree tree;
  tree.cut_joints = topology.cut_joints;
  tree.gravity = model.gravity;
  tree.floating_base = !topology.free_bodies.empty();
  tree.body_node.assign(model.bodies.size(), -1);
  tree.body_offset.assign(model.bodies.size(), Pose{});
  std::vector<double> initial_q, initial_qd;

  if (tree.floating_base) {
    tree.base_body = topology.free_bodies.front();
    tree.base_inertia = model.bodies[tree.base_body].spatial_inertia();
  }

  for (const std::size_t j : topology.tree_joints) {
    const Joint& joint = model.joints[j];
    const RigidBody& child = model.bodies[joint.child];
    int parent_node = -1;
    Pose parent_offset;  // parent body frame in its node frame
    Pose parent_node_reference = Pose{};
    if (joint.parent != Joint::world) {
      parent_node = tree.body_node[joint.parent];
      parent_offset = tree.body_offset[joint.parent];
      parent_node_reference = se3::compose(model.bodies[joint.parent].reference_pose, se3::inverse(parent_offset));
    } else if (tree.floating_base) {
      throw ModelError("joint '" + joint.name + "' attaches to the world, but the model floats (internal topology error)");
    }
    // Child body frame in the parent node frame at q = 0: B = (A_parent O^-1)^-1 A_child.
    const Pose child_in_parent_node = se3::compose(se3::inverse(parent_node_reference), child.reference_pose);

    if (joint.type == JointType::fixed) {
      tree.body_node[joint.child] = parent_node;
      tree.body_offset[joint.child] = child_in_parent_node;
      const Mat6 merged = inertia_in_node_frame(child, child_in_parent_node);
      if (parent_node >= 0) tree.inertia[static_cast<std::size_t>(parent_node)] += merged;
      else if (tree.floating_base) tree.base_inertia += merged;
      continue;  // a body welded to the world does not move
    }

    const Mat6 to_child = se3::Ad_inverse(child.reference_pose);
    for (std::size_t k = 0; k < joint.dof(); ++k) {
      const int node = tree.dof();
      tree.parent.push_back(k == 0 ? parent_node : node - 1);
      tree.reference.push_back(k == 0 ? child_in_parent_node : Pose{});
      tree.screw.push_back(to_child * joint.screws[k]);  // X = Ad_{A_child}^-1 Y (001 eq. 12)
      tree.inertia.push_back(Mat6::Zero());
      tree.children.emplace_back();
      if (tree.parent.back() >= 0) tree.children[static_cast<std::size_t>(tree.parent.back())].push_back(node);
      tree.dof_names.push_back(joint.dof() == 1 ? joint.name : joint.name + "[" + std::to_string(k) + "]");
      tree.dof_joint.push_back(j);
      initial_q.push_back(joint.initial_position.size() > static_cast<Eigen::Index>(k) ? joint.initial_position(static_cast<Eigen::Index>(k)) : 0.0);
      initial_qd.push_back(joint.initial_velocity.size() > static_cast<Eigen::Index>(k) ? joint.initial_velocity(static_cast<Eigen::Index>(k)) : 0.0);
    }
    tree.inertia.back() = child.spatial_inertia();
    tree.body_node[joint.child] = tree.dof() - 1;
  }

  // Every degree of freedom must move some mass, else its articulated inertia is zero.
  std::vector<double> subtree_mass(static_cast<std::size_t>(tree.dof()), 0.0);
  for (int i = tree.dof() - 1; i >= 0; --i) {
    const auto node = static_cast<std::size_t>(i);
    subtree_mass[node] += tree.inertia[node](5, 5);
    if (tree.parent[node] >= 0) subtree_mass[static_cast<std::size_t>(tree.parent[node])] += subtree_mass[node];
    if (!(subtree_mass[node] > 0.0))
      throw ModelError("joint '" + model.joints[tree.dof_joint[node]].name + "' moves no mass (degree of freedom " +
                       tree.dof_names[node] + "): its dynamics is singular");
  }

  for (const auto& load : model.loads) {
    KinematicTree::Load tree_load;
    tree_load.node = tree.body_node[load.body];
    const Pose& offset = tree.body_offset[load.body];
    const RigidBody& body = model.bodies[load.body];
    if (tree_load.node < 0 && !tree.floating_base)
      continue;  // a load on a body welded to the world does nothing
    if (load.frame == AppliedWrench::Frame::body) {
      Vec6 wrench;
      wrench << load.moment, load.force;
      tree_load.wrench = se3::Ad_inverse(offset).transpose() * wrench;  // body frame -> node frame
    } else {
      tree_load.world_frame = true;
      tree_load.wrench << load.moment, load.force;
      tree_load.point = se3::transform_point(offset, body.center_of_mass);
    }
    tree.loads.push_back(tree_load);
  }
  tree.initial_position = Eigen::Map<const Eigen::VectorXd>(initial_q.data(), static_cast<Eigen::Index>(initial_q.size()));
  tree.initial_velocity = Eigen::Map<const Eigen::VectorXd>(initial_qd.data(), static_cast<Eigen::Index>(initial_qd.size()));
  return tree;
}

namespace {

// A rotation whose third column is the unit vector `axis`.
Mat3 rotation_onto_z(const Vec3& axis) {
  // The coordinate axis least aligned with `axis` gives a well-conditioned first column.
  Eigen::Index least = 0;
  axis.cwiseAbs().minCoeff(&least);
  const Vec3 x = Vec3::Unit(least).cross(axis).normalized();
  Mat3 R;
  R << x, axis.cross(x), axis;
  return R;
}

}  // namespace

AlignedTree align_node_frames(const KinematicTree& tree) {
  AlignedTree aligned;
  aligned.tree = tree;
  KinematicTree& out = aligned.tree;
  const auto n = static_cast<std::size_t>(tree.dof());
  aligned.axial.resize(n);
  aligned.alignment.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 w = tree.screw[i].head<3>(), v = tree.screw[i].tail<3>();
    Pose K;
    AxialScrew& X = aligned.axial[i];
    if (w.norm() > 1e-12 * v.norm() && w.norm() > 0.0) {
      // Rotating screw (w; v) = a (e; y x e + h e): axis through y = e x v / a, pitch h = e.v / a.
      const double a = w.norm();
      const Vec3 e = w / a;
      K.R = rotation_onto_z(e);
      K.r = e.cross(v) / a;
      X.angular = a;
      X.linear = e.dot(v);  // = a h
      // A revolute screw transformed into a body frame keeps a pitch of round-off size.
      if (std::abs(X.linear) < 1e-13 * (a + v.norm())) X.linear = 0.0;
    } else {
      const double l = v.norm();
      if (!(l > 0.0)) throw ModelError("degree of freedom '" + tree.dof_names[i] + "' has a zero screw");
      K.R = rotation_onto_z(v / l);
      X.linear = l;
    }
    aligned.alignment[i] = K;
    out.screw[i] = X.vector();  // = Ad_{K^-1} X up to round-off
    const Mat6 Ad_K = se3::Ad(K);
    out.inertia[i] = Ad_K.transpose() * tree.inertia[i] * Ad_K;
    const Pose parent_alignment = tree.parent[i] >= 0 ? aligned.alignment[static_cast<std::size_t>(tree.parent[i])] : Pose{};
    out.reference[i] = se3::compose(se3::compose(se3::inverse(parent_alignment), tree.reference[i]), K);
  }
  for (std::size_t b = 0; b < tree.body_node.size(); ++b)
    if (tree.body_node[b] >= 0)
      out.body_offset[b] = se3::compose(se3::inverse(aligned.alignment[static_cast<std::size_t>(tree.body_node[b])]),
                                        tree.body_offset[b]);
  for (auto& load : out.loads) {
    if (load.node < 0) continue;
    const Pose& K = aligned.alignment[static_cast<std::size_t>(load.node)];
    if (load.world_frame) load.point = se3::transform_point(se3::inverse(K), load.point);
    else load.wrench = se3::Ad(K).transpose() * load.wrench;  // power: W_new . V_new = W_old . Ad_K V_new
  }
  return aligned;
}

}  // namespace liembs
