// Algorithm plugin for the higher-order time derivatives of tree dynamics (paper 003,
// docs/higher-order.md), in the representation chosen for the run, for `liembs eval`:
// "higher-order-rnea" (H-GRNE), "higher-order-aba" (H-GABI) and "hybrid-dynamics" (H-GHYB,
// order 0 included). [algorithm] order = r (required, 0..20); hybrid-dynamics also reads
// prescribed = [joint or dof names whose motion is given] and base = "force" | "motion".
// varying_loads = true makes the model's [[model.loads]] inputs that vary in time.
//
// Columns: the state as for `rnea` (base pose and body twist if the base floats, q.<dof>,
// qd.<dof>), then per derivative order k the coordinates' k-th derivatives, named
//   base.wx.d<k> ... base.vz.d<k>   the body twist's k-th derivative (k >= 1)
//   q.<dof>.d<k>                    the coordinate's k-th derivative (k >= 2)
//   base.mx.d<k> ... base.fz.d<k>   the body-frame base wrench's k-th derivative (k >= 0)
//   tau.<dof>.d<k>                  the joint force's k-th derivative (k >= 0)
// and with varying_loads, per order k = 0..r and load, its value (k = 0) and derivatives in
// its own frame:
//   f_ext.<body>.mx.d<k> ... f_ext.<body>.fz.d<k>               a body-frame load
//   f_ext.<body>.world.mx.d<k> ... f_ext.<body>.world.fz.d<k>   a world-frame load
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/higher_order_loads.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/error.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/plugin/representation.hpp>

#include <Eigen/Geometry>

#include <optional>
#include <set>

namespace {

using namespace liembs;

enum class Quantity { inverse, forward, hybrid };

constexpr const char* twist_names[6] = {"wx", "wy", "wz", "vx", "vy", "vz"};
constexpr const char* wrench_names[6] = {"mx", "my", "mz", "fx", "fy", "fz"};

// The column of generalized coordinate c (base components first) for the derivative of
// order k of the rates u^(k+1) (motion) or of the forces tau^(k) (force), and of load l.
std::string rate_column(const KinematicTree& tree, int c, int k) {
  const int offset = tree.floating_base ? 6 : 0;
  if (c < offset) return std::string("base.") + twist_names[c] + ".d" + std::to_string(k + 1);
  return "q." + tree.dof_names[static_cast<std::size_t>(c - offset)] + ".d" + std::to_string(k + 2);
}
std::string force_column(const KinematicTree& tree, int c, int k) {
  const int offset = tree.floating_base ? 6 : 0;
  if (c < offset) return std::string("base.") + wrench_names[c] + ".d" + std::to_string(k);
  return "tau." + tree.dof_names[static_cast<std::size_t>(c - offset)] + ".d" + std::to_string(k);
}

std::string load_column(const Model& model, std::size_t l, int c, int k) {
  const AppliedWrench& load = model.loads[l];
  return "f_ext." + model.bodies[load.body].name + (load.frame == AppliedWrench::Frame::world ? ".world." : ".") +
         wrench_names[c] + ".d" + std::to_string(k);
}

class HigherOrderEvaluator final : public BatchEvaluator {
 public:
  // varying_loads: the model's loads acting on the tree are inputs (load_column).
  HigherOrderEvaluator(std::shared_ptr<const Model> model, std::shared_ptr<const KinematicTree> tree,
                       std::unique_ptr<HigherOrderDynamics> dynamics, Quantity quantity, int order, HybridSplit split,
                       bool varying_loads)
      : model_(std::move(model)), tree_(std::move(tree)), dynamics_(std::move(dynamics)), quantity_(quantity), order_(order),
        split_(std::move(split)) {
    const KinematicTree& tree_ref = *tree_;
    const bool floating = tree_ref.floating_base;
    const int nv = tree_ref.velocity_dimension();
    if (floating)
      for (const char* c : {"x", "y", "z", "qw", "qx", "qy", "qz"}) inputs_.push_back(std::string("base.") + c);
    for (const auto& name : tree_ref.dof_names) inputs_.push_back("q." + name);
    if (floating)
      for (const char* c : twist_names) inputs_.push_back(std::string("base.") + c);
    for (const auto& name : tree_ref.dof_names) inputs_.push_back("qd." + name);
    motion_.resize(static_cast<std::size_t>(nv));
    for (int c = 0; c < nv; ++c) {
      const int offset = floating ? 6 : 0;
      motion_[static_cast<std::size_t>(c)] =
          quantity == Quantity::inverse ||
          (quantity == Quantity::hybrid && (c < offset ? split_.base_motion : split_.joint_motion[static_cast<std::size_t>(c - offset)]));
    }
    for (int k = 0; k <= order_; ++k)
      for (int c = 0; c < nv; ++c) {
        const bool motion = motion_[static_cast<std::size_t>(c)];
        inputs_.push_back(motion ? rate_column(tree_ref, c, k) : force_column(tree_ref, c, k));
      }
    for (int k = 0; k <= order_; ++k)
      for (int c = 0; c < nv; ++c) {
        const bool motion = motion_[static_cast<std::size_t>(c)];
        outputs_.push_back(motion ? force_column(tree_ref, c, k) : rate_column(tree_ref, c, k));
      }
    if (varying_loads) {
      with_loads_ = &with_load_rates(*dynamics_);
      const std::vector<int> on_tree = tree_load_indices(*model_, tree_ref);
      for (std::size_t l = 0; l < on_tree.size(); ++l)
        if (on_tree[l] >= 0) varying_.push_back(l);
      for (int k = 0; k <= order_; ++k)
        for (const std::size_t l : varying_)
          for (int c = 0; c < 6; ++c) inputs_.push_back(load_column(*model_, l, c, k));
      model_rates_.assign(model_->loads.size(), Eigen::MatrixXd::Zero(6, order_ + 1));
    }
    given_.setZero(nv, order_ + 1);
  }

