// Group plugin euler-angles: paper 004's re formulation. A body's orientation is carried by
// ZXZ Euler angles e = (phi, theta, psi), a chart of R^3; velocity coordinates are (e', r')
// (6 per body):
//   A(e) = A1(phi) A2(theta) A3(psi)  (rotations about z, x, z),   omega_chart = B(e) e'
//   B(e) = [[s_psi s_theta, c_psi, 0], [c_psi s_theta, -s_psi, 0], [c_theta, 0, 1]]   (004 eq. 43b)
// B is singular at sin(theta) = 0 (gimbal lock), e.g. at A = 1. So every body carries a chart
// offset F_k (a fixed rotation, k = 0, 1, 2 in State::chart next to the angles) and
//   R F_k = A(e),   omega_body = F_k B(e) e',
// with F_k e_z = e_z, e_x, e_y of the body. theta is the angle between the body axis F_k e_z
// and the world z axis; between steps (update_charts) a body whose |sin theta| fell below
// `switch_threshold` moves to the k whose axis is the most perpendicular to world z (there
// |sin theta| >= 1/sqrt(2)): the angles are re-extracted from R and e' recomputed from
// omega_body, so the pose and the body twist are kept (docs/configuration-spaces.md).
//   T = [[F B(e), 0], [0, R^T]],   T' v = (F B'(e, e') e', -omega x R^T r').
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/plugin.hpp>

#include <algorithm>
#include <cmath>

namespace {

using namespace liembs;

constexpr int chart_size = 4, velocity_size = 6;

// F_k: columns are the images of the body axes; F_k e_z = e_z, e_x, e_y (cyclic permutations).
Mat3 chart_offset(int k) {
  Mat3 F;
  switch (k) {
    case 1: F << 0, 0, 1, 1, 0, 0, 0, 1, 0; break;
    case 2: F << 0, 1, 0, 0, 0, 1, 1, 0, 0; break;
    default: F.setIdentity();
  }
  return F;
}

Mat3 euler_rotation(const Vec3& e) {
  const double cf = std::cos(e(0)), sf = std::sin(e(0)), ct = std::cos(e(1)), st = std::sin(e(1)),
               cp = std::cos(e(2)), sp = std::sin(e(2));
  Mat3 A1, A2, A3;
  A1 << cf, -sf, 0, sf, cf, 0, 0, 0, 1;
  A2 << 1, 0, 0, 0, ct, -st, 0, st, ct;
  A3 << cp, -sp, 0, sp, cp, 0, 0, 0, 1;
  return A1 * A2 * A3;
}

// B(e) of 004 eq. 43b: omega_bar = B(e) e' in the frame A(e).
Mat3 b_matrix(const Vec3& e) {
  const double st = std::sin(e(1)), ct = std::cos(e(1)), sp = std::sin(e(2)), cp = std::cos(e(2));
  Mat3 B;
  B << sp * st, cp, 0, cp * st, -sp, 0, ct, 0, 1;
  return B;
}

// B'(e, e') e', the derivative of B along e' applied to e'.
Vec3 b_rate_times(const Vec3& e, const Vec3& e_dot) {
  const double st = std::sin(e(1)), ct = std::cos(e(1)), sp = std::sin(e(2)), cp = std::cos(e(2));
  const double phi_dot = e_dot(0), theta_dot = e_dot(1), psi_dot = e_dot(2);
  return {(cp * st * psi_dot + sp * ct * theta_dot) * phi_dot - sp * psi_dot * theta_dot,
          (-sp * st * psi_dot + cp * ct * theta_dot) * phi_dot - cp * psi_dot * theta_dot,
          -st * theta_dot * phi_dot};
}

// e' = B(e)^-1 w: phi' sin(theta) = w1 s_psi + w2 c_psi, theta' = w1 c_psi - w2 s_psi,
// psi' = w3 - phi' c_theta.
Vec3 b_inverse_times(const Vec3& e, const Vec3& w) {
  const double st = std::sin(e(1)), ct = std::cos(e(1)), sp = std::sin(e(2)), cp = std::cos(e(2));
  const double phi_dot = (w(0) * sp + w(1) * cp) / st;
  return {phi_dot, w(0) * cp - w(1) * sp, w(2) - phi_dot * ct};
}

class EulerAngles final : public Group {
 public:
  explicit EulerAngles(double switch_threshold) : switch_threshold_(switch_threshold) {}

