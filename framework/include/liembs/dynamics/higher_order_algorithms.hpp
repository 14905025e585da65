#pragma once
// Higher-order time derivatives of the dynamics of a tree (paper 003, reference note
// 003-higher-order.md): H-GRNE (inverse dynamics, Algorithms 1-2), H-GABI (forward dynamics,
// Algorithm 3) and H-GHYB (hybrid dynamics, Algorithm 4), for any order r chosen per call,
// written once over a representation policy and instantiated by the representation plugins
// (representation_component.hpp). O(n r^2); per-node data in preallocated arrays sized for
// the largest order seen (grown only when a call asks for more); the only virtual call is
// the HigherOrderDynamics entry point.
//
// The recursions run in spatial (world-frame) twists, the paper's form, whatever the
// representation except the body-fixed one (in_body_frames below, higher_order_body_frame.hpp):
// there the joint screws' derivatives are brackets (003 Alg. 1 line 10) and
// the inertias' derivatives never need forming (below). The representation's kernels
// (joint_pose, tree_model.hpp) give the joint poses. Per node i with parent p, binomials
// C(n, k), and x^(k) the k-th time derivative:
//   S_i^(k) = sum_{j<k} C(k-1, j) [V_p^(j), S_i^(k-1-j)]                      (Alg. 1, 10)
//   V_i^(k) = V_p^(k) + sum_{j<=k} C(k, j) S_i^(j) q_i^(k-j+1)                  (Alg. 1, 10)
//   M_i^(k) = -sum_{j<k} C(k-1, j) (M_i^(k-1-j) ad_{V_i^(j)} + ad^T_{V_i^(j)} M_i^(k-1-j))  (61)
//   Pi_i^(k+1) = sum_{j<=k+1} C(k+1, j) M_i^(j) V_i^(k+1-j)                           (62)
//   W_i^(k) = Pi_i^(k+1) - W_app^(k) + sum_children W_c^(k)                      (Alg. 2, 2)
//   Q_i^(k) = sum_{m<=k} C(k, m) S_i^(k-m) . W_i^(m)                             (Alg. 2, 6)
// A spatial inertia keeps the rigid-body form [[I, h~], [-h~, m 1]] along any motion, so
// its derivatives are kept as 9 numbers each (m' = 0): for V = (w, v),
//   h' = w x h + m v,   I' = w~ I - I w~ - (h~ v~ + v~ h~)                              (61)
// (inertia_rate), never as 6x6 matrices.
//
// Gravity: the wrench M_i G on every body, G = (0; g), with the derivatives
//   (M_i G)^(k) = (h_i^(k) x g; m_i^(k) g)        (m^(k) = 0 for k > 0)
// subtracted from W_i^(k) (and from the bias wrenches W^A^(k)), all in the world frame. At
// order 0 this equals the root acceleration (0; -g) of 000 rule R3. A freely falling frame
// (V*^(k) = V^(k) - [k = 1] G - C(k, 2) ad_G V^(k-2)) would give the same numbers in exact
// arithmetic, but its terms C(k, 2) ad_G V^(k-2) grow with k while the derivatives of a slow
// motion fall, so the forces of order >= 3 came out of a cancellation and lost 1.5 to 2
// digits on paper 003's aerial manipulator (test_higher_order.cpp, "order 8 ... with gravity").
//
// The floating base's rows are body-frame (higher_order_dynamics.hpp): its spatial twist
// V^s = Ad_C V^b and wrench W^b = Ad_C^T W^s, whose derivatives need those of Ad_C:
// transport_diagonal below.
//
// Forward and hybrid dynamics (Alg. 3, 4) with Lemma 2: W_i^(k) = M^A_i V_i^(k+1) + W^A_i^(k),
// the articulated inertias M^A_i the same at every order, computed once per call; for
// k = 0..r in turn, a backward pass gives the bias wrenches W^A^(k) and a forward pass
// q^(k+2) and V^(k+1):
//   V_i^(k+1) = V_p^(k+1) + S_i q_i^(k+2) + Vb_i^(k+1),  Vb_i^(k+1) = sum_{j>=1} C(k+1, j) S_i^(j) q_i^(k+2-j)   (66)
//   Q_i^(k) = S_i . W_i^(k) + tau~_i^(k),   tau~_i^(k) = sum_{m<k} C(k, m) S_i^(k-m) . W_i^(m)                      (25)
//   force-prescribed i:  q_i^(k+2) = (u_i - U_i . V_p^(k+1)) / D_i,  U_i = M^A_i S_i, D_i = S_i . U_i,
//                        u_i = tau_i^(k) - tau~_i^(k) - S_i . W^A_i^(k) - U_i . Vb_i^(k+1)
//   W^A_p^(k) = Pi_bias,p^(k+1) - W_app,p^(k) + sum_c (W^A_c^(k) + M^A_c Vb_c^(k+1) + U_c u_c / D_c)   (24)
//   (a motion-prescribed child c adds W^A_c^(k) + M^A_c (S_c q_c^(k+2) + Vb_c^(k+1)) and its
//   M^A_c unprojected, Alg. 4 line 2-3), Pi_bias^(k+1) = Pi^(k+1) - M V^(k+1) (65).
#include <liembs/dynamics/higher_order_body_frame.hpp>
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/higher_order_loads.hpp>
#include <liembs/dynamics/representations.hpp>
#include <liembs/dynamics/tree_model.hpp>
#include <liembs/lie/se3.hpp>

