#pragma once
// Truncated Taylor series in time (c[k] = x^(k)(t0) / k!): exact time derivatives of the
// inputs of a smooth trajectory (poses, twists, joint coordinates), computed independently
// of the algorithms under test, for the higher-order dynamics tests (paper 003).
#include <array>
#include <cmath>
#include <utility>

namespace liembs::testing::jets {

constexpr int jet_size = 12;  // derivatives 0..11: orders up to r = 9 of the dynamics
struct Jet {
  std::array<double, jet_size> c{};
  static Jet constant(double x) {
    Jet j;
    j.c[0] = x;
    return j;
  }
  double derivative(int k) const { return c[static_cast<std::size_t>(k)] * std::tgamma(k + 1.0); }
};
inline Jet operator+(Jet a, const Jet& b) {
  for (int k = 0; k < jet_size; ++k) a.c[k] += b.c[k];
  return a;
}
inline Jet operator-(Jet a, const Jet& b) {
  for (int k = 0; k < jet_size; ++k) a.c[k] -= b.c[k];
  return a;
}
inline Jet operator*(double s, Jet a) {
  for (double& x : a.c) x *= s;
  return a;
}
inline Jet operator*(const Jet& a, const Jet& b) {
  Jet out;
  for (int k = 0; k < jet_size; ++k)
    for (int j = 0; j <= k; ++j) out.c[k] += a.c[j] * b.c[k - j];
  return out;
}
// sin and cos of a jet: s' = c x', c' = -s x'.
inline std::pair<Jet, Jet> sincos(const Jet& x) {
  Jet s, c;
  s.c[0] = std::sin(x.c[0]);
  c.c[0] = std::cos(x.c[0]);
  for (int k = 1; k < jet_size; ++k) {
    for (int j = 1; j <= k; ++j) {
      s.c[k] += j * x.c[j] * c.c[k - j];
      c.c[k] -= j * x.c[j] * s.c[k - j];
    }
    s.c[k] /= k;
    c.c[k] /= k;
  }
  return {s, c};
}
inline Jet derivative(const Jet& x) {
  Jet out;
  for (int k = 0; k + 1 < jet_size; ++k) out.c[k] = (k + 1) * x.c[k + 1];
  return out;
}
// a sin(w t + phase) + offset at time t
inline Jet wave(double t, double a, double w, double phase, double offset) {
  Jet x;
  x.c[0] = w * t + phase;
  x.c[1] = w;
  return a * sincos(x).first + Jet::constant(offset);
}
using JetMatrix = std::array<std::array<Jet, 3>, 3>;
inline JetMatrix multiply(const JetMatrix& a, const JetMatrix& b) {
  JetMatrix out;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) out[i][j] = out[i][j] + a[i][k] * b[k][j];
  return out;
}
// A rotation by the jet angle about axis `axis`.
inline JetMatrix rotation(int axis, const Jet& angle) {
  const auto [s, c] = sincos(angle);
  JetMatrix R;
  const int i = (axis + 1) % 3, j = (axis + 2) % 3;
  R[axis][axis] = Jet::constant(1.0);
  R[i][i] = c;
  R[j][j] = c;
  R[i][j] = -1.0 * s;
  R[j][i] = s;
  return R;
}

// The body twist (omega, R^T p') of the pose (R(t), p(t)): omega^ = R^T R'.
inline std::array<Jet, 6> body_twist(const JetMatrix& R, const std::array<Jet, 3>& p) {
  std::array<Jet, 6> twist;
  JetMatrix W;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) W[i][j] = W[i][j] + R[k][i] * derivative(R[k][j]);
  twist[0] = W[2][1];
  twist[1] = W[0][2];
  twist[2] = W[1][0];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) twist[3 + i] = twist[3 + i] + R[k][i] * derivative(p[k]);
  return twist;
}

}  // namespace liembs::testing::jets
