// Integrator plugin ida: SUNDIALS IDA (variable-order, variable-step BDF, orders 1..5) for
// the equations of motion on S = G^n x R^m, written in local coordinates of the group
// around a reference point (paper 002 eq. 36):
//   X = X_ref exp(xi),   xi' = dexp^-1_{-xi}(V)   (vector-space part: q = q_ref + xi_q).
//
// Unknowns y and residuals F(t, y, y') = 0 of the formulations:
//   ode (no constraints)      y = (xi, V)
//     xi' - dexp^-1_{-xi}(V) = 0,   V' - rates(X, V) = 0
//     (unconstrained_form = "dae": a formulation that gives analytic derivatives, a tree, is
//     solved instead as ggl without constraint rows, M V' - Q = 0, unless newton_derivatives =
//     "finite-differences": DynamicsCapabilities::dae_form)
//   index1-projection         y = (xi, V, lambda); lambda algebraic
//     xi' - dexp^-1_{-xi}(V) = 0,   M V' + J^T lambda - Q = 0,   J V' - eta = 0   (002 eq. 3)
//     and at every output point the state is projected onto g = 0, J V = nu and IDA restarts.
//   ggl (default)             y = (xi, V, lambda, mu); lambda, mu algebraic
//     xi' - dexp^-1_{-xi}(V + J^T mu) = 0,   M V' + J^T lambda - Q = 0,   J V - nu = 0,   g = 0
// GGL (Gear, Gupta, Leimkuhler 1985) on the group: X^-1 X' = dexp_{-xi}(xi') = V + J^T mu,
// and J is the derivative of g along the retraction (constrained_system.hpp), so on a
// solution g' = J (V + J^T mu) - nu = J J^T mu = 0, hence mu = 0: an index-2 DAE whose
// solutions satisfy g = 0 and J V = nu exactly (up to IDA's Newton tolerance), without drift.
// (nu, the velocity right-hand side, is nonzero for rheonomic constraints only.)
//
// Re-basing: the chart X_ref exp(xi) is valid while each body's rotation |xi_omega| < 2 pi
// (dexp^-1 is singular there). When the largest rotation angle of a free body in xi exceeds
// `rebase_threshold` after an internal step (or at an output point), X_ref <- X_ref exp(xi),
// xi <- 0 and IDA is re-initialised with consistent V', lambda from the index-1 solve (GGL:
// after a projection onto g = 0, J V = nu). Re-initialising restarts IDA at order 1 with a
// small step, so it is done only then, not every step; translations and joint coordinates
// live in a vector space and never trigger it. The error weights of xi do not depend on the
// chart (see set_configuration_scale), so a re-base does not change the accuracy demanded.
//
// Newton matrix J = dF/dy + c_j dF/dy' (IDASetJacFn): for ggl it is assembled from the
// formulation's analytic C = -dQ/dV, K = d(M V' + J^T lambda - Q)/d delta and
// P = d(J V - nu)/d delta along the retraction (NewtonDerivatives; [integrator]
// newton_derivatives, see docs/newton-matrices.md). With X_ref exp(xi + e) =
// X_ref exp(xi) exp(dexp_{-xi} e + O(e^2)), a derivative along the retraction at X becomes one
// in xi through E = dexp_{-xi} = (dexp^-1_{-xi})^-1. Writing D = dexp^-1_{-xi}, w = V + J^T mu:
//   [[c_j 1 - d(D w)/dxi - D R E,  -D,          0,     -D J^T],
//    [K E,                          C + c_j M,  J^T,    0    ],
//    [P E,                          J,          0,      0    ],
//    [J E,                          0,          0,      0    ]]
// with R = d(J^T mu)/d delta = K(V', lambda + mu) - K(V', lambda) (K is linear in lambda).
// d(D w)/dxi, a derivative of the group's chart map only (no dynamics), is differenced.
// The ODE form (unconstrained_form = "ode", the default) is the same matrix with m = 0, M = 1,
// C = -dF/dV and K = -dF/d delta from the formulation's analytic rate derivatives (a tree's
// dFD, VelocityRateDerivatives; MotionEquations):
//   [[c_j 1 - d(D V)/dxi, -D], [K E, C + c_j 1]].
// Otherwise (index1-projection, formulations without analytic derivatives, or
// newton_derivatives = "finite-differences") IDA differences F itself, one residual per column.
// Long chains: the ODE form's Newton systems go to IDA's matrix-free GMRES (SUNLinSol_SPGMR,
// products J v by IDA's difference quotients of F, one forward dynamics each, no
// preconditioner) with linear_solver = "gmres", and by default from matrix_free_threshold velocity
// coordinates on; no 2n x 2n matrix is formed or factored (docs/newton-matrices.md, "Long chains").
#include <liembs/config/config_table.hpp>
#include <liembs/config/solver_options.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/motion_equations.hpp>
#include <liembs/sim/newton_derivatives.hpp>
#include <liembs/sim/state_space.hpp>
#include <liembs/util/format.hpp>

#include <Eigen/LU>

#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <type_traits>