#include <Eigen/Cholesky>

#include <optional>
#include <string>

namespace liembs {

namespace higher_order_kernels {

// Pascal's triangle up to row `rows - 1`.
class Binomials {
 public:
  void resize(int rows) {
    rows_ = rows;
    table_.assign(static_cast<std::size_t>(rows * rows), 0.0);
    for (int n = 0; n < rows; ++n) {
      at(n, 0) = 1.0;
      for (int k = 1; k <= n; ++k) at(n, k) = at(n - 1, k - 1) + (k < n ? at(n - 1, k) : 0.0);
    }
  }
  LIEMBS_STRONG_INLINE double operator()(int n, int k) const { return table_[static_cast<std::size_t>(n * rows_ + k)]; }

 private:
  double& at(int n, int k) { return table_[static_cast<std::size_t>(n * rows_ + k)]; }
  int rows_ = 0;
  std::vector<double> table_;
};

// The derivatives of h(t) = X(t) f(t) for a matrix function with X' = B X (a change of
// frame: X = Ad_C, Ad_C^T, Ad_C^-1 or Ad_C^-T, B = +-ad or +-ad^T of the base twist):
// with h_m = X f^(m), h_m' = B h_m + h_{m+1}, so
//   h_m^(j) = h_{m+1}^(j-1) + sum_{i<j} C(j-1, i) B^(i) h_m^(j-1-i).
// The table holds h_m^(j) by anti-diagonals d = m + j; diagonal d gives h^(d) = h_0^(d) and
// needs B^(0..d-1) only, so it also runs while B's derivatives are being found.
class FrameTransport {
 public:
  void resize(int size) {
    size_ = size;
    table_.resize(static_cast<std::size_t>(size * size));
  }
  // h_m^(0) = X(t) f^(m)
  Vec6& start(int m) { return at(m, 0); }
  template <class Operator>  // op(i, x) = B^(i) x
  const Vec6& diagonal(int d, const Binomials& C, const Operator& op) {
    for (int j = 1; j <= d; ++j) {
      const int m = d - j;
      Vec6 sum = at(m + 1, j - 1);
      for (int i = 0; i < j; ++i) sum += C(j - 1, i) * op(i, at(m, j - 1 - i));
      at(m, j) = sum;
    }
    return at(0, d);
  }

 private:
  Vec6& at(int m, int j) { return table_[static_cast<std::size_t>(m * size_ + j)]; }
  int size_ = 0;
  std::vector<Vec6> table_;
};

// I += c (T + T^T - (v h^T + h v^T) + 2 (h . v) 1), T = w~ S, for a symmetric S, on the 6
// distinct entries I = (00, 11, 22, 01, 02, 12): the inertia term of (61) (inertia_rate).
LIEMBS_STRONG_INLINE void add_inertia_rate_term(double c, const Vec3& w, const Vec3& v, const Vec3& h, const Mat3& S, double* I) {
  const double w0 = w(0), w1 = w(1), w2 = w(2), v0 = v(0), v1 = v(1), v2 = v(2), h0 = h(0), h1 = h(1), h2 = h(2);
  const double s00 = S(0, 0), s11 = S(1, 1), s22 = S(2, 2), s01 = S(0, 1), s02 = S(0, 2), s12 = S(1, 2);
  const double hv = h0 * v0 + h1 * v1 + h2 * v2;
  const double T00 = w1 * s02 - w2 * s01, T11 = w2 * s01 - w0 * s12, T22 = w0 * s12 - w1 * s02;
  const double T01 = w1 * s12 - w2 * s11, T10 = w2 * s00 - w0 * s02;
  const double T02 = w1 * s22 - w2 * s12, T20 = w0 * s01 - w1 * s00;
  const double T12 = w2 * s02 - w0 * s22, T21 = w0 * s11 - w1 * s01;
  const double c2 = 2.0 * c;
  I[0] += c2 * (T00 - v0 * h0 + hv);
  I[1] += c2 * (T11 - v1 * h1 + hv);
  I[2] += c2 * (T22 - v2 * h2 + hv);
  I[3] += c * (T01 + T10 - (v0 * h1 + h0 * v1));
  I[4] += c * (T02 + T20 - (v0 * h2 + h0 * v2));
  I[5] += c * (T12 + T21 - (v1 * h2 + h1 * v2));
}

// ad_a^T x = -(-ad_a^T x)
LIEMBS_STRONG_INLINE Vec6 coadjoint(const Vec6& a, const Vec6& x) { return -representations::momentum_rate_bias(a, x); }

// Whether a policy's higher-order dynamics run in body frames and Taylor coefficients
// (higher_order_body_frame.hpp) instead of the paper's spatial form; a policy's plugin may
// specialize it.
template <class Policy>
inline constexpr bool in_body_frames = false;
template <>
inline constexpr bool in_body_frames<representations::BodyFixed> = true;

}  // namespace higher_order_kernels

template <class Policy>
class RecursiveHigherOrder final : public HigherOrderDynamics, public HigherOrderDynamicsWithLoads {
 public:
  explicit RecursiveHigherOrder(std::shared_ptr<const KinematicTree> tree, int max_order = 8)
      : model_(std::move(tree)), nodes_(model_.nodes), n_(nodes_.dof()) {
    pose_.resize(static_cast<std::size_t>(n_));
    gravity_ = nodes_.gravity;
    U_.resize(static_cast<std::size_t>(n_));
    D_.resize(static_cast<std::size_t>(n_));
    u_.resize(static_cast<std::size_t>(n_));
    tau_tilde_.resize(static_cast<std::size_t>(n_));
    articulated_.resize(static_cast<std::size_t>(n_ + 1));
    all_force_.joint_motion.assign(static_cast<std::size_t>(n_), false);
    if constexpr (body_frame) body_frame_.emplace(nodes_, model_.aligned.axial);
    reserve(std::max(max_order, 0));
  }

