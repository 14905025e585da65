// Integrator plugin generalized-alpha: the Lie group generalized-alpha method of Brüls and
// Cardona (2010, "On the use of Lie group time integrators in multibody dynamics") and
// Arnold and Brüls (2007), for the constrained equations of motion (002 eq. 1)
//   M(q) V' + J(q)^T lambda = Q(q, V, t),   q' = q V,   g(q) = 0.
// One step of size h, with A = V' and the acceleration-like variable a:
//   q_{n+1} = q_n exp(h dq_n),   dq_n = V_n + (1/2 - beta) h a_n + beta h a_{n+1}      (1)
//   V_{n+1} = V_n + (1 - gamma) h a_n + gamma h a_{n+1}                                  (2)
//   (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) A_{n+1} + alpha_f A_n            (3)
// and the equations of motion at t_{n+1}: M A_{n+1} + J^T lambda_{n+1} = Q, with
//   index3:            g(q_{n+1}) = 0;
//   index2-stabilized: h dq_n gets the extra term J(q_n)^T nu (Arnold, Brüls, Cardona,
//                      "stabilized index-2", after Lunk and Simeon), and both
//                      g(q_{n+1}, t_{n+1}) = 0 and J(q_{n+1}) V_{n+1} = nu_{n+1} hold
//                      (nu: the velocity right-hand side of rheonomic constraints).
// The parameters follow from the spectral radius at infinity rho:
//   alpha_m = (2 rho - 1)/(rho + 1), alpha_f = rho/(rho + 1),
//   gamma = 1/2 + alpha_f - alpha_m, beta = (gamma + 1/2)^2 / 4.
// index2-stabilized is the default: index3 became unstable on the Cartesian pendulum for
// rho close to 1 at moderate steps (a growing oscillation of lambda and A), as an
// independent implementation of the same scheme did too.
// A_{n+1} is found by Newton's method; an ODE (no constraints) is solved as
// A - F(q, V, t) = 0 with F the velocity rates, i.e. M = 1, Q = F and no constraints.
// The iteration matrix takes C, K and P from the formulation's analytic derivatives where it
// gives them, by finite differences otherwise or on request ([integrator] newton_derivatives,
// NewtonDerivatives; docs/newton-matrices.md). A formulation without constraint rows (a tree
// without loops) is solved in its ODE form by default, with 1 + gamma' C + beta' K from the
// forward-dynamics derivatives (VelocityRateDerivatives), or with unconstrained_form = "dae"
// as M V' = Q from the inverse-dynamics derivatives (measured in docs/newton-matrices.md).
// Long chains (linear_solver = "gmres", and by default from matrix_free_threshold velocity
// coordinates on for the ODE form without constraints): Newton's linear systems are solved by
// GMRES on products of the exact iteration matrix, each a directional difference of the
// residual A - F (one O(n) forward dynamics, the articulated-body recursion), so no n x n
// matrix is formed or factored (KrylovSolver; docs/newton-matrices.md, "Long chains").
#include <liembs/config/config_table.hpp>
#include <liembs/config/solver_options.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/krylov_solver.hpp>
#include <liembs/sim/motion_equations.hpp>
#include <liembs/sim/newton_derivatives.hpp>
#include <liembs/sim/state_space.hpp>
#include <liembs/util/format.hpp>

#include <Eigen/LU>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace {

using namespace liembs;

enum class ConstraintLevel { index3, index2_stabilized };

// Velocity coordinates from which linear_solver's automatic choice is GMRES (ODE form without
// constraints): the dense path keeps its matrix for hundreds of steps, so it stays as cheap up
// to about 250 joints (bench-long-chains on random chains: 0.54 against 0.56 ms per step at 250,
// 0.70 against 0.65 at 300; docs/newton-matrices.md, "Long chains").
constexpr Eigen::Index matrix_free_threshold = 256;

struct AlphaParameters {
  double rho_infinity, alpha_m, alpha_f, gamma, beta;

