// Integrator plugin bdf: the index-3 BDF method of paper 004 §3 for the constrained
// equations of motion (002 eq. 1)
//   M(q) V' + J(q)^T lambda = Q(q, V, t),   q' = q V,   g(q, t) = 0,
// with fixed steps, of order 1 (the paper's backward Euler, eqs. 32a-d) or 2 (BDF2, same
// structure). With a = V'_{n+1} and, in the chart q = q_n exp(xi) (xi_n = 0,
// xi_{n-1} = -xi_prev, the increment of the previous step, exactly):
//   V_{n+1}  = alpha1 V_n + alpha2 V_{n-1} + beta h a                         (32a, b)
//   xi_{n+1} = -alpha2 xi_prev + beta h dexp^-1_{-xi}(V_{n+1}),  q_{n+1} = q_n exp(xi_{n+1})   (32c, d)
// BDF1: alpha1 = 1, alpha2 = 0, beta = 1, so xi = h V_{n+1} and A_{n+1} = A_n exp(h omega~).
// BDF2 with the step ratio w = h_n / h_{n-1}: alpha1 = (1+w)^2/(1+2w), alpha2 = -w^2/(1+2w),
// beta = (1+w)/(1+2w) (beta0 = 2/3 at w = 1); its first step is BDF1. dexp^-1 is evaluated at
// xi0 = -alpha2 xi_prev + beta h V (one fixed-point step, error O(h^4)).
// Newton on (a, lambda) for the residual (34)
//   R = (M a + J^T lambda - Q,  g / (beta^2 h^2))
// with the matrix, all at the trial state,
//   full:          [[M + beta h C + beta^2 h^2 K, J^T], [J, 0]]   rebuilt every iteration (38)
//   quasi-newton:  [[M + beta h C, J^T], [J, 0]]                   frozen per step (the codes of §3.1)
// where C = -dQ/dV (the gyroscopic term of G_omega-omega) and K the derivative of
// M a + J^T lambda - Q along the retraction (applied and reaction-force sensitivities,
// Tables 3-6), analytic where the formulation gives them and by differences otherwise
// (NewtonDerivatives, newton_derivatives in TOML; a tree without loops is solved as M V' = Q
// with dID, or with unconstrained_form = "ode" as V' = F with dFD, 1.2-1.8x dearer here since
// the matrix is built every step); the tangent operator of exp is replaced by
// the identity (eq. 37). M + beta h C is block diagonal in absolute coordinates, and the
// quasi-Newton system is solved through its Schur complement (NewtonSystem).
// Converged when ||delta|| <= Theta (eq. 46), Theta fixed or Theta h^2 fixed.
// Long chains (linear_solver = "gmres", and by default from matrix_free_threshold velocity
// coordinates on for a formulation without constraints, unless unconstrained_form = "dae" is
// given): the ODE form V' = F, Newton's systems solved by GMRES on products of the exact
// Newton matrix of R(a) = a - F, each a directional difference of R (one O(n) forward dynamics);
// no n x n matrix is formed or factored (KrylovSolver; docs/newton-matrices.md, "Long chains").
#include <liembs/config/config_table.hpp>
#include <liembs/config/solver_options.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/krylov_solver.hpp>
#include <liembs/sim/motion_equations.hpp>
#include <liembs/sim/newton_derivatives.hpp>
#include <liembs/sim/newton_system.hpp>
#include <liembs/sim/state_space.hpp>
#include <liembs/sim/time_grid.hpp>
#include <liembs/util/format.hpp>

#include <Eigen/LU>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <vector>