namespace {

using namespace liembs;

enum class Formulation { ode, index1_projection, ggl };
// Velocity coordinates from which linear_solver's automatic choice is SPGMR (the ODE form):
// bench-long-chains on random chains, 0.12 against 0.15 ms per step at 64 joints, 0.18 against
// 0.34 at 100 (docs/newton-matrices.md, "Long chains").
constexpr Eigen::Index matrix_free_threshold = 64;

// SPGMR's Krylov dimension (IDA's default, 5, stalls on long chains).
constexpr int krylov_dimension = 40;

// --- RAII owners of the SUNDIALS objects ---
struct ContextDeleter {
  void operator()(SUNContext context) const { SUNContext_Free(&context); }
};
struct VectorDeleter {
  void operator()(N_Vector vector) const { N_VDestroy(vector); }
};
struct MatrixDeleter {
  void operator()(SUNMatrix matrix) const { SUNMatDestroy(matrix); }
};
struct LinearSolverDeleter {
  void operator()(SUNLinearSolver solver) const { SUNLinSolFree(solver); }
};
struct IdaMemoryDeleter {
  void operator()(void* memory) const { IDAFree(&memory); }
};
using ContextPtr = std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextDeleter>;
using VectorPtr = std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorDeleter>;
using MatrixPtr = std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixDeleter>;
using LinearSolverPtr = std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, LinearSolverDeleter>;
using IdaMemoryPtr = std::unique_ptr<void, IdaMemoryDeleter>;

std::string flag_name(int flag) {
  char* name = IDAGetReturnFlagName(flag);  // malloc'ed by SUNDIALS
  std::string text = name ? name : "flag " + std::to_string(flag);
  std::free(name);
  return text;
}

// IDA's counters; IDAReInit resets them, so the integrator adds up the finished segments.
struct IdaCounters {
  long steps = 0, residual_evaluations = 0, jacobian_evaluations = 0, jacobian_residual_evaluations = 0,
       newton_iterations = 0, convergence_failures = 0, error_test_failures = 0, linear_iterations = 0;

  IdaCounters& operator+=(const IdaCounters& other) {
    steps += other.steps;
    residual_evaluations += other.residual_evaluations;
    jacobian_evaluations += other.jacobian_evaluations;
    jacobian_residual_evaluations += other.jacobian_residual_evaluations;
    newton_iterations += other.newton_iterations;
    convergence_failures += other.convergence_failures;
    error_test_failures += other.error_test_failures;
    linear_iterations += other.linear_iterations;
    return *this;
  }
};

bool same_state(const State& a, const State& b) {
  if (a.time != b.time || a.poses.size() != b.poses.size() || a.chart != b.chart ||
      a.coordinates.size() != b.coordinates.size() ||
      a.velocities.size() != b.velocities.size())
    return false;
  for (std::size_t i = 0; i < a.poses.size(); ++i)
    if (a.poses[i].R != b.poses[i].R || a.poses[i].r != b.poses[i].r) return false;
  return a.coordinates == b.coordinates && a.velocities == b.velocities;
}

// The options, declared once (liembs plugins --options ida, docs/plugin-options.md).
const OptionDeclaration& ida_options() {
  static const OptionDeclaration declaration = [] {
    OptionDeclaration d{
        OptionSpec::choice("formulation", {"ggl", "index1-projection"}, "ggl",
                           "constrained systems as the GGL index-2 DAE or the index-1 DAE with projection"),
        OptionSpec::optional_boolean("projection", "true for index1-projection, false for ggl",
                                     "project onto g = 0, J V = nu at each output step"),
        OptionSpec::number("relative_tolerance", 1e-8, Range::positive(), "IDA's relative local error tolerance"),
        OptionSpec::number("absolute_tolerance", 1e-10, Range::positive(), "IDA's absolute local error tolerance"),
        OptionSpec::integer("max_order", 5, 1, 5, "highest BDF order IDA may use"),
        OptionSpec::integer("max_steps", 100000, 1, 1000000000, "IDA's internal steps per output step"),
        // Below pi the chart is far from the singularity of dexp^-1 at 2 pi.
        OptionSpec::number("rebase_threshold", 1.0, {0.0, 3.0, true, false},
                           "|xi| of the local chart (rad) from which it is rebased at the current pose")};
    d.add(newton_options(matrix_free_threshold, UnconstrainedForm::ode));
    return d;
  }();
  return declaration;
}

class IdaIntegrator final : public Integrator {
 public:
  explicit IdaIntegrator(const ConfigTable& options) {
    const OptionDeclaration& declared = ida_options();
    const std::string formulation = declared.choice(options, "formulation");
    constrained_formulation_ = formulation == "ggl" ? Formulation::ggl : Formulation::index1_projection;
    projection_ = declared.optional_boolean(options, "projection")
                      .value_or(constrained_formulation_ == Formulation::index1_projection);
    relative_tolerance_ = declared.number(options, "relative_tolerance");
    absolute_tolerance_ = declared.number(options, "absolute_tolerance");
    max_order_ = static_cast<int>(declared.integer(options, "max_order"));
    max_steps_ = static_cast<long>(declared.integer(options, "max_steps"));
    rebase_threshold_ = declared.number(options, "rebase_threshold");
    derivatives_ = NewtonDerivatives(read_derivative_method(options),
                                     read_unconstrained_form(options, UnconstrainedForm::ode));
    linear_solver_choice_ = read_linear_solver(options);
  }

  std::string description() const override {
    std::ostringstream out;
    out << "SUNDIALS IDA variable-order BDF (max order " << max_order_ << "), ";
    if (bound_ && m_ == 0) {
      out << (formulation_ == Formulation::ode ? "ODE" : "M V' = Q") << " in local coordinates (no constraints)";
    } else {
      out << (constrained_formulation_ == Formulation::ggl ? "GGL index-2 formulation" : "index-1 formulation")
          << (projection_ ? " with projection at output points" : "");
    }
    out << ", rtol " << relative_tolerance_ << ", atol " << absolute_tolerance_ << ", re-base above "
        << rebase_threshold_ << " rad, Newton matrix "
        << (bound_ && krylov_ ? "matrix-free (SPGMR on IDA's difference quotients)"
            : bound_ ? (analytic_jacobian_ ? "analytic" : "by finite differences")
            : derivatives_.method() == DerivativeMethod::finite_differences ? "by finite differences"
            : derivatives_.method() == DerivativeMethod::analytic           ? "analytic"
                                                                            : "analytic where available");
    return out.str();
  }

  std::vector<MethodChoice> method_choices() const override { return derivatives_.method_choices(); }

  // Variable order and step size: no single order of accuracy (max order in description()).
  int order() const override { return 0; }

