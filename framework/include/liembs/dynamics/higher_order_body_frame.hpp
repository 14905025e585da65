#pragma once
// H-GRNE (paper 003's higher-order inverse dynamics) in body-fixed twists, the form the
// paper names as future work, run by the body-fixed representation
// (higher_order_algorithms.hpp; docs/higher-order.md, "Representations").
//
// Every quantity is carried as its truncated Taylor series in time, x_k = x^(k)/k! (no
// binomial weights; a product's series is the Cauchy sum (xy)_k = sum_j x_j y_(k-j)).
// In the aligned node frames (kinematic_tree.hpp) the joint motion is a rotation about z by
// a q(t) and a shift along z by l q(t), after the constant reference pose B_i, so the only
// time-dependent transform of a node is that screw motion: its series needs the series of
// cos(a q) and sin(a q) (2 products per term) and each twist or wrench it moves costs 8 to 10
// products per term, where the spatial form carries the derivatives of every screw (a
// bracket, 18 products per term) and of every spatial inertia (61). The body inertias are
// constant, so the momenta Pi_k = M V_k cost nothing per term, and the Newton-Euler
// equation in the body frame (000 eq. 66, W = M V' - ad^T_V M V) is one coadjoint product
// per term:
//   V_i,k = Ad^-1_{Z_i} (Ad^-1_{B_i} V_p)_k + X_i (k+1) q_i,(k+1)             (001 eq. 4, 000 eq. 67a)
//   W_i,k = (k+1) Pi_i,(k+1) - sum_{j<=k} ad^T_{V_i,j} Pi_i,(k-j) - W_app,i,k + sum_c (Ad^-T_{C_p,c} W_c)_k
//   tau_i,k = X_i . W_i,k,   tau^(k) = k! tau_k
// Gravity, as in the spatial form, through a freely falling frame: the base body twist seen
// from it is V*(t) = V(t) - t gamma(t), gamma = Ad^-1_{C(t)} (0; g), gamma' = -[V, gamma], so
// V*_k = V_k - gamma_(k-1); a fixed base has V*_1 = (0; -g). Body-frame wrenches are the
// same in both frames, and the base rows are the base's body-frame wrench directly.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/representations.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/sincos.hpp>

#include <Eigen/Geometry>

#include <vector>

namespace liembs::higher_order_kernels {

// The Taylor series of cos(theta(t)) and sin(theta(t)) from that of theta, up to order K:
// c' = -s theta', s' = c theta', so k c_k = -sum_{j=1..k} j theta_j s_(k-j) and likewise s_k.
LIEMBS_STRONG_INLINE void sincos_series(const double* theta, int K, double* c, double* s) {
  const SinCos angle = sincos(theta[0]);
  c[0] = angle.cos;
  s[0] = angle.sin;
  for (int k = 1; k <= K; ++k) {
    double dc = 0.0, ds = 0.0;
    for (int j = 1; j <= k; ++j) {
      const double rate = j * theta[j];
      dc -= rate * s[k - j];
      ds += rate * c[k - j];
    }
    c[k] = dc / k;
    s[k] = ds / k;
  }
}

class BodyFrameInverseDynamics {
 public:
  BodyFrameInverseDynamics(const KinematicTree& nodes, const std::vector<AxialScrew>& axial)
      : nodes_(nodes), axial_(axial), n_(nodes.dof()) {
    for (const Mat6& M : nodes.inertia) rigid_.push_back(RigidInertia::from_matrix(M));
    rigid_.push_back(nodes.floating_base ? RigidInertia::from_matrix(nodes.base_inertia) : RigidInertia{});
    gravity_twist_ << 0.0, 0.0, 0.0, nodes.gravity;
    for (const auto& load : nodes.loads) world_loads_ = world_loads_ || load.world_frame;
  }

