#pragma once
// An independent reference for the higher-order inverse dynamics (paper 003, H-GRNE): a plain
// Newton-Euler inverse dynamics written straight from the model (bodies, reference poses A_i,
// world-frame joint screws Y at q = 0) in truncated Taylor arithmetic (taylor_jets.hpp), and
// evaluated along the polynomial trajectory whose Taylor coefficients at t0 are exactly the
// given inputs:
//   q_i(t) = sum_k q_i^(k) t^k / k!,   base body twist V^b(t) = sum_k V^b^(k) t^k / k!,
//   base pose C(t) from C' = C [V^b] with C(0) the state's (the reconstruction, its exact jet),
//   every other body C_child = C_parent A_parent^-1 exp([Y_1] q_1) ... exp([Y_k] q_k) A_child
//   (model.hpp), body twists [V_i^b] = C_i^-1 C_i',
//   body wrenches W_i^b = M_i V_i^b' - ad^T_{V_i^b} M_i V_i^b - gravity - loads,
//   summed over subtrees in the world frame, paired with each degree of freedom's current
//   world screw, and the base's mapped to its body frame.
// The coefficients of the result are the exact time derivatives of the joint forces and of
// the base's body-frame wrench to round-off. None of the algorithms' machinery (kinematic
// tree kernels, representations, falling frame, frame transports) is used; the compiled
// tree only gives the order of the degrees of freedom.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/model/model.hpp>

#include <taylor_jets.hpp>

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace liembs::testing::jets {

using JetVector = std::array<Jet, 3>;
using JetTwist = std::array<Jet, 6>;  // (angular; linear), (moment; force)

struct JetPose {
  JetMatrix R;
  JetVector p;
};

inline JetVector operator+(const JetVector& a, const JetVector& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline JetVector operator-(const JetVector& a, const JetVector& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline JetVector cross(const JetVector& a, const JetVector& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline Jet dot(const JetVector& a, const JetVector& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline JetVector operator*(const JetMatrix& R, const JetVector& x) {
  JetVector out;
  for (int i = 0; i < 3; ++i) out[i] = R[i][0] * x[0] + R[i][1] * x[1] + R[i][2] * x[2];
  return out;
}
inline JetVector transpose_times(const JetMatrix& R, const JetVector& x) {
  JetVector out;
  for (int i = 0; i < 3; ++i) out[i] = R[0][i] * x[0] + R[1][i] * x[1] + R[2][i] * x[2];
  return out;
}
inline JetVector constant(const Vec3& x) { return {Jet::constant(x(0)), Jet::constant(x(1)), Jet::constant(x(2))}; }
inline JetMatrix constant(const Mat3& R) {
  JetMatrix out;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[i][j] = Jet::constant(R(i, j));
  return out;
}
inline JetPose constant(const Pose& pose) { return {constant(pose.R), constant(pose.r)}; }
inline JetPose compose(const JetPose& a, const JetPose& b) { return {multiply(a.R, b.R), a.R * b.p + a.p}; }
inline JetMatrix hat(const JetVector& w) {
  JetMatrix out;
  out[0][1] = Jet::constant(0.0) - w[2];
  out[0][2] = w[1];
  out[1][0] = w[2];
  out[1][2] = Jet::constant(0.0) - w[0];
  out[2][0] = Jet::constant(0.0) - w[1];
  out[2][1] = w[0];
  return out;
}
// The antiderivative vanishing at t0.
inline Jet integral(const Jet& x) {
  Jet out;
  for (int k = 0; k + 1 < jet_size; ++k) out.c[k + 1] = x.c[k] / (k + 1);
  return out;
}

// exp([Y] q) for a world screw Y = (w; v) and a jet angle q: with |w| = a > 0, the unit axis
// e = w / a, u = v / a, theta = a q: R = 1 + sin theta e~ + (1 - cos theta) e~^2,
// p = (theta 1 + (1 - cos theta) e~ + (theta - sin theta) e~^2) u; w = 0: R = 1, p = v q.
inline JetPose screw_exponential(const Vec6& screw, const Jet& q) {
  const Vec3 w = screw.head<3>(), v = screw.tail<3>();
  JetPose out;
  out.R = constant(Mat3(Mat3::Identity()));
  const double a = w.norm();
  if (a == 0.0) {
    for (int i = 0; i < 3; ++i) out.p[i] = v(i) * q;
    return out;
  }
  const Vec3 e = w / a, u = v / a;
  const Jet theta = a * q;
  const auto [s, c] = sincos(theta);
  const Jet one_minus_c = Jet::constant(1.0) - c, theta_minus_s = theta - s;
  Mat3 E = Mat3::Zero();
  E << 0.0, -e(2), e(1), e(2), 0.0, -e(0), -e(1), e(0), 0.0;
  const Mat3 E2 = E * E;
  const Vec3 Eu = E * u, E2u = E2 * u;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) out.R[i][j] = (i == j ? 1.0 : 0.0) * Jet::constant(1.0) + E(i, j) * s + E2(i, j) * one_minus_c;
    out.p[i] = u(i) * theta + Eu(i) * one_minus_c + E2u(i) * theta_minus_s;
  }
  return out;
}

// The pose jet of C' = C [V^b], C(0) = start: fixed-point iteration, each pass exact to one
// more coefficient.
inline JetPose integrate_body_twist(const Pose& start, const JetTwist& body_twist) {
  const JetPose initial = constant(start);
  const JetVector w{body_twist[0], body_twist[1], body_twist[2]}, v{body_twist[3], body_twist[4], body_twist[5]};
  const JetMatrix w_hat = hat(w);
  JetPose pose = initial;
  for (int pass = 0; pass < jet_size; ++pass) {
    const JetMatrix rate = multiply(pose.R, w_hat);
    const JetVector velocity = pose.R * v;
    JetPose next;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) next.R[i][j] = initial.R[i][j] + integral(rate[i][j]);
      next.p[i] = initial.p[i] + integral(velocity[i]);
    }
    pose = next;
  }
  return pose;
}

inline JetTwist times(const Mat6& M, const JetTwist& x) {
  JetTwist out;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) out[i] = out[i] + M(i, j) * x[j];
  return out;
}

