#pragma once
// Paper 003's higher-order dynamics in body-fixed twists, the form the paper names as future
// work, run by the body-fixed representation (higher_order_algorithms.hpp; docs/higher-order.md,
// "Representations"): H-GRNE (inverse) and H-GHYB (hybrid; H-GABI is its all-force split).
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
// equation in the body frame (000 eq. 66, W = M V' - ad^T_V M V) is two cross products per
// term about the centre of mass (momentum_bias):
//   V_i,k = Ad^-1_{Z_i} (Ad^-1_{B_i} V_p)_k + X_i (k+1) q_i,(k+1)             (001 eq. 4, 000 eq. 67a)
//   W_i,k = (k+1) Pi_i,(k+1) - sum_{j<=k} ad^T_{V_i,j} Pi_i,(k-j) - W_app,i,k + sum_c (Ad^-T_{C_p,c} W_c)_k
//   tau_i,k = X_i . W_i,k,   tau^(k) = k! tau_k
// Gravity, as in the spatial form, through a freely falling frame: the base body twist seen
// from it is V*(t) = V(t) - t gamma(t), gamma = Ad^-1_{C(t)} (0; g), gamma' = -[V, gamma], so
// V*_k = V_k - gamma_(k-1); a fixed base has V*_1 = (0; -g). Body-frame wrenches are the
// same in both frames, and the base rows are the base's body-frame wrench directly.
//
// Hybrid dynamics (003 Alg. 3-4 with Lemma 2, in the node frames): for k = 0..r in turn, with
// a_i = (k+1) V_i,(k+1) = V_i^(k+1)/k! and qdd_i = q_i^(k+2)/k!, the coefficient k of the
// equations above is the ordinary articulated-body recursion
//   a_i = A_i a_p + X_i qdd_i + c_i,   W_i,k = M^A_i a_i + WA_i,k,   tau_i,k = X_i . W_i,k,
// A_i = Ad^-1 of node i's pose in its parent's frame at the instant (B_i Z_i(q_i)), c_i the
// terms of V_i,(k+1) without V_p,(k+1) and q_i,(k+2) (times k+1), and the bias wrenches
//   WA_p,k = Pb_p,k - W_app,p,k + sum_c (A_c^T w_c + wb_c,k),   Pb_k = -sum_{j<=k} ad^T_{V_j} Pi_(k-j),
// wb_c,k the terms of (Ad^-T_{C_p,c} W_c)_k without W_c,k, and w_c = M^A_c c_c + WA_c + U_c u_c / D_c
// for a force-prescribed child (U = M^A X, D = X . U, u = tau_k - X . WA - U . c), or
// M^A_c (c_c + X_c qdd_c) + WA_c for a motion-prescribed one (with M^A_c unprojected). The
// articulated inertias M^A (node frames) are the same at every order (Lemma 2): computed once.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/representations.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/sincos.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Geometry>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include <algorithm>
#include <string>
#include <vector>

