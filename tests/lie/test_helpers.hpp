#pragma once
// Shared helpers of the Lie group tests: seeded random arguments, the near-singular angles
// every property is checked at, and an independent matrix exponential (Eigen's
// unsupported MatrixFunctions: Pade approximation with scaling and squaring).
#include <liembs/lie/types.hpp>

#include <unsupported/Eigen/MatrixFunctions>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

namespace liembs::lie_test {

inline constexpr double pi = 3.14159265358979323846;

// Rotation angles at and around every branch switch and singularity: 0, the small-angle
// Taylor regime, both sides of lie::series_threshold = 0.1, and the approach to pi.
inline constexpr std::array<double, 16> special_angles = {
    0.0, 1e-12, 1e-8, 1e-5, 1e-3, 0.05, 0.0999, 0.1, 0.1001, 0.5, 1.0, 2.0, 3.0, pi - 1e-6, pi - 1e-12, pi};

// Number of random samples per property; small enough to keep the binary well under 2 s.
inline constexpr int random_samples = 200;

inline double uniform(std::mt19937& gen, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(gen);
}

inline Vec3 random_unit_vector(std::mt19937& gen) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Vec3 e;
  do {
    e = Vec3(normal(gen), normal(gen), normal(gen));
  } while (e.norm() < 1e-3);
  return e.normalized();
}

inline Vec3 random_vector(std::mt19937& gen, double scale = 1.0) {
  return Vec3(uniform(gen, -scale, scale), uniform(gen, -scale, scale), uniform(gen, -scale, scale));
}

// Rotation vector of the given angle about a random axis.
inline Vec3 random_rotation_vector(std::mt19937& gen, double angle) { return angle * random_unit_vector(gen); }

// Twist (omega, v) with |omega| = angle and v uniform in [-v_scale, v_scale]^3.
inline Vec6 random_twist(std::mt19937& gen, double angle, double v_scale = 1.0) {
  Vec6 X;
  X << random_rotation_vector(gen, angle), random_vector(gen, v_scale);
  return X;
}

// Twist with a random angle in [0, max_angle).
inline Vec6 random_twist_up_to(std::mt19937& gen, double max_angle, double v_scale = 1.0) {
  return random_twist(gen, uniform(gen, 0.0, max_angle), v_scale);
}

// Rotation by angle pi about a random axis, built exactly as 2 e e^T - I.
inline Mat3 half_turn(std::mt19937& gen) {
  const Vec3 e = random_unit_vector(gen);
  return 2.0 * e * e.transpose() - Mat3::Identity();
}

// Uniformly distributed rotation from a normalized Gaussian quaternion (independent of
// the exp under test).
inline Mat3 random_rotation(std::mt19937& gen) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::Quaterniond q;
  do {
    q = Eigen::Quaterniond(normal(gen), normal(gen), normal(gen), normal(gen));
  } while (q.norm() < 1e-3);
  return q.normalized().toRotationMatrix();
}

inline Mat3 random_matrix(std::mt19937& gen, double scale = 1.0) {
  Mat3 A;
  for (int i = 0; i < 9; ++i) A(i) = uniform(gen, -scale, scale);
  return A;
}

inline Pose random_pose(std::mt19937& gen, double position_scale = 2.0) {
  Pose C;
  C.R = random_rotation(gen);
  C.r = random_vector(gen, position_scale);
  return C;
}

template <class Matrix>
Matrix matrix_exp(const Matrix& A) {
  const Matrix E = A.exp();
  return E;
}

template <class A, class B>
double max_abs_diff(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
  return (a - b).cwiseAbs().maxCoeff();
}

inline double pose_diff(const Pose& a, const Pose& b) {
  return std::max(max_abs_diff(a.R, b.R), max_abs_diff(a.r, b.r));
}

}  // namespace liembs::lie_test
