// SE(3) with body-fixed twists: group law, exp/log, Ad/ad/coad/coAd, dexp and its inverse
// (block closed form, paper 002 eq. 10), the Taylor/closed-form branch switch.
#include "test_helpers.hpp"

#include <liembs/lie/se3.hpp>

#include <catch2/catch.hpp>

#include <vector>

using namespace liembs;
using namespace liembs::lie_test;

namespace {

// Twists: random ones with |omega| in [0, max_angle) plus every special angle (<= max_angle,
// or < max_angle when include_max is false), with v uniform in [-v_scale, v_scale]^3.
// Pure translations (omega = 0 exactly) are part of the special angles.
std::vector<Vec6> twists(std::mt19937& gen, double max_angle, bool include_max = true, double v_scale = 2.0) {
  std::vector<Vec6> xs;
  for (int i = 0; i < random_samples; ++i) xs.push_back(random_twist_up_to(gen, max_angle, v_scale));
  for (double angle : special_angles)
    if (angle < max_angle || (include_max && angle == max_angle)) xs.push_back(random_twist(gen, angle, v_scale));
  return xs;
}

Vec6 random_vec6(std::mt19937& gen, double scale = 1.0) {
  Vec6 x;
  x << random_vector(gen, scale), random_vector(gen, scale);
  return x;
}

// Paper 002 eq. 8 as printed (singular at omega = 0): translation
// (I - exp(hat w))(w x v)/|w|^2 + h w with pitch h = w.v/|w|^2.
Vec3 eq8_translation(const Vec6& X) {
  const Vec3 w = X.head<3>(), v = X.tail<3>();
  const double t2 = w.squaredNorm();
  return (Mat3::Identity() - so3::exp(w)) * w.cross(v) / t2 + w.dot(v) / t2 * w;
}

// dexp_right^-1 as the inverse of the block-triangular dexp_right = [[J, 0], [Q, J]]:
// [[J^-1, 0], [-J^-1 Q J^-1, J^-1]], an independent check of the eq. 10 closed form.
Mat6 block_inverse_of_dexp_right(const Vec6& X) {
  const Mat3 Jinv = so3::dexpinv_right(X.head<3>());
  const Mat3 Q = se3::dexp_right_lower_block(X.head<3>(), X.tail<3>());
  Mat6 D;
  D << Jinv, Mat3::Zero(), -Jinv * Q * Jinv, Jinv;
  return D;
}

}  // namespace

TEST_CASE("se3 hat, vee and the bracket as matrix commutator", "[lie][se3]") {
  std::mt19937 gen(201);
  for (int i = 0; i < random_samples; ++i) {
    const Vec6 X = random_vec6(gen), Y = random_vec6(gen);
    CHECK(se3::vee(se3::hat(X)) == X);
    const Mat4 commutator = se3::hat(X) * se3::hat(Y) - se3::hat(Y) * se3::hat(X);
    CHECK(max_abs_diff(se3::hat(se3::bracket(X, Y)), commutator) < 1e-15);
    CHECK(commutator.row(3).isZero(0.0));
  }
}

TEST_CASE("se3 group law equals 4x4 matrix products", "[lie][se3]") {
  std::mt19937 gen(202);
  for (int i = 0; i < random_samples; ++i) {
    const Pose a = random_pose(gen), b = random_pose(gen), c = random_pose(gen);
    CHECK(max_abs_diff(se3::compose(a, b).matrix(), a.matrix() * b.matrix()) < 1e-15);
    CHECK(max_abs_diff(se3::inverse(a).matrix(), a.matrix().inverse()) < 1e-14);
    CHECK(pose_diff(se3::compose(a, se3::inverse(a)), Pose{}) < 1e-14);
    CHECK(pose_diff(se3::compose(se3::compose(a, b), c), se3::compose(a, se3::compose(b, c))) < 1e-14);
    CHECK(pose_diff(Pose::from_matrix(a.matrix()), a) == 0.0);
    const Vec3 p = random_vector(gen);
    CHECK(max_abs_diff(se3::transform_point(a, p), (a.matrix() * p.homogeneous()).head<3>()) < 1e-15);
  }
}

