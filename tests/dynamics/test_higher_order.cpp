// Higher-order time derivatives of tree dynamics (paper 003: H-GRNE, H-GABI, H-GHYB;
// higher_order_algorithms.hpp) in every representation plugin, on random chains and
// branched trees with every joint type, fixed and floating bases, with and without body-
// and world-frame loads:
//   order 0 equals RNEA and ABA;
//   time consistency (003 note T1): along a smooth trajectory whose inputs' derivatives come
//     exactly from truncated Taylor series, the order-r forces equal central differences in
//     time of the order r-1 forces;
//   H-GRNE equals an independent jet Newton-Euler reference per joint and order up to 8;
//   ID -> FD and FD -> ID round trips up to r = 8 (T2, T3), to round-off: backward error,
//     and forward error within what round-off of the inputs causes (docs/higher-order.md,
//     "Accuracy");
//   hybrid dynamics against ID for several splits and both base modes (T4);
//   the base's articulated inertia equals the Schur complement of M (T5);
//   free fall (T10); the representations agree (T12); size errors.
#include <liembs/dynamics/closed_form.hpp>
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/higher_order_loads.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/model/model.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Cholesky>

#include <jet_inverse_dynamics.hpp>
#include <lagrangian_closed_form.hpp>
#include <random_trees.hpp>
#include <taylor_jets.hpp>
#include <representation_plugins.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

using namespace liembs;
using liembs::testing::random_state;
using liembs::testing::random_tree_model;
using liembs::testing::random_vector;
using liembs::testing::with_loads;
using liembs::testing::lagrangian_closed_form;
using liembs::testing::LagrangianClosedForm;
using liembs::testing::first_order_closed_form;
using liembs::testing::RepresentationPlugins;
using liembs::testing::tree_variants;
using namespace liembs::testing::jets;

namespace {

constexpr double roundoff_tolerance = 1e-9;

using liembs::testing::relative_error;
const RepresentationPlugins& plugins() { return liembs::testing::build_tree_representations(); }

struct Bound {
  std::shared_ptr<const KinematicTree> tree;
  std::unique_ptr<TreeDynamics> dynamics;
  std::unique_ptr<HigherOrderDynamics> higher;
};

Bound bind(const Representation& representation, const Model& model, int max_order = 3) {
  Bound bound;
  bound.tree = std::make_shared<const KinematicTree>(compile_tree(model));
  bound.dynamics = representation.bind_tree(bound.tree);
  bound.higher = representation.bind_higher_order(bound.tree, max_order);
  return bound;
}


std::vector<std::pair<std::string, Model>> test_models() {
  std::vector<std::pair<std::string, Model>> models;
  unsigned seed = 1;
  for (const auto& variant : tree_variants()) {
    models.emplace_back(variant.name, random_tree_model(seed, variant.options));
    if (seed % 3 == 1) models.emplace_back(variant.name + " with loads", with_loads(random_tree_model(seed, variant.options), seed));
    ++seed;
  }
  return models;
}

// The inputs of order r at time t along a smooth trajectory: base pose R = Rz Ry Rx of
// waves, position waves; joints q_i waves. rates column k = u^(k+1).
struct TrajectoryPoint {
  TreeState state;
  Eigen::MatrixXd rates;
};
TrajectoryPoint trajectory(const KinematicTree& tree, double t, int r) {
  TrajectoryPoint point;
  const int n = tree.dof(), offset = tree.floating_base ? 6 : 0;
  point.rates.resize(tree.velocity_dimension(), r + 1);
  point.state.q.resize(n);
  point.state.qd.resize(n);
  for (int i = 0; i < n; ++i) {
    const Jet q = wave(t, 0.8, 1.3 + 0.37 * i, 0.5 * i, 0.1 * i);
    point.state.q(i) = q.derivative(0);
    point.state.qd(i) = q.derivative(1);
    for (int k = 0; k <= r; ++k) point.rates(offset + i, k) = q.derivative(k + 2);
  }
  if (tree.floating_base) {
    const JetMatrix R = multiply(multiply(rotation(2, wave(t, 0.7, 1.1, 0.2, 0.3)), rotation(1, wave(t, 0.5, 0.7, 1.0, -0.2))),
                                 rotation(0, wave(t, 0.6, 0.9, 0.3, 0.1)));
    const std::array<Jet, 3> p{wave(t, 1.0, 0.5, 0.0, 0.2), wave(t, 1.0, 0.5, 1.5708, -0.1), wave(t, 0.2, 1.3, 0.0, 0.5)};
    const std::array<Jet, 6> twist = body_twist(R, p);
    for (int i = 0; i < 3; ++i) {
      point.state.base.r(i) = p[i].derivative(0);
      for (int j = 0; j < 3; ++j) point.state.base.R(i, j) = R[i][j].derivative(0);
    }
    for (int c = 0; c < 6; ++c) {
      point.state.base_twist(c) = twist[c].derivative(0);
      for (int k = 0; k <= r; ++k) point.rates(c, k) = twist[c].derivative(k + 1);
    }
  }
  return point;
}

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, unsigned seed, double scale = 1.0) {
  return random_vector(rows * cols, seed, scale).reshaped(rows, cols);
}

