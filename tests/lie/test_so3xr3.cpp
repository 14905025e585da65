// SO(3) x R^3 (direct product, paper 002 section 2.2): group axioms, exp/log, dexp and its
// inverse acting as the identity on the translation part, Ad/ad/coad/coAd.
//
// Independent reference: the faithful 7x7 matrix representation
//   E(R, r) = [[R, 0, 0], [0, I, r], [0, 0, 1]],   e(omega, v) = [[hat(omega), 0, 0], [0, 0, v], [0, 0, 0]],
// in which the group law is the matrix product and exp the matrix exponential.
#include "test_helpers.hpp"

#include <liembs/lie/so3xr3.hpp>

#include <catch2/catch.hpp>

#include <vector>

using namespace liembs;
using namespace liembs::lie_test;

namespace {

using Mat7 = Eigen::Matrix<double, 7, 7>;

Mat7 embed(const Pose& C) {
  Mat7 E = Mat7::Identity();
  E.topLeftCorner<3, 3>() = C.R;
  E.block<3, 1>(3, 6) = C.r;
  return E;
}

Mat7 embed_algebra(const Vec6& X) {
  Mat7 e = Mat7::Zero();
  e.topLeftCorner<3, 3>() = so3::hat(X.head<3>());
  e.block<3, 1>(3, 6) = X.tail<3>();
  return e;
}

Vec6 unembed_algebra(const Mat7& e) {
  Vec6 X;
  X << so3::vee(e.topLeftCorner<3, 3>()), e.block<3, 1>(3, 6);
  return X;
}

Vec6 random_vec6(std::mt19937& gen, double scale = 1.0) {
  Vec6 x;
  x << random_vector(gen, scale), random_vector(gen, scale);
  return x;
}

std::vector<Vec6> twists(std::mt19937& gen, double max_angle, bool include_max = true) {
  std::vector<Vec6> xs;
  for (int i = 0; i < random_samples; ++i) xs.push_back(random_twist_up_to(gen, max_angle, 2.0));
  for (double angle : special_angles)
    if (angle < max_angle || (include_max && angle == max_angle)) xs.push_back(random_twist(gen, angle, 2.0));
  return xs;
}

}  // namespace

TEST_CASE("so3xr3 group axioms and the direct-product law", "[lie][so3xr3]") {
  std::mt19937 gen(301);
  for (int i = 0; i < random_samples; ++i) {
    const Pose a = random_pose(gen), b = random_pose(gen), c = random_pose(gen);
    const Pose ab = so3xr3::compose(a, b);
    CHECK(max_abs_diff(ab.R, a.R * b.R) == 0.0);
    CHECK(ab.r == a.r + b.r);  // 002 eq. 16: translations add, they are not rotated
    CHECK(max_abs_diff(embed(ab), embed(a) * embed(b)) < 1e-15);
    CHECK(pose_diff(so3xr3::compose(so3xr3::compose(a, b), c), so3xr3::compose(a, so3xr3::compose(b, c))) < 1e-14);
    CHECK(pose_diff(so3xr3::compose(a, Pose{}), a) == 0.0);
    CHECK(pose_diff(so3xr3::compose(Pose{}, a), a) == 0.0);
    CHECK(pose_diff(so3xr3::compose(a, so3xr3::inverse(a)), Pose{}) < 4e-15);
    CHECK(pose_diff(so3xr3::compose(so3xr3::inverse(a), a), Pose{}) < 4e-15);
    CHECK(max_abs_diff(embed(so3xr3::inverse(a)), embed(a).inverse()) < 1e-14);
  }
}

TEST_CASE("so3xr3 exp equals the matrix exponential and is the identity on translations", "[lie][so3xr3]") {
  std::mt19937 gen(302);
  for (const Vec6& X : twists(gen, 3.0 * pi)) {
    INFO("X = " << X.transpose());
    const Pose C = so3xr3::exp(X);
    CHECK(C.r == X.tail<3>());
    CHECK(C.R == so3::exp(X.head<3>()));
    CHECK(max_abs_diff(embed(C), matrix_exp(embed_algebra(X))) < 1e-14 * (1.0 + X.norm()));
    CHECK(pose_diff(so3xr3::exp(-X), so3xr3::inverse(C)) < 1e-15);
  }
}