TEST_CASE("se3 exp equals the 4x4 matrix exponential", "[lie][se3]") {
  std::mt19937 gen(203);
  for (const Vec6& X : twists(gen, 3.0 * pi)) {
    INFO("X = " << X.transpose() << ", theta = " << X.head<3>().norm());
    const Pose C = se3::exp(X);
    const Mat4 reference = matrix_exp(se3::hat(X));
    CHECK(max_abs_diff(C.matrix(), reference) < 1e-14 * (1.0 + X.norm()));
    CHECK(max_abs_diff(C.R, so3::exp(X.head<3>())) == 0.0);
    // Paper 002 eq. 8 as printed agrees away from its singularity at omega = 0.
    if (X.head<3>().norm() >= 0.1) CHECK(max_abs_diff(C.r, eq8_translation(X)) < 1e-14 * (1.0 + X.norm()));
    // exp(-X) = exp(X)^-1.
    CHECK(pose_diff(se3::exp(-X), se3::inverse(C)) < 1e-14 * (1.0 + X.norm()));
  }
}

TEST_CASE("se3 exp of joint screws: revolute keeps its axis fixed, prismatic translates", "[lie][se3]") {
  std::mt19937 gen(204);
  for (int i = 0; i < random_samples; ++i) {
    const Vec3 e = random_unit_vector(gen), p = random_vector(gen, 3.0);
    const double q = uniform(gen, -2.0 * pi, 2.0 * pi), h = uniform(gen, -1.0, 1.0);
    Vec6 revolute, screw, prismatic;
    revolute << e, p.cross(e);        // 001 eq. (1) with pitch 0
    screw << e, p.cross(e) + h * e;   // pitch h
    prismatic << Vec3::Zero(), e;
    const Pose Cr = se3::exp(q * revolute);
    CHECK(max_abs_diff(se3::transform_point(Cr, p), p) < 5e-14);
    CHECK(max_abs_diff(se3::transform_point(Cr, p + 0.7 * e), p + 0.7 * e) < 5e-14);
    // Joint form (001 section 2.5): translation (I - R) p + h q e.
    const Pose Cs = se3::exp(q * screw);
    CHECK(max_abs_diff(Cs.r, (Mat3::Identity() - Cs.R) * p + h * q * e) < 1e-13);
    const Pose Cp = se3::exp(q * prismatic);
    CHECK(Cp.R == Mat3::Identity());
    CHECK(max_abs_diff(Cp.r, q * e) < 1e-15);
  }
}

TEST_CASE("se3 log(exp(X)) = X for angles below pi", "[lie][se3]") {
  std::mt19937 gen(205);
  for (const Vec6& X : twists(gen, pi, false)) {
    INFO("X = " << X.transpose() << ", theta = " << X.head<3>().norm());
    const Vec6 back = se3::log(se3::exp(X));
    CHECK(max_abs_diff(back.head<3>(), X.head<3>()) <= 2e-15 * X.head<3>().norm());
    CHECK(max_abs_diff(back.tail<3>(), X.tail<3>()) <= 1e-14 * X.norm());
  }
}

TEST_CASE("se3 exp(log(C)) = C, including half turns", "[lie][se3]") {
  std::mt19937 gen(206);
  std::vector<Pose> poses;
  for (int i = 0; i < random_samples; ++i) poses.push_back(random_pose(gen));
  for (int i = 0; i < 50; ++i) {
    Pose C;
    C.R = half_turn(gen);
    C.r = random_vector(gen, 2.0);
    poses.push_back(C);
  }
  for (double angle : special_angles) poses.push_back(se3::exp(random_twist(gen, angle, 2.0)));
  for (const Pose& C : poses) {
    const Vec6 X = se3::log(C);
    INFO("R =\n" << C.R << "\nr = " << C.r.transpose() << "\nlog = " << X.transpose());
    CHECK(X.head<3>().norm() <= pi * (1.0 + 1e-15));
    CHECK(pose_diff(se3::exp(X), C) < 1e-14);
  }
}