  // Chung and Hulbert's optimal choice for a given spectral radius at infinity.
  static AlphaParameters from_spectral_radius(double rho) {
    AlphaParameters p{};
    p.rho_infinity = rho;
    p.alpha_m = (2.0 * rho - 1.0) / (rho + 1.0);
    p.alpha_f = rho / (rho + 1.0);
    p.gamma = 0.5 + p.alpha_f - p.alpha_m;
    p.beta = 0.25 * (p.gamma + 0.5) * (p.gamma + 0.5);
    return p;
  }
};

// The options, declared once (liembs plugins --options generalized-alpha, docs/plugin-options.md).
const OptionDeclaration& alpha_options() {
  static const OptionDeclaration declaration = [] {
    OptionDeclaration d{
        OptionSpec::number("rho_infinity", 0.9, Range::closed(0.0, 1.0),
                           "spectral radius at infinite frequency: 1 no numerical damping, 0 the most"),
        OptionSpec::choice("constraint_level", {"index3", "index2-stabilized"}, "index2-stabilized",
                           "index3 enforces g = 0; index2-stabilized also J V = 0"),
        OptionSpec::number("newton_tolerance", 1e-10, Range::positive(), "Newton tolerance on the residual"),
        OptionSpec::integer("max_newton_iterations", 20, 1, 1000, "Newton iterations per step before the step fails"),
        OptionSpec::boolean("reuse_iteration_matrix", true,
                            "keep the iteration matrix across steps while Newton contracts (false: rebuild every step)")};
    d.add(newton_options(matrix_free_threshold, UnconstrainedForm::ode));
    return d;
  }();
  return declaration;
}

class GeneralizedAlphaIntegrator final : public Integrator {
 public:
  explicit GeneralizedAlphaIntegrator(const ConfigTable& options)
      : parameters_(AlphaParameters::from_spectral_radius(alpha_options().number(options, "rho_infinity"))),
        level_(alpha_options().choice(options, "constraint_level") == "index3" ? ConstraintLevel::index3
                                                                                 : ConstraintLevel::index2_stabilized),
        tolerance_(alpha_options().number(options, "newton_tolerance")),
        max_iterations_(static_cast<int>(alpha_options().integer(options, "max_newton_iterations"))),
        derivatives_(read_derivative_method(options), read_unconstrained_form(options, UnconstrainedForm::ode)),
        reuse_iteration_matrix_(alpha_options().boolean(options, "reuse_iteration_matrix")),
        linear_solver_(read_linear_solver(options)) {}

  std::string description() const override {
    std::ostringstream out;
    out << "Lie group generalized-alpha, rho_inf = " << parameters_.rho_infinity
        << " (alpha_m = " << format_number(parameters_.alpha_m, 4)
        << ", alpha_f = " << format_number(parameters_.alpha_f, 4)
        << ", gamma = " << format_number(parameters_.gamma, 4)
        << ", beta = " << format_number(parameters_.beta, 4) << "), constraints "
        << (level_ == ConstraintLevel::index3 ? "index3" : "index2-stabilized") << ", Newton tolerance "
        << tolerance_;
    if (matrix_free_) {
      out << ", Newton matrix matrix-free (GMRES on differenced products of A - F)";
    } else {
      out << (reuse_iteration_matrix_ ? ", iteration matrix reused across steps" : "") << ", Newton matrix "
          << (derivatives_.method() == DerivativeMethod::finite_differences ? "by finite differences"
              : derivatives_.method() == DerivativeMethod::analytic          ? "analytic"
                                                                             : "analytic where available");
      if (linear_solver_ == LinearSolver::automatic)
        out << " (matrix-free GMRES for " << matrix_free_threshold << " or more velocity coordinates without constraints)";
    }
    out << (derivatives_.dae_form() ? ", unconstrained systems in DAE form" : "");
    return out.str();
  }
  int order() const override { return 2; }
  std::vector<std::pair<std::string, double>> statistics() const override {
    return {{"steps", static_cast<double>(steps_)},
            {"newton_iterations", static_cast<double>(newton_iterations_)},
            {"jacobian_evaluations", static_cast<double>(jacobian_evaluations_)},
            {"krylov_products", static_cast<double>(matrix_free_newton_.products())},
            {"analytic_derivatives", analytic_ ? 1.0 : 0.0}};
  }

