// The recursive tree algorithms of the four representation plugins (body-fixed, spatial,
// hybrid, mixed) held to the closed-form reference (liembs::closed_form) and to each
// other, on random chains and branched trees, fixed and floating bases, every joint type,
// rotated inertias and offset centres of mass: inverse dynamics (RNEA), forward dynamics
// (ABA and CRBA + Cholesky), mass matrix, Coriolis matrix, gravity forces, body kinematics
// and body Jacobians with their rates; round trips; M SPD; M' - 2C skew.
//
// The plugins are loaded from the build tree; a missing representation plugin is a test
// failure, never a silent skip.
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/closed_form.hpp>
#include <liembs/dynamics/elemental_mass_matrix.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/model/model.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/plugin/representation.hpp>

#include <catch2/catch.hpp>

#include <random_trees.hpp>
#include <representation_plugins.hpp>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace liembs;
using liembs::testing::random_state;
using liembs::testing::random_tree_model;
using liembs::testing::random_vector;
using liembs::testing::tree_options;
using liembs::testing::tree_variants;

namespace {

using liembs::testing::representation_names;
constexpr unsigned seeds_per_variant = 3;

// Round-off agreement between the recursions and the closed form, relative to the size
// of the compared quantity (or 1).
constexpr double roundoff_tolerance = 1e-12;
constexpr double fd_step = 1e-5;
constexpr double fd_tolerance = 1e-7;

template <class A, class B>
double relative_error(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
  if (a.size() == 0 && b.size() == 0) return 0.0;
  if (a.rows() != b.rows() || a.cols() != b.cols()) return 1e300;
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

double symmetric_part(const Eigen::MatrixXd& S) {
  if (S.size() == 0) return 0.0;
  return (S + S.transpose()).cwiseAbs().maxCoeff() / std::max(1.0, S.cwiseAbs().maxCoeff());
}

// Condition number of the (SPD) mass matrix, to scale the forward-dynamics tolerance:
// a solve loses about log10(cond) digits.
double condition_number(const Eigen::MatrixXd& M) {
  if (M.size() == 0) return 1.0;
  const Eigen::VectorXd eigenvalues = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M).eigenvalues();
  return eigenvalues.maxCoeff() / eigenvalues.minCoeff();
}

// The representation plugins, loaded from the build tree's plugin folder.
struct Representations : liembs::testing::RepresentationPlugins {
  Representations() : RepresentationPlugins(LIEMBS_TEST_PLUGIN_DIR) {}
};

// One model bound to every representation.
struct BoundTree {
  std::shared_ptr<const KinematicTree> tree;
  std::vector<std::pair<std::string, std::unique_ptr<TreeDynamics>>> dynamics;
};

BoundTree bind_all(const Representations& representations, const Model& model) {
  BoundTree bound;
  bound.tree = std::make_shared<const KinematicTree>(compile_tree(model));
  for (const auto& [name, representation] : representations.loaded) {
    std::unique_ptr<TreeDynamics> dynamics = representation->bind_tree(bound.tree);
    REQUIRE(dynamics != nullptr);
    CHECK(dynamics->representation() == name);
    CHECK(&dynamics->tree() == bound.tree.get());
    bound.dynamics.emplace_back(name, std::move(dynamics));
  }
  return bound;
}

// Runs check(seed, model, bound) on seeds_per_variant random models of every variant, each
// bound to every representation.
template <class Check>
void for_each_random_tree(const Representations& representations, Check&& check) {
  for (const auto& variant : tree_variants())
    for (unsigned seed = 1; seed <= seeds_per_variant; ++seed) {
      INFO(variant.name << ", seed " << seed);
      const Model model = random_tree_model(seed, variant.options);
      BoundTree bound = bind_all(representations, model);
      check(seed, model, bound);
    }
}

// The representations agree with each other (T1 of 000 section 10): values[r] computed by
// bound.dynamics[r].
void check_representations_agree(const BoundTree& bound, const std::vector<Eigen::VectorXd>& values, double tolerance) {
  for (std::size_t r = 1; r < values.size(); ++r) {
    INFO(bound.dynamics[r].first << " vs " << bound.dynamics[0].first);
    CHECK(relative_error(values[r], values[0]) < tolerance);
  }
}

// Fails the test case (not a skip) when a representation plugin is missing.
#define REQUIRE_ALL_REPRESENTATIONS(representations)                                     \
  do {                                                                                   \
    if (!(representations).problems.empty()) FAIL((representations).problems);           \
    REQUIRE((representations).loaded.size() == representation_names.size());            \
  } while (false)

TreeState moved(const KinematicTree& tree, const TreeState& state, double h) {
  TreeState out = state;
  out.q += h * state.qd;
  if (tree.floating_base) out.base = se3::compose(state.base, se3::exp(h * state.base_twist));
  return out;
}

}  // namespace

