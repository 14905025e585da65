// The analytic derivatives of the equations of motion (derivative_algorithms.hpp) in every
// representation plugin, on random chains and branched trees with every joint type, fixed
// and floating bases: dtau/dq, dtau/du and M against central finite differences of the
// same representation's RNEA (the floating base moved along C exp(xi)); du'/dq, du'/du
// against central differences of its ABA, du'/dtau = M^-1; the representations agree; with
// body- and world-frame loads; the regressor reproduces tau for random inertial parameters;
// size errors.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/model/model.hpp>

#include <catch2/catch.hpp>

#include <derivative_checks.hpp>

#include <algorithm>
#include <functional>
#include <random>

using namespace liembs;
using namespace liembs::testing::derivative_checks;

namespace {

// The state moved by h along generalized coordinate c: the base along C exp(h e_c), or q_j.
TreeState moved_configuration(const KinematicTree& tree, const TreeState& state, int c, double h) {
  TreeState out = state;
  const int offset = tree.floating_base ? 6 : 0;
  if (c < offset) out.base = se3::compose(state.base, se3::exp(Vec6(h * Vec6::Unit(c))));
  else out.q(c - offset) += h;
  return out;
}
TreeState moved_velocity(const KinematicTree& tree, const TreeState& state, int c, double h) {
  TreeState out = state;
  const int offset = tree.floating_base ? 6 : 0;
  if (c < offset) out.base_twist(c) += h;
  else out.qd(c - offset) += h;
  return out;
}

// Central differences of f(state) along every generalized coordinate (by_velocity: u).
Eigen::MatrixXd central_differences(const KinematicTree& tree, const TreeState& state, bool by_velocity,
                                    const std::function<Eigen::VectorXd(const TreeState&)>& f) {
  const int nv = tree.velocity_dimension();
  Eigen::MatrixXd out(nv, nv);
  for (int c = 0; c < nv; ++c) {
    const auto move = by_velocity ? moved_velocity : moved_configuration;
    out.col(c) = (f(move(tree, state, c, fd_step)) - f(move(tree, state, c, -fd_step))) / (2.0 * fd_step);
  }
  return out;
}

struct Bound {
  std::shared_ptr<const KinematicTree> tree;
  std::unique_ptr<TreeDynamics> dynamics;
  std::unique_ptr<TreeDerivatives> derivatives;
};

Bound bind(const Representation& representation, const Model& model) {
  Bound bound;
  bound.tree = std::make_shared<const KinematicTree>(compile_tree(model));
  bound.dynamics = representation.bind_tree(bound.tree);
  bound.derivatives = representation.bind_derivatives(bound.tree);
  return bound;
}

// Every derivative of one model in every representation against finite differences and
// against the first representation.
void check_derivatives(const Model& model, unsigned seed) {
  InverseDynamicsDerivatives first_inverse;
  ForwardDynamicsDerivatives first_forward;
  for (std::size_t r = 0; r < plugins().loaded.size(); ++r) {
    const auto& [name, representation] = plugins().loaded[r];
    INFO("representation " << name);
    Bound bound = bind(*representation, model);
    REQUIRE(bound.derivatives->representation() == name);
    const KinematicTree& tree = *bound.tree;
    const int nv = tree.velocity_dimension();
    const TreeState state = random_state(tree, 700 + seed);
    const Eigen::VectorXd acceleration = random_vector(nv, 800 + seed);
    const Eigen::VectorXd force = random_vector(nv, 900 + seed, 5.0);
    TreeDynamics& dynamics = *bound.dynamics;

    InverseDynamicsDerivatives inverse;
    bound.derivatives->inverse_dynamics_derivatives(state, acceleration, inverse);
    const auto rnea = [&](const TreeState& s) {
      Eigen::VectorXd tau;
      dynamics.inverse_dynamics(s, acceleration, tau);
      return tau;
    };
    Eigen::MatrixXd mass;
    dynamics.mass_matrix(state, mass);
    CHECK(relative_error(inverse.force, rnea(state)) < roundoff_tolerance);
    CHECK(relative_error(inverse.mass, mass) < roundoff_tolerance);
    CHECK(relative_error(inverse.force_by_q, central_differences(tree, state, false, rnea)) < fd_tolerance);
    CHECK(relative_error(inverse.force_by_u, central_differences(tree, state, true, rnea)) < fd_tolerance);

    ForwardDynamicsDerivatives forward;
    bound.derivatives->forward_dynamics_derivatives(state, force, forward);
    const auto aba = [&](const TreeState& s) {
      Eigen::VectorXd a;
      dynamics.forward_dynamics(s, force, a);
      return a;
    };
    CHECK(relative_error(forward.acceleration, aba(state)) < roundoff_tolerance);
    CHECK(relative_error(forward.acceleration_by_force * mass, Eigen::MatrixXd::Identity(nv, nv)) < roundoff_tolerance);
    CHECK(relative_error(forward.acceleration_by_q, central_differences(tree, state, false, aba)) < fd_tolerance);
    CHECK(relative_error(forward.acceleration_by_u, central_differences(tree, state, true, aba)) < fd_tolerance);

    if (r == 0) {
      first_inverse = inverse;
      first_forward = forward;
    } else {
      CHECK(relative_error(inverse.force_by_q, first_inverse.force_by_q) < roundoff_tolerance);
      CHECK(relative_error(inverse.force_by_u, first_inverse.force_by_u) < roundoff_tolerance);
      CHECK(relative_error(forward.acceleration_by_q, first_forward.acceleration_by_q) < roundoff_tolerance);
      CHECK(relative_error(forward.acceleration_by_u, first_forward.acceleration_by_u) < roundoff_tolerance);
    }
  }
}

// pi of every body: m, m c, I about the body origin (the order of tree_derivatives.hpp).
Eigen::VectorXd inertial_parameters(const Model& model) {
  Eigen::VectorXd pi(kInertialParameters * static_cast<Eigen::Index>(model.bodies.size()));
  for (std::size_t b = 0; b < model.bodies.size(); ++b) {
    const RigidBody& body = model.bodies[b];
    const Vec3& c = body.center_of_mass;
    const Mat3 I = body.inertia + body.mass * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
    pi.segment<kInertialParameters>(kInertialParameters * static_cast<Eigen::Index>(b)) << body.mass, body.mass * c,
        I(0, 0), I(0, 1), I(0, 2), I(1, 1), I(1, 2), I(2, 2);
  }
  return pi;
}

// The same model with other random masses, centres of mass and inertias.
Model with_random_parameters(Model model, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (RigidBody& body : model.bodies) {
    body.mass = 1.5 + uniform(random);
    body.center_of_mass = Vec3::NullaryExpr([&] { return 0.3 * uniform(random); });
    const Mat3 R = se3::exp(Vec6(Vec6::NullaryExpr([&] { return 2.0 * uniform(random); }))).R;
    const Vec3 moments = Vec3::NullaryExpr([&] { return 1.25 + 0.25 * uniform(random); });
    body.inertia = R * moments.asDiagonal() * R.transpose();
  }
  return model;
}

}  // namespace

