// Group plugin euler-parameters: paper 004's rp formulation. A body's configuration is
// (p, r) in R^4 x R^3 with the Euler parameters p = (e0, e) as chart coordinates, the
// velocity coordinates are (p', r') (7 per body), and p^T p = 1 is an internal constraint
// with its own multiplier (004 eq. 19):
//   A(p) = (2 e0^2 - 1) 1 + 2 (e e^T + e0 e~)                        (004 eq. 22)
//   G(p) = [-e, -e~ + e0 1],  omega_bar = 2 G(p) p'                  (004 eq. 39c)
//   normalization: (p^T p - 1) / 2 = 0,  row p^T,  eta = -p'^T p'     (004 eq. 19, 20b)
// The pose is R = A(p / |p|), a rotation also at the iterates of a Newton method that leave
// p^T p = 1 (the additive update p + dp does); on the constraint it is the paper's A(p).
// Then omega_bar = 2 G(p) p' / |p|^2 exactly (G(p) p = 0), R depends on p's direction only,
// and J_b T is the exact derivative of the constraints with respect to p (the paper's
// B(p, s) differs from it by multiples of the normalization row p^T):
//   T = [[2 G(p) / |p|^2, 0], [0, R^T]],
//   T' v = (-4 G(p) p' (p^T p') / |p|^4, -omega x R^T r')   (G(p') p' = 0).
// With M_b = diag(J, m 1) at the centre of mass, T^T M_b T = diag(4 G^T J G, m 1) on p^T p = 1 (004 eq.
// 39a). Its Q = T^T (Q_b - M_b T' v) holds 2 G^T (n - omega~ J omega) where the paper has
// 2 G^T n + 8 G'^T J G' p: the two differ by a multiple of p (absorbed by the normalization
// multiplier) only where p^T p' = 0, which index-3 BDF does not enforce, so their discrete
// motions differ by O(h) (tests/parameterizations/test_rp_gyroscopic_forms.cpp). M is singular
// along p (G p = 0): the solvers factor the whole saddle-point matrix then (SaddlePointSolver).
#include <liembs/config/config_table.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/plugin/plugin.hpp>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>

namespace {

using namespace liembs;
using Vec4 = Eigen::Vector4d;
using Mat34 = Eigen::Matrix<double, 3, 4>;

constexpr int chart_size = 4, velocity_size = 7;

// A(p) of 004 eq. 22 (orthogonal for p^T p = 1).
Mat3 rotation(const Vec4& p) {
  const double e0 = p(0);
  const Vec3 e = p.tail<3>();
  return (2.0 * e0 * e0 - 1.0) * Mat3::Identity() + 2.0 * (e * e.transpose() + e0 * so3::hat(e));
}

Mat34 g_matrix(const Vec4& p) {
  Mat34 G;
  G.col(0) = -p.tail<3>();
  G.rightCols<3>() = -so3::hat(p.tail<3>()) + p(0) * Mat3::Identity();
  return G;
}

// The pose's rotation A(p / |p|) and the body angular velocity 2 G(p) p' / |p|^2.
Mat3 pose_rotation(const Vec4& p) { return rotation(p / p.norm()); }
Vec3 angular_velocity(const Vec4& p, const Vec4& p_dot) { return 2.0 * g_matrix(p) * p_dot / p.squaredNorm(); }

class EulerParameters final : public Group {
 public:
  // velocity_map_derivatives: the base class's differences of velocity_maps.
  GroupCapabilities capabilities() const override {
    return {.velocity_map_derivatives = false, .internal_constraint_derivatives = true};
  }
  BodyCoordinates body_coordinates() const override {
    BodyCoordinates coordinates;
    coordinates.chart = chart_size;
    coordinates.velocity = velocity_size;
    coordinates.rotation = 4;
    coordinates.internal_constraints = 1;
    coordinates.internal_constraint_name = "normalization";
    coordinates.vector_chart = true;
    return coordinates;
  }