TEST_CASE("every representation plugin is available", "[dynamics]") {
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
}

TEST_CASE("recursive inverse dynamics, mass, Coriolis and gravity terms equal the closed form in every representation",
          "[dynamics]") {
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  for_each_random_tree(representations, [&](unsigned seed, const Model&, BoundTree& bound) {
    const KinematicTree& tree = *bound.tree;
    const int nv = tree.velocity_dimension();
    const TreeState state = random_state(tree, 1000 + seed);
    const Eigen::VectorXd acceleration = random_vector(nv, 2000 + seed);

    const Eigen::VectorXd force_reference = closed_form::inverse_dynamics(tree, state, acceleration);
    const Eigen::MatrixXd mass_reference = closed_form::mass_matrix(tree, state);
    const Eigen::MatrixXd coriolis_reference = closed_form::coriolis_matrix(tree, state);
    const Eigen::VectorXd gravity_reference = closed_form::gravity_forces(tree, state);

    std::vector<Eigen::VectorXd> forces;
    for (auto& [name, dynamics] : bound.dynamics) {
      INFO("representation " << name);
      Eigen::VectorXd force, gravity;
      Eigen::MatrixXd mass, coriolis;
      dynamics->inverse_dynamics(state, acceleration, force);
      dynamics->mass_matrix(state, mass);
      dynamics->coriolis_matrix(state, coriolis);
      dynamics->gravity_forces(state, gravity);
      CHECK(relative_error(force, force_reference) < roundoff_tolerance);
      CHECK(relative_error(mass, mass_reference) < roundoff_tolerance);
      CHECK(relative_error(coriolis, coriolis_reference) < roundoff_tolerance);
      CHECK(relative_error(gravity, gravity_reference) < roundoff_tolerance);
      forces.push_back(force);
    }
    check_representations_agree(bound, forces, roundoff_tolerance);
  });
}

TEST_CASE("CRBA writes every entry of M, whatever the output held, and M does not depend on the base pose",
          "[dynamics]") {
  // CRBA zeroes only the entries of unrelated degrees of freedom and places a floating base
  // at the identity (M is invariant when the whole system moves): an output filled with
  // NaN or with another state's M gives the closed form at the true base pose.
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  for_each_random_tree(representations, [&](unsigned seed, const Model& /*model*/, BoundTree& bound) {
    const KinematicTree& tree = *bound.tree;
    const int nv = tree.velocity_dimension();
    const TreeState state = random_state(tree, 1000 + seed), other = random_state(tree, 7000 + seed);
    const Eigen::MatrixXd reference = closed_form::mass_matrix(tree, state);
    for (auto& [name, dynamics] : bound.dynamics) {
      INFO("representation " << name);
      Eigen::MatrixXd mass = Eigen::MatrixXd::Constant(nv, nv, std::numeric_limits<double>::quiet_NaN());
      dynamics->mass_matrix(state, mass);
      CHECK(relative_error(mass, reference) < roundoff_tolerance);
      dynamics->mass_matrix(other, mass);
      dynamics->mass_matrix(state, mass);
      CHECK(relative_error(mass, reference) < roundoff_tolerance);
      if (tree.floating_base) {  // another base pose, same joints: the same M
        TreeState moved_base = other;
        moved_base.q = state.q;
        moved_base.qd = state.qd;
        CHECK(relative_error(closed_form::mass_matrix(tree, moved_base), reference) < roundoff_tolerance);
      }
    }
  });
}

