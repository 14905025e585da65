#pragma once
// The derivatives of an ODE's velocity rates V' = F(q, V) (ForwardDynamics::velocity_rates):
// dF/dV and dF/d delta along the retraction q exp(delta), V fixed, for the Newton matrices of
// the implicit integrators when they solve a formulation without constraint rows in its ODE
// form (MotionEquations: M = 1, Q = F, so C = -dF/dV and K = -dF/d delta). A tree gives them
// from the forward-dynamics derivatives (paper 000 section 6.1, dFD: du'/dq, du'/du). A
// capability found by dynamic_cast on the ForwardDynamics (the plugin ABI is unchanged).
#include <liembs/sim/state.hpp>

namespace liembs {

class VelocityRateDerivatives {
 public:
  virtual ~VelocityRateDerivatives();
  // Whether velocity_rate_derivatives can be called (a tree: not with loops, prescribed motion,
  // a base parameterization with internal constraints, or a representation without derivatives).
  virtual bool has_velocity_rate_derivatives() const = 0;
  // n x n each, n the velocity dimension.
  virtual void velocity_rate_derivatives(const State& state, Eigen::MatrixXd& by_velocity,
                                         Eigen::MatrixXd& by_configuration) = 0;
};

}  // namespace liembs