  // rates: u^(1..r+1) (nv x (r+1)); forces: tau^(0..r), as HigherOrderDynamics::inverse_dynamics.
  void compute(const TreeState& state, const Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) {
    const int r = static_cast<int>(rates.cols()) - 1, K = r + 1, offset = nodes_.floating_base ? 6 : 0;
    reserve(r);
    root_motion(state, rates, K);
    for (int i = 0; i < n_; ++i) {
      double* qi = &q(i, 0);
      qi[0] = state.q(i);
      qi[1] = state.qd(i);
      for (int m = 2; m <= K + 1; ++m) qi[m] = rates(offset + i, m - 2) * inverse_factorial_[ui(m)];
      node_twists(i, K);
    }
    if (world_loads_) world_rotations(state);
    for (int i = 0; i <= n_; ++i) body_wrenches(i, r);
    subtract_loads(r);
    forces.resize(nodes_.velocity_dimension(), r + 1);
    for (int i = n_ - 1; i >= 0; --i) {
      const AxialScrew& X = axial_[ui(i)];
      for (int k = 0; k <= r; ++k) forces(offset + i, k) = factorial_[ui(k)] * screw_dot(X, W(i, k));
      const int p = nodes_.parent[ui(i)];
      if (p >= 0 || nodes_.floating_base) wrench_to_parent(i, p >= 0 ? p : n_, r);
    }
    if (nodes_.floating_base)
      for (int k = 0; k <= r; ++k) forces.col(k).head<6>() = factorial_[ui(k)] * W(n_, k);
  }

 private:
  static std::size_t ui(int i) { return static_cast<std::size_t>(i); }

  void reserve(int r) {
    if (r <= capacity_) return;
    capacity_ = r;
    stride_ = r + 3;
    const auto sequences = ui((n_ + 1) * stride_);
    for (auto* sequence : {&V_, &Pi_, &W_}) sequence->assign(sequences, Vec6::Zero());
    q_.assign(sequences, 0.0);
    scratch_.assign(ui(stride_), Vec6::Zero());
    gamma_.assign(ui(stride_), Vec6::Zero());
    load_series_.assign(ui(stride_), Vec6::Zero());
    cos_.assign(sequences, 0.0);
    sin_.assign(sequences, 0.0);
    angle_.assign(ui(stride_), 0.0);
    factorial_.assign(ui(stride_ + 1), 1.0);
    inverse_factorial_.assign(ui(stride_ + 1), 1.0);
    for (int m = 1; m <= stride_; ++m) {
      factorial_[ui(m)] = factorial_[ui(m - 1)] * m;
      inverse_factorial_[ui(m)] = 1.0 / factorial_[ui(m)];
    }
    world_rotation_.resize(ui(n_ + 1));
  }

  // Entry k of node i's series (the root is node n_).
  Vec6& V(int i, int k) { return V_[ui(i * stride_ + k)]; }
  Vec6& Pi(int i, int k) { return Pi_[ui(i * stride_ + k)]; }
  Vec6& W(int i, int k) { return W_[ui(i * stride_ + k)]; }
  double& q(int i, int k) { return q_[ui(i * stride_ + k)]; }
  double& cosine(int i, int k) { return cos_[ui(i * stride_ + k)]; }  // of a_i q_i(t)
  double& sine(int i, int k) { return sin_[ui(i * stride_ + k)]; }

  // The root's twist series in the falling frame, orders 0..K.
  void root_motion(const TreeState& state, const Eigen::MatrixXd& rates, int K) {
    if (!nodes_.floating_base) {
      for (int k = 0; k <= K; ++k) V(n_, k).setZero();
      V(n_, 1) = -gravity_twist_;
      return;
    }
    for (int k = 0; k <= K; ++k)
      V(n_, k) = k == 0 ? Vec6(state.base_twist) : Vec6(rates.col(k - 1).head<6>() * inverse_factorial_[ui(k)]);
    // gamma = Ad^-1_C (0; g), k gamma_k = -sum_{j<k} [V_j, gamma_(k-1-j)] (real twist)
    gamma_[0] << Vec3::Zero(), state.base.R.transpose() * nodes_.gravity;
    for (int k = 1; k < K; ++k) {
      Vec6 sum = se3::bracket(V(n_, 0), gamma_[ui(k - 1)]);
      for (int j = 1; j < k; ++j) sum += se3::bracket(V(n_, j), gamma_[ui(k - 1 - j)]);
      gamma_[ui(k)] = sum * (-1.0 / k);
    }
    for (int k = 1; k <= K; ++k) V(n_, k) -= gamma_[ui(k - 1)];
  }

