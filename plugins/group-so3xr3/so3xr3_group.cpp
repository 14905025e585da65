// Group plugin SO3xR3: a free body's configuration on the direct product SO(3) x R^3 with
// hybrid velocities V = (omega body-fixed, r' spatial) (paper 002, section 2.2). It is also
// registered as `rotation-matrix`: paper 004's rA formulation has exactly this configuration
// space and these velocities (A on SO(3) with A <- A exp(theta~), body omega_bar, global r';
// 004 eqs. 8, 12, 30b, 32), only its coordinates are ordered (r', omega_bar).
//   T = diag(1, R^T),  T' V = (0, d/dt(R^T) r') = (0, -omega x R^T r').
#include <liembs/config/config_table.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/lie/so3xr3.hpp>
#include <liembs/plugin/plugin.hpp>

namespace {

using namespace liembs;

class So3xR3Group final : public Group {
 public:
  BodyCoordinates body_coordinates() const override { return {}; }
  GroupCapabilities capabilities() const override {
    return {.velocity_map_derivatives = true, .internal_constraint_derivatives = false};
  }

  // (R, r) <- (R exp(xi_omega~), r + xi_v)   (002 eqs. 16, 18)
  void retract(std::span<Pose> poses, double*, const double* increments) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec6> xi(increments + 6 * i);
      poses[i].R = poses[i].R * so3::exp(xi.head<3>());
      poses[i].r += xi.tail<3>();
    }
  }

  // dexp^-1 acts on the rotation only (002 eq. 19, eq. 11 for SO(3)).
  void dexpinv_left(std::size_t n, const double* increments, const double* velocities,
                    double* out) const override {
    for (std::size_t i = 0; i < n; ++i)
      Eigen::Map<Vec6>(out + 6 * i) = so3xr3::dexpinv_left_apply(Eigen::Map<const Vec6>(increments + 6 * i),
                                                                 Eigen::Map<const Vec6>(velocities + 6 * i));
  }

  // Body twist (omega, R^T r') <-> hybrid velocity (omega, r').
  void to_body_twists(std::span<const Pose> poses, const double*, const double* velocities,
                      double* twists) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec6> hybrid(velocities + 6 * i);
      Eigen::Map<Vec6> twist(twists + 6 * i);
      twist.head<3>() = hybrid.head<3>();
      twist.tail<3>() = poses[i].R.transpose() * hybrid.tail<3>();
    }
  }
  void from_body_twists(std::span<const Pose> poses, const double*, const double* twists,
                        double* velocities) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec6> twist(twists + 6 * i);
      Eigen::Map<Vec6> hybrid(velocities + 6 * i);
      hybrid.head<3>() = twist.head<3>();
      hybrid.tail<3>() = poses[i].R * twist.tail<3>();
    }
  }
  // d/dt (R v) = R (v' + omega x v)
  void rates_from_body_twist_rates(std::span<const Pose> poses, const double*, const double* velocities,
                                   const double* twist_rates, double* rates) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec6> hybrid(velocities + 6 * i), twist_rate(twist_rates + 6 * i);
      Eigen::Map<Vec6> rate(rates + 6 * i);
      const Vec3 omega = hybrid.head<3>();
      rate.head<3>() = twist_rate.head<3>();
      rate.tail<3>() = poses[i].R * (twist_rate.tail<3>() + omega.cross(poses[i].R.transpose() * hybrid.tail<3>()));
    }
  }
  void velocity_maps(std::span<const Pose> poses, const double*, const double* velocities, double* maps,
                     double* map_rates) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Eigen::Map<const Vec6> hybrid(velocities + 6 * i);
      Eigen::Map<Mat6> T(maps + 36 * i);
      T.setIdentity();
      T.bottomRightCorner<3, 3>() = poses[i].R.transpose();
      Eigen::Map<Vec6> rate(map_rates + 6 * i);
      rate.head<3>().setZero();
      rate.tail<3>() = -hybrid.head<3>().cross(poses[i].R.transpose() * hybrid.tail<3>());
    }
  }
  // Along (R exp(theta~), r + dr): d(R^T x) = (R^T x)~ theta, d(R y) = -R y~ theta. With u = R^T r':
  //   d(T'v)/dv = [[0, 0], [u~, -omega~ R^T]],  d(T x)/d delta = [[0, 0], [(R^T x_r)~, 0]],
  //   d(T^T y)/d delta = [[0, 0], [-R y_v~, 0]],  d(T'v)/d delta = [[0, 0], [-omega~ u~, 0]].
  void velocity_map_derivatives(std::span<const Pose> poses, const double*, const double* velocities, const double* x,
                                const double* y, double* rate_by_velocity, double* map_velocity_by_position,
                                double* map_x_by_position, double* map_transpose_y_by_position,
                                double* rate_by_position) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      const Mat3& R = poses[i].R;
      const Eigen::Map<const Vec6> hybrid(velocities + 6 * i);
      const Vec3 u = R.transpose() * hybrid.tail<3>();
      const Mat3 omega_hat = so3::hat(hybrid.head<3>());
      auto lower_left = [&](double* out, const Mat3& block) {
        Eigen::Map<Mat6> D(out + 36 * i);
        D.setZero();
        D.bottomLeftCorner<3, 3>() = block;
      };
      if (rate_by_velocity) {
        lower_left(rate_by_velocity, so3::hat(u));
        Eigen::Map<Mat6>(rate_by_velocity + 36 * i).bottomRightCorner<3, 3>() = -omega_hat * R.transpose();
      }
      if (map_velocity_by_position) lower_left(map_velocity_by_position, so3::hat(u));
      if (map_x_by_position)
        lower_left(map_x_by_position, so3::hat(R.transpose() * Eigen::Map<const Vec3>(x + 6 * i + 3)));
      if (map_transpose_y_by_position)
        lower_left(map_transpose_y_by_position, -R * so3::hat(Eigen::Map<const Vec3>(y + 6 * i + 3)));
      if (rate_by_position) lower_left(rate_by_position, -omega_hat * so3::hat(u));
    }
  }
};

std::unique_ptr<Group> make_group(const liembs::ConfigTable&) { return std::make_unique<So3xR3Group>(); }

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Group>("SO3xR3", "2.0.0",
                               "SO(3) x R^3 direct product, hybrid velocities (omega body, r' spatial)", liembs::OptionDeclaration{}, make_group);
  registrar.add<liembs::Group>("rotation-matrix", "2.0.0",
                               "paper 004's rA: the same plugin as SO3xR3 (A on SO(3), body omega, global r')",
                               liembs::OptionDeclaration{}, make_group);
}