  IntegratorCapabilities capabilities() const override { return {.accelerations = true, .multipliers = true}; }
  // V' and lambda at the last output point (IDA's interpolant; empty before the first step).
  const Eigen::VectorXd* accelerations() const override { return &reported_acceleration_; }
  const Eigen::VectorXd* multipliers() const override { return &reported_multipliers_; }

  std::vector<std::pair<std::string, double>> statistics() const override {
    IdaCounters total = finished_;
    total += current_counters();
    return {{"steps", double(total.steps)},
            {"residual_evaluations", double(total.residual_evaluations + total.jacobian_residual_evaluations)},
            {"jacobian_evaluations", double(total.jacobian_evaluations)},
            {"newton_iterations", double(total.newton_iterations)},
            {"nonlinear_convergence_failures", double(total.convergence_failures)},
            {"error_test_failures", double(total.error_test_failures)},
            {"rebases", double(rebases_)},
            {"chart_switches", double(chart_switches_)},
            {"reinitializations", double(reinitializations_)},
            {"projections", double(projections_)},
            {"multiplier_weights_relaxed", relaxed_multipliers_ ? 1.0 : 0.0},
            {"krylov_iterations", double(total.linear_iterations)},
            {"analytic_derivatives", analytic_jacobian_ ? 1.0 : 0.0}};
  }

  void start(const StateSpace&, const State&) override {
    // A new run: fresh solver, fresh counters. IDA is set up at the first step, when the
    // dynamics (and whether it has constraints) is known.
    free_solver();
    bound_ = false;
    has_output_ = false;
    reported_acceleration_.resize(0);
    reported_multipliers_.resize(0);
    finished_ = {};
    rebases_ = reinitializations_ = projections_ = chart_switches_ = 0;
  }

  void step(const StateSpace& space, ForwardDynamics& dynamics, State& state, double h) override {
    if (!(bound_ && has_output_ && &space == space_ && &dynamics == dynamics_ && same_state(state, last_output_)))
      begin(space, dynamics, state);  // first step, or the state was changed outside

    const double t_from = state.time, t_out = state.time + h;
    long internal_steps = 0;
    for (;;) {
      sunrealtype t_current = 0;
      IDAGetCurrentTime(ida_.get(), &t_current);
      if (t_current >= t_out) break;
      if (internal_steps == max_steps_)
        fail(flag_name(IDA_TOO_MUCH_WORK), t_from, t_out,
             "more than max_steps = " + std::to_string(max_steps_) + " internal steps in one output step");
      ++internal_steps;
      // One internal step at a time (IDA_ONE_STEP), so that the chart can be re-based between
      // steps when an output step is long; output values come from IDA's interpolant.
      sunrealtype t_reached = 0;
      callback_error_ = nullptr;
      ida_message_.clear();
      const int flag = IDASolve(ida_.get(), std::max(t_out, t_current + h), &t_reached, y_.get(), yp_.get(),
                                IDA_ONE_STEP);
      solved_since_init_ = true;
      if (flag == IDA_CONV_FAIL && relax_multiplier_weights()) continue;
      if (flag < 0) fail(flag_name(flag), t_from, t_out);
      // IDA has no lower bound on h: steps at the round-off of t mean a singularity
      // (blow-up, forces that stop being finite); stop instead of creeping towards it.
      sunrealtype last_step = 0;
      IDAGetLastStep(ida_.get(), &last_step);
      if (std::abs(last_step) < 64 * std::numeric_limits<double>::epsilon() * std::max(std::abs(t_reached), 1.0)) {
        // Newton failing at every step size (see error_weights) need not end in IDA_CONV_FAIL:
        // IDA may keep accepting ever smaller steps after repeated convergence failures. The
        // first time, that is the multipliers' Newton test too strict, not a singularity.
        if (relax_multiplier_weights()) continue;
        fail("step size underflow", t_from, t_out, "the step size fell to the round-off of t");
      }
      if (t_reached < t_out && needs_rebase(NV_DATA_S(y_.get()))) {
        State rebased = state_from(NV_DATA_S(y_.get()), t_reached);
        rebase(rebased);
      } else if (t_reached < t_out && space.chart_dimension() > 0) {
        // Euler angles near gimbal lock: switch the chart and restart there (the run does the
        // same between output steps, and step() then restarts through same_state()).
        State current = state_from(NV_DATA_S(y_.get()), t_reached);
        if (space.update_charts(current)) {
          ++chart_switches_;
          restart_at(current);
        }
      }
    }
    for (const int derivative : {0, 1}) {
      const int flag = IDAGetDky(ida_.get(), t_out, derivative, derivative == 0 ? output_.get() : output_rate_.get());
      if (flag < 0) fail(flag_name(flag), t_from, t_out);
    }
    State next = state_from(NV_DATA_S(output_.get()), t_out);
    if (!StateSpace::is_finite(next))
      fail("non-finite state", t_from, t_out, "the interpolated state at t = " + format_number(t_out) + " s is not finite");

    bool restarted = false;
    if (m_ > 0 && projection_ && violates_constraints(next)) {
      // Projection restarts IDA (at order 1), so it is done only when g or J V has drifted
      // beyond absolute_tolerance; below that it would change the state by less.
      project_onto_constraints(space, *system_, next, projection_settings());
      ++projections_;
      reinitialize(next);
      restarted = true;
    } else if (needs_rebase(NV_DATA_S(output_.get()))) {
      rebase(next);  // at the output point: IDA's last step beyond t_out is discarded
      restarted = true;
    }
    // V' and lambda at t_out: from IDA's interpolant, or the consistent ones it restarted with.
    N_Vector values_vector = restarted ? y_.get() : output_.get(), rates_vector = restarted ? yp_.get() : output_rate_.get();
    const Eigen::Map<const Eigen::VectorXd> values(NV_DATA_S(values_vector), size_), rates(NV_DATA_S(rates_vector), size_);
    reported_acceleration_ = rates.segment(n_, n_);
    reported_multipliers_ = values.segment(2 * n_, m_);
    state = next;
    last_output_ = next;
    has_output_ = true;
  }