// The scale of the terms that meet at order k of the equations of motion: the largest
// |M| |u^(k+1)| (M the mass matrix) plus the largest |tau^(k)|. Round-off in the order-k sums
// is relative to this, not to tau^(k) itself, which may be a small difference of them.
Eigen::VectorXd term_scales(const Eigen::MatrixXd& mass, const Eigen::MatrixXd& rates, const Eigen::MatrixXd& forces) {
  Eigen::VectorXd scales = Eigen::VectorXd::Zero(rates.cols());
  if (rates.rows() == 0) return scales;  // nothing moves
  for (Eigen::Index k = 0; k < rates.cols(); ++k)
    scales(k) = mass.cwiseAbs().maxCoeff() * rates.col(k).cwiseAbs().maxCoeff() + forces.col(k).cwiseAbs().maxCoeff();
  return scales;
}

// Backward error of a solution (rates, forces) of the order-0..r equations of motion: the
// largest |ID(rates)^(k) - forces^(k)| relative to the term scale of order k, over k.
double backward_error(HigherOrderDynamics& higher, const Eigen::MatrixXd& mass, const TreeState& state,
                      const Eigen::MatrixXd& rates, const Eigen::MatrixXd& forces) {
  if (rates.rows() == 0) return 0.0;
  Eigen::MatrixXd recomputed;
  higher.inverse_dynamics(state, rates, recomputed);
  const Eigen::VectorXd scales = term_scales(mass, rates, forces);
  double worst = 0.0;
  for (Eigen::Index k = 0; k < rates.cols(); ++k)
    worst = std::max(worst, (recomputed.col(k) - forces.col(k)).cwiseAbs().maxCoeff() / scales(k));
  return worst;
}

constexpr double unit_roundoff = 1.1e-16;

// The error that round-off of the inputs alone causes in the outputs of `solve`, per output
// column: the response to a random perturbation of every input column k by eps times its
// term scale, rescaled from eps to the unit round-off (the map is smooth, eps small enough
// to be linear). Higher orders solve with the articulated inertias again and again and feed
// every lower order's error forward, so this grows geometrically with the order, at a rate
// set by the tree and the state (docs/higher-order.md, "Accuracy"); the round trips must
// lose no more than this.
template <class Solve>
Eigen::VectorXd roundoff_response(const Solve& solve, const Eigen::MatrixXd& input, const Eigen::VectorXd& scales,
                                  const Eigen::MatrixXd& output, unsigned seed) {
  const double eps = 1e-9;
  Eigen::MatrixXd perturbed = random_matrix(input.rows(), input.cols(), seed);
  for (Eigen::Index k = 0; k < input.cols(); ++k) perturbed.col(k) = input.col(k) + eps * scales(k) * perturbed.col(k);
  const Eigen::MatrixXd response = solve(perturbed);
  Eigen::VectorXd predicted = Eigen::VectorXd::Zero(output.cols());
  if (output.rows() == 0) return predicted;
  for (Eigen::Index k = 0; k < output.cols(); ++k)
    predicted(k) = (response.col(k) - output.col(k)).cwiseAbs().maxCoeff() * (unit_roundoff / eps);
  return predicted;
}

// Forward errors within `factor` times the round-off response, column by column (plus a
// floor of a few units of round-off of the column).
void check_forward_error(const Eigen::MatrixXd& computed, const Eigen::MatrixXd& exact, const Eigen::VectorXd& predicted,
                         double factor) {
  REQUIRE(computed.rows() == exact.rows());
  REQUIRE(computed.cols() == exact.cols());
  if (exact.rows() == 0) return;
  for (Eigen::Index k = 0; k < exact.cols(); ++k) {
    INFO("order " << k << ": error " << (computed.col(k) - exact.col(k)).cwiseAbs().maxCoeff() << ", round-off response "
                  << predicted(k));
    CHECK((computed.col(k) - exact.col(k)).cwiseAbs().maxCoeff() <=
          factor * predicted(k) + 1e-14 * std::max(1.0, exact.col(k).cwiseAbs().maxCoeff()));
  }
}

}  // namespace

TEST_CASE("order 0 of H-GRNE and H-GABI equals RNEA and ABA in every representation", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    Eigen::MatrixXd first_forces;
    for (std::size_t p = 0; p < plugins().loaded.size(); ++p) {
      const auto& [representation_name, representation] = plugins().loaded[p];
      INFO("representation " << representation_name);
      Bound bound = bind(*representation, model);
      REQUIRE(bound.higher->representation() == representation_name);
      const KinematicTree& tree = *bound.tree;
      const int nv = tree.velocity_dimension();
      const TreeState state = random_state(tree, 11);
      const Eigen::VectorXd acceleration = random_vector(nv, 12), force = random_vector(nv, 13, 5.0);
      Eigen::VectorXd tau, a;
      bound.dynamics->inverse_dynamics(state, acceleration, tau);
      bound.dynamics->forward_dynamics(state, force, a);
      Eigen::MatrixXd forces, rates;
      bound.higher->inverse_dynamics(state, acceleration, forces);
      CHECK(relative_error(forces, tau) < roundoff_tolerance);
      bound.higher->forward_dynamics(state, force, rates);
      CHECK(relative_error(rates, a) < roundoff_tolerance);
      if (p == 0) first_forces = forces;
      else CHECK(relative_error(forces, first_forces) < roundoff_tolerance);
    }
  }
}

