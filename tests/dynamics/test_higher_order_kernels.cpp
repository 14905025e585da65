// H-GRNE's packed Cauchy sums in body frames (higher_order_body_frame.hpp: the rotation of a
// twist or wrench series about z and the cross-product sums of the momenta), on both paths
// (the baseline build's and, where the processor has them, AVX2 and FMA), against the
// same sums written term by term: random series up to order 12, every first coefficient.
#include <liembs/dynamics/higher_order_body_frame.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace liembs;
using namespace liembs::higher_order_kernels;

namespace {

constexpr int last_order = 12;

struct Series {
  std::vector<double> cos_q, sin_q;
  std::vector<Vec6> x;
  std::vector<Vec3> w, p, J;
};

Series random_series(unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Series s;
  for (int k = 0; k <= last_order; ++k) {
    s.cos_q.push_back(uniform(random));
    s.sin_q.push_back(uniform(random));
    s.x.push_back(Vec6::NullaryExpr([&] { return uniform(random); }));
    s.w.push_back(Vec3::NullaryExpr([&] { return uniform(random); }));
    s.p.push_back(Vec3::NullaryExpr([&] { return uniform(random); }));
    s.J.push_back(Vec3::NullaryExpr([&] { return uniform(random); }));
  }
  return s;
}

// R_z(theta)^T x for a twist (sign +1), R_z x for a wrench (sign -1), coefficient k, term by term.
Vec6 rotated_by_terms(const Series& s, double sign, int k) {
  Vec6 out = Vec6::Zero();
  for (int j = 0; j <= k; ++j) {
    const double c = s.cos_q[static_cast<std::size_t>(j)], sn = sign * s.sin_q[static_cast<std::size_t>(j)];
    const Vec6& y = s.x[static_cast<std::size_t>(k - j)];
    out(0) += c * y(0) + sn * y(1);
    out(1) += c * y(1) - sn * y(0);
    out(3) += c * y(3) + sn * y(4);
    out(4) += c * y(4) - sn * y(3);
  }
  out(2) = s.x[static_cast<std::size_t>(k)](2);
  out(5) = s.x[static_cast<std::size_t>(k)](5);
  return out;
}

std::vector<bool> paths() {
  std::vector<bool> wide{false};
  if (wide_kernels()) wide.push_back(true);
  return wide;
}

}  // namespace

TEST_CASE("packed rotation of a series about z equals its term-by-term Cauchy sums", "[higher-order][kernels]") {
  const Series s = random_series(11);
  std::vector<PlaneLanes> lanes(last_order + 1);
  for (int k = 0; k <= last_order; ++k) lanes[static_cast<std::size_t>(k)].set(s.x[static_cast<std::size_t>(k)]);
  for (const bool wide : paths())
    for (const double sign : {1.0, -1.0})
      for (const int first : {0, 2, 5}) {
        INFO("AVX2 path " << wide << ", sign " << sign << ", from coefficient " << first);
        std::vector<Vec6> out(last_order + 1, Vec6::Constant(7.0));
        packed_rotation(wide, s.cos_q.data(), s.sin_q.data(), sign, lanes.data(), s.x.data(), first, last_order, out.data());
        for (int k = 0; k < first; ++k) CHECK(out[static_cast<std::size_t>(k)] == Vec6::Constant(7.0));  // untouched
        for (int k = first; k <= last_order; ++k) {
          const Vec6 expected = rotated_by_terms(s, sign, k);
          INFO("coefficient " << k);
          CHECK((out[static_cast<std::size_t>(k)] - expected).norm() <= 1e-14 * (k + 1) * (1.0 + expected.norm()));
        }
      }
}

TEST_CASE("packed cross-product sums of the momenta equal their term-by-term Cauchy sums", "[higher-order][kernels]") {
  const Series s = random_series(12);
  std::vector<CrossLanes> w(last_order + 1), p(last_order + 1), J(last_order + 1);
  for (std::size_t k = 0; k <= last_order; ++k) {
    w[k].set(s.w[k]);
    p[k].set(s.p[k]);
    J[k].set(s.J[k]);
  }
  for (const bool wide : paths())
    for (const int first : {0, 2, 7}) {
      INFO("AVX2 path " << wide << ", from coefficient " << first);
      std::vector<Vec3> F(last_order + 1), G(last_order + 1);
      packed_cross_sums(wide, w.data(), p.data(), J.data(), first, last_order, F.data(), G.data());
      for (int k = first; k <= last_order; ++k) {
        Vec3 F_expected = Vec3::Zero(), G_expected = Vec3::Zero();
        for (int j = 0; j <= k; ++j) {
          F_expected += s.w[static_cast<std::size_t>(j)].cross(s.p[static_cast<std::size_t>(k - j)]);
          G_expected += s.w[static_cast<std::size_t>(j)].cross(s.J[static_cast<std::size_t>(k - j)]);
        }
        INFO("coefficient " << k);
        CHECK((F[static_cast<std::size_t>(k)] - F_expected).norm() <= 1e-14 * (k + 1) * (1.0 + F_expected.norm()));
        CHECK((G[static_cast<std::size_t>(k)] - G_expected).norm() <= 1e-14 * (k + 1) * (1.0 + G_expected.norm()));
      }
    }
}

TEST_CASE("the lane layouts hold what the packed sums assume", "[higher-order][kernels]") {
  const Vec6 x = (Vec6() << 1, 2, 3, 4, 5, 6).finished();
  PlaneLanes plane;
  plane.set(x);
  CHECK((plane.plain - Lanes(1, 2, 4, 5)).abs().maxCoeff() == 0.0);
  CHECK((plane.turned - Lanes(2, -1, 5, -4)).abs().maxCoeff() == 0.0);
  CrossLanes cross;
  cross.set(Vec3(1, 2, 3));
  CHECK((cross.yzx - Lanes(2, 3, 1, 0)).abs().maxCoeff() == 0.0);
  CHECK((cross.zxy - Lanes(3, 1, 2, 0)).abs().maxCoeff() == 0.0);
}
