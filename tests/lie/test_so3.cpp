// SO(3): exp/log round trips, exp against the matrix exponential, dexp and its inverse
// against finite differences and each other, and the Taylor/closed-form branch switch.
#include "test_helpers.hpp"

#include <liembs/lie/so3.hpp>

#include <catch2/catch.hpp>

#include <vector>

using namespace liembs;
using namespace liembs::lie_test;

namespace {

// Rotation vectors: random ones with angle in [0, max_angle) plus every special angle
// (<= max_angle) about a random axis.
std::vector<Vec3> rotation_vectors(std::mt19937& gen, double max_angle, bool include_max = true) {
  std::vector<Vec3> ws;
  for (int i = 0; i < random_samples; ++i) ws.push_back(random_rotation_vector(gen, uniform(gen, 0.0, max_angle)));
  for (double angle : special_angles)
    if (angle < max_angle || (include_max && angle == max_angle)) ws.push_back(random_rotation_vector(gen, angle));
  return ws;
}

// The misprinted Rodrigues formula of paper 002 eq. 9: (1 - cos)/theta instead of /theta^2.
Mat3 misprinted_eq9_exp(const Vec3& w) {
  const double theta = w.norm();
  const Mat3 W = so3::hat(w);
  return Mat3::Identity() + std::sin(theta) / theta * W + (1.0 - std::cos(theta)) / theta * W * W;
}

}  // namespace

TEST_CASE("so3 hat and vee", "[lie][so3]") {
  std::mt19937 gen(101);
  for (int i = 0; i < random_samples; ++i) {
    const Vec3 w = random_vector(gen), x = random_vector(gen);
    CHECK(max_abs_diff(so3::hat(w) * x, w.cross(x)) < 1e-15);
    CHECK(max_abs_diff(so3::hat(w).transpose(), -so3::hat(w)) == 0.0);
    CHECK(max_abs_diff(so3::vee(so3::hat(w)), w) == 0.0);
    // vee reads only the skew-symmetric part.
    const Mat3 A = random_matrix(gen);
    const Mat3 S = A + A.transpose();
    CHECK(max_abs_diff(so3::vee(so3::hat(w) + S), w) < 1e-15);
    CHECK(so3::ad(w) == so3::hat(w));
  }
}

TEST_CASE("so3 exp equals the matrix exponential and is a rotation", "[lie][so3]") {
  std::mt19937 gen(102);
  for (const Vec3& w : rotation_vectors(gen, 3.0 * pi)) {
    INFO("w = " << w.transpose() << ", theta = " << w.norm());
    const Mat3 R = so3::exp(w);
    CHECK(max_abs_diff(R, matrix_exp(so3::hat(w))) < 1e-14);
    CHECK(max_abs_diff(R.transpose() * R, Mat3::Identity()) < 4e-15);
    CHECK(R.determinant() == Approx(1.0).epsilon(1e-14));
    // exp(w) fixes its axis and exp(-w) is its inverse.
    CHECK(max_abs_diff(R * w, w) < 1e-14 * (1.0 + w.norm()));
    CHECK(max_abs_diff(so3::exp(-w), R.transpose()) < 1e-15);
  }
}

TEST_CASE("so3 printed eq. 9 of paper 002 fails the exp test (regression guard)", "[lie][so3]") {
  // The misprint differs from Rodrigues by (1 - cos)(1/theta - 1/theta^2) hat(w)^2, whose
  // Frobenius norm is sqrt(2) (1 - cos theta) |theta - 1|: zero only at theta = 1 (so the
  // guard must not use theta = 1 exactly) and O(1) at angles of order 1 otherwise.
  std::mt19937 gen(103);
  for (double angle : {0.5, 2.0, 3.0}) {
    const Vec3 w = random_rotation_vector(gen, angle);
    const Mat3 reference = matrix_exp(so3::hat(w));
    const double misprint_error = (misprinted_eq9_exp(w) - reference).norm();
    INFO("theta = " << angle);
    CHECK(misprint_error > 0.08);
    CHECK(misprint_error == Approx(std::sqrt(2.0) * (1.0 - std::cos(angle)) * std::abs(angle - 1.0)).epsilon(1e-12));
    CHECK(max_abs_diff(so3::exp(w), reference) < 1e-14);
  }
}