  IntegratorCapabilities capabilities() const override { return {.accelerations = true, .multipliers = true}; }
  std::vector<MethodChoice> method_choices() const override { return derivatives_.method_choices(); }
  // A_{n+1} = V'(t_{n+1}) and lambda_{n+1} of the last step (they satisfy the equations of motion there).
  const Eigen::VectorXd* accelerations() const override { return &acceleration_; }
  const Eigen::VectorXd* multipliers() const override { return &multipliers_; }

  void start(const StateSpace& space, const State& initial) override {
    (void)space;
    (void)initial;
    acceleration_.resize(0);
    multipliers_.resize(0);
    has_history_ = false;  // a_0 = A_0 needs the dynamics: set at the first step
    matrix_step_size_ = 0.0;  // no iteration matrix yet
    steps_ = newton_iterations_ = jacobian_evaluations_ = 0;
    matrix_free_newton_.reset();
    derivatives_.reset();
  }

  // The history (A_n, a_n) is in the old chart's coordinates: restart from the index-1 solve.
  void charts_switched(const StateSpace&, const State&) override { has_history_ = false; }

  void step(const StateSpace& space, ForwardDynamics& dynamics, State& state, double h) override {
    MotionEquations equations(dynamics, static_cast<Eigen::Index>(space.velocity_dimension()), derivatives_.dae_form(),
                              derivatives_.analytic_odes());
    if (!has_history_ || state.time != history_time_) start_history(space, equations, state);
    solve_step(space, equations, state, h);
    ++steps_;
  }

 private:
  // a_0 = A_0 = V'(t_0) from the index-1 system (002 eq. 3), and lambda_0 with it.
  void start_history(const StateSpace& space, MotionEquations& equations, const State& state) {
    equations.evaluate(state, terms_, dae::all);
    if (equations.system())
      solve_index1(terms_, acceleration_, &multipliers_);
    else {
      acceleration_ = terms_.forces;
      multipliers_.resize(0);
    }
    if (!acceleration_.allFinite() || !multipliers_.allFinite())
      throw SimulationError("generalized-alpha: the initial accelerations at t = " + format_number(state.time) +
                            " s are not finite");
    pseudo_acceleration_ = acceleration_;
    matrix_free_ = uses_gmres(equations);
    if (linear_solver_ == LinearSolver::gmres && !matrix_free_)
      throw SimulationError("generalized-alpha: integrator.linear_solver = \"gmres\" solves the ODE form V' = F of a "
                            "formulation without constraints, and this run has " +
                            std::to_string(equations.constraint_count()) +
                            " constraint rows (or is in the DAE form); use linear_solver = \"dense\"");
    const unsigned needed = derivatives_needed(equations);
    derivatives_.choose(space, equations, needed, "generalized-alpha");
    analytic_ = !matrix_free_ && derivatives_.analytic_parts(equations, needed) == needed;
    if (matrix_free_) derivatives_.state_matrix_free(linear_solver_ == LinearSolver::gmres, matrix_free_threshold);
    correction_jacobian_ = terms_.jacobian;  // J(q_0), the direction of the index-2 correction
    has_history_ = true;
    history_time_ = state.time;
  }

  // Whether Newton's linear systems are solved matrix-free: the ODE form (M = 1, Q = F) without
  // constraints, on request or from matrix_free_threshold velocity coordinates on (unless the
  // run asks for differenced Newton matrices).
  bool uses_gmres(const MotionEquations& equations) const {
    if (linear_solver_ == LinearSolver::dense || equations.system() || equations.constraint_count() > 0) return false;
    if (linear_solver_ == LinearSolver::gmres) return true;
    return acceleration_.size() >= matrix_free_threshold && derivatives_.method() != DerivativeMethod::finite_differences;
  }