  std::string_view representation() const override { return Policy::name; }
  const KinematicTree& tree() const override { return model_.tree(); }
  HigherOrderCapabilities capabilities() override { return {.with_loads = this}; }

  void inverse_dynamics(const TreeState& state, const Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) override {
    inverse_dynamics(state, rates, no_load_rates_, forces);
  }
  void forward_dynamics(const TreeState& state, const Eigen::MatrixXd& forces, Eigen::MatrixXd& rates) override {
    hybrid_dynamics(state, all_force_, forces, no_load_rates_, rates, forward_forces_);
  }
  void hybrid_dynamics(const TreeState& state, const HybridSplit& split, const Eigen::MatrixXd& given,
                       Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) override {
    hybrid_dynamics(state, split, given, no_load_rates_, rates, forces);
  }

  void inverse_dynamics(const TreeState& state, const Eigen::MatrixXd& rates, const LoadRates& loads,
                        Eigen::MatrixXd& forces) override {
    check(state, rates, "rates");
    const int r = static_cast<int>(rates.cols()) - 1, K = r + 1, offset = base_offset();
    reserve(r);
    applied_loads(loads, r);
    if constexpr (body_frame) {
      body_frame_->inverse(state, rates, applied_.data(), stride_, forces);
      return;
    }
    base_pose_ = nodes_.floating_base ? state.base : Pose{};
    if (nodes_.floating_base) {
      base_twist_from_rates(state, rates, K);
      root_inertia();
      for (int j = 1; j <= K; ++j) inertia_rate(root(), j);
    } else {
      fixed_root_motion(K);
    }
    for (int i = 0; i < n_; ++i) {
      node_pose(i, state);
      q(i, 1) = state.qd(i);
      for (int m = 2; m <= K + 1; ++m) q(i, m) = rates(offset + i, m - 2);
      for (int k = 0; k <= K; ++k) {
        if (k > 0) screw_derivative(i, k);
        V(i, k) = V(parent(i), k) + screw_terms(i, k, 0);
      }
      M(i, 0) = twist_transforms::Adjoint::congruence(pose_[ui(i)], model_.rigid[ui(i)]);
      for (int j = 1; j <= K; ++j) inertia_rate(i, j);
    }
    // W_i^(k) = Pi_i^(k+1) - (M_i G)^(k) - W_app^(k), then the subtree sums (003 Alg. 2, line 2).
    for (int i = 0; i <= n_; ++i)
      for (int k = 0; k <= r; ++k) W(i, k) = M(i, 0) * V(i, k + 1) + momentum_bias(i, k + 1) - gravity_wrench(i, k);
    for (int k = 0; k <= r; ++k) subtract_loads(k, W_);
    forces.resize(nodes_.velocity_dimension(), r + 1);
    for (int i = n_ - 1; i >= 0; --i) {
      for (int k = 0; k <= r; ++k) {
        forces(offset + i, k) = generalized_force(i, k, k);
        W(parent(i), k) += W(i, k);
      }
    }
    if (nodes_.floating_base)
      for (int k = 0; k <= r; ++k) forces.col(k).head<6>() = base_wrench_to_body(k, W(root(), k));
  }

