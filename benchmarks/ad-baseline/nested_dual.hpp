#pragma once
// Nested first-order forward mode: the r-th time derivative by r nested directional
// derivatives d/dt, the way CasADi's repeated jtimes(y, t, 1) builds it (paper 003's AD
// baseline, reference note Table 4). Dual<T> = a + b e with e^2 = 0; Nested<r> nests r of
// them, 2^r numbers, and a product costs 3^r multiplications: the cost grows exponentially
// in r, which is the point of the baseline.
//
// A time function x(t) enters as x(t + e_1 + ... + e_r) = sum over subsets S of x^(|S|)
// prod_{i in S} e_i (seed), and the k-th derivative of a result is its component
// e_1 ... e_k (derivative).
#include <cmath>
#include <vector>

namespace liembs::ad_baseline {

template <class T>
struct Dual {
  T a, b;  // value, derivative
  Dual() : a(0.0), b(0.0) {}
  Dual(double value) : a(value), b(0.0) {}  // NOLINT: constants mix with duals
  Dual(const T& a, const T& b) : a(a), b(b) {}

  Dual& operator+=(const Dual& y) { a += y.a, b += y.b; return *this; }
  Dual& operator-=(const Dual& y) { a -= y.a, b -= y.b; return *this; }
};

template <class T> Dual<T> operator+(const Dual<T>& x, const Dual<T>& y) { return {x.a + y.a, x.b + y.b}; }
template <class T> Dual<T> operator-(const Dual<T>& x, const Dual<T>& y) { return {x.a - y.a, x.b - y.b}; }
template <class T> Dual<T> operator-(const Dual<T>& x) { return {-x.a, -x.b}; }
template <class T> Dual<T> operator+(double s, const Dual<T>& x) { return {s + x.a, x.b}; }
template <class T> Dual<T> operator+(const Dual<T>& x, double s) { return {x.a + s, x.b}; }
template <class T> Dual<T> operator-(double s, const Dual<T>& x) { return {s - x.a, -x.b}; }
template <class T> Dual<T> operator-(const Dual<T>& x, double s) { return {x.a - s, x.b}; }
template <class T> Dual<T> operator*(const Dual<T>& x, const Dual<T>& y) { return {x.a * y.a, x.a * y.b + x.b * y.a}; }
template <class T> Dual<T> operator*(double s, const Dual<T>& x) { return {s * x.a, s * x.b}; }
template <class T> Dual<T> operator*(const Dual<T>& x, double s) { return {s * x.a, s * x.b}; }
template <class T> Dual<T> operator/(const Dual<T>& x, const Dual<T>& y) {
  const T inverse = 1.0 / y.a;
  const T value = x.a * inverse;
  return {value, (x.b - value * y.b) * inverse};
}
template <class T> Dual<T> operator/(double s, const Dual<T>& y) { return Dual<T>(s) / y; }
template <class T> Dual<T> sin(const Dual<T>& x) {
  using std::cos;
  using std::sin;
  return {sin(x.a), cos(x.a) * x.b};
}
template <class T> Dual<T> cos(const Dual<T>& x) {
  using std::cos;
  using std::sin;
  return {cos(x.a), -(sin(x.a) * x.b)};
}
template <class T> Dual<T> sqrt(const Dual<T>& x) {
  using std::sqrt;
  const T root = sqrt(x.a);
  return {root, x.b / (2.0 * root)};
}

template <int depth>
struct NestedType {
  using type = Dual<typename NestedType<depth - 1>::type>;
};
template <>
struct NestedType<0> {
  using type = double;
};
template <int depth>
using Nested = typename NestedType<depth>::type;

// x(t + e_1 + ... + e_depth) from derivatives[first ...] (derivatives[k] = x^(k)).
template <int depth>
Nested<depth> seed(const double* derivatives, int first = 0) {
  if constexpr (depth == 0) return derivatives[first];
  else return Nested<depth>(seed<depth - 1>(derivatives, first), seed<depth - 1>(derivatives, first + 1));
}

// The k-th time derivative held in x (k <= depth).
template <int depth>
double derivative(const Nested<depth>& x, int k) {
  if constexpr (depth == 0) return x;
  else return k > 0 ? derivative<depth - 1>(x.b, k - 1) : derivative<depth - 1>(x.a, 0);
}

}  // namespace liembs::ad_baseline