TEST_CASE("so3xr3 log(exp(X)) = X below pi and exp(log(C)) = C", "[lie][so3xr3]") {
  std::mt19937 gen(303);
  for (const Vec6& X : twists(gen, pi, false)) {
    INFO("X = " << X.transpose());
    const Vec6 back = so3xr3::log(so3xr3::exp(X));
    CHECK(max_abs_diff(back.head<3>(), X.head<3>()) <= 2e-15 * X.head<3>().norm());
    CHECK(back.tail<3>() == X.tail<3>());
  }
  std::vector<Pose> poses;
  for (int i = 0; i < random_samples; ++i) poses.push_back(random_pose(gen));
  for (int i = 0; i < 50; ++i) {
    Pose C;
    C.R = half_turn(gen);
    C.r = random_vector(gen, 2.0);
    poses.push_back(C);
  }
  for (const Pose& C : poses) {
    const Vec6 X = so3xr3::log(C);
    CHECK(X.head<3>().norm() <= pi * (1.0 + 1e-15));
    CHECK(pose_diff(so3xr3::exp(X), C) < 2e-15);
  }
}

TEST_CASE("so3xr3 dexp and dexpinv: inverse pair, identity on translations", "[lie][so3xr3]") {
  std::mt19937 gen(304);
  for (const Vec6& X : twists(gen, 5.0)) {
    INFO("X = " << X.transpose());
    const Vec3 w = X.head<3>();
    for (const Mat6& D : {so3xr3::dexp_right(X), so3xr3::dexp_left(X), so3xr3::dexpinv_right(X), so3xr3::dexpinv_left(X)}) {
      CHECK(D.bottomRightCorner<3, 3>() == Mat3::Identity());
      CHECK(D.topRightCorner<3, 3>().isZero(0.0));
      CHECK(D.bottomLeftCorner<3, 3>().isZero(0.0));
    }
    CHECK(so3xr3::dexp_right(X).topLeftCorner<3, 3>() == so3::dexp_right(w));
    CHECK(so3xr3::dexpinv_left(X).topLeftCorner<3, 3>() == so3::dexpinv_left(w));
    CHECK(max_abs_diff(so3xr3::dexp_right(X) * so3xr3::dexpinv_right(X), Mat6::Identity()) < 1e-14);
    CHECK(max_abs_diff(so3xr3::dexp_left(X) * so3xr3::dexpinv_left(X), Mat6::Identity()) < 1e-14);
    CHECK(so3xr3::dexp_left(X) == so3xr3::dexp_right(-X));
    CHECK(so3xr3::dexpinv_left(X) == so3xr3::dexpinv_right(-X));
    CHECK(max_abs_diff(so3xr3::dexp_right(X), so3xr3::Ad(so3xr3::exp(X)) * so3xr3::dexp_left(X)) < 2e-15 * (1.0 + X.norm()));
    const Vec6 u = random_vec6(gen, 3.0);
    CHECK(max_abs_diff(so3xr3::dexpinv_left_apply(X, u), so3xr3::dexpinv_left(X) * u) < 1e-14);
    CHECK(so3xr3::dexpinv_left_apply(X, u).tail<3>() == u.tail<3>());
  }
}

