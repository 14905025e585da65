// Analytic Newton matrices (issue 18 item 4): the newton-euler formulation's C = -dQ/dV,
// K = d(M a + J^T lambda - Q)/d delta and P = d(J V - nu)/d delta against central differences
// of its DAE terms, on paper 004's mechanisms, the spatial four-bar (centres of mass off the
// body origin) and a body under world-frame loads, in every parameterization (SO3xR3 = rA,
// SE3, Euler parameters rp, Euler angles re), at states off the constraints with arbitrary
// a and lambda; the structured Newton solve against a dense LU; whole bdf and
// generalized-alpha runs with analytic and differenced matrices agreeing within the Newton
// tolerance, and ida runs with the analytic Newton matrix and with IDA's difference quotients
// within its tolerance; the option's error paths; a representation plugin without derivatives
// (differences, and a clear error only when "analytic" is asked for).
#include "../test_support.hpp"

#include <random_trees.hpp>
#include <representation_plugins.hpp>

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/newton_derivatives.hpp>
#include <liembs/sim/newton_system.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <tuple>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

struct Loaded {
  std::unique_ptr<Registry> registry;
  Run run;
};

// (test_plugin: also load one of the test plugins, tests/test-plugins, by its folder name)
Loaded load(const std::string& path, const std::vector<std::string>& overrides, const std::string& test_plugin = "") {
  auto registry = std::make_unique<Registry>();
  registry->append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  if (!test_plugin.empty())
    registry->append_search_path({{std::string(LIEMBS_TEST_BROKEN_PLUGIN_DIR) + "/" + test_plugin, "test plugin", true}});
  auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/" + path);
  for (const auto& assignment : overrides) document->set_override(assignment);
  Run run = load_run(document, *registry);
  return {std::move(registry), std::move(run)};
}

double relative_difference(const Eigen::MatrixXd& analytic, const Eigen::MatrixXd& reference) {
  if (reference.size() == 0) return analytic.size() == 0 ? 0.0 : 1.0;
  return (analytic - reference).cwiseAbs().maxCoeff() / std::max(1.0, reference.cwiseAbs().maxCoeff());
}

// r = M a + J^T lambda - Q and J V - nu at a state.
struct Residuals {
  Eigen::VectorXd dynamic, velocity;
};
Residuals residuals(ConstrainedSystem& system, const State& state, const Eigen::VectorXd& a, const Eigen::VectorXd& lambda) {
  DaeTerms terms;
  system.evaluate(state, terms, dae::all);
  Residuals r;
  dynamic_residual(terms, a, lambda, r.dynamic);
  velocity_violation(terms, state.velocities, r.velocity);
  return r;
}

// The states of central differences in coordinate i: moved by +-step in velocity i, and along
// the retraction by +-step in configuration coordinate i.
struct CentralStates {
  State velocity_plus, velocity_minus, position_plus, position_minus;
};
CentralStates central_states(const StateSpace& space, const State& state, Eigen::Index i, double step) {
  CentralStates moved{state, state, state, state};
  moved.velocity_plus.velocities(i) += step;
  moved.velocity_minus.velocities(i) -= step;
  Eigen::VectorXd direction = Eigen::VectorXd::Zero(state.velocities.size());
  direction(i) = step;
  space.retract_configuration(moved.position_plus, direction);
  space.retract_configuration(moved.position_minus, -direction);
  return moved;
}

// The ODE form V' = F(q, V) of a formulation without constraint rows (MotionEquations with
// analytic_odes: the tree's declared velocity_rate_derivatives, from dFD on a fixed base or SE3 and from
// the DAE form's C and K otherwise): C = -dF/dV and K = -dF/d delta against central differences
// of the velocity rates.
void check_ode_derivatives(ForwardDynamics& dynamics, const StateSpace& space, const State& state, const std::string& what) {
  const auto n = static_cast<Eigen::Index>(space.velocity_dimension());
  MotionEquations equations(dynamics, n, false, true);
  REQUIRE(equations.system() == nullptr);
  const unsigned all = dae::damping | dae::stiffness | dae::velocity_constraint;
  REQUIRE(equations.analytic_derivatives() == all);
  DaeDerivatives analytic;
  equations.evaluate_derivatives(state, Eigen::VectorXd(), Eigen::VectorXd(), analytic, all);
  REQUIRE(analytic.velocity_constraint.rows() == 0);
  const double step = 1e-5;
  Eigen::MatrixXd damping(n, n), stiffness(n, n);
  Eigen::VectorXd plus_rates, minus_rates;
  for (Eigen::Index i = 0; i < n; ++i) {
    const CentralStates moved = central_states(space, state, i, step);
    dynamics.velocity_rates(moved.velocity_plus, plus_rates);
    dynamics.velocity_rates(moved.velocity_minus, minus_rates);
    damping.col(i) = -(plus_rates - minus_rates) / (2.0 * step);
    dynamics.velocity_rates(moved.position_plus, plus_rates);
    dynamics.velocity_rates(moved.position_minus, minus_rates);
    stiffness.col(i) = -(plus_rates - minus_rates) / (2.0 * step);
  }
  INFO(what << " (ODE form): |C| " << damping.cwiseAbs().maxCoeff() << ", |K| " << stiffness.cwiseAbs().maxCoeff());
  CHECK(relative_difference(analytic.damping, damping) < 1e-6);
  CHECK(relative_difference(analytic.stiffness, stiffness) < 1e-6);
}

