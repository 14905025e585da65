#include <liembs/error.hpp>
#include <liembs/model/model.hpp>
#include <liembs/sim/prescribed_motion.hpp>
#include <liembs/util/time_function.hpp>

#include <cmath>
#include <sstream>

namespace liembs {

PrescribedCoordinates::PrescribedCoordinates(const Model& model, const KinematicTree& tree)
    : is_prescribed_(static_cast<std::size_t>(tree.dof()), false) {
  std::size_t previous_joint = static_cast<std::size_t>(-1), k = 0;  // k: the node's index within its joint
  for (int node = 0; node < tree.dof(); ++node) {
    const std::size_t j = tree.dof_joint[static_cast<std::size_t>(node)];
    k = (j == previous_joint) ? k + 1 : 0;
    previous_joint = j;
    const Joint& joint = model.joints[j];
    if (joint.prescribed.empty()) continue;
    if (joint.prescribed.size() != joint.dof())
      throw ModelError("joint '" + joint.name + "' has " + std::to_string(joint.prescribed.size()) +
                       " prescribed motions for " + std::to_string(joint.dof()) + " coordinates");
    nodes_.push_back(node);
    names_.push_back(tree.dof_names[static_cast<std::size_t>(node)]);
    joint_names_.push_back(joint.name);
    functions_.push_back(joint.prescribed[k].get());
    is_prescribed_[static_cast<std::size_t>(node)] = true;
  }
}

void PrescribedCoordinates::evaluate(double t, Eigen::VectorXd& position, Eigen::VectorXd& rate,
                                     Eigen::VectorXd& acceleration) const {
  const auto n = static_cast<Eigen::Index>(nodes_.size());
  position.resize(n);
  rate.resize(n);
  acceleration.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const TimeFunction& f = *functions_[static_cast<std::size_t>(i)];
    position(i) = f.value(t);
    rate(i) = f.rate(t);
    acceleration(i) = f.acceleration(t);
    if (std::isfinite(position(i)) && std::isfinite(rate(i)) && std::isfinite(acceleration(i))) continue;
    std::ostringstream message;
    message << "joint '" << joint_names_[static_cast<std::size_t>(i)] << "': the prescribed motion of "
            << names_[static_cast<std::size_t>(i)] << ", \"" << f.text() << "\", is not finite at t = " << t
            << " s (q = " << position(i) << ", q' = " << rate(i) << ", q'' = " << acceleration(i) << ")";
    throw SimulationError(message.str());
  }
}

}  // namespace liembs