  void forward_dynamics(const TreeState& state, const Eigen::MatrixXd& forces, const LoadRates& loads,
                        Eigen::MatrixXd& rates) override {
    hybrid_dynamics(state, all_force_, forces, loads, rates, forward_forces_);
  }

  void hybrid_dynamics(const TreeState& state, const HybridSplit& split, const Eigen::MatrixXd& given, const LoadRates& loads,
                       Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) override {
    check(state, given, "given derivatives");
    if (split.joint_motion.size() != static_cast<std::size_t>(n_))
      throw Error("the hybrid split names " + std::to_string(split.joint_motion.size()) + " degrees of freedom; the tree has " +
                  std::to_string(n_));
    const int r = static_cast<int>(given.cols()) - 1, offset = base_offset();
    const bool floating = nodes_.floating_base, base_motion = floating && split.base_motion;
    reserve(r);
    applied_loads(loads, r);
    if constexpr (body_frame) {
      body_frame_->hybrid(state, split.joint_motion, split.base_motion, given, applied_.data(), stride_, rates, forces);
      return;
    }
    rates.resize(nodes_.velocity_dimension(), r + 1);
    forces.resize(nodes_.velocity_dimension(), r + 1);
    base_pose_ = floating ? state.base : Pose{};
    if (base_motion) {
      base_twist_from_rates(state, given, r + 1);
    } else if (floating) {
      Vb_body(0) = state.base_twist;
      Vs(0) = se3::Ad(state.base) * state.base_twist;
      V(root(), 0) = Vs(0);
      base_adjoint_inverse_ = se3::Ad_inverse(state.base);
      for (int k = 0; k <= r; ++k) wrench_in_.start(k) = base_adjoint_inverse_.transpose() * given.col(k).head<6>();
      twist_out_.start(0) = state.base_twist;
    } else {
      fixed_root_motion(r + 1);
    }
    if (floating) {
      root_inertia();
      articulated_[ui(root())] = M(root(), 0).matrix();
      inertia_rate(root(), 1);
      Pib(root(), 1) = momentum_bias(root(), 1);
    } else {
      articulated_[ui(root())].setZero();
    }
    // Order-independent part: poses, screws, twists, S^(1), Vb^(1), momenta, M^A (Lemma 2).
    for (int i = 0; i < n_; ++i) {
      node_pose(i, state);
      const double qd = state.qd(i);
      q(i, 1) = qd;
      V(i, 0) = V(parent(i), 0) + S(i, 0) * qd;
      screw_derivative(i, 1);
      Vbias(i, 1) = screw_terms(i, 1, 1);
      M(i, 0) = twist_transforms::Adjoint::congruence(pose_[ui(i)], model_.rigid[ui(i)]);
      inertia_rate(i, 1);
      Pib(i, 1) = momentum_bias(i, 1);
      articulated_[ui(i)] = M(i, 0).matrix();
    }
    articulated_inertias(split);
    if (floating && !base_motion) {
      base_factor_.compute(articulated_[ui(root())]);
      higher_order_kernels::check_base_factor(base_factor_);
    }
    for (int k = 0; k <= r; ++k) {
      // Backward: the bias wrenches W^A^(k) (24), Alg. 4 line 3.
      for (int i = 0; i <= n_; ++i) WA(i, k) = Pib(i, k + 1) - gravity_wrench(i, k);
      subtract_loads(k, WA_);
      for (int i = n_ - 1; i >= 0; --i) {
        const auto k_i = ui(i);
        tau_tilde_[k_i] = generalized_force(i, k, k - 1);
        const Vec6& bias_twist = Vbias(i, k + 1);
        Vec6 contribution = WA(i, k);
        if (split.joint_motion[k_i]) {
          contribution.noalias() += articulated_[k_i] * (S(i, 0) * given(offset + i, k) + bias_twist);
        } else {
          u_[k_i] = given(offset + i, k) - tau_tilde_[k_i] - S(i, 0).dot(WA(i, k)) - U_[k_i].dot(bias_twist);
          contribution.noalias() += articulated_[k_i] * bias_twist;
          contribution += U_[k_i] * (u_[k_i] / D_[k_i]);
        }
        if (nodes_.parent[k_i] >= 0 || floating) WA(parent(i), k) += contribution;
      }
      // The root: V_0^(k+1) from the base wrench, or the base wrench from V_0^(k+1).
      if (base_motion) {
        W(root(), k) = articulated_[ui(root())] * V(root(), k + 1) + WA(root(), k);
        forces.col(k).head<6>() = base_wrench_to_body(k, W(root(), k));
        rates.col(k).head<6>() = given.col(k).head<6>();
      } else if (floating) {
        base_twist_from_wrench(k);
        forces.col(k).head<6>() = given.col(k).head<6>();
        rates.col(k).head<6>() = Vb_body(k + 1);
      }
      if (floating && k < r) advance_momentum(root(), k);
      // Forward: q^(k+2), V^(k+1), W^(k) (26), Alg. 4 line 5.
      for (int i = 0; i < n_; ++i) {
        const auto k_i = ui(i);
        const Vec6& parent_rate = V(parent(i), k + 1);
        const bool motion = split.joint_motion[k_i];
        const double qk = motion ? given(offset + i, k) : (u_[k_i] - U_[k_i].dot(parent_rate)) / D_[k_i];
        q(i, k + 2) = qk;
        rates(offset + i, k) = qk;
        V(i, k + 1) = parent_rate + S(i, 0) * qk + Vbias(i, k + 1);
        W(i, k) = articulated_[k_i] * V(i, k + 1) + WA(i, k);
        forces(offset + i, k) = motion ? S(i, 0).dot(W(i, k)) + tau_tilde_[k_i] : given(offset + i, k);
        if (k < r) {  // what order k + 1 needs: M^(k+2), Pi_bias^(k+2), S^(k+2), Vb^(k+2)
          advance_momentum(i, k);
          screw_derivative(i, k + 2);
          Vbias(i, k + 2) = screw_terms(i, k + 2, 1);
        }
      }
    }
  }

