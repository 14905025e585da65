#pragma once
// sin and cos of one angle together, inline, for the joint rotations of the recursive
// kernels: libm's sincos is a call with a general range reduction and cost about 15% of
// RNEA. Here: x = k pi/2 + r with |r| <= pi/4 (Cody-Waite reduction, pi/2 split in three
// parts so that k * part is exact for |k| < 2^20), then the Taylor series of sin r and
// cos r to degree 17 and 18 (the first omitted terms are below 1e-19 on |r| <= pi/4), and
// the quadrant k mod 4 picks order and signs. Accurate to a few units in the last place;
// angles beyond 1e5 rad (or not finite) go to libm.
#include <liembs/lie/types.hpp>

#include <Eigen/Core>

#include <bit>
#include <cmath>
#include <cstdint>

namespace liembs {

struct SinCos {
  double sin, cos;
};

namespace sincos_constants {
constexpr double two_over_pi = 0.63661977236758134308;
// pi/2 = pio2_1 + pio2_2 + pio2_3: pio2_1 and pio2_2 have 33 significant bits.
constexpr double pio2_1 = 1.57079632673412561417e+00;
constexpr double pio2_2 = 6.07710050630396597660e-11;
constexpr double pio2_3 = 2.02226624879595063154e-21;
constexpr double round_shift = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
}  // namespace sincos_constants

LIEMBS_STRONG_INLINE SinCos sincos(double x) {
  if (!(std::abs(x) < 1e5)) return {std::sin(x), std::cos(x)};
  using namespace sincos_constants;
  const double k = (x * two_over_pi + round_shift) - round_shift;
  const double r = ((x - k * pio2_1) - k * pio2_2) - k * pio2_3;
  // sin r = r Ps(z) and cos r = Pc(z), z = r^2, the Taylor polynomials to r^17 and r^18;
  // both evaluated at once in the two lanes of an Array2d, in pairs of terms (Estrin's
  // scheme: a shorter dependency chain than Horner's).
  const double z = r * r, z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
  using Pair = Eigen::Array2d;
  auto term = [z](double sin_a, double sin_b, double cos_a, double cos_b) -> Pair {  // a + b z in each lane
    return Pair(sin_a, cos_a) + Pair(sin_b, cos_b) * z;
  };
  const Pair t0 = term(1.0, -1.0 / 6.0, 1.0, -1.0 / 2.0);
  const Pair t1 = term(1.0 / 120.0, -1.0 / 5040.0, 1.0 / 24.0, -1.0 / 720.0);
  const Pair t2 = term(1.0 / 362880.0, -1.0 / 39916800.0, 1.0 / 40320.0, -1.0 / 3628800.0);
  const Pair t3 = term(1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 479001600.0, -1.0 / 87178291200.0);
  const Pair t4 = term(1.0 / 355687428096000.0, 0.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0);
  const Pair P = (t0 + t1 * z2) + z4 * (t2 + t3 * z2) + z8 * t4;
  const double sin_r = r * P(0), cos_r = P(1);
  // The quadrant q = k mod 4, without branches: odd q swaps sin and cos, and the sign bits
  // come from bit 1 of q (sin) and of q + 1 (cos).
  const auto q = static_cast<std::uint64_t>(static_cast<std::int64_t>(k));
  const std::uint64_t swap = 0 - (q & 1);
  const auto sin_bits = std::bit_cast<std::uint64_t>(sin_r), cos_bits = std::bit_cast<std::uint64_t>(cos_r);
  const std::uint64_t s = (sin_bits & ~swap) | (cos_bits & swap), c = (cos_bits & ~swap) | (sin_bits & swap);
  return {std::bit_cast<double>(s ^ ((q & 2) << 62)), std::bit_cast<double>(c ^ (((q + 1) & 2) << 62))};
}

// sin and cos of two angles at once, one in each lane of x: the steps above with each lane
// holding one angle (the sine's and the cosine's polynomial in turn), so that two angles
// cost about what one costs above. For kernels that can take the angles of two nodes
// together.
struct SinCosLanes {
  Lanes sin, cos;
};
LIEMBS_STRONG_INLINE SinCosLanes sincos(Lanes x) {
  if (!(std::abs(x[0]) < 1e5 && std::abs(x[1]) < 1e5)) {
    const SinCos a = sincos(x[0]), b = sincos(x[1]);
    return {Lanes{a.sin, b.sin}, Lanes{a.cos, b.cos}};
  }
  using namespace sincos_constants;
  const Lanes k = (x * two_over_pi + round_shift) - round_shift;
  const Lanes r = ((x - k * pio2_1) - k * pio2_2) - k * pio2_3;
  const Lanes z = r * r, z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
  // The Taylor polynomials of sin r / r and cos r in z, in Estrin's scheme as above.
  const auto poly = [&](double c0, double c1, double c2, double c3, double c4, double c5, double c6, double c7,
                        double c8, double c9) {
    return ((c0 + c1 * z) + (c2 + c3 * z) * z2) + z4 * ((c4 + c5 * z) + (c6 + c7 * z) * z2) + z8 * (c8 + c9 * z);
  };
  const Lanes sin_r = r * poly(1.0, -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0, -1.0 / 39916800.0,
                               1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0, 0.0);
  const Lanes cos_r = poly(1.0, -1.0 / 2.0, 1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0, -1.0 / 3628800.0,
                           1.0 / 479001600.0, -1.0 / 87178291200.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0);
  using Bits = std::int64_t __attribute__((vector_size(16)));
  const Bits q = __builtin_convertvector(k, Bits);
  const Bits swap = -(q & 1);
  const Bits sin_bits = std::bit_cast<Bits>(sin_r), cos_bits = std::bit_cast<Bits>(cos_r);
  const Bits s = ((sin_bits & ~swap) | (cos_bits & swap)) ^ ((q & 2) << 62);
  const Bits c = ((cos_bits & ~swap) | (sin_bits & swap)) ^ (((q + 1) & 2) << 62);
  return {std::bit_cast<Lanes>(s), std::bit_cast<Lanes>(c)};
}

}  // namespace liembs
