#pragma once
// Twist representation plugins: the frame in which twists, accelerations, wrenches and
// inertias live inside the recursive algorithms (papers 000 / 001: body-fixed, spatial,
// hybrid, mixed). A representation plugin instantiates the recursive algorithms of
// liembs/dynamics/recursive_algorithms.hpp with its policy and binds them to a tree.
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/lie/types.hpp>
#include <liembs/plugin/component.hpp>

#include <memory>

namespace liembs {

class Representation : public Component {
 public:
  static constexpr Kind kind = Kind::representation;

  // The recursive algorithms of this representation, bound to `tree`.
  virtual std::unique_ptr<TreeDynamics> bind_tree(std::shared_ptr<const KinematicTree> tree) const = 0;

  // The analytic derivatives of the equations of motion and the regressor, bound to `tree`
  // (liembs/dynamics/derivative_algorithms.hpp).
  virtual std::unique_ptr<TreeDerivatives> bind_derivatives(std::shared_ptr<const KinematicTree> tree) const = 0;

  // The higher-order time derivatives of inverse, forward and hybrid dynamics (paper 003),
  // bound to `tree`, with workspaces for orders up to max_order (grown if a call asks for
  // more) (liembs/dynamics/higher_order_algorithms.hpp).
  virtual std::unique_ptr<HigherOrderDynamics> bind_higher_order(std::shared_ptr<const KinematicTree> tree,
                                                                 int max_order) const = 0;

  // The twist of a body in this representation, from its pose and body-fixed twist
  // (the conversions of paper 001, section 3.5).
  virtual Vec6 twist_from_body(const Pose& pose, const Vec6& body_twist) const = 0;
};

}  // namespace liembs