TEST_CASE("se3 dexp times dexpinv is the identity", "[lie][se3]") {
  std::mt19937 gen(207);
  // dexp^-1 (eq. 10) is singular at |omega| = 2 pi; stay well below it.
  for (const Vec6& X : twists(gen, 5.0)) {
    INFO("X = " << X.transpose() << ", theta = " << X.head<3>().norm());
    const double tol = 1e-14 * (1.0 + X.norm());
    CHECK(max_abs_diff(se3::dexp_right(X) * se3::dexpinv_right(X), Mat6::Identity()) < tol);
    CHECK(max_abs_diff(se3::dexpinv_right(X) * se3::dexp_right(X), Mat6::Identity()) < tol);
    CHECK(max_abs_diff(se3::dexp_left(X) * se3::dexpinv_left(X), Mat6::Identity()) < tol);
    CHECK(max_abs_diff(se3::dexpinv_left(X) * se3::dexp_left(X), Mat6::Identity()) < tol);
    // Eq. 10 agrees with the inverse of the block-triangular dexp.
    CHECK(max_abs_diff(se3::dexpinv_right(X), block_inverse_of_dexp_right(X)) < tol);
  }
}

TEST_CASE("se3 dexp matches finite differences of exp in both trivializations", "[lie][se3]") {
  std::mt19937 gen(208);
  const double eps = 1e-5;
  for (const Vec6& X : twists(gen, 3.0 * pi)) {
    const Vec6 dX = random_vec6(gen);
    const Mat4 C_inverse = se3::inverse(se3::exp(X)).matrix();
    const Mat4 dC = (se3::exp(X + eps * dX).matrix() - se3::exp(X - eps * dX).matrix()) / (2.0 * eps);
    INFO("X = " << X.transpose() << ", theta = " << X.head<3>().norm());
    CHECK(max_abs_diff(se3::vee(dC * C_inverse), se3::dexp_right(X) * dX) < 1e-8);
    CHECK(max_abs_diff(se3::vee(C_inverse * dC), se3::dexp_left(X) * dX) < 1e-8);
  }
}

TEST_CASE("se3 dexp identities", "[lie][se3]") {
  std::mt19937 gen(209);
  for (const Vec6& X : twists(gen, 5.0)) {
    INFO("X = " << X.transpose() << ", theta = " << X.head<3>().norm());
    const double tol = 1e-14 * (1.0 + X.norm());
    CHECK(se3::dexp_left(X) == se3::dexp_right(-X));
    CHECK(se3::dexpinv_left(X) == se3::dexpinv_right(-X));
    CHECK(max_abs_diff(se3::dexp_right(X), se3::Ad(se3::exp(X)) * se3::dexp_left(X)) < tol);
    // dexp_right = sum_k ad^k/(k+1)! (summed directly).
    Mat6 sum = Mat6::Zero(), term = Mat6::Identity();
    for (int k = 0; k < 80; ++k) {
      sum += term / static_cast<double>(k + 1);
      term = term * se3::ad(X) / static_cast<double>(k + 1);
    }
    CHECK(max_abs_diff(se3::dexp_right(X), sum) < tol);
    // exp(sX) has constant velocity X in both trivializations.
    CHECK(max_abs_diff(se3::dexp_right(X) * X, X) < tol);
    CHECK(max_abs_diff(se3::dexpinv_left(X) * X, X) < tol);
  }
}

TEST_CASE("se3 dexpinv_left_apply equals the matrix product", "[lie][se3]") {
  std::mt19937 gen(210);
  for (const Vec6& X : twists(gen, 5.0)) {
    const Vec6 u = random_vec6(gen, 3.0);
    INFO("X = " << X.transpose() << ", theta = " << X.head<3>().norm());
    CHECK(max_abs_diff(se3::dexpinv_left_apply(X, u), se3::dexpinv_left(X) * u) < 1e-14 * (1.0 + X.norm()) * u.norm());
  }
}