// C, K and P of a formulation's evaluate_derivatives against central differences of its DAE
// terms, at a state off the constraints (the initial one moved by `position_scale` along the
// retraction) with generic velocities, accelerations and multipliers; then NewtonDerivatives'
// choice (analytic by default, forward differences on request). Returns the largest |K|.
double check_system_derivatives(ForwardDynamics& dynamics, const Group& group, std::uint32_t seed,
                                const std::string& what, double position_scale = 0.2) {
  // The DAE view: the constraint rows, or the declared DAE form of an unconstrained formulation.
  ConstrainedSystem* system = dynamics.constraints() ? dynamics.constraints() : dynamics.capabilities().dae_form;
  REQUIRE(system);
  REQUIRE(system->analytic_derivatives() == (dae::damping | dae::stiffness | dae::velocity_constraint));
  const StateSpace space(group, dynamics.free_bodies(), dynamics.joint_coordinates());
  const auto n = static_cast<Eigen::Index>(space.velocity_dimension());
  const Eigen::Index m = system->constraint_count();
  if (n == 0) return 0.0;  // a tree of fixed joints: nothing moves

  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto random_vector = [&](Eigen::Index size, double scale) {
    Eigen::VectorXd v(size);
    for (Eigen::Index i = 0; i < size; ++i) v(i) = scale * uniform(random);
    return v;
  };
  State state = dynamics.initial_state();
  space.retract_configuration(state, random_vector(n, position_scale));
  state.velocities += random_vector(n, 2.0);
  state.time = 0.3;
  const Eigen::VectorXd a = random_vector(n, 5.0), lambda = random_vector(m, 20.0);

  DaeDerivatives analytic;
  system->evaluate_derivatives(state, a, lambda, analytic, dae::damping | dae::stiffness | dae::velocity_constraint);
  REQUIRE(analytic.damping.rows() == n);
  REQUIRE(analytic.stiffness.rows() == n);
  REQUIRE(analytic.velocity_constraint.rows() == m);

  // Central differences, step 1e-5 (truncation about 1e-10).
  const double step = 1e-5;
  Eigen::MatrixXd damping(n, n), stiffness(n, n), velocity(m, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const CentralStates moved = central_states(space, state, i, step);
    DaeTerms terms_plus, terms_minus;
    system->evaluate(moved.velocity_plus, terms_plus, dae::forces);
    system->evaluate(moved.velocity_minus, terms_minus, dae::forces);
    damping.col(i) = -(terms_plus.forces - terms_minus.forces) / (2.0 * step);

    const Residuals r_plus = residuals(*system, moved.position_plus, a, lambda),
                    r_minus = residuals(*system, moved.position_minus, a, lambda);
    stiffness.col(i) = (r_plus.dynamic - r_minus.dynamic) / (2.0 * step);
    velocity.col(i) = (r_plus.velocity - r_minus.velocity) / (2.0 * step);
  }
  INFO(what << ": |C| " << damping.cwiseAbs().maxCoeff() << ", |K| " << stiffness.cwiseAbs().maxCoeff() << ", "
            << m << " constraint rows");
  CHECK(relative_difference(analytic.damping, damping) < 1e-6);
  CHECK(relative_difference(analytic.stiffness, stiffness) < 1e-6);
  CHECK(relative_difference(analytic.velocity_constraint, velocity) < 1e-6);

  // NewtonDerivatives: analytic by default, forward differences on request (within their
  // truncation error, about sqrt(eps)). Without constraint rows the integrators solve the
  // system in this DAE form (DynamicsCapabilities::dae_form) unless they are asked for differences, which keep
  // the ODE form (M = 1, Q = the rates: other matrices, not compared here).
  DaeTerms terms;
  system->evaluate(state, terms, dae::all);
  MotionEquations equations(dynamics, n, true);
  REQUIRE(equations.system() == system);
  if (m == 0) CHECK(MotionEquations(dynamics, n, false).system() == nullptr);
  DaeDerivatives chosen, differenced;
  NewtonDerivatives automatic, differences(DerivativeMethod::finite_differences);
  const unsigned all = dae::damping | dae::stiffness | dae::velocity_constraint;
  CHECK(automatic.analytic_parts(equations, all) == all);
  CHECK(differences.analytic_parts(equations, all) == 0u);
  automatic.evaluate(space, equations, state, terms, a, lambda, chosen, all);
  differences.evaluate(space, equations, state, terms, a, lambda, differenced, all);
  CHECK(relative_difference(chosen.stiffness, analytic.stiffness) == 0.0);
  CHECK(relative_difference(differenced.damping, damping) < 1e-5);
  CHECK(relative_difference(differenced.stiffness, stiffness) < 1e-5);
  CHECK(relative_difference(differenced.velocity_constraint, velocity) < 1e-5);
  if (m == 0 && dynamics.capabilities().velocity_rate_derivatives) check_ode_derivatives(dynamics, space, state, what);
  return stiffness.cwiseAbs().maxCoeff();
}