namespace liembs::higher_order_kernels {

// Coefficient k of cos(theta(t)) and sin(theta(t)) from theta_0..k and the lower ones:
// c' = -s theta', s' = c theta', so k c_k = -sum_{j=1..k} j theta_j s_(k-j) and likewise s_k.
LIEMBS_STRONG_INLINE void sincos_coefficient(const double* theta, int k, double* c, double* s) {
  if (k == 0) {
    const SinCos angle = sincos(theta[0]);
    c[0] = angle.cos;
    s[0] = angle.sin;
    return;
  }
  double dc = 0.0, ds = 0.0;
  for (int j = 1; j <= k; ++j) {
    const double rate = j * theta[j];
    dc -= rate * s[k - j];
    ds += rate * c[k - j];
  }
  c[k] = dc / k;
  s[k] = ds / k;
}

// Coefficient k of a twist or wrench series x rotated about z by the angle whose cos and sin
// series are given, terms j = first..k of sum_j R_j x_(k-j) (first = 1 leaves out the one
// with x_k); on the angular (0, 1) and linear (3, 4) pairs, the z components only in the
// j = 0 term. sign = +1 applies R_z^T (a twist into the node frame), sign = -1 applies R_z
// (a wrench out of it): R_z^T (x, y) = (c x + s y, c y - s x).
LIEMBS_STRONG_INLINE Vec6 rotated_coefficient(const double* cos_q, const double* sin_q, double sign, const Vec6* x, int k,
                                              int first) {
  double a0 = 0.0, a1 = 0.0, b0 = 0.0, b1 = 0.0;
  for (int j = first; j <= k; ++j) {
    const double c = cos_q[j], s = sign * sin_q[j];
    const Vec6& y = x[k - j];
    a0 += c * y(0) + s * y(1);
    a1 += c * y(1) - s * y(0);
    b0 += c * y(3) + s * y(4);
    b1 += c * y(4) - s * y(3);
  }
  Vec6 out;
  out << a0, a1, first == 0 ? x[k](2) : 0.0, b0, b1, first == 0 ? x[k](5) : 0.0;
  return out;
}

// H-GRNE's long Cauchy sums, packed (BodyFrameDynamics::rotated_series, packed_biases):
// each coefficient is also stored in the lane layouts below (a cost linear in r), so that
// every term of a sum, the quadratic cost, is a few packed products: two lanes at a time
// in the baseline build (SSE2), four with fused multiply-adds where the processor has AVX2
// and FMA (chosen at run time, wide_kernels(); the build stays baseline x86-64). The lanes
// are written and read in the same 16-byte halves, and the results written back in the
// halves Eigen reads a Vec6 by: a read spanning two narrower recent writes waits for them
// (store forwarding fails).
using Lanes = Eigen::Array4d;

// to[0..1] = (lo, hi) in one 16-byte write.
LIEMBS_STRONG_INLINE void store_pair(double* to, double lo, double hi) {
#ifdef __SSE2__
  _mm_store_pd(to, _mm_set_pd(hi, lo));
#else
  to[0] = lo;
  to[1] = hi;
#endif
}

// A twist or wrench coefficient x for the rotation about z: its angular and linear (x, y)
// pairs, plain (x0, x1, x3, x4) and turned by a quarter (x1, -x0, x4, -x3), so that pair by
// pair R_z^T x = c plain + s turned and R_z x = c plain - s turned.
struct PlaneLanes {
  Lanes plain, turned;
  LIEMBS_STRONG_INLINE void set(const Vec6& x) {
    store_pair(plain.data(), x(0), x(1));
    store_pair(plain.data() + 2, x(3), x(4));
    store_pair(turned.data(), x(1), -x(0));
    store_pair(turned.data() + 2, x(4), -x(3));
  }
};

// A 3-vector a as (a_y, a_z, a_x, 0) and (a_z, a_x, a_y, 0): a x b = a.yzx b.zxy - a.zxy b.yzx
// lane by lane.
struct CrossLanes {
  Lanes yzx, zxy;
  LIEMBS_STRONG_INLINE void set(const Vec3& a) {
    store_pair(yzx.data(), a(1), a(2));
    store_pair(yzx.data() + 2, a(0), 0.0);
    store_pair(zxy.data(), a(2), a(0));
    store_pair(zxy.data() + 2, a(1), 0.0);
  }
};

// out = the rotated pairs (x0, x1, x3, x4) with x's own z components.
LIEMBS_STRONG_INLINE void set_from_pairs(Vec6& out, const double* pairs, double z_angular, double z_linear) {
  store_pair(out.data(), pairs[0], pairs[1]);
  store_pair(out.data() + 2, z_angular, pairs[2]);
  store_pair(out.data() + 4, pairs[3], z_linear);
}

// Coefficients first..K of x rotated about z by the angle whose cos and sin series are
// given, (R x)_k = sum_{j<=k} R_j x_(k-j), sign as rotated_coefficient.
LIEMBS_STRONG_INLINE void packed_rotation_baseline(const double* cos_q, const double* sin_q, double sign,
                                                   const PlaneLanes* lanes, const Vec6* x, int first, int K, Vec6* out) {
  for (int k = first; k <= K; ++k) {
    Lanes by_cos = cos_q[0] * lanes[k].plain, by_sin = sin_q[0] * lanes[k].turned;
    for (int j = 1; j <= k; ++j) {
      by_cos += cos_q[j] * lanes[k - j].plain;
      by_sin += sin_q[j] * lanes[k - j].turned;
    }
    const Lanes pairs = by_cos + sign * by_sin;
    set_from_pairs(out[k], pairs.data(), x[k](2), x[k](5));
  }
}

// F_k = sum_{j<=k} w_j x p_(k-j) and G_k = sum_{j<=k} w_j x J_(k-j), k = first..last.
LIEMBS_STRONG_INLINE void packed_cross_sums_baseline(const CrossLanes* w, const CrossLanes* p, const CrossLanes* J,
                                                     int first, int last, Vec3* F, Vec3* G) {
  for (int k = first; k <= last; ++k) {
    Lanes f_plus = w[0].yzx * p[k].zxy, f_minus = w[0].zxy * p[k].yzx;
    Lanes g_plus = w[0].yzx * J[k].zxy, g_minus = w[0].zxy * J[k].yzx;
    for (int j = 1; j <= k; ++j) {
      f_plus += w[j].yzx * p[k - j].zxy;
      f_minus += w[j].zxy * p[k - j].yzx;
      g_plus += w[j].yzx * J[k - j].zxy;
      g_minus += w[j].zxy * J[k - j].yzx;
    }
    const Lanes f = f_plus - f_minus, g = g_plus - g_minus;
    F[k] = Vec3(f(0), f(1), f(2));
    G[k] = Vec3(g(0), g(1), g(2));
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LIEMBS_HIGHER_ORDER_WIDE_KERNELS 1
// The same two sums with AVX2 and FMA: a term of the rotation is two fused multiply-adds, a
// term of the cross sums four.
__attribute__((target("avx2,fma"))) inline __m256d load_lanes(const Lanes& lanes) {  // as written, in halves
  return _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_load_pd(lanes.data())), _mm_load_pd(lanes.data() + 2), 1);
}
__attribute__((target("avx2,fma"))) inline void packed_rotation_avx2(const double* cos_q, const double* sin_q, double sign,
                                                                    const PlaneLanes* lanes, const Vec6* x, int first, int K,
                                                                    Vec6* out) {
  for (int k = first; k <= K; ++k) {
    __m256d by_cos = _mm256_mul_pd(_mm256_set1_pd(cos_q[0]), load_lanes(lanes[k].plain));
    __m256d by_sin = _mm256_mul_pd(_mm256_set1_pd(sin_q[0]), load_lanes(lanes[k].turned));
    for (int j = 1; j <= k; ++j) {
      by_cos = _mm256_fmadd_pd(_mm256_set1_pd(cos_q[j]), load_lanes(lanes[k - j].plain), by_cos);
      by_sin = _mm256_fmadd_pd(_mm256_set1_pd(sin_q[j]), load_lanes(lanes[k - j].turned), by_sin);
    }
    alignas(32) double pairs[4];
    _mm256_store_pd(pairs, _mm256_fmadd_pd(_mm256_set1_pd(sign), by_sin, by_cos));
    set_from_pairs(out[k], pairs, x[k](2), x[k](5));
  }
}
__attribute__((target("avx2,fma"))) inline void packed_cross_sums_avx2(const CrossLanes* w, const CrossLanes* p,
                                                                      const CrossLanes* J, int first, int last, Vec3* F,
                                                                      Vec3* G) {
  for (int k = first; k <= last; ++k) {
    __m256d f_plus = _mm256_setzero_pd(), f_minus = f_plus, g_plus = f_plus, g_minus = f_plus;
    for (int j = 0; j <= k; ++j) {
      const __m256d w_yzx = load_lanes(w[j].yzx), w_zxy = load_lanes(w[j].zxy);
      f_plus = _mm256_fmadd_pd(w_yzx, load_lanes(p[k - j].zxy), f_plus);
      f_minus = _mm256_fmadd_pd(w_zxy, load_lanes(p[k - j].yzx), f_minus);
      g_plus = _mm256_fmadd_pd(w_yzx, load_lanes(J[k - j].zxy), g_plus);
      g_minus = _mm256_fmadd_pd(w_zxy, load_lanes(J[k - j].yzx), g_minus);
    }
    alignas(32) double f[4], g[4];
    _mm256_store_pd(f, _mm256_sub_pd(f_plus, f_minus));
    _mm256_store_pd(g, _mm256_sub_pd(g_plus, g_minus));
    F[k] = Vec3(f[0], f[1], f[2]);
    G[k] = Vec3(g[0], g[1], g[2]);
  }
}
inline bool processor_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

// Whether the packed sums run on AVX2 and FMA: the processor has them.
inline bool wide_kernels() {
#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
  static const bool available = processor_has_avx2_fma();
  return available;
#else
  return false;
#endif
}

LIEMBS_STRONG_INLINE void packed_rotation(bool wide, const double* cos_q, const double* sin_q, double sign,
                                          const PlaneLanes* lanes, const Vec6* x, int first, int K, Vec6* out) {
#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
  if (wide) return packed_rotation_avx2(cos_q, sin_q, sign, lanes, x, first, K, out);
#endif
  packed_rotation_baseline(cos_q, sin_q, sign, lanes, x, first, K, out);
}
LIEMBS_STRONG_INLINE void packed_cross_sums(bool wide, const CrossLanes* w, const CrossLanes* p, const CrossLanes* J,
                                            int first, int last, Vec3* F, Vec3* G) {
#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
  if (wide) return packed_cross_sums_avx2(w, p, J, first, last, F, G);
#endif
  packed_cross_sums_baseline(w, p, J, first, last, F, G);
}

// The errors of a singular articulated-body recursion (spatial and body-frame forms).
[[noreturn]] inline void throw_vanishing_articulated_inertia(const std::string& dof) {
  throw SimulationError("singular configuration: the articulated inertia of degree of freedom '" + dof +
                        "' vanishes (aligned joint axes?)");
}
inline void check_base_factor(const Eigen::LDLT<Mat6>& factor) {
  if (factor.info() != Eigen::Success || !(factor.vectorD().minCoeff() > 0.0))
    throw SimulationError("singular configuration: the articulated inertia of the floating base is not positive definite");
}

class BodyFrameDynamics {
 public:
  BodyFrameDynamics(const KinematicTree& nodes, const std::vector<AxialScrew>& axial)
      : nodes_(nodes), axial_(axial), n_(nodes.dof()) {
    for (const Mat6& M : nodes.inertia) rigid_.push_back(RigidInertia::from_matrix(M));
    rigid_.push_back(nodes.floating_base ? RigidInertia::from_matrix(nodes.base_inertia) : RigidInertia{});
    for (const RigidInertia& M : rigid_) centred_.push_back(CentredInertia::of(M));
    gravity_twist_ << 0.0, 0.0, 0.0, nodes.gravity;
    for (const auto& load : nodes.loads) world_loads_ = world_loads_ || load.world_frame;
    for (const Pose& B : nodes.reference) reference_inverse_.push_back(se3::Ad_inverse(B));
    const auto per_node = ui(n_ + 1);
    articulated_.resize(per_node);
    to_node_.resize(ui(n_));
    for (auto* vectors : {&twist_bias_, &rate_, &U_, &bias_wrench_}) vectors->resize(per_node);
    D_.resize(ui(n_));
    u_.resize(ui(n_));
  }