TEST_CASE("H-GRNE of order r equals the time derivative of order r-1 along a smooth trajectory (T1)", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 5;
  const double h = 1e-4, t0 = 0.37;
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    for (const auto& [representation_name, representation] : plugins().loaded) {
      INFO("representation " << representation_name);
      Bound bound = bind(*representation, model, r);
      const KinematicTree& tree = *bound.tree;
      const TrajectoryPoint at = trajectory(tree, t0, r), after = trajectory(tree, t0 + h, r), before = trajectory(tree, t0 - h, r);
      // The trajectory's own consistency (the jets): q' and the base twist differenced.
      CHECK((after.state.q - before.state.q).isApprox(2.0 * h * at.state.qd, 1e-7));
      Eigen::MatrixXd forces, forces_after, forces_before;
      bound.higher->inverse_dynamics(at.state, at.rates, forces);
      bound.higher->inverse_dynamics(after.state, after.rates, forces_after);
      bound.higher->inverse_dynamics(before.state, before.rates, forces_before);
      for (int k = 1; k <= r; ++k) {
        INFO("order " << k);
        const Eigen::VectorXd difference = (forces_after.col(k - 1) - forces_before.col(k - 1)) / (2.0 * h);
        CHECK(relative_error(forces.col(k), difference) < 1e-5);
      }
      // And the forward dynamics of these forces returns the trajectory's derivatives.
      Eigen::MatrixXd rates;
      bound.higher->forward_dynamics(at.state, forces, rates);
      CHECK(relative_error(rates, at.rates) < 1e-8);
    }
  }
}

TEST_CASE("H-GRNE equals the jet Newton-Euler reference per joint and order up to 8 in every representation", "[dynamics][higher-order]") {
  // The independent oracle (jet_inverse_dynamics.hpp): plain Newton-Euler in truncated Taylor
  // arithmetic along the polynomial trajectory whose derivatives at t0 are the random inputs.
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 8;
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    for (const auto& [representation_name, representation] : plugins().loaded) {
      INFO("representation " << representation_name);
      Bound bound = bind(*representation, model, r);
      const KinematicTree& tree = *bound.tree;
      for (unsigned seed = 0; seed < 2; ++seed) {
        const TreeState state = random_state(tree, 100 + seed);
        const Eigen::MatrixXd rates = random_matrix(tree.velocity_dimension(), r + 1, 110 + seed);
        Eigen::MatrixXd forces;
        bound.higher->inverse_dynamics(state, rates, forces);
        const Eigen::MatrixXd reference = jet_inverse_dynamics(model, tree, state, rates);
        for (int k = 0; k <= r; ++k) {
          INFO("order " << k);  // round-off grows with the length of the order's Leibniz sums
          CHECK(relative_error(forces.col(k), reference.col(k)) < 1e-13 * (k + 1) * (k + 1));
        }
      }
    }
  }
}

// Round trips (T2, T3) on random states and random inputs of every order up to 8. The
// forward dynamics of order r is ill-conditioned in r: it solves with the articulated
// inertias at every order and feeds each order's error into the next, so round-off in the
// inputs alone moves the high orders by a factor that grows geometrically with r at a rate
// set by the tree and the state (up to 1e19 relative at r = 8 on some random floating
// chains). The checks say exactly what round-off permits (docs/higher-order.md, "Accuracy"):
// FD -> ID returns the forces to round-off of the order's terms (backward error; a wrong term
// of any order would leave a residual of the size of the terms), and ID -> FD returns the
// rates within a small factor of what a round-off-sized perturbation of the forces causes.
TEST_CASE("ID -> FD and FD -> ID round trips at every order up to 8 (T2, T3)", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 8;
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    for (const auto& [representation_name, representation] : plugins().loaded) {
      INFO("representation " << representation_name);
      Bound bound = bind(*representation, model, 2);  // grown on demand
      const KinematicTree& tree = *bound.tree;
      const int nv = tree.velocity_dimension();
      for (unsigned seed = 0; seed < 3; ++seed) {
        INFO("state " << seed);
        const TreeState state = random_state(tree, 300 + seed);
        Eigen::MatrixXd mass;
        bound.dynamics->mass_matrix(state, mass);
        const auto forward = [&](const Eigen::MatrixXd& forces) {
          Eigen::MatrixXd rates;
          bound.higher->forward_dynamics(state, forces, rates);
          return rates;
        };
        // FD -> ID (T3): random forces of every order.
        const Eigen::MatrixXd given_forces = random_matrix(nv, r + 1, 600 + seed, 3.0);
        const Eigen::MatrixXd solved_rates = forward(given_forces);
        CHECK(solved_rates.allFinite());
        CHECK(backward_error(*bound.higher, mass, state, solved_rates, given_forces) < 1e-13);
        // ID -> FD (T2): random rates of every order.
        const Eigen::MatrixXd rates = random_matrix(nv, r + 1, 500 + seed);
        Eigen::MatrixXd forces;
        bound.higher->inverse_dynamics(state, rates, forces);
        const Eigen::MatrixXd rates_back = forward(forces);
        const Eigen::VectorXd predicted = roundoff_response(forward, forces, term_scales(mass, rates, forces), rates_back, 700 + seed);
        check_forward_error(rates_back, rates, predicted, 1e3);
        // Every order separately: the last column of a call of order k is order k's.
        for (int k = 0; k < r; ++k) {
          const Eigen::MatrixXd lower = forward(forces.leftCols(k + 1));
          CHECK((lower.array() == rates_back.leftCols(k + 1).array()).all());  // orders do not depend on higher ones
        }
      }
    }
  }
}