TEST_CASE("CRBA on a deep chain (body-fixed's world-frame walk, not the elemental frames) equals the closed form",
          "[dynamics]") {
  // The random trees above are shallow, so body-fixed runs its CRBA on elemental frames
  // there; a chain of 30 (mean walk 14.5 > ElementalMassMatrix::max_mean_walk) takes the
  // world-frame walk in every representation.
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  for (const bool floating : {false, true}) {
    INFO((floating ? "floating" : "fixed") << " chain of 30");
    const Model model = random_tree_model(5, tree_options(30, false, floating, {JointType::revolute, JointType::prismatic}));
    BoundTree bound = bind_all(representations, model);
    REQUIRE_FALSE(ElementalMassMatrix(align_node_frames(*bound.tree)).preferred());
    const TreeState state = random_state(*bound.tree, 31);
    const Eigen::MatrixXd reference = closed_form::mass_matrix(*bound.tree, state);
    for (auto& [name, dynamics] : bound.dynamics) {
      INFO("representation " << name);
      Eigen::MatrixXd mass;
      dynamics->mass_matrix(state, mass);
      CHECK(relative_error(mass, reference) < roundoff_tolerance);
    }
  }
}

TEST_CASE("recursive forward dynamics (ABA and CRBA + Cholesky) equal the closed form and invert the RNEA",
          "[dynamics]") {
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  for_each_random_tree(representations, [&](unsigned seed, const Model&, BoundTree& bound) {
    const KinematicTree& tree = *bound.tree;
    const int nv = tree.velocity_dimension();
    const TreeState state = random_state(tree, 3000 + seed);
    const Eigen::VectorXd force = random_vector(nv, 4000 + seed, 10.0);
    const Eigen::VectorXd acceleration_reference = closed_form::forward_dynamics(tree, state, force);
    // A solve with M loses log10(cond M) digits.
    const double tolerance = roundoff_tolerance * std::max(1.0, 1e-2 * condition_number(closed_form::mass_matrix(tree, state)));
    const Eigen::VectorXd input_acceleration = random_vector(nv, 5000 + seed);

    std::vector<Eigen::VectorXd> accelerations;
    for (auto& [name, dynamics] : bound.dynamics) {
      INFO("representation " << name << ", tolerance " << tolerance);
      Eigen::VectorXd aba, cholesky, force_of_input, round_trip;
      dynamics->forward_dynamics(state, force, aba);
      dynamics->forward_dynamics_cholesky(state, force, cholesky);
      CHECK(relative_error(aba, acceleration_reference) < tolerance);
      CHECK(relative_error(cholesky, acceleration_reference) < tolerance);
      CHECK(relative_error(aba, cholesky) < tolerance);
      // Forward dynamics of inverse dynamics returns the input acceleration (T11).
      dynamics->inverse_dynamics(state, input_acceleration, force_of_input);
      dynamics->forward_dynamics(state, force_of_input, round_trip);
      CHECK(relative_error(round_trip, input_acceleration) < tolerance);
      dynamics->forward_dynamics_cholesky(state, force_of_input, round_trip);
      CHECK(relative_error(round_trip, input_acceleration) < tolerance);
      accelerations.push_back(aba);
    }
    check_representations_agree(bound, accelerations, tolerance);
  });
}

