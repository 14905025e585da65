#pragma once
// What a twist-representation plugin provides for the higher-order time derivatives of a
// tree's dynamics (paper 003: H-GRNE, H-GABI, H-GHYB; docs/higher-order.md). One virtual call
// per algorithm call; the recursions inside are fixed-size Eigen code
// (higher_order_algorithms.hpp).
//
// Coordinates as in tree_dynamics.hpp: u = (base body twist (omega, R^T r') if the base
// floats, q'), forces = (base body-frame wrench (moment about the base origin, force), joint
// forces). Derivatives are component-wise time derivatives of these: the base rows of
// u^(k) are d^k/dt^k of the body twist's components, those of tau^(k) d^k/dt^k of the
// body-frame wrench's. Gravity and the model's constant loads are included, as in RNEA.
//
// Matrices hold one derivative per column: `rates` column k is u^(k+1) (column 0 the
// acceleration u', as the `acceleration` of TreeDynamics::inverse_dynamics), `forces`
// column k is tau^(k) (column 0 the force of inverse dynamics). The order r of a call is
// the number of columns minus one; order 0 is ordinary inverse/forward/hybrid dynamics.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>

#include <string_view>
#include <vector>

namespace liembs {

// Which generalized coordinates have their motion prescribed (the others their force),
// for hybrid dynamics (003 Algorithm 4).
struct HybridSplit {
  bool base_motion = false;         // floating base: true = its twist derivatives are given
  std::vector<bool> joint_motion;   // per degree of freedom: true = q'' and up given
};

class HigherOrderDynamicsWithLoads;  // higher_order_loads.hpp

// The OPTIONAL operations of a HigherOrderDynamics object it provides. Default: none.
struct HigherOrderCapabilities {
  // The three algorithms with applied wrenches that vary in time (higher_order_loads.hpp).
  // Without it: a run or evaluation with time-varying loads is refused with the reason.
  HigherOrderDynamicsWithLoads* with_loads = nullptr;
};

class HigherOrderDynamics {
 public:
  virtual ~HigherOrderDynamics();
  virtual std::string_view representation() const = 0;
  virtual const KinematicTree& tree() const = 0;

  // H-GRNE (003 Algorithms 1-2): from the state and u^(1..r+1) (rates, nv x (r+1)) the
  // forces tau^(0..r) (nv x (r+1)).
  virtual void inverse_dynamics(const TreeState& state, const Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) = 0;
  // H-GABI (003 Algorithm 3): from the state and tau^(0..r) (forces, nv x (r+1)) the rates
  // u^(1..r+1) (nv x (r+1)); the articulated inertias are computed once (Lemma 2).
  virtual void forward_dynamics(const TreeState& state, const Eigen::MatrixXd& forces, Eigen::MatrixXd& rates) = 0;
  // H-GHYB (003 Algorithm 4): `given` (nv x (r+1)) holds, per row, u^(k+1) in column k for a
  // coordinate whose motion is prescribed and tau^(k) for one whose force is; both rates and
  // forces come out complete (nv x (r+1) each).
  virtual void hybrid_dynamics(const TreeState& state, const HybridSplit& split, const Eigen::MatrixXd& given,
                               Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) = 0;

  // The articulated inertia of the floating base of the last forward or hybrid call, in
  // body coordinates (Ad_C^T M^A Ad_C, the base's Schur complement of M for forward dynamics).
  virtual Mat6 base_articulated_inertia() const = 0;

  // Which OPTIONAL operations this object provides (the host never discovers them by
  // dynamic_cast).
  virtual HigherOrderCapabilities capabilities() { return {}; }
};

}  // namespace liembs