namespace {

using namespace liembs;

enum class NewtonMatrix { quasi_newton, quasi_newton_reused, full };

// Velocity coordinates from which linear_solver's automatic choice is GMRES (no constraints):
// bdf builds its matrix every step, so GMRES is as cheap from 64 joints on and cheaper above
// (bench-long-chains on random chains: 0.13 against 0.13 ms per step at 64, 0.21 against 0.34 at
// 100; docs/newton-matrices.md, "Long chains").
constexpr Eigen::Index matrix_free_threshold = 64;

NewtonMatrix newton_matrix_kind(const std::string& name) {
  if (name == "full") return NewtonMatrix::full;
  return name == "quasi-newton-reused" ? NewtonMatrix::quasi_newton_reused : NewtonMatrix::quasi_newton;
}

// The options, declared once (liembs plugins --options bdf, docs/plugin-options.md).
const OptionDeclaration& bdf_options() {
  static const OptionDeclaration declaration = [] {
    OptionDeclaration d{
        OptionSpec::integer("order", 1, 1, 2, "1: backward Euler (paper 004's C1/C2), 2: BDF2"),
        OptionSpec::choice("newton_matrix", {"quasi-newton", "quasi-newton-reused", "full"}, "quasi-newton",
                           "full: M + h gamma C + h^2 beta K every iteration; quasi-newton: frozen per step; "
                           "-reused: kept across steps while Newton contracts"),
        OptionSpec::integer("max_newton_iterations", 25, 1, 1000, "Newton iterations per step before the step fails"),
        OptionSpec::optional(OptionSpec::required_number("newton_tolerance", Range::positive(),
                                                         "Newton tolerance Theta on the correction (not with "
                                                         "newton_tolerance_h2)"),
                             "newton_tolerance_h2 applies"),
        OptionSpec::number("newton_tolerance_h2", 1e-11, Range::positive(),
                           "Newton tolerance as Theta h^2 (scaled with the step, the authors' choice)")};
    d.add(newton_options(matrix_free_threshold, UnconstrainedForm::dae));
    return d;
  }();
  return declaration;
}

class BdfIntegrator final : public Integrator {
 public:
  explicit BdfIntegrator(const ConfigTable& options)
      : order_(static_cast<int>(bdf_options().integer(options, "order"))),
        matrix_kind_(newton_matrix_kind(bdf_options().choice(options, "newton_matrix"))),
        max_iterations_(static_cast<int>(bdf_options().integer(options, "max_newton_iterations"))),
        derivatives_(read_derivative_method(options), read_unconstrained_form(options, UnconstrainedForm::dae)),
        form_given_(options.contains("unconstrained_form")),
        linear_solver_(read_linear_solver(options)) {
    if (options.contains("newton_tolerance") && options.contains("newton_tolerance_h2"))
      options.fail("newton_tolerance_h2",
                   "give either newton_tolerance (Theta) or newton_tolerance_h2 (Theta h^2), not both");
    if (const auto tolerance = bdf_options().optional_number(options, "newton_tolerance")) {
      tolerance_ = *tolerance;
      scale_tolerance_ = false;
    } else {
      tolerance_ = bdf_options().number(options, "newton_tolerance_h2");
      scale_tolerance_ = true;
    }
  }

  std::string description() const override {
    std::ostringstream out;
    out << (order_ == 1 ? "index-3 backward Euler (BDF1)" : "index-3 BDF2") << ", ";
    if (matrix_free_)
      out << "Newton matrix matrix-free (GMRES on differenced products of a - F, the ODE form)";
    else
      out << (matrix_kind_ == NewtonMatrix::full           ? "full Newton matrix"
            : matrix_kind_ == NewtonMatrix::quasi_newton ? "quasi-Newton matrix frozen per step"
                                                         : "quasi-Newton matrix kept across steps while Newton contracts");
    out << ", Newton tolerance " << (scale_tolerance_ ? "Theta h^2 = " : "Theta = ") << tolerance_
        << ", at most " << max_iterations_ << " iterations, derivatives "
        << (derivatives_.method() == DerivativeMethod::finite_differences ? "by finite differences"
            : derivatives_.method() == DerivativeMethod::analytic          ? "analytic"
                                                                           : "analytic where available");
    return out.str();
  }
  int order() const override { return order_; }
  std::vector<std::pair<std::string, double>> statistics() const override {
    return {{"steps", static_cast<double>(steps_)},
            {"newton_iterations", static_cast<double>(newton_iterations_)},
            {"matrix_factorizations", static_cast<double>(factorizations_)},
            {"newton_iterations_per_step", steps_ ? static_cast<double>(newton_iterations_) / steps_ : 0.0},
            {"damping_evaluations", static_cast<double>(derivatives_.damping_evaluations())},
            {"krylov_products", static_cast<double>(matrix_free_newton_.products())},
            {"analytic_derivatives", analytic_ ? 1.0 : 0.0}};
  }

