#pragma once
// The contract of the INTEGRATOR kind: what the host may ask of an integrator plugin
// (docs/plugins.md, "Integrator"). An integrator advances a state on the state space
// S = G^n x R^m by one step. Every operation is marked REQUIRED or OPTIONAL; optional
// outputs are declared through capabilities(), never found by dynamic_cast, and the host's
// fallback without each is stated beside it.
#include <liembs/plugin/component.hpp>
#include <liembs/plugin/state.hpp>

#include <string>
#include <utility>
#include <vector>

namespace liembs {

class ForwardDynamics;
class StateSpace;

// What an integrator declares about itself.
struct IntegratorCapabilities {
  // accelerations() gives V' at the current state. Without it: none is recorded.
  bool accelerations = false;
  // multipliers() gives the constraint multipliers lambda (M V' + J^T lambda = Q). Without
  // it: a constrained run writes no multiplier.* columns, and its method_choices say so.
  bool multipliers = false;
};

// A numerical method an integrator chose for this run where the formulation or the options
// left it a choice, and why (e.g. the Newton matrix by finite differences because the
// algorithm declares no analytic derivatives). The run writes them to summary.json
// ("method_choices") and the console, so that a missing optional capability is never silent.
// `reason` may name the run's components as {algorithm} and {group}; the run replaces them
// by "algorithm 'aba'" and "group 'SE3'".
struct MethodChoice {
  std::string topic;   // snake_case key: "newton_matrix", "unconstrained_form", "group_derivatives", ...
  std::string choice;  // "analytic", "finite-differences", "dae", "ode", ...
  std::string reason;  // why this choice (the option that asked for it, or the capability that is missing)
  // "newton matrix: finite-differences (reason)", for the console.
  std::string statement() const;
};

class Integrator : public Component {
 public:
  static constexpr Kind kind = Kind::integrator;

  // REQUIRED. Called once before the first step of a run (allocate workspaces, reset history).
  virtual void start(const StateSpace& space, const State& initial) = 0;
  // REQUIRED. Advances `state` (including state.time) by `step_size`.
  virtual void step(const StateSpace& space, ForwardDynamics& dynamics, State& state,
                    double step_size) = 0;
  // REQUIRED. The order of accuracy (used in summaries and studies); 0 if unknown.
  virtual int order() const = 0;

  // OPTIONAL (default: none declared).
  virtual IntegratorCapabilities capabilities() const { return {}; }
  // OPTIONAL (default: nothing to do). Called between steps when the run changed the state's
  // coordinates without moving it (a chart switch of Euler angles, StateSpace::update_charts):
  // an integrator that keeps a history in the old coordinates (accelerations, a BDF
  // interpolant) restarts from `state`.
  virtual void charts_switched(const StateSpace& space, const State& state) {
    (void)space;
    (void)state;
  }
  // OPTIONAL (default: none). Counters for the run summary (steps, Newton iterations,
  // error-test failures, ...).
  virtual std::vector<std::pair<std::string, double>> statistics() const { return {}; }
  // OPTIONAL (default: none; an explicit method has nothing to choose). The methods chosen for
  // the run's formulation, valid after the first step (MethodChoice).
  virtual std::vector<MethodChoice> method_choices() const { return {}; }
  // OPTIONAL (IntegratorCapabilities::accelerations / ::multipliers; the host never calls them
  // unless declared). V' and lambda (M V' + J^T lambda = Q) at the current state (bdf, kinematics,
  // generalized-alpha and ida declare them); empty before the first step.
  virtual const Eigen::VectorXd* accelerations() const { return nullptr; }
  virtual const Eigen::VectorXd* multipliers() const { return nullptr; }
};

}  // namespace liembs
