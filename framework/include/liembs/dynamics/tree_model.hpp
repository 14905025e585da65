#pragma once
// The compiled model every tree algorithm family reads (as Pinocchio's Model): const after
// construction, the same for every representation. Each bound evaluator owns one TreeModel
// and its family's workspace (a plain struct); the families are free functions over
// (model, workspace) with the representation policy as template argument:
//   kinematics_algorithms.hpp          kinematics and Jacobians (TreeWorkspace<Policy>)
//   recursive_algorithms.hpp           RNEA, ABA, CRBA (+ Cholesky), Coriolis matrix
//   derivative_algorithms.hpp          partial derivatives of ID/FD, the regressor
//   geometric_derivative_algorithms.hpp derivatives with respect to the joints' geometry
//   higher_order_algorithms.hpp        higher-order time derivatives (paper 003)
//   centroidal_algorithms.hpp          centre of mass, its Jacobian, the centroidal momentum matrix
//
// The kernels run on the tree with node frames aligned to the joint screws
// (align_node_frames): each joint motion is a rotation about z and/or a shift along z,
// computed with one sincos (joint_pose below).
#include <liembs/dynamics/kernel_types.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/sincos.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace liembs {

struct TreeModel {
  explicit TreeModel(std::shared_ptr<const KinematicTree> tree)
      : original(std::move(tree)), aligned(align_node_frames(*original)), nodes(aligned.tree) {
    const auto n = static_cast<std::size_t>(nodes.dof());
    for (const auto& load : nodes.loads) world_loads = world_loads || load.world_frame;
    for (const Mat6& M : nodes.inertia) {
      rigid.push_back(RigidInertia::from_matrix(M));
      centroidal.push_back(CentroidalInertia::from(rigid.back()));
    }
    base_rigid = RigidInertia::from_matrix(nodes.base_inertia);
    for (const Pose& B : nodes.reference) {
      reference_columns.push_back((Vec6() << B.R.col(0), B.R.col(1)).finished());
      reference_columns_turned.push_back((Vec6() << B.R.col(1), -B.R.col(0)).finished());
      reference_rest.push_back((Vec6() << B.R.col(2), B.r).finished());
      reference_shift.push_back((Vec6() << Vec3::Zero(), B.R.col(2)).finished());
    }
    for (std::size_t k = 0; k < n; ++k) {
      ancestors_begin.push_back(ancestors_list.size());
      for (int j = nodes.parent[k]; j >= 0; j = nodes.parent[static_cast<std::size_t>(j)]) ancestors_list.push_back(j);
    }
    ancestors_begin.push_back(ancestors_list.size());
    // CRBA writes M_ij for i, j related (one an ancestor of the other); on a tree with
    // branches the others are zero.
    branched = ancestors_list.size() != n * (n - 1) / 2;
  }
  // `nodes` refers into `aligned`: a model is neither copied nor moved.
  TreeModel(const TreeModel&) = delete;
  TreeModel& operator=(const TreeModel&) = delete;

  const KinematicTree& tree() const { return *original; }
  int base_offset() const { return nodes.floating_base ? 6 : 0; }
  // The ancestors of node k, nearest first.
  std::span<const int> ancestors(std::size_t k) const {
    return {ancestors_list.data() + ancestors_begin[k], ancestors_list.data() + ancestors_begin[k + 1]};
  }

  void check_sizes(const TreeState& state, const Eigen::VectorXd* vector, const char* what) const {
    const auto n = static_cast<Eigen::Index>(nodes.dof());
    if (state.q.size() != n || state.qd.size() != n)
      throw Error("tree state has " + std::to_string(state.q.size()) + " coordinates and " +
                  std::to_string(state.qd.size()) + " rates; the tree has " + std::to_string(n) + " degrees of freedom");
    if (vector && vector->size() != nodes.velocity_dimension())
      throw Error(std::string(what) + " has " + std::to_string(vector->size()) + " entries; expected " +
                  std::to_string(nodes.velocity_dimension()));
  }

  std::shared_ptr<const KinematicTree> original;  // as the user compiled it
  AlignedTree aligned;
  const KinematicTree& nodes;  // aligned.tree: the node frames the kernels work in
  bool world_loads = false;    // a load given in the world frame needs the node poses
  bool branched = false;       // some degrees of freedom are unrelated (CRBA's zeros)
  // The ancestors of node k, nearest first: ancestors_list[ancestors_begin[k] .. ancestors_begin[k + 1]).
  std::vector<int> ancestors_list;
  std::vector<std::size_t> ancestors_begin;
  // Of the reference poses B_i = (R, r) (joint_pose): (B_0; B_1), (B_1; -B_0), (B_2; r), (0; B_2).
  std::vector<Vec6> reference_columns, reference_columns_turned, reference_rest, reference_shift;
  std::vector<RigidInertia> rigid;            // node inertias in the node frames
  std::vector<CentroidalInertia> centroidal;  // the same about the centres of mass
  RigidInertia base_rigid;                    // the floating base's, in its frame
};

// C_{parent,k} = B_k exp(X_k q) for an aligned screw X_k = (0, 0, a, 0, 0, l): B_k times a
// rotation about z by a q and a shift along z by l q. Written into C as two 6-vectors of
// its 12 numbers (R column by column, then r), in pairs (types.hpp, "Pairs"):
// R's first two columns (B_0 cos + B_1 sin, B_1 cos - B_0 sin), then (B_2, r_B + B_2 l q).
// (Written column by column instead, RNEA measured about 5% slower.)
LIEMBS_STRONG_INLINE void joint_pose(const TreeModel& model, std::size_t k, double q, Pose& C) {
  static_assert(sizeof(Pose) == 12 * sizeof(double), "Pose is R then r, unpadded");
  const AxialScrew& X = model.aligned.axial[k];
  Eigen::Map<Vec6, Eigen::Unaligned> rotated(C.R.data()), rest(C.R.data() + 6);
  if (X.angular != 0.0) {
    const SinCos angle = sincos(X.angular * q);
    rotated = angle.cos * model.reference_columns[k] + angle.sin * model.reference_columns_turned[k];
  } else {
    rotated = model.reference_columns[k];
  }
  if (X.linear != 0.0) rest = model.reference_rest[k] + model.reference_shift[k] * (X.linear * q);
  else rest = model.reference_rest[k];
}

}  // namespace liembs