  IntegratorCapabilities capabilities() const override { return {.accelerations = true, .multipliers = true}; }
  std::vector<MethodChoice> method_choices() const override { return derivatives_.method_choices(); }
  const Eigen::VectorXd* accelerations() const override { return &acceleration_; }
  const Eigen::VectorXd* multipliers() const override { return &multipliers_; }

  void start(const StateSpace& space, const State& initial) override {
    (void)space;
    (void)initial;
    acceleration_.resize(0);
    multipliers_.resize(0);
    has_history_ = false;  // a_0, lambda_0 need the dynamics: set at the first step
    matrix_beta_h_ = 0.0;  // no Newton matrix yet
    steps_ = newton_iterations_ = factorizations_ = 0;
    matrix_free_newton_.reset();
    derivatives_.reset();
  }

  // The history (a_n, lambda_n, the BDF2 increment) is in the old chart's coordinates: restart
  // from the index-1 solve with a BDF1 step.
  void charts_switched(const StateSpace&, const State&) override { has_history_ = false; }

  void step(const StateSpace& space, ForwardDynamics& dynamics, State& state, double h) override {
    const auto n = static_cast<Eigen::Index>(space.velocity_dimension());
    const bool matrix_free = uses_gmres(dynamics, n);
    if (linear_solver_ == LinearSolver::gmres && !matrix_free)
      throw SimulationError("bdf: integrator.linear_solver = \"gmres\" solves the ODE form V' = F of a formulation "
                            "without constraints, and this run has constraints; use linear_solver = \"dense\"");
    if (matrix_free != matrix_free_) has_history_ = false;
    matrix_free_ = matrix_free;
    // The matrix-free path solves the ODE form (no derivatives); otherwise the form the options say.
    MotionEquations equations(dynamics, n, !matrix_free && derivatives_.dae_form(),
                              !matrix_free && derivatives_.analytic_odes());
    if (state.velocities.size() != n)
      throw SimulationError("bdf: the state has " + std::to_string(state.velocities.size()) +
                            " velocity coordinates, the state space " + std::to_string(n));
    if (!has_history_ || state.time != history_time_) start_history(space, equations, state);
    solve_step(space, equations, state, h);
    ++steps_;
  }

 private:
  // a_0 = V'(t_0) and lambda_0 from the index-1 system [[M, J^T], [J, 0]] (a, lambda) = (Q, eta),
  // solved as one saddle-point system (M may be only semi-definite: the constraints make it regular).
  void start_history(const StateSpace& space, MotionEquations& equations, const State& state) {
    if (matrix_free_) {  // the ODE form: a_0 = F, no multipliers, no matrix
      equations.evaluate(state, terms_, dae::forces);
      acceleration_ = terms_.forces;
      multipliers_.resize(0);
      if (!acceleration_.allFinite())
        throw SimulationError("bdf: the initial accelerations at t = " + format_number(state.time) + " s are not finite");
      analytic_ = false;
      derivatives_.state_matrix_free(linear_solver_ == LinearSolver::gmres, matrix_free_threshold);
      finish_history(state);
      return;
    }
    equations.evaluate(state, terms_, dae::all);
    const Eigen::Index n = terms_.mass.rows(), m = equations.constraint_count();
    matrix_.setZero(n + m, n + m);
    matrix_.topLeftCorner(n, n) = terms_.mass;
    rhs_.resize(n + m);
    rhs_.head(n) = terms_.forces;
    if (m > 0) {
      matrix_.block(0, n, n, m) = terms_.jacobian.transpose();
      matrix_.block(n, 0, m, n) = terms_.jacobian;
      rhs_.tail(m) = terms_.acceleration_rhs;
    }
    factorization_.compute(matrix_);
    const Eigen::VectorXd solution = factorization_.solve(rhs_);
    if (!solution.allFinite() || !((matrix_ * solution - rhs_).norm() <= 1e-8 * std::max(1.0, rhs_.norm())))
      throw SimulationError("bdf: the index-1 system for the initial accelerations at t = " +
                            format_number(state.time) +
                            " s is singular (redundant constraints, or a mass matrix the constraints do not complete)");
    acceleration_ = solution.head(n);
    multipliers_ = solution.tail(m);
    const unsigned needed = dae::damping | (matrix_kind_ == NewtonMatrix::full ? dae::stiffness : 0u);
    derivatives_.choose(space, equations, needed, "bdf");
    analytic_ = derivatives_.analytic_parts(equations, needed) == needed;
    finish_history(state);
  }

