#pragma once
// The contract of the ALGORITHM kind: what the host may ask of an algorithm plugin
// (docs/plugins.md, "Algorithm"). Every operation is marked REQUIRED or OPTIONAL; an
// optional one is declared through a capabilities() query, never found by dynamic_cast,
// and the host's fallback without it is stated beside it (and, at run time, in the run's
// method_choices: summary.json and the console).
//
// An Algorithm component binds itself to a model, a group (and, for tree algorithms, a
// representation) and returns
//   - a ForwardDynamics for `liembs run`: the right-hand side the integrator calls once per
//     stage, plus the optional views of the same formulation listed in DynamicsCapabilities;
//   - a BatchEvaluator for `liembs eval` (OPTIONAL, AlgorithmCapabilities::batch_evaluation).
#include <liembs/plugin/component.hpp>
#include <liembs/plugin/state.hpp>

#include <memory>
#include <string>
#include <vector>

namespace liembs {

struct Model;
class Group;
class Representation;
class ConstrainedSystem;  // liembs/sim/constrained_system.hpp
class VelocityRateDerivatives;
class PrescribedMotion;

// The OPTIONAL views of a bound ForwardDynamics. A null member is a capability the plugin
// does not provide; the comment states what the host does instead.
struct DynamicsCapabilities {
  // The DAE form M(q) V' = Q(q, V, t) of a formulation WITHOUT constraint rows (constraints()
  // is null), with analytic Newton-matrix derivatives (ConstrainedSystem::analytic_derivatives()
  // != 0; a tree: M from CRBA, Q = -RNEA(q, u, 0), C and K from the RNEA derivatives).
  // Without it: the implicit integrators solve the ODE form V' = F(q, V, t) with the Newton
  // matrix 1 + gamma' C + beta' K from velocity_rate_derivatives, or from finite differences
  // of velocity_rates when that is absent too.
  ConstrainedSystem* dae_form = nullptr;
  // dF/dV and dF/d delta of velocity_rates() for a formulation without constraint rows (a
  // tree: the forward-dynamics derivatives, paper 000 section 6.1). Without it: the ODE form's
  // Newton matrix is differenced, or the DAE form is used when dae_form is given.
  VelocityRateDerivatives* velocity_rate_derivatives = nullptr;
  // Joints that follow a prescribed motion q(t) ([model.prescribed]). Without it: a model with
  // prescribed joints is refused before the run starts, naming the algorithm.
  PrescribedMotion* prescribed_motion = nullptr;
  // Why a formulation that would normally have analytic Newton-matrix derivatives has none
  // here (e.g. the representation plugin cannot bind derivatives); empty otherwise. The run
  // states it as the reason for differenced Newton matrices.
  std::string no_analytic_derivatives;
};

// Right-hand side of the equations of motion for one bound model: the time derivative of
// the velocity coordinates at a state. One virtual call per integrator stage.
class ForwardDynamics {
 public:
  virtual ~ForwardDynamics();
  // REQUIRED. V' at `state` (with constraints: the solution of the index-1 system).
  virtual void velocity_rates(const State& state, Eigen::VectorXd& rates) = 0;

  // REQUIRED. The layout of the state this formulation integrates: free bodies on the group
  // (State::poses) and joint coordinates (State::coordinates).
  virtual std::size_t free_bodies() const = 0;
  virtual std::size_t joint_coordinates() const = 0;
  virtual State initial_state() const = 0;
  // REQUIRED. Pose and body-fixed twist (omega, R^T r') of every model body at a state, for
  // outputs and invariants.
  virtual void body_motion(const State& state, std::vector<Pose>& poses, std::vector<Vec6>& twists) = 0;

  // OPTIONAL (default: null, an ODE). The constraints of the formulation (joints in absolute
  // coordinates, loop closures of a tree); velocity_rates() then solves the index-1 system.
  virtual ConstrainedSystem* constraints() { return nullptr; }

