// Algorithm plugin for trees in relative coordinates: forward dynamics by the
// articulated-body algorithm ("aba") or by the composite-rigid-body algorithm and a
// Cholesky solve ("crba-cholesky"), in the representation chosen for the run. A floating
// base moves on the run's group; its velocity coordinates are converted to and from the
// body twist the algorithms use.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/error.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/plugin.hpp>

namespace {

using namespace liembs;

class TreeForwardDynamics final : public ForwardDynamics {
 public:
  TreeForwardDynamics(std::shared_ptr<const Model> model, const Group& group, const Representation& representation,
                      bool articulated_body)
      : model_(std::move(model)),
        group_(group),
        tree_(std::make_shared<const KinematicTree>(compile_tree(*model_))),
        dynamics_(representation.bind_tree(tree_)),
        articulated_body_(articulated_body) {
    force_.setZero(tree_->velocity_dimension());
  }

  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    to_tree_state(state);
    if (articulated_body_) dynamics_->forward_dynamics(tree_state_, force_, acceleration_);
    else dynamics_->forward_dynamics_cholesky(tree_state_, force_, acceleration_);
    rates.resize(acceleration_.size());
    if (tree_->floating_base) {
      group_.rates_from_body_twist_rates(state.poses, tree_state_.base_twist.data(), acceleration_.data(), rates.data());
      rates.tail(tree_->dof()) = acceleration_.tail(tree_->dof());
    } else {
      rates = acceleration_;
    }
  }

  std::size_t free_bodies() const override { return tree_->floating_base ? 1 : 0; }
  std::size_t joint_coordinates() const override { return static_cast<std::size_t>(tree_->dof()); }

  State initial_state() const override {
    State state;
    state.coordinates = tree_->initial_position;
    state.velocities.resize(tree_->velocity_dimension());
    if (tree_->floating_base) {
      const RigidBody& base = model_->bodies[tree_->base_body];
      state.poses.push_back(base.reference_pose);
      Vec6 twist;
      twist << base.initial_angular_velocity, base.reference_pose.R.transpose() * base.initial_linear_velocity;
      group_.from_body_twists(state.poses, twist.data(), state.velocities.data());
      state.velocities.tail(tree_->dof()) = tree_->initial_velocity;
    } else {
      state.velocities = tree_->initial_velocity;
    }
    return state;
  }

  void body_motion(const State& state, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    to_tree_state(state);
    zero_.setZero(tree_->velocity_dimension());
    dynamics_->body_kinematics(tree_state_, zero_, kinematics_);
    poses = kinematics_.poses;
    twists = kinematics_.twists;
  }

 private:
  void to_tree_state(const State& state) {
    const int n = tree_->dof();
    if (tree_->floating_base) {
      tree_state_.base = state.poses.front();
      group_.to_body_twists(state.poses, state.velocities.data(), tree_state_.base_twist.data());
    }
    tree_state_.q = state.coordinates;
    tree_state_.qd = state.velocities.tail(n);
  }

  std::shared_ptr<const Model> model_;
  const Group& group_;
  std::shared_ptr<const KinematicTree> tree_;
  std::unique_ptr<TreeDynamics> dynamics_;
  bool articulated_body_;
  TreeState tree_state_;
  Eigen::VectorXd force_, acceleration_, zero_;
  BodyKinematics kinematics_;
};

class TreeAlgorithm final : public Algorithm {
 public:
  TreeAlgorithm(std::string name, bool articulated_body) : name_(std::move(name)), articulated_body_(articulated_body) {}

  std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext& context) const override {
    if (!context.representation)
      throw ModelError("algorithm '" + name_ + "' needs a twist representation: add [representation] name = "
                       "\"body-fixed\" (or spatial, hybrid, mixed)");
    if (context.model->joints.empty() && context.model->bodies.size() > 1)
      throw ModelError("algorithm '" + name_ + "' integrates one tree, but the model has " +
                       std::to_string(context.model->bodies.size()) +
                       " unconnected free bodies; use algorithm 'newton-euler' for absolute coordinates");
    return std::make_unique<TreeForwardDynamics>(context.model, context.group, *context.representation,
                                                 articulated_body_);
  }

 private:
  std::string name_;
  bool articulated_body_;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Algorithm>("aba", "1.0.0", "forward dynamics of a tree by the articulated-body algorithm",
                                   [](const liembs::ConfigTable&) { return std::make_unique<TreeAlgorithm>("aba", true); });
  registrar.add<liembs::Algorithm>(
      "crba-cholesky", "1.0.0", "forward dynamics of a tree by the composite-rigid-body algorithm + Cholesky",
      [](const liembs::ConfigTable&) { return std::make_unique<TreeAlgorithm>("crba-cholesky", false); });
}