  void finish_history(const State& state) {
    matrix_beta_h_ = 0.0;  // the factorization now holds the index-1 system (or nothing)
    has_history_ = true;
    has_previous_step_ = false;  // the first step is BDF1
    history_time_ = state.time;
    time_grid_.reset();
  }

  // Whether this run's Newton steps are matrix-free (GMRES on the ODE form): on request, or
  // automatically from matrix_free_threshold velocity coordinates on, for a formulation without
  // constraints whose form the options leave open or set to "ode".
  bool uses_gmres(ForwardDynamics& dynamics, Eigen::Index n) const {
    if (linear_solver_ == LinearSolver::dense || dynamics.constraints()) return false;
    if (linear_solver_ == LinearSolver::gmres) return true;
    return n >= matrix_free_threshold && (!form_given_ || !derivatives_.dae_form()) &&
           derivatives_.method() != DerivativeMethod::finite_differences;
  }

  // q and V of the trial state for the current unknown a.
  void make_trial(const StateSpace& space, const State& base, double h) {
    make_trial(space, base, h, unknown_acceleration_, trial_, increment_);
  }
  void make_trial(const StateSpace& space, const State& base, double h, const Eigen::VectorXd& acceleration,
                  State& trial, Eigen::VectorXd& increment) {
    trial.velocities = known_velocity_ + (beta_ * h) * acceleration;
    if (known_increment_.size() == 0) {
      increment = h * trial.velocities;  // BDF1: exact in the chart (xi parallel to V)
    } else {
      first_increment_ = known_increment_ + (beta_ * h) * trial.velocities;
      space.dexpinv_left(first_increment_, trial.velocities, chart_velocity_);
      increment = known_increment_ + (beta_ * h) * chart_velocity_;
    }
    trial.poses = base.poses;
    trial.chart = base.chart;
    trial.coordinates = base.coordinates;
    space.retract_configuration(trial, increment);
    trial.time = trial_.time;
  }

  // The matrix-free Newton step (MatrixFreeNewton): GMRES on J d = -R with J the exact
  // derivative of R(a) = a - F(q(a), V(a)) along (32a-d), dexp^-1 and exp included, each
  // product one forward dynamics at a probe state.
  bool solve_matrix_free(const StateSpace& space, MotionEquations& equations, const State& base, double h,
                         double forcing) {
    auto rates_at = [&](const Eigen::VectorXd& acceleration) -> const Eigen::VectorXd& {
      make_trial(space, base, h, acceleration, probe_, probe_increment_);
      equations.evaluate(probe_, probe_terms_, dae::forces);
      return probe_terms_.forces;
    };
    return matrix_free_newton_.solve(rates_at, unknown_acceleration_, terms_.forces, residual_, newton_step_, forcing);
  }

  // R = (M a + J^T lambda - Q, g / (beta^2 h^2)) at the trial state (terms_ hold M, Q, g, J).
  void evaluate_residual(MotionEquations& equations, double h) {
    const Eigen::Index n = unknown_acceleration_.size(), m = unknown_multipliers_.size();
    if (!equations.system()) {  // the ODE form: M = 1 (never formed or multiplied), R = a - F
      equations.evaluate(trial_, terms_, dae::forces);
      residual_ = unknown_acceleration_ - terms_.forces;
      return;
    }
    equations.evaluate(trial_, terms_, dae::mass | dae::forces | dae::residual | dae::jacobian);
    dynamic_residual(terms_, unknown_acceleration_, unknown_multipliers_, dynamic_residual_);
    residual_.head(n) = dynamic_residual_;
    if (m > 0) residual_.tail(m) = terms_.residual / (beta_ * beta_ * h * h);
  }

