#pragma once
// Closed-form (non-recursive) equations of motion of a kinematic tree: the reference the
// recursive algorithms (RNEA, ABA, CRBA, ... in the four twist representations) are tested
// against. Everything here is built from the definitions of papers 000 section 5 and 001
// sections 3-4, by brute force and in O(n^2) or worse; it shares no code with the
// recursions and is not meant to be fast.
//
// Conventions (those of TreeDynamics, liembs/dynamics/tree_dynamics.hpp):
//   - node poses by the product of exponentials along the root-to-node path:
//       C_i = C_root prod_{j on the path, root side first} B_j exp(X_j q_j),
//     C_root = identity (fixed base) or the floating base pose (001 eq. 8);
//   - generalized velocity u = (base body twist (omega, R^T r') if floating, q');
//   - body-fixed node Jacobian J_i (6 x nv, V_i^b = J_i u):
//       joint column j (j an ancestor of i, or i):  J_{i,j} = Ad_{C_i^-1 C_j} X_j     (001 eq. 16)
//       base columns (floating base):               J_{i,base} = Ad_{C_i^-1 C_root}  (6 columns)
//     and zero for the other columns;
//   - its time derivative (000 eqs. 6, 8, extended to trees and to the base columns):
//       Jdot_{i,j} = sum_{k on the path, j < k <= i} [J_{i,j}, J_{i,k}] q'_k
//       Jdot_{i,base e_m} = sum_{k on the path to i} [J_{i,base e_m}, J_{i,k}] q'_k
//     (the base columns behave like six joints preceding every node; they depend on q only,
//     not on the base pose, so the base twist does not enter Jdot);
//   - mass matrix M = sum_i J_i^T M_i J_i + J_root^T M_base J_root (000 eq. 82), with
//     J_root = [1_6, 0] for a floating base;
//   - Coriolis matrix, the skew-preserving factorization of 000 section 6.2:
//       C = sum_i J_i^T (M_i Jdot_i + (M_i ad_{V_i} - ad_{V_i}^T M_i) J_i)   (+ the base term),
//     so that C u = sum_i J_i^T (M_i Jdot_i u - ad_{V_i}^T M_i V_i) and M' - 2C is skew;
//     it is NOT the Christoffel-symbol C (a Coriolis matrix is not unique);
//   - gravity (KinematicTree::gravity, world frame): the body-frame gravity wrench about the
//     node origin is M_i (0; R_i^T g) = (m c x R^T g; m R^T g), so
//       gravity_forces = -sum_i J_i^T M_i (0; R_i^T g)   (+ the base term);
//   - generalized forces: force = M a + C u + gravity_forces (base components: body-frame
//     wrench (moment about the base origin, force)).
//
// Applied loads (Model::loads) are NOT included: compare with the recursive algorithms on
// models without loads.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/lie/types.hpp>

#include <cstddef>
#include <vector>

namespace liembs::closed_form {

// Pose of the root frame: identity for a fixed base, state.base for a floating base.
Pose root_pose(const KinematicTree& tree, const TreeState& state);

// Node poses C_i by the product of exponentials along each root-to-node path.
std::vector<Pose> node_poses(const KinematicTree& tree, const TreeState& state);

// J^b_i (6 x nv): body-fixed twist of node i's frame = J^b_i u.
Matrix6X node_body_jacobian(const KinematicTree& tree, const TreeState& state, int node);
// d/dt J^b_i along the motion (state.qd, state.base_twist).
Matrix6X node_body_jacobian_rate(const KinematicTree& tree, const TreeState& state, int node);

// Generalized velocity u = (base twist if floating, q').
Eigen::VectorXd generalized_velocity(const KinematicTree& tree, const TreeState& state);

// Model bodies (KinematicTree::body_node, body_offset): pose, body Jacobian J^b_b and its
// rate. A body on the root of a fixed base is fixed in the world (zero Jacobian).
std::vector<Pose> body_poses(const KinematicTree& tree, const TreeState& state);
Matrix6X body_jacobian(const KinematicTree& tree, const TreeState& state, std::size_t body);
Matrix6X body_jacobian_rate(const KinematicTree& tree, const TreeState& state, std::size_t body);
// Poses, body-fixed twists J_b u and accelerations J_b a + Jdot_b u of every model body
// (no gravity in the accelerations).
BodyKinematics body_kinematics(const KinematicTree& tree, const TreeState& state,
                               const Eigen::VectorXd& acceleration);

// Kinetic energy 1/2 u^T M u.
double kinetic_energy(const KinematicTree& tree, const TreeState& state);

Eigen::MatrixXd mass_matrix(const KinematicTree& tree, const TreeState& state);
Eigen::MatrixXd coriolis_matrix(const KinematicTree& tree, const TreeState& state);
Eigen::VectorXd gravity_forces(const KinematicTree& tree, const TreeState& state);

// force = M a + C u + gravity_forces.
Eigen::VectorXd inverse_dynamics(const KinematicTree& tree, const TreeState& state,
                                 const Eigen::VectorXd& acceleration);
// a = M^-1 (force - C u - gravity_forces), by a Cholesky factorization of M.
Eigen::VectorXd forward_dynamics(const KinematicTree& tree, const TreeState& state, const Eigen::VectorXd& force);

}  // namespace liembs::closed_form