  // H-GRNE. rates: u^(1..r+1) (nv x (r+1)); forces: tau^(0..r), as
  // HigherOrderDynamics::inverse_dynamics; applied[l * applied_stride + k]: the k-th
  // derivative of the tree's load l (aligned frames).
  void inverse(const TreeState& state, const Eigen::MatrixXd& rates, const Vec6* applied, int applied_stride,
               Eigen::MatrixXd& forces) {
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
    for (int k = 0; k <= r; ++k) subtract_loads(applied, applied_stride, k, [&](int node) -> Vec6& { return W(node, k); });
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

  // H-GHYB (top of the file), as HigherOrderDynamics::hybrid_dynamics; the all-force split is H-GABI.
  void hybrid(const TreeState& state, const std::vector<bool>& joint_motion, bool base_motion_given, const Eigen::MatrixXd& given,
              const Vec6* applied, int applied_stride, Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) {
    const int r = static_cast<int>(given.cols()) - 1, offset = nodes_.floating_base ? 6 : 0;
    const bool floating = nodes_.floating_base, base_motion = floating && base_motion_given;
    reserve(r);
    rates.resize(nodes_.velocity_dimension(), r + 1);
    forces.resize(nodes_.velocity_dimension(), r + 1);
    hybrid_start(state);
    if (world_loads_) world_rotations(state);
    articulated_inertias(joint_motion);
    if (floating && !base_motion) {
      base_factor_.compute(articulated_[ui(n_)]);
      check_base_factor(base_factor_);
    }
    for (int k = 0; k <= r; ++k) {
      const int m = k + 1;
      const double scale = factorial_[ui(k)], inverse_scale = inverse_factorial_[ui(k)];
      // Biases of order k, from V_0..k, q_0..k+1 and W_0..k-1.
      if (floating) {
        if (k > 0) gamma_[ui(k)] = gravity_coefficient(k);
        bias_wrench_[ui(n_)] = momentum_bias(n_, k);
      }
      for (int i = 0; i < n_; ++i) {
        shift(i, m) = shift_terms(i, m, 1);
        twist_bias_[ui(i)] = m * rotated_coefficient(&cosine(i, 0), &sine(i, 0), 1.0, &shift(i, 0), m, 0);
        bias_wrench_[ui(i)] = momentum_bias(i, k);
      }
      subtract_loads(applied, applied_stride, k, [&](int node) -> Vec6& { return bias_wrench_[ui(node)]; });
      // Backward: the bias wrenches (Alg. 4 line 3).
      for (int i = n_ - 1; i >= 0; --i) {
        const auto k_i = ui(i);
        const AxialScrew& X = axial_[k_i];
        const Vec6& bias = bias_wrench_[k_i];
        Vec6 contribution = bias;
        if (joint_motion[k_i]) {
          Vec6 motion = twist_bias_[k_i];
          add_screw(motion, X, given(offset + i, k) * inverse_scale);
          contribution.noalias() += articulated_[k_i] * motion;
        } else {
          u_[k_i] = given(offset + i, k) * inverse_scale - screw_dot(X, bias) - U_[k_i].dot(twist_bias_[k_i]);
          contribution.noalias() += articulated_[k_i] * twist_bias_[k_i];
          contribution += U_[k_i] * (u_[k_i] / D_[k_i]);
        }
        const int p = nodes_.parent[k_i];
        if (p >= 0 || floating) bias_wrench_[ui(p >= 0 ? p : n_)] += to_node_[k_i].transpose() * contribution + wrench_bias(i, k);
      }
      // The root: its rate from the base wrench, or the base wrench from its rate.
      Vec6& root_rate = rate_[ui(n_)];
      if (base_motion) {
        base_twist_[ui(m)] = given.col(k).head<6>() * inverse_factorial_[ui(m)];
        V(n_, m) = base_twist_[ui(m)] - gamma_[ui(k)];
        root_rate = m * V(n_, m);
        W(n_, k) = articulated_[ui(n_)] * root_rate + bias_wrench_[ui(n_)];
        forces.col(k).head<6>() = scale * W(n_, k);
        rates.col(k).head<6>() = given.col(k).head<6>();
      } else if (floating) {
        W(n_, k) = given.col(k).head<6>() * inverse_scale;
        root_rate = base_factor_.solve(W(n_, k) - bias_wrench_[ui(n_)]);
        V(n_, m) = root_rate / m;
        base_twist_[ui(m)] = V(n_, m) + gamma_[ui(k)];
        forces.col(k).head<6>() = given.col(k).head<6>();
        rates.col(k).head<6>() = factorial_[ui(m)] * base_twist_[ui(m)];
      } else {
        root_rate = m * V(n_, m);
      }
      if (floating) set_momentum(n_, m);
      // Forward: q^(k+2), V_(k+1), W_k (Alg. 4 line 5).
      for (int i = 0; i < n_; ++i) {
        const auto k_i = ui(i);
        const AxialScrew& X = axial_[k_i];
        const int p = nodes_.parent[k_i];
        const Vec6 transported = to_node_[k_i] * rate_[ui(p >= 0 ? p : n_)];
        const bool motion = joint_motion[k_i];
        const double qdd = motion ? given(offset + i, k) * inverse_scale : (u_[k_i] - U_[k_i].dot(transported)) / D_[k_i];
        Vec6& a = rate_[k_i];
        a = transported + twist_bias_[k_i];
        add_screw(a, X, qdd);
        V(i, m) = a / m;
        set_momentum(i, m);
        W(i, k) = articulated_[k_i] * a + bias_wrench_[k_i];
        rates(offset + i, k) = motion ? given(offset + i, k) : qdd * scale;
        forces(offset + i, k) = motion ? scale * screw_dot(X, W(i, k)) : given(offset + i, k);
        // What order k + 1 needs: q_(k+2) and its cos and sin, the parent's twist seen
        // through B_i and shifted (coefficient k+1), the wrench rotated out (coefficient k).
        q(i, k + 2) = qdd / (m * (m + 1));
        angle_coefficient(i, k + 2);
        Y(i, m) = reference_inverse_[k_i] * V(p >= 0 ? p : n_, m);
        add_shift_top(i, m);
        rotated_wrench(i, k) += rotated_coefficient(&cosine(i, 0), &sine(i, 0), -1.0, &W(i, k), 0, 0);
      }
    }
  }

  // The floating base's articulated inertia of the last hybrid call, body coordinates.
  const Mat6& base_articulated_inertia() const { return articulated_[ui(n_)]; }

 private:
  static std::size_t ui(int i) { return static_cast<std::size_t>(i); }

  void reserve(int r) {
    if (r <= capacity_) return;
    capacity_ = r;
    stride_ = r + 3;
    const auto sequences = ui((n_ + 1) * stride_);
    for (auto* sequence : {&V_, &Pi_, &W_, &Y_, &shift_, &rotated_wrench_}) sequence->assign(sequences, Vec6::Zero());
    Jw_.assign(sequences, Vec3::Zero());
    q_.assign(sequences, 0.0);
    scratch_.assign(ui(stride_), Vec6::Zero());
    bias_scratch_.assign(ui(stride_), Vec6::Zero());
    plane_lanes_.assign(ui(stride_), PlaneLanes{});
    for (auto* lanes : {&angular_lanes_, &linear_momentum_lanes_, &spin_lanes_}) lanes->assign(ui(stride_), CrossLanes{});
    cross_F_.assign(ui(stride_), Vec3::Zero());
    cross_G_.assign(ui(stride_), Vec3::Zero());
    gamma_.assign(ui(stride_), Vec6::Zero());
    base_twist_.assign(ui(stride_), Vec6::Zero());
    world_to_node_.assign(nodes_.loads.size() * ui(stride_), Mat3::Zero());
    cos_.assign(sequences, 0.0);
    sin_.assign(sequences, 0.0);
    angle_.assign(sequences, 0.0);
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
  Vec3& Jw(int i, int k) { return Jw_[ui(i * stride_ + k)]; }  // I_c w_k (set_momentum)
  Vec6& W(int i, int k) { return W_[ui(i * stride_ + k)]; }
  Vec6& Y(int i, int k) { return Y_[ui(i * stride_ + k)]; }          // Ad^-1_{B_i} V_p
  Vec6& shift(int i, int k) { return shift_[ui(i * stride_ + k)]; }  // Y shifted along z by l q
  Vec6& rotated_wrench(int i, int k) { return rotated_wrench_[ui(i * stride_ + k)]; }  // R_z W_i
  double& q(int i, int k) { return q_[ui(i * stride_ + k)]; }
  double& cosine(int i, int k) { return cos_[ui(i * stride_ + k)]; }  // of a_i q_i(t)
  double& sine(int i, int k) { return sin_[ui(i * stride_ + k)]; }

  // Coefficient k of cos and sin of node i's angle a_i q_i(t), from q_i,0..k.
  void angle_coefficient(int i, int k) {
    double* theta = &angle_[ui(i * stride_)];
    theta[k] = axial_[ui(i)].angular * q(i, k);
    sincos_coefficient(theta, k, &cosine(i, 0), &sine(i, 0));
  }

  // The root's twist series in the falling frame, orders 0..K.
  void root_motion(const TreeState& state, const Eigen::MatrixXd& rates, int K) {
    if (!nodes_.floating_base) {
      fixed_root(K);
      return;
    }
    for (int k = 0; k <= K; ++k)
      base_twist_[ui(k)] = k == 0 ? Vec6(state.base_twist) : Vec6(rates.col(k - 1).head<6>() * inverse_factorial_[ui(k)]);
    gamma_[0] << Vec3::Zero(), state.base.R.transpose() * nodes_.gravity;
    for (int k = 1; k < K; ++k) gamma_[ui(k)] = gravity_coefficient(k);
    V(n_, 0) = base_twist_[0];
    for (int k = 1; k <= K; ++k) V(n_, k) = base_twist_[ui(k)] - gamma_[ui(k - 1)];
  }
  // A fixed base in the falling frame: V*_1 = (0; -g), all else zero.
  void fixed_root(int K) {
    for (int k = 0; k <= K; ++k) V(n_, k).setZero();
    V(n_, 1) = -gravity_twist_;
  }
  // gamma = Ad^-1_C (0; g): k gamma_k = -sum_{j<k} [V_j, gamma_(k-1-j)] (the real base twist);
  // gamma stays a pure linear vector, [(w, v), (0, y)] = (0, w x y).
  Vec6 gravity_coefficient(int k) const {
    Vec3 sum = Vec3::Zero();
    for (int j = 0; j < k; ++j) sum += base_twist_[ui(j)].head<3>().cross(gamma_[ui(k - 1 - j)].tail<3>());
    Vec6 out;
    out << Vec3::Zero(), sum * (-1.0 / k);
    return out;
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
    if (X.angular != 0.0) {  // R_z^T, Cauchy in (c, s)
      for (int k = 0; k <= K; ++k) angle_coefficient(i, k);
      rotated_series(i, 1.0, Y, K, &V(i, 0));
    } else {
      for (int k = 0; k <= K; ++k) V(i, k) = Y[k];
    }
    for (int k = 0; k <= K; ++k) add_screw(V(i, k), X, (k + 1) * qi[k + 1]);
  }

  // Pi_k = M V_k (k = 0..r+1) and W_k = (k+1) Pi_(k+1) - sum_{j<=k} ad^T_{V_j} Pi_(k-j)
  // (k = 0..r): the k-th Taylor coefficient of M V' - ad^T_V M V.
  LIEMBS_STRONG_INLINE void body_wrenches(int i, int r) {
    if (i == n_ && !nodes_.floating_base) return;
    for (int k = 0; k <= r + 1; ++k) set_momentum(i, k);
    for (int k = 0; k <= std::min(r, packed_from - 1); ++k) W(i, k) = (k + 1) * Pi(i, k + 1) + momentum_bias(i, k);
    if (r < packed_from) return;
    Vec6* bias = bias_scratch_.data();
    packed_biases(i, r, bias);
    for (int k = packed_from; k <= r; ++k) W(i, k) = (k + 1) * Pi(i, k + 1) + bias[k];
  }
  // Coefficients 0..K of x rotated about z by node i's angle (sign as rotated_coefficient):
  // the short sums term by term, from k = packed_from on packed.
  LIEMBS_STRONG_INLINE void rotated_series(int i, double sign, const Vec6* x, int K, Vec6* out) {
    const double *cos_q = &cosine(i, 0), *sin_q = &sine(i, 0);
    for (int k = 0; k <= std::min(K, packed_from - 1); ++k) out[k] = rotated_coefficient(cos_q, sin_q, sign, x, k, 0);
    if (K < packed_from) return;
    PlaneLanes* lanes = plane_lanes_.data();
    for (int k = 0; k <= K; ++k) lanes[k].set(x[k]);
    packed_rotation(wide_, cos_q, sin_q, sign, lanes, x, packed_from, K, out);
  }
  // momentum_bias(i, k) for k = packed_from..r into bias[k], the sums packed.
  LIEMBS_STRONG_INLINE void packed_biases(int i, int r, Vec6* bias) {
    const CentredInertia& body = centred_[ui(i)];
    if (!body.centred) {
      for (int k = packed_from; k <= r; ++k) bias[k] = momentum_bias(i, k);
      return;
    }
    CrossLanes *w = angular_lanes_.data(), *p = linear_momentum_lanes_.data(), *J = spin_lanes_.data();
    for (int k = 0; k <= r; ++k) {
      w[k].set(V(i, k).head<3>());
      p[k].set(Pi(i, k).tail<3>());
      J[k].set(Jw(i, k));
    }
    Vec3 *F = cross_F_.data(), *G = cross_G_.data();
    packed_cross_sums(wide_, w, p, J, packed_from, r, F, G);
    for (int k = packed_from; k <= r; ++k) bias[k] << G[k] + body.c.cross(F[k]), F[k];
  }
  // Pi_k = M V_k, about the origin, and J_k = I_c w_k: with the centre of mass c,
  // p = m (v + w x c) and L = I_c w + c x p.
  LIEMBS_STRONG_INLINE void set_momentum(int i, int k) {
    const Vec6& twist = V(i, k);
    const CentredInertia& body = centred_[ui(i)];
    if (!body.centred) {
      Pi(i, k) = rigid_[ui(i)] * twist;
      return;
    }
    const Vec3 w = twist.head<3>();
    const Vec3 p = body.m * (twist.tail<3>() + w.cross(body.c));
    const Vec3 J = body.I * w;
    Jw(i, k) = J;
    Pi(i, k) << J + body.c.cross(p), p;
  }
  // Pb_k = -sum_{j<=k} ad^T_{V_j} Pi_(k-j) = sum_j (w_j x L_(k-j) + v_j x p_(k-j), w_j x p_(k-j)).
  // About the centre of mass (L = I_c w + c x p, v = v_c - w x c, p = m v_c) the v_c x p
  // terms cancel in pairs (j, k-j) and w x (c x p) - (w x c) x p = c x (w x p), so
  //   Pb_k = (G_k + c x F_k, F_k),  F_k = sum_j w_j x p_(k-j),  G_k = sum_j w_j x J_(k-j):
  // two cross products per term instead of three.
  LIEMBS_STRONG_INLINE Vec6 momentum_bias(int i, int k) {
    const CentredInertia& body = centred_[ui(i)];
    if (!body.centred) {
      Vec6 sum = representations::momentum_rate_bias(V(i, 0), Pi(i, k));
      for (int j = 1; j <= k; ++j) sum += representations::momentum_rate_bias(V(i, j), Pi(i, k - j));
      return sum;
    }
    Vec3 F = Vec3::Zero(), G = Vec3::Zero();
    for (int j = 0; j <= k; ++j) {
      const Vec3 w = V(i, j).head<3>();
      F += w.cross(Pi(i, k - j).tail<3>());
      G += w.cross(Jw(i, k - j));
    }
    Vec6 out;
    out << G + body.c.cross(F), F;
    return out;
  }

  // Adds node i's wrench series, moved into its parent's frame, to the parent's:
  //   Ad^-T_{(R, p)} (m, f) = (R m + p x R f, R f), first Z(t) (Cauchy), then B_i.
  LIEMBS_STRONG_INLINE void wrench_to_parent(int i, int p, int r) {
    const AxialScrew& X = axial_[ui(i)];
    Vec6* Y = scratch_.data();
    if (X.angular != 0.0) {  // R_z, with the series of node_twists
      rotated_series(i, -1.0, &W(i, 0), r, Y);
    } else {
      for (int k = 0; k <= r; ++k) Y[k] = W(i, k);
    }
    for (int k = 0; k <= r; ++k) W(p, k) += from_node(i, k, Y, 0);
  }
  // Coefficient k of the rotated wrench series Y shifted by p x (Cauchy in d = l q: only m
  // changes, m += (-d f_y, d f_x, 0)) and moved by B_i, terms j = first..k of the shift.
  LIEMBS_STRONG_INLINE Vec6 from_node(int i, int k, const Vec6* Y, int first) {
    const auto k_i = ui(i);
    const Pose& B = nodes_.reference[k_i];
    Vec6 shifted = first == 0 ? Y[k] : Vec6::Zero();
    const double l = axial_[k_i].linear;
    if (l != 0.0)
      for (int j = first; j <= k; ++j) {
        const double d = l * q(i, j);
        shifted(0) -= d * Y[k - j](4);
        shifted(1) += d * Y[k - j](3);
      }
    const Vec3 force = B.R * shifted.tail<3>();
    Vec6 out;
    out << B.R * shifted.head<3>() + B.r.cross(force), force;
    return out;
  }

  // World rotations of the nodes (for world-frame loads only).
  void world_rotations(const TreeState& state) {
    world_rotation_[ui(n_)] = nodes_.floating_base ? state.base.R : Mat3::Identity();
    for (int i = 0; i < n_; ++i) {
      const int p = nodes_.parent[ui(i)];
      const Mat3& parent = world_rotation_[ui(p >= 0 ? p : n_)];
      const Mat3 joint = Eigen::AngleAxisd(axial_[ui(i)].angular * state.q(i), Vec3::UnitZ()).toRotationMatrix();
      world_rotation_[ui(i)] = parent * nodes_.reference[ui(i)].R * joint;
    }
  }

  // Subtracts coefficient k of the applied wrenches (003 Alg. 2 line 2) from target(node)
  // (needs V_0..k-1 of the loaded nodes): a body-frame load's W_k = W^(k) / k!; a
  // world-frame one (pure moment m, force f at the node point x) is (z_m + x x z_f, z_f) with
  // z = R^T y for y = m, f: rho = R^T has rho' = -w~ rho, so k rho_k = -sum_{j<k} w_j~ rho_(k-1-j)
  // and z_k = sum_j rho_j y_(k-j) (Cauchy).
  template <class Target>
  void subtract_loads(const Vec6* applied, int applied_stride, int k, const Target& target) {
    for (std::size_t l = 0; l < nodes_.loads.size(); ++l) {
      const auto& load = nodes_.loads[l];
      const int node = load.node >= 0 ? load.node : n_;
      if (node == n_ && !nodes_.floating_base) continue;
      const Vec6* wrench = applied + l * ui(applied_stride);
      Vec6& out = target(node);
      if (!load.world_frame) {
        out -= wrench[k] * inverse_factorial_[ui(k)];
        continue;
      }
      Mat3* rho = &world_to_node_[l * ui(stride_)];
      if (k == 0) {
        rho[0] = world_rotation_[ui(node)].transpose();
      } else {
        Mat3 sum = Mat3::Zero();
        for (int j = 0; j < k; ++j) sum.noalias() += so3::hat(V(node, j).head<3>()) * rho[k - 1 - j];
        rho[k] = sum * (-1.0 / k);
      }
      Vec6 z = Vec6::Zero();
      for (int j = 0; j <= k; ++j) {
        const double weight = inverse_factorial_[ui(k - j)];
        z.head<3>().noalias() += rho[j] * (weight * wrench[k - j].head<3>());
        z.tail<3>().noalias() += rho[j] * (weight * wrench[k - j].tail<3>());
      }
      out.head<3>() -= z.head<3>() + load.point.cross(z.tail<3>());
      out.tail<3>() -= z.tail<3>();
    }
  }

  // Hybrid dynamics, order-independent part: the root, each node's V_0, Pi_0, the
  // coefficients 0 and 1 of its angle's cos and sin, and A_i.
  void hybrid_start(const TreeState& state) {
    const bool floating = nodes_.floating_base;
    if (floating) {
      base_twist_[0] = state.base_twist;
      V(n_, 0) = state.base_twist;
      gamma_[0] << Vec3::Zero(), state.base.R.transpose() * nodes_.gravity;
      set_momentum(n_, 0);
      articulated_[ui(n_)] = rigid_[ui(n_)].matrix();
    } else {
      fixed_root(capacity_ + 1);
      articulated_[ui(n_)].setZero();
    }
    for (int i = 0; i < n_; ++i) {
      const auto k_i = ui(i);
      const int p = nodes_.parent[k_i];
      q(i, 0) = state.q(i);
      q(i, 1) = state.qd(i);
      angle_coefficient(i, 0);
      angle_coefficient(i, 1);
      Y(i, 0) = reference_inverse_[k_i] * V(p >= 0 ? p : n_, 0);
      shift(i, 0).setZero();
      add_shift_top(i, 0);
      V(i, 0) = rotated_coefficient(&cosine(i, 0), &sine(i, 0), 1.0, &shift(i, 0), 0, 0);
      add_screw(V(i, 0), axial_[k_i], q(i, 1));
      set_momentum(i, 0);
      Pose joint;  // Z_i at the instant
      joint.R = Eigen::AngleAxisd(axial_[k_i].angular * q(i, 0), Vec3::UnitZ()).toRotationMatrix();
      joint.r = Vec3(0.0, 0.0, axial_[k_i].linear * q(i, 0));
      to_node_[k_i] = se3::Ad_inverse(se3::compose(nodes_.reference[k_i], joint));
      articulated_[k_i] = rigid_[k_i].matrix();
    }
  }

  // M^A in the node frames, leaves first (23; Alg. 4 line 2): force-prescribed children
  // projected, motion-prescribed ones added whole, each moved by A^T M A.
  void articulated_inertias(const std::vector<bool>& joint_motion) {
    for (int i = n_ - 1; i >= 0; --i) {
      const auto k_i = ui(i);
      const int p = nodes_.parent[k_i];
      const bool to_parent = p >= 0 || nodes_.floating_base;
      Mat6 passed = articulated_[k_i];
      if (!joint_motion[k_i]) {
        const AxialScrew& X = axial_[k_i];
        U_[k_i] = articulated_[k_i].col(2) * X.angular + articulated_[k_i].col(5) * X.linear;
        D_[k_i] = screw_dot(X, U_[k_i]);
        if (!(D_[k_i] > 1e-14 * (1.0 + articulated_[k_i].diagonal().sum())))
          throw_vanishing_articulated_inertia(nodes_.dof_names[k_i]);
        passed.noalias() -= U_[k_i] * (U_[k_i].transpose() / D_[k_i]);
      }
      if (to_parent) articulated_[ui(p >= 0 ? p : n_)].noalias() += to_node_[k_i].transpose() * passed * to_node_[k_i];
    }
  }

  // sum_{j=first..k} d_j (x) Y_(k-j), d_j = l q_j: the terms of the shift v - p x w =
  // (v_x + d w_y, v_y - d w_x) in coefficient k.
  LIEMBS_STRONG_INLINE Vec6 shift_terms(int i, int k, int first) {
    Vec6 out = Vec6::Zero();
    const double l = axial_[ui(i)].linear;
    if (l != 0.0)
      for (int j = first; j <= k; ++j) {
        const double d = l * q(i, j);
        const Vec6& y = Y(i, k - j);
        out(3) += d * y(1);
        out(4) -= d * y(0);
      }
    return out;
  }
  // shift(i, k) += Y_k and its j = 0 shift term, once Y_k is known.
  LIEMBS_STRONG_INLINE void add_shift_top(int i, int k) {
    const Vec6& y = Y(i, k);
    const double d = axial_[ui(i)].linear * q(i, 0);
    Vec6& out = shift(i, k);
    out += y;
    out(3) += d * y(1);
    out(4) -= d * y(0);
  }
  // wb_i,k: coefficient k of node i's wrench moved to its parent, without the terms in W_i,k;
  // leaves rotated_wrench(i, k) without its R_0 W_i,k term (added once W_i,k is known).
  LIEMBS_STRONG_INLINE Vec6 wrench_bias(int i, int k) {
    rotated_wrench(i, k) = rotated_coefficient(&cosine(i, 0), &sine(i, 0), -1.0, &W(i, 0), k, 1);
    return from_node(i, k, &rotated_wrench(i, 0), 0);
  }

  const KinematicTree& nodes_;
  const std::vector<AxialScrew>& axial_;
  int n_ = 0, capacity_ = -1, stride_ = 0;
  bool world_loads_ = false;
  Vec6 gravity_twist_ = Vec6::Zero();
  std::vector<RigidInertia> rigid_;  // node inertias in the node frames, the base's last
  // The same about the centres of mass (momentum_bias), node frame axes; a body with a first
  // moment but no mass (not a rigid body) is not centred and takes the plain sums.
  struct CentredInertia : CentroidalInertia {  // kernel_types.hpp: m, c, I_c = I_o - m (c . c 1 - c c^T)
    bool centred = true;
    static CentredInertia of(const RigidInertia& M) {
      CentredInertia out;
      static_cast<CentroidalInertia&>(out) = CentroidalInertia::from(M);
      out.centred = M.m > 0.0 || M.h.isZero(0.0);
      return out;
    }
  };
  std::vector<CentredInertia> centred_;
  std::vector<Mat6> reference_inverse_;  // Ad^-1_{B_i}
  // Per node (the root last), stride_ entries each.
  std::vector<Vec6> V_, Pi_, W_, Y_, shift_, rotated_wrench_;
  std::vector<Vec3> Jw_;
  std::vector<double> q_, cos_, sin_, angle_;
  // Per order: scratch, the falling frame's gamma and the base's real body twist.
  std::vector<Vec6> scratch_, gamma_, base_twist_;
  // H-GRNE's packed sums (from coefficient packed_from on; a shorter sum is cheaper term by
  // term than its lanes): per order, the lanes of a rotated series and of w_k, p_k, J_k, and
  // the sums; AVX2 and FMA kernels if the processor has them.
  static constexpr int packed_from = 2;
  std::vector<PlaneLanes> plane_lanes_;
  std::vector<CrossLanes> angular_lanes_, linear_momentum_lanes_, spin_lanes_;
  std::vector<Vec3> cross_F_, cross_G_;
  std::vector<Vec6> bias_scratch_;
  bool wide_ = wide_kernels();
  std::vector<double> factorial_, inverse_factorial_;
  std::vector<Mat3> world_rotation_, world_to_node_;  // per node; per load and order (rho)
  // Hybrid dynamics: per node (the root last) M^A, c (twist_bias_), a (rate_), U, the bias
  // wrench of the current order; per joint D, u and A.
  std::vector<Mat6> articulated_, to_node_;
  std::vector<Vec6> twist_bias_, rate_, U_, bias_wrench_;
  std::vector<double> D_, u_;
  Eigen::LDLT<Mat6> base_factor_;
};

}  // namespace liembs::higher_order_kernels