TEST_CASE("hybrid dynamics agrees with ID and FD for several splits and both base modes (T4)", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 4;
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    for (const auto& [representation_name, representation] : plugins().loaded) {
      INFO("representation " << representation_name);
      Bound bound = bind(*representation, model, r);
      const KinematicTree& tree = *bound.tree;
      const int n = tree.dof(), nv = tree.velocity_dimension(), offset = nv - n;
      const TreeState state = random_state(tree, 70);
      Eigen::MatrixXd mass;
      bound.dynamics->mass_matrix(state, mass);
      const Eigen::MatrixXd rates = random_matrix(nv, r + 1, 71);
      Eigen::MatrixXd forces;
      bound.higher->inverse_dynamics(state, rates, forces);
      const Eigen::VectorXd scales = term_scales(mass, rates, forces);
      std::mt19937 generator(72);
      for (int split_index = 0; split_index < 4; ++split_index) {
        HybridSplit split;
        split.base_motion = split_index % 2 == 1;
        for (int i = 0; i < n; ++i)
          split.joint_motion.push_back(split_index == 0 ? false : split_index == 3 ? true : (generator() % 2) == 1);
        INFO("split " << split_index);
        Eigen::MatrixXd given(nv, r + 1);
        for (int c = 0; c < nv; ++c) {
          const bool motion = c < offset ? split.base_motion : split.joint_motion[static_cast<std::size_t>(c - offset)];
          if (motion) given.row(c) = rates.row(c);
          else given.row(c) = forces.row(c);
        }
        Eigen::MatrixXd hybrid_rates, hybrid_forces;
        bound.higher->hybrid_dynamics(state, split, given, hybrid_rates, hybrid_forces);
        // What was given comes back unchanged; the rest solves the equations of motion.
        for (int c = 0; c < nv; ++c) {
          const bool motion = c < offset ? split.base_motion : split.joint_motion[static_cast<std::size_t>(c - offset)];
          const Eigen::MatrixXd& returned = motion ? hybrid_rates : hybrid_forces;
          CHECK((returned.row(c).array() == given.row(c).array()).all());
        }
        CHECK(backward_error(*bound.higher, mass, state, hybrid_rates, hybrid_forces) < 1e-13);
        // And it is the (rates, forces) of ID, up to what round-off of the inputs permits.
        const auto solve = [&](const Eigen::MatrixXd& input) {
          Eigen::MatrixXd out_rates, out_forces;
          bound.higher->hybrid_dynamics(state, split, input, out_rates, out_forces);
          Eigen::MatrixXd both(nv, 2 * (r + 1));
          both << out_rates, out_forces;
          return both;
        };
        Eigen::MatrixXd both(nv, 2 * (r + 1)), exact(nv, 2 * (r + 1));
        both << hybrid_rates, hybrid_forces;
        exact << rates, forces;
        const Eigen::VectorXd predicted = roundoff_response(solve, given, scales, both, 73);
        check_forward_error(both, exact, predicted, 1e3);
      }
    }
  }
}

TEST_CASE("the base's articulated inertia is the Schur complement of the mass matrix (T5)", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& variant : tree_variants()) {
    if (!variant.options.floating_base) continue;
    INFO("model " << variant.name);
    Bound bound = bind(*plugins().loaded[0].second, random_tree_model(5, variant.options));
    const KinematicTree& tree = *bound.tree;
    const int n = tree.dof();
    const TreeState state = random_state(tree, 80);
    Eigen::MatrixXd mass, rates;
    bound.dynamics->mass_matrix(state, mass);
    const Eigen::MatrixXd schur =
        mass.topLeftCorner(6, 6) - mass.topRightCorner(6, n) * mass.bottomRightCorner(n, n).ldlt().solve(mass.bottomLeftCorner(n, 6));
    bound.higher->forward_dynamics(state, random_matrix(tree.velocity_dimension(), 1, 81), rates);
    const Mat6 at_order_0 = bound.higher->base_articulated_inertia();
    CHECK(relative_error(at_order_0, schur) < roundoff_tolerance);
    bound.higher->forward_dynamics(state, random_matrix(tree.velocity_dimension(), 6, 82), rates);
    CHECK((bound.higher->base_articulated_inertia().array() == at_order_0.array()).all());  // Lemma 2
  }
}

TEST_CASE("free fall: V' = g and every higher derivative zero at every order (T10)", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 6;
  for (const auto& variant : tree_variants()) {
    if (!variant.options.floating_base) continue;
    INFO("model " << variant.name);
    Bound bound = bind(*plugins().loaded[2].second, random_tree_model(6, variant.options), r);
    const KinematicTree& tree = *bound.tree;
    TreeState state = random_state(tree, 90);
    state.base_twist.setZero();
    state.qd.setZero();
    Eigen::MatrixXd rates;
    bound.higher->forward_dynamics(state, Eigen::MatrixXd::Zero(tree.velocity_dimension(), r + 1), rates);
    Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(tree.velocity_dimension(), r + 1);
    expected.col(0).segment<3>(3) = state.base.R.transpose() * tree.gravity;  // body frame
    CHECK(relative_error(rates, expected) < roundoff_tolerance);
  }
}

