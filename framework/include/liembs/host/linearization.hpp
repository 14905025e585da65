#pragma once
// Linearization of a tree's equations of motion about a state (paper 000 section 6.1;
// docs/derivatives.md "Linearization"): x' = f(x, tau) with x = (q, u) on the group's tangent
// space and the generalized forces tau as inputs, x' ~ A dx + B dtau.
//
// The configuration part of x: the joint coordinates as they are and, for a floating base,
// the increment delta of its pose C = C0 exp(delta) (body-fixed right perturbation, the
// derivative algorithms' retraction). Its rate is C^-1 C' = dexp_{-delta}(delta') = u_base,
// i.e. delta' = dexp_{-delta}^-1 u_base = u_base - 1/2 ad_{u_base} delta + O(delta^2): the base
// block of dq'/dq is -1/2 ad_{u0} and dq'/du is the identity. The velocity part u = (base body
// twist, joint rates) and its rate u' = FD(q, u, tau) give du'/dq, du'/du and du'/dtau = M^-1
// from the analytic forward-dynamics derivatives; tau = 0 is the run's own point (gravity and
// the model's constant loads are part of f).
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace liembs {

struct Run;

struct Linearization {
  double time = 0.0;
  bool floating_base = false;
  TreeState state;                  // x0: the base pose C0 (delta = 0 there), q0, u0
  Eigen::VectorXd force;            // tau0
  Eigen::VectorXd rates;            // f(x0, tau0) = (q', u')
  Eigen::MatrixXd A, B;             // 2 nv x 2 nv and 2 nv x nv
  std::vector<std::string> state_names, input_names;  // A's rows and columns, B's columns
  // "analytic", or "central-differences" for a representation without analytic derivatives
  // (then `fallback_reason` says why).
  std::string method = "analytic";
  std::string fallback_reason;
};

// f(x, tau) of `dynamics`'s tree at the state `at` moved by the state increment `dx` (2 nv:
// delta or dq, then du), with forces `force`: the 2 nv rates (delta' or q', u').
Eigen::VectorXd tree_state_rates(TreeDynamics& dynamics, const TreeState& at, const Eigen::VectorXd& dx,
                                 const Eigen::VectorXd& force);

// A and B at `state`, `force`: from `derivatives` when given, else by central differences of
// tree_state_rates (fallback_reason is then recorded).
Linearization linearize_tree(TreeDynamics& dynamics, TreeDerivatives* derivatives, const TreeState& state,
                             const Eigen::VectorXd& force, const std::string& fallback_reason = {});

// The row and column names: "base.delta.wx" .. "base.delta.vz", "q.<dof>", then "base.wx" ..
// "base.vz", "qd.<dof>" (the velocity names of `liembs eval`), and the inputs "base.mx" ..
// "base.fz", "tau.<dof>".
void name_linearization(const KinematicTree& tree, Linearization& linearization);

// A run's linearization at its initial state, or at the state its integrator reaches at time
// `at` (integrated without outputs). Throws ConfigError for `at` outside [0, end_time] and
// ModelError for a run that is not a tree in relative coordinates (loop closures, absolute
// coordinates, prescribed motion).
Linearization linearize_run(Run& run, std::optional<double> at);

// Writes A.csv, B.csv and linearization.json into `directory` (created if missing), each to a
// temporary file renamed into place only once all three are written.
void write_linearization(const Run& run, const Linearization& linearization, const std::filesystem::path& directory);

}  // namespace liembs