 private:
  // Binds the run's dynamics, creates the solver for its size and starts IDA at `initial`.
  void begin(const StateSpace& space, ForwardDynamics& dynamics, const State& initial) {
    space_ = &space;
    dynamics_ = &dynamics;
    n_ = static_cast<Eigen::Index>(space.velocity_dimension());
    // A tree without loops that gives analytic derivatives is solved in its ODE form with the
    // rate derivatives, or with unconstrained_form = "dae" as GGL without constraint rows,
    // M V' = Q (DynamicsCapabilities::dae_form); either way its Newton matrix is analytic.
    equations_.emplace(dynamics, n_, derivatives_.dae_form(), derivatives_.analytic_odes());
    system_ = equations_->system();
    m_ = system_ ? system_->constraint_count() : 0;
    formulation_ = m_ > 0 ? constrained_formulation_ : system_ ? Formulation::ggl : Formulation::ode;
    choose_jacobian();
    const bool krylov = formulation_ == Formulation::ode && linear_solver_choice_ != LinearSolver::dense &&
                        (linear_solver_choice_ == LinearSolver::gmres ||
                         (n_ >= matrix_free_threshold && derivatives_.method() != DerivativeMethod::finite_differences));
    if (linear_solver_choice_ == LinearSolver::gmres && !krylov)
      throw SimulationError("ida: integrator.linear_solver = \"gmres\" solves the ODE form of a formulation without "
                            "constraints, and this run has " + std::to_string(m_) +
                            " constraint rows (or is in the DAE form); use linear_solver = \"dense\"");
    if (krylov) {  // products by IDA's difference quotients
      analytic_jacobian_ = false;
      derivatives_.state_matrix_free(linear_solver_choice_ == LinearSolver::gmres, matrix_free_threshold);
    }
    const Eigen::Index size = formulation_ == Formulation::ggl ? 2 * n_ + 2 * m_ : 2 * n_ + m_;
    if (!ida_ || size != size_ || formulation_ != solver_formulation_ || krylov != krylov_) {
      krylov_ = krylov;
      create_solver(size);
    }
    solver_formulation_ = formulation_;
    bound_ = true;
    relaxed_multipliers_ = false;
    xi_.setZero(n_);

    State start = initial;
    // The DAE has solutions only on g = 0, J V = nu: an inconsistent initial state is
    // projected (the mass-weighted closest point) before IDA starts.
    if ((formulation_ == Formulation::ggl && m_ > 0) || (formulation_ == Formulation::index1_projection && projection_)) {
      project_onto_constraints(space, *system_, start, projection_settings());
      ++projections_;
    }
    reinitialize(start);
  }

  void free_solver() {
    if (solved_since_init_) finished_ += current_counters();
    solved_since_init_ = false;
    ida_initialized_ = false;
    ida_.reset();
    linear_solver_.reset();
    matrix_.reset();
    algebraic_ids_.reset();
    output_rate_.reset();
    output_.reset();
    yp_.reset();
    y_.reset();
    context_.reset();
  }

  void create_solver(Eigen::Index size) {
    free_solver();
    size_ = size;
    SUNContext context = nullptr;
    if (SUNContext_Create(nullptr, &context) != 0) throw SimulationError("ida: SUNContext_Create failed");
    context_.reset(context);
    const auto length = static_cast<sunindextype>(size);
    y_.reset(N_VNew_Serial(length, context));
    yp_.reset(N_VNew_Serial(length, context));
    output_.reset(N_VNew_Serial(length, context));
    output_rate_.reset(N_VNew_Serial(length, context));
    algebraic_ids_.reset(N_VNew_Serial(length, context));
    if (!krylov_) matrix_.reset(SUNDenseMatrix(length, length, context));
    if (!y_ || !yp_ || !output_ || !output_rate_ || !algebraic_ids_ || (!krylov_ && !matrix_))
      throw SimulationError("ida: cannot allocate SUNDIALS vectors of length " + std::to_string(size));
    linear_solver_.reset(krylov_ ? SUNLinSol_SPGMR(y_.get(), SUN_PREC_NONE, krylov_dimension, context)
                                 : SUNLinSol_Dense(y_.get(), matrix_.get(), context));
    ida_.reset(IDACreate(context));
    if (!linear_solver_ || !ida_) throw SimulationError("ida: cannot create the IDA solver");
    // 1 marks differential components (xi, V), 0 algebraic ones (lambda, mu).
    Eigen::Map<Eigen::VectorXd> ids(NV_DATA_S(algebraic_ids_.get()), size);
    ids.setZero();
    ids.head(2 * n_).setOnes();
  }

  // Restarts IDA at its last accepted step with the multipliers' Newton weights relaxed (see
  // error_weights); IDA leaves y there after a failure. Once per run, and only with
  // multipliers: false if that was done already (or there are none).
  bool relax_multiplier_weights() {
    if (m_ == 0 || relaxed_multipliers_) return false;
    relaxed_multipliers_ = true;
    sunrealtype t_last = 0;
    IDAGetCurrentTime(ida_.get(), &t_last);
    State restart = state_from(NV_DATA_S(y_.get()), t_last);
    restart_at(restart);
    return true;
  }

  // X_ref <- X_ref exp(xi), xi <- 0.
  void rebase(State& state) {
    ++rebases_;
    restart_at(state);
  }

  // Restarts IDA at `state` with the chart there. GGL restarts on g = 0, J V = nu exactly:
  // IDA's Newton leaves J V off by up to a few times the tolerance (its test is an RMS norm),
  // and at the restart that offset would be a jump that no step size removes, failing the
  // error test of the first step. The projection moves the state by less than the tolerance.
  void restart_at(State& state) {
    if (formulation_ == Formulation::ggl && m_ > 0) {
      project_onto_constraints(*space_, *system_, state, projection_settings());
      ++projections_;
    }
    reinitialize(state);
  }