TEST_CASE("se3 Taylor and closed-form branches agree at the switch", "[lie][se3]") {
  using lie::Branch;
  std::mt19937 gen(211);
  const double t = lie::series_threshold;
  // Coefficients of eq. 10: even with cos - 1 = -2 sin^2(theta/2) the closed form of c4
  // cancels two terms of size 1/theta^4 = 1e4 to leave -1/720, i.e. ~1e4 * eps absolute,
  // ~1e-9 relative (c2: 2/theta^2 = 200 against 1/12, ~1e-12). In the matrices these errors
  // multiply ad^4 ~ theta^3 and ad^2 ~ theta, so the matrices agree to ~1e-15.
  const se3::DexpinvCoefficients ks = se3::dexpinv_coefficients(t, Branch::series);
  const se3::DexpinvCoefficients kc = se3::dexpinv_coefficients(t, Branch::closed_form);
  CHECK(ks.c2 == Approx(kc.c2).epsilon(1e-12));
  CHECK(ks.c4 == Approx(kc.c4).epsilon(1e-8));
  for (int i = 0; i < 20; ++i) {
    const Vec6 X = random_twist(gen, t, 1.0);
    CHECK(pose_diff(se3::exp(X, Branch::series), se3::exp(X, Branch::closed_form)) < 1e-15);
    CHECK(max_abs_diff(se3::dexp_right(X, Branch::series), se3::dexp_right(X, Branch::closed_form)) < 1e-14);
    CHECK(max_abs_diff(se3::dexpinv_right(X, Branch::series), se3::dexpinv_right(X, Branch::closed_form)) < 1e-14);
  }
}

TEST_CASE("se3 eq. 10 series are exact up to their first omitted term", "[lie][se3]") {
  // As for so3: at theta = 1, closed - series must equal the omitted theta^10 term within
  // 10 % (the theta^12 term is ~3 % of it; the last kept term is >= 30 times larger).
  using lie::Branch;
  const se3::DexpinvCoefficients ks = se3::dexpinv_coefficients(1.0, Branch::series);
  const se3::DexpinvCoefficients kc = se3::dexpinv_coefficients(1.0, Branch::closed_form);
  const double c2_omitted = -691.0 / 326918592000, c4_omitted = -1.0 / 12454041600;
  CHECK(std::abs((kc.c2 - ks.c2) - c2_omitted) < 0.1 * std::abs(c2_omitted));
  CHECK(std::abs((kc.c4 - ks.c4) - c4_omitted) < 0.1 * std::abs(c4_omitted));
}

TEST_CASE("se3 the eq. 10 closed form without a Taylor branch is unusable at small angles", "[lie][se3]") {
  // Documents the numerical pitfall of paper 002 (section 2.1) that the series branch avoids:
  // the printed form with cos(theta) - 1 loses all digits of c4 at theta = 1e-3.
  const double theta = 1e-3;
  const double printed_c4 =
      1.0 / std::pow(theta, 4) + (theta + std::sin(theta)) / (4.0 * std::pow(theta, 3) * (std::cos(theta) - 1.0));
  const double c4 = se3::dexpinv_coefficients(theta).c4;
  CHECK(c4 == Approx(-1.0 / 720 - theta * theta / 15120).epsilon(1e-14));
  CHECK(std::abs(printed_c4 - c4) > 1e-6 * std::abs(c4));
}