TEST_CASE("recursive body kinematics and body Jacobians equal the closed form in every representation",
          "[dynamics]") {
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  for_each_random_tree(representations, [&](unsigned seed, const Model& model, BoundTree& bound) {
    const KinematicTree& tree = *bound.tree;
    const int nv = tree.velocity_dimension();
    const TreeState state = random_state(tree, 6000 + seed);
    const Eigen::VectorXd acceleration = random_vector(nv, 7000 + seed);
    const BodyKinematics reference = closed_form::body_kinematics(tree, state, acceleration);
    const std::size_t bodies = model.bodies.size();

    for (auto& [name, dynamics] : bound.dynamics) {
      INFO("representation " << name);
      BodyKinematics kinematics;
      dynamics->body_kinematics(state, acceleration, kinematics);
      std::vector<Matrix6X> jacobians, rates;
      dynamics->body_jacobians(state, jacobians, &rates);
      REQUIRE(kinematics.poses.size() == bodies);
      REQUIRE(kinematics.twists.size() == bodies);
      REQUIRE(kinematics.accelerations.size() == bodies);
      REQUIRE(jacobians.size() == bodies);
      REQUIRE(rates.size() == bodies);
      std::vector<Matrix6X> jacobians_only;
      dynamics->body_jacobians(state, jacobians_only, nullptr);
      REQUIRE(jacobians_only.size() == bodies);
      for (std::size_t b = 0; b < bodies; ++b) {
        INFO("body " << model.bodies[b].name);
        CHECK(relative_error(kinematics.poses[b].matrix(), reference.poses[b].matrix()) < roundoff_tolerance);
        CHECK(relative_error(kinematics.twists[b], reference.twists[b]) < roundoff_tolerance);
        CHECK(relative_error(kinematics.accelerations[b], reference.accelerations[b]) < roundoff_tolerance);
        CHECK(relative_error(jacobians[b], closed_form::body_jacobian(tree, state, b)) < roundoff_tolerance);
        CHECK(relative_error(rates[b], closed_form::body_jacobian_rate(tree, state, b)) < roundoff_tolerance);
        CHECK(relative_error(jacobians_only[b], jacobians[b]) < roundoff_tolerance);
      }
    }
  });
}

TEST_CASE("recursive mass matrix is SPD and M' - 2C is skew-symmetric in every representation", "[dynamics]") {
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  for_each_random_tree(representations, [&](unsigned seed, const Model&, BoundTree& bound) {
    const KinematicTree& tree = *bound.tree;
    const TreeState state = random_state(tree, 8000 + seed);
    if (tree.velocity_dimension() == 0) return;
    for (auto& [name, dynamics] : bound.dynamics) {
      INFO("representation " << name);
      Eigen::MatrixXd M, M_plus, M_minus, C;
      dynamics->mass_matrix(state, M);
      CHECK(relative_error(M, Eigen::MatrixXd(M.transpose())) < roundoff_tolerance);
      CHECK(Eigen::LLT<Eigen::MatrixXd>(M).info() == Eigen::Success);
      dynamics->mass_matrix(moved(tree, state, fd_step), M_plus);
      dynamics->mass_matrix(moved(tree, state, -fd_step), M_minus);
      dynamics->coriolis_matrix(state, C);
      const Eigen::MatrixXd S = (M_plus - M_minus) / (2.0 * fd_step) - 2.0 * C;
      CHECK(symmetric_part(S) < fd_tolerance);
    }
  });
}

TEST_CASE("constant loads enter the recursive dynamics as -J_b^T W_b in every representation", "[dynamics]") {
  // 000 rule R2: an external wrench W acting on body b adds -J_b^T W_b (W_b the body-frame
  // wrench: moment about the body origin, force) to the generalized force. A world-frame
  // load is a force at the centre of mass and a pure moment, both in world coordinates.
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  for (const auto& variant : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_variant; ++seed) {
      INFO(variant.name << ", seed " << seed);
      const Model unloaded = random_tree_model(seed, variant.options);
      const Model model = liembs::testing::with_loads(unloaded, 9000 + seed);  // a body- and a world-frame load on every body
      BoundTree bound = bind_all(representations, model);
      BoundTree bound_unloaded = bind_all(representations, unloaded);
      const KinematicTree& tree = *bound.tree;
      const int nv = tree.velocity_dimension();
      const TreeState state = random_state(tree, 9500 + seed);
      const Eigen::VectorXd acceleration = random_vector(nv, 9600 + seed);

      // Generalized load force sum_b J_b^T W_b from the closed-form body Jacobians.
      const std::vector<Pose> poses = closed_form::body_poses(tree, state);
      Eigen::VectorXd load_force = Eigen::VectorXd::Zero(nv);
      for (const AppliedWrench& load : model.loads) {
        const Pose& C = poses[load.body];
        Vec6 body_wrench;
        if (load.frame == AppliedWrench::Frame::body) {
          body_wrench << load.moment, load.force;
        } else {
          const Vec3 force = C.R.transpose() * load.force;
          body_wrench << C.R.transpose() * load.moment + model.bodies[load.body].center_of_mass.cross(force), force;
        }
        load_force += closed_form::body_jacobian(tree, state, load.body).transpose() * body_wrench;
      }
      const Eigen::VectorXd expected = closed_form::inverse_dynamics(tree, state, acceleration) - load_force;

      for (std::size_t r = 0; r < bound.dynamics.size(); ++r) {
        INFO("representation " << bound.dynamics[r].first);
        Eigen::VectorXd force, force_unloaded, round_trip;
        bound.dynamics[r].second->inverse_dynamics(state, acceleration, force);
        bound_unloaded.dynamics[r].second->inverse_dynamics(state, acceleration, force_unloaded);
        CHECK(relative_error(force, expected) < roundoff_tolerance);
        CHECK(relative_error(Eigen::VectorXd(force_unloaded - force), load_force) < roundoff_tolerance);
        bound.dynamics[r].second->forward_dynamics(state, force, round_trip);
        CHECK(relative_error(round_trip, acceleration) <
              roundoff_tolerance * std::max(1.0, 1e-2 * condition_number(closed_form::mass_matrix(tree, state))));
      }
    }
  }
}

