#pragma once
// The partial derivatives an implicit integrator's Newton matrix needs (DaeDerivatives:
// C = -dQ/dV, K = d(M a + J^T lambda - Q)/d delta, P = d(J V - nu)/d delta), from the
// formulation when it gives them analytically (ConstrainedSystem::evaluate_derivatives) and
// by finite differences of its DAE terms otherwise or when the run asks for them:
//   [integrator] newton_derivatives = "analytic" | "finite-differences"
// (absent: analytic where the formulation gives them, differences for the rest). One object
// per integrator, shared by bdf, generalized-alpha and ida.
#include <liembs/plugin/integrator.hpp>
#include <liembs/plugin/options.hpp>
#include <liembs/sim/motion_equations.hpp>

#include <string>
#include <vector>

namespace liembs {

enum class DerivativeMethod { automatic, analytic, finite_differences };
// How a formulation without constraint rows that gives analytic derivatives is solved: in its
// DAE form M V' = Q (Newton matrix M + gamma' C + beta' K from the inverse-dynamics
// derivatives) or in its ODE form V' = F (1 + gamma' C + beta' K from the forward-dynamics
// derivatives); docs/newton-matrices.md.
enum class UnconstrainedForm { dae, ode };

// How an implicit integrator solves its Newton systems: by a factorization of the assembled
// Newton matrix (dense), or matrix-free by GMRES on the ODE form V' = F of a formulation without
// constraints (MatrixFreeNewton, SPGMR for ida; docs/newton-matrices.md, "Long chains").
// automatic: GMRES where it applies from a number of velocity coordinates on that each
// integrator declares (its matrix_free_threshold, measured with bench-long-chains).
enum class LinearSolver { automatic, dense, gmres };

// The options the implicit integrators share, declared once (plugin/options.hpp): each
// integrator adds them to its declaration, and the readers in liembs/config/solver_options.hpp
// read through them. `gmres_threshold`: the integrator's matrix_free_threshold; `form`: its
// default form.
std::vector<OptionSpec> newton_options(long gmres_threshold, UnconstrainedForm form);

class NewtonDerivatives {
 public:
  explicit NewtonDerivatives(DerivativeMethod method = DerivativeMethod::automatic,
                             UnconstrainedForm form = UnconstrainedForm::dae)
      : method_(method), form_(form) {}

  DerivativeMethod method() const { return method_; }
  // Whether an unconstrained formulation that gives analytic derivatives is solved in its DAE
  // form (DynamicsCapabilities::dae_form, MotionEquations): with the DAE form chosen, unless the run asks for
  // differences, which keep the ODE form V' = F with a differenced Newton matrix.
  bool dae_form() const { return method_ != DerivativeMethod::finite_differences && form_ == UnconstrainedForm::dae; }
  // Whether the ODE form of such a formulation takes its Newton matrix from the analytic
  // derivatives of its velocity rates (VelocityRateDerivatives; a formulation without them but
  // with analytic DAE derivatives is then solved in its DAE form, MotionEquations).
  bool analytic_odes() const {
    return method_ != DerivativeMethod::finite_differences && form_ == UnconstrainedForm::ode;
  }
  // A new run: the damping pattern of the differences is found again.
  void reset() { damping_groups_.clear(), damping_rows_.clear(), choices_.clear(), pattern_dimension_ = -1; }

  // The parts of `what` that evaluate() takes from the formulation's analytic derivatives.
  unsigned analytic_parts(const MotionEquations& equations, unsigned what) const;
  // With newton_derivatives = "analytic": throws SimulationError, naming the integrator and the
  // missing derivatives, when the formulation does not give all of `what`.
  void require(const MotionEquations& equations, unsigned what, const std::string& integrator) const;
  // At the start of a run (or when the formulation is bound again): require(), then records the
  // method choices for `what` (method_choices): the form an unconstrained formulation is solved
  // in, the Newton matrix (analytic, finite differences, or which parts of each) and the group's
  // derivatives it uses, each with the option or the missing capability that decided it.
  void choose(const StateSpace& space, const MotionEquations& equations, unsigned what, const std::string& integrator);
  // Replaces (or adds) the choice of one topic, for an integrator that overrides one (IDA's own
  // difference quotients).
  void state_choice(MethodChoice choice);
  void forget_choice(const std::string& topic);
  // The Newton steps of this run are matrix-free (GMRES on directional differences of F in the
  // ODE form): no Newton matrix is formed. `asked`: linear_solver = "gmres"; otherwise chosen
  // from `threshold` velocity coordinates on.
  void state_matrix_free(bool asked, long threshold);
  // The choices of the last choose(), for Integrator::method_choices().
  const std::vector<MethodChoice>& method_choices() const { return choices_; }

  // Fills `what` (dae::damping | dae::stiffness | dae::velocity_constraint) at `state`, whose
  // terms are in `terms` (M, Q and J; nu too for velocity_constraint), for a and lambda.
  void evaluate(const StateSpace& space, MotionEquations& equations, const State& state, const DaeTerms& terms,
                const Eigen::VectorXd& acceleration, const Eigen::VectorXd& multipliers, DaeDerivatives& out,
                unsigned what);

  // Evaluations of the DAE terms spent on differences of C (one per group of columns).
  std::size_t damping_evaluations() const { return damping_groups_.size(); }

 private:
  void find_damping_pattern(MotionEquations& equations, const State& state);
  void difference_damping(MotionEquations& equations, const State& state, const DaeTerms& terms, Eigen::MatrixXd& out);
  void difference_configuration(const StateSpace& space, MotionEquations& equations, const State& state,
                                const DaeTerms& terms, const Eigen::VectorXd& acceleration,
                                const Eigen::VectorXd& multipliers, DaeDerivatives& out, unsigned what);

  DerivativeMethod method_;
  UnconstrainedForm form_;
  Eigen::Index pattern_dimension_ = -1;
  std::vector<std::vector<Eigen::Index>> damping_rows_;    // per column of C, its nonzero rows
  std::vector<std::vector<Eigen::Index>> damping_groups_;  // columns differenced together
  State perturbed_;
  DaeTerms perturbed_terms_;
  Eigen::VectorXd perturbation_, base_, column_, violation_, perturbed_violation_;
  std::vector<MethodChoice> choices_;
};

}  // namespace liembs