  // Starts (or restarts) IDA at `state` with xi = 0 and consistent derivatives:
  // xi' = V, (V', lambda) from the index-1 system (002 eq. 3), mu = 0.
  void reinitialize(const State& state) {
    reference_ = state;
    work_ = state;
    Eigen::Map<Eigen::VectorXd> y(NV_DATA_S(y_.get()), size_), yp(NV_DATA_S(yp_.get()), size_);
    y.setZero();
    yp.setZero();
    y.segment(n_, n_) = state.velocities;
    yp.head(n_) = state.velocities;
    if (formulation_ == Formulation::ode) {
      dynamics_->velocity_rates(state, rates_);
    } else {
      system_->evaluate(state, terms_, dae::all);
      solve_index1(terms_, rates_, &multipliers_);
      y.segment(2 * n_, m_) = multipliers_;
    }
    yp.segment(n_, n_) = rates_;
    set_configuration_scale(state);
    if (!y.allFinite() || !yp.allFinite())
      throw SimulationError("ida: the accelerations are not finite at t = " + format_number(state.time) +
                            " s (initial conditions of IDA)" + constraint_report(state));

    if (solved_since_init_) finished_ += current_counters();
    solved_since_init_ = false;
    const double first_step = initial_step_size();
    if (!ida_initialized_) {
      check(IDAInit(ida_.get(), &IdaIntegrator::residual_callback, state.time, y_.get(), yp_.get()), "IDAInit");
      check(IDASetUserData(ida_.get(), this), "IDASetUserData");
      check(IDASetErrHandlerFn(ida_.get(), &IdaIntegrator::error_callback, this), "IDASetErrHandlerFn");
      check(IDAWFtolerances(ida_.get(), &IdaIntegrator::error_weights_callback), "IDAWFtolerances");
      check(IDASetLinearSolver(ida_.get(), linear_solver_.get(), matrix_.get()), "IDASetLinearSolver");
      check(IDASetMaxOrd(ida_.get(), max_order_), "IDASetMaxOrd");
      if (formulation_ != Formulation::ode) {
        check(IDASetId(ida_.get(), algebraic_ids_.get()), "IDASetId");
        check(IDASetSuppressAlg(ida_.get(), SUNTRUE), "IDASetSuppressAlg");  // no error test on lambda, mu
      }
      ida_initialized_ = true;
    } else {
      check(IDAReInit(ida_.get(), state.time, y_.get(), yp_.get()), "IDAReInit");
      ++reinitializations_;
    }
    // nullptr: IDA's own difference quotients (the matrix-free solver has no matrix to set).
    if (!krylov_)
      check(IDASetJacFn(ida_.get(), analytic_jacobian_ ? &IdaIntegrator::jacobian_callback : nullptr), "IDASetJacFn");
    check(IDASetInitStep(ida_.get(), first_step), "IDASetInitStep");
  }

  // Error weights w = 1 / (rtol |y| + atol) would depend on the chart for xi: strict right
  // after a re-base (xi = 0), loose later, and a point accepted in one chart could fail the
  // error test in the next. So xi is weighted as the configuration it stands for:
  // 1 / (rtol max(s, |xi|) + atol) with the scale s = 1 rad for rotations, |r| of the
  // reference pose for translations and |q_ref| for joint coordinates. V, lambda, mu get
  // IDA's usual weights.
  void set_configuration_scale(const State& state) { space_->configuration_scale(state, configuration_scale_); }

  int error_weights(const double* y_data, double* weights_data) const {
    const Eigen::Map<const Eigen::VectorXd> y(y_data, size_);
    Eigen::Map<Eigen::VectorXd> weights(weights_data, size_);
    weights.head(n_) = (relative_tolerance_ * configuration_scale_.cwiseMax(y.head(n_).cwiseAbs()))
                           .array() + absolute_tolerance_;
    weights.segment(n_, n_) = (relative_tolerance_ * y.segment(n_, n_).cwiseAbs()).array() + absolute_tolerance_;
    if (m_ > 0) {
      // Multipliers only enter IDA's Newton convergence test (they have no error test). They
      // are weighted against their block's magnitude (lambda) or the velocities' (mu). In the
      // index-2 iteration the round-off of the residual reaches lambda and mu amplified by
      // about 1/h, and at tight tolerances (rtol 1e-10 to 1e-12, with the model) Newton then
      // fails at any step size (IDA_CONV_FAIL, h falling to 1e-13). After such a failure the
      // run goes on with relaxed multiplier weights, the square roots of the tolerances
      // (relax_multiplier_weights). Not from the start: the relaxed test lets Newton stop
      // earlier, and on the heavy top that cost about 1.5 times the steps at rtol 1e-8 to 1e-11.
      const double tolerance = relaxed_multipliers_ ? std::sqrt(relative_tolerance_) : relative_tolerance_;
      const double floor = relaxed_multipliers_ ? std::sqrt(absolute_tolerance_) : absolute_tolerance_;
      const double lambda_scale = y.segment(2 * n_, m_).cwiseAbs().maxCoeff();
      weights.segment(2 * n_, m_).setConstant(tolerance * lambda_scale + floor);
      if (formulation_ == Formulation::ggl) {
        const double mu_scale = y.segment(n_, n_).cwiseAbs().maxCoeff();
        weights.segment(2 * n_ + m_, m_).setConstant(tolerance * mu_scale + floor);
      }
    }
    weights = weights.cwiseInverse();
    return 0;
  }

  static int error_weights_callback(N_Vector y, N_Vector weights, void* user_data) {
    return static_cast<const IdaIntegrator*>(user_data)->error_weights(NV_DATA_S(y), NV_DATA_S(weights));
  }