// The jet of a sequence of derivatives x^(0..), c_k = x^(k) / k!.
inline Jet from_derivatives(const std::vector<double>& derivatives) {
  Jet out;
  for (std::size_t k = 0; k < derivatives.size() && k < static_cast<std::size_t>(jet_size); ++k)
    out.c[k] = derivatives[k] / std::tgamma(static_cast<double>(k) + 1.0);
  return out;
}

// The derivatives 0..r of the generalized forces (body-frame base wrench if the base floats,
// joint forces, in the tree's order) for the state, the rates u^(1..r+1) (nv x (r+1), column
// k = u^(k+1), as HigherOrderDynamics::inverse_dynamics) and, optionally, the derivatives
// of applied wrenches: `load_rates[l]` (6 x (r+1)), column k the k-th derivative of
// model.loads[l]'s (moment; force) components in its own frame, column 0 its value (which
// replaces the model's).
inline Eigen::MatrixXd jet_inverse_dynamics(const Model& model, const KinematicTree& tree, const TreeState& state,
                                            const Eigen::MatrixXd& rates,
                                            const std::vector<Eigen::MatrixXd>* load_rates = nullptr) {
  const int r = static_cast<int>(rates.cols()) - 1, n = tree.dof(), offset = tree.floating_base ? 6 : 0;
  if (r + 3 > jet_size) throw Error("jet_inverse_dynamics: order " + std::to_string(r) + " needs longer jets");
  // Joint coordinate jets, per model joint and DoF (the tree names DoF k of a joint "joint[k]").
  std::vector<std::vector<Jet>> joint_q(model.joints.size());
  std::vector<std::vector<int>> joint_nodes(model.joints.size());
  for (int i = 0; i < n; ++i) {
    std::vector<double> d{state.q(i), state.qd(i)};
    for (int k = 0; k <= r; ++k) d.push_back(rates(offset + i, k));
    joint_q[tree.dof_joint[static_cast<std::size_t>(i)]].push_back(from_derivatives(d));
    joint_nodes[tree.dof_joint[static_cast<std::size_t>(i)]].push_back(i);
  }
  // Body poses, parents before children.
  std::vector<std::optional<JetPose>> pose(model.bodies.size());
  std::vector<std::size_t> order;  // bodies in the order placed
  std::vector<int> parent_joint(model.bodies.size(), -1);
  if (tree.floating_base) {
    JetTwist twist;
    for (int c = 0; c < 6; ++c) {
      std::vector<double> d{state.base_twist(c)};
      for (int k = 0; k <= r; ++k) d.push_back(rates(c, k));
      twist[c] = from_derivatives(d);
    }
    pose[tree.base_body] = integrate_body_twist(state.base, twist);
    order.push_back(tree.base_body);
  }
  // Per joint DoF, the world screw at the current configuration: Ad_P Y with
  // P = C_parent A_parent^-1 exp(Y_1 q_1) ... exp(Y_{k-1} q_{k-1}).
  std::vector<std::vector<JetTwist>> joint_screws(model.joints.size());
  for (bool placed = true; placed;) {
    placed = false;
    for (std::size_t j = 0; j < model.joints.size(); ++j) {
      const Joint& joint = model.joints[j];
      if (pose[joint.child] || (joint.parent != Joint::world && !pose[joint.parent])) continue;
      JetPose P = joint.parent == Joint::world
                      ? constant(Pose{})
                      : compose(*pose[joint.parent], constant(se3::inverse(model.bodies[joint.parent].reference_pose)));
      for (std::size_t k = 0; k < joint.dof(); ++k) {
        const Vec6& Y = joint.screws[k];
        const JetVector w = P.R * constant(Vec3(Y.head<3>())), v = P.R * constant(Vec3(Y.tail<3>()));
        const JetVector linear = cross(P.p, w) + v;
        joint_screws[j].push_back({w[0], w[1], w[2], linear[0], linear[1], linear[2]});
        P = compose(P, screw_exponential(Y, joint_q[j][k]));
      }
      pose[joint.child] = compose(P, constant(model.bodies[joint.child].reference_pose));
      parent_joint[joint.child] = static_cast<int>(j);
      order.push_back(joint.child);
      placed = true;
    }
  }
  // Body wrenches, in the world frame: W^s = Ad_{C^-1}^T W^b = (R m + p x R f; R f).
  std::vector<JetTwist> world_wrench(model.bodies.size());
  for (const std::size_t b : order) {
    const RigidBody& body = model.bodies[b];
    const JetPose& C = *pose[b];
    const std::array<Jet, 6> twist = body_twist(C.R, C.p);
    JetTwist acceleration;
    for (int c = 0; c < 6; ++c) acceleration[c] = derivative(twist[c]);
    const Mat6 M = body.spatial_inertia();
    const JetTwist momentum = times(M, twist), inertial_rate = times(M, acceleration);
    const JetVector w{twist[0], twist[1], twist[2]}, v{twist[3], twist[4], twist[5]};
    const JetVector mu{momentum[0], momentum[1], momentum[2]}, f{momentum[3], momentum[4], momentum[5]};
    const JetVector moment_bias = cross(w, mu) + cross(v, f), force_bias = cross(w, f);  // -ad^T_V (M V)
    JetVector moment, force;
    for (int i = 0; i < 3; ++i) {
      moment[i] = inertial_rate[i] + moment_bias[i];
      force[i] = inertial_rate[3 + i] + force_bias[i];
    }
    // Gravity: m g at the centre of mass.
    const JetVector weight = transpose_times(C.R, constant(Vec3(body.mass * model.gravity)));
    force = force - weight;
    moment = moment - cross(constant(body.center_of_mass), weight);
    for (std::size_t l = 0; l < model.loads.size(); ++l) {
      const AppliedWrench& load = model.loads[l];
      if (load.body != b) continue;
      std::vector<double> m_d[3], f_d[3];
      for (int i = 0; i < 3; ++i) {
        if (!load_rates) {
          m_d[i].push_back(load.moment(i));
          f_d[i].push_back(load.force(i));
          continue;
        }
        for (int k = 0; k <= r; ++k) {
          m_d[i].push_back((*load_rates)[l](i, k));
          f_d[i].push_back((*load_rates)[l](3 + i, k));
        }
      }
      const JetVector load_moment{from_derivatives(m_d[0]), from_derivatives(m_d[1]), from_derivatives(m_d[2])};
      const JetVector load_force{from_derivatives(f_d[0]), from_derivatives(f_d[1]), from_derivatives(f_d[2])};
      if (load.frame == AppliedWrench::Frame::body) {
        moment = moment - load_moment;
        force = force - load_force;
      } else {  // world frame: a couple and a force at the centre of mass
        const JetVector body_force = transpose_times(C.R, load_force);
        moment = moment - transpose_times(C.R, load_moment) - cross(constant(body.center_of_mass), body_force);
        force = force - body_force;
      }
    }
    const JetVector world_force = C.R * force, world_moment = C.R * moment + cross(C.p, world_force);
    world_wrench[b] = {world_moment[0], world_moment[1], world_moment[2], world_force[0], world_force[1], world_force[2]};
  }
  // Subtree sums (children after parents in `order`) and the generalized forces.
  Eigen::MatrixXd forces = Eigen::MatrixXd::Zero(tree.velocity_dimension(), r + 1);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::size_t b = *it;
    const int j = parent_joint[b];
    if (j < 0) continue;
    const Joint& joint = model.joints[static_cast<std::size_t>(j)];
    for (std::size_t k = 0; k < joint.dof(); ++k) {
      const JetTwist& S = joint_screws[static_cast<std::size_t>(j)][k];
      Jet pairing;
      for (int c = 0; c < 6; ++c) pairing = pairing + S[c] * world_wrench[b][c];
      for (int d = 0; d <= r; ++d) forces(offset + joint_nodes[static_cast<std::size_t>(j)][k], d) = pairing.derivative(d);
    }
    if (joint.parent != Joint::world)
      for (int c = 0; c < 6; ++c) world_wrench[joint.parent][c] = world_wrench[joint.parent][c] + world_wrench[b][c];
  }
  if (tree.floating_base) {  // W^b = Ad_C^T W^s = (R^T (m - p x f); R^T f)
    const JetPose& C = *pose[tree.base_body];
    const JetTwist& W = world_wrench[tree.base_body];
    const JetVector m{W[0], W[1], W[2]}, f{W[3], W[4], W[5]};
    const JetVector body_moment = transpose_times(C.R, m - cross(C.p, f)), body_force = transpose_times(C.R, f);
    for (int d = 0; d <= r; ++d)
      for (int i = 0; i < 3; ++i) {
        forces(i, d) = body_moment[i].derivative(d);
        forces(3 + i, d) = body_force[i].derivative(d);
      }
  }
  return forces;
}

}  // namespace liembs::testing::jets