  const std::vector<std::string>& input_columns() const override { return inputs_; }
  const std::vector<std::string>& output_columns() const override { return outputs_; }

  void evaluate(const double* in, double* out) override {
    const KinematicTree& tree = *tree_;
    const int n = tree.dof(), nv = tree.velocity_dimension();
    std::size_t at = 0;
    if (tree.floating_base) {
      state_.base.r = Vec3(in[0], in[1], in[2]);
      const Eigen::Quaterniond q(in[3], in[4], in[5], in[6]);
      if (q.norm() < 1e-12)
        throw ConfigError("columns " + inputs_[3] + " .. " + inputs_[6] + ": the base quaternion is zero (it gives no rotation)");
      state_.base.R = q.normalized().toRotationMatrix();
      at = 7;
    }
    state_.q = Eigen::Map<const Eigen::VectorXd>(in + at, n);
    at += static_cast<std::size_t>(n);
    if (tree.floating_base) {
      state_.base_twist = Eigen::Map<const Vec6>(in + at);
      at += 6;
    }
    state_.qd = Eigen::Map<const Eigen::VectorXd>(in + at, n);
    at += static_cast<std::size_t>(n);
    for (int k = 0; k <= order_; ++k)
      for (int c = 0; c < nv; ++c) given_(c, k) = in[at++];
    if (with_loads_) {
      for (int k = 0; k <= order_; ++k)
        for (const std::size_t l : varying_)
          for (int c = 0; c < 6; ++c) model_rates_[l](c, k) = in[at++];
      tree_load_rates(*model_, tree, model_rates_, load_rates_);
      switch (quantity_) {
        case Quantity::inverse: with_loads_->inverse_dynamics(state_, given_, load_rates_, forces_); break;
        case Quantity::forward: with_loads_->forward_dynamics(state_, given_, load_rates_, rates_); break;
        case Quantity::hybrid: with_loads_->hybrid_dynamics(state_, split_, given_, load_rates_, rates_, forces_); break;
      }
    } else {
      switch (quantity_) {
        case Quantity::inverse: dynamics_->inverse_dynamics(state_, given_, forces_); break;
        case Quantity::forward: dynamics_->forward_dynamics(state_, given_, rates_); break;
        case Quantity::hybrid: dynamics_->hybrid_dynamics(state_, split_, given_, rates_, forces_); break;
      }
    }
    for (int k = 0; k <= order_; ++k)
      for (int c = 0; c < nv; ++c) *out++ = motion_[static_cast<std::size_t>(c)] ? forces_(c, k) : rates_(c, k);
  }