void check_derivatives(const std::string& file, const std::string& group, std::uint32_t seed,
                       const std::vector<std::string>& overrides = {"algorithm.name=newton-euler"}) {
  std::vector<std::string> all = overrides;
  all.push_back("group.name=" + group);
  Loaded loaded = load(file, all);
  // Not trivially zero: the mechanisms have gyroscopic, gravity and reaction terms.
  CHECK(check_system_derivatives(*loaded.run.dynamics, *loaded.run.group, seed, file + " on " + group) > 1e-3);
}

// The final body poses and twists of a whole run, and the integrator's statistics.
struct RunResult {
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  std::map<std::string, double> statistics;
};
RunResult run_to_end(const std::string& file, const std::vector<std::string>& overrides, const std::string& test_plugin = "") {
  Loaded loaded = load(file, overrides, test_plugin);
  const RunSummary summary = execute_run(loaded.run, RunOutput{});
  RunResult result;
  for (const auto& [key, value] : loaded.run.integrator->statistics()) result.statistics[key] = value;
  loaded.run.dynamics->body_motion(summary.final_state, result.poses, result.twists);
  return result;
}
void check_same_motion(const RunResult& a, const RunResult& b, double pose_tolerance, double twist_tolerance) {
  REQUIRE(a.poses.size() == b.poses.size());
  for (std::size_t i = 0; i < a.poses.size(); ++i) {
    CHECK((a.poses[i].r - b.poses[i].r).norm() < pose_tolerance);
    CHECK((a.poses[i].R - b.poses[i].R).norm() < pose_tolerance);
    CHECK((a.twists[i] - b.twists[i]).norm() < twist_tolerance);
  }
}
// A fixed-step run with analytic derivatives against one with differences: the same motion
// within the tolerances, and the same iteration (the matrices agree to about sqrt(eps); the
// reused matrices' rebuilds are threshold decisions, which that difference or a -march=native
// build's rounding can tip: a few per cent of the iterations; a wrong matrix term makes Newton
// linear, tens of per cent more).
void check_same_fixed_step_runs(const RunResult& analytic, const RunResult& differenced, double pose_tolerance,
                                double twist_tolerance) {
  CHECK(analytic.statistics.at("analytic_derivatives") == 1.0);
  CHECK(differenced.statistics.at("analytic_derivatives") == 0.0);
  check_same_motion(analytic, differenced, pose_tolerance, twist_tolerance);
  CHECK(std::abs(analytic.statistics.at("newton_iterations") - differenced.statistics.at("newton_iterations")) <=
        0.04 * differenced.statistics.at("newton_iterations"));
}

const std::vector<std::string> groups{"SO3xR3", "SE3", "euler-parameters", "euler-angles"};

}  // namespace

TEST_CASE("analytic C, K and P of newton-euler equal central differences on paper 004's mechanisms",
          "[newton-derivatives][paper-004]") {
  std::uint32_t seed = 1;
  for (const char* file : {"single-pendulum.toml", "double-pendulum.toml", "four-link.toml", "slider-crank.toml"})
    for (const auto& group : groups) check_derivatives(std::string("configs/paper-004/") + file, group, seed++);
}

