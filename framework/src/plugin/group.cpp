// Default derivatives of a group's velocity maps and internal constraints (plugin/group.hpp),
// for groups that give no closed forms: exact polarization for d(T' v)/dv, central differences
// along the group's own retraction for the position derivatives. All bodies are moved at
// once (they are independent), so each difference is one call for the n bodies.
#include <liembs/plugin/group.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace liembs {

namespace {

// Central-difference step for functions of rotation coordinates of order 1.
double position_step() { return std::cbrt(std::numeric_limits<double>::epsilon()); }

// The n bodies' poses and chart moved by +-step along velocity coordinate k of every body.
void move_all(const Group& group, std::span<const Pose> poses, const double* chart, int k, double step,
              std::vector<Pose>& moved_poses, std::vector<double>& moved_chart) {
  const BodyCoordinates body = group.body_coordinates();
  const std::size_t n = poses.size();
  moved_poses.assign(poses.begin(), poses.end());
  moved_chart.clear();
  if (chart && body.chart > 0) moved_chart.assign(chart, chart + static_cast<std::size_t>(body.chart) * n);
  std::vector<double> increments(static_cast<std::size_t>(body.velocity) * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) increments[i * static_cast<std::size_t>(body.velocity) + static_cast<std::size_t>(k)] = step;
  group.retract(moved_poses, moved_chart.empty() ? nullptr : moved_chart.data(), increments.data());
}

}  // namespace

void Group::velocity_map_derivatives(std::span<const Pose> poses, const double* chart, const double* velocities,
                                     const double* x, const double* y, double* rate_by_velocity,
                                     double* map_velocity_by_position, double* map_x_by_position,
                                     double* map_transpose_y_by_position, double* rate_by_position) const {
  const int nv = body_coordinates().velocity;
  const std::size_t n = poses.size();
  using MapBlock = Eigen::Map<const Eigen::Matrix<double, 6, Eigen::Dynamic>>;
  std::vector<double> maps_plus(6 * static_cast<std::size_t>(nv) * n), maps_minus(maps_plus.size());
  std::vector<double> rates_plus(6 * n), rates_minus(6 * n);

  // T' v = B(v, v) with B bilinear: (B(v + e, v + e) - B(v - e, v - e)) / 2 = (B(v, .) + B(., v)) e.
  if (rate_by_velocity) {
    std::vector<double> shifted(velocities, velocities + static_cast<std::size_t>(nv) * n);
    for (int k = 0; k < nv; ++k) {
      for (std::size_t i = 0; i < n; ++i) shifted[i * static_cast<std::size_t>(nv) + static_cast<std::size_t>(k)] += 1.0;
      velocity_maps(poses, chart, shifted.data(), maps_plus.data(), rates_plus.data());
      for (std::size_t i = 0; i < n; ++i) shifted[i * static_cast<std::size_t>(nv) + static_cast<std::size_t>(k)] -= 2.0;
      velocity_maps(poses, chart, shifted.data(), maps_minus.data(), rates_minus.data());
      for (std::size_t i = 0; i < n; ++i) {
        shifted[i * static_cast<std::size_t>(nv) + static_cast<std::size_t>(k)] += 1.0;
        for (int r = 0; r < 6; ++r)
          rate_by_velocity[i * 6 * static_cast<std::size_t>(nv) + static_cast<std::size_t>(6 * k + r)] =
              0.5 * (rates_plus[6 * i + static_cast<std::size_t>(r)] - rates_minus[6 * i + static_cast<std::size_t>(r)]);
      }
    }
  }
  if (!map_velocity_by_position && !map_x_by_position && !map_transpose_y_by_position && !rate_by_position) return;

  const double step = position_step();
  std::vector<Pose> moved_poses;
  std::vector<double> moved_chart;
  for (int k = 0; k < nv; ++k) {
    move_all(*this, poses, chart, k, step, moved_poses, moved_chart);
    velocity_maps(moved_poses, moved_chart.empty() ? nullptr : moved_chart.data(), velocities, maps_plus.data(),
                  rates_plus.data());
    move_all(*this, poses, chart, k, -step, moved_poses, moved_chart);
    velocity_maps(moved_poses, moved_chart.empty() ? nullptr : moved_chart.data(), velocities, maps_minus.data(),
                  rates_minus.data());
    for (std::size_t i = 0; i < n; ++i) {
      const MapBlock plus(maps_plus.data() + 6 * static_cast<std::size_t>(nv) * i, 6, nv);
      const MapBlock minus(maps_minus.data() + 6 * static_cast<std::size_t>(nv) * i, 6, nv);
      const auto column = static_cast<std::size_t>(6 * k) + 6 * static_cast<std::size_t>(nv) * i;
      const Eigen::Map<const Eigen::VectorXd> v(velocities + static_cast<std::size_t>(nv) * i, nv);
      if (map_velocity_by_position)
        Eigen::Map<Vec6>(map_velocity_by_position + column) = (plus - minus) * v / (2.0 * step);
      if (map_x_by_position) {
        const Eigen::Map<const Eigen::VectorXd> xi(x + static_cast<std::size_t>(nv) * i, nv);
        Eigen::Map<Vec6>(map_x_by_position + column) = (plus - minus) * xi / (2.0 * step);
      }
      if (map_transpose_y_by_position) {
        const Eigen::Map<const Vec6> yi(y + 6 * i);
        Eigen::Map<Eigen::VectorXd>(map_transpose_y_by_position + static_cast<std::size_t>(nv * nv) * i +
                                        static_cast<std::size_t>(nv * k),
                                    nv) = (plus - minus).transpose() * yi / (2.0 * step);
      }
      if (rate_by_position)
        for (int r = 0; r < 6; ++r)
          rate_by_position[column + static_cast<std::size_t>(r)] =
              (rates_plus[6 * i + static_cast<std::size_t>(r)] - rates_minus[6 * i + static_cast<std::size_t>(r)]) /
              (2.0 * step);
    }
  }
}