  std::string description() const override {
    return "ZXZ Euler angles, chart switch below |sin theta| = " + std::to_string(switch_threshold_);
  }

  BodyCoordinates body_coordinates() const override {
    BodyCoordinates coordinates;
    coordinates.chart = chart_size;
    coordinates.velocity = velocity_size;
    coordinates.rotation = 3;
    coordinates.vector_chart = true;
    return coordinates;
  }

  void chart_from_poses(std::span<Pose> poses, double* chart) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) extract(poses[i], chart + chart_size * i);
  }

  // (e, r) <- (e + de, r + dr), R = A(e) F_k^T.
  void retract(std::span<Pose> poses, double* chart, const double* increments) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      double* c = chart + chart_size * i;
      Eigen::Map<Vec3> e(c);
      e += Eigen::Map<const Vec3>(increments + velocity_size * i);
      poses[i].r += Eigen::Map<const Vec3>(increments + velocity_size * i + 3);
      poses[i].R = euler_rotation(e) * chart_offset(offset_index(c)).transpose();
    }
  }

  void dexpinv_left(std::size_t n, const double*, const double* velocities, double* out) const override {
    std::copy(velocities, velocities + velocity_size * n, out);
  }

  void to_body_twists(std::span<const Pose> poses, const double* chart, const double* velocities,
                      double* twists) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const double* c = chart + chart_size * i;
      const Eigen::Map<const Vec3> e(c), e_dot(velocities + velocity_size * i);
      Eigen::Map<Vec6> twist(twists + 6 * i);
      twist.head<3>() = chart_offset(offset_index(c)) * (b_matrix(e) * e_dot);
      twist.tail<3>() = poses[i].R.transpose() * Eigen::Map<const Vec3>(velocities + velocity_size * i + 3);
    }
  }

  void from_body_twists(std::span<const Pose> poses, const double* chart, const double* twists,
                        double* velocities) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const double* c = chart + chart_size * i;
      const Eigen::Map<const Vec6> twist(twists + 6 * i);
      Eigen::Map<Vec3>(velocities + velocity_size * i) =
          b_inverse_times(Eigen::Map<const Vec3>(c), chart_offset(offset_index(c)).transpose() * twist.head<3>());
      Eigen::Map<Vec3>(velocities + velocity_size * i + 3) = poses[i].R * twist.tail<3>();
    }
  }

  // e'' = B^-1 (F^T omega' - B' e'),  r'' = R (v' + omega x v).
  void rates_from_body_twist_rates(std::span<const Pose> poses, const double* chart, const double* velocities,
                                   const double* twist_rates, double* rates) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const double* c = chart + chart_size * i;
      const Eigen::Map<const Vec3> e(c), e_dot(velocities + velocity_size * i),
          r_dot(velocities + velocity_size * i + 3);
      const Eigen::Map<const Vec6> twist_rate(twist_rates + 6 * i);
      const Mat3 F = chart_offset(offset_index(c));
      const Vec3 omega = F * (b_matrix(e) * e_dot);
      Eigen::Map<Vec3>(rates + velocity_size * i) =
          b_inverse_times(e, F.transpose() * twist_rate.head<3>() - b_rate_times(e, e_dot));
      Eigen::Map<Vec3>(rates + velocity_size * i + 3) =
          poses[i].R * (twist_rate.tail<3>() + omega.cross(poses[i].R.transpose() * r_dot));
    }
  }

  void velocity_maps(std::span<const Pose> poses, const double* chart, const double* velocities, double* maps,
                     double* map_rates) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const double* c = chart + chart_size * i;
      const Eigen::Map<const Vec3> e(c), e_dot(velocities + velocity_size * i),
          r_dot(velocities + velocity_size * i + 3);
      const Mat3 F = chart_offset(offset_index(c));
      const Mat3 FB = F * b_matrix(e);
      Eigen::Map<Mat6> T(maps + 36 * i);
      T.setZero();
      T.topLeftCorner<3, 3>() = FB;
      T.bottomRightCorner<3, 3>() = poses[i].R.transpose();
      Eigen::Map<Vec6> rate(map_rates + 6 * i);
      rate.head<3>() = F * b_rate_times(e, e_dot);
      rate.tail<3>() = -(FB * e_dot).cross(poses[i].R.transpose() * r_dot);
    }
  }

  bool update_charts(std::span<Pose> poses, double* chart, double* velocities) const override {
    bool switched = false;
    for (std::size_t i = 0; i < poses.size(); ++i) {
      double* c = chart + chart_size * i;
      if (std::abs(std::sin(c[1])) >= switch_threshold_) continue;
      Eigen::Map<Vec3> e_dot(velocities + velocity_size * i);
      const Vec3 omega = chart_offset(offset_index(c)) * (b_matrix(Eigen::Map<const Vec3>(c)) * e_dot);
      extract(poses[i], c);
      e_dot = b_inverse_times(Eigen::Map<const Vec3>(c), chart_offset(offset_index(c)).transpose() * omega);
      switched = true;
    }
    return switched;
  }

 private:
  static int offset_index(const double* chart) { return static_cast<int>(chart[3]); }

  // Chooses the chart for R (the identity offset while |sin theta| >= switch_threshold, else the
  // body axis most perpendicular to world z), extracts the ZXZ angles of A = R F_k and sets R to
  // A(e) F_k^T (equal up to round-off).
  void extract(Pose& pose, double* chart) const {
    const Vec3 world_z_in_body = pose.R.transpose().col(2);  // R^T e_z; cos theta_k = its component along F_k e_z
    int k = 0;
    if (1.0 - world_z_in_body.z() * world_z_in_body.z() < switch_threshold_ * switch_threshold_) {
      const double x = std::abs(world_z_in_body.x()), y = std::abs(world_z_in_body.y());
      k = x <= y ? 1 : 2;  // |sin theta| >= sqrt(1 - (1 - u_z^2) / 2) >= 1/sqrt(2) there
    }
    const Mat3 A = pose.R * chart_offset(k);
    const double theta = std::acos(std::clamp(A(2, 2), -1.0, 1.0));
    chart[0] = std::atan2(A(0, 2), -A(1, 2));
    chart[1] = theta;
    chart[2] = std::atan2(A(2, 0), A(2, 1));
    chart[3] = k;
    pose.R = euler_rotation(Eigen::Map<const Vec3>(chart)) * chart_offset(k).transpose();
  }

  double switch_threshold_;
};

}  // namespace

// The options, declared once (liembs plugins --options euler-angles, docs/plugin-options.md).
const liembs::OptionDeclaration& euler_angles_options() {
  static const liembs::OptionDeclaration declaration{liembs::OptionSpec::number(
      "switch_threshold", 0.5, liembs::Range::closed(0.05, 0.7),
      "|sin theta| below which a body switches to the other chart (0.3 reproduces the authors' re trajectories)")};
  return declaration;
}

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Group>(
      "euler-angles", "1.0.0",
      "paper 004's re: ZXZ Euler angles as chart coordinates, velocities (e', r'), chart switch near gimbal lock",
      euler_angles_options(), [](const liembs::ConfigTable& options) {
        return std::make_unique<EulerAngles>(euler_angles_options().number(options, "switch_threshold"));
      });
}