TEST_CASE("analytic C, K and P of newton-euler equal central differences with offset centres of mass and loads",
          "[newton-derivatives]") {
  std::uint32_t seed = 100;
  for (const auto& group : groups) {
    check_derivatives("configs/four-bar/spatial.toml", group, seed++);
    check_derivatives("configs/examples/wrench-driven-body.toml", group, seed++);
  }
}

TEST_CASE("the structured Newton solve equals a dense LU of the saddle-point matrix", "[newton-derivatives]") {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (const Eigen::Index block : {6, 7, 5}) {  // fixed-size inverses of 6 x 6 and 7 x 7 blocks, and any size
    const Eigen::Index bodies = 3, n = bodies * block, m = 14;
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n), J = Eigen::MatrixXd::Zero(m, n);
    for (Eigen::Index b = 0; b < bodies; ++b) {
      Eigen::MatrixXd B = Eigen::MatrixXd::NullaryExpr(block, block, [&] { return uniform(random); });
      A.block(b * block, b * block, block, block) = B * B.transpose() + 0.1 * B;  // non-symmetric, regular
      if (block == 7) {  // Euler parameters: singular along a direction p the body's own row covers
        Eigen::VectorXd p = Eigen::VectorXd::NullaryExpr(block, [&] { return uniform(random); });
        const Eigen::MatrixXd projector = Eigen::MatrixXd::Identity(block, block) - p * p.transpose() / p.squaredNorm();
        A.block(b * block, b * block, block, block) = projector * A.block(b * block, b * block, block, block) * projector;
        J.row(m - bodies + b).segment(b * block, block) = p.transpose();
      }
    }
    // Joint rows touching one or two bodies.
    for (Eigen::Index r = 0; r < m - (block == 7 ? bodies : 0); ++r) {
      const Eigen::Index first = r % bodies, second = (r + 1) % bodies;
      J.row(r).segment(first * block, block) = Eigen::RowVectorXd::NullaryExpr(block, [&] { return uniform(random); });
      if (r % 3 != 0)
        J.row(r).segment(second * block, block) = Eigen::RowVectorXd::NullaryExpr(block, [&] { return uniform(random); });
    }
    Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n + m, n + m);
    dense.topLeftCorner(n, n) = A;
    dense.topRightCorner(n, m) = J.transpose();
    dense.bottomLeftCorner(m, n) = J;
    const Eigen::VectorXd rhs = Eigen::VectorXd::NullaryExpr(n + m, [&] { return uniform(random); });
    NewtonSystem system;
    system.factorize(A, J, block, bodies, block == 7);
    CHECK(system.uses_blocks());
    Eigen::VectorXd solution;
    system.solve(rhs, solution);
    INFO("block " << block);
    CHECK((dense * solution - rhs).norm() < 1e-9 * rhs.norm() * dense.norm());
    // A singular body block (no row of its own to regularize it: a rod-like inertia) that the
    // constraints with the other bodies complete: the whole matrix is factorized and solved
    // (issue 33 item 5); without those rows the matrix is singular, a SimulationError.
    if (block != 7) {
      // Body 1's block loses one direction d (P A_1 P, P = I - d d^T / d^T d: a rod's zero
      // moment); five joint rows touch body 1 and have a component along d.
      const Eigen::VectorXd d = Eigen::VectorXd::NullaryExpr(block, [&] { return uniform(random); });
      const Eigen::MatrixXd projector = Eigen::MatrixXd::Identity(block, block) - d * d.transpose() / d.squaredNorm();
      Eigen::MatrixXd singular = A;
      singular.block(block, block, block, block) = projector * A.block(block, block, block, block) * projector;
      system.factorize(singular, J, block, bodies, false);
      CHECK_FALSE(system.uses_blocks());
      system.solve(rhs, solution);
      Eigen::MatrixXd singular_dense = dense;
      singular_dense.topLeftCorner(n, n) = singular;
      CHECK((singular_dense * solution - rhs).norm() < 1e-9 * rhs.norm() * singular_dense.norm());
      Eigen::MatrixXd unheld = J;
      unheld.middleCols(block, block).setZero();  // no constraint holds body 1
      CHECK_THROWS_WITH(system.factorize(singular, unheld, block, bodies, false),
                        Catch::Matchers::Contains("the Newton matrix") && Catch::Matchers::Contains("singular"));
    }
    // With a coupling entry the solve falls back to the dense LU.
    A(0, n - 1) = 0.5;
    dense(0, n - 1) = 0.5;
    system.factorize(A, J, block, bodies, block == 7);
    CHECK_FALSE(system.uses_blocks());
    system.solve(rhs, solution);
    CHECK((dense * solution - rhs).norm() < 1e-9 * rhs.norm() * dense.norm());
  }
}

