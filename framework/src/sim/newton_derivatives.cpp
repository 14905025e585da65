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

std::vector<OptionSpec> newton_options(long gmres_threshold, UnconstrainedForm form) {
  const std::string form_description =
      "a formulation without constraints solved as M V' = Q (\"dae\") or V' = F (\"ode\")";
  return {
      OptionSpec::optional(
          OptionSpec::choice("newton_derivatives", {"analytic", "finite-differences"}, "",
                             "how the Newton matrix's derivatives are formed (\"analytic\" is an error where the "
                             "formulation has none)"),
          "analytic where the formulation has them, else finite differences (stated in method_choices)"),
      form == UnconstrainedForm::ode
          ? OptionSpec::choice("unconstrained_form", {"dae", "ode"}, "ode", form_description)
          // bdf: absent is "dae", except that from gmres_threshold coordinates the automatic
          // linear_solver may take the ODE form (a given "dae" keeps the dense DAE form).
          : OptionSpec::optional(OptionSpec::choice("unconstrained_form", {"dae", "ode"}, "", form_description),
                                 "\"dae\", or \"ode\" where linear_solver's automatic choice is \"gmres\""),
      OptionSpec::optional(OptionSpec::choice("linear_solver", {"dense", "gmres"}, "",
                                              "Newton systems by a dense factorization or matrix-free GMRES (ODE "
                                              "form without constraints)"),
                           "\"gmres\" from " + std::to_string(gmres_threshold) +
                               " velocity coordinates without constraints, else \"dense\""),
  };
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
  if (const std::string& why = equations.capabilities().no_analytic_derivatives; !why.empty())
    throw SimulationError(start + why + "; " + remedy);
  throw SimulationError(start + "this formulation gives no analytic " + derivative_names(missing) +
                        " (analytic Newton matrices exist for absolute coordinates, algorithm 'newton-euler', and for trees "
                        "in relative coordinates without prescribed motion); " + remedy);
}

void NewtonDerivatives::choose(const StateSpace& space, const MotionEquations& equations, unsigned what,
                               const std::string& integrator) {
  require(equations, what, integrator);
  choices_.clear();
  const DynamicsCapabilities& declared = equations.capabilities();
  const std::string why_none = declared.no_analytic_derivatives.empty() ? "" : ": " + declared.no_analytic_derivatives;
  const bool differences_asked = method_ == DerivativeMethod::finite_differences;
  if (!equations.has_constraint_rows()) {
    MethodChoice form{"unconstrained_form", equations.dae() ? "dae" : "ode", ""};
    if (differences_asked)
      form.reason = "newton_derivatives = \"finite-differences\" keeps the ODE form V' = F";
    else if (equations.dae() && form_ == UnconstrainedForm::dae)
      form.reason = "unconstrained_form = \"dae\": M V' = Q with the analytic derivatives {algorithm} declares";
    else if (equations.dae())
      form.reason = "{algorithm} declares no velocity_rate_derivatives, so its dae_form gives the analytic Newton matrix";
    else if (form_ == UnconstrainedForm::ode)
      form.reason = "unconstrained_form = \"ode\"";
    else
      form.reason = "{algorithm} declares no dae_form with analytic derivatives" + why_none;
    choices_.push_back(std::move(form));
  }
  const unsigned analytic = analytic_parts(equations, what), differenced = what & ~analytic;
  MethodChoice matrix{"newton_matrix", "", ""};
  if (differenced == 0) {
    matrix.choice = "analytic";
    matrix.reason = method_ == DerivativeMethod::analytic ? "newton_derivatives = \"analytic\""
                    : equations.dae() ? "the analytic derivatives of M V' + J^T lambda = Q that {algorithm} declares"
                                      : "the velocity_rate_derivatives (dF/dV, dF/d delta) {algorithm} declares";
  } else {
    matrix.choice = analytic == 0 ? "finite-differences"
                                  : "analytic " + derivative_names(analytic) + ", finite-differences " +
                                        derivative_names(differenced);
    matrix.reason = differences_asked ? "newton_derivatives = \"finite-differences\""
                                      : "{algorithm} declares no analytic " + derivative_names(differenced) + why_none;
  }
  choices_.push_back(std::move(matrix));
  // An analytic K or P of free bodies uses the group's derivatives of its velocity maps
  // (velocity_map_derivatives, internal_constraint_derivatives): closed form or the default differences.
  if ((analytic & (dae::stiffness | dae::velocity_constraint)) && space.free_bodies() > 0) {
    const GroupCapabilities group = space.group().capabilities();
    const bool internal = space.body_coordinates().internal_constraints > 0;
    std::string missing;
    if (!group.velocity_map_derivatives) missing = "velocity_map_derivatives";
    if (internal && !group.internal_constraint_derivatives)
      missing += (missing.empty() ? "" : " and ") + std::string("internal_constraint_derivatives");
    choices_.push_back(missing.empty()
                           ? MethodChoice{"group_derivatives", "closed-form", "{group} declares them"}
                           : MethodChoice{"group_derivatives", "central-differences",
                                          "{group} declares no closed-form " + missing + " (about 1e-10 relative)"});
  }
}

void NewtonDerivatives::state_matrix_free(bool asked, long threshold) {
  forget_choice("group_derivatives");
  state_choice({"unconstrained_form", "ode", "the matrix-free Newton steps solve V' = F"});
  state_choice({"newton_matrix", "matrix-free",
                (asked ? std::string("integrator.linear_solver = \"gmres\"")
                       : "linear_solver = \"auto\" and at least " + std::to_string(threshold) + " velocity coordinates") +
                    ": GMRES on directional differences of F, no matrix formed"});
}

void NewtonDerivatives::state_choice(MethodChoice choice) {
  for (auto& existing : choices_)
    if (existing.topic == choice.topic) {
      existing = std::move(choice);
      return;
    }
  choices_.push_back(std::move(choice));
}

void NewtonDerivatives::forget_choice(const std::string& topic) {
  std::erase_if(choices_, [&](const MethodChoice& choice) { return choice.topic == topic; });
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