TEST_CASE("so3 log(exp(w)) = w for angles below pi", "[lie][so3]") {
  std::mt19937 gen(104);
  for (const Vec3& w : rotation_vectors(gen, pi, false)) {
    const double theta = w.norm();
    INFO("w = " << w.transpose() << ", theta = " << theta);
    const Vec3 back = so3::log(so3::exp(w));
    // Relative to the angle: small angles come back to full relative precision.
    CHECK(max_abs_diff(back, w) <= 2e-15 * theta + 1e-300);
  }
}

TEST_CASE("so3 exp(log(R)) = R, including half turns", "[lie][so3]") {
  std::mt19937 gen(105);
  std::vector<Mat3> rotations;
  for (int i = 0; i < random_samples; ++i) rotations.push_back(random_rotation(gen));
  for (int i = 0; i < 50; ++i) rotations.push_back(half_turn(gen));
  for (double angle : special_angles) rotations.push_back(so3::exp(random_rotation_vector(gen, angle)));
  // Half turns about the coordinate axes and diagonals (exact ties in the diagonal search).
  for (const Vec3& axis : {Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1), Vec3(1, 1, 0), Vec3(1, 1, 1), Vec3(-1, 1, 1)})
    rotations.push_back(2.0 * axis.normalized() * axis.normalized().transpose() - Mat3::Identity());
  for (const Mat3& R : rotations) {
    const Vec3 w = so3::log(R);
    INFO("R =\n" << R << "\nlog = " << w.transpose());
    CHECK(w.norm() <= pi * (1.0 + 1e-15));
    CHECK(max_abs_diff(so3::exp(w), R) < 2e-15);
  }
}

TEST_CASE("so3 log at angle pi returns an angle pi about the right axis", "[lie][so3]") {
  std::mt19937 gen(106);
  for (int i = 0; i < 50; ++i) {
    const Vec3 e = random_unit_vector(gen);
    const Vec3 w = so3::log(2.0 * e * e.transpose() - Mat3::Identity());
    CHECK(w.norm() == Approx(pi).epsilon(1e-15));
    CHECK(std::abs(std::abs(w.normalized().dot(e)) - 1.0) < 1e-15);
  }
}

TEST_CASE("so3 dexp times dexpinv is the identity", "[lie][so3]") {
  std::mt19937 gen(107);
  // dexp^-1 is singular at theta = 2 pi; stay well below it.
  for (const Vec3& w : rotation_vectors(gen, 5.0)) {
    INFO("theta = " << w.norm());
    CHECK(max_abs_diff(so3::dexp_right(w) * so3::dexpinv_right(w), Mat3::Identity()) < 1e-14);
    CHECK(max_abs_diff(so3::dexpinv_right(w) * so3::dexp_right(w), Mat3::Identity()) < 1e-14);
    CHECK(max_abs_diff(so3::dexp_left(w) * so3::dexpinv_left(w), Mat3::Identity()) < 1e-14);
    CHECK(max_abs_diff(so3::dexpinv_left(w) * so3::dexp_left(w), Mat3::Identity()) < 1e-14);
  }
}

TEST_CASE("so3 dexp matches finite differences of exp in both trivializations", "[lie][so3]") {
  std::mt19937 gen(108);
  const double eps = 1e-5;
  for (const Vec3& w : rotation_vectors(gen, 3.0 * pi)) {
    const Vec3 dw = random_vector(gen);
    const Mat3 R = so3::exp(w);
    const Mat3 dR = (so3::exp(w + eps * dw) - so3::exp(w - eps * dw)) / (2.0 * eps);
    INFO("theta = " << w.norm());
    CHECK(max_abs_diff(so3::vee(dR * R.transpose()), so3::dexp_right(w) * dw) < 1e-8);
    CHECK(max_abs_diff(so3::vee(R.transpose() * dR), so3::dexp_left(w) * dw) < 1e-8);
  }
}

