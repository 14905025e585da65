#pragma once
// The equations an implicit integrator's Newton iteration solves, for any formulation: the
// formulation's DAE terms (paper 002 eq. 1) when it has constraints, and for an ODE
// M = 1, Q = the velocity rates (V' - F(q, V, t) = 0) and no constraints.
#include <liembs/plugin/algorithm.hpp>
#include <liembs/sim/constrained_system.hpp>

namespace liembs {

class MotionEquations {
 public:
  MotionEquations(ForwardDynamics& dynamics, Eigen::Index dimension)
      : dynamics_(dynamics), system_(dynamics.constraints()), dimension_(dimension) {}

  ConstrainedSystem* system() const { return system_; }
  Eigen::Index constraint_count() const { return system_ ? system_->constraint_count() : 0; }

  void evaluate(const State& state, DaeTerms& terms, unsigned what) {
    if (system_) {
      system_->evaluate(state, terms, what);
      return;
    }
    if (what & dae::forces) dynamics_.velocity_rates(state, terms.forces);
    if ((what & dae::mass) && terms.mass.rows() != dimension_) terms.mass.setIdentity(dimension_, dimension_);
    if (what & dae::residual) terms.residual.resize(0);
    if (what & dae::jacobian) terms.jacobian.resize(0, dimension_);
    if (what & dae::acceleration_rhs) terms.acceleration_rhs.resize(0);
    if (what & dae::velocity_rhs) terms.velocity_rhs.resize(0);
  }

 private:
  ForwardDynamics& dynamics_;
  ConstrainedSystem* system_;
  Eigen::Index dimension_;
};

}  // namespace liembs
