#pragma once
// Reading the options the implicit integrators share (declared once by newton_options() in
// liembs/sim/newton_derivatives.hpp) from an integrator's TOML table (docs/newton-matrices.md).
#include <liembs/config/config_table.hpp>
#include <liembs/sim/newton_derivatives.hpp>

namespace liembs {

// Reads newton_derivatives from an integrator's options (strict: only the two names).
DerivativeMethod read_derivative_method(const ConfigTable& options);
// Reads linear_solver ("dense" | "gmres"; absent: automatic). "gmres" with unconstrained_form =
// "dae" is an error naming both keys.
LinearSolver read_linear_solver(const ConfigTable& options);
// Reads unconstrained_form ("dae" | "ode") from an integrator's options, `fallback` without it.
UnconstrainedForm read_unconstrained_form(const ConfigTable& options, UnconstrainedForm fallback);

}  // namespace liembs