TEST_CASE("so3 dexp identities", "[lie][so3]") {
  std::mt19937 gen(109);
  for (const Vec3& w : rotation_vectors(gen, 5.0)) {
    INFO("theta = " << w.norm());
    CHECK(max_abs_diff(so3::dexp_left(w), so3::dexp_right(-w)) == 0.0);
    CHECK(max_abs_diff(so3::dexpinv_left(w), so3::dexpinv_right(-w)) == 0.0);
    // dexp_right = Ad_exp(w) dexp_left, with Ad_R = R on so(3).
    CHECK(max_abs_diff(so3::dexp_right(w), so3::exp(w) * so3::dexp_left(w)) < 2e-15 * (1.0 + w.norm()));
    // dexp_right = sum_k ad^k/(k+1)! (summed directly).
    Mat3 sum = Mat3::Zero(), term = Mat3::Identity();
    for (int k = 0; k < 60; ++k) {
      sum += term / static_cast<double>(k + 1);
      term = term * so3::ad(w) / static_cast<double>(k + 1);
    }
    CHECK(max_abs_diff(so3::dexp_right(w), sum) < 1e-14);
    // Derivative of exp along w itself: d/ds exp(s w) = exp(s w) hat(w), so dexp w = w.
    CHECK(max_abs_diff(so3::dexp_right(w) * w, w) < 1e-14 * (1.0 + w.norm()));
  }
}

TEST_CASE("so3 dexpinv_left_apply equals the matrix product", "[lie][so3]") {
  std::mt19937 gen(110);
  for (const Vec3& w : rotation_vectors(gen, 5.0)) {
    const Vec3 v = random_vector(gen, 3.0);
    CHECK(max_abs_diff(so3::dexpinv_left_apply(w, v), so3::dexpinv_left(w) * v) < 1e-14);
  }
}

TEST_CASE("so3 Taylor and closed-form branches agree at the switch", "[lie][so3]") {
  using lie::Branch;
  std::mt19937 gen(111);
  const double t = lie::series_threshold;

  // Coefficients. The closed forms of c, d, db, dc cancel like eps/theta^2 (about 2e-14
  // relative at theta = 0.1, times the size of the cancelling terms), hence 1e-12 here;
  // in the matrices they multiply hat(w)^2 ~ theta^2 and the difference drops to ~1e-16.
  const so3::RodriguesCoefficients ks = so3::rodrigues_coefficients(t, Branch::series);
  const so3::RodriguesCoefficients kc = so3::rodrigues_coefficients(t, Branch::closed_form);
  CHECK(ks.a == Approx(kc.a).epsilon(1e-15));
  CHECK(ks.b == Approx(kc.b).epsilon(1e-15));
  CHECK(ks.c == Approx(kc.c).epsilon(1e-12));
  CHECK(so3::dexpinv_coefficient(t, Branch::series) == Approx(so3::dexpinv_coefficient(t, Branch::closed_form)).epsilon(1e-12));
  const so3::RodriguesDerivatives ds = so3::rodrigues_derivatives(t, Branch::series);
  const so3::RodriguesDerivatives dc = so3::rodrigues_derivatives(t, Branch::closed_form);
  CHECK(ds.db == Approx(dc.db).epsilon(1e-12));
  CHECK(ds.dc == Approx(dc.dc).epsilon(1e-10));

  for (int i = 0; i < 20; ++i) {
    const Vec3 w = random_rotation_vector(gen, t);
    CHECK(max_abs_diff(so3::exp(w, Branch::series), so3::exp(w, Branch::closed_form)) < 1e-15);
    CHECK(max_abs_diff(so3::dexp_right(w, Branch::series), so3::dexp_right(w, Branch::closed_form)) < 1e-15);
    CHECK(max_abs_diff(so3::dexpinv_right(w, Branch::series), so3::dexpinv_right(w, Branch::closed_form)) < 1e-15);
  }
}