  // Builds the trial state of (1)-(3) for the current unknowns A_{n+1} and mu (nu = beta h^2 mu).
  void make_trial(const StateSpace& space, const State& base, double h) {
    make_trial(space, base, h, unknown_acceleration_, trial_, next_pseudo_acceleration_, increment_);
  }
  void make_trial(const StateSpace& space, const State& base, double h, const Eigen::VectorXd& acceleration,
                  State& trial, Eigen::VectorXd& next_pseudo_acceleration, Eigen::VectorXd& increment) const {
    const AlphaParameters& p = parameters_;
    next_pseudo_acceleration = known_pseudo_acceleration_ + acceleration_weight_ * acceleration;
    increment = known_increment_ + (p.beta * h * h) * next_pseudo_acceleration;
    if (level_ == ConstraintLevel::index2_stabilized && unknown_correction_.size() > 0)
      increment.noalias() += (p.beta * h * h) * (correction_jacobian_.transpose() * unknown_correction_);
    trial.poses = base.poses;
    trial.chart = base.chart;
    trial.coordinates = base.coordinates;
    space.retract_configuration(trial, increment);
    trial.velocities = known_velocity_ + (p.gamma * h) * next_pseudo_acceleration;
    trial.time = base.time + h;
  }

  // The Newton step of the matrix-free path (MatrixFreeNewton): GMRES on J d = -R with J the
  // exact derivative of R(A) = A - F(q(A), V(A)) along (1)-(3), each product one forward
  // dynamics at a probe trial state.
  bool solve_matrix_free(const StateSpace& space, MotionEquations& equations, const State& base, double h,
                         double forcing) {
    auto rates_at = [&](const Eigen::VectorXd& acceleration) -> const Eigen::VectorXd& {
      make_trial(space, base, h, acceleration, probe_, probe_pseudo_acceleration_, probe_increment_);
      equations.evaluate(probe_, probe_terms_, dae::forces);
      return probe_terms_.forces;
    };
    return matrix_free_newton_.solve(rates_at, unknown_acceleration_, terms_.forces, residual_, newton_step_, forcing);
  }

  // R = (M A + J^T lambda - Q,  g / (beta h^2) [, (J V - nu) / (gamma h)]) at the trial state, and
  // the scaled residual: max of |diag(M)^-1 R_dyn| / max(1, |A|, |diag(M)^-1 Q|), |g|, |J V - nu|.
  double evaluate_residual(MotionEquations& equations, double h) {
    const AlphaParameters& p = parameters_;
    const Eigen::Index n = unknown_acceleration_.size(), m = unknown_multipliers_.size();
    double scaled = 0.0;
    if (!equations.system()) {
      // The ODE form: M = 1 (its n x n identity is never formed or multiplied), R = A - F.
      equations.evaluate(trial_, terms_, dae::forces | dae::position_terms);
      residual_.head(n) = unknown_acceleration_ - terms_.forces;
      const double scale = std::max({1.0, unknown_acceleration_.lpNorm<Eigen::Infinity>(),
                                     terms_.forces.lpNorm<Eigen::Infinity>()});
      scaled = residual_.head(n).lpNorm<Eigen::Infinity>() / scale;
    } else {
      equations.evaluate(trial_, terms_, dae::mass | dae::forces | dae::position_terms);
      dynamic_residual(terms_, unknown_acceleration_, unknown_multipliers_, dynamic_residual_);
      residual_.head(n) = dynamic_residual_;
      // Euler parameters' M has zero diagonal entries (at p = (1, 0, 0, 0) the column of e0 in
      // G vanishes): those rows are weighted as the largest mass entry / 1000.
      const double floor = 1e-3 * terms_.mass.diagonal().cwiseAbs().maxCoeff();
      const Eigen::VectorXd inverse_diagonal = terms_.mass.diagonal().cwiseAbs().cwiseMax(floor).cwiseInverse();
      const double scale = std::max({1.0, unknown_acceleration_.lpNorm<Eigen::Infinity>(),
                                     inverse_diagonal.cwiseProduct(terms_.forces).lpNorm<Eigen::Infinity>()});
      scaled = inverse_diagonal.cwiseProduct(dynamic_residual_).lpNorm<Eigen::Infinity>() / scale;
    }
    if (m > 0) {
      residual_.segment(n, m) = terms_.residual / (p.beta * h * h);
      scaled = std::max(scaled, terms_.residual.lpNorm<Eigen::Infinity>());
      if (level_ == ConstraintLevel::index2_stabilized) {
        velocity_violation(terms_, trial_.velocities, velocity_violation_);
        residual_.segment(n + m, m) = velocity_violation_ / (p.gamma * h);
        scaled = std::max(scaled, velocity_violation_.lpNorm<Eigen::Infinity>());
      }
    }
    // NaN compares false everywhere: make it visible to the caller.
    return residual_.allFinite() ? scaled : std::numeric_limits<double>::quiet_NaN();
  }

