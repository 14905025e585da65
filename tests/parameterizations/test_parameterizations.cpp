// Configuration parameterizations (plugin/group.hpp): unit checks of every group plugin
// (retraction round trips, T and T' v against finite differences of the pose, the rp
// normalization row and its eta, the re chart switch), and the same motion from SE3, SO3xR3,
// euler-parameters and euler-angles with rkmk, generalized-alpha and ida on the free body
// and the constrained examples of paper 002.
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

const std::vector<std::string> all_groups{"SE3", "SO3xR3", "rotation-matrix", "euler-parameters", "euler-angles"};

std::unique_ptr<Group> make_group(const Registry& registry, const std::string& name, const std::string& options = "") {
  const auto document = ConfigDocument::from_string(options, "group-options.toml");
  auto group = registry.create<Group>(name, document->root());
  document->reject_unused_keys();
  return group;
}

// A state of n bodies at random poses with random body twists, in the group's coordinates.
State random_state(const Group& group, std::size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto vec3 = [&] { return Vec3(uniform(generator), uniform(generator), uniform(generator)); };
  const BodyCoordinates coordinates = group.body_coordinates();
  State state;
  Eigen::VectorXd twists(6 * static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    Pose pose;
    pose.R = so3::exp(2.0 * vec3());
    pose.r = vec3();
    state.poses.push_back(pose);
    twists.segment<3>(6 * static_cast<Eigen::Index>(i)) = 3.0 * vec3();
    twists.segment<3>(6 * static_cast<Eigen::Index>(i) + 3) = vec3();
  }
  state.chart.resize(static_cast<Eigen::Index>(n) * coordinates.chart);
  group.chart_from_poses(state.poses, state.chart.data());
  state.velocities.resize(static_cast<Eigen::Index>(n) * coordinates.velocity);
  group.from_body_twists(state.poses, state.chart.data(), twists.data(), state.velocities.data());
  return state;
}

Eigen::VectorXd twists_of(const Group& group, const State& state) {
  Eigen::VectorXd twists(6 * static_cast<Eigen::Index>(state.poses.size()));
  group.to_body_twists(state.poses, state.chart.data(), state.velocities.data(), twists.data());
  return twists;
}

State retracted(const StateSpace& space, const State& state, const Eigen::VectorXd& increment) {
  State out = state;
  space.retract_configuration(out, increment);
  return out;
}

}  // namespace

