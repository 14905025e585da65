#pragma once
// The centroidal family: the centre of mass of a tree, its Jacobian, and the centroidal
// momentum matrix A_G (Orin, Goswami and Lee 2013) with h_G = A_G u.
//
// A family that needs only kinematics: free functions over the model's bodies and a bound
// representation (TreeDynamics: its body poses and body Jacobians), so every representation,
// built in or third-party, gives it without a rebuild and without a change of the plugin
// interface (docs/algorithms.md, "Adding a family").
//
// Conventions: u as in tree_dynamics.hpp; h_G = (k_G, l) is the momentum wrench of the whole
// system in the frame at the centre of mass with world axes (angular momentum about the
// centre of mass, then linear momentum). Per body b with pose C_b = (R_b, r_b), body
// Jacobian J_b (V_b = J_b u) and spatial inertia M_b about its origin (model.hpp):
//   h_b = M_b J_b u                              body frame, about the body origin
//   X_b = [[R_b, (r_b - p_G)~ R_b], [0, R_b]]    moves a body-frame wrench to the COM frame
//   A_G = sum_b X_b M_b J_b,   m p_G = sum_b m_b (r_b + R_b c_b),   J_G = (rows 4-6 of A_G) / m
// since the linear momentum l = m p_G'. About the world origin the angular momentum is
// k_G + p_G x l (what compute_invariants and trajectory.csv report).
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>

#include <span>
#include <vector>

namespace liembs {

struct CentroidalQuantities {
  double mass = 0.0;
  Vec3 center_of_mass = Vec3::Zero();                            // p_G, world frame
  Eigen::Matrix<double, 3, Eigen::Dynamic> center_of_mass_jacobian;  // p_G' = J_G u
  Matrix6X momentum_matrix;                                       // A_G: h_G = A_G u
  Vec6 momentum = Vec6::Zero();                                   // h_G = A_G u (k_G, l)
};

// The family's workspace: the representation's body kinematics and Jacobians.
struct CentroidalWorkspace {
  BodyKinematics kinematics;
  std::vector<Matrix6X> jacobians;
  Eigen::VectorXd zero_acceleration;
};

namespace centroidal {

// The centre of mass of `bodies` at the body poses (world frame), and the total mass.
inline Vec3 center_of_mass(std::span<const RigidBody> bodies, const std::vector<Pose>& poses, double& mass) {
  Vec3 weighted = Vec3::Zero();
  mass = 0.0;
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    mass += bodies[b].mass;
    weighted += bodies[b].mass * (poses[b].r + poses[b].R * bodies[b].center_of_mass);
  }
  if (!(mass > 0.0)) throw ModelError("the centre of mass needs a positive total mass; the bodies' masses sum to " + std::to_string(mass));
  return weighted / mass;
}

// Everything of CentroidalQuantities at `state`, from `dynamics` (a representation bound to
// the tree of the model whose bodies are `bodies`, in model order).
inline void compute(std::span<const RigidBody> bodies, TreeDynamics& dynamics, const TreeState& state,
                    CentroidalWorkspace& w, CentroidalQuantities& out) {
  const KinematicTree& tree = dynamics.tree();
  const int nv = tree.velocity_dimension();
  if (bodies.size() != tree.body_node.size())
    throw Error("centroidal: " + std::to_string(bodies.size()) + " bodies given for a tree of " +
                std::to_string(tree.body_node.size()));
  w.zero_acceleration.setZero(nv);
  dynamics.body_kinematics(state, w.zero_acceleration, w.kinematics);
  dynamics.body_jacobians(state, w.jacobians, nullptr);
  out.center_of_mass = center_of_mass(bodies, w.kinematics.poses, out.mass);
  out.momentum_matrix.setZero(6, nv);
  out.center_of_mass_jacobian.setZero(3, nv);
  out.momentum.setZero();
  if (nv == 0) return;  // a tree without degrees of freedom: no columns (no blocks of empty matrices)
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    const Pose& C = w.kinematics.poses[b];
    // X_b M_b = [[R, d~ R], [0, R]] M_b, d = r_b - p_G: the body's momentum per unit of u.
    const Eigen::Matrix<double, 6, Eigen::Dynamic> body_momentum = bodies[b].spatial_inertia() * w.jacobians[b];
    const Eigen::Matrix<double, 3, Eigen::Dynamic> linear = C.R * body_momentum.bottomRows<3>();
    out.momentum_matrix.topRows<3>().noalias() += C.R * body_momentum.topRows<3>();
    out.momentum_matrix.topRows<3>().noalias() += so3::hat(Vec3(C.r - out.center_of_mass)) * linear;
    out.momentum_matrix.bottomRows<3>() += linear;
  }
  out.center_of_mass_jacobian = out.momentum_matrix.bottomRows<3>() / out.mass;
  // h_G = A_G u with u = (base twist, qd) for a floating base, qd otherwise (no temporary u:
  // GCC 12 reports a false -Wuse-after-free on its storage when this is inlined).
  if (tree.floating_base) {
    out.momentum.noalias() = out.momentum_matrix.leftCols<6>() * state.base_twist;
    out.momentum.noalias() += out.momentum_matrix.rightCols(nv - 6) * state.qd;
  } else {
    out.momentum.noalias() = out.momentum_matrix * state.qd;
  }
}

}  // namespace centroidal
}  // namespace liembs
