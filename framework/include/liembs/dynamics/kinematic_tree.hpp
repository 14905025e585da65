#pragma once
// The model compiled for the recursive algorithms (papers 000/001): one node per joint
// degree of freedom, numbered so that every node comes after its parent. A node's frame is
// the frame of the joint's child body; the relative motion of node i with respect to its
// parent node is C_{parent,i} = B_i exp(X_i q_i) (001 eq. 4), with B_i the reference pose of
// the node in its parent's frame (identity for the second and later DoF of a joint) and X_i
// the node's screw in its own frame. Bodies attached by fixed joints are merged into the
// node of their parent. A floating base is the root body on the run's group; its node
// index is -1, like the world for a fixed base.
#include <liembs/dynamics/kernel_types.hpp>
#include <liembs/lie/types.hpp>
#include <liembs/model/model.hpp>

#include <string>
#include <vector>

namespace liembs {

struct KinematicTree {
  bool floating_base = false;
  std::size_t base_body = 0;      // the floating body (if floating_base)
  Mat6 base_inertia = Mat6::Zero();  // spatial inertia of the base body frame, fixed children merged

  // Per node (one per degree of freedom), in an order where parent[i] < i.
  std::vector<int> parent;            // parent node, -1 for the root (world or floating base)
  std::vector<Pose> reference;        // B_i
  std::vector<Vec6> screw;            // X_i, in the node frame
  std::vector<Mat6> inertia;          // M_i^b about the node frame origin (zero for inner DoF of a joint)
  std::vector<std::vector<int>> children;
  std::vector<std::string> dof_names;  // "joint" or "joint[k]" for multi-DoF joints
  std::vector<std::size_t> dof_joint;  // model joint of each node

  // Where each body sits: frame of node body_node[b] (-1: root frame) times body_offset[b].
  std::vector<int> body_node;
  std::vector<Pose> body_offset;

  // Gravity (world frame) for the base-acceleration trick (000 rule R3).
  Vec3 gravity = Vec3::Zero();

  // The model's constant loads, attached to nodes (node -1: the floating base frame).
  struct Load {
    int node = -1;
    bool world_frame = false;
    Vec6 wrench = Vec6::Zero();  // body frame: (moment about the node origin, force) in node coordinates;
                                 // world frame: (pure moment, force) in world coordinates
    Vec3 point = Vec3::Zero();   // world frame: the point of application (COM) in node coordinates
  };
  std::vector<Load> loads;

  // Joints left out of the spanning tree to open closed loops (with compile_tree(model,
  // true)); they become loop-closure constraints.
  std::vector<std::size_t> cut_joints;

  // Initial joint coordinates and rates of the model, in node order.
  Eigen::VectorXd initial_position, initial_velocity;

  int dof() const { return static_cast<int>(parent.size()); }
  // Dimension of the generalized velocity (6 base twist components if floating, then q').
  int velocity_dimension() const { return dof() + (floating_base ? 6 : 0); }
};

// The tree with every node frame moved onto its joint screw, for the recursive kernels: node
// i's frame becomes F_i K_i, with K_i placing the z axis on the screw axis, so that
// X_i = (0, 0, a, 0, 0, l) (revolute: l = 0; helical: l = pitch a; prismatic: a = 0) and the
// joint motion exp(X_i q) is a rotation about z by a q and a shift along z by l q, needing
// one sincos. References become K_parent^-1 B_i K_i, inertias Ad_K^T M Ad_K, and body
// offsets and loads follow; generalized coordinates, velocities and forces are unchanged.
struct AlignedTree {
  KinematicTree tree;             // in the aligned node frames; tree.screw[i] = axial[i].vector()
  std::vector<AxialScrew> axial;  // per node: the aligned screw X_i
  std::vector<Pose> alignment;    // per node: K_i, the aligned frame in the node frame of the input tree
};
AlignedTree align_node_frames(const KinematicTree& tree);

// Compiles a model into a tree; throws ModelError if the model is not a single tree
// (require_single_tree; with `cut_loops` the joints closing loops are set aside in
// cut_joints instead) or a joint DoF carries no mass anywhere below it.
KinematicTree compile_tree(const Model& model, bool cut_loops = false);

}  // namespace liembs