  // V_i,k, k = 0..K, from the parent's: the constant reference pose, then the joint's screw
  // motion Z(t) (rotation about z by theta = a q, shift along z by d = l q), then X q'.
  //   Ad^-1_{(R, p)} (w, v) = (R^T w, R^T (v - p x w))
  LIEMBS_STRONG_INLINE void node_twists(int i, int K) {
    const auto k_i = ui(i);
    const int p = nodes_.parent[k_i];
    const Pose& B = nodes_.reference[k_i];
    const AxialScrew& X = axial_[k_i];
    const double* qi = &q(i, 0);
    Vec6* Y = scratch_.data();
    for (int k = 0; k <= K; ++k) {
      const Vec6& parent_twist = V(p >= 0 ? p : n_, k);
      const Vec3 w = parent_twist.head<3>();
      Y[k].head<3>().noalias() = B.R.transpose() * w;
      Y[k].tail<3>().noalias() = B.R.transpose() * (parent_twist.tail<3>() - B.r.cross(w));
    }
    if (X.linear != 0.0)  // v - p x w = (v_x + d w_y, v_y - d w_x, v_z), Cauchy in d = l q (only v changes)
      for (int k = 0; k <= K; ++k)
        for (int j = 0; j <= k; ++j) {
          const double d = X.linear * qi[j];
          Y[k](3) += d * Y[k - j](1);
          Y[k](4) -= d * Y[k - j](0);
        }
    if (X.angular != 0.0) {  // R_z^T (x, y, z) = (c x + s y, -s x + c y, z), Cauchy in (c, s)
      for (int k = 0; k <= K; ++k) angle_[ui(k)] = X.angular * qi[k];
      const double *cos_q = &cosine(i, 0), *sin_q = &sine(i, 0);
      sincos_series(angle_.data(), K, &cosine(i, 0), &sine(i, 0));
      for (int k = 0; k <= K; ++k) {
        Vec6 out;
        out(2) = Y[k](2);
        out(5) = Y[k](5);
        double a0 = 0.0, a1 = 0.0, b0 = 0.0, b1 = 0.0;
        for (int j = 0; j <= k; ++j) {
          const double c = cos_q[j], s = sin_q[j];
          const Vec6& y = Y[k - j];
          a0 += c * y(0) + s * y(1);
          a1 += c * y(1) - s * y(0);
          b0 += c * y(3) + s * y(4);
          b1 += c * y(4) - s * y(3);
        }
        out(0) = a0, out(1) = a1, out(3) = b0, out(4) = b1;
        V(i, k) = out;
      }
    } else {
      for (int k = 0; k <= K; ++k) V(i, k) = Y[k];
    }
    for (int k = 0; k <= K; ++k) add_screw(V(i, k), X, (k + 1) * qi[k + 1]);
  }

  // Pi_k = M V_k (k = 0..r+1) and W_k = (k+1) Pi_(k+1) - sum_{j<=k} ad^T_{V_j} Pi_(k-j)
  // (k = 0..r): the k-th Taylor coefficient of M V' - ad^T_V M V.
  LIEMBS_STRONG_INLINE void body_wrenches(int i, int r) {
    const RigidInertia& M = rigid_[ui(i)];
    if (i == n_ && !nodes_.floating_base) return;
    for (int k = 0; k <= r + 1; ++k) Pi(i, k) = M * V(i, k);
    for (int k = 0; k <= r; ++k) {
      Vec6 sum = (k + 1) * Pi(i, k + 1);
      for (int j = 0; j <= k; ++j) sum += representations::momentum_rate_bias(V(i, j), Pi(i, k - j));
      W(i, k) = sum;
    }
  }

