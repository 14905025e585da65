#pragma once
// Joints that follow a prescribed motion q(t) in a run while the rest of the tree moves
// freely: hybrid dynamics (paper 003 Algorithm 4 at order 0; docs/prescribed-motion.md).
//
// A ForwardDynamics that honours Joint::prescribed also derives from PrescribedMotion; the
// run finds it with dynamic_cast (a capability, so plugins built without it load unchanged
// and a model with prescribed joints is refused for them). The prescribed coordinates and
// rates of a state are then never integrated: every evaluation takes them from q(t), q'(t)
// at state.time, and q''(t) enters the dynamics as a given acceleration.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/sim/state.hpp>

#include <string>
#include <vector>

namespace liembs {

struct Model;
class TimeFunction;

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

// The prescribed coordinates of a tree compiled from a model: per tree node whose joint has
// a prescribed motion, the function of time of its degree of freedom.
class PrescribedCoordinates {
 public:
  PrescribedCoordinates() = default;
  PrescribedCoordinates(const Model& model, const KinematicTree& tree);

  bool empty() const { return nodes_.empty(); }
  std::size_t size() const { return nodes_.size(); }
  const std::vector<int>& nodes() const { return nodes_; }        // tree nodes (joint coordinates)
  const std::vector<std::string>& names() const { return names_; }  // their tree DoF names
  // Per tree node: true when its motion is prescribed.
  const std::vector<bool>& is_prescribed() const { return is_prescribed_; }

  // q, q', q'' of every prescribed coordinate at t (resized to size()). Throws
  // SimulationError naming the joint and the expression when a value is not finite.
  void evaluate(double t, Eigen::VectorXd& position, Eigen::VectorXd& rate, Eigen::VectorXd& acceleration) const;

 private:
  std::vector<int> nodes_;
  std::vector<std::string> names_, joint_names_;
  std::vector<const TimeFunction*> functions_;  // owned by the model's joints
  std::vector<bool> is_prescribed_;
};

}  // namespace liembs
