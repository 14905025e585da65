// rp's two forms of the quadratic velocity term (docs/configuration-spaces.md, "Euler
// parameters"): LieMBS's Q = T^T (Q_b - M_b T' v), whose rotation part is
//   (2 / |p|^2) G^T (n - omega~ J omega - J w),  omega = 2 G p' / |p|^2,  w = -4 G p' (p^T p') / |p|^4,
// with the mass block (4 / |p|^4) G^T J G, against the paper's 4 G^T J G p'' and
// 2 G^T n + 8 G'^T J G' p (004 eq. 39a, b). They agree up to a multiple of p only where
// p^T p' = 0, which index-3 backward Euler does not enforce (it holds p^T p = 1), so their
// discrete solutions differ by O(h).
//
// The reference is an independent index-3 backward Euler of paper 004's rp equations (eqs.
// 39-41: r, p updated by addition, the normalization (p^T p - 1) / 2 with its own multiplier,
// the constraints scaled by 1 / h^2) for the double pendulum of configs/paper-004, its ten
// constraints written out here from double-pendulum.json (DP1 and CD against the ground and
// between the rods) and their Jacobians by central differences (exact up to round-off: the
// constraints are quadratic in p). Newton's matrix is a central difference of the residual,
// once per step.
#include "parameterized_motion.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/lie/so3.hpp>

#include <catch2/catch.hpp>

#include <Eigen/LU>

#include <array>
#include <cmath>

using namespace liembs;

namespace {

using Vec4 = Eigen::Vector4d;
using Mat34 = Eigen::Matrix<double, 3, 4>;
using Coordinates = Eigen::Matrix<double, 14, 1>;  // r_upper, r_lower, p_upper, p_lower
using Constraints = Eigen::Matrix<double, 10, 1>;
using Unknowns = Eigen::Matrix<double, 26, 1>;     // accelerations (14), lambda (10), lambda_p (2)

enum class QuadraticVelocityForm { body_twist, paper };

// configs/paper-004/double-pendulum.toml
constexpr std::array<double, 2> masses{78.0, 39.0};
const std::array<Vec3, 2> inertias{Vec3(0.0325, 104.01625, 104.01625), Vec3(0.01625, 13.008125, 13.008125)};
const Vec3 gravity(0.0, 0.0, -9.81);

Mat3 euler_rotation(const Vec4& p) {  // 004 eq. 22
  const Vec3 e = p.tail<3>();
  return (2.0 * p(0) * p(0) - 1.0) * Mat3::Identity() + 2.0 * (e * e.transpose() + p(0) * so3::hat(e));
}

Mat34 g_matrix(const Vec4& p) {  // 004 eq. 39c
  Mat34 G;
  G.col(0) = -p.tail<3>();
  G.rightCols<3>() = -so3::hat(p.tail<3>()) + p(0) * Mat3::Identity();
  return G;
}

// double-pendulum.json: the upper rod's revolute joint to the ground (two DP1, a point of the
// rod at the origin), the lower rod's plane (two DP1 against the ground) and the elbow (the
// rods' ends together).
Constraints pendulum_constraints(const Coordinates& q) {
  const Vec3 x = Vec3::UnitX(), y = Vec3::UnitY();
  const Mat3 A_upper = euler_rotation(q.segment<4>(6)), A_lower = euler_rotation(q.segment<4>(10));
  Constraints g;
  g(0) = (A_upper * x).dot(x);
  g(1) = (A_upper * y).dot(x);
  g.segment<3>(2) = q.segment<3>(0) + A_upper * Vec3(-2.0, 0.0, 0.0);
  g(5) = (A_lower * x).dot(x);
  g(6) = (A_lower * y).dot(x);
  g.segment<3>(7) = q.segment<3>(3) + A_lower * Vec3(-1.0, 0.0, 0.0) - q.segment<3>(0) - A_upper * Vec3(2.0, 0.0, 0.0);
  return g;
}

Eigen::Matrix<double, 10, 14> constraint_jacobian(const Coordinates& q) {
  Eigen::Matrix<double, 10, 14> jacobian;
  const double step = 1e-4;
  for (int k = 0; k < 14; ++k) {
    Coordinates plus = q, minus = q;
    plus(k) += step;
    minus(k) -= step;
    jacobian.col(k) = (pendulum_constraints(plus) - pendulum_constraints(minus)) / (2.0 * step);
  }
  return jacobian;
}

struct PendulumState {
  Coordinates q, v;  // (r, p) and (r', p')
};

// The residual of 004 eq. 41 for the unknowns z at the step from `start` with step size h.
Unknowns residual(const PendulumState& start, const Unknowns& z, double h, QuadraticVelocityForm form) {
  const Coordinates v = start.v + h * z.head<14>();
  const Coordinates q = start.q + h * v;
  const Eigen::Matrix<double, 10, 14> jacobian = constraint_jacobian(q);
  const auto lambda = z.segment<10>(14);
  Unknowns R;
  R.head<14>() = jacobian.transpose() * lambda;
  for (int i = 0; i < 2; ++i) {
    R.segment<3>(3 * i) += masses[i] * (z.segment<3>(3 * i) - gravity);
    const Vec4 p = q.segment<4>(6 + 4 * i), p_dot = v.segment<4>(6 + 4 * i), p_ddot = z.segment<4>(6 + 4 * i);
    const Mat34 G = g_matrix(p);
    const Mat3 J = inertias[i].asDiagonal();
    Vec4 mass_times_rate, force;
    if (form == QuadraticVelocityForm::paper) {
      const Mat34 G_dot = g_matrix(p_dot);
      mass_times_rate = 4.0 * G.transpose() * J * G * p_ddot;
      force = 8.0 * G_dot.transpose() * J * G_dot * p;
    } else {
      const double s = p.squaredNorm();
      const Vec3 omega = 2.0 * G * p_dot / s, w = -4.0 * G * p_dot * p.dot(p_dot) / (s * s);
      mass_times_rate = (4.0 / (s * s)) * G.transpose() * J * G * p_ddot;
      force = (2.0 / s) * G.transpose() * (-omega.cross(J * omega) - J * w);
    }
    R.segment<4>(6 + 4 * i) += mass_times_rate + p * z(24 + i) - force;
    R(24 + i) = 0.5 * (p.squaredNorm() - 1.0) / (h * h);
  }
  R.segment<10>(14) = pendulum_constraints(q) / (h * h);
  return R;
}

// Backward Euler from the rest state of double-pendulum.json to `end_time`; the final r.
std::array<Vec3, 2> reference_positions(double h, double end_time, QuadraticVelocityForm form) {
  PendulumState state;
  state.q << 0, 2, 0, 0, 4, -1, 0, 0, 0, 0, 0, 0, 0, 0;
  const std::array<Mat3, 2> A{(Mat3() << 0, 0, 1, 1, 0, 0, 0, 1, 0).finished(),
                              (Mat3() << 0, 0, 1, 0, 1, 0, -1, 0, 0).finished()};
  for (int i = 0; i < 2; ++i) {
    Eigen::Quaterniond quaternion(A[i]);
    if (quaternion.w() < 0) quaternion.coeffs() *= -1.0;
    state.q.segment<4>(6 + 4 * i) << quaternion.w(), quaternion.x(), quaternion.y(), quaternion.z();
  }
  state.v.setZero();
  Unknowns z = Unknowns::Zero();
  const auto steps = static_cast<long>(std::llround(end_time / h));
  // Modified Newton: the matrix (central differences of the residual) is formed at the first
  // step and again only when an iteration count passes 4, so the converged motion is the same
  // to the tolerance below; forming it every step made this test 150 s under the sanitizers.
  Eigen::PartialPivLU<Eigen::Matrix<double, 26, 26>> factorization;
  const auto form_newton_matrix = [&] {
    Eigen::Matrix<double, 26, 26> newton_matrix;
    for (int k = 0; k < 26; ++k) {
      const double step = 1e-6 * std::max(1.0, std::abs(z(k)));
      Unknowns plus = z, minus = z;
      plus(k) += step;
      minus(k) -= step;
      newton_matrix.col(k) = (residual(state, plus, h, form) - residual(state, minus, h, form)) / (2.0 * step);
    }
    factorization.compute(newton_matrix);
  };
  bool reform = true;
  for (long n = 0; n < steps; ++n) {
    bool fresh = reform;  // the matrix was formed at this step's predictor
    if (reform) form_newton_matrix();
    const Unknowns predictor = z;
    for (int iteration = 0;; ++iteration) {
      if (iteration == 30) FAIL("the reference's Newton iteration did not converge at t = " << n * h);
      if (iteration == 8 && !fresh) {  // a matrix from earlier steps that no longer serves
        z = predictor;
        form_newton_matrix();
        fresh = true;
        iteration = 0;
      }
      const Unknowns correction = factorization.solve(-residual(state, z, h, form));
      z += correction;
      // Theta h^2 = 1e-12 (004 eq. 46): positions to 1e-12; the round-off floor is near 1e-13 / h^2.
      if (correction.norm() < 1e-12 / (h * h)) {
        reform = iteration > 4;
        break;
      }
    }
    state.v += h * z.head<14>();
    state.q += h * state.v;
  }
  return {state.q.segment<3>(0), state.q.segment<3>(3)};
}

double distance(const std::array<Vec3, 2>& a, const std::array<Vec3, 2>& b) {
  return std::max((a[0] - b[0]).norm(), (a[1] - b[1]).norm());
}

}  // namespace