TEST_CASE("every parameterization: retraction round trip, T v = body twist of the pose's motion, T' v",
          "[parameterizations]") {
  const auto registry = testing::build_tree_registry();
  for (const auto& name : all_groups) {
    INFO("group " << name);
    const auto group = make_group(*registry, name);
    const std::size_t n = 3;
    const StateSpace space(*group, n, 0);
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const State state = random_state(*group, n, seed);
      const Eigen::VectorXd& v = state.velocities;
      // The twists asked for come back (T T^+ = 1) and the poses are rotations.
      std::mt19937 generator(seed);
      for (std::size_t i = 0; i < n; ++i)
        CHECK((state.poses[i].R.transpose() * state.poses[i].R - Mat3::Identity()).norm() < 1e-14);

      // Round trip: q exp(xi) exp(-xi) = q.
      const Eigen::VectorXd xi = 0.3 * v / v.norm();
      const State back = retracted(space, retracted(space, state, xi), -xi);
      for (std::size_t i = 0; i < n; ++i) {
        CHECK((back.poses[i].R - state.poses[i].R).norm() < 1e-14);
        CHECK((back.poses[i].r - state.poses[i].r).norm() < 1e-14);
      }
      CHECK((back.chart - state.chart).norm() < 1e-14);

      // T v against central differences of the pose along q exp(t v): omega = vee(R^T R'),
      // v_b = R^T r'.
      const double h = 1e-5;
      const State plus = retracted(space, state, h * v), minus = retracted(space, state, -h * v);
      const Eigen::VectorXd twists = twists_of(*group, state);
      for (std::size_t i = 0; i < n; ++i) {
        const Pose& pose = state.poses[i];
        const Mat3 rate = (plus.poses[i].R - minus.poses[i].R) / (2 * h);
        const Vec3 omega = so3::vee(pose.R.transpose() * rate);
        const Vec3 velocity = pose.R.transpose() * (plus.poses[i].r - minus.poses[i].r) / (2 * h);
        CHECK((omega - twists.segment<3>(6 * Eigen::Index(i))).norm() < 1e-8);
        CHECK((velocity - twists.segment<3>(6 * Eigen::Index(i) + 3)).norm() < 1e-8);
      }

      // velocity_maps: T v equals to_body_twists; T' v = d/dt (T(q(t))) v along q' = v.
      BodyVelocityMaps maps, maps_plus, maps_minus;
      maps.update(*group, state, n);
      maps_plus.update(*group, plus, n);
      maps_minus.update(*group, minus, n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto vi = v.segment(Eigen::Index(i) * maps.velocity, maps.velocity);
        CHECK((maps.map(i) * vi - twists.segment<6>(6 * Eigen::Index(i))).norm() < 1e-13);
        const Vec6 rate = (maps_plus.map(i) - maps_minus.map(i)) * vi / (2 * h);
        CHECK((rate - maps.map_rate(i)).norm() < 1e-7 * (1.0 + rate.norm()));
      }

      // rates_from_body_twist_rates: T v' + T' v = V_b', and the internal constraints'
      // acceleration level J v' = eta.
      Eigen::VectorXd twist_rates = Eigen::VectorXd::LinSpaced(6 * Eigen::Index(n), -2.0, 3.0), rates(v.size());
      group->rates_from_body_twist_rates(state.poses, state.chart.data(), v.data(), twist_rates.data(), rates.data());
      for (std::size_t i = 0; i < n; ++i)
        CHECK((maps.map(i) * rates.segment(Eigen::Index(i) * maps.velocity, maps.velocity) + maps.map_rate(i) -
               twist_rates.segment<6>(6 * Eigen::Index(i)))
                  .norm() < 1e-12);
      const BodyCoordinates coordinates = group->body_coordinates();
      if (coordinates.internal_constraints > 0) {
        DaeTerms terms;
        const Eigen::Index rows = coordinates.internal_constraints * Eigen::Index(n);
        terms.residual.resize(rows);
        terms.acceleration_rhs.resize(rows);
        terms.jacobian.setZero(rows, v.size());
        write_internal_constraints(*group, state, n, 0, terms, dae::all);
        CHECK(terms.residual.norm() < 1e-15);  // unit p from the pose
        CHECK((terms.jacobian * v).norm() < 1e-14);  // from_body_twists keeps p^T p' = 0
        CHECK((terms.jacobian * rates - terms.acceleration_rhs).norm() < 1e-12);
      }
    }
  }
}

