// Integrator plugin kinematics: the kinematic analysis of a fully driven mechanism (zero
// degrees of freedom), paper 004 §2.3. Each step solves, at t_{n+1} = t_0 + (n+1) h:
//   positions      g(q, t) = 0 by Newton along the retraction, J(q_k) delta = -g(q_k, t),
//                  q_{k+1} = q_k exp(delta), until ||delta|| <= tolerance       (eqs. 12, 14)
//                  (chord Newton: J factorized once per step, at the first iterate, as the
//                  authors' codes do; full Newton: at every iterate);
//   velocities     J V = nu (the driving constraints' f')                       (eq. 15)
//   accelerations  J V' = eta                                                     (eq. 16)
//   multipliers    J^T lambda = Q - M V': the index-1 system at the kinematic state,
//                  whose lambda give the reaction forces (-J^T lambda on the bodies).
// The mechanism must have as many independent constraints as velocity coordinates; any
// other is refused at the first step with its number of degrees of freedom.
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>
#include <liembs/sim/time_grid.hpp>
#include <liembs/util/format.hpp>

#include <Eigen/LU>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace {

using namespace liembs;

// The options, declared once (liembs plugins --options kinematics, docs/plugin-options.md).
const OptionDeclaration& kinematics_options() {
  static const OptionDeclaration declaration{
      OptionSpec::choice("newton", {"chord", "full"}, "chord",
                         "chord: the Jacobian of the first iteration kept; full: rebuilt every iteration"),
      OptionSpec::choice("predictor", {"previous", "velocity"}, "previous",
                         "start of Newton: the previous positions, or extrapolated with the velocities"),
      OptionSpec::number("tolerance", 1e-10, Range::positive(), "Newton tolerance on the position constraints"),
      OptionSpec::integer("max_iterations", 25, 1, 1000, "Newton iterations per time point before it fails")};
  return declaration;
}

class KinematicAnalysis final : public Integrator {
 public:
  explicit KinematicAnalysis(const ConfigTable& options)
      : chord_(kinematics_options().choice(options, "newton") == "chord"),
        extrapolate_(kinematics_options().choice(options, "predictor") == "velocity"),
        tolerance_(kinematics_options().number(options, "tolerance")),
        max_iterations_(static_cast<int>(kinematics_options().integer(options, "max_iterations"))) {}

  std::string description() const override {
    std::ostringstream out;
    out << "kinematic analysis, " << (chord_ ? "chord Newton (Jacobian factorized once per step)" : "full Newton")
        << " on positions to ||delta q|| <= " << tolerance_ << ", predictor "
        << (extrapolate_ ? "q_n exp(h V_n)" : "q_n") << ", at most " << max_iterations_ << " iterations";
    return out.str();
  }
  int order() const override { return 0; }  // exact up to the tolerance at every time point
  std::vector<std::pair<std::string, double>> statistics() const override {
    return {{"steps", static_cast<double>(steps_)},
            {"newton_iterations", static_cast<double>(newton_iterations_)},
            {"newton_iterations_per_step", steps_ ? static_cast<double>(newton_iterations_) / steps_ : 0.0},
            {"matrix_factorizations", static_cast<double>(factorizations_)},
            {"coordinates", static_cast<double>(coordinates_)},
            {"constraints", static_cast<double>(constraints_)}};
  }
  IntegratorCapabilities capabilities() const override { return {.accelerations = true, .multipliers = true}; }
  const Eigen::VectorXd* multipliers() const override { return &multipliers_; }
  const Eigen::VectorXd* accelerations() const override { return &accelerations_; }

  void start(const StateSpace& space, const State& initial) override {
    (void)space;
    (void)initial;
    checked_ = false;
    steps_ = newton_iterations_ = factorizations_ = 0;
    time_grid_.reset();
    multipliers_.resize(0);
    accelerations_.resize(0);
  }

  void step(const StateSpace& space, ForwardDynamics& dynamics, State& state, double h) override {
    ConstrainedSystem* system = dynamics.constraints();
    const auto n = static_cast<Eigen::Index>(space.velocity_dimension());
    if (!system)
      throw ModelError("kinematics: the mechanism has no constraints: it has " + std::to_string(n) +
                       " degrees of freedom; a kinematic analysis needs a fully driven mechanism (0 degrees of "
                       "freedom); integrate its dynamics instead");
    if (!checked_) check_fully_driven(*system, state, n);

    trial_ = state;
    trial_.time = time_grid_.next(state.time, h);
    if (extrapolate_) space.retract_configuration(trial_, h * state.velocities);  // eq. 11
    solve_positions(space, *system, state, h);

    // Velocities and accelerations at the solution, with J re-evaluated there.
    system->evaluate(trial_, terms_, dae::position_terms | dae::velocity_rhs);
    factorize(state, h);
    if (terms_.velocity_rhs.size() == n)
      trial_.velocities = factorization_.solve(terms_.velocity_rhs);
    else
      trial_.velocities.setZero(n);  // no rheonomic constraint: nu = 0
    system->evaluate(trial_, terms_, dae::mass | dae::forces | dae::acceleration_rhs);
    accelerations_ = factorization_.solve(terms_.acceleration_rhs);
    multipliers_ = factorization_.transpose().solve(terms_.forces - terms_.mass * accelerations_);
    if (!trial_.velocities.allFinite() || !accelerations_.allFinite() || !multipliers_.allFinite())
      fail(*system, state, h, 0, "the velocities, accelerations or multipliers are not finite");

    state = trial_;
    time_grid_.advance();
    ++steps_;
  }

