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
// H-GRNE runs these on rows of coefficients (SeriesRows below: the constant maps B_i and M as
// 3x3 matrices times all coefficients at once, the Cauchy sums as shifted rows); order 0,
// which needs V_0, V_1 and W_0 only, is RNEA in the falling frame (inverse_order_zero).
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

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace liembs::higher_order_kernels {

// Coefficient k of cos(theta(t)) and sin(theta(t)) from theta_0..k and the lower ones:
// c' = -s theta', s' = c theta', so k c_k = -sum_{j=1..k} j theta_j s_(k-j) and likewise s_k.
// The coefficients are a chain (each needs all before it): two partial sums each and a
// product with inverse_k = 1/k instead of a division keep its latency short.
LIEMBS_STRONG_INLINE void sincos_coefficient(const double* theta, int k, double inverse_k, double* c, double* s) {
  if (k == 0) {
    const SinCos angle = sincos(theta[0]);
    c[0] = angle.cos;
    s[0] = angle.sin;
    return;
  }
  double dc0 = 0.0, dc1 = 0.0, ds0 = 0.0, ds1 = 0.0;
  int j = 1;
  for (; j < k; j += 2) {
    const double rate0 = j * theta[j], rate1 = (j + 1) * theta[j + 1];
    dc0 -= rate0 * s[k - j];
    ds0 += rate0 * c[k - j];
    dc1 -= rate1 * s[k - j - 1];
    ds1 += rate1 * c[k - j - 1];
  }
  if (j == k) {
    const double rate = k * theta[k];
    dc0 -= rate * s[0];
    ds0 += rate * c[0];
  }
  c[k] = (dc0 + dc1) * inverse_k;
  s[k] = (ds0 + ds1) * inverse_k;
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

// H-GRNE in coefficient rows (BodyFrameDynamics::inverse). Every series is stored component
// by component: a row x_0, x_1, ... per component, the 6 rows of a twist or wrench (3 of a
// momentum) `pitch` doubles apart, each row preceded by four zeros. Then
// - a constant linear map applied to every coefficient (Ad^-1_B of a twist, Ad^-T_B of a
//   wrench, the body inertia) is a 3x3 matrix times a 3 x (r+2) block, streamed over k
//   (`product`): the linear work per coefficient is a few packed products;
// - a Cauchy sum sum_{j<=k} a_j x_(k-j) is, for each j, one series' coefficient broadcast
//   times the other's row shifted by j (`rotate`, `cauchy`, `cross_sums`), for all k of a
//   block at once; the zeros before each row make the terms with j > k vanish, so every
//   block runs the same loop (a block k..k+Width-1 takes j <= k+Width-1: it reads at most
//   Width-1 places before a row).
// Coefficients go `Width` at a time: two (SSE2) in the baseline build, four with AVX2 and FMA
// where the processor has them (the whole of H-GRNE compiled twice, chosen once per call).
template <int Width>
struct LaneOf;
template <>
struct LaneOf<2> {
  using type = double __attribute__((vector_size(16)));
  LIEMBS_STRONG_INLINE static void splat(type& x, double value) { x = type{value, value}; }
};
template <>
struct LaneOf<4> {
  using type = double __attribute__((vector_size(32)));
  LIEMBS_STRONG_INLINE static void splat(type& x, double value) { x = type{value, value, value, value}; }
};

template <int Width>
struct SeriesRows {
  using Lane = typename LaneOf<Width>::type;
  static constexpr int width = Width;

  LIEMBS_STRONG_INLINE static void load(Lane& x, const double* from) { std::memcpy(&x, from, sizeof(Lane)); }
  LIEMBS_STRONG_INLINE static void store(double* to, const Lane& x) { std::memcpy(to, &x, sizeof(Lane)); }
  LIEMBS_STRONG_INLINE static void splat(Lane& x, double value) { LaneOf<Width>::splat(x, value); }
  LIEMBS_STRONG_INLINE static void splat(Lane (&m)[9], const Mat3& M) {
    for (int e = 0; e < 9; ++e) splat(m[e], M(e / 3, e % 3));
  }
  // Blocks covering coefficients 0..last.
  static constexpr int blocks(int last) { return last / Width + 1; }

  // out (=, or += with Add) M in, rows 0..2 of in and out (a constant map on every coefficient).
  // (Lanes in named variables: arrays of them passed by reference are kept in memory.)
  template <bool Add>
  LIEMBS_STRONG_INLINE static void product(const Mat3& M_matrix, const double* in, double* out, int pitch, int blocks) {
    Lane M[9] = {};  // (all set by splat; the initializer quiets a false -Wmaybe-uninitialized)
    splat(M, M_matrix);
    for (int k = 0; k < blocks * Width; k += Width) {
      Lane x0, x1, x2;
      load(x0, in + k);
      load(x1, in + pitch + k);
      load(x2, in + 2 * pitch + k);
      for (int c = 0; c < 3; ++c) {
        Lane y = M[3 * c] * x0 + M[3 * c + 1] * x1 + M[3 * c + 2] * x2;
        if constexpr (Add) {
          Lane before;
          load(before, out + c * pitch + k);
          y = before + y;
        }
        store(out + c * pitch + k, y);
      }
    }
  }
  // A constant adjoint map on every coefficient of a twist or wrench series, rows (top, bottom):
  // a twist into the node frame, out = (A top, A bottom + B top) (Ad^-1_B: A = R^T, B = -R^T p~);
  // a wrench (Wrench) out of it, out += (A top + B bottom, A bottom) (Ad^-T_B: A = R, B = p~ R).
  template <bool Wrench>
  LIEMBS_STRONG_INLINE static void adjoint(const Mat3& A, const Mat3& B, const double* in, double* out, int pitch,
                                           int blocks) {
    const int half = 3 * pitch;
    product<Wrench>(A, in, out, pitch, blocks);
    product<Wrench>(A, in + half, out + half, pitch, blocks);
    if constexpr (Wrench) product<true>(B, in + half, out, pitch, blocks);
    else product<true>(B, in, out + half, pitch, blocks);
  }
  // The momenta of a body's twist series (w, v): p = P_w w + m v, J = J_w w,
  // L = J + L_x x with x = p (centred) or v (BodyFrameDynamics::BodyMaps); Pi = (L, p).
  LIEMBS_STRONG_INLINE static void momenta(const Mat3& P_w, double m, const Mat3& J_w, const Mat3& L_x, bool centred,
                                           const double* twist, double* Pi, double* J, int pitch, int blocks) {
    const double *w = twist, *v = twist + 3 * pitch;
    double *L = Pi, *p = Pi + 3 * pitch;
    product<false>(P_w, w, p, pitch, blocks);
    for (int c = 0; c < 3; ++c) scale_add(m, v + c * pitch, p + c * pitch, blocks);
    product<false>(J_w, w, J, pitch, blocks);
    product<false>(L_x, centred ? p : v, L, pitch, blocks);
    for (int c = 0; c < 3; ++c) scale_add(1.0, J + c * pitch, L + c * pitch, blocks);
  }
  // out += s in, one row.
  LIEMBS_STRONG_INLINE static void scale_add(double s, const double* in, double* out, int blocks) {
    Lane scale, x, y;
    splat(scale, s);
    for (int k = 0; k < blocks * Width; k += Width) {
      load(x, in + k);
      load(y, out + k);
      store(out + k, y + scale * x);
    }
  }
  LIEMBS_STRONG_INLINE static void copy(const double* in, double* out, int rows, int pitch, int blocks) {
    Lane x;
    for (int c = 0; c < rows; ++c)
      for (int k = 0; k < blocks * Width; k += Width) {
        load(x, in + c * pitch + k);
        store(out + c * pitch + k, x);
      }
  }

  // A twist (Sign = +1) or wrench (Sign = -1) series rotated about z by the angle whose cos
  // and sin series are given (rows, zeros before), (R x)_k = sum_{m<=k} R_(k-m) x_m, on the
  // pairs (0, 1) and (3, 4); rows 2 and 5 copied. +1 applies R_z^T (a twist into the node
  // frame), -1 applies R_z (a wrench out of it): R_z^T (x, y) = (c x + s y, c y - s x).
  // The series x, often just written, is read one coefficient at a time, and the older cos
  // and sin rows shifted (a shifted read spanning two recent block writes waits for them;
  // about 3 % faster at r = 5 than the other way round).
  template <int Sign>
  LIEMBS_STRONG_INLINE static void rotate(const double* cos_q, const double* sin_q, const double* in, double* out,
                                          int pitch, int last, int blocks) {
    for (int k = 0; k < blocks * Width; k += Width) {
      Lane a0{}, a1{}, a3{}, a4{};
      const int terms = std::min(last, k + Width - 1);
      for (int m = 0; m <= terms; ++m) {
        Lane c, s, x0, x1, x3, x4;
        load(c, cos_q + k - m);
        load(s, sin_q + k - m);
        splat(x0, in[m]);
        splat(x1, in[pitch + m]);
        splat(x3, in[3 * pitch + m]);
        splat(x4, in[4 * pitch + m]);
        if constexpr (Sign > 0) {
          a0 += c * x0 + s * x1;
          a1 += c * x1 - s * x0;
          a3 += c * x3 + s * x4;
          a4 += c * x4 - s * x3;
        } else {
          a0 += c * x0 - s * x1;
          a1 += c * x1 + s * x0;
          a3 += c * x3 - s * x4;
          a4 += c * x4 + s * x3;
        }
      }
      store(out + k, a0);
      store(out + pitch + k, a1);
      store(out + 3 * pitch + k, a3);
      store(out + 4 * pitch + k, a4);
      Lane z;
      load(z, in + 2 * pitch + k);
      store(out + 2 * pitch + k, z);
      load(z, in + 5 * pitch + k);
      store(out + 5 * pitch + k, z);
    }
  }
  // out += sign sum_{j<=k} a_j x_(k-j), one row.
  LIEMBS_STRONG_INLINE static void cauchy(const double* a, double sign, const double* x, double* out, int last, int blocks) {
    for (int k = 0; k < blocks * Width; k += Width) {
      Lane sum{};
      const int terms = std::min(last, k + Width - 1);
      for (int j = 0; j <= terms; ++j) {
        Lane aj, xj;
        splat(aj, a[j]);
        load(xj, x + k - j);
        sum += aj * xj;
      }
      Lane before;
      load(before, out + k);
      store(out + k, sign > 0.0 ? before + sum : before - sum);
    }
  }
  // s += a x x for the lanes a and the 3-vector x = (v[0], v[pitch], v[2 pitch]) broadcast.
  LIEMBS_STRONG_INLINE static void add_cross(const Lane& a0, const Lane& a1, const Lane& a2, const double* v, int pitch,
                                             Lane& s0, Lane& s1, Lane& s2) {
    Lane x0, x1, x2;
    splat(x0, v[0]);
    splat(x1, v[pitch]);
    splat(x2, v[2 * pitch]);
    s0 += a1 * x2 - a2 * x1;
    s1 += a2 * x0 - a0 * x2;
    s2 += a0 * x1 - a1 * x0;
  }
  // F (=, or += with Add) sum_{m<=k} a_(k-m) x b_m and, if c is given, G = sum_{m<=k} a_(k-m) x c_m:
  // 3-vector series; b and c (often just written) read one coefficient at a time, a shifted.
  template <bool Add>
  LIEMBS_STRONG_INLINE static void cross_sums(const double* a, const double* b, const double* c, double* F, double* G,
                                              int pitch, int last, int blocks) {
    for (int k = 0; k < blocks * Width; k += Width) {
      Lane f0{}, f1{}, f2{}, g0{}, g1{}, g2{};
      const int terms = std::min(last, k + Width - 1);
      for (int m = 0; m <= terms; ++m) {
        Lane a0, a1, a2;
        load(a0, a + k - m);
        load(a1, a + pitch + k - m);
        load(a2, a + 2 * pitch + k - m);
        add_cross(a0, a1, a2, b + m, pitch, f0, f1, f2);
        if (c != nullptr) add_cross(a0, a1, a2, c + m, pitch, g0, g1, g2);
      }
      if constexpr (Add) {
        Lane before;
        load(before, F + k);
        f0 += before;
        load(before, F + pitch + k);
        f1 += before;
        load(before, F + 2 * pitch + k);
        f2 += before;
      }
      store(F + k, f0);
      store(F + pitch + k, f1);
      store(F + 2 * pitch + k, f2);
      if (c == nullptr) continue;
      store(G + k, g0);
      store(G + pitch + k, g1);
      store(G + 2 * pitch + k, g2);
    }
  }
  // W_k = (k+1) Pi_(k+1) + (G_k + c x F_k, F_k): the k-th Taylor coefficient of
  // M V' - ad^T_V M V (momentum_bias) from the momenta Pi = (L, p) and the sums (G, F).
  // ramp[k] = k + 1.
  LIEMBS_STRONG_INLINE static void newton_euler(const double* Pi, const double* sums, const Vec3& centre,
                                                const double* ramp, double* W, int pitch, int blocks) {
    Lane c0, c1, c2;
    splat(c0, centre(0));
    splat(c1, centre(1));
    splat(c2, centre(2));
    for (int k = 0; k < blocks * Width; k += Width) {
      Lane weight, F0, F1, F2, x, g;
      load(weight, ramp + k);
      load(F0, sums + 3 * pitch + k);
      load(F1, sums + 4 * pitch + k);
      load(F2, sums + 5 * pitch + k);
      const Lane cross[3] = {c1 * F2 - c2 * F1, c2 * F0 - c0 * F2, c0 * F1 - c1 * F0};
      for (int c = 0; c < 3; ++c) {
        load(x, Pi + c * pitch + k + 1);
        load(g, sums + c * pitch + k);
        store(W + c * pitch + k, weight * x + (g + cross[c]));
      }
      const Lane F[3] = {F0, F1, F2};
      for (int c = 0; c < 3; ++c) {
        load(x, Pi + (3 + c) * pitch + k + 1);
        store(W + (3 + c) * pitch + k, weight * x + F[c]);
      }
    }
  }

 private:
  static std::size_t ui(int i) { return static_cast<std::size_t>(i); }
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LIEMBS_HIGHER_ORDER_WIDE_KERNELS 1
inline bool processor_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

// Whether H-GRNE's rows run four coefficients at a time (AVX2 and FMA): the processor has them.
inline bool wide_kernels() {
#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
  static const bool available = processor_has_avx2_fma();
  return available;
#else
  return false;
#endif
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
  // wide: H-GRNE four coefficients at a time with AVX2 and FMA (the processor must have them).
  BodyFrameDynamics(const KinematicTree& nodes, const std::vector<AxialScrew>& axial, bool wide = wide_kernels())
      : nodes_(nodes), axial_(axial), n_(nodes.dof()), wide_(wide) {
    for (const Mat6& M : nodes.inertia) rigid_.push_back(RigidInertia::from_matrix(M));
    rigid_.push_back(nodes.floating_base ? RigidInertia::from_matrix(nodes.base_inertia) : RigidInertia{});
    for (const RigidInertia& M : rigid_) centred_.push_back(CentredInertia::of(M));
    gravity_twist_ << 0.0, 0.0, 0.0, nodes.gravity;
    for (const auto& load : nodes.loads) world_loads_ = world_loads_ || load.world_frame;
    for (const Pose& B : nodes.reference) {
      reference_inverse_.push_back(se3::Ad_inverse(B));
      const Mat3 p = so3::hat(B.r);
      node_maps_.push_back(NodeMaps{B.R.transpose(), -B.R.transpose() * p, B.R, p * B.R});
    }
    for (std::size_t i = 0; i < rigid_.size(); ++i) {
      const RigidInertia& M = rigid_[i];
      const CentredInertia& centred = centred_[i];
      BodyMaps maps;
      maps.m = M.m;
      maps.centred = centred.centred;
      if (centred.centred) {  // p = m v - m c~ w, J = I_c w, L = J + c~ p
        maps.linear_of_w = -M.m * so3::hat(centred.c);
        maps.angular_of_w = centred.I;
        maps.angular_of_rest = so3::hat(centred.c);
        maps.c = centred.c;
      } else {  // p = m v - h~ w, L = I w + h~ v
        maps.linear_of_w = -so3::hat(M.h);
        maps.angular_of_w = M.I;
        maps.angular_of_rest = so3::hat(M.h);
      }
      body_maps_.push_back(maps);
    }
    load_sum_.assign(ui(n_ + 1), Vec6::Zero());
    const auto per_node = ui(n_ + 1);
    articulated_.resize(per_node);
    to_node_.resize(ui(n_));
    instant_.resize(ui(n_));
    for (auto* vectors : {&twist_bias_, &rate_, &U_, &bias_wrench_}) vectors->resize(per_node);
    D_.resize(ui(n_));
    u_.resize(ui(n_));
  }

  // H-GRNE. rates: u^(1..r+1) (nv x (r+1)); forces: tau^(0..r), as
  // HigherOrderDynamics::inverse_dynamics; applied[l * applied_stride + k]: the k-th
  // derivative of the tree's load l (aligned frames). Order 0 has its own short path
  // (inverse_order_zero); from order 1 on one branch per call picks the rows' width (SeriesRows).
  void inverse(const TreeState& state, const Eigen::MatrixXd& rates, const Vec6* applied, int applied_stride,
               Eigen::MatrixXd& forces) {
    if (rates.cols() == 1) return inverse_order_zero(state, rates, applied, applied_stride, forces);
#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
    if (wide_) return inverse_wide(state, rates, applied, applied_stride, forces);
#endif
    inverse_in_rows<SeriesRows<2>>(state, rates, applied, applied_stride, forces);
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
      subtract_loads(applied, applied_stride, k, [&](int node) -> Vec6& { return bias_wrench_[ui(node)]; },
                     [&](int node, int j) -> Vec3 { return V(node, j).head<3>(); });
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
    // H-GRNE's rows: coefficients 0..r+1 and the blocks' rounding (up to r+5), after 4 zeros.
    const int front = 4, row_length = (r + 9) / 4 * 4;
    pitch_ = front + row_length;
    rows_.assign(ui((14 * (n_ + 1) + Scratch::count) * pitch_), 0.0);
    first_row_ = rows_.data() + front;
    double* ramp = scratch_row(Scratch::ramp);
    for (int k = 0; k < row_length; ++k) ramp[k] = k + 1;
    gamma_.assign(ui(stride_), Vec6::Zero());
    base_twist_.assign(ui(stride_), Vec6::Zero());
    world_to_node_.assign(nodes_.loads.size() * ui(stride_), Mat3::Zero());
    cos_.assign(sequences, 0.0);
    sin_.assign(sequences, 0.0);
    angle_.assign(sequences, 0.0);
    factorial_.assign(ui(stride_ + 1), 1.0);
    inverse_factorial_.assign(ui(stride_ + 1), 1.0);
    inverse_integer_.assign(ui(stride_ + 1), 1.0);
    for (int m = 1; m <= stride_; ++m) inverse_integer_[ui(m)] = 1.0 / m;
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
  // H-GRNE's rows (SeriesRows): node i's twist and wrench series (6 rows each, the root's
  // last), then the scratch rows of one node; row c of a set pitch_ doubles after row 0.
  struct Scratch {
    enum : int { shifted = 0, momentum = 6, spin = 12, sums = 15, rotated = 21, rate = 27, shift = 28, ramp = 29, count = 30 };
  };
  double* row(int index) { return first_row_ + index * pitch_; }
  double* twist_rows(int i) { return row(6 * i); }
  double* wrench_rows(int i) { return row(6 * (n_ + 1 + i)); }
  double* angle_rows(int i) { return row(12 * (n_ + 1) + 2 * i); }  // cos, sin of a_i q_i(t)
  double* scratch_row(int index) { return row(14 * (n_ + 1) + index); }

  // Coefficient k of cos and sin of node i's angle a_i q_i(t), from q_i,0..k.
  void angle_coefficient(int i, int k) {
    double* theta = &angle_[ui(i * stride_)];
    theta[k] = axial_[ui(i)].angular * q(i, k);
    sincos_coefficient(theta, k, inverse_integer_[ui(k)], &cosine(i, 0), &sine(i, 0));
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

  // Order 0 needs V_0, V_1 and W_0 only: RNEA in the falling frame, with the tree kernels'
  // products (000 eqs. 66-68). With T_i = Ad^-1 of node i's pose at the instant, B_i Z_i(q),
  //   V_i,0 = T_i V_p,0 + X q',   V_i,1 = T_i V_p,1 + [V_i,0, X q'] + X q''   (coefficient 1
  //   of the screw motion's Cauchy sums: R_1 = -ad_{X q'} R_0),
  //   W_i,0 = M V_i,1 - ad^T_{V_i,0} M V_i,0 - W_app + sum_c T_c^T W_c,0,   tau_i = X . W_i,0:
  // the rows' recursion at r = 0 without its series.
  void inverse_order_zero(const TreeState& state, const Eigen::MatrixXd& rates, const Vec6* applied, int applied_stride,
                          Eigen::MatrixXd& forces) {
    const int offset = nodes_.floating_base ? 6 : 0;
    reserve(0);
    root_motion(state, rates, 1);
    if (nodes_.floating_base) W(n_, 0) = newton_euler_at_order_zero(n_);
    for (int i = 0; i < n_; ++i) {
      const auto k_i = ui(i);
      const int p = nodes_.parent[k_i];
      const AxialScrew& X = axial_[k_i];
      twist_transforms::Adjoint& T = instant_[k_i];
      T.C = pose_at_instant(i, state.q(i));
      const double qd = state.qd(i);
      Vec6 &V0 = V(i, 0), &V1 = V(i, 1);
      V0 = T.apply(V(p >= 0 ? p : n_, 0));
      add_screw(V0, X, qd);
      V1 = T.apply(V(p >= 0 ? p : n_, 1)) + se3::bracket(V0, AxialScrew{X.angular * qd, X.linear * qd});
      add_screw(V1, X, rates(offset + i, 0));
      W(i, 0) = newton_euler_at_order_zero(i);
    }
    if (!nodes_.loads.empty()) {
      if (world_loads_) world_rotations(state);
      subtract_loads(applied, applied_stride, 0, [&](int node) -> Vec6& { return W(node, 0); },
                     [&](int node, int j) -> Vec3 { return V(node, j).head<3>(); });
    }
    forces.resize(nodes_.velocity_dimension(), 1);
    for (int i = n_ - 1; i >= 0; --i) {
      forces(offset + i, 0) = screw_dot(axial_[ui(i)], W(i, 0));
      const int p = nodes_.parent[ui(i)];
      if (p >= 0 || nodes_.floating_base) instant_[ui(i)].add_transpose_to(W(i, 0), W(p >= 0 ? p : n_, 0));
    }
    if (nodes_.floating_base) forces.col(0).head<6>() = W(n_, 0);
  }
  LIEMBS_STRONG_INLINE Vec6 newton_euler_at_order_zero(int i) {
    const RigidInertia& M = rigid_[ui(i)];
    return M * V(i, 1) + representations::momentum_rate_bias(V(i, 0), M * V(i, 0));
  }
  // Node i's pose in its parent's frame at joint coordinate q: B_i Z_i(q), Z_i a rotation
  // about z by a q and a shift along z by l q.
  LIEMBS_STRONG_INLINE Pose pose_at_instant(int i, double q) const {
    const Pose& B = nodes_.reference[ui(i)];
    const AxialScrew& X = axial_[ui(i)];
    Pose C = B;
    if (X.angular != 0.0) {
      const SinCos angle = sincos(X.angular * q);
      C.R.col(0) = angle.cos * B.R.col(0) + angle.sin * B.R.col(1);
      C.R.col(1) = angle.cos * B.R.col(1) - angle.sin * B.R.col(0);
    }
    if (X.linear != 0.0) C.r += B.R.col(2) * (X.linear * q);
    return C;
  }

#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
  __attribute__((target("avx2,fma"))) void inverse_wide(const TreeState& state, const Eigen::MatrixXd& rates,
                                                        const Vec6* applied, int applied_stride, Eigen::MatrixXd& forces) {
    inverse_in_rows<SeriesRows<4>>(state, rates, applied, applied_stride, forces);
  }
#endif

  // H-GRNE in coefficient rows (top of the file): the root's twist series, then per node
  // (parents first) its twist series and its own wrench series, the loads, and per node
  // (leaves first) its forces and its wrench moved to the parent.
  template <class Rows>
  LIEMBS_STRONG_INLINE void inverse_in_rows(const TreeState& state, const Eigen::MatrixXd& rates, const Vec6* applied,
                                            int applied_stride, Eigen::MatrixXd& forces) {
    const int r = static_cast<int>(rates.cols()) - 1, K = r + 1, offset = nodes_.floating_base ? 6 : 0;
    reserve(r);
    const int twist_blocks = Rows::blocks(K), wrench_blocks = Rows::blocks(r);
    root_motion(state, rates, K);
    for (int k = 0; k <= K; ++k)
      for (int c = 0; c < 6; ++c) twist_rows(n_)[c * pitch_ + k] = V(n_, k)(c);
    if (nodes_.floating_base) own_wrench_rows<Rows>(n_, r, twist_blocks, wrench_blocks);
    for (int i = 0; i < n_; ++i) {
      double* qi = &q(i, 0);
      qi[0] = state.q(i);
      qi[1] = state.qd(i);
      for (int m = 2; m <= K + 1; ++m) qi[m] = rates(offset + i, m - 2) * inverse_factorial_[ui(m)];
      if (axial_[ui(i)].angular != 0.0)
        for (int k = 0; k <= K; ++k) {
          angle_coefficient(i, k);
          angle_rows(i)[k] = cosine(i, k);
          angle_rows(i)[pitch_ + k] = sine(i, k);
        }
      twist_rows_of_node<Rows>(i, K, twist_blocks);
      own_wrench_rows<Rows>(i, r, twist_blocks, wrench_blocks);
    }
    if (!nodes_.loads.empty()) subtract_loads_from_rows(state, applied, applied_stride, r);
    forces.resize(nodes_.velocity_dimension(), r + 1);
    for (int i = n_ - 1; i >= 0; --i) {
      const AxialScrew& X = axial_[ui(i)];
      const double* W = wrench_rows(i);
      for (int k = 0; k <= r; ++k)
        forces(offset + i, k) = factorial_[ui(k)] * (X.angular * W[2 * pitch_ + k] + X.linear * W[5 * pitch_ + k]);
      const int p = nodes_.parent[ui(i)];
      if (p >= 0 || nodes_.floating_base) wrench_rows_to_parent<Rows>(i, p >= 0 ? p : n_, r, wrench_blocks);
    }
    if (nodes_.floating_base)
      for (int k = 0; k <= r; ++k)
        for (int c = 0; c < 6; ++c) forces(c, k) = factorial_[ui(k)] * wrench_rows(n_)[c * pitch_ + k];
  }

  // V_i,k, k = 0..K, from the parent's: the constant reference pose B_i, then the joint's
  // screw motion Z(t) (rotation about z by theta = a q, shift along z by d = l q), then X q'
  // (001 eq. 4):  Ad^-1_{(R, p)} (w, v) = (R^T w, R^T v - R^T p x w).
  template <class Rows>
  LIEMBS_STRONG_INLINE void twist_rows_of_node(int i, int K, int blocks) {
    const auto k_i = ui(i);
    const int p = nodes_.parent[k_i];
    const NodeMaps& B = node_maps_[k_i];
    const AxialScrew& X = axial_[k_i];
    const double* parent = twist_rows(p >= 0 ? p : n_);
    double* Y = scratch_row(Scratch::shifted);
    const int pitch = pitch_;
    Rows::template adjoint<false>(B.Rt, B.minus_Rt_p, parent, Y, pitch, blocks);
    if (X.linear != 0.0) {  // v - d e_z x w = (v_x + d w_y, v_y - d w_x, v_z), Cauchy in d = l q
      const double* d = shift_series(i, K);
      Rows::cauchy(d, 1.0, Y + pitch, Y + 3 * pitch, K, blocks);
      Rows::cauchy(d, -1.0, Y, Y + 4 * pitch, K, blocks);
    }
    double* V = twist_rows(i);
    if (X.angular != 0.0) Rows::template rotate<1>(angle_rows(i), angle_rows(i) + pitch, Y, V, pitch, K, blocks);
    else Rows::copy(Y, V, 6, pitch, blocks);
    double* rate = scratch_row(Scratch::rate);  // (k+1) q_(k+1): X q' (the coefficients of)
    for (int k = 0; k <= K; ++k) rate[k] = (k + 1) * q(i, k + 1);
    if (X.angular != 0.0) Rows::scale_add(X.angular, rate, V + 2 * pitch, blocks);
    if (X.linear != 0.0) Rows::scale_add(X.linear, rate, V + 5 * pitch, blocks);
  }

  // Node i's own wrench series W_k = (k+1) Pi_(k+1) - sum_{j<=k} ad^T_{V_j} Pi_(k-j), k = 0..r
  // (000 eq. 66 per Taylor coefficient; momentum_bias): the momenta of coefficients 0..r+1
  // as 3x3 products, Pi = (L, p), p = m v + m w x c, J = I_c w, L = J + c x p; the sums
  // F = sum_j w_j x p_(k-j), G = sum_j w_j x J_(k-j), and W = (k+1) Pi + (G + c x F, F). A
  // body that is not centred (a first moment without mass) takes L = I w + h x v,
  // p = m v - h x w and G = sum_j (w_j x L_(k-j) + v_j x p_(k-j)).
  template <class Rows>
  LIEMBS_STRONG_INLINE void own_wrench_rows(int i, int r, int twist_blocks, int wrench_blocks) {
    const BodyMaps& M = body_maps_[ui(i)];
    const int pitch = pitch_;
    const double *w = twist_rows(i), *v = w + 3 * pitch;
    double *L = scratch_row(Scratch::momentum), *p = L + 3 * pitch, *J = scratch_row(Scratch::spin);
    Rows::momenta(M.linear_of_w, M.m, M.angular_of_w, M.angular_of_rest, M.centred, w, L, J, pitch, twist_blocks);
    double *G = scratch_row(Scratch::sums), *F = G + 3 * pitch;
    Rows::template cross_sums<false>(w, p, M.centred ? J : L, F, G, pitch, r, wrench_blocks);
    if (!M.centred) Rows::template cross_sums<true>(v, p, nullptr, G, nullptr, pitch, r, wrench_blocks);
    Rows::newton_euler(L, G, M.c, scratch_row(Scratch::ramp), wrench_rows(i), pitch, wrench_blocks);
  }

  // Adds node i's wrench series, moved into its parent's frame, to the parent's: first
  // Z(t) (R_z, Cauchy in cos and sin; the shift p x, m += (-d f_y, d f_x, 0), Cauchy in d),
  // then B_i:  Ad^-T_{(R, p)} (m, f) = (R m + p x R f, R f).
  template <class Rows>
  LIEMBS_STRONG_INLINE void wrench_rows_to_parent(int i, int parent, int r, int blocks) {
    const auto k_i = ui(i);
    const AxialScrew& X = axial_[k_i];
    const NodeMaps& B = node_maps_[k_i];
    const int pitch = pitch_;
    const double* W = wrench_rows(i);
    double* Z = scratch_row(Scratch::rotated);
    if (X.angular != 0.0) Rows::template rotate<-1>(angle_rows(i), angle_rows(i) + pitch, W, Z, pitch, r, blocks);
    else Rows::copy(W, Z, 6, pitch, blocks);
    if (X.linear != 0.0) {
      const double* d = shift_series(i, r);
      Rows::cauchy(d, -1.0, Z + 4 * pitch, Z, r, blocks);
      Rows::cauchy(d, 1.0, Z + 3 * pitch, Z + pitch, r, blocks);
    }
    Rows::template adjoint<true>(B.R, B.p_R, Z, wrench_rows(parent), pitch, blocks);
  }

  // d_k = l q_k, k = 0..last, of node i's shift along z.
  const double* shift_series(int i, int last) {
    double* d = scratch_row(Scratch::shift);
    for (int k = 0; k <= last; ++k) d[k] = axial_[ui(i)].linear * q(i, k);
    return d;
  }

  // Subtracts the applied wrenches' coefficients 0..r from the nodes' wrench rows.
  void subtract_loads_from_rows(const TreeState& state, const Vec6* applied, int applied_stride, int r) {
    if (world_loads_) world_rotations(state);
    const auto angular = [&](int node, int j) {
      const double* V = twist_rows(node);
      return Vec3(V[j], V[pitch_ + j], V[2 * pitch_ + j]);
    };
    for (int k = 0; k <= r; ++k) {
      subtract_loads(applied, applied_stride, k, [&](int node) -> Vec6& { return load_sum_[ui(node)]; }, angular);
      for (const auto& load : nodes_.loads) {
        const int node = load.node >= 0 ? load.node : n_;
        Vec6& sum = load_sum_[ui(node)];
        for (int c = 0; c < 6; ++c) wrench_rows(node)[c * pitch_ + k] += sum(c);
        sum.setZero();
      }
    }
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
  // (needs the angular velocities w_0..k-1 of the loaded nodes, angular(node, j)): a body-frame load's W_k = W^(k) / k!; a
  // world-frame one (pure moment m, force f at the node point x) is (z_m + x x z_f, z_f) with
  // z = R^T y for y = m, f: rho = R^T has rho' = -w~ rho, so k rho_k = -sum_{j<k} w_j~ rho_(k-1-j)
  // and z_k = sum_j rho_j y_(k-j) (Cauchy).
  template <class Target, class Angular>
  void subtract_loads(const Vec6* applied, int applied_stride, int k, const Target& target, const Angular& angular) {
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
        for (int j = 0; j < k; ++j) sum.noalias() += so3::hat(angular(node, j)) * rho[k - 1 - j];
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
  // Per order: the falling frame's gamma and the base's real body twist.
  std::vector<Vec6> gamma_, base_twist_;
  // H-GRNE: the rows (row()), pitch_ doubles each, the first four zeros; per node the
  // constant maps of Ad^-1_{B_i} and Ad^-T_{B_i} and of its momentum (the root's last); the
  // loads of one coefficient per node; four coefficients at a time if the processor can.
  std::vector<double> rows_;
  double* first_row_ = nullptr;  // coefficient 0 of row 0
  int pitch_ = 0;
  struct NodeMaps {  // B_i = (R, p)
    Mat3 Rt, minus_Rt_p, R, p_R;  // R^T, -R^T p~, R, p~ R
  };
  struct BodyMaps {  // p = linear_of_w w + m v, J = angular_of_w w, L = J + angular_of_rest (p or v)
    Mat3 linear_of_w, angular_of_w, angular_of_rest;
    double m = 0.0;
    Vec3 c = Vec3::Zero();  // the centre of mass (zero if not centred)
    bool centred = true;
  };
  std::vector<NodeMaps> node_maps_;
  std::vector<BodyMaps> body_maps_;
  std::vector<Vec6> load_sum_;
  std::vector<twist_transforms::Adjoint> instant_;  // order 0: Ad^-1 of each node's pose at the instant
  bool wide_ = false;
  std::vector<double> factorial_, inverse_factorial_, inverse_integer_;
  std::vector<Mat3> world_rotation_, world_to_node_;  // per node; per load and order (rho)
  // Hybrid dynamics: per node (the root last) M^A, c (twist_bias_), a (rate_), U, the bias
  // wrench of the current order; per joint D, u and A.
  std::vector<Mat6> articulated_, to_node_;
  std::vector<Vec6> twist_bias_, rate_, U_, bias_wrench_;
  std::vector<double> D_, u_;
  Eigen::LDLT<Mat6> base_factor_;
};

}  // namespace liembs::higher_order_kernels