TEST_CASE("recursive dynamics of one free body in every representation", "[dynamics]") {
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  const Model model = random_tree_model(11, tree_options(1, false, true));
  BoundTree bound = bind_all(representations, model);
  const KinematicTree& tree = *bound.tree;
  REQUIRE(tree.floating_base);
  REQUIRE(tree.dof() == 0);
  const Mat6 M = model.bodies[0].spatial_inertia();
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const TreeState state = random_state(tree, seed);
    const Vec6 V = state.base_twist;
    const Vec6 acceleration = random_vector(6, 50 + seed);
    Vec6 gravity;
    gravity << Vec3::Zero(), state.base.R.transpose() * model.gravity;
    const Vec6 expected = M * acceleration - se3::ad(V).transpose() * M * V - M * gravity;
    for (auto& [name, dynamics] : bound.dynamics) {
      INFO("representation " << name << ", seed " << seed);
      Eigen::VectorXd force, round_trip;
      dynamics->inverse_dynamics(state, acceleration, force);
      CHECK(relative_error(force, expected) < roundoff_tolerance);
      dynamics->forward_dynamics(state, expected, round_trip);
      CHECK(relative_error(round_trip, acceleration) < roundoff_tolerance);
    }
  }
}

TEST_CASE("ABA stops with an error naming the degree of freedom whose articulated inertia vanishes", "[dynamics][errors]") {
  // Two revolute joints on one axis: the outer body's rotation about the axis is taken out
  // of the inner joint's articulated inertia, which is left with the inner body's own,
  // 1e-20 kg m^2 against a trace of order 1: singular at round-off (validation accepts the
  // tiny positive inertia).
  Representations representations;
  REQUIRE_ALL_REPRESENTATIONS(representations);
  auto document = ConfigDocument::from_string(R"(
[model]
gravity = [0.0, 0.0, -9.81]
[[model.bodies]]
name = "hub"
mass = 1e-20
inertia_diagonal = [1e-20, 1e-20, 1e-20]
[[model.bodies]]
name = "wheel"
mass = 1.0
inertia_diagonal = [0.5, 0.5, 1.0]
[[model.joints]]
name = "inner"
type = "revolute"
parent = "world"
child = "hub"
axis = [0.0, 0.0, 1.0]
[[model.joints]]
name = "outer"
type = "revolute"
parent = "hub"
child = "wheel"
axis = [0.0, 0.0, 1.0]
)",
                                               "coaxial.toml");
  const Model model = load_model(document->root().table("model"));
  BoundTree bound = bind_all(representations, model);
  TreeState state;
  state.q = Eigen::Vector2d(0.3, -0.2);
  state.qd = Eigen::Vector2d(1.0, 2.0);
  const Eigen::VectorXd force = Eigen::Vector2d(0.1, 0.0);
  for (const auto& [name, dynamics] : bound.dynamics) {
    INFO(name);
    Eigen::VectorXd acceleration;
    CHECK_THROWS_WITH(dynamics->forward_dynamics(state, force, acceleration),
                      Catch::Contains("singular configuration") && Catch::Contains("'inner'"));
  }
}