TEST_CASE("the closed form of Proposition 1 gives order 0 of H-GRNE, Mbar is CRBA's mass matrix (T6)", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    Bound bound = bind(*plugins().loaded[1].second, model, 0);
    const KinematicTree& tree = *bound.tree;
    const int nv = tree.velocity_dimension();
    if (nv == 0) continue;  // nothing moves
    for (unsigned seed = 0; seed < 3; ++seed) {
      const TreeState state = random_state(tree, 130 + seed);
      const LagrangianClosedForm closed = lagrangian_closed_form(tree, state);
      const Eigen::MatrixXd& T = closed.to_paper;
      Eigen::MatrixXd crba;
      bound.dynamics->mass_matrix(state, crba);
      CHECK(relative_error(T.transpose() * closed.mass * T, crba) < 1e-12);
      CHECK(relative_error(closed.mass.transpose(), closed.mass) < 1e-14);
      CHECK(Eigen::LLT<Eigen::MatrixXd>(closed.mass).info() == Eigen::Success);
      // (10): tau = Mbar nu' + h + g + tau_ext, h = C nu (Lemma 1), nu' = T u' at order 0
      // (d/dt Ad_C V^b = Ad_C (V^b' + ad_{V^b} V^b)), the base row the spatial wrench.
      const Eigen::VectorXd acceleration = random_vector(nv, 140 + seed);
      const Eigen::VectorXd paper = closed.mass * (T * acceleration) + closed.coriolis * closed.velocity + closed.gravity + closed.applied;
      Eigen::MatrixXd forces;
      bound.higher->inverse_dynamics(state, acceleration, forces);
      CHECK(relative_error(T.transpose() * paper, forces) < 1e-12);
      // The Coriolis and gravity terms against the body-fixed closed form of paper 000
      // (another factorization: only C u is unique).
      const Eigen::VectorXd u = closed_form::generalized_velocity(tree, state);
      CHECK(relative_error(T.transpose() * closed.coriolis * closed.velocity, closed_form::coriolis_matrix(tree, state) * u) < 1e-12);
      CHECK(relative_error(T.transpose() * closed.gravity, closed_form::gravity_forces(tree, state)) < 1e-12);
    }
  }
}

TEST_CASE("Lemma 1: Mbar'/2 - C is skew-symmetric, Mbar' by central differences along the motion (T7)", "[dynamics][higher-order]") {
  const double h = 1e-4;
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    const KinematicTree tree = compile_tree(model);
    if (tree.velocity_dimension() == 0) continue;
    for (unsigned seed = 0; seed < 3; ++seed) {
      const TreeState state = random_state(tree, 150 + seed);
      const LagrangianClosedForm closed = lagrangian_closed_form(tree, state);
      // The configuration path through the state with velocity nu: q + t q', the base
      // exp(t [V^s]) C (constant spatial twist).
      const auto at = [&](double t) {
        TreeState moved = state;
        moved.q += t * state.qd;
        if (tree.floating_base) moved.base = se3::compose(se3::exp(Vec6(t * closed.velocity.head<6>())), state.base);
        return lagrangian_closed_form(tree, moved).mass;
      };
      const Eigen::MatrixXd mass_rate = (at(h) - at(-h)) / (2.0 * h);
      const Eigen::MatrixXd K = 0.5 * mass_rate - closed.coriolis;
      const double scale = std::max(K.cwiseAbs().maxCoeff(), mass_rate.cwiseAbs().maxCoeff());
      if (scale == 0.0) continue;  // a fixed chain of prismatic joints: Mbar constant, C = 0
      CHECK((K + K.transpose()).cwiseAbs().maxCoeff() < 1e-7 * scale);
      const Eigen::VectorXd& nu = closed.velocity;
      CHECK(std::abs(nu.dot((mass_rate - 2.0 * closed.coriolis) * nu)) < 1e-7 * scale * nu.squaredNorm());
      // Not trivially: the skew part is not zero.
      CHECK((K - K.transpose()).cwiseAbs().maxCoeff() > 1e-3 * scale);
    }
  }
}

TEST_CASE("the first-order closed form (14)-(19) gives order 1 of H-GRNE (T8)", "[dynamics][higher-order]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  for (auto [name, model] : test_models()) {
    INFO("model " << name);
    // (19) covers body-frame loads only.
    std::erase_if(model.loads, [](const AppliedWrench& load) { return load.frame == AppliedWrench::Frame::world; });
    Bound bound = bind(*plugins().loaded[0].second, model, 1);
    const KinematicTree& tree = *bound.tree;
    const int n = tree.dof(), nv = tree.velocity_dimension();
    if (nv == 0) continue;
    for (unsigned seed = 0; seed < 3; ++seed) {
      const TreeState state = random_state(tree, 160 + seed);
      const Eigen::MatrixXd rates = random_matrix(nv, 2, 170 + seed);
      Eigen::MatrixXd forces;
      bound.higher->inverse_dynamics(state, rates, forces);
      const LagrangianClosedForm closed = lagrangian_closed_form(tree, state);
      // The paper's nu' and nu'': V^s = Ad_C V^b, V^s' = Ad_C V^b', V^s'' = Ad_C (V^b'' + ad_{V^b} V^b').
      Eigen::VectorXd nu_rate = rates.col(0), nu_second_rate = rates.col(1);
      if (tree.floating_base) {
        const Mat6 Ad = se3::Ad(state.base);
        nu_rate.head<6>() = Ad * rates.col(0).head<6>();
        nu_second_rate.head<6>() = Ad * (rates.col(1).head<6>() + se3::ad(state.base_twist) * rates.col(0).head<6>());
      }
      const Eigen::VectorXd closed_form_rate = first_order_closed_form(closed, nu_rate, nu_second_rate);
      const double scale = std::max(1.0, forces.col(1).cwiseAbs().maxCoeff());
      if (n > 0) CHECK((closed_form_rate.tail(n) - forces.col(1).tail(n)).cwiseAbs().maxCoeff() < 1e-12 * scale);
      if (tree.floating_base) {
        // The base row is Ad_C^-T (W^b)' = (W^s)' + ad^T_{V^s} W^s (the note's caveat on (16)).
        const Mat6 Ad_inverse_T = se3::Ad_inverse(state.base).transpose();
        CHECK((closed_form_rate.head<6>() - Ad_inverse_T * forces.col(1).head<6>()).cwiseAbs().maxCoeff() < 1e-12 * scale);
      }
    }
  }
}