TEST_CASE("euler-parameters: the normalization row, its Jacobian and eta by finite differences",
          "[parameterizations][rp]") {
  const auto registry = testing::build_tree_registry();
  const auto group = make_group(*registry, "euler-parameters");
  const BodyCoordinates coordinates = group->body_coordinates();
  CHECK(coordinates.velocity == 7);
  CHECK(coordinates.chart == 4);
  CHECK(coordinates.internal_constraints == 1);
  const std::size_t n = 2;
  const StateSpace space(*group, n, 0);
  State state = random_state(*group, n, 7);
  // Off the unit sphere and with p^T p' != 0, so that every term is exercised.
  Eigen::VectorXd off(space.velocity_dimension());
  off.setLinSpaced(0.02, 0.05);
  space.retract_configuration(state, off);
  state.velocities += Eigen::VectorXd::LinSpaced(state.velocities.size(), -0.4, 0.7);
  const Eigen::VectorXd v = state.velocities, a = Eigen::VectorXd::LinSpaced(v.size(), 1.0, -2.0);
  auto terms_at = [&](const State& x) {
    DaeTerms terms;
    terms.residual.resize(Eigen::Index(n));
    terms.acceleration_rhs.resize(Eigen::Index(n));
    terms.jacobian.setZero(Eigen::Index(n), v.size());
    write_internal_constraints(*group, x, n, 0, terms, dae::all);
    return terms;
  };
  const DaeTerms terms = terms_at(state);
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Vector4d p = state.chart.segment<4>(4 * Eigen::Index(i));
    CHECK(std::abs(terms.residual(Eigen::Index(i)) - 0.5 * (p.squaredNorm() - 1.0)) < 1e-15);
  }
  // g(q(t)) with q(t) = q + t v + t^2/2 a: g' = J v, g'' = J a - eta.
  const double h = 1e-4;
  auto g_at = [&](double t) {
    State x = state;
    space.retract_configuration(x, t * v + 0.5 * t * t * a);
    x.velocities = v + t * a;
    return terms_at(x).residual;
  };
  const Eigen::VectorXd g_plus = g_at(h), g_minus = g_at(-h), g0 = g_at(0.0);
  CHECK(((g_plus - g_minus) / (2 * h) - terms.jacobian * v).norm() < 1e-8);
  CHECK(((g_plus - 2 * g0 + g_minus) / (h * h) - (terms.jacobian * a - terms.acceleration_rhs)).norm() < 1e-5);
  // The pose follows A(p) of 004 eq. 22 and the error reported is |p^T p - 1|.
  CHECK(std::abs(space.normalization_error(state) -
                 std::max(std::abs(state.chart.segment<4>(0).squaredNorm() - 1.0),
                          std::abs(state.chart.segment<4>(4).squaredNorm() - 1.0))) < 1e-15);
}

TEST_CASE("euler-angles: B(e) of 004 eq. 43b, and a chart switch keeps the pose and the body twist",
          "[parameterizations][re]") {
  const auto registry = testing::build_tree_registry();
  const auto group = make_group(*registry, "euler-angles");
  const StateSpace space(*group, 1, 0);
  // At the identity the identity chart is singular (theta = 0): another offset is chosen.
  State state;
  state.poses.assign(1, Pose{});
  state.chart.resize(4);
  group->chart_from_poses(state.poses, state.chart.data());
  CHECK(std::abs(std::sin(state.chart(1))) > 0.7);
  CHECK(state.chart(3) != 0.0);
  CHECK((state.poses[0].R - Mat3::Identity()).norm() < 1e-15);

  // A body near gimbal lock in the identity chart: theta = 0.05.
  state.chart << 0.4, 0.05, -1.1, 0.0;
  state.velocities = (Eigen::VectorXd(6) << 0.3, -0.8, 1.7, 0.1, 0.2, -0.3).finished();
  space.retract_configuration(state, Eigen::VectorXd::Zero(6));  // the pose of the chart
  const Mat3 A = state.poses[0].R;
  // ZXZ: the third column of A is (s_phi s_theta, -c_phi s_theta, c_theta).
  CHECK((A.col(2) - Vec3(std::sin(0.4) * std::sin(0.05), -std::cos(0.4) * std::sin(0.05), std::cos(0.05))).norm() <
        1e-15);
  const Eigen::VectorXd twist_before = twists_of(*group, state);
  const Pose pose_before = state.poses[0];
  REQUIRE(space.update_charts(state));
  CHECK(state.chart(3) != 0.0);
  CHECK(std::abs(std::sin(state.chart(1))) > 0.7);
  CHECK((state.poses[0].R - pose_before.R).norm() < 1e-14);
  CHECK((state.poses[0].r - pose_before.r).norm() == 0.0);
  CHECK((twists_of(*group, state) - twist_before).norm() < 1e-13);
  // A second call finds nothing to switch.
  CHECK_FALSE(space.update_charts(state));
}

TEST_CASE("group options are read strictly", "[parameterizations][errors]") {
  const auto registry = testing::build_tree_registry();
  CHECK_THROWS_WITH(make_group(*registry, "euler-angles", "switch_threshold = 0.9"),
                    Contains("switch_threshold"));
  CHECK_THROWS_WITH(make_group(*registry, "euler-parameters", "switch_threshold = 0.5"),
                    Contains("switch_threshold"));
  CHECK_THROWS_WITH(registry->find(Kind::group, "euler-angle"), Contains("did you mean 'euler-angles'"));
}
