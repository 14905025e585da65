#pragma once
// The Representation component of a policy: what a representation plugin registers. It
// binds the recursive algorithms (recursive_algorithms.hpp), their derivatives
// (derivative_algorithms.hpp), the derivatives with respect to the joints' geometry
// (geometric_derivative_algorithms.hpp) and their higher-order time derivatives
// (higher_order_algorithms.hpp) instantiated with the policy, so a third-party policy written
// against representations.hpp gets all four.
#include <liembs/dynamics/derivative_algorithms.hpp>
#include <liembs/dynamics/geometric_derivative_algorithms.hpp>
#include <liembs/dynamics/higher_order_algorithms.hpp>
#include <liembs/dynamics/recursive_algorithms.hpp>
#include <liembs/plugin/representation.hpp>

namespace liembs {

template <class Policy>
class RepresentationComponent final : public Representation {
 public:
  RepresentationCapabilities capabilities() const override {
    return {.derivatives = true, .geometric_derivatives = true, .higher_order = true};
  }
  std::unique_ptr<TreeDynamics> bind_tree(std::shared_ptr<const KinematicTree> tree) const override {
    return std::make_unique<RecursiveDynamics<Policy>>(std::move(tree));
  }
  std::unique_ptr<TreeDerivatives> bind_derivatives(std::shared_ptr<const KinematicTree> tree) const override {
    return std::make_unique<RecursiveDerivatives<Policy>>(std::move(tree));
  }
  std::unique_ptr<TreeGeometricDerivatives> bind_geometric_derivatives(std::shared_ptr<const KinematicTree> tree) const override {
    return std::make_unique<RecursiveGeometricDerivatives<Policy>>(std::move(tree));
  }
  std::unique_ptr<HigherOrderDynamics> bind_higher_order(std::shared_ptr<const KinematicTree> tree, int max_order) const override {
    return std::make_unique<RecursiveHigherOrder<Policy>>(std::move(tree), max_order);
  }
  Vec6 twist_from_body(const Pose& pose, const Vec6& body_twist) const override {
    return Policy::from_body(pose, body_twist);
  }
};

}  // namespace liembs