TEST_CASE("bdf with analytic and with differenced Newton matrices gives the same motion", "[newton-derivatives][bdf][heavy]") {
  for (const auto& group : groups)
    for (const char* matrix : {"quasi-newton", "full"}) {
      auto run_with = [&](const char* derivatives) {
        return run_to_end("configs/paper-004/four-link.toml",
                          {"group.name=" + group, "integrator.name=bdf", std::string("integrator.newton_matrix=") + matrix,
                           std::string("integrator.newton_derivatives=") + derivatives,
                           "integrator.newton_tolerance=1e-6", "simulation.end_time=0.6"});
      };
      const RunResult analytic = run_with("analytic"), differenced = run_with("finite-differences");
      INFO(group << ", " << matrix);
      CHECK(analytic.statistics.at("damping_evaluations") == 0.0);
      // Both stop within Theta = 1e-6 of the same accelerations (h^2 Theta in positions per step).
      check_same_fixed_step_runs(analytic, differenced, 1e-7, 1e-4);
    }
}

TEST_CASE("newton_derivatives is checked: a name, and analytic only where the formulation gives it",
          "[newton-derivatives][config]") {
  auto error_of = [](const std::vector<std::string>& overrides,
                     const std::string& file = "configs/four-bar/spatial.toml") -> std::string {
    try {
      Loaded loaded = load(file, overrides);
      execute_run(loaded.run, RunOutput{});
    } catch (const std::exception& error) {
      return error.what();
    }
    return "no error";
  };
  for (const char* integrator : {"bdf", "generalized-alpha", "ida"}) {
    INFO(integrator);
    const std::string name = std::string("integrator.name=") + integrator;
    CHECK_THAT(error_of({name, "integrator.newton_derivatives=exact"}),
               Contains("newton_derivatives") && Contains("finite-differences"));
    // The relative-coordinate four-bar (a tree with a loop closure) has them; a tree with
    // prescribed joint motion (hybrid dynamics) has none.
    CHECK(error_of({name, "integrator.newton_derivatives=analytic", "simulation.end_time=0.01"}) == "no error");
    CHECK_THAT(error_of({name, "integrator.newton_derivatives=analytic", "simulation.end_time=0.01"},
                        "tests/data/prescribed-chain.toml"),
               Contains(std::string(integrator) + ": integrator.newton_derivatives = \"analytic\"") &&
                   Contains("prescribed motion") && Contains("finite-differences"));
    CHECK(error_of({name, "simulation.end_time=0.01"}, "tests/data/prescribed-chain.toml") == "no error");
    CHECK(error_of({name, "integrator.newton_derivatives=finite-differences", "simulation.end_time=0.01"}) ==
          "no error");
    CHECK(error_of({name, "simulation.end_time=0.01"}) == "no error");
    CHECK(error_of({name, "algorithm.name=newton-euler", "integrator.newton_derivatives=analytic",
                    "simulation.end_time=0.01"}) == "no error");
  }
  for (const char* integrator : {"generalized-alpha", "ida", "bdf"}) {
    INFO(integrator);
    const std::string name = std::string("integrator.name=") + integrator;
    CHECK_THAT(error_of({name, "integrator.unconstrained_form=implicit"}),
               Contains("unconstrained_form") && Contains("ode"));
    // A free body in absolute coordinates has no rate derivatives of its own: the default ODE
    // form leaves it in its DAE form, with analytic matrices.
    for (const char* form : {"ode", "dae"})
      CHECK(run_to_end("tests/data/free-body-implicit.toml", {name, std::string("integrator.unconstrained_form=") + form})
                .statistics.at("analytic_derivatives") == 1.0);
  }
  // ida's index-1 formulation has no analytic d(J V' - eta)/dq.
  CHECK_THAT(error_of({"integrator.name=ida", "integrator.formulation=index1-projection", "algorithm.name=newton-euler",
                       "integrator.newton_derivatives=analytic", "simulation.end_time=0.01"}),
             Contains("ida: integrator.newton_derivatives = \"analytic\" needs formulation = \"ggl\""));
  CHECK(error_of({"integrator.name=ida", "integrator.formulation=index1-projection", "algorithm.name=newton-euler",
                  "simulation.end_time=0.01"}) == "no error");
}