  // p from R as the unit quaternion (w, x, y, z) with w >= 0.
  void chart_from_poses(std::span<Pose> poses, double* chart) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      Eigen::Quaterniond q(poses[i].R);
      q.normalize();
      if (q.w() < 0) q.coeffs() *= -1.0;
      Eigen::Map<Vec4> p(chart + chart_size * i);
      p << q.w(), q.x(), q.y(), q.z();
      poses[i].R = pose_rotation(p);
    }
  }

  // (p, r) <- (p + dp, r + dr), R = A(p / |p|).
  void retract(std::span<Pose> poses, double* chart, const double* increments) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      Eigen::Map<Vec4> p(chart + chart_size * i);
      p += Eigen::Map<const Vec4>(increments + velocity_size * i);
      poses[i].r += Eigen::Map<const Vec3>(increments + velocity_size * i + 4);
      poses[i].R = pose_rotation(p);
    }
  }

  void dexpinv_left(std::size_t n, const double*, const double* velocities, double* out) const override {
    std::copy(velocities, velocities + velocity_size * n, out);
  }

  void to_body_twists(std::span<const Pose> poses, const double* chart, const double* velocities,
                      double* twists) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec4> p(chart + chart_size * i), p_dot(velocities + velocity_size * i);
      Eigen::Map<Vec6> twist(twists + 6 * i);
      twist.head<3>() = angular_velocity(p, p_dot);
      twist.tail<3>() = poses[i].R.transpose() * Eigen::Map<const Vec3>(velocities + velocity_size * i + 4);
    }
  }

  // p' = G^T omega / 2 (so that p^T p' = 0; G G^T = p^T p 1), r' = R v.
  void from_body_twists(std::span<const Pose> poses, const double* chart, const double* twists,
                        double* velocities) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec4> p(chart + chart_size * i);
      const Eigen::Map<const Vec6> twist(twists + 6 * i);
      Eigen::Map<Vec4>(velocities + velocity_size * i) = 0.5 * g_matrix(p).transpose() * twist.head<3>();
      Eigen::Map<Vec3>(velocities + velocity_size * i + 4) = poses[i].R * twist.tail<3>();
    }
  }

  // p'' = G^T (omega' - w) / 2 - (p'^T p' / p^T p) p with w the rotation part of T' v
  // (2 G p'' / |p|^2 = omega' - w, p^T p'' = -p'^T p'),  r'' = R (v' + omega x R^T r').
  void rates_from_body_twist_rates(std::span<const Pose> poses, const double* chart, const double* velocities,
                                   const double* twist_rates, double* rates) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec4> p(chart + chart_size * i), p_dot(velocities + velocity_size * i);
      const Eigen::Map<const Vec3> r_dot(velocities + velocity_size * i + 4);
      const Eigen::Map<const Vec6> twist_rate(twist_rates + 6 * i);
      const double norm2 = p.squaredNorm();
      const Mat34 G = g_matrix(p);
      const Vec3 map_rate = -4.0 * G * p_dot * p.dot(p_dot) / (norm2 * norm2);
      Eigen::Map<Vec4>(rates + velocity_size * i) =
          0.5 * G.transpose() * (twist_rate.head<3>() - map_rate) - (p_dot.squaredNorm() / norm2) * p;
      Eigen::Map<Vec3>(rates + velocity_size * i + 4) =
          poses[i].R * (twist_rate.tail<3>() + angular_velocity(p, p_dot).cross(poses[i].R.transpose() * r_dot));
    }
  }

  void velocity_maps(std::span<const Pose> poses, const double* chart, const double* velocities, double* maps,
                     double* map_rates) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec4> p(chart + chart_size * i), p_dot(velocities + velocity_size * i);
      const Eigen::Map<const Vec3> r_dot(velocities + velocity_size * i + 4);
      Eigen::Map<Eigen::Matrix<double, 6, velocity_size>> T(maps + 6 * velocity_size * i);
      T.setZero();
      const double norm2 = p.squaredNorm();
      const Mat34 G = g_matrix(p);
      T.topLeftCorner<3, 4>() = (2.0 / norm2) * G;
      T.bottomRightCorner<3, 3>() = poses[i].R.transpose();
      Eigen::Map<Vec6> rate(map_rates + 6 * i);
      rate.head<3>() = -4.0 * G * p_dot * p.dot(p_dot) / (norm2 * norm2);  // G(p') p' = 0
      rate.tail<3>() = -(2.0 * G * p_dot / norm2).cross(poses[i].R.transpose() * r_dot);
    }
  }

  void internal_constraints(std::size_t n, const double* chart, const double* velocities, double* residual,
                            double* jacobian, double* acceleration_rhs) const override {
    for (std::size_t i = 0; i < n; ++i) {
      const Eigen::Map<const Vec4> p(chart + chart_size * i), p_dot(velocities + velocity_size * i);
      if (residual) residual[i] = 0.5 * (p.squaredNorm() - 1.0);
      if (jacobian) {
        Eigen::Map<Eigen::Matrix<double, 1, velocity_size>> row(jacobian + velocity_size * i);
        row.setZero();
        row.head<4>() = p.transpose();
      }
      if (acceleration_rhs) acceleration_rhs[i] = -p_dot.squaredNorm();
    }
  }

  // J_int^T mu = mu (p, 0) and J_int v = p^T p': d/dp gives mu 1 and p'^T.
  void internal_constraint_derivatives(std::span<const Pose> poses, const double*, const double* velocities,
                                       const double* multipliers, double* multiplier_stiffness,
                                       double* velocity_derivative) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      if (multiplier_stiffness) {
        Eigen::Map<Eigen::Matrix<double, velocity_size, velocity_size>> K(multiplier_stiffness +
                                                                           velocity_size * velocity_size * i);
        K.setZero();
        K.topLeftCorner<4, 4>().diagonal().setConstant(multipliers[i]);
      }
      if (velocity_derivative) {
        Eigen::Map<Eigen::Matrix<double, 1, velocity_size>> row(velocity_derivative + velocity_size * i);
        row.setZero();
        row.head<4>() = Eigen::Map<const Vec4>(velocities + velocity_size * i).transpose();
      }
    }
  }

  double normalization_error(std::size_t n, const double* chart) const override {
    double largest = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      largest = std::max(largest, std::abs(Eigen::Map<const Vec4>(chart + chart_size * i).squaredNorm() - 1.0));
    return largest;
  }
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Group>(
      "euler-parameters", "1.0.0",
      "paper 004's rp: Euler parameters p as chart coordinates, velocities (p', r'), p^T p = 1 as a constraint",
      liembs::OptionDeclaration{}, [](const liembs::ConfigTable&) { return std::make_unique<EulerParameters>(); });
}
