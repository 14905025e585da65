#include <liembs/error.hpp>
#include <liembs/sim/newton_derivatives.hpp>

#include <cmath>
#include <limits>

namespace liembs {

namespace {

std::string derivative_names(unsigned what) {
  std::string names;
  auto add = [&](unsigned flag, const char* name) {
    if (!(what & flag)) return;
    names += names.empty() ? "" : ", ";
    names += name;
  };
  add(dae::damping, "-dQ/dV");
  add(dae::stiffness, "d(M a + J^T lambda - Q)/dq");
  add(dae::velocity_constraint, "d(J V)/dq");
  return names;
}

}  // namespace

DerivativeMethod read_derivative_method(const ConfigTable& options) {
  if (!options.contains("newton_derivatives")) return DerivativeMethod::automatic;
  return options.choice("newton_derivatives", {"analytic", "finite-differences"}) == "analytic"
             ? DerivativeMethod::analytic
             : DerivativeMethod::finite_differences;
}

LinearSolver read_linear_solver(const ConfigTable& options) {
  if (!options.contains("linear_solver")) return LinearSolver::automatic;
  if (options.choice("linear_solver", {"dense", "gmres"}) == "dense") return LinearSolver::dense;
  if (read_unconstrained_form(options, UnconstrainedForm::ode) == UnconstrainedForm::dae)
    options.fail("linear_solver", "\"gmres\" solves the ODE form V' = F; it cannot be combined with "
                                  "unconstrained_form = \"dae\"");
  return LinearSolver::gmres;
}

UnconstrainedForm read_unconstrained_form(const ConfigTable& options, UnconstrainedForm fallback) {
  if (!options.contains("unconstrained_form")) return fallback;
  return options.choice("unconstrained_form", {"dae", "ode"}) == "ode" ? UnconstrainedForm::ode : UnconstrainedForm::dae;
}

unsigned NewtonDerivatives::analytic_parts(const MotionEquations& equations, unsigned what) const {
  if (method_ == DerivativeMethod::finite_differences) return 0u;
  return what & equations.analytic_derivatives();
}

void NewtonDerivatives::require(const MotionEquations& equations, unsigned what, const std::string& integrator) const {
  if (method_ != DerivativeMethod::analytic) return;
  const unsigned missing = what & ~equations.analytic_derivatives();
  if (missing == 0) return;
  const std::string start = integrator + ": integrator.newton_derivatives = \"analytic\", but ";
  const std::string remedy = "use newton_derivatives = \"finite-differences\", or leave the key out to use analytic "
                             "derivatives where they exist";
  if (const auto* unavailable = dynamic_cast<const AnalyticDerivativesUnavailable*>(&equations.dynamics())) {
    const std::string why = unavailable->why_no_analytic_derivatives();
    if (!why.empty()) throw SimulationError(start + why + "; " + remedy);
  }
  throw SimulationError(start + "this formulation gives no analytic " + derivative_names(missing) +
                        " (analytic Newton matrices exist for absolute coordinates, algorithm 'newton-euler', and for trees "
                        "in relative coordinates without prescribed motion); " + remedy);
}

void NewtonDerivatives::evaluate(const StateSpace& space, MotionEquations& equations, const State& state,
                                 const DaeTerms& terms, const Eigen::VectorXd& acceleration,
                                 const Eigen::VectorXd& multipliers, DaeDerivatives& out, unsigned what) {
  const unsigned analytic = analytic_parts(equations, what), differenced = what & ~analytic;
  if (analytic) equations.evaluate_derivatives(state, acceleration, multipliers, out, analytic);
  if (differenced & dae::damping) difference_damping(equations, state, terms, out.damping);
  if (differenced & (dae::stiffness | dae::velocity_constraint))
    difference_configuration(space, equations, state, terms, acceleration, multipliers, out, differenced);
}

// The sparsity of C = -dQ/dV, found once per run from a full difference at a generic velocity
// (the state's plus a fixed offset, so that terms vanishing at rest, such as the gyroscopic
// ones, show), and a greedy grouping of columns that share no row: each group is differenced
// in one evaluation (Curtis, Powell, Reid). In absolute coordinates a body's forces depend on
// its own velocities only, so a few evaluations give all of C.
void NewtonDerivatives::find_damping_pattern(MotionEquations& equations, const State& state) {
  const Eigen::Index n = state.velocities.size();
  perturbed_ = state;
  for (Eigen::Index i = 0; i < n; ++i)
    perturbed_.velocities(i) += (0.3 + 0.01 * static_cast<double>(i % 7)) * (1.0 + std::abs(state.velocities(i)));
  equations.evaluate(perturbed_, perturbed_terms_, dae::forces);
  base_ = perturbed_terms_.forces;
  damping_rows_.assign(static_cast<std::size_t>(n), {});
  for (Eigen::Index i = 0; i < n; ++i) {
    const double value = perturbed_.velocities(i), step = 1e-3 * (1.0 + std::abs(value));
    perturbed_.velocities(i) = value + step;
    equations.evaluate(perturbed_, perturbed_terms_, dae::forces);
    perturbed_.velocities(i) = value;
    for (Eigen::Index r = 0; r < n; ++r)
      if (perturbed_terms_.forces(r) != base_(r)) damping_rows_[static_cast<std::size_t>(i)].push_back(r);
  }
  damping_groups_.clear();
  std::vector<std::vector<bool>> rows_taken;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& rows = damping_rows_[static_cast<std::size_t>(i)];
    if (rows.empty()) continue;  // Q does not depend on V_i
    std::size_t group = 0;
    for (; group < damping_groups_.size(); ++group) {
      bool free = true;
      for (const Eigen::Index r : rows) free = free && !rows_taken[group][static_cast<std::size_t>(r)];
      if (free) break;
    }
    if (group == damping_groups_.size()) {
      damping_groups_.emplace_back();
      rows_taken.emplace_back(static_cast<std::size_t>(n), false);
    }
    damping_groups_[group].push_back(i);
    for (const Eigen::Index r : rows) rows_taken[group][static_cast<std::size_t>(r)] = true;
  }
  pattern_dimension_ = n;
}