TEST_CASE("rp's two quadratic velocity forms give different discrete motions, the difference O(h)",
          "[parameterizations][paper-004][rp]") {
  constexpr double end_time = 1.0;
  const std::array<double, 2> step_sizes{1e-3, 5e-4};
  std::array<double, 2> difference{};
  for (std::size_t k = 0; k < step_sizes.size(); ++k) {
    const double h = step_sizes[k];
    const auto body_form = reference_positions(h, end_time, QuadraticVelocityForm::body_twist);
    const auto paper_form = reference_positions(h, end_time, QuadraticVelocityForm::paper);
    // The reference's body-twist form is LieMBS's: its bdf (order 1) in euler-parameters on
    // the same file gives the same motion (to the Newton tolerances).
    const testing::Motion liembs = testing::run_to_end(
        ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-004/double-pendulum.toml"),
        {"group.name=euler-parameters", "integrator.name=bdf", "integrator.order=1",
         "simulation.step_size=" + std::to_string(h), "simulation.end_time=" + std::to_string(end_time)});
    const std::array<Vec3, 2> liembs_positions{liembs.poses[0].r, liembs.poses[1].r};
    difference[k] = distance(body_form, paper_form);
    INFO("h = " << h << ": |body - paper| = " << difference[k] << ", |LieMBS - body| = "
                << distance(liembs_positions, body_form) << ", |LieMBS - paper| = "
                << distance(liembs_positions, paper_form));
    CHECK(distance(liembs_positions, body_form) < 1e-3 * difference[k]);
    CHECK(difference[k] > 1e-4);  // not the same motion
  }
  // First order in h: halving h halves the difference (6.9e-4 and 3.5e-4 m at t = 1 s; over the
  // paper's 3 s, 1.9e-2 and 1.1e-2 m).
  CHECK(difference[1] < 0.6 * difference[0]);
  CHECK(difference[1] > 0.4 * difference[0]);
}
