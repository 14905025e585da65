#pragma once
// Algorithm plugins decide what is computed from the model state. For integration a run
// needs forward dynamics: the algorithm binds itself to a model, a group (and, for tree
// algorithms, a representation) and returns an evaluator that the integrator calls once
// per stage.
#include <liembs/plugin/component.hpp>
#include <liembs/sim/state.hpp>

#include <memory>
#include <string>
#include <vector>

namespace liembs {

struct Model;
class Group;
class Representation;
class ConstrainedSystem;

// Right-hand side of the equations of motion for one bound model: the time derivative of
// the velocity coordinates at a state. One virtual call per integrator stage.
class ForwardDynamics {
 public:
  virtual ~ForwardDynamics();
  virtual void velocity_rates(const State& state, Eigen::VectorXd& rates) = 0;

  // The layout of the state this formulation integrates: free bodies on the group
  // (State::poses) and joint coordinates (State::coordinates).
  virtual std::size_t free_bodies() const = 0;
  virtual std::size_t joint_coordinates() const = 0;
  virtual State initial_state() const = 0;
  // Pose and body-fixed twist (omega, R^T r') of every model body at a state, for outputs
  // and invariants.
  virtual void body_motion(const State& state, std::vector<Pose>& poses, std::vector<Vec6>& twists) = 0;

  // The constraints of the formulation (joints in absolute coordinates, loop closures of a
  // tree), or null for an ODE. With constraints, velocity_rates() solves the index-1 system.
  virtual ConstrainedSystem* constraints() { return nullptr; }
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

class Algorithm : public Component {
 public:
  static constexpr Kind kind = Kind::algorithm;

  // Whether the algorithm works in a twist representation (tree algorithms); when true and
  // the run names none, the run uses the default 'body-fixed'.
  virtual bool uses_representation() const { return true; }

  // Binds the algorithm for batch evaluation; the default says it has none.
  virtual std::unique_ptr<BatchEvaluator> bind_evaluator(const DynamicsContext& context) const;

  // Binds forward dynamics to a model. An algorithm that has no meaning for the model or
  // the chosen group/representation throws a ModelError naming both choices and why.
  virtual std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext& context) const = 0;
};

}  // namespace liembs