  Mat6 base_articulated_inertia() const override {
    if (!nodes_.floating_base) return Mat6::Zero();
    if constexpr (body_frame) return body_frame_->base_articulated_inertia();
    const Mat6 Ad = se3::Ad(base_pose_);
    return Ad.transpose() * articulated_[ui(n_)] * Ad;
  }

 private:
  static constexpr bool body_frame = higher_order_kernels::in_body_frames<Policy>;

  static std::size_t ui(int i) { return static_cast<std::size_t>(i); }
  int base_offset() const { return nodes_.floating_base ? 6 : 0; }
  int root() const { return n_; }
  int parent(int i) const {
    const int p = nodes_.parent[ui(i)];
    return p >= 0 ? p : n_;
  }

  void check(const TreeState& state, const Eigen::MatrixXd& matrix, const char* what) const {
    model_.check_sizes(state, nullptr, "");
    if (matrix.rows() != nodes_.velocity_dimension() || matrix.cols() < 1)
      throw Error(std::string(what) + " is " + std::to_string(matrix.rows()) + " x " + std::to_string(matrix.cols()) +
                  "; expected " + std::to_string(nodes_.velocity_dimension()) + " rows (one per generalized velocity) and " +
                  "one column per derivative order 0..r");
  }

  // Workspaces for orders up to r (kinematic order r + 1, q up to r + 2): grown only when a
  // call asks for a higher order than any before.
  void reserve(int r) {
    if (r <= capacity_ && stride_ > 0) return;
    capacity_ = std::max(r, capacity_);
    stride_ = capacity_ + 3;
    const auto sequences = static_cast<std::size_t>((n_ + 1) * stride_);
    for (auto* sequence : {&S_, &V_, &Pib_, &Vbias_, &W_, &WA_}) sequence->assign(sequences, Vec6::Zero());
    inertia_.assign(sequences, RigidInertia{});
    q_.assign(static_cast<std::size_t>(n_ * stride_), 0.0);
    base_sequence_.assign(static_cast<std::size_t>(3 * stride_), Vec6::Zero());
    load_point_.assign(nodes_.loads.size() * static_cast<std::size_t>(stride_), Vec3::Zero());
    applied_.assign(nodes_.loads.size() * static_cast<std::size_t>(stride_), Vec6::Zero());
    load_transport_.resize(nodes_.loads.size());
    C_.resize(stride_ + 1);
    for (auto* transport : {&twist_in_, &wrench_out_, &wrench_in_, &twist_out_}) transport->resize(stride_);
    for (auto& transport : load_transport_) transport.resize(stride_);
  }

  // Per-node sequences: entry k of node i (the root is node n_).
  Vec6& seq(std::vector<Vec6>& a, int i, int k) { return a[ui(i * stride_ + k)]; }
  Vec6& S(int i, int k) { return seq(S_, i, k); }
  Vec6& V(int i, int k) { return seq(V_, i, k); }
  RigidInertia& M(int i, int k) { return inertia_[ui(i * stride_ + k)]; }
  Vec6& Pib(int i, int k) { return seq(Pib_, i, k); }
  Vec6& Vbias(int i, int k) { return seq(Vbias_, i, k); }
  Vec6& W(int i, int k) { return seq(W_, i, k); }
  Vec6& WA(int i, int k) { return seq(WA_, i, k); }
  double& q(int i, int m) { return q_[ui(i * stride_ + m)]; }
  Vec6& applied(std::size_t l, int k) { return applied_[l * ui(stride_) + ui(k)]; }
  // The floating base: spatial twist V^s, body twist V^b, spatial wrench W^s (real frame).
  Vec6& Vs(int k) { return base_sequence_[ui(k)]; }
  Vec6& Vb_body(int k) { return base_sequence_[ui(stride_ + k)]; }
  Vec6& Ws(int k) { return base_sequence_[ui(2 * stride_ + k)]; }