TEST_CASE("se3 automatic branch uses the series below the switch only", "[lie][se3]") {
  using lie::Branch;
  std::mt19937 gen(212);
  const Vec3 axis = random_unit_vector(gen), v = random_vector(gen);
  Vec6 below, above;
  below << 0.0999 * axis, v;
  above << 0.1001 * axis, v;
  CHECK(pose_diff(se3::exp(below), se3::exp(below, Branch::series)) == 0.0);
  CHECK(pose_diff(se3::exp(above), se3::exp(above, Branch::closed_form)) == 0.0);
  CHECK(se3::dexp_right(below) == se3::dexp_right(below, Branch::series));
  CHECK(se3::dexp_right(above) == se3::dexp_right(above, Branch::closed_form));
  CHECK(se3::dexpinv_right(below) == se3::dexpinv_right(below, Branch::series));
  CHECK(se3::dexpinv_right(above) == se3::dexpinv_right(above, Branch::closed_form));
  // Pure translation: ad^2 = 0, exp is a translation by v, dexp^-1 = I - ad/2 exactly.
  Vec6 translation;
  translation << Vec3::Zero(), v;
  CHECK(se3::exp(translation).R == Mat3::Identity());
  CHECK(se3::exp(translation).r == v);
  CHECK(se3::dexpinv_right(translation) == Mat6::Identity() - 0.5 * se3::ad(translation));
  CHECK(se3::log(se3::exp(translation)) == translation);
}

TEST_CASE("se3 Ad: matrix exp of ad, homomorphism, conjugation", "[lie][se3]") {
  std::mt19937 gen(213);
  for (const Vec6& X : twists(gen, 3.0 * pi)) {
    INFO("X = " << X.transpose() << ", theta = " << X.head<3>().norm());
    CHECK(max_abs_diff(se3::Ad(se3::exp(X)), matrix_exp(se3::ad(X))) < 1e-14 * (1.0 + X.norm()));
  }
  for (int i = 0; i < random_samples; ++i) {
    const Pose a = random_pose(gen), b = random_pose(gen);
    const Vec6 Y = random_vec6(gen);
    CHECK(max_abs_diff(se3::Ad(se3::compose(a, b)), se3::Ad(a) * se3::Ad(b)) < 1e-14);
    CHECK(max_abs_diff(se3::Ad(a) * Y, se3::vee(a.matrix() * se3::hat(Y) * se3::inverse(a).matrix())) < 1e-14);
    CHECK(max_abs_diff(se3::Ad_inverse(a), se3::Ad(se3::inverse(a))) < 1e-14);
    CHECK(max_abs_diff(se3::Ad_inverse(a) * se3::Ad(a), Mat6::Identity()) < 1e-14);
    // Ad_C = Ad_r Ad_R (001 section 2.3).
    Pose rotation, translation;
    rotation.R = a.R;
    translation.r = a.r;
    CHECK(max_abs_diff(se3::Ad(a), se3::Ad(translation) * se3::Ad(rotation)) < 1e-15);
    // Ad is a Lie algebra automorphism: Ad [X, Y] = [Ad X, Ad Y].
    const Vec6 X = random_vec6(gen);
    CHECK(max_abs_diff(se3::Ad(a) * se3::bracket(X, Y), se3::bracket(se3::Ad(a) * X, se3::Ad(a) * Y)) < 1e-13);
  }
}

TEST_CASE("se3 bracket: ad, antisymmetry, Jacobi", "[lie][se3]") {
  std::mt19937 gen(214);
  for (int i = 0; i < random_samples; ++i) {
    const Vec6 X = random_vec6(gen), Y = random_vec6(gen), Z = random_vec6(gen);
    CHECK(max_abs_diff(se3::ad(X) * Y, se3::bracket(X, Y)) < 1e-15);
    CHECK(se3::bracket(X, Y) == -se3::bracket(Y, X));
    const Vec6 jacobi = se3::bracket(X, se3::bracket(Y, Z)) + se3::bracket(Y, se3::bracket(Z, X)) +
                        se3::bracket(Z, se3::bracket(X, Y));
    CHECK(jacobi.cwiseAbs().maxCoeff() < 1e-14);
    // ad is a Lie algebra homomorphism: ad_[X,Y] = [ad_X, ad_Y].
    CHECK(max_abs_diff(se3::ad(se3::bracket(X, Y)), se3::ad(X) * se3::ad(Y) - se3::ad(Y) * se3::ad(X)) < 1e-14);
  }
}