TEST_CASE("so3 Taylor series are exact up to their first omitted term", "[lie][so3]") {
  // At theta = 1 the closed forms are accurate to ~1e-16 and each series (kept to theta^8)
  // misses exactly its theta^10 term, plus a theta^12 term 1-3 % of that. So closed - series
  // must equal the theta^10 term within 10 %: this checks every kept coefficient (the last
  // kept term is >= 30 times larger) and the size of the truncation error.
  using lie::Branch;
  const double t = 1.0;
  const so3::RodriguesCoefficients ks = so3::rodrigues_coefficients(t, Branch::series);
  const so3::RodriguesCoefficients kc = so3::rodrigues_coefficients(t, Branch::closed_form);
  const so3::RodriguesDerivatives ds = so3::rodrigues_derivatives(t, Branch::series);
  const so3::RodriguesDerivatives dc = so3::rodrigues_derivatives(t, Branch::closed_form);
  struct Case {
    const char* name;
    double closed_minus_series;
    double omitted_term;  // coefficient of theta^10 (theta = 1)
  };
  const Case cases[] = {
      {"a", kc.a - ks.a, -1.0 / 39916800},
      {"b", kc.b - ks.b, -1.0 / 479001600},
      {"c", kc.c - ks.c, -1.0 / 6227020800},
      {"d", so3::dexpinv_coefficient(t, Branch::closed_form) - so3::dexpinv_coefficient(t, Branch::series),
       691.0 / 1307674368000},
      {"db", dc.db - ds.db, 1.0 / 7264857600},
      {"dc", dc.dc - ds.dc, 1.0 / 108972864000},
  };
  for (const Case& c : cases) {
    INFO(c.name << ": closed - series = " << c.closed_minus_series << ", theta^10 term = " << c.omitted_term);
    CHECK(std::abs(c.closed_minus_series - c.omitted_term) < 0.1 * std::abs(c.omitted_term));
  }
}

TEST_CASE("so3 automatic branch uses the series below the switch only", "[lie][so3]") {
  using lie::Branch;
  std::mt19937 gen(112);
  const Vec3 axis = random_unit_vector(gen);
  const Vec3 below = 0.0999 * axis, above = 0.1001 * axis;
  CHECK(so3::exp(below) == so3::exp(below, Branch::series));
  CHECK(so3::exp(above) == so3::exp(above, Branch::closed_form));
  CHECK(so3::dexp_right(below) == so3::dexp_right(below, Branch::series));
  CHECK(so3::dexp_right(above) == so3::dexp_right(above, Branch::closed_form));
  CHECK(so3::dexpinv_right(below) == so3::dexpinv_right(below, Branch::series));
  CHECK(so3::dexpinv_right(above) == so3::dexpinv_right(above, Branch::closed_form));
  // theta = 0 exactly: no division anywhere.
  CHECK(so3::exp(Vec3::Zero()) == Mat3::Identity());
  CHECK(so3::dexp_right(Vec3::Zero()) == Mat3::Identity());
  CHECK(so3::dexpinv_left(Vec3::Zero()) == Mat3::Identity());
  CHECK(so3::log(Mat3::Identity()) == Vec3::Zero());
}

TEST_CASE("so3 adjoint: R hat(w) R^T = hat(R w) and exp(R w) = R exp(w) R^T", "[lie][so3]") {
  std::mt19937 gen(113);
  for (int i = 0; i < random_samples; ++i) {
    const Mat3 R = random_rotation(gen);
    const Vec3 w = random_rotation_vector(gen, uniform(gen, 0.0, 3.0));
    CHECK(max_abs_diff(R * so3::hat(w) * R.transpose(), so3::hat(R * w)) < 1e-14);
    CHECK(max_abs_diff(so3::exp(R * w), R * so3::exp(w) * R.transpose()) < 1e-14);
  }
}