TEST_CASE("generalized-alpha with analytic and with differenced iteration matrices gives the same motion",
          "[newton-derivatives][generalized-alpha][heavy]") {
  // Paper 004's four link in every parameterization, both constraint levels; the spatial
  // four-bar in absolute coordinates (offset centres of mass, gyroscopic terms) and paper
  // 004's slider-crank (driven) on SO3xR3 and SE3.
  struct Case {
    std::string file, group, level;
  };
  std::vector<Case> cases;
  for (const auto& group : groups)
    for (const char* level : {"index2-stabilized", "index3"}) cases.push_back({"configs/paper-004/four-link.toml", group, level});
  for (const char* group : {"SO3xR3", "SE3"}) {
    cases.push_back({"configs/four-bar/spatial.toml", group, "index2-stabilized"});
    cases.push_back({"configs/paper-004/slider-crank.toml", group, "index2-stabilized"});
  }
  for (const Case& c : cases) {
    auto run_with = [&](const char* derivatives) {
      return run_to_end(c.file, {"group.name=" + c.group, "algorithm.name=newton-euler", "integrator.name=generalized-alpha",
                                 "integrator.constraint_level=" + c.level,
                                 std::string("integrator.newton_derivatives=") + derivatives,
                                 "integrator.newton_tolerance=1e-10", "simulation.step_size=1e-3",
                                 "simulation.end_time=0.4"});
    };
    const RunResult analytic = run_with("analytic"), differenced = run_with("finite-differences");
    INFO(c.file << " on " << c.group << ", " << c.level << ": Newton iterations "
                << analytic.statistics.at("newton_iterations") << " analytic, "
                << differenced.statistics.at("newton_iterations") << " differenced; iteration matrices "
                << analytic.statistics.at("jacobian_evaluations") << " and "
                << differenced.statistics.at("jacobian_evaluations"));
    // Both iterate to the scaled residual 1e-10 (h^2 beta 1e-10 in positions per step).
    check_same_fixed_step_runs(analytic, differenced, 1e-8, 1e-6);
  }
}

TEST_CASE("ida with the analytic Newton matrix and with IDA's difference quotients gives the same motion",
          "[newton-derivatives][ida][heavy]") {
  // GGL on paper 004's four link in every parameterization (SE3 and SO3xR3 through the chart
  // exp(xi) and its dexp), the spatial four-bar and the slider-crank.
  struct Case {
    std::string file, group;
  };
  std::vector<Case> cases;
  for (const auto& group : groups) cases.push_back({"configs/paper-004/four-link.toml", group});
  for (const char* group : {"SO3xR3", "SE3"}) {
    cases.push_back({"configs/four-bar/spatial.toml", group});
    cases.push_back({"configs/paper-004/slider-crank.toml", group});
  }
  for (const Case& c : cases) {
    auto run_with = [&](const char* derivatives) {
      return run_to_end(c.file, {"group.name=" + c.group, "algorithm.name=newton-euler", "integrator.name=ida",
                                 "integrator.relative_tolerance=1e-9", "integrator.absolute_tolerance=1e-11",
                                 std::string("integrator.newton_derivatives=") + derivatives,
                                 "simulation.step_size=1e-2", "simulation.end_time=1.0"});
    };
    const RunResult analytic = run_with("analytic"), differenced = run_with("finite-differences");
    const auto& a = analytic.statistics;
    const auto& d = differenced.statistics;
    INFO(c.file << " on " << c.group << ": steps " << a.at("steps") << " / " << d.at("steps") << ", Newton iterations "
                << a.at("newton_iterations") << " / " << d.at("newton_iterations") << ", Jacobians "
                << a.at("jacobian_evaluations") << " / " << d.at("jacobian_evaluations") << ", residuals "
                << a.at("residual_evaluations") << " / " << d.at("residual_evaluations")
                << " (analytic / differenced)");
    CHECK(a.at("analytic_derivatives") == 1.0);
    CHECK(d.at("analytic_derivatives") == 0.0);
    // Two runs of an adaptive method whose Newton iterations stop at a fraction of the local
    // error test: the same motion to the tolerance.
    check_same_motion(analytic, differenced, 1e-6, 1e-5);
    // The same work up to the step sequences of two adaptive runs, without the residuals of
    // the difference quotients. The step counts move by round-off: the four link in
    // euler-parameters went from within 10 % to 639 / 571 analytic / differenced steps when
    // bdfperf reordered newton-euler's sums (results equal to 1e-11), hence 20 %.
    CHECK(a.at("steps") <= 1.2 * d.at("steps"));
    CHECK(a.at("newton_iterations") <= 1.1 * d.at("newton_iterations"));
    CHECK(a.at("residual_evaluations") < d.at("residual_evaluations"));
  }
}