void Group::internal_constraint_derivatives(std::span<const Pose> poses, const double* chart,
                                            const double* velocities, const double* multipliers,
                                            double* multiplier_stiffness, double* velocity_derivative) const {
  const BodyCoordinates body = body_coordinates();
  const int nv = body.velocity, k_rows = body.internal_constraints;
  if (k_rows == 0) return;
  const std::size_t n = poses.size();
  const double step = position_step();
  std::vector<double> plus(static_cast<std::size_t>(k_rows * nv) * n), minus(plus.size());
  std::vector<Pose> moved_poses;
  std::vector<double> moved_chart;
  using Rows = Eigen::Map<const Eigen::MatrixXd>;
  for (int k = 0; k < nv; ++k) {
    move_all(*this, poses, chart, k, step, moved_poses, moved_chart);
    internal_constraints(n, moved_chart.empty() ? nullptr : moved_chart.data(), velocities, nullptr, plus.data(), nullptr);
    move_all(*this, poses, chart, k, -step, moved_poses, moved_chart);
    internal_constraints(n, moved_chart.empty() ? nullptr : moved_chart.data(), velocities, nullptr, minus.data(), nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t offset = static_cast<std::size_t>(k_rows * nv) * i;
      const Eigen::MatrixXd derivative =
          (Rows(plus.data() + offset, k_rows, nv) - Rows(minus.data() + offset, k_rows, nv)) / (2.0 * step);
      if (multiplier_stiffness)
        Eigen::Map<Eigen::VectorXd>(multiplier_stiffness + static_cast<std::size_t>(nv * nv) * i +
                                        static_cast<std::size_t>(nv * k),
                                    nv) =
            derivative.transpose() *
            Eigen::Map<const Eigen::VectorXd>(multipliers + static_cast<std::size_t>(k_rows) * i, k_rows);
      if (velocity_derivative)
        Eigen::Map<Eigen::VectorXd>(velocity_derivative + offset + static_cast<std::size_t>(k_rows * k), k_rows) =
            derivative * Eigen::Map<const Eigen::VectorXd>(velocities + static_cast<std::size_t>(nv) * i, nv);
    }
  }
}

}  // namespace liembs