// T11 helpers. The same model seen from another world frame G: every pose left-multiplied by
// G, world-frame screws by Ad_G, gravity and world-frame loads rotated.
Model moved_world(Model model, const Pose& G) {
  model.gravity = G.R * model.gravity;
  const Mat6 Ad = se3::Ad(G);
  for (auto& body : model.bodies) body.reference_pose = se3::compose(G, body.reference_pose);
  for (auto& joint : model.joints)
    for (auto& screw : joint.screws) screw = Ad * screw;
  for (auto& load : model.loads)
    if (load.frame == AppliedWrench::Frame::world) {
      load.moment = G.R * load.moment;
      load.force = G.R * load.force;
    }
  return model;
}

// The same model with the frame of every body but the floating base moved by a random pose
// E_b (off the centre of mass, rotated): A_b -> A_b E_b, the centre of mass and inertia
// re-expressed, body-frame loads by W -> Ad_E^T W.
Model moved_body_frames(Model model, unsigned seed) {
  const std::vector<std::size_t> free = model.free_bodies();
  for (std::size_t b = 0; b < model.bodies.size(); ++b) {
    if (std::find(free.begin(), free.end(), b) != free.end()) continue;  // the base's frame defines u's base rows
    const Vec6 e = random_vector(6, seed + static_cast<unsigned>(b), 0.8);
    const Pose E = se3::exp(e);
    RigidBody& body = model.bodies[b];
    body.reference_pose = se3::compose(body.reference_pose, E);
    body.center_of_mass = E.R.transpose() * (body.center_of_mass - E.r);
    body.inertia = E.R.transpose() * body.inertia * E.R;
    for (auto& load : model.loads)
      if (load.body == b && load.frame == AppliedWrench::Frame::body) {
        Vec6 wrench;
        wrench << load.moment, load.force;
        wrench = se3::Ad(E).transpose() * wrench;
        load.moment = wrench.head<3>();
        load.force = wrench.tail<3>();
      }
  }
  return model;
}

TEST_CASE("coordinate invariance: another world frame or other body frames change no derivative of any order (T11)",
          "[dynamics][higher-order]") {
  // The outputs are joint forces and the base's body-frame wrench, and the inputs joint
  // rates and the base's body twist: all independent of the world frame and of where the
  // (non-base) body frames sit, at every order (the spatial recursion is right-invariant).
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 6;
  const Pose G = se3::exp((Vec6() << 0.7, -1.9, 0.4, 2.0, -3.0, 0.5).finished());
  std::size_t p = 0;
  for (const auto& [name, model] : test_models()) {
    INFO("model " << name);
    const auto& [representation_name, representation] = plugins().loaded[p++ % plugins().loaded.size()];
    INFO("representation " << representation_name);
    Bound original = bind(*representation, model, r);
    const KinematicTree& tree = *original.tree;
    const int nv = tree.velocity_dimension();
    const TreeState state = random_state(tree, 120);
    const Eigen::MatrixXd rates = random_matrix(nv, r + 1, 121), given_forces = random_matrix(nv, r + 1, 122, 3.0);
    Eigen::MatrixXd forces, solved_rates, mass;
    original.higher->inverse_dynamics(state, rates, forces);
    original.higher->forward_dynamics(state, given_forces, solved_rates);
    original.dynamics->mass_matrix(state, mass);
    const auto forward = [&](const Eigen::MatrixXd& input) {
      Eigen::MatrixXd out;
      original.higher->forward_dynamics(state, input, out);
      return out;
    };
    const Eigen::VectorXd predicted =
        roundoff_response(forward, given_forces, term_scales(mass, solved_rates, given_forces), solved_rates, 123);
    for (const bool world : {true, false}) {
      INFO((world ? "world frame moved" : "body frames moved"));
      Bound moved = bind(*representation, world ? moved_world(model, G) : moved_body_frames(model, 124));
      TreeState moved_state = state;
      if (world) moved_state.base = se3::compose(G, state.base);
      Eigen::MatrixXd moved_forces, moved_rates;
      moved.higher->inverse_dynamics(moved_state, rates, moved_forces);
      for (int k = 0; k <= r; ++k) {
        INFO("order " << k);
        CHECK(relative_error(moved_forces.col(k), forces.col(k)) < 1e-12 * (k + 1) * (k + 1));
      }
      moved.higher->forward_dynamics(moved_state, given_forces, moved_rates);
      check_forward_error(moved_rates, solved_rates, predicted, 1e3);
    }
  }
}

