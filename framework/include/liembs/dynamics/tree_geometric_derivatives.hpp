#pragma once
// What a twist-representation plugin provides for the derivatives of inverse dynamics with
// respect to the geometric parameters of the joints (paper 000 section 6.2; the algorithm is
// in geometric_derivative_algorithms.hpp, the conventions in docs/derivatives.md). One
// virtual call per algorithm call.
//
// Parameters, per moving joint j (node i its first degree of freedom, p the parent node):
//   - its reference configuration B_i, the child body frame in the parent's frame at q = 0,
//     perturbed on the group as B_i exp(xi), xi = (omega, v) a twist increment in the child
//     body frame (6 columns per joint): the child and everything below it move rigidly with
//     the joint's axes;
//   - the screw coordinates X_k = (omega; v) of each of its degrees of freedom k, in the
//     child body frame at q = 0 (000's ^iX_i = Ad_{A_child}^-1 Y_k), as six free coordinates
//     (6 columns per degree of freedom): the gradient of tau over X in R^6, exp(X q) being
//     defined for every X. A unit axis is a constraint on X (revolute: |omega| = 1,
//     omega . v = 0; helical: |omega| = 1, omega . v = pitch; prismatic: omega = 0, |v| = 1);
//     the derivative along any parameterization that keeps it is this gradient times dX/ds.
// Bodies welded by fixed joints belong to the body they are welded to (their joint offsets
// have no columns).
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>

#include <memory>
#include <string_view>
#include <vector>

namespace liembs {

struct GeometricDerivatives {
  Eigen::VectorXd force;               // tau = ID(q, u, u')
  Eigen::MatrixXd force_by_reference;  // d tau / d xi: nv x 6 per moving joint, joints in node order
  Eigen::MatrixXd force_by_screw;      // d tau / d X: nv x 6 per degree of freedom, in node order
};

// The first node of every moving joint, in node order: the columns of force_by_reference.
inline std::vector<int> joint_first_nodes(const KinematicTree& tree) {
  std::vector<int> nodes;
  for (int i = 0; i < tree.dof(); ++i)
    if (i == 0 || tree.dof_joint[static_cast<std::size_t>(i)] != tree.dof_joint[static_cast<std::size_t>(i - 1)])
      nodes.push_back(i);
  return nodes;
}

class TreeGeometricDerivatives {
 public:
  virtual ~TreeGeometricDerivatives();
  virtual std::string_view representation() const = 0;
  virtual const KinematicTree& tree() const = 0;

  // tau = ID(q, u, u') and its derivatives with respect to the joints' references and screws.
  virtual void inverse_dynamics_geometric_derivatives(const TreeState& state, const Eigen::VectorXd& acceleration,
                                                      GeometricDerivatives& out) = 0;
};

}  // namespace liembs
