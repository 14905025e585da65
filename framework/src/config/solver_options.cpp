#include <liembs/config/solver_options.hpp>

namespace liembs {

namespace {

// The shared options' declaration, for reading (the threshold and the form do not change the
// choices and are not read here).
const OptionDeclaration& shared_options() {
  static const OptionDeclaration declaration(newton_options(0, UnconstrainedForm::ode));
  return declaration;
}

}  // namespace

DerivativeMethod read_derivative_method(const ConfigTable& options) {
  const auto method = shared_options().optional_choice(options, "newton_derivatives");
  if (!method) return DerivativeMethod::automatic;
  return *method == "analytic" ? DerivativeMethod::analytic : DerivativeMethod::finite_differences;
}

LinearSolver read_linear_solver(const ConfigTable& options) {
  const auto solver = shared_options().optional_choice(options, "linear_solver");
  if (!solver) return LinearSolver::automatic;
  if (*solver == "dense") return LinearSolver::dense;
  if (read_unconstrained_form(options, UnconstrainedForm::ode) == UnconstrainedForm::dae)
    options.fail("linear_solver", "\"gmres\" solves the ODE form V' = F; it cannot be combined with "
                                  "unconstrained_form = \"dae\"");
  return LinearSolver::gmres;
}

UnconstrainedForm read_unconstrained_form(const ConfigTable& options, UnconstrainedForm fallback) {
  const auto form = shared_options().optional_choice(options, "unconstrained_form");
  if (!form) return fallback;
  return *form == "ode" ? UnconstrainedForm::ode : UnconstrainedForm::dae;
}

}  // namespace liembs
