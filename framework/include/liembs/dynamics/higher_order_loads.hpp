#pragma once
// Time-varying applied wrenches for the higher-order dynamics (paper 003, eqs. 67-70;
// docs/higher-order.md, "C++"): the load derivatives, the capability interface that takes
// them, and their conversion from the model's loads.
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/model/model.hpp>

#include <vector>

namespace liembs {

// Applied wrenches that vary in time: one 6 x (r+1) matrix per entry of KinematicTree::loads
// (in order), column k the k-th time derivative of that load's (moment; force) in its own
// coordinates (KinematicTree::Load: node frame for a body-frame load, world frame for a
// world-frame one); column 0 is the load's value, which replaces the tree's constant one.
// tree_load_rates below converts them from the model's loads. Empty: the constant loads.
using LoadRates = std::vector<Eigen::MatrixXd>;

// The three algorithms with applied wrenches that vary in time (003 Alg. 2 and 3 take
// W_app^(0..r), eq. 69): an OPTIONAL operation of a HigherOrderDynamics object, declared by
// its capabilities().with_loads (the built-in representations provide it). `loads` as
// LoadRates, r + 1 columns each (r the order of the call); the calls without them are these
// with the tree's constant loads.
class HigherOrderDynamicsWithLoads {
 public:
  virtual ~HigherOrderDynamicsWithLoads();
  virtual void inverse_dynamics(const TreeState& state, const Eigen::MatrixXd& rates, const LoadRates& loads,
                                Eigen::MatrixXd& forces) = 0;
  virtual void forward_dynamics(const TreeState& state, const Eigen::MatrixXd& forces, const LoadRates& loads,
                                Eigen::MatrixXd& rates) = 0;
  virtual void hybrid_dynamics(const TreeState& state, const HybridSplit& split, const Eigen::MatrixXd& given,
                               const LoadRates& loads, Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) = 0;
};

// `dynamics` with time-varying loads (capabilities().with_loads); throws ModelError naming
// the representation if its plugin does not provide them.
HigherOrderDynamicsWithLoads& with_load_rates(HigherOrderDynamics& dynamics);

// The model's applied wrench derivatives (model_rates[l]: 6 x (r+1) for model.loads[l], its
// (moment; force) in its own frame, column k the k-th derivative) as the tree's LoadRates
// (body-frame loads moved to their node's frame; loads on bodies welded to a fixed world,
// which the tree leaves out, dropped). `tree` is compile_tree(model). Throws Error naming a
// load whose matrix is not 6 x (r+1).
void tree_load_rates(const Model& model, const KinematicTree& tree, const std::vector<Eigen::MatrixXd>& model_rates,
                     LoadRates& tree_rates);
// Per model load, its index in tree.loads, or -1 if the tree leaves it out.
std::vector<int> tree_load_indices(const Model& model, const KinematicTree& tree);

}  // namespace liembs