  // C, K and for index 2 P, the derivatives the iteration matrix needs.
  unsigned derivatives_needed(const MotionEquations& equations) const {
    const bool index2 = level_ == ConstraintLevel::index2_stabilized && equations.constraint_count() > 0;
    return dae::damping | dae::stiffness | (index2 ? dae::velocity_constraint : 0u);
  }

  // The iteration matrix at the trial state (terms_ hold M, Q, J there). Derivatives of
  // M A + J^T lambda - Q along the retraction (K), of -Q w.r.t. V (C), and for index 2 of
  // J V - nu along the retraction (P), analytic where the formulation gives them and by
  // differences otherwise (NewtonDerivatives); the tangent operator of exp is replaced by the
  // identity (error O(h), it only slows the iteration down):
  //   [[M + gamma' C + beta' K,     J^T,  beta h^2 K J_n^T      ],
  //    [J c,                        0,    J J_n^T               ],   (g / (beta h^2))
  //    [J c + (beta h c/gamma) P,   0,    (beta h/gamma) P J_n^T]]   (J V / (gamma h), index 2)
  // with c = (1 - alpha_f)/(1 - alpha_m), gamma' = gamma h c, beta' = beta h^2 c.
  void evaluate_iteration_matrix(const StateSpace& space, MotionEquations& equations, double h) {
    derivatives_.evaluate(space, equations, trial_, terms_, unknown_acceleration_, unknown_multipliers_, derivative_values_,
                          derivatives_needed(equations));
    assemble_iteration_matrix(h);
    ++jacobian_evaluations_;
  }

  // The iteration matrix from the terms at the trial state (M, J) and the derivatives kept in
  // derivative_values_ (C, K, P), factorized.
  void assemble_iteration_matrix(double h) {
    const AlphaParameters& p = parameters_;
    const Eigen::Index n = unknown_acceleration_.size(), m = unknown_multipliers_.size();
    const Eigen::Index size = residual_.size();
    const bool index2 = level_ == ConstraintLevel::index2_stabilized && m > 0;
    const Eigen::MatrixXd& damping = derivative_values_.damping;
    const Eigen::MatrixXd& stiffness = derivative_values_.stiffness;
    const Eigen::MatrixXd& velocity_constraint = derivative_values_.velocity_constraint;

    const double c = acceleration_weight_;
    iteration_matrix_.setZero(size, size);
    iteration_matrix_.topLeftCorner(n, n) = terms_.mass + (p.gamma * h * c) * damping + (p.beta * h * h * c) * stiffness;
    if (m > 0) {
      iteration_matrix_.block(0, n, n, m) = terms_.jacobian.transpose();
      iteration_matrix_.block(n, 0, m, n) = c * terms_.jacobian;
      if (index2) {
        iteration_matrix_.block(0, n + m, n, m) = (p.beta * h * h) * (stiffness * correction_jacobian_.transpose());
        iteration_matrix_.block(n, n + m, m, m) = terms_.jacobian * correction_jacobian_.transpose();
        iteration_matrix_.block(n + m, 0, m, n) =
            c * terms_.jacobian + (p.beta * h * c / p.gamma) * velocity_constraint;
        iteration_matrix_.block(n + m, n + m, m, m) =
            (p.beta * h / p.gamma) * (velocity_constraint * correction_jacobian_.transpose());
      }
    }
    factorization_.compute(iteration_matrix_);
  }

