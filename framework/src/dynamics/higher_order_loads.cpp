// Time-varying applied wrenches of the higher-order dynamics (higher_order_dynamics.hpp):
// the capability lookup and the conversion from the model's loads to the tree's.
#include <liembs/dynamics/higher_order_loads.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>

#include <string>

namespace liembs {

HigherOrderDynamicsWithLoads::~HigherOrderDynamicsWithLoads() = default;

HigherOrderDynamicsWithLoads& with_load_rates(HigherOrderDynamics& dynamics) {
  HigherOrderDynamicsWithLoads* with_loads = dynamics.capabilities().with_loads;
  if (!with_loads)
    throw ModelError("the higher-order dynamics of the '" + std::string(dynamics.representation()) +
                     "' representation do not take time-varying applied wrenches (its plugin declares no "
                     "HigherOrderCapabilities::with_loads; the built-in representations do)");
  return *with_loads;
}

namespace {

// compile_tree's rule: a load on a body welded to a fixed world acts on no node.
bool acts_on_tree(const AppliedWrench& load, const KinematicTree& tree) {
  return tree.body_node[load.body] >= 0 || tree.floating_base;
}

std::size_t loads_on_tree(const Model& model, const KinematicTree& tree) {
  std::size_t count = 0;
  for (const AppliedWrench& load : model.loads) count += acts_on_tree(load, tree) ? 1 : 0;
  if (count != tree.loads.size())
    throw Error("applied wrench rates: the tree has " + std::to_string(tree.loads.size()) + " loads, the model " +
                std::to_string(count) + " acting on it; is the tree compile_tree(model)?");
  return count;
}

}  // namespace

std::vector<int> tree_load_indices(const Model& model, const KinematicTree& tree) {
  loads_on_tree(model, tree);
  std::vector<int> indices;
  int next = 0;
  for (const AppliedWrench& load : model.loads) indices.push_back(acts_on_tree(load, tree) ? next++ : -1);
  return indices;
}

void tree_load_rates(const Model& model, const KinematicTree& tree, const std::vector<Eigen::MatrixXd>& model_rates,
                     LoadRates& tree_rates) {
  if (model_rates.size() != model.loads.size())
    throw Error("applied wrench rates: " + std::to_string(model_rates.size()) + " matrices for the model's " +
                std::to_string(model.loads.size()) + " loads");
  tree_rates.resize(loads_on_tree(model, tree));
  std::size_t next = 0;
  for (std::size_t l = 0; l < model.loads.size(); ++l) {
    const AppliedWrench& load = model.loads[l];
    const Eigen::MatrixXd& rates = model_rates[l];
    if (rates.rows() != 6 || rates.cols() != model_rates.front().cols() || rates.cols() < 1)
      throw Error("applied wrench rates of load " + std::to_string(l) + " (on body '" + model.bodies[load.body].name +
                  "') are " + std::to_string(rates.rows()) + " x " + std::to_string(rates.cols()) +
                  "; expected 6 x (r+1), the same for every load");
    if (!acts_on_tree(load, tree)) continue;
    Eigen::MatrixXd& out = tree_rates[next++];
    if (load.frame == AppliedWrench::Frame::world) {
      out = rates;  // world coordinates in both
    } else {  // body frame -> node frame, as compile_tree moves the constant loads
      out.resize(6, rates.cols());
      out.noalias() = se3::Ad_inverse(tree.body_offset[load.body]).transpose() * rates;
    }
  }
}

}  // namespace liembs