TEST_CASE("higher-order dynamics rejects inputs of the wrong size", "[dynamics][higher-order][errors]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  Bound bound = bind(*plugins().loaded[0].second, random_tree_model(3, tree_variants()[2].options));
  const KinematicTree& tree = *bound.tree;
  const TreeState state = random_state(tree, 1);
  Eigen::MatrixXd out, out2;
  CHECK_THROWS_WITH(bound.higher->inverse_dynamics(state, Eigen::MatrixXd::Zero(tree.velocity_dimension() + 1, 2), out),
                    Catch::Contains("rates is") && Catch::Contains("rows"));
  CHECK_THROWS_AS(bound.higher->forward_dynamics(state, Eigen::MatrixXd::Zero(tree.velocity_dimension(), 0), out), Error);
  TreeState short_state = state;
  short_state.q.resize(0);
  CHECK_THROWS_AS(bound.higher->inverse_dynamics(short_state, Eigen::MatrixXd::Zero(tree.velocity_dimension(), 1), out), Error);
  HybridSplit split;
  CHECK_THROWS_WITH(bound.higher->hybrid_dynamics(state, split, Eigen::MatrixXd::Zero(tree.velocity_dimension(), 1), out, out2),
                    Catch::Contains("hybrid split"));
}


// Time-varying applied wrenches (003 Alg. 2-3 with W_app^(0..r), eqs. 67-70): per model load,
// its (moment; force) in its own frame as waves of time, value and derivatives 0..r
// (column k the k-th derivative, the jet reference's load_rates format).
namespace {

std::vector<Eigen::MatrixXd> load_trajectory(const Model& model, double t, int r) {
  std::vector<Eigen::MatrixXd> loads;
  for (std::size_t l = 0; l < model.loads.size(); ++l) {
    Eigen::MatrixXd load(6, r + 1);
    for (int c = 0; c < 6; ++c) {
      const Jet x = wave(t, 1.0 + 0.3 * c, 0.9 + 0.4 * c + 0.2 * static_cast<double>(l), 0.3 * static_cast<double>(l) + 0.7 * c,
                         0.5 - 0.1 * c);
      for (int k = 0; k <= r; ++k) load(c, k) = x.derivative(k);
    }
    loads.push_back(load);
  }
  return loads;
}

// The model with each load's value at the instant (column 0), for the order-0 algorithms.
Model with_load_values(Model model, const std::vector<Eigen::MatrixXd>& loads) {
  for (std::size_t l = 0; l < model.loads.size(); ++l) {
    model.loads[l].moment = loads[l].col(0).head<3>();
    model.loads[l].force = loads[l].col(0).tail<3>();
  }
  return model;
}

std::vector<std::pair<std::string, Model>> loaded_test_models() {
  std::vector<std::pair<std::string, Model>> models;
  unsigned seed = 1;
  for (const auto& variant : tree_variants()) {
    models.emplace_back(variant.name + " with loads", with_loads(random_tree_model(seed, variant.options), seed));
    ++seed;
  }
  return models;
}

}  // namespace

TEST_CASE("time-varying applied wrenches: H-GRNE equals the jet reference up to order 8 in every representation",
          "[dynamics][higher-order][loads]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 8;
  for (const auto& [name, model] : loaded_test_models()) {
    INFO("model " << name);
    for (const auto& [representation_name, representation] : plugins().loaded) {
      INFO("representation " << representation_name);
      Bound bound = bind(*representation, model, r);
      const KinematicTree& tree = *bound.tree;
      HigherOrderDynamicsWithLoads& higher = with_load_rates(*bound.higher);
      const TreeState state = random_state(tree, 140);
      const Eigen::MatrixXd rates = random_matrix(tree.velocity_dimension(), r + 1, 141);
      std::vector<Eigen::MatrixXd> model_loads;
      for (std::size_t l = 0; l < model.loads.size(); ++l) model_loads.push_back(random_matrix(6, r + 1, 150 + static_cast<unsigned>(l)));
      LoadRates loads;
      tree_load_rates(model, tree, model_loads, loads);
      Eigen::MatrixXd forces;
      higher.inverse_dynamics(state, rates, loads, forces);
      const Eigen::MatrixXd reference = jet_inverse_dynamics(model, tree, state, rates, &model_loads);
      for (int k = 0; k <= r; ++k) {
        INFO("order " << k);
        CHECK(relative_error(forces.col(k), reference.col(k)) < 1e-13 * (k + 1) * (k + 1));
      }
      // The load rates change the result (the check above is not blind to them) ...
      Eigen::MatrixXd constant_forces;
      bound.higher->inverse_dynamics(state, rates, constant_forces);
      if (forces.rows() > 0 && !tree.loads.empty()) CHECK(relative_error(forces.col(1), constant_forces.col(1)) > 1e-6);
      // ... and the model's constant loads given as rates are the call without them.
      for (std::size_t l = 0; l < model.loads.size(); ++l) {
        model_loads[l].setZero();
        model_loads[l].col(0) << model.loads[l].moment, model.loads[l].force;
      }
      tree_load_rates(model, tree, model_loads, loads);
      higher.inverse_dynamics(state, rates, loads, forces);
      for (int k = 0; k <= r; ++k)  // the same loads, moved to the node frames by other products
        CHECK(relative_error(forces.col(k), constant_forces.col(k)) < 1e-13 * (k + 1) * (k + 1));
    }
  }
}

