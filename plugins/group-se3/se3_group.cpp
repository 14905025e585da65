// Group plugin SE3: a free body's configuration on the semidirect product SE(3) with
// body-fixed twists V = (omega, R^T r') as velocity coordinates (paper 002, section 2.1):
// T = 1, T' V = 0.
#include <liembs/config/config_table.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/plugin/plugin.hpp>

#include <algorithm>

namespace {

using namespace liembs;

class Se3Group final : public Group {
 public:
  BodyCoordinates body_coordinates() const override { return {}; }
  GroupCapabilities capabilities() const override {
    return {.velocity_map_derivatives = true, .internal_constraint_derivatives = false};
  }

  // C <- C exp(X^): the screw motion X applied in the body frame (002 eq. 8).
  void retract(std::span<Pose> poses, double*, const double* increments) const override {
    for (std::size_t i = 0; i < poses.size(); ++i)
      poses[i] = se3::compose(poses[i], se3::exp(Eigen::Map<const Vec6>(increments + 6 * i)));
  }

  // dexp^-1_{-X} V with the closed form of 002 eq. 10 (Taylor branch near 0).
  void dexpinv_left(std::size_t n, const double* increments, const double* velocities,
                    double* out) const override {
    for (std::size_t i = 0; i < n; ++i)
      Eigen::Map<Vec6>(out + 6 * i) = se3::dexpinv_left_apply(Eigen::Map<const Vec6>(increments + 6 * i),
                                                              Eigen::Map<const Vec6>(velocities + 6 * i));
  }

  // The velocity coordinates of SE(3) are the body-fixed twists themselves.
  void to_body_twists(std::span<const Pose> poses, const double*, const double* velocities,
                      double* twists) const override {
    std::copy(velocities, velocities + 6 * poses.size(), twists);
  }
  void from_body_twists(std::span<const Pose> poses, const double*, const double* twists,
                        double* velocities) const override {
    std::copy(twists, twists + 6 * poses.size(), velocities);
  }
  void rates_from_body_twist_rates(std::span<const Pose> poses, const double*, const double*,
                                   const double* twist_rates, double* rates) const override {
    std::copy(twist_rates, twist_rates + 6 * poses.size(), rates);
  }
  void velocity_maps(std::span<const Pose> poses, const double*, const double*, double* maps,
                     double* map_rates) const override {
    for (std::size_t i = 0; i < poses.size(); ++i) {
      Eigen::Map<Mat6>(maps + 36 * i).setIdentity();
      Eigen::Map<Vec6>(map_rates + 6 * i).setZero();
    }
  }
  // T = 1 and T' = 0 everywhere: all derivatives vanish.
  void velocity_map_derivatives(std::span<const Pose> poses, const double*, const double*, const double*,
                                const double*, double* rate_by_velocity, double* map_velocity_by_position,
                                double* map_x_by_position, double* map_transpose_y_by_position,
                                double* rate_by_position) const override {
    for (double* out : {rate_by_velocity, map_velocity_by_position, map_x_by_position, map_transpose_y_by_position,
                        rate_by_position})
      if (out) std::fill(out, out + 36 * poses.size(), 0.0);
  }
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Group>("SE3", "2.0.0",
                               "SE(3) semidirect product, body-fixed twists (omega, R^T r')", liembs::OptionDeclaration{},
                               [](const liembs::ConfigTable&) { return std::make_unique<Se3Group>(); });
}