  // IDA's own first step, h = 0.5 / ||y'||_wrms, is tiny here (h ~ 1e-11 for xi' = V at
  // atol = 1e-10 when a coordinate's scale is 0), and at such steps the index-2 GGL
  // iteration matrix (rows scaled h^0 against h^-1) is too ill-conditioned for Newton.
  // Instead: the backward-Euler local error on xi, (h^2 / 2) ||xi''||_wrms with xi'' ~ V',
  // set to half the tolerance. 0 lets IDA choose.
  double initial_step_size() {
    Eigen::VectorXd weights(size_);
    error_weights(NV_DATA_S(y_.get()), weights.data());
    const Eigen::Map<const Eigen::VectorXd> yp(NV_DATA_S(yp_.get()), size_);
    const double weighted = yp.segment(n_, n_).cwiseProduct(weights.head(n_)).norm() / std::sqrt(double(2 * n_));
    return weighted > 0.0 && std::isfinite(weighted) ? std::sqrt(1.0 / weighted) : 0.0;
  }

  void check(int flag, const char* function) const {
    if (flag < 0) throw SimulationError(std::string("ida: ") + function + " failed: " + flag_name(flag) +
                                        (ida_message_.empty() ? "" : " (" + ida_message_ + ")"));
  }

  // X_ref exp(xi) with velocities V, from the unknowns y.
  void set_state(State& out, const double* y, double time) {
    out.time = time;
    out.poses = reference_.poses;
    out.chart = reference_.chart;
    out.coordinates = reference_.coordinates;
    out.velocities = Eigen::Map<const Eigen::VectorXd>(y + n_, n_);
    xi_ = Eigen::Map<const Eigen::VectorXd>(y, n_);
    space_->retract_configuration(out, xi_);
  }
  State state_from(const double* y, double time) {
    State out;
    set_state(out, y, time);
    return out;
  }

  // The largest rotation angle of a free body in the local coordinates (0 on a chart, where
  // the coordinates are global and never need a re-base).
  bool needs_rebase(const double* y) const { return space_->largest_rotation(y) > rebase_threshold_; }

  bool violates_constraints(const State& state) {
    system_->evaluate(state, terms_, dae::position_terms);
    velocity_violation(terms_, state.velocities, violation_);
    return !(terms_.residual.lpNorm<Eigen::Infinity>() <= absolute_tolerance_ &&
             violation_.lpNorm<Eigen::Infinity>() <= absolute_tolerance_);
  }

  ProjectionSettings projection_settings() const {
    ProjectionSettings settings;
    settings.tolerance = std::max(1e-12, 1e-2 * absolute_tolerance_);
    return settings;
  }

  // F(t, y, y') of the formulation (see the top of the file).
  int residual(double t, const double* y_data, const double* yp_data, double* r_data) {
    set_state(work_, y_data, t);
    const Eigen::Map<const Eigen::VectorXd> y(y_data, size_), yp(yp_data, size_);
    Eigen::Map<Eigen::VectorXd> r(r_data, size_);
    const auto V = y.segment(n_, n_);
    const auto xi_rate = yp.head(n_);
    const auto V_rate = yp.segment(n_, n_);
    switch (formulation_) {
      case Formulation::ode:
        dynamics_->velocity_rates(work_, rates_);
        space_->dexpinv_left(xi_, work_.velocities, chart_velocity_);
        r.head(n_) = xi_rate - chart_velocity_;
        r.segment(n_, n_) = V_rate - rates_;
        break;
      case Formulation::index1_projection:
        system_->evaluate(work_, terms_, dae::mass | dae::forces | dae::jacobian | dae::acceleration_rhs);
        space_->dexpinv_left(xi_, work_.velocities, chart_velocity_);
        r.head(n_) = xi_rate - chart_velocity_;
        r.segment(n_, n_).noalias() = terms_.mass * V_rate + terms_.jacobian.transpose() * y.segment(2 * n_, m_);
        r.segment(n_, n_) -= terms_.forces;
        r.segment(2 * n_, m_).noalias() = terms_.jacobian * V_rate;
        r.segment(2 * n_, m_) -= terms_.acceleration_rhs;
        break;
      case Formulation::ggl:
        system_->evaluate(work_, terms_, dae::mass | dae::forces | dae::residual | dae::jacobian | dae::velocity_rhs);
        moving_velocity_ = V;
        moving_velocity_.noalias() += terms_.jacobian.transpose() * y.segment(2 * n_ + m_, m_);  // V + J^T mu
        space_->dexpinv_left(xi_, moving_velocity_, chart_velocity_);
        r.head(n_) = xi_rate - chart_velocity_;
        r.segment(n_, n_).noalias() = terms_.mass * V_rate + terms_.jacobian.transpose() * y.segment(2 * n_, m_);
        r.segment(n_, n_) -= terms_.forces;
        r.segment(2 * n_, m_).noalias() = terms_.jacobian * V;
        if (terms_.velocity_rhs.size() != 0) r.segment(2 * n_, m_) -= terms_.velocity_rhs;
        r.segment(2 * n_ + m_, m_) = terms_.residual;
        break;
    }
    return r.allFinite() ? 0 : 1;  // recoverable: IDA retries with a smaller step
  }

  static int residual_callback(sunrealtype t, N_Vector y, N_Vector yp, N_Vector r, void* user_data) {
    auto* self = static_cast<IdaIntegrator*>(user_data);
    try {
      return self->residual(t, NV_DATA_S(y), NV_DATA_S(yp), NV_DATA_S(r));
    } catch (...) {  // never let an exception cross IDA's C frames
      self->callback_error_ = std::current_exception();
      self->callback_error_where_ = "in the residual";
      return -1;
    }
  }

