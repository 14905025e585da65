#pragma once
// The prescribed coordinates of a tree (docs/prescribed-motion.md): the helper a tree
// algorithm's PrescribedMotion view (liembs/plugin/algorithm.hpp, an OPTIONAL capability
// declared in DynamicsCapabilities) is built on.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/plugin/algorithm.hpp>

#include <string>
#include <vector>

namespace liembs {

struct Model;
class TimeFunction;

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