TEST_CASE("se3 coad and coAd: duality with ad and Ad", "[lie][se3]") {
  std::mt19937 gen(215);
  for (int i = 0; i < random_samples; ++i) {
    const Vec6 X = random_vec6(gen), Y = random_vec6(gen), h = random_vec6(gen);
    const Pose a = random_pose(gen), b = random_pose(gen);
    CHECK(se3::coad(X) == Mat6(-se3::ad(X).transpose()));
    // <coad(X) h, Y> = -<h, [X, Y]>
    CHECK((se3::coad(X) * h).dot(Y) == Approx(-h.dot(se3::bracket(X, Y))).margin(1e-14));
    // coad is a Lie algebra homomorphism: coad([X, Y]) = [coad X, coad Y].
    CHECK(max_abs_diff(se3::coad(se3::bracket(X, Y)), se3::coad(X) * se3::coad(Y) - se3::coad(Y) * se3::coad(X)) <
          1e-14);
    // coAd = Ad^-T, a homomorphism, and the pairing is invariant: <coAd h, Ad V> = <h, V>.
    CHECK(max_abs_diff(se3::coAd(a), Mat6(se3::Ad_inverse(a).transpose())) < 1e-15);  // exact without FMA
    CHECK(max_abs_diff(se3::coAd(a) * se3::Ad(a).transpose(), Mat6::Identity()) < 1e-14);
    CHECK(max_abs_diff(se3::coAd(se3::compose(a, b)), se3::coAd(a) * se3::coAd(b)) < 1e-14);
    CHECK((se3::coAd(a) * h).dot(se3::Ad(a) * Y) == Approx(h.dot(Y)).margin(1e-13));
    // A body force f at the body origin becomes force R f with moment r x R f.
    Vec6 force;
    force << Vec3::Zero(), h.tail<3>();
    Vec6 expected;
    expected << a.r.cross(a.R * h.tail<3>()), a.R * h.tail<3>();
    CHECK(max_abs_diff(se3::coAd(a) * force, expected) < 1e-14);
  }
  for (const Vec6& X : twists(gen, 3.0 * pi)) {
    INFO("X = " << X.transpose());
    // coAd(exp X) = matrix exp of coad(X): the spatial momentum coAd(C) h of a free body is
    // conserved when h' = -coad(V) h = ad_V^T h (the sign convention of se3.hpp).
    CHECK(max_abs_diff(se3::coAd(se3::exp(X)), matrix_exp(se3::coad(X))) < 1e-14 * (1.0 + X.norm()));
  }
}

TEST_CASE("se3 body momentum balance conserves spatial momentum", "[lie][se3]") {
  // Free rigid body: C' = C hat(V), h = M V, h' = -coad(V) h (no wrench). Then
  // d/dt coAd(C) h = coAd(C) (coad(V) h + h') = 0. Check with a finite difference.
  std::mt19937 gen(216);
  for (int i = 0; i < 50; ++i) {
    Mat6 A;
    for (int k = 0; k < 36; ++k) A(k) = uniform(gen, -1.0, 1.0);
    const Mat6 M = A * A.transpose() + Mat6::Identity();
    const Pose C = random_pose(gen);
    const Vec6 V = random_vec6(gen);
    const Vec6 h = M * V;
    const Vec6 h_rate = -se3::coad(V) * h;
    const double dt = 1e-5;
    const Vec6 ahead = se3::coAd(se3::compose(C, se3::exp(dt * V))) * (h + dt * h_rate);
    const Vec6 behind = se3::coAd(se3::compose(C, se3::exp(-dt * V))) * (h - dt * h_rate);
    CHECK(((ahead - behind) / (2.0 * dt)).cwiseAbs().maxCoeff() < 1e-8 * (1.0 + h.norm()));
  }
}