 private:
  void check_fully_driven(ConstrainedSystem& system, const State& state, Eigen::Index n) {
    system.evaluate(state, terms_, dae::position_terms);
    const Eigen::Index m = terms_.jacobian.rows();
    const auto independent = static_cast<Eigen::Index>(independent_rows(terms_.jacobian).size());
    const Eigen::Index freedom = n - independent;
    if (freedom != 0 || m != n) {
      std::string message = "kinematics: the mechanism is not fully driven: it has " + std::to_string(freedom) +
                            (freedom == 1 || freedom == -1 ? " degree" : " degrees") + " of freedom at t = " +
                            format_number(state.time) + " s (" + std::to_string(n) + " velocity coordinates, " +
                            std::to_string(independent) + " independent of its " + std::to_string(m) +
                            " constraint rows)";
      if (freedom > 0)
        message += "; drive every degree of freedom with a driving constraint, or integrate the dynamics instead";
      else
        message += "; remove the redundant constraints";
      throw ModelError(message);
    }
    coordinates_ = n;
    constraints_ = m;
    checked_ = true;
  }

  void factorize(const State& state, double h) {
    factorization_.compute(terms_.jacobian);
    ++factorizations_;
    const double pivot = factorization_.matrixLU().diagonal().cwiseAbs().minCoeff();
    const double scale = factorization_.matrixLU().diagonal().cwiseAbs().maxCoeff();
    if (!(pivot > 1e-12 * scale))
      fail_singular(state, h, pivot / scale);
  }

  // Newton on g(q, t_{n+1}) = 0 from trial_ (eq. 14).
  void solve_positions(const StateSpace& space, ConstrainedSystem& system, const State& state, double h) {
    for (int iteration = 0;; ++iteration) {
      const bool refactor = iteration == 0 || !chord_;
      system.evaluate(trial_, terms_, refactor ? dae::position_terms : dae::residual);
      if (!terms_.residual.allFinite()) fail(system, state, h, iteration, "the constraints are not finite");
      if (iteration == max_iterations_)
        fail(system, state, h, iteration, "the position iteration did not converge");
      if (refactor) factorize(state, h);
      correction_ = -factorization_.solve(terms_.residual);
      space.retract_configuration(trial_, correction_);
      ++newton_iterations_;
      if (correction_.norm() <= tolerance_) break;
    }
  }

  [[noreturn]] void fail(ConstrainedSystem& system, const State& state, double h, int iterations,
                         const std::string& what) const {
    throw SimulationError("kinematics: " + what + " at t = " + format_number(trial_.time) +
                          " s (step from t = " + format_number(state.time) + " s, step size " + format_number(h) +
                          " s; |g| = " + format_number(terms_.residual.norm(), 3) + " after " +
                          std::to_string(iterations) + " iterations, tolerance " +
                          format_number(tolerance_, 3) + " on ||delta q||; worst constraint " +
                          worst_constraint(system.blocks(), terms_.residual) +
                          "); the drivers may have reached a singular position, or reduce simulation.step_size");
  }

  [[noreturn]] void fail_singular(const State& state, double h, double ratio) const {
    throw SimulationError("kinematics: the constraint Jacobian is singular at t = " + format_number(trial_.time) +
                          " s (step from t = " + format_number(state.time) + " s, step size " + format_number(h) +
                          " s; smallest relative pivot " + format_number(ratio, 3) +
                          "): the drivers lose control of the mechanism there (a driver at a singular position "
                          "needs its alternate)");
  }

  bool chord_, extrapolate_;
  double tolerance_;
  int max_iterations_;

  bool checked_ = false;
  Eigen::Index coordinates_ = 0, constraints_ = 0;
  TimeGrid time_grid_;

  State trial_;
  DaeTerms terms_;
  Eigen::VectorXd correction_, accelerations_, multipliers_;
  Eigen::PartialPivLU<Eigen::MatrixXd> factorization_;

  long long steps_ = 0, newton_iterations_ = 0, factorizations_ = 0;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Integrator>(
      "kinematics", "1.0.0",
      "kinematic analysis of a fully driven mechanism: positions by (chord) Newton along the retraction, "
      "velocities, accelerations and reaction multipliers by linear solves at every time point",
      kinematics_options(), [](const liembs::ConfigTable& options) { return std::make_unique<KinematicAnalysis>(options); });
}