 private:
  std::shared_ptr<const Model> model_;
  std::shared_ptr<const KinematicTree> tree_;
  std::unique_ptr<HigherOrderDynamics> dynamics_;
  HigherOrderDynamicsWithLoads* with_loads_ = nullptr;  // with varying_loads
  std::vector<std::size_t> varying_;                    // the model loads that are inputs
  std::vector<Eigen::MatrixXd> model_rates_;            // per model load, 6 x (r+1)
  LoadRates load_rates_;
  Quantity quantity_;
  int order_;
  HybridSplit split_;
  std::vector<bool> motion_;  // per generalized coordinate: its motion is an input
  std::vector<std::string> inputs_, outputs_;
  TreeState state_;
  Eigen::MatrixXd given_, rates_, forces_;
};

// The options, declared once (liembs plugins --options NAME, docs/plugin-options.md); the
// hybrid algorithm adds `prescribed` and `base`.
OptionDeclaration higher_order_options(Quantity quantity) {
  OptionDeclaration d{
      OptionSpec::required_integer("order", 0, 20, "the highest time derivative r (paper 003: orders 0 to 10 checked)"),
      OptionSpec::boolean("varying_loads", false,
                          "the [[model.loads]] on the tree vary in time: their values and derivatives are eval inputs (f_ext.* columns); else constant")};
  if (quantity == Quantity::hybrid)
    d.add({OptionSpec::strings("prescribed", "no joint prescribed (forward dynamics)",
                               "joints or degrees of freedom whose motion is given (the others' forces are)"),
           OptionSpec::choice("base", {"force", "motion"}, "force",
                              "floating base: its wrench given (force) or its motion (motion)")});
  return d;
}

class HigherOrderAlgorithm final : public Algorithm {
 public:
  AlgorithmCapabilities capabilities() const override { return {.batch_evaluation = true, .uses_representation = true}; }
  HigherOrderAlgorithm(std::string name, Quantity quantity, const ConfigTable& options)
      : name_(std::move(name)), quantity_(quantity), options_(options) {
    const OptionDeclaration declared = higher_order_options(quantity_);
    order_ = static_cast<int>(declared.integer(options, "order"));
    if (quantity_ == Quantity::hybrid) {
      prescribed_ = declared.strings(options, "prescribed");
      base_motion_ = declared.choice(options, "base") == "motion";
    }
    varying_loads_ = declared.boolean(options, "varying_loads");
  }

  std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext&) const override {
    throw ModelError("it computes higher-order time derivatives for 'liembs eval' and does not give the forward "
                     "dynamics a simulation integrates; use 'aba' or 'crba-cholesky'");
  }