  // The Newton matrix from analytic derivatives (ggl, or the ODE form with rate derivatives)
  // when the formulation gives C, K and P and the run does not ask for differences;
  // newton_derivatives = "analytic" where that is not possible is an error.
  void choose_jacobian() {
    constexpr unsigned needed = dae::damping | dae::stiffness | dae::velocity_constraint;
    const MotionEquations& equations = *equations_;
    derivatives_.reset();
    if (derivatives_.method() == DerivativeMethod::analytic && formulation_ == Formulation::index1_projection)
      throw SimulationError(
          "ida: integrator.newton_derivatives = \"analytic\" needs formulation = \"ggl\" (the index-1 "
          "formulation's d(J V' - eta)/dq is not available analytically); use newton_derivatives = "
          "\"finite-differences\", or leave the key out");
    derivatives_.choose(*space_, equations, needed, "ida");
    analytic_jacobian_ = formulation_ != Formulation::index1_projection &&
                         derivatives_.analytic_parts(equations, needed) == needed;
    if (!analytic_jacobian_) {  // IDA then forms the whole matrix by its own difference quotients
      std::string reason = "formulation = \"index1-projection\" has no analytic d(J V' - eta)/dq";
      if (formulation_ != Formulation::index1_projection)
        for (const auto& choice : derivatives_.method_choices())
          if (choice.topic == "newton_matrix") reason = choice.reason;
      derivatives_.forget_choice("group_derivatives");
      derivatives_.state_choice({"newton_matrix", "finite-differences", reason + "; IDA's difference quotients"});
    }
  }

  // J = dF/dy + c_j dF/dy' of the ggl residual, or of the ODE (m = 0, M = 1; see the top of the
  // file), column-major into `out`.
  int jacobian(double t, double cj, const double* y_data, const double* yp_data, double* out) {
    constexpr unsigned needed = dae::damping | dae::stiffness | dae::velocity_constraint;
    set_state(work_, y_data, t);  // also xi_
    const Eigen::Map<const Eigen::VectorXd> y(y_data, size_), yp(yp_data, size_);
    MotionEquations& equations = *equations_;
    // The ODE form's M = 1 and empty J need no evaluation of the rates (Q).
    equations.evaluate(work_, terms_, dae::mass | dae::jacobian | dae::velocity_rhs | (system_ ? dae::forces : 0u));
    acceleration_ = yp.segment(n_, n_);
    multipliers_ = y.segment(2 * n_, m_);
    derivatives_.evaluate(*space_, equations, work_, terms_, acceleration_, multipliers_, derivative_values_, needed);
    // R = d(J^T mu)/d delta, from K at lambda + mu (none without constraint rows).
    if (m_ > 0) {
      multipliers_ += y.segment(2 * n_ + m_, m_);
      derivatives_.evaluate(*space_, equations, work_, terms_, acceleration_, multipliers_, shifted_values_,
                            dae::stiffness);
      shifted_values_.stiffness -= derivative_values_.stiffness;
    }

    // D = dexp^-1_{-xi} column by column (it is linear in its argument), E = D^-1.
    chart_map_.resize(n_, n_);
    unit_.setZero(n_);
    for (Eigen::Index i = 0; i < n_; ++i) {
      unit_(i) = 1.0;
      space_->dexpinv_left(xi_, unit_, chart_velocity_);
      chart_map_.col(i) = chart_velocity_;
      unit_(i) = 0.0;
    }
    chart_map_lu_.compute(chart_map_);
    tangent_map_ = chart_map_lu_.inverse();
    // d(D w)/dxi by central differences of the chart map, w = V + J^T mu.
    moving_velocity_ = y.segment(n_, n_);
    moving_velocity_.noalias() += terms_.jacobian.transpose() * y.segment(2 * n_ + m_, m_);
    chart_derivative_.resize(n_, n_);
    for (Eigen::Index i = 0; i < n_; ++i) {
      const double step = 1e-6 * std::max(1.0, std::abs(xi_(i)));
      shifted_xi_ = xi_;
      shifted_xi_(i) += step;
      space_->dexpinv_left(shifted_xi_, moving_velocity_, chart_velocity_);
      shifted_xi_(i) = xi_(i) - step;
      space_->dexpinv_left(shifted_xi_, moving_velocity_, unit_);
      chart_derivative_.col(i) = (chart_velocity_ - unit_) / (2.0 * step);
    }
    unit_.setZero(n_);

    Eigen::Map<Eigen::MatrixXd> matrix(out, size_, size_);
    const Eigen::Index n = n_, m = m_;
    const DaeDerivatives& d = derivative_values_;
    matrix.setZero();
    matrix.topLeftCorner(n, n) = -chart_derivative_;
    if (m > 0) matrix.topLeftCorner(n, n).noalias() -= chart_map_ * shifted_values_.stiffness * tangent_map_;
    matrix.topLeftCorner(n, n).diagonal().array() += cj;
    matrix.block(0, n, n, n) = -chart_map_;
    matrix.block(0, 2 * n + m, n, m).noalias() = -chart_map_ * terms_.jacobian.transpose();
    matrix.block(n, 0, n, n).noalias() = d.stiffness * tangent_map_;
    matrix.block(n, n, n, n) = d.damping + cj * terms_.mass;
    matrix.block(n, 2 * n, n, m) = terms_.jacobian.transpose();
    matrix.block(2 * n, 0, m, n).noalias() = d.velocity_constraint * tangent_map_;
    matrix.block(2 * n, n, m, n) = terms_.jacobian;
    matrix.block(2 * n + m, 0, m, n).noalias() = terms_.jacobian * tangent_map_;
    return matrix.allFinite() ? 0 : 1;  // recoverable: IDA retries with a smaller step
  }

  static int jacobian_callback(sunrealtype t, sunrealtype cj, N_Vector y, N_Vector yp, N_Vector, SUNMatrix matrix,
                               void* user_data, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<IdaIntegrator*>(user_data);
    try {
      return self->jacobian(t, cj, NV_DATA_S(y), NV_DATA_S(yp), SM_DATA_D(matrix));
    } catch (...) {  // never let an exception cross IDA's C frames
      self->callback_error_ = std::current_exception();
      self->callback_error_where_ = "in the Newton matrix (analytic derivatives)";
      return -1;
    }
  }

  static void error_callback(int code, const char*, const char* function, char* message, void* user_data) {
    if (code >= 0) return;  // warnings are not reported
    auto* self = static_cast<IdaIntegrator*>(user_data);
    self->ida_message_ = std::string(function ? function : "IDA") + ": " + (message ? message : "");
  }