  // Pose and screw S^(0) of node i (its parent done), from the representation's kernels.
  void node_pose(int i, const TreeState& state) {
    const auto k = ui(i);
    const int p = nodes_.parent[k];
    joint_pose(model_, k, state.q(i), relative_);
    se3::compose_into(p >= 0 ? pose_[ui(p)] : base_pose_, relative_, pose_[k]);
    S(i, 0) = representations::world_screw(pose_[k], model_.aligned.axial[k]);
  }

  // S_i^(k) = sum_{j<k} C(k-1, j) [V_p^(j), S_i^(k-1-j)]   (003 Alg. 1, line 10)
  LIEMBS_STRONG_INLINE void screw_derivative(int i, int k) {
    const int p = parent(i);
    Vec6 sum = se3::bracket(V(p, 0), S(i, k - 1));
    for (int j = 1; j < k; ++j) sum += C_(k - 1, j) * se3::bracket(V(p, j), S(i, k - 1 - j));
    S(i, k) = sum;
  }
  // sum_{j=first..k} C(k, j) S_i^(j) q_i^(k-j+1): V_i^(k) - V_p^(k) (first = 0) or Vb_i^(k) (first = 1, 66)
  LIEMBS_STRONG_INLINE Vec6 screw_terms(int i, int k, int first) {
    Vec6 sum = Vec6::Zero();
    for (int j = first; j <= k; ++j) sum += (C_(k, j) * q(i, k - j + 1)) * S(i, j);
    return sum;
  }
  // M_i^(j) from M_i^(0..j-1) and V_i^(0..j-1) (61), as h and I (m' = 0):
  //   h' = w x h + m v,  I' = w~ I - I w~ - (h~ v~ + v~ h~) = T + T^T - (v h^T + h v^T) + 2 (h . v) 1, T = w~ I,
  // every I^(j) symmetric: its 6 distinct entries only (inertia_rate_term).
  LIEMBS_STRONG_INLINE void inertia_rate(int i, int j) {
    Vec3 h = Vec3::Zero();
    double I[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};  // 00, 11, 22, 01, 02, 12
    for (int l = 0; l < j; ++l) {
      const double c = C_(j - 1, l);
      const Vec6& twist = V(i, l);
      const RigidInertia& Ml = M(i, j - 1 - l);
      const Vec3 w = twist.head<3>(), v = twist.tail<3>();
      h += c * (w.cross(Ml.h) + Ml.m * v);
      higher_order_kernels::add_inertia_rate_term(c, w, v, Ml.h, Ml.I, I);
    }
    RigidInertia& out = M(i, j);
    out.m = 0.0;
    out.h = h;
    out.I << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
  }
  // (M_i G)^(k) = (h^(k) x g; m^(k) g): the k-th derivative of the weight of node i (M(i, k) known).
  LIEMBS_STRONG_INLINE Vec6 gravity_wrench(int i, int k) {
    const RigidInertia& Mk = M(i, k);
    Vec6 out;
    out << Mk.h.cross(gravity_), Mk.m * gravity_;
    return out;
  }
  // Pi_bias^(k) = Pi^(k) - M V^(k) = sum_{j=1..k} C(k, j) M^(j) V^(k-j)   (65)
  LIEMBS_STRONG_INLINE Vec6 momentum_bias(int i, int k) {
    Vec6 sum = Vec6::Zero();
    for (int j = 1; j <= k; ++j) sum += C_(k, j) * (M(i, j) * V(i, k - j));
    return sum;
  }
  // With V^(k+1) known: M^(k+2) and Pi_bias^(k+2), what order k + 1 needs.
  LIEMBS_STRONG_INLINE void advance_momentum(int i, int k) {
    inertia_rate(i, k + 2);
    Pib(i, k + 2) = momentum_bias(i, k + 2);
  }
  // Q_i^(k) restricted to m <= last: sum_{m<=last} C(k, m) S_i^(k-m) . W_i^(m)  (Alg. 2 line 6; tau~ of (25) for last = k-1)
  LIEMBS_STRONG_INLINE double generalized_force(int i, int k, int last) {
    double sum = 0.0;
    for (int m = 0; m <= last; ++m) sum += C_(k, m) * S(i, k - m).dot(W(i, m));
    return sum;
  }

  void root_inertia() {
    M(root(), 0) = twist_transforms::Adjoint::congruence(base_pose_, model_.base_rigid);
  }

  // A fixed base: every V_0^(k) zero (gravity acts as the bodies' weights, gravity_wrench).
  void fixed_root_motion(int K) {
    for (int k = 0; k <= K; ++k) V(root(), k).setZero();
    for (int k = 0; k <= K + 1; ++k) {
      M(root(), k) = RigidInertia{};
      Pib(root(), k).setZero();
    }
  }