TEST_CASE("so3xr3 dexp matches finite differences of exp in both trivializations", "[lie][so3xr3]") {
  std::mt19937 gen(305);
  const double eps = 1e-5;
  for (const Vec6& X : twists(gen, 3.0 * pi)) {
    const Vec6 dX = random_vec6(gen);
    const Mat7 C = embed(so3xr3::exp(X)), C_inverse = embed(so3xr3::inverse(so3xr3::exp(X)));
    const Mat7 dC = (embed(so3xr3::exp(X + eps * dX)) - embed(so3xr3::exp(X - eps * dX))) / (2.0 * eps);
    INFO("X = " << X.transpose());
    CHECK(max_abs_diff(unembed_algebra(dC * C_inverse), so3xr3::dexp_right(X) * dX) < 1e-8);
    CHECK(max_abs_diff(unembed_algebra(C_inverse * dC), so3xr3::dexp_left(X) * dX) < 1e-8);
    CHECK(max_abs_diff(C * C_inverse, Mat7::Identity()) < 1e-14);
  }
}

TEST_CASE("so3xr3 Ad, ad, bracket, coad, coAd", "[lie][so3xr3]") {
  std::mt19937 gen(306);
  for (const Vec6& X : twists(gen, 3.0 * pi)) {
    CHECK(max_abs_diff(so3xr3::Ad(so3xr3::exp(X)), matrix_exp(so3xr3::ad(X))) < 1e-14 * (1.0 + X.norm()));
    CHECK(max_abs_diff(so3xr3::coAd(so3xr3::exp(X)), matrix_exp(so3xr3::coad(X))) < 1e-14 * (1.0 + X.norm()));
  }
  for (int i = 0; i < random_samples; ++i) {
    const Pose a = random_pose(gen), b = random_pose(gen);
    const Vec6 X = random_vec6(gen), Y = random_vec6(gen), Z = random_vec6(gen), h = random_vec6(gen);
    // Ad: homomorphism, conjugation in the matrix representation.
    CHECK(max_abs_diff(so3xr3::Ad(so3xr3::compose(a, b)), so3xr3::Ad(a) * so3xr3::Ad(b)) < 1e-15);
    CHECK(max_abs_diff(so3xr3::Ad(a) * Y, unembed_algebra(embed(a) * embed_algebra(Y) * embed(so3xr3::inverse(a)))) <
          1e-14);
    // Bracket (002 eq. 17): matrix commutator, ad, antisymmetry, Jacobi, no translation part.
    const Mat7 commutator = embed_algebra(X) * embed_algebra(Y) - embed_algebra(Y) * embed_algebra(X);
    CHECK(max_abs_diff(embed_algebra(so3xr3::bracket(X, Y)), commutator) < 1e-15);
    CHECK(so3xr3::bracket(X, Y).tail<3>().isZero(0.0));
    CHECK(max_abs_diff(so3xr3::ad(X) * Y, so3xr3::bracket(X, Y)) < 1e-15);
    // Antisymmetric to round-off: a fused multiply-add (-march=native) rounds x1 y2 - x2 y1 and
    // y1 x2 - y2 x1 differently.
    CHECK(max_abs_diff(so3xr3::bracket(X, Y), -so3xr3::bracket(Y, X)) < 1e-15);
    const Vec6 jacobi = so3xr3::bracket(X, so3xr3::bracket(Y, Z)) + so3xr3::bracket(Y, so3xr3::bracket(Z, X)) +
                        so3xr3::bracket(Z, so3xr3::bracket(X, Y));
    CHECK(jacobi.cwiseAbs().maxCoeff() < 1e-14);
    // coad = -ad^T with <coad(X) h, Y> = -<h, [X, Y]>; coAd = Ad^-T, a homomorphism.
    CHECK(so3xr3::coad(X) == Mat6(-so3xr3::ad(X).transpose()));
    CHECK((so3xr3::coad(X) * h).dot(Y) == Approx(-h.dot(so3xr3::bracket(X, Y))).margin(1e-14));
    CHECK(max_abs_diff(so3xr3::coAd(a) * so3xr3::Ad(a).transpose(), Mat6::Identity()) < 1e-14);
    CHECK(max_abs_diff(so3xr3::coAd(so3xr3::compose(a, b)), so3xr3::coAd(a) * so3xr3::coAd(b)) < 1e-15);
  }
}
