#pragma once
// A plain, scalar-templated RNEA and ABA of a KinematicTree (body-fixed twists, Featherstone's
// textbook form), written for the automatic-differentiation baselines of the higher-order
// benchmark (bench-higher-order, docs/higher-order.md "Benchmark"): instantiated on ADOL-C's
// adouble for taping and on nested dual numbers (nested_dual.hpp). It shares no code with the
// LieMBS kernels (only the compiled tree's numbers), so agreement with them is a real check.
//
// Coordinates as LieMBS's tree algorithms: u = (base body twist (w, v), q'), forces = (base
// body-frame wrench (moment about the base origin, force), joint forces). Gravity enters as a
// root acceleration -(0; gamma), gamma the gravity vector in root coordinates: for a floating
// base gamma = R^T g is an input (it changes along a motion: gamma' = gamma x w), for a fixed
// base it is the constant g. The model's constant loads are not supported (the benchmark
// models have none); ScalarTree refuses a tree that has any.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/error.hpp>

#include <array>
#include <cmath>
#include <vector>

namespace liembs::ad_baseline {

// The tree's numbers in aligned node frames (joint screw on z): C_{p,i}(q) = B_i Rz(a q) Tz(l q).
struct ScalarTree {
  explicit ScalarTree(const KinematicTree& input) {
    if (!input.loads.empty())
      throw Error("AD baseline: the model's constant loads are not supported (" + std::to_string(input.loads.size()) +
                  " load(s))");
    const AlignedTree aligned = align_node_frames(input);
    const KinematicTree& tree = aligned.tree;
    floating = tree.floating_base;
    parent = tree.parent;
    reference = tree.reference;
    axial = aligned.axial;
    inertia = tree.inertia;
    base_inertia = tree.base_inertia;
    gravity = tree.gravity;
  }
  int dof() const { return static_cast<int>(parent.size()); }
  int velocity_dimension() const { return dof() + (floating ? 6 : 0); }