// C = -dQ/dV by forward differences in the velocities, one evaluation per group of columns.
void NewtonDerivatives::difference_damping(MotionEquations& equations, const State& state, const DaeTerms& terms,
                                           Eigen::MatrixXd& out) {
  const Eigen::Index n = state.velocities.size();
  if (pattern_dimension_ != n) find_damping_pattern(equations, state);
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  out.setZero(n, n);
  perturbed_ = state;
  for (const auto& group : damping_groups_) {
    for (const Eigen::Index i : group)
      perturbed_.velocities(i) = state.velocities(i) + root_eps * std::max(1.0, std::abs(state.velocities(i)));
    equations.evaluate(perturbed_, perturbed_terms_, dae::forces);
    for (const Eigen::Index i : group) {
      const double step = perturbed_.velocities(i) - state.velocities(i);
      for (const Eigen::Index r : damping_rows_[static_cast<std::size_t>(i)])
        out(r, i) = (terms.forces(r) - perturbed_terms_.forces(r)) / step;
      perturbed_.velocities(i) = state.velocities(i);
    }
  }
}

// K and P by forward differences along the retraction, one evaluation per coordinate (joint
// coordinates with a step relative to their size).
void NewtonDerivatives::difference_configuration(const StateSpace& space, MotionEquations& equations,
                                                 const State& state, const DaeTerms& terms,
                                                 const Eigen::VectorXd& acceleration,
                                                 const Eigen::VectorXd& multipliers, DaeDerivatives& out,
                                                 unsigned what) {
  const Eigen::Index n = state.velocities.size(), m = equations.constraint_count();
  const bool stiffness = (what & dae::stiffness) != 0, velocity = (what & dae::velocity_constraint) != 0 && m > 0;
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  const auto joint_offset = static_cast<Eigen::Index>(space.body_velocity_dimension());
  if (stiffness) {
    out.stiffness.resize(n, n);
    dynamic_residual(terms, acceleration, multipliers, base_);
  }
  if (velocity) {
    out.velocity_constraint.resize(m, n);
    velocity_violation(terms, state.velocities, violation_);
  }
  if (what & dae::velocity_constraint && m == 0) out.velocity_constraint.resize(0, n);
  perturbation_.setZero(n);
  const unsigned terms_needed = (stiffness ? dae::mass | dae::forces | dae::jacobian : 0u) |
                                (velocity ? dae::jacobian | dae::velocity_rhs : 0u);
  for (Eigen::Index i = 0; i < n && (stiffness || velocity); ++i) {
    const double step = i >= joint_offset ? root_eps * std::max(1.0, std::abs(state.coordinates(i - joint_offset)))
                                          : root_eps;
    evaluate_retracted(space, equations, state, i, step, perturbation_, perturbed_, perturbed_terms_, terms_needed);
    if (stiffness) {
      dynamic_residual(perturbed_terms_, acceleration, multipliers, column_);
      out.stiffness.col(i) = (column_ - base_) / step;
    }
    if (velocity) {
      velocity_violation(perturbed_terms_, state.velocities, perturbed_violation_);
      out.velocity_constraint.col(i) = (perturbed_violation_ - violation_) / step;
    }
  }
}

}  // namespace liembs
