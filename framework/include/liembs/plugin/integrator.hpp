#pragma once
// Integrator plugins advance a state on the state space S = G^n x R^m by one step.
#include <liembs/plugin/component.hpp>
#include <liembs/sim/state.hpp>

#include <string>
#include <utility>
#include <vector>

namespace liembs {

class ForwardDynamics;
class StateSpace;

class Integrator : public Component {
 public:
  static constexpr Kind kind = Kind::integrator;

  // Called once before the first step of a run (allocate workspaces, reset history).
  virtual void start(const StateSpace& space, const State& initial) = 0;
  // Advances `state` (including state.time) by `step_size`.
  virtual void step(const StateSpace& space, ForwardDynamics& dynamics, State& state,
                    double step_size) = 0;
  // Called between steps when the run changed the state's coordinates without moving it (a
  // chart switch of Euler angles, StateSpace::update_charts): an integrator that keeps a
  // history in the old coordinates (accelerations, a BDF interpolant) restarts from `state`.
  virtual void charts_switched(const StateSpace& space, const State& state) {
    (void)space;
    (void)state;
  }
  // The order of accuracy (used in summaries and studies); 0 if unknown.
  virtual int order() const = 0;
  // Counters for the run summary (steps, Newton iterations, error-test failures, ...).
  virtual std::vector<std::pair<std::string, double>> statistics() const { return {}; }
  // The accelerations V' and the constraint multipliers lambda (M V' + J^T lambda = Q) at the
  // current state, for integrators that solve for them (bdf, kinematics, generalized-alpha,
  // ida); null otherwise.
  // Both are empty before the first step.
  virtual const Eigen::VectorXd* accelerations() const { return nullptr; }
  virtual const Eigen::VectorXd* multipliers() const { return nullptr; }
};

}  // namespace liembs