  // The floating base's motion from its body twist derivatives: V^b^(0) = the state's,
  // V^b^(k) = rates column k-1 (k = 1..K); V^s = Ad_C V^b with (Ad_C)' = ad_{V^s} Ad_C.
  void base_twist_from_rates(const TreeState& state, const Eigen::MatrixXd& rates, int K) {
    const Mat6 Ad = se3::Ad(state.base);
    for (int k = 0; k <= K; ++k) {
      Vb_body(k) = k == 0 ? Vec6(state.base_twist) : Vec6(rates.col(k - 1).head<6>());
      twist_in_.start(k) = Ad * Vb_body(k);
    }
    Vs(0) = twist_in_.start(0);
    for (int k = 1; k <= K; ++k)
      Vs(k) = twist_in_.diagonal(k, C_, [this](int j, const Vec6& x) -> Vec6 { return se3::bracket(Vs(j), x); });
    for (int k = 0; k <= K; ++k) V(root(), k) = Vs(k);
  }

  // W^b^(k) of the floating base from its spatial wrench W^s^(k) (orders 0..k-1 given
  // before): W^b = Ad_C^T W^s with (Ad_C^T)' = ad^T_{V^b} Ad_C^T.
  Vec6 base_wrench_to_body(int k, const Vec6& spatial) {
    Ws(k) = spatial;
    if (k == 0) base_adjoint_ = se3::Ad(base_pose_);
    wrench_out_.start(k) = base_adjoint_.transpose() * Ws(k);
    return wrench_out_.diagonal(k, C_, [this](int j, const Vec6& x) -> Vec6 { return higher_order_kernels::coadjoint(Vb_body(j), x); });
  }

  // Forward dynamics of the floating base at order k: W^s^(k) = (Ad_C^-T W^b)^(k) with
  // (Ad_C^-T)' = -ad^T_{V^s} Ad_C^-T, V^s^(k+1) = (M^A_0)^-1 (W^s^(k) - W^A_0^(k)) (Alg. 3
  // line 6), and V^b^(k+1) = (Ad_C^-1 V^s)^(k+1) with (Ad_C^-1)' = -ad_{V^b} Ad_C^-1.
  void base_twist_from_wrench(int k) {
    Ws(k) = wrench_in_.diagonal(k, C_, [this](int j, const Vec6& x) -> Vec6 { return representations::momentum_rate_bias(Vs(j), x); });
    V(root(), k + 1) = base_factor_.solve(Ws(k) - WA(root(), k));
    Vs(k + 1) = V(root(), k + 1);
    twist_out_.start(k + 1) = base_adjoint_inverse_ * Vs(k + 1);
    Vb_body(k + 1) = twist_out_.diagonal(k + 1, C_, [this](int j, const Vec6& x) -> Vec6 { return -se3::bracket(Vb_body(j), x); });
  }

  // M^A, leaves first (23; Alg. 4 line 2): force-prescribed children projected, motion-
  // prescribed ones added whole. D_i = S_i . M^A_i S_i must not vanish.
  void articulated_inertias(const HybridSplit& split) {
    const bool floating = nodes_.floating_base;
    for (int i = n_ - 1; i >= 0; --i) {
      const auto k = ui(i);
      const bool to_parent = nodes_.parent[k] >= 0 || floating;
      Mat6& parent_inertia = articulated_[ui(parent(i))];
      if (split.joint_motion[k]) {
        if (to_parent) parent_inertia += articulated_[k];
        continue;
      }
      U_[k] = articulated_[k] * S(i, 0);
      D_[k] = S(i, 0).dot(U_[k]);
      if (!(D_[k] > 1e-14 * (1.0 + articulated_[k].diagonal().sum())))
        higher_order_kernels::throw_vanishing_articulated_inertia(nodes_.dof_names[k]);
      if (to_parent) {
        parent_inertia += articulated_[k];
        parent_inertia.noalias() -= U_[k] * (U_[k].transpose() / D_[k]);
      }
    }
  }

  // The applied wrenches' derivatives 0..r of this call, in the aligned node frames
  // (applied(l, k)): the given LoadRates, or the tree's constant loads.
  void applied_loads(const LoadRates& loads, int r) {
    load_order_ = r;
    const std::size_t count = nodes_.loads.size();
    if (loads.empty()) {
      for (std::size_t l = 0; l < count; ++l)
        for (int k = 0; k <= r; ++k) applied(l, k) = k == 0 ? nodes_.loads[l].wrench : Vec6::Zero();
      return;
    }
    if (loads.size() != count)
      throw Error("applied wrench rates are given for " + std::to_string(loads.size()) + " loads; the tree has " +
                  std::to_string(count) + " (KinematicTree::loads)");
    for (std::size_t l = 0; l < count; ++l) {
      const auto& load = nodes_.loads[l];
      if (loads[l].rows() != 6 || loads[l].cols() != r + 1)
        throw Error("applied wrench rates of load " + std::to_string(l) + " are " + std::to_string(loads[l].rows()) + " x " +
                    std::to_string(loads[l].cols()) + "; expected 6 x " + std::to_string(r + 1) + " (orders 0.." +
                    std::to_string(r) + ")");
      // A body-frame load in the node frame of the input tree, to the aligned one (align_node_frames).
      const bool align = !load.world_frame && load.node >= 0;
      const Mat6 to_aligned = align ? Mat6(se3::Ad(model_.aligned.alignment[ui(load.node)]).transpose()) : Mat6::Identity();
      for (int k = 0; k <= r; ++k) applied(l, k).noalias() = to_aligned * loads[l].col(k);
    }
  }