  bool floating = false;
  std::vector<int> parent;
  std::vector<Pose> reference;
  std::vector<AxialScrew> axial;
  std::vector<Mat6> inertia;
  Mat6 base_inertia;
  Vec3 gravity;
};

template <class S>
using V3 = std::array<S, 3>;
template <class S>
using V6 = std::array<S, 6>;  // twist (w, v) or wrench (m, f)
template <class S>
using M6 = std::array<S, 36>;  // row-major

template <class S>
V3<S> cross(const V3<S>& a, const V3<S>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
template <class S>
S dot6(const V6<S>& a, const V6<S>& b) {
  S sum = a[0] * b[0];
  for (int k = 1; k < 6; ++k) sum += a[k] * b[k];
  return sum;
}
template <class S>
V3<S> head(const V6<S>& x) { return {x[0], x[1], x[2]}; }
template <class S>
V3<S> tail(const V6<S>& x) { return {x[3], x[4], x[5]}; }
template <class S>
V6<S> join(const V3<S>& a, const V3<S>& b) { return {a[0], a[1], a[2], b[0], b[1], b[2]}; }
template <class S>
V6<S> add(const V6<S>& a, const V6<S>& b) {
  V6<S> c;
  for (int k = 0; k < 6; ++k) c[k] = a[k] + b[k];
  return c;
}
// ad_V X = (w x xw, v x xw + w x xv)
template <class S>
V6<S> ad(const V6<S>& V, const V6<S>& X) {
  const V3<S> w = head(V), v = tail(V), xw = head(X), xv = tail(X);
  const V3<S> top = cross(w, xw), a = cross(v, xw), b = cross(w, xv);
  return {top[0], top[1], top[2], a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
// -ad_V^T P = (w x m + v x f, w x f)
template <class S>
V6<S> minus_coad(const V6<S>& V, const V6<S>& P) {
  const V3<S> w = head(V), v = tail(V), m = head(P), f = tail(P);
  const V3<S> a = cross(w, m), b = cross(v, f), c = cross(w, f);
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2], c[0], c[1], c[2]};
}
// A constant 6x6 matrix times a vector.
template <class S>
V6<S> times(const Mat6& M, const V6<S>& x) {
  V6<S> y;
  for (int i = 0; i < 6; ++i) {
    S sum = M(i, 0) * x[0];
    for (int j = 1; j < 6; ++j) sum += M(i, j) * x[j];
    y[i] = sum;
  }
  return y;
}
template <class S>
V6<S> times(const M6<S>& M, const V6<S>& x) {
  V6<S> y;
  for (int i = 0; i < 6; ++i) {
    S sum = M[6 * i] * x[0];
    for (int j = 1; j < 6; ++j) sum += M[6 * i + j] * x[j];
    y[i] = sum;
  }
  return y;
}
template <class S>
V6<S> screw_times(const AxialScrew& X, const S& s) {
  return {S(0.0), S(0.0), X.angular * s, S(0.0), S(0.0), X.linear * s};
}
template <class S>
S screw_dot(const AxialScrew& X, const V6<S>& W) { return X.angular * W[2] + X.linear * W[5]; }

// The pose of node i in its parent, C = (R, p) = B Rz(a q) Tz(l q), applied to vectors.
template <class S>
struct JointTransform {
  JointTransform(const Pose& B, const AxialScrew& X, const S& q) : B(B) {
    using std::cos;
    using std::sin;
    const S angle = X.angular * q;
    c = cos(angle);
    s = sin(angle);
    const S shift = X.linear * q;
    for (int k = 0; k < 3; ++k) p[k] = B.r(k) + B.R(k, 2) * shift;
  }
  // R x and R^T x with R = B.R Rz
  V3<S> rotate(const V3<S>& x) const {
    const V3<S> z{c * x[0] - s * x[1], s * x[0] + c * x[1], x[2]};
    V3<S> y;
    for (int i = 0; i < 3; ++i) y[i] = B.R(i, 0) * z[0] + B.R(i, 1) * z[1] + B.R(i, 2) * z[2];
    return y;
  }
  V3<S> unrotate(const V3<S>& x) const {
    V3<S> y;
    for (int i = 0; i < 3; ++i) y[i] = B.R(0, i) * x[0] + B.R(1, i) * x[1] + B.R(2, i) * x[2];
    return {c * y[0] + s * y[1], -s * y[0] + c * y[1], y[2]};
  }
  // Ad_{C^-1} V: a parent twist in the child frame
  V6<S> twist_to_child(const V6<S>& V) const {
    const V3<S> w = head(V), v = tail(V), pw = cross(p, w);
    return join(unrotate(w), unrotate(V3<S>{v[0] - pw[0], v[1] - pw[1], v[2] - pw[2]}));
  }
  // Ad_{C^-1}^T W: a child wrench in the parent frame
  V6<S> wrench_to_parent(const V6<S>& W) const {
    const V3<S> m = rotate(head(W)), f = rotate(tail(W)), pf = cross(p, f);
    return join(V3<S>{m[0] + pf[0], m[1] + pf[1], m[2] + pf[2]}, f);
  }
  // Ad_{C^-1}^T I Ad_{C^-1}: a child's (articulated) inertia in the parent frame, column by
  // column (I Ad_{C^-1} e_k transported back).
  M6<S> inertia_to_parent(const M6<S>& I) const {
    M6<S> out;
    for (int k = 0; k < 6; ++k) {
      V6<S> e{};
      for (auto& x : e) x = S(0.0);
      e[k] = S(1.0);
      const V6<S> column = wrench_to_parent(times(I, twist_to_child(e)));
      for (int i = 0; i < 6; ++i) out[6 * i + k] = column[i];
    }
    return out;
  }

  const Pose& B;
  S c, s;
  V3<S> p;
};

// Inverse dynamics (RNEA). Inputs: gamma (3, floating only), base twist V and acceleration
// A (6 each, floating only), q, qd, qdd (n each). Outputs: force (nv).
template <class S>
void inverse_dynamics(const ScalarTree& tree, const S* gamma, const S* V, const S* A, const S* q, const S* qd, const S* qdd,
                      S* force) {
  const int n = tree.dof();
  std::vector<V6<S>> twist(static_cast<std::size_t>(n)), acceleration(twist.size()), wrench(twist.size());
  std::vector<JointTransform<S>> transform;
  transform.reserve(twist.size());
  V6<S> base_twist, base_acceleration;
  for (int k = 0; k < 6; ++k) base_twist[k] = base_acceleration[k] = S(0.0);
  if (tree.floating) {
    for (int k = 0; k < 6; ++k) base_twist[k] = V[k], base_acceleration[k] = A[k];
    for (int k = 0; k < 3; ++k) base_acceleration[3 + k] -= gamma[k];
  } else {
    for (int k = 0; k < 3; ++k) base_acceleration[3 + k] = S(-tree.gravity(k));
  }
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    transform.emplace_back(tree.reference[u], tree.axial[u], q[i]);
    const int p = tree.parent[u];
    const V6<S>& parent_twist = p < 0 ? base_twist : twist[static_cast<std::size_t>(p)];
    const V6<S>& parent_acceleration = p < 0 ? base_acceleration : acceleration[static_cast<std::size_t>(p)];
    const V6<S> joint_rate = screw_times(tree.axial[u], qd[i]);
    twist[u] = add(transform[u].twist_to_child(parent_twist), joint_rate);
    acceleration[u] = add(add(transform[u].twist_to_child(parent_acceleration), screw_times(tree.axial[u], qdd[i])),
                          ad(twist[u], joint_rate));
    wrench[u] = add(times(tree.inertia[u], acceleration[u]), minus_coad(twist[u], times(tree.inertia[u], twist[u])));
  }
  V6<S> base_wrench = add(times(tree.base_inertia, base_acceleration),
                          minus_coad(base_twist, times(tree.base_inertia, base_twist)));
  const int offset = tree.floating ? 6 : 0;
  for (int i = n - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    force[offset + i] = screw_dot(tree.axial[u], wrench[u]);
    const int p = tree.parent[u];
    const V6<S> moved = transform[u].wrench_to_parent(wrench[u]);
    V6<S>& target = p < 0 ? base_wrench : wrench[static_cast<std::size_t>(p)];
    target = add(target, moved);
  }
  if (tree.floating)
    for (int k = 0; k < 6; ++k) force[k] = base_wrench[k];
}

// Solves the symmetric positive definite 6x6 system M x = b by Cholesky.
template <class S>
V6<S> cholesky_solve(M6<S> M, V6<S> b) {
  using std::sqrt;
  for (int j = 0; j < 6; ++j) {
    S diagonal = M[6 * j + j];
    for (int k = 0; k < j; ++k) diagonal -= M[6 * j + k] * M[6 * j + k];
    M[6 * j + j] = sqrt(diagonal);
    for (int i = j + 1; i < 6; ++i) {
      S sum = M[6 * i + j];
      for (int k = 0; k < j; ++k) sum -= M[6 * i + k] * M[6 * j + k];
      M[6 * i + j] = sum / M[6 * j + j];
    }
  }
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= M[6 * i + k] * b[k];
    b[i] = b[i] / M[6 * i + i];
  }
  for (int i = 5; i >= 0; --i) {
    for (int k = i + 1; k < 6; ++k) b[i] -= M[6 * k + i] * b[k];
    b[i] = b[i] / M[6 * i + i];
  }
  return b;
}