  // The Newton matrix at the trial state (terms_ hold M, Q, J there), factorized: block
  // diagonal M + beta h C by its Schur complement, with K by a dense LU.
  void factorize_newton_matrix(const StateSpace& space, MotionEquations& equations, double h) {
    const bool full = matrix_kind_ == NewtonMatrix::full;
    derivatives_.evaluate(space, equations, trial_, terms_, unknown_acceleration_, unknown_multipliers_, derivatives_out_,
                          dae::damping | (full ? dae::stiffness : 0u));
    top_left_ = terms_.mass + (beta_ * h) * derivatives_out_.damping;
    if (full) top_left_ += (beta_ * beta_ * h * h) * derivatives_out_.stiffness;
    const BodyCoordinates& body = space.body_coordinates();
    const auto bodies = space.joint_coordinates() == 0 ? static_cast<Eigen::Index>(space.free_bodies()) : 0;
    newton_system_.factorize(top_left_, terms_.jacobian, body.velocity, bodies, body.internal_constraints > 0);
    ++factorizations_;
  }

  // The BDF coefficients of this step and the parts of V_{n+1}, xi_{n+1} that do not depend on a.
  void set_coefficients(const State& state, double h) {
    if (order_ == 2 && has_previous_step_) {
      const double w = h / previous_step_size_;
      const double alpha1 = (1.0 + w) * (1.0 + w) / (1.0 + 2.0 * w), alpha2 = -w * w / (1.0 + 2.0 * w);
      beta_ = (1.0 + w) / (1.0 + 2.0 * w);
      known_velocity_ = alpha1 * state.velocities + alpha2 * previous_velocities_;
      known_increment_ = -alpha2 * previous_increment_;
    } else {
      beta_ = 1.0;
      known_velocity_ = state.velocities;
      known_increment_.resize(0);
    }
  }

  void solve_step(const StateSpace& space, MotionEquations& equations, State& state, double h) {
    const Eigen::Index n = static_cast<Eigen::Index>(space.velocity_dimension());
    const Eigen::Index m = equations.constraint_count();
    set_coefficients(state, h);
    trial_.time = time_grid_.next(state.time, h);
    const double tolerance = scale_tolerance_ ? tolerance_ / (h * h) : tolerance_;

    // Predictor: a_{n+1} = a_n, lambda_{n+1} = lambda_n.
    unknown_acceleration_ = acceleration_;
    unknown_multipliers_ = multipliers_.size() == m ? multipliers_ : Eigen::VectorXd::Zero(m);
    residual_.resize(n + m);
    double correction = std::numeric_limits<double>::infinity(), previous_correction = correction;
    bool built_this_step = false;
    for (int iteration = 0;; ++iteration) {
      make_trial(space, state, h);
      evaluate_residual(equations, h);
      if (!residual_.allFinite()) fail(equations, state, h, iteration, correction, "the residual is not finite");
      if (iteration == max_iterations_)
        fail(equations, state, h, iteration, correction, "the Newton iteration did not converge");
      if (matrix_free_) {
        // (J is close to 1, so the correction |d| is close to |R|: the tolerance on d is one on R.)
        if (!solve_matrix_free(space, equations, state, h, MatrixFreeNewton::forcing(tolerance, residual_.norm())))
          fail(equations, state, h, iteration, correction, "the Krylov solve of the Newton step is not finite");
        unknown_acceleration_ += newton_step_;
        ++newton_iterations_;
        correction = newton_step_.norm();
        if (correction <= tolerance) break;
        continue;
      }
      // quasi-newton: built at the predictor of every step; quasi-newton-reused: kept across steps
      // (same beta h) and rebuilt when a correction does not fall below a quarter of the last.
      const bool stale = matrix_beta_h_ != beta_ * h;
      const bool rebuild = matrix_kind_ == NewtonMatrix::full ||
                           (matrix_kind_ == NewtonMatrix::quasi_newton && iteration == 0) ||
                           (matrix_kind_ == NewtonMatrix::quasi_newton_reused &&
                            ((iteration == 0 && stale) || (iteration > 0 && correction > 0.25 * previous_correction &&
                                                            !built_this_step)));
      if (rebuild) {
        factorize_newton_matrix(space, equations, h);
        matrix_beta_h_ = beta_ * h;
        built_this_step = true;
      }
      previous_correction = correction;
      newton_system_.solve(-residual_, newton_step_);
      if (!newton_step_.allFinite())
        fail(equations, state, h, iteration, correction, "the Newton matrix is singular");
      unknown_acceleration_ += newton_step_.head(n);
      unknown_multipliers_ += newton_step_.tail(m);
      ++newton_iterations_;
      correction = newton_step_.norm();
      if (correction <= tolerance) break;
    }
    make_trial(space, state, h);  // q_{n+1}, V_{n+1} of the converged a

    // Accept, keeping V_n and xi_{n+1} for BDF2.
    previous_velocities_.swap(state.velocities);
    previous_increment_ = increment_;
    previous_step_size_ = h;
    has_previous_step_ = true;
    state.poses.swap(trial_.poses);
    state.chart.swap(trial_.chart);
    state.coordinates.swap(trial_.coordinates);
    state.velocities = trial_.velocities;
    state.time = trial_.time;
    time_grid_.advance();
    acceleration_ = unknown_acceleration_;
    multipliers_ = unknown_multipliers_;
    history_time_ = state.time;
  }