  // Adds node i's wrench series, moved into its parent's frame, to the parent's:
  //   Ad^-T_{(R, p)} (m, f) = (R m + p x R f, R f), first Z(t) (Cauchy), then B_i.
  LIEMBS_STRONG_INLINE void wrench_to_parent(int i, int p, int r) {
    const auto k_i = ui(i);
    const Pose& B = nodes_.reference[k_i];
    const AxialScrew& X = axial_[k_i];
    const double* qi = &q(i, 0);
    Vec6* Y = scratch_.data();
    if (X.angular != 0.0) {  // R_z (x, y, z) = (c x - s y, s x + c y, z), the series of node_twists
      const double *cos_q = &cosine(i, 0), *sin_q = &sine(i, 0);
      for (int k = 0; k <= r; ++k) {
        Vec6 out;
        out(2) = W(i, k)(2);
        out(5) = W(i, k)(5);
        double a0 = 0.0, a1 = 0.0, b0 = 0.0, b1 = 0.0;
        for (int j = 0; j <= k; ++j) {
          const double c = cos_q[j], s = sin_q[j];
          const Vec6& y = W(i, k - j);
          a0 += c * y(0) - s * y(1);
          a1 += c * y(1) + s * y(0);
          b0 += c * y(3) - s * y(4);
          b1 += c * y(4) + s * y(3);
        }
        out(0) = a0, out(1) = a1, out(3) = b0, out(4) = b1;
        Y[k] = out;
      }
    } else {
      for (int k = 0; k <= r; ++k) Y[k] = W(i, k);
    }
    if (X.linear != 0.0)  // m += p x f = (-d f_y, d f_x, 0), Cauchy in d = l q (only m changes)
      for (int k = 0; k <= r; ++k)
        for (int j = 0; j <= k; ++j) {
          const double d = X.linear * qi[j];
          Y[k](0) -= d * Y[k - j](4);
          Y[k](1) += d * Y[k - j](3);
        }
    for (int k = 0; k <= r; ++k) {
      const Vec3 force = B.R * Y[k].tail<3>();
      W(p, k).head<3>() += B.R * Y[k].head<3>() + B.r.cross(force);
      W(p, k).tail<3>() += force;
    }
  }

  // World rotations of the nodes (for world-frame loads only).
  void world_rotations(const TreeState& state) {
    world_rotation_[ui(n_)] = nodes_.floating_base ? state.base.R : Mat3::Identity();
    for (int i = 0; i < n_; ++i) {
      const int p = nodes_.parent[ui(i)];
      const Mat3& parent = world_rotation_[ui(p >= 0 ? p : n_)];
      const Mat3 joint = Eigen::AngleAxisd(axial_[ui(i)].angular * q(i, 0), Vec3::UnitZ()).toRotationMatrix();
      world_rotation_[ui(i)] = parent * nodes_.reference[ui(i)].R * joint;
    }
  }

  // Subtracts the model's constant loads: a body-frame one at order 0; a world-frame one
  // (pure moment m, force f at the node point x) is (R^T m + x x R^T f, R^T f) in the body
  // frame, with z = R^T y: z' = -w x z, k z_k = -sum_{j<k} w_j x z_(k-1-j).
  void subtract_loads(int r) {
    for (const auto& load : nodes_.loads) {
      const int node = load.node >= 0 ? load.node : n_;
      if (node == n_ && !nodes_.floating_base) continue;
      if (!load.world_frame) {
        W(node, 0) -= load.wrench;
        continue;
      }
      const Mat3& R = world_rotation_[ui(node)];
      Vec6* z = load_series_.data();
      z[0] << R.transpose() * load.wrench.head<3>(), R.transpose() * load.wrench.tail<3>();
      for (int k = 1; k <= r; ++k) {
        Vec6 sum = Vec6::Zero();
        for (int j = 0; j < k; ++j) {
          const Vec3 w = V(node, j).head<3>();
          sum.head<3>() += w.cross(z[k - 1 - j].head<3>());
          sum.tail<3>() += w.cross(z[k - 1 - j].tail<3>());
        }
        z[k] = sum * (-1.0 / k);
      }
      for (int k = 0; k <= r; ++k) {
        W(node, k).head<3>() -= z[k].head<3>() + load.point.cross(z[k].tail<3>());
        W(node, k).tail<3>() -= z[k].tail<3>();
      }
    }
  }

  const KinematicTree& nodes_;
  const std::vector<AxialScrew>& axial_;
  int n_ = 0, capacity_ = -1, stride_ = 0;
  bool world_loads_ = false;
  Vec6 gravity_twist_ = Vec6::Zero();
  std::vector<RigidInertia> rigid_;  // node inertias in the node frames, the base's last
  std::vector<Vec6> V_, Pi_, W_, scratch_, gamma_, load_series_;
  std::vector<double> q_, cos_, sin_, angle_, factorial_, inverse_factorial_;
  std::vector<Mat3> world_rotation_;
};

}  // namespace liembs::higher_order_kernels