  // Subtracts the k-th derivative of the applied wrenches W_app^(k) from `target` (W or
  // W^A), in the world frame. A body-frame load W^b(t): W^s = Ad_C^-T W^b with
  // (Ad_C^-T)' = -ad^T_V Ad_C^-T, (69)-(70), by a FrameTransport of W^b^(0..r). A world-frame
  // one (pure moment m, force f at the body point x) is (m + x x f, f), with
  // (m + x x f)^(k) = m^(k) + sum_j C(k, j) x^(j) x f^(k-j) and x' = w x x + v for the node's
  // twist (w, v). Needs V(node, 0..k-1); order k after order k-1.
  void subtract_loads(int k, std::vector<Vec6>& target) {
    for (std::size_t l = 0; l < nodes_.loads.size(); ++l) {
      const auto& load = nodes_.loads[l];
      const int node = load.node >= 0 ? load.node : root();
      const Pose& frame = load.node >= 0 ? pose_[ui(load.node)] : base_pose_;
      Vec6 wrench;
      if (load.world_frame) {
        Vec3* point = &load_point_[l * ui(stride_)];
        if (k == 0) {
          point[0] = frame.R * load.point + frame.r;
        } else {
          const Vec6& twist = V(node, k - 1);  // x' = w x x + v
          Vec3 x = twist.tail<3>();
          for (int j = 0; j < k; ++j) {
            const Vec6& rate = V(node, j);
            x += C_(k - 1, j) * rate.head<3>().cross(point[k - 1 - j]);
          }
          point[k] = x;
        }
        wrench = applied(l, k);
        for (int j = 0; j <= k; ++j) {
          const Vec6& force_rate = applied(l, k - j);
          wrench.head<3>() += C_(k, j) * point[j].cross(force_rate.tail<3>());
        }
      } else {
        higher_order_kernels::FrameTransport& transport = load_transport_[l];
        if (k == 0) {
          const Mat6 to_world = se3::Ad_inverse(frame).transpose();
          for (int m = 0; m <= load_order_; ++m) transport.start(m).noalias() = to_world * applied(l, m);
        }
        wrench = transport.diagonal(k, C_, [this, node](int j, const Vec6& x) -> Vec6 {
          return representations::momentum_rate_bias(V(node, j), x);
        });
      }
      seq(target, node, k) -= wrench;
    }
  }

  const TreeModel model_;
  const KinematicTree& nodes_;         // the aligned tree the kernels work in
  int n_ = 0;
  int capacity_ = -1, stride_ = 0;
  higher_order_kernels::Binomials C_;
  Vec3 gravity_ = Vec3::Zero();  // g
  Pose base_pose_, relative_;
  std::vector<Pose> pose_;  // world poses of the nodes
  Mat6 base_adjoint_ = Mat6::Identity(), base_adjoint_inverse_ = Mat6::Identity();
  // Per node (and the root as node n_), stride_ entries each.
  std::vector<Vec6> S_, V_, Pib_, Vbias_, W_, WA_;
  std::vector<double> q_;
  std::vector<Vec6> base_sequence_;
  // Per load, stride_ entries each: the applied wrench's derivatives (aligned frames) and a
  // world-frame load's point x^(k); a body-frame load's transport.
  std::vector<Vec6> applied_;
  std::vector<Vec3> load_point_;
  std::vector<higher_order_kernels::FrameTransport> load_transport_;
  int load_order_ = 0;
  const LoadRates no_load_rates_;
  std::vector<RigidInertia> inertia_;  // M^(k): spatial inertias and their derivatives (m = 0 for k > 0)
  std::vector<Mat6> articulated_;
  std::vector<Vec6> U_;
  std::vector<double> D_, u_, tau_tilde_;
  Eigen::LDLT<Mat6> base_factor_;
  higher_order_kernels::FrameTransport twist_in_, wrench_out_, wrench_in_, twist_out_;
  HybridSplit all_force_;
  Eigen::MatrixXd forward_forces_;
  std::optional<higher_order_kernels::BodyFrameDynamics> body_frame_;  // the algorithms of in_body_frames policies
};

}  // namespace liembs