// --- Trees in relative coordinates (TreeForwardDynamics, algorithm aba) ---

TEST_CASE("analytic C and K of trees equal central differences on random trees, every representation and group",
          "[newton-derivatives][trees]") {
  using namespace liembs::testing;
  auto registry = build_tree_registry();
  const auto options = ConfigDocument::from_string("", "options");
  auto algorithm = registry->create<Algorithm>("aba", options->root());
  std::uint32_t seed = 300;
  for (const TreeVariant& variant : tree_variants()) {
    auto model = std::make_shared<const Model>(with_loads(random_tree_model(seed, variant.options), seed));
    const std::vector<std::string> group_names =
        variant.options.floating_base ? groups : std::vector<std::string>{"SE3"};
    for (std::size_t r = 0; r < representation_names.size(); ++r) {
      const std::string representation_name = representation_names[r];
      auto representation = registry->create<Representation>(representation_name, options->root());
      // Every representation on SE3, every other group with one representation (rotating).
      for (std::size_t g = 0; g < group_names.size(); ++g) {
        if (g != 0 && g % representation_names.size() != r) continue;
        auto group = registry->create<Group>(group_names[g], options->root());
        const DynamicsContext context{model, *group, group_names[g], representation.get(), representation_name};
        auto dynamics = algorithm->bind_forward_dynamics(context);
        check_system_derivatives(*dynamics, *group, ++seed,
                                 variant.name + " in " + representation_name + " on " + group_names[g], 1.0);
      }
    }
  }
}

TEST_CASE("analytic C, K and P of trees with loop closures equal central differences", "[newton-derivatives][trees]") {
  std::uint32_t seed = 400;
  for (const char* representation : {"body-fixed", "spatial", "hybrid", "mixed"}) {
    const std::vector<std::string> tree{"algorithm.name=aba", std::string("representation.name=") + representation};
    check_derivatives("configs/four-bar/planar.toml", "SE3", seed++, tree);
    check_derivatives("configs/four-bar/spatial.toml", "SE3", seed++, tree);
  }
  // The floating four-bar (loop closure on a floating base) under gravity, in every
  // parameterization of the base.
  for (const auto& group : groups)
    check_derivatives("tests/data/floating-four-bar.toml", group, seed++,
                      {"algorithm.name=aba", "model.gravity=[0.0, 0.0, -9.81]"});
}