// Forward dynamics (ABA). Inputs: gamma (3, floating only), base twist V (6, floating only),
// q, qd (n each), force (nv). Output: the acceleration u' (nv).
template <class S>
void forward_dynamics(const ScalarTree& tree, const S* gamma, const S* V, const S* q, const S* qd, const S* force,
                      S* acceleration) {
  const int n = tree.dof(), offset = tree.floating ? 6 : 0;
  const auto size = static_cast<std::size_t>(n);
  std::vector<V6<S>> twist(size), bias_acceleration(size), bias_force(size), U(size), a(size);
  std::vector<M6<S>> articulated(size);
  std::vector<S> D(size), u(size);
  std::vector<JointTransform<S>> transform;
  transform.reserve(size);
  V6<S> base_twist;
  for (int k = 0; k < 6; ++k) base_twist[k] = tree.floating ? V[k] : S(0.0);
  const auto rigid = [](const Mat6& M) {
    M6<S> out;
    for (int i = 0; i < 36; ++i) out[static_cast<std::size_t>(i)] = S(M(i / 6, i % 6));
    return out;
  };
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    transform.emplace_back(tree.reference[k], tree.axial[k], q[i]);
    const int p = tree.parent[k];
    const V6<S> joint_rate = screw_times(tree.axial[k], qd[i]);
    twist[k] = add(transform[k].twist_to_child(p < 0 ? base_twist : twist[static_cast<std::size_t>(p)]), joint_rate);
    bias_acceleration[k] = ad(twist[k], joint_rate);
    bias_force[k] = minus_coad(twist[k], times(tree.inertia[k], twist[k]));
    articulated[k] = rigid(tree.inertia[k]);
  }
  M6<S> base_articulated = rigid(tree.base_inertia);
  V6<S> base_bias = minus_coad(base_twist, times(tree.base_inertia, base_twist));
  for (int i = n - 1; i >= 0; --i) {
    const auto k = static_cast<std::size_t>(i);
    const AxialScrew& X = tree.axial[k];
    for (int r = 0; r < 6; ++r) U[k][r] = X.angular * articulated[k][6 * r + 2] + X.linear * articulated[k][6 * r + 5];
    D[k] = screw_dot(X, U[k]);
    u[k] = force[offset + i] - screw_dot(X, bias_force[k]);
    M6<S> projected = articulated[k];
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c) projected[6 * r + c] -= U[k][r] * U[k][c] / D[k];
    V6<S> projected_bias = add(bias_force[k], times(projected, bias_acceleration[k]));
    for (int r = 0; r < 6; ++r) projected_bias[r] += U[k][r] * u[k] / D[k];
    const int p = tree.parent[k];
    if (p < 0 && !tree.floating) continue;  // the world takes it
    M6<S>& target_inertia = p < 0 ? base_articulated : articulated[static_cast<std::size_t>(p)];
    V6<S>& target_bias = p < 0 ? base_bias : bias_force[static_cast<std::size_t>(p)];
    const M6<S> moved = transform[k].inertia_to_parent(projected);
    for (int r = 0; r < 36; ++r) target_inertia[static_cast<std::size_t>(r)] += moved[static_cast<std::size_t>(r)];
    target_bias = add(target_bias, transform[k].wrench_to_parent(projected_bias));
  }
  V6<S> base_acceleration;  // with gravity folded in: A = V' - (0; gamma)
  if (tree.floating) {
    V6<S> rhs;
    for (int k = 0; k < 6; ++k) rhs[k] = force[k] - base_bias[k];
    base_acceleration = cholesky_solve(base_articulated, rhs);
    for (int k = 0; k < 6; ++k) acceleration[k] = base_acceleration[k];
    for (int k = 0; k < 3; ++k) acceleration[3 + k] += gamma[k];
  } else {
    for (int k = 0; k < 6; ++k) base_acceleration[k] = S(0.0);
    for (int k = 0; k < 3; ++k) base_acceleration[3 + k] = S(-tree.gravity(k));
  }
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const int p = tree.parent[k];
    a[k] = add(transform[k].twist_to_child(p < 0 ? base_acceleration : a[static_cast<std::size_t>(p)]), bias_acceleration[k]);
    const S qdd = (u[k] - dot6(U[k], a[k])) / D[k];
    acceleration[offset + i] = qdd;
    a[k] = add(a[k], screw_times(tree.axial[k], qdd));
  }
}

}  // namespace liembs::ad_baseline