TEST_CASE("time-varying applied wrenches: order r is the time derivative of order r-1, order 0 and 1 those of RNEA, "
          "FD and hybrid dynamics return the motion",
          "[dynamics][higher-order][loads]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const int r = 4;
  const double h = 1e-4, t0 = 0.41;
  for (const auto& [name, model] : loaded_test_models()) {
    INFO("model " << name);
    std::vector<Eigen::MatrixXd> first_forces;
    for (const auto& [representation_name, representation] : plugins().loaded) {
      INFO("representation " << representation_name);
      Bound bound = bind(*representation, model, r);
      const KinematicTree& tree = *bound.tree;
      HigherOrderDynamicsWithLoads& higher = with_load_rates(*bound.higher);
      std::array<Eigen::MatrixXd, 3> forces;  // at t0 - h, t0, t0 + h
      std::array<Eigen::VectorXd, 3> rnea;    // order 0 with the loads' values at the instant (RNEA)
      std::array<TrajectoryPoint, 3> points;
      std::array<LoadRates, 3> loads;
      for (int s = 0; s < 3; ++s) {
        const double t = t0 + (s - 1) * h;
        points[s] = trajectory(tree, t, r);
        const std::vector<Eigen::MatrixXd> model_loads = load_trajectory(model, t, r);
        tree_load_rates(model, tree, model_loads, loads[s]);
        higher.inverse_dynamics(points[s].state, points[s].rates, loads[s], forces[s]);
        const auto frozen = std::make_shared<const KinematicTree>(compile_tree(with_load_values(model, model_loads)));
        representation->bind_tree(frozen)->inverse_dynamics(points[s].state, Eigen::VectorXd(points[s].rates.col(0)), rnea[s]);
      }
      CHECK(relative_error(forces[1].col(0), rnea[1]) < roundoff_tolerance);
      CHECK(relative_error(forces[1].col(1), (rnea[2] - rnea[0]) / (2.0 * h)) < 1e-6);
      for (int k = 1; k <= r; ++k) {
        INFO("order " << k);
        CHECK(relative_error(forces[1].col(k), (forces[2].col(k - 1) - forces[0].col(k - 1)) / (2.0 * h)) < 1e-5);
      }
      first_forces.push_back(forces[1]);
      CHECK(relative_error(forces[1], first_forces.front()) < 1e-12);  // the representations agree
      // H-GABI with the same loads returns the trajectory's derivatives (T2) ...
      const TrajectoryPoint& at = points[1];
      Eigen::MatrixXd rates;
      higher.forward_dynamics(at.state, forces[1], loads[1], rates);
      CHECK(relative_error(rates, at.rates) < 1e-8);
      // ... and H-GHYB too, every other joint and the base motion-prescribed (T4).
      HybridSplit split;
      split.base_motion = tree.floating_base;
      const int offset = tree.floating_base ? 6 : 0;
      Eigen::MatrixXd given = forces[1];
      for (int i = 0; i < tree.dof(); ++i) {
        split.joint_motion.push_back(i % 2 == 0);
        if (i % 2 == 0) given.row(offset + i) = at.rates.row(offset + i);
      }
      if (split.base_motion) given.topRows(6) = at.rates.topRows(6);
      Eigen::MatrixXd hybrid_rates, hybrid_forces;
      higher.hybrid_dynamics(at.state, split, given, loads[1], hybrid_rates, hybrid_forces);
      CHECK(relative_error(hybrid_rates, at.rates) < 1e-8);
      CHECK(relative_error(hybrid_forces, forces[1]) < 1e-8);
    }
  }
}

TEST_CASE("time-varying applied wrenches of the wrong count or size are errors", "[dynamics][higher-order][loads][errors]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const Model model = with_loads(random_tree_model(3, tree_variants()[2].options), 3);
  Bound bound = bind(*plugins().loaded[0].second, model);
  const KinematicTree& tree = *bound.tree;
  HigherOrderDynamicsWithLoads& higher = with_load_rates(*bound.higher);
  const TreeState state = random_state(tree, 1);
  const Eigen::MatrixXd rates = Eigen::MatrixXd::Zero(tree.velocity_dimension(), 3);
  Eigen::MatrixXd forces;
  LoadRates loads(tree.loads.size(), Eigen::MatrixXd::Zero(6, 3));
  CHECK_NOTHROW(higher.inverse_dynamics(state, rates, loads, forces));
  loads.pop_back();
  CHECK_THROWS_WITH(higher.inverse_dynamics(state, rates, loads, forces), Catch::Contains("applied wrench rates are given for"));
  loads.assign(tree.loads.size(), Eigen::MatrixXd::Zero(6, 2));
  CHECK_THROWS_WITH(higher.forward_dynamics(state, rates, loads, forces), Catch::Contains("expected 6 x 3"));
  std::vector<Eigen::MatrixXd> model_loads(model.loads.size(), Eigen::MatrixXd::Zero(6, 3));
  model_loads.back().resize(5, 3);
  CHECK_THROWS_WITH(tree_load_rates(model, tree, model_loads, loads),
                    Catch::Contains("on body '" + model.bodies[model.loads.back().body].name + "'") && Catch::Contains("5 x 3"));
  model_loads.pop_back();
  CHECK_THROWS_WITH(tree_load_rates(model, tree, model_loads, loads), Catch::Contains("matrices for the model's"));
}