  // OPTIONAL (default: none, every fallback of DynamicsCapabilities). Called once per bound
  // run or integrator step, never per body; the pointers stay valid while this object lives.
  virtual DynamicsCapabilities capabilities() { return {}; }
};

// OPTIONAL view of a ForwardDynamics (DynamicsCapabilities::velocity_rate_derivatives): the
// derivatives of an ODE's velocity rates V' = F(q, V), dF/dV and dF/d delta along the
// retraction q exp(delta) with V fixed, for the Newton matrices of the implicit integrators
// in the ODE form (MotionEquations: M = 1, Q = F, so C = -dF/dV and K = -dF/d delta).
class VelocityRateDerivatives {
 public:
  virtual ~VelocityRateDerivatives();
  // REQUIRED of the view. n x n each, n the velocity dimension.
  virtual void velocity_rate_derivatives(const State& state, Eigen::MatrixXd& by_velocity,
                                         Eigen::MatrixXd& by_configuration) = 0;
};

// OPTIONAL view of a ForwardDynamics (DynamicsCapabilities::prescribed_motion): joints that
// follow a prescribed motion q(t) while the rest of the tree moves freely (hybrid dynamics,
// paper 003 Algorithm 4 at order 0; docs/prescribed-motion.md). The prescribed coordinates
// and rates of a state are never integrated: every evaluation takes them from q(t), q'(t)
// at state.time, and q''(t) enters the dynamics as a given acceleration.
class PrescribedMotion {
 public:
  virtual ~PrescribedMotion();
  // The prescribed degrees of freedom, named as the tree names them ("joint", "joint[k]").
  virtual const std::vector<std::string>& prescribed_coordinates() const = 0;
  // Sets the prescribed coordinates and rates of `state` to q(t), q'(t) at state.time.
  virtual void prescribe(State& state) const = 0;
  // The generalized forces the prescribed coordinates need at `state` (joint torques or
  // forces, one per prescribed coordinate) and their rates q'(t).
  virtual void prescribed_forces(const State& state, Eigen::VectorXd& forces, Eigen::VectorXd& rates) = 0;
};

struct DynamicsContext {
  std::shared_ptr<const Model> model;  // an evaluator may keep it
  const Group& group;                 // owned by the run, outlives the evaluator
  std::string group_name;
  const Representation* representation = nullptr;  // null when the run selects none
  std::string representation_name;
};

// Batch evaluation for `liembs eval`: a function from named input columns to named output
// columns (documented in README.md, "liembs eval").
class BatchEvaluator {
 public:
  virtual ~BatchEvaluator();
  virtual const std::vector<std::string>& input_columns() const = 0;
  virtual const std::vector<std::string>& output_columns() const = 0;
  virtual void evaluate(const double* inputs, double* outputs) = 0;
};

// What an Algorithm component declares about itself (OPTIONAL operations of the kind).
struct AlgorithmCapabilities {
  // bind_evaluator gives a BatchEvaluator. Without it: `liembs eval` (and Python's evaluate)
  // refuses the algorithm, naming it.
  bool batch_evaluation = false;
  // The algorithm works in a twist representation (tree algorithms): when the run names none,
  // the host creates the default 'body-fixed'. Without it: no representation is created and
  // DynamicsContext::representation is null unless the run file names one.
  bool uses_representation = false;
};

class Algorithm : public Component {
 public:
  static constexpr Kind kind = Kind::algorithm;

  // OPTIONAL (default: none declared).
  virtual AlgorithmCapabilities capabilities() const { return {}; }

  // REQUIRED. Binds forward dynamics to a model. An algorithm that has no meaning for the
  // model or the chosen group/representation (or computes no forward dynamics at all, such
  // as an inverse-dynamics algorithm for `liembs eval`) throws a ModelError saying why; the
  // host adds the names of the choices.
  virtual std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext& context) const = 0;

  // OPTIONAL (AlgorithmCapabilities::batch_evaluation). Binds the algorithm for batch
  // evaluation. The host never calls it unless declared; the default throws ModelError.
  virtual std::unique_ptr<BatchEvaluator> bind_evaluator(const DynamicsContext& context) const;
};

}  // namespace liembs