TEST_CASE("integrators with analytic and with differenced Newton matrices give the same motion of trees",
          "[newton-derivatives][trees][heavy]") {
  struct Case {
    std::string file, group;
  };
  const std::vector<Case> cases{{"configs/four-bar/spatial.toml", "SE3"},
                                {"tests/data/floating-four-bar.toml", "SE3"},
                                {"tests/data/floating-four-bar.toml", "euler-parameters"},
                                {"configs/benchmarks/chain-6.toml", "SE3"},
                                {"configs/benchmarks/floating-torso.toml", "SO3xR3"}};
  for (const Case& c : cases) {
    auto run_with = [&](const std::vector<std::string>& integrator, const char* derivatives) {
      std::vector<std::string> overrides{"algorithm.name=aba", "group.name=" + c.group,
                                         std::string("integrator.newton_derivatives=") + derivatives,
                                         "model.gravity=[0.0, 0.0, -9.81]", "simulation.end_time=0.3"};
      overrides.insert(overrides.end(), integrator.begin(), integrator.end());
      return run_to_end(c.file, overrides);
    };
    INFO(c.file << " on " << c.group);
    // The integrator in the ODE and the DAE form, analytic, moves as `differenced` does.
    auto check_both_forms = [&](const std::vector<std::string>& integrator, const RunResult& differenced,
                                double pose_tolerance, double twist_tolerance) {
      for (const char* form : {"ode", "dae"}) {
        std::vector<std::string> with_form = integrator;
        with_form.push_back(std::string("integrator.unconstrained_form=") + form);
        const RunResult formed = run_with(with_form, "analytic");
        INFO(form << " form");
        CHECK(formed.statistics.at("analytic_derivatives") == 1.0);
        check_same_motion(formed, differenced, pose_tolerance, twist_tolerance);
      }
    };
    {
      const std::vector<std::string> alpha{"integrator.name=generalized-alpha", "integrator.newton_tolerance=1e-10",
                                           "simulation.step_size=1e-3"};
      const RunResult analytic = run_with(alpha, "analytic"), differenced = run_with(alpha, "finite-differences");
      CHECK(analytic.statistics.at("analytic_derivatives") == 1.0);
      CHECK(differenced.statistics.at("analytic_derivatives") == 0.0);
      check_same_motion(analytic, differenced, 1e-8, 1e-6);
      // Both forms of a tree without loops (ODE with dFD, DAE with dID; the default is one).
      check_both_forms(alpha, differenced, 1e-8, 1e-6);
    }
    {
      const std::vector<std::string> ida{"integrator.name=ida", "integrator.relative_tolerance=1e-9",
                                         "integrator.absolute_tolerance=1e-11", "simulation.step_size=1e-2"};
      const RunResult analytic = run_with(ida, "analytic"), differenced = run_with(ida, "finite-differences");
      const auto& a = analytic.statistics;
      const auto& d = differenced.statistics;
      INFO("ida steps " << a.at("steps") << " / " << d.at("steps") << ", Newton iterations " << a.at("newton_iterations")
                        << " / " << d.at("newton_iterations") << " (analytic / differenced)");
      CHECK(a.at("analytic_derivatives") == 1.0);
      CHECK(d.at("analytic_derivatives") == 0.0);
      check_same_motion(analytic, differenced, 1e-6, 1e-5);
      // Both forms of a tree without loops: the ODE V' = F with dFD (the default), the DAE
      // M V' = Q as GGL without constraint rows with dID.
      check_both_forms(ida, differenced, 1e-6, 1e-5);
      // No bound on the step counts: IDA's step sequence on these GGL systems moves with
      // perturbations of the Newton matrix far below its accuracy (on the spatial four-bar
      // 1e-12 relative noise in the analytic matrix moved the steps from 2473 to 1380, IDA's
      // own difference quotients took 867), see docs/newton-matrices.md.
    }
    {
      // bdf: fixed steps, so both matrices and both forms take the same steps to the same
      // motion within the Newton tolerance (its default here is the DAE form).
      const std::vector<std::string> bdf{"integrator.name=bdf", "integrator.order=2", "integrator.newton_tolerance=1e-8",
                                         "simulation.step_size=1e-3"};
      const RunResult analytic = run_with(bdf, "analytic"), differenced = run_with(bdf, "finite-differences");
      CHECK(analytic.statistics.at("analytic_derivatives") == 1.0);
      CHECK(differenced.statistics.at("analytic_derivatives") == 0.0);
      check_same_motion(analytic, differenced, 1e-8, 1e-6);
      check_both_forms(bdf, differenced, 1e-8, 1e-6);
    }
  }
}

// A third-party representation may bind tree dynamics without derivatives (its
// bind_derivatives throws; the test plugin 'skewed' does): the implicit integrators then
// difference the ODE V' = F (or the loop-closure DAE) as with newton_derivatives =
// "finite-differences", and only an explicit "analytic" is an error, naming the representation.
TEST_CASE("a representation without derivatives: the implicit integrators difference, 'analytic' names it",
          "[newton-derivatives][trees]") {
  const std::vector<std::string> files{"configs/benchmarks/chain-6.toml", "configs/benchmarks/floating-torso.toml",
                                       "configs/four-bar/spatial.toml"};
  for (const std::string& file : files)
    for (const char* integrator : {"bdf", "generalized-alpha", "ida"}) {
      INFO(file << ", " << integrator);
      const auto overrides = [&](const char* derivatives) {
        std::vector<std::string> list{"representation.name=skewed", "algorithm.name=aba",
                                      std::string("integrator.name=") + integrator, "simulation.end_time=0.02",
                                      "simulation.step_size=1e-3"};
        if (derivatives) list.push_back(std::string("integrator.newton_derivatives=") + derivatives);
        return list;
      };
      const RunResult fallback = run_to_end(file, overrides(nullptr), "skewed-representation");
      const RunResult differenced = run_to_end(file, overrides("finite-differences"), "skewed-representation");
      CHECK(fallback.statistics.at("analytic_derivatives") == 0.0);
      check_same_motion(fallback, differenced, 1e-14, 1e-12);  // the same path as asking for differences
      std::string error = "no error";
      try {
        Loaded loaded = load(file, overrides("analytic"), "skewed-representation");
        execute_run(loaded.run, RunOutput{});
      } catch (const std::exception& e) {
        error = e.what();
      }
      CHECK_THAT(error, Contains(std::string(integrator) + ": integrator.newton_derivatives = \"analytic\", but "
                                 "representation 'skewed' gives no analytic derivatives") &&
                            Contains("declares no RepresentationCapabilities::derivatives") && Contains("finite-differences"));
    }
}