  std::unique_ptr<BatchEvaluator> bind_evaluator(const DynamicsContext& context) const override {
    if (!context.representation)
      throw ModelError("it needs a twist representation: add [representation] name = \"spatial\" "
                       "(or body-fixed, hybrid, mixed)");
    if (!context.model->constraints.empty())
      throw ModelError("the model has geometric constraints (e.g. '" + context.model->constraints.front().name +
                       "'), which live in absolute coordinates; higher-order dynamics needs a tree");
    if (context.model->joints.empty() && context.model->bodies.size() > 1)
      throw ModelError("it works on one tree, but the model has " + std::to_string(context.model->bodies.size()) +
                       " unconnected free bodies");
    auto tree = std::make_shared<const KinematicTree>(compile_tree(*context.model));
    HybridSplit split;
    split.joint_motion.assign(static_cast<std::size_t>(tree->dof()), false);
    if (quantity_ == Quantity::hybrid) {
      if (base_motion_ && !tree->floating_base)
        options_.fail("base", "the model's base is fixed; base = \"motion\" needs a floating base");
      split.base_motion = base_motion_;
      std::set<std::string> seen;
      for (const std::string& name : prescribed_) {
        if (!seen.insert(name).second) options_.fail("prescribed", "'" + name + "' is listed twice");
        bool found = false;
        for (std::size_t i = 0; i < tree->dof_names.size(); ++i) {
          const std::string& dof = tree->dof_names[i];
          const std::string& joint = context.model->joints[tree->dof_joint[i]].name;
          if (dof == name || joint == name) {
            split.joint_motion[i] = true;
            found = true;
          }
        }
        if (!found) {
          std::string names;
          for (const auto& dof : tree->dof_names) names += (names.empty() ? "" : ", ") + dof;
          options_.fail("prescribed", "no joint or degree of freedom named '" + name + "'; the tree's are: " + names);
        }
      }
    }
    if (varying_loads_) check_varying_loads(*context.model, *tree);
    if (!context.representation->capabilities().higher_order)
      throw ModelError("representation '" + context.representation_name +
                       "' gives no higher-order dynamics (its plugin declares no RepresentationCapabilities::higher_order)");
    auto dynamics = context.representation->bind_higher_order(tree, order_);
    return std::make_unique<HigherOrderEvaluator>(context.model, std::move(tree), std::move(dynamics), quantity_, order_,
                                                  std::move(split), varying_loads_);
  }

 private:
  // Every varying load has columns of its own: at most one per body and frame.
  void check_varying_loads(const Model& model, const KinematicTree& tree) const {
    const std::vector<int> on_tree = tree_load_indices(model, tree);
    std::set<std::pair<std::size_t, AppliedWrench::Frame>> seen;
    bool any = false;
    for (std::size_t l = 0; l < model.loads.size(); ++l) {
      if (on_tree[l] < 0) continue;
      any = true;
      const AppliedWrench& load = model.loads[l];
      if (!seen.insert({load.body, load.frame}).second)
        options_.fail("varying_loads", "the model has two " +
                                           std::string(load.frame == AppliedWrench::Frame::world ? "world" : "body") +
                                           "-frame [[model.loads]] on body '" + model.bodies[load.body].name +
                                           "'; their columns would share a name: give one load per body and frame");
    }
    if (!any)
      options_.fail("varying_loads", "the model has no [[model.loads]] acting on the tree; add one per body whose "
                                     "applied wrench varies (its columns f_ext.<body>.* give its value and derivatives)");
  }

  std::string name_;
  Quantity quantity_;
  ConfigTable options_;  // for errors at bind time that name the key
  int order_ = 0;
  std::vector<std::string> prescribed_;
  bool base_motion_ = false;
  bool varying_loads_ = false;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  using liembs::Algorithm;
  const auto add = [&](const char* name, Quantity quantity, const char* summary) {
    registrar.add<Algorithm>(name, "1.0.0", summary, higher_order_options(quantity),
                             [name = std::string(name), quantity](const liembs::ConfigTable& options) {
      return std::make_unique<HigherOrderAlgorithm>(name, quantity, options);
    });
  };
  add("higher-order-rnea", Quantity::inverse,
      "time derivatives 0..order of the inverse dynamics of a tree: H-GRNE, paper 003 (liembs eval)");
  add("higher-order-aba", Quantity::forward,
      "time derivatives 1..order+1 of the forward dynamics of a tree: H-GABI, paper 003 (liembs eval)");
  add("hybrid-dynamics", Quantity::hybrid,
      "hybrid dynamics of a tree (prescribed motion or force per joint) and its time derivatives: H-GHYB, paper 003 (liembs eval)");
}