  [[noreturn]] void fail(MotionEquations& equations, const State& state, double h, int iterations,
                         double correction, const std::string& what) {
    std::string message = "bdf: " + what + " in the step from t = " + format_number(state.time) +
                          " s with step size " + format_number(h) + " s (residual " +
                          format_number(residual_.norm(), 3) + ", last correction " +
                          format_number(correction, 3) + " after " + std::to_string(iterations) +
                          " Newton iterations, tolerance " +
                          format_number(scale_tolerance_ ? tolerance_ / (h * h) : tolerance_, 3) + ")";
    if (ConstrainedSystem* system = equations.system(); system && system->constraint_count() > 0)
      message += "; worst constraint " + worst_constraint(system->blocks(), terms_.residual);
    message += "; reduce simulation.step_size, or raise the tolerance (it cannot go below the round-off of "
               "g / (beta^2 h^2), which newton_tolerance_h2 follows)";
    throw SimulationError(message);
  }

  int order_;
  NewtonMatrix matrix_kind_;
  int max_iterations_;
  double tolerance_ = 1e-11;
  bool scale_tolerance_ = true;  // tolerance_ is Theta h^2

  // History: a_n = V'(t_n), lambda_n, and for BDF2 V_{n-1}, xi_n and h_{n-1}.
  bool has_history_ = false, has_previous_step_ = false;
  double history_time_ = 0.0, previous_step_size_ = 0.0;
  Eigen::VectorXd acceleration_, multipliers_, previous_velocities_, previous_increment_;
  TimeGrid time_grid_;

  // This step: coefficients, known parts and unknowns.
  double beta_ = 1.0;
  Eigen::VectorXd known_velocity_, known_increment_, unknown_acceleration_, unknown_multipliers_;

  // Workspaces.
  State trial_;
  DaeTerms terms_;
  Eigen::VectorXd increment_, first_increment_, chart_velocity_, rhs_;
  Eigen::VectorXd residual_, dynamic_residual_, newton_step_;
  Eigen::MatrixXd matrix_, top_left_;                 // the index-1 matrix; M + beta h C (+ beta^2 h^2 K)
  Eigen::PartialPivLU<Eigen::MatrixXd> factorization_;  // of the index-1 system
  NewtonDerivatives derivatives_;
  DaeDerivatives derivatives_out_;
  NewtonSystem newton_system_;
  bool analytic_ = false;  // C (and K for full) analytic in this run

  double matrix_beta_h_ = 0.0;  // the beta h the factorized Newton matrix was built for (0: none)

  // The matrix-free path (solve_matrix_free) and its probe state.
  bool form_given_ = false;   // unconstrained_form in the options
  LinearSolver linear_solver_ = LinearSolver::automatic;
  bool matrix_free_ = false;  // this run's Newton steps by GMRES (uses_gmres)
  MatrixFreeNewton matrix_free_newton_;
  State probe_;
  DaeTerms probe_terms_;
  Eigen::VectorXd probe_increment_;

  long long steps_ = 0, newton_iterations_ = 0, factorizations_ = 0;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Integrator>(
      "bdf", "1.0.0",
      "index-3 BDF of order 1 (backward Euler, paper 004) or 2 with fixed steps, Newton on accelerations and "
      "multipliers with the full or the frozen quasi-Newton matrix",
      bdf_options(), [](const liembs::ConfigTable& options) { return std::make_unique<BdfIntegrator>(options); });
}