TEST_CASE("analytic derivatives of inverse and forward dynamics equal central differences in every representation",
          "[dynamics][derivatives]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& variant : tree_variants())
    for (unsigned seed = 1; seed <= 2; ++seed) {
      INFO(variant.name << ", seed " << seed);
      check_derivatives(random_tree_model(seed, variant.options), seed);
    }
}

TEST_CASE("analytic derivatives with body- and world-frame loads equal central differences", "[dynamics][derivatives]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& variant : tree_variants()) {
    INFO(variant.name);
    check_derivatives(with_loads(random_tree_model(3, variant.options), 31), 3);
  }
}

TEST_CASE("the inverse-dynamics regressor reproduces tau for other inertial parameters", "[dynamics][derivatives]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& variant : tree_variants())
    for (unsigned seed = 1; seed <= 2; ++seed) {
      INFO(variant.name << ", seed " << seed);
      const Model model = random_tree_model(seed, variant.options);
      const Model other = with_random_parameters(model, 50 + seed);
      // Body-frame loads only: a world-frame load acts at the centre of mass, which pi changes.
      const Model loaded = with_loads(model, 60 + seed, false), loaded_other = with_loads(other, 60 + seed, false);
      for (const auto& [name, representation] : plugins().loaded) {
        INFO("representation " << name);
        Bound bound = bind(*representation, model), bound_other = bind(*representation, other);
        Bound bound_loaded = bind(*representation, loaded), bound_loaded_other = bind(*representation, loaded_other);
        const int nv = bound.tree->velocity_dimension();
        const TreeState state = random_state(*bound.tree, 100 + seed);
        const Eigen::VectorXd acceleration = random_vector(nv, 200 + seed);
        Eigen::MatrixXd Y;
        bound.derivatives->inverse_dynamics_regressor(state, acceleration, Y);
        REQUIRE(Y.rows() == nv);
        REQUIRE(Y.cols() == kInertialParameters * static_cast<Eigen::Index>(model.bodies.size()));
        for (const auto* pair : {&bound, &bound_other}) {
          const Model& parameters = pair == &bound ? model : other;
          Eigen::VectorXd tau;
          pair->dynamics->inverse_dynamics(state, acceleration, tau);
          CHECK(relative_error(Y * inertial_parameters(parameters), tau) < roundoff_tolerance);
        }
        // With loads: tau - Y pi is the loads' term, the same for both parameter sets.
        Eigen::VectorXd tau_loaded, tau_loaded_other;
        bound_loaded.dynamics->inverse_dynamics(state, acceleration, tau_loaded);
        bound_loaded_other.dynamics->inverse_dynamics(state, acceleration, tau_loaded_other);
        CHECK(relative_error(tau_loaded - Y * inertial_parameters(model),
                             tau_loaded_other - Y * inertial_parameters(other)) < roundoff_tolerance);
      }
    }
}

TEST_CASE("the derivative algorithms refuse states and vectors of the wrong size", "[dynamics][derivatives][errors]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const Model model = random_tree_model(1, liembs::testing::tree_options(3, false, true));
  Bound bound = bind(*plugins().loaded.front().second, model);
  const int nv = bound.tree->velocity_dimension();
  const TreeState state = random_state(*bound.tree, 1);
  InverseDynamicsDerivatives inverse;
  ForwardDynamicsDerivatives forward;
  Eigen::MatrixXd Y;
  CHECK_THROWS_WITH(bound.derivatives->inverse_dynamics_derivatives(state, Eigen::VectorXd::Zero(nv - 1), inverse),
                    Catch::Contains("acceleration has " + std::to_string(nv - 1) + " entries; expected " + std::to_string(nv)));
  CHECK_THROWS_WITH(bound.derivatives->forward_dynamics_derivatives(state, Eigen::VectorXd::Zero(nv + 1), forward),
                    Catch::Contains("force has " + std::to_string(nv + 1) + " entries"));
  TreeState short_state = state;
  short_state.q.resize(1);
  CHECK_THROWS_WITH(bound.derivatives->inverse_dynamics_regressor(short_state, Eigen::VectorXd::Zero(nv), Y),
                    Catch::Contains("tree state has 1 coordinates"));
}
