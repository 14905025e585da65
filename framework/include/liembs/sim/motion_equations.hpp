#pragma once
// The equations an implicit integrator's Newton iteration solves, for any formulation: the
// formulation's DAE terms (paper 002 eq. 1) when it has constraints (or gives them with
// analytic derivatives: DynamicsCapabilities::dae_form), and for an ODE M = 1, Q = the velocity rates
// (V' - F(q, V, t) = 0) and no constraints.
#include <liembs/plugin/algorithm.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>

namespace liembs {

class MotionEquations {
 public:
  // The DAE system an implicit integrator solves: the formulation's constraints(), or, for a
  // formulation without constraint rows, its declared DAE form (DynamicsCapabilities::dae_form,
  // a tree: M from CRBA, Q = -RNEA(q, u, 0)) when dae_form_of_odes is set (the integrators set
  // it unless the run asks for differenced Newton matrices); none otherwise (the ODE
  // V' = F(q, V, t)). Its Newton matrix is then M + gamma' C + beta' K with C and K from the
  // analytic inverse-dynamics derivatives, instead of 1 + differences of the forward dynamics
  // (docs/newton-matrices.md).
  // analytic_odes (without dae_form_of_odes): the ODE form, with C = -dF/dV and K = -dF/d delta
  // from the declared DynamicsCapabilities::velocity_rate_derivatives (a tree's dFD) where
  // given, and the DAE form where only that is given (free bodies in absolute coordinates).
  MotionEquations(ForwardDynamics& dynamics, Eigen::Index dimension, bool dae_form_of_odes = false,
                  bool analytic_odes = false)
      : dynamics_(dynamics), capabilities_(dynamics.capabilities()), dimension_(dimension) {
    if (ConstrainedSystem* constraints = dynamics.constraints()) {
      system_ = constraints;
      return;
    }
    if (analytic_odes && !dae_form_of_odes) rates_ = capabilities_.velocity_rate_derivatives;
    if ((dae_form_of_odes || (analytic_odes && !rates_)) && capabilities_.dae_form &&
        capabilities_.dae_form->analytic_derivatives() != 0u)
      system_ = capabilities_.dae_form;
  }

  // What the formulation declared (DynamicsCapabilities), for the statement of the choices.
  const DynamicsCapabilities& capabilities() const { return capabilities_; }
  // Whether the formulation has constraint rows (else an ODE, possibly in its DAE form).
  bool has_constraint_rows() const { return system_ && system_ != capabilities_.dae_form; }
  // Whether the equations are solved in a DAE form (constraint rows, or an ODE's DAE form).
  bool dae() const { return system_ != nullptr; }
  ConstrainedSystem* system() const { return system_; }
  ForwardDynamics& dynamics() const { return dynamics_; }
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

  // The derivatives (DaeDerivatives) the formulation gives analytically, and their evaluation
  // (NewtonDerivatives chooses between them and differences).
  unsigned analytic_derivatives() const {
    if (system_) return system_->analytic_derivatives();
    return rates_ ? dae::damping | dae::stiffness | dae::velocity_constraint : 0u;
  }
  void evaluate_derivatives(const State& state, const Eigen::VectorXd& acceleration,
                            const Eigen::VectorXd& multipliers, DaeDerivatives& derivatives, unsigned what) {
    if (system_) {
      system_->evaluate_derivatives(state, acceleration, multipliers, derivatives, what);
    } else if (rates_) {  // M = 1, Q = F: C = -dF/dV, K = -dF/d delta, no constraint rows
      rates_->velocity_rate_derivatives(state, by_velocity_, by_configuration_);
      if (what & dae::damping) derivatives.damping = -by_velocity_;
      if (what & dae::stiffness) derivatives.stiffness = -by_configuration_;
      if (what & dae::velocity_constraint) derivatives.velocity_constraint.resize(0, dimension_);
    }
  }

 private:
  ForwardDynamics& dynamics_;
  DynamicsCapabilities capabilities_;
  VelocityRateDerivatives* rates_ = nullptr;
  ConstrainedSystem* system_ = nullptr;
  Eigen::Index dimension_;
  Eigen::MatrixXd by_velocity_, by_configuration_;
};

// r = M a + J^T lambda - Q from the terms (paper 002 eq. 1, first row): the dynamic residual of
// the implicit integrators for the unknowns (a, lambda).
inline void dynamic_residual(const DaeTerms& terms, const Eigen::VectorXd& acceleration,
                             const Eigen::VectorXd& multipliers, Eigen::VectorXd& residual) {
  residual.noalias() = terms.mass * acceleration;
  if (multipliers.size() > 0) residual.noalias() += terms.jacobian.transpose() * multipliers;
  residual -= terms.forces;
}

// The state of a forward difference in configuration coordinate i: `perturbed` = `base` moved by
// `step` along the retraction, with its terms evaluated for `what`. `direction` is a zero vector
// of the velocity dimension and is left zero.
inline void evaluate_retracted(const StateSpace& space, MotionEquations& equations, const State& base,
                               Eigen::Index i, double step, Eigen::VectorXd& direction, State& perturbed,
                               DaeTerms& perturbed_terms, unsigned what) {
  perturbed = base;
  direction(i) = step;
  space.retract_configuration(perturbed, direction);
  direction(i) = 0.0;
  equations.evaluate(perturbed, perturbed_terms, what);
}

}  // namespace liembs