  void solve_step(const StateSpace& space, MotionEquations& equations, State& state, double h) {
    const AlphaParameters& p = parameters_;
    const Eigen::Index n = static_cast<Eigen::Index>(space.velocity_dimension());
    const Eigen::Index m = equations.constraint_count();
    const Eigen::Index corrections = (level_ == ConstraintLevel::index2_stabilized) ? m : 0;
    if (state.velocities.size() != n || acceleration_.size() != n)
      throw SimulationError("generalized-alpha: the state has " + std::to_string(state.velocities.size()) +
                            " velocity coordinates, the state space " + std::to_string(n));

    // The parts of (1)-(3) that do not depend on A_{n+1}:
    //   a_{n+1} = (alpha_f A_n - alpha_m a_n)/(1 - alpha_m) + c A_{n+1}
    acceleration_weight_ = (1.0 - p.alpha_f) / (1.0 - p.alpha_m);
    known_pseudo_acceleration_ = (p.alpha_f * acceleration_ - p.alpha_m * pseudo_acceleration_) / (1.0 - p.alpha_m);
    known_velocity_ = state.velocities + ((1.0 - p.gamma) * h) * pseudo_acceleration_;
    known_increment_ = h * state.velocities + ((0.5 - p.beta) * h * h) * pseudo_acceleration_;

    // Predictor: A_{n+1} = A_n, lambda_{n+1} = lambda_n, nu = 0.
    unknown_acceleration_ = acceleration_;
    unknown_multipliers_ = multipliers_.size() == m ? multipliers_ : Eigen::VectorXd::Zero(m);
    unknown_correction_.setZero(corrections);
    residual_.resize(n + m + corrections);
    newton_step_.resize(residual_.size());

    int iteration = 0;
    double residual = 0.0, previous_residual = std::numeric_limits<double>::infinity();
    for (;; ++iteration) {
      make_trial(space, state, h);
      residual = evaluate_residual(equations, h);
      if (!std::isfinite(residual)) fail(equations, state, h, iteration, residual, "the residual is not finite");
      if (residual <= tolerance_) break;
      if (iteration == max_iterations_)
        fail(equations, state, h, iteration, residual, "the Newton iteration did not converge");
      if (matrix_free_) {
        if (!solve_matrix_free(space, equations, state, h, MatrixFreeNewton::forcing(tolerance_, residual)))
          fail(equations, state, h, iteration, residual, "the Krylov solve of the Newton step is not finite");
        unknown_acceleration_ += newton_step_;
        ++newton_iterations_;
        continue;
      }
      // Modified Newton: the iteration matrix of an earlier step is kept while the iteration
      // contracts fast (the residual falls below a quarter per iteration); it is rebuilt when
      // it does not, when h or the size changed, and at every step's start without reuse.
      const bool stale = matrix_step_size_ != h || iteration_matrix_.rows() != residual_.size() ||
                         !reuse_iteration_matrix_;
      if ((iteration == 0 && stale) || residual > 0.25 * previous_residual) {
        evaluate_iteration_matrix(space, equations, h);
        matrix_step_size_ = h;
      } else if (iteration == 0 && m == 0 && equations.system()) {
        // An unconstrained system in its DAE form (a tree, DynamicsCapabilities::dae_form): the kept C and K with
        // M(q) of this step. M dominates the matrix and moves with q (the ODE form has 1 there);
        // a stale M contracted by only about 0.2 per iteration, 6 iterations per step on a chain.
        assemble_iteration_matrix(h);
      }
      previous_residual = residual;
      newton_step_ = factorization_.solve(-residual_);
      if (!newton_step_.allFinite())
        fail(equations, state, h, iteration, residual, "the iteration matrix is singular");
      unknown_acceleration_ += newton_step_.head(n);
      if (m > 0) unknown_multipliers_ += newton_step_.segment(n, m);
      if (corrections > 0) unknown_correction_ += newton_step_.segment(n + m, corrections);
      ++newton_iterations_;
    }

    // Accept: q_{n+1}, V_{n+1}, and the history A_{n+1}, a_{n+1}, lambda_{n+1}.
    state.poses.swap(trial_.poses);
    state.chart.swap(trial_.chart);
    state.coordinates.swap(trial_.coordinates);
    state.velocities.swap(trial_.velocities);
    state.time = trial_.time;
    acceleration_ = unknown_acceleration_;
    pseudo_acceleration_ = next_pseudo_acceleration_;
    multipliers_ = unknown_multipliers_;
    if (corrections > 0) correction_jacobian_ = terms_.jacobian;  // J(q_{n+1}) for the next step
    history_time_ = state.time;
  }

