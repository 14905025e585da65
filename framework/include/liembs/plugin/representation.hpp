#pragma once
// Twist representation plugins: the frame in which twists, accelerations, wrenches and
// inertias live inside the recursive algorithms (papers 000 / 001: body-fixed, spatial,
// hybrid, mixed). A representation plugin is the compiled instantiation of the tree
// algorithm families (docs/algorithms.md, "Where the tree algorithms live") for its policy
// (liembs/dynamics/representations.hpp): RepresentationComponent<Policy> implements every
// operation below, so a third-party representation is a policy and one registration line
// (sdk/representation-template).
//
// The contract (docs/plugins.md, "Plugin contracts"): what the host may ask of a
// representation, each operation REQUIRED or OPTIONAL. A plugin declares the OPTIONAL
// operations it provides in capabilities(); the host asks capabilities() before it calls
// one, never a dynamic_cast, and where one is missing it does what the operation's comment
// says (and says so).
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/dynamics/tree_geometric_derivatives.hpp>
#include <liembs/lie/types.hpp>
#include <liembs/plugin/component.hpp>

#include <memory>

namespace liembs {

// The OPTIONAL operations of a representation it provides. Default: none.
struct RepresentationCapabilities {
  bool derivatives = false;            // bind_derivatives
  bool geometric_derivatives = false;  // bind_geometric_derivatives
  bool higher_order = false;           // bind_higher_order (and its objects' capabilities())
};

class Representation : public Component {
 public:
  static constexpr Kind kind = Kind::representation;

  // REQUIRED. The recursive algorithms of this representation (kinematics, Jacobians, RNEA,
  // ABA, CRBA, Coriolis; liembs/dynamics/recursive_algorithms.hpp), bound to `tree`.
  virtual std::unique_ptr<TreeDynamics> bind_tree(std::shared_ptr<const KinematicTree> tree) const = 0;

  // REQUIRED. The twist of a body in this representation, from its pose and body-fixed
  // twist (the conversions of paper 001, section 3.5).
  virtual Vec6 twist_from_body(const Pose& pose, const Vec6& body_twist) const = 0;

  // Which OPTIONAL operations below this plugin provides.
  virtual RepresentationCapabilities capabilities() const { return {}; }

  // OPTIONAL (capabilities().derivatives). The analytic derivatives of the equations of
  // motion and the regressor, bound to `tree` (liembs/dynamics/derivative_algorithms.hpp).
  // Without it: an implicit integrator differences the dynamics for its Newton matrix (and
  // states it in the run's method choices), and the derivative algorithms of `liembs eval`
  // are refused with the reason.
  virtual std::unique_ptr<TreeDerivatives> bind_derivatives(std::shared_ptr<const KinematicTree> tree) const;

  // OPTIONAL (capabilities().geometric_derivatives). The derivatives of inverse dynamics by
  // the joints' references and screws, bound to `tree`
  // (liembs/dynamics/geometric_derivative_algorithms.hpp). Without it: the algorithm
  // rnea-geometric-derivatives is refused with the reason.
  virtual std::unique_ptr<TreeGeometricDerivatives> bind_geometric_derivatives(std::shared_ptr<const KinematicTree> tree) const;

  // OPTIONAL (capabilities().higher_order). The higher-order time derivatives of inverse,
  // forward and hybrid dynamics (paper 003), bound to `tree`, with workspaces for orders up
  // to max_order (grown if a call asks for more) (liembs/dynamics/higher_order_algorithms.hpp).
  // Without it: the higher-order algorithms, and the hybrid runs of trees, are refused
  // with the reason.
  virtual std::unique_ptr<HigherOrderDynamics> bind_higher_order(std::shared_ptr<const KinematicTree> tree,
                                                                 int max_order) const;
};

}  // namespace liembs