  IdaCounters current_counters() const {
    IdaCounters c;
    if (!ida_ || !solved_since_init_) return c;
    void* memory = ida_.get();
    IDAGetNumSteps(memory, &c.steps);
    IDAGetNumResEvals(memory, &c.residual_evaluations);
    IDAGetNumJacEvals(memory, &c.jacobian_evaluations);
    IDAGetNumLinResEvals(memory, &c.jacobian_residual_evaluations);
    IDAGetNumNonlinSolvIters(memory, &c.newton_iterations);
    IDAGetNumNonlinSolvConvFails(memory, &c.convergence_failures);
    IDAGetNumErrTestFails(memory, &c.error_test_failures);
    IDAGetNumLinIters(memory, &c.linear_iterations);
    return c;
  }

  // "; worst constraint joint 'j' (|g| = ...)" at a state, for failure messages.
  std::string constraint_report(const State& state) {
    if (m_ == 0) return {};
    try {
      DaeTerms terms;
      system_->evaluate(state, terms, dae::residual);
      return "; worst constraint " + worst_constraint(system_->blocks(), terms.residual);
    } catch (const std::exception& error) {
      return std::string("; constraints not available: ") + error.what();
    }
  }

  [[noreturn]] void fail(const std::string& reason, double t_from, double t_out, const std::string& detail = {}) {
    sunrealtype t_reached = t_from, last_step = 0, current_step = 0;
    IDAGetCurrentTime(ida_.get(), &t_reached);
    IDAGetLastStep(ida_.get(), &last_step);
    IDAGetCurrentStep(ida_.get(), &current_step);
    std::ostringstream message;
    message << "IDA failed in the output step from t = " << format_number(t_from) << " s to "
            << format_number(t_out) << " s: reached t = " << format_number(t_reached, 12) << " s, last step size "
            << format_number(last_step) << " s, attempted step size " << format_number(current_step) << " s ("
            << reason;
    if (!detail.empty()) message << ": " << detail;
    else if (!ida_message_.empty()) message << ": " << ida_message_;
    message << ")";
    if (callback_error_) {
      try {
        std::rethrow_exception(callback_error_);
      } catch (const std::exception& error) {
        message << "; " << callback_error_where_ << ": " << error.what();
      } catch (...) {
        message << "; " << callback_error_where_ << ": unknown exception";
      }
    }
    // IDA leaves y at the last accepted step (time t_reached).
    message << constraint_report(state_from(NV_DATA_S(y_.get()), t_reached));
    message << "; check the forces and the initial state, or loosen the integrator's tolerances";
    has_output_ = false;  // a later step() restarts IDA from the state it is given
    throw SimulationError(message.str());
  }

  // Options.
  Formulation constrained_formulation_ = Formulation::ggl;
  bool projection_ = false;
  double relative_tolerance_ = 1e-8, absolute_tolerance_ = 1e-10, rebase_threshold_ = 1.0;
  int max_order_ = 5;
  long max_steps_ = 100000;

  // The problem, bound at the first step.
  bool bound_ = false;
  const StateSpace* space_ = nullptr;
  ForwardDynamics* dynamics_ = nullptr;
  std::optional<MotionEquations> equations_;  // of the bound dynamics (begin)
  ConstrainedSystem* system_ = nullptr;        // equations_->system(): null for the ODE form
  Formulation formulation_ = Formulation::ode;
  Formulation solver_formulation_ = Formulation::ode;  // the one IDA's memory was set up for
  Eigen::Index n_ = 0, m_ = 0, size_ = 0;

  State reference_;    // X_ref: the point the local coordinates xi are taken at
  State work_;         // X_ref exp(xi) with velocities V, where the residual is evaluated
  State last_output_;  // the state step() returned last
  bool has_output_ = false;
  bool relaxed_multipliers_ = false;  // after a convergence failure (error_weights)

  // SUNDIALS objects, destroyed in reverse order (the context last).
  ContextPtr context_;
  VectorPtr y_, yp_, output_, output_rate_, algebraic_ids_;  // output_rate_: y' at the output point
  MatrixPtr matrix_;
  LinearSolver linear_solver_choice_ = LinearSolver::automatic;
  bool krylov_ = false;  // this solver's Newton systems by SPGMR (begin)
  LinearSolverPtr linear_solver_;
  IdaMemoryPtr ida_;
  bool ida_initialized_ = false;
  bool solved_since_init_ = false;

  // Workspaces.
  DaeTerms terms_;
  Eigen::VectorXd configuration_scale_;  // error-weight scale of xi (see set_configuration_scale)
  Eigen::VectorXd xi_, chart_velocity_, moving_velocity_, rates_, multipliers_, violation_;
  // The analytic Newton matrix (jacobian()).
  NewtonDerivatives derivatives_;
  bool analytic_jacobian_ = false;
  DaeDerivatives derivative_values_, shifted_values_;
  Eigen::VectorXd acceleration_, unit_, shifted_xi_;
  Eigen::VectorXd reported_acceleration_, reported_multipliers_;  // accelerations(), multipliers()
  Eigen::MatrixXd chart_map_, tangent_map_, chart_derivative_;
  Eigen::PartialPivLU<Eigen::MatrixXd> chart_map_lu_;

  // Statistics and error reporting.
  IdaCounters finished_;  // of the IDA segments ended by a re-initialisation
  long rebases_ = 0, reinitializations_ = 0, projections_ = 0, chart_switches_ = 0;
  std::string ida_message_;
  std::exception_ptr callback_error_;
  const char* callback_error_where_ = "";  // which callback threw callback_error_
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Integrator>(
      "ida", "1.0.0",
      "SUNDIALS IDA variable-order BDF in local group coordinates; constrained systems as GGL index-2 "
      "or index-1 DAE with projection",
      ida_options(), [](const liembs::ConfigTable& options) { return std::make_unique<IdaIntegrator>(options); });
}