  [[noreturn]] void fail(MotionEquations& equations, const State& state, double h, int iterations, double residual,
                         const std::string& what) {
    std::string message = "generalized-alpha: " + what + " in the step from t = " + format_number(state.time) +
                          " s with step size " + format_number(h) + " s (scaled residual " +
                          format_number(residual, 3) + " after " + std::to_string(iterations) +
                          " Newton iterations, tolerance " + format_number(tolerance_, 3) + ")";
    if (ConstrainedSystem* system = equations.system(); system && system->constraint_count() > 0) {
      message += "; worst constraint " + worst_constraint(system->blocks(), terms_.residual);
      if (level_ == ConstraintLevel::index2_stabilized)
        message += ", worst velocity constraint " + worst_constraint(system->blocks(), velocity_violation_, "|J V - nu|");
    }
    message += "; reduce simulation.step_size";
    throw SimulationError(message);
  }

  AlphaParameters parameters_;
  ConstraintLevel level_;
  double tolerance_;
  int max_iterations_;

  // History: A_n = V'(t_n), a_n, lambda_n, and J(q_n) for the index-2 correction.
  bool has_history_ = false;
  double history_time_ = 0.0;
  Eigen::VectorXd acceleration_, pseudo_acceleration_, multipliers_;
  Eigen::MatrixXd correction_jacobian_;

  // Newton unknowns A_{n+1}, lambda_{n+1}, mu (nu = beta h^2 mu) and the step's known parts.
  Eigen::VectorXd unknown_acceleration_, unknown_multipliers_, unknown_correction_;
  double acceleration_weight_ = 1.0;
  Eigen::VectorXd known_pseudo_acceleration_, known_velocity_, known_increment_, next_pseudo_acceleration_;

  // Workspaces.
  State trial_;
  DaeTerms terms_;
  Eigen::VectorXd increment_;
  Eigen::VectorXd residual_, dynamic_residual_, velocity_violation_, newton_step_;
  Eigen::MatrixXd iteration_matrix_;
  NewtonDerivatives derivatives_;
  DaeDerivatives derivative_values_;
  bool analytic_ = false;  // C, K (and P) analytic in this run
  Eigen::PartialPivLU<Eigen::MatrixXd> factorization_;

  // The matrix-free path (solve_matrix_free) and its probe trial state.
  MatrixFreeNewton matrix_free_newton_;
  State probe_;
  DaeTerms probe_terms_;
  Eigen::VectorXd probe_pseudo_acceleration_, probe_increment_;

  long long steps_ = 0, newton_iterations_ = 0, jacobian_evaluations_ = 0;
  bool reuse_iteration_matrix_ = true;
  LinearSolver linear_solver_;
  bool matrix_free_ = false;  // this run's Newton steps by GMRES (uses_gmres)
  double matrix_step_size_ = 0.0;  // the h the current iteration matrix was built for (0: none)
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Integrator>(
      "generalized-alpha", "1.0.0",
      "Lie group generalized-alpha (Brüls, Cardona, Arnold), second order, Newton on the index-3 or "
      "stabilized index-2 DAE; rho_infinity sets the numerical damping",
      alpha_options(), [](const liembs::ConfigTable& options) { return std::make_unique<GeneralizedAlphaIntegrator>(options); });
}
