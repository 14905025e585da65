// Algorithm plugin newton-euler: forward dynamics of unconnected free rigid bodies in
// absolute coordinates. Per body, in the body frame (paper 000, the Newton-Euler
// equations in body-fixed representation; 002 eq. 40 for a frame at the COM):
//   M_b V' - ad_V^T M_b V = W_b,   V = (omega, R^T r'),
// with M_b the spatial inertia about the body-frame origin and W_b the body-frame wrench
// of gravity and applied loads. The result is mapped to the group's velocity coordinates.
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/invariants.hpp>

#include <Eigen/Cholesky>

namespace {

using namespace liembs;

class FreeBodyDynamics final : public ForwardDynamics {
 public:
  FreeBodyDynamics(std::shared_ptr<const Model> model, const Group& group)
      : model_(std::move(model)), group_(group) {
    for (const auto& body : model_->bodies) {
      inertia_.push_back(body.spatial_inertia());
      inertia_inverse_.push_back(inertia_.back().llt().solve(Mat6::Identity()));
    }
    const auto n = static_cast<Eigen::Index>(6 * model_->bodies.size());
    twists_.resize(n);
    twist_rates_.resize(n);
  }

  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    const std::size_t n = model_->bodies.size();
    group_.to_body_twists(state.poses, state.velocities.data(), twists_.data());
    for (std::size_t i = 0; i < n; ++i) {
      const RigidBody& body = model_->bodies[i];
      const Pose& pose = state.poses[i];
      const auto offset = static_cast<Eigen::Index>(6 * i);
      const Vec6 twist = twists_.segment<6>(offset);
      // Gravity acts at the centre of mass.
      Vec6 wrench;
      wrench.tail<3>() = pose.R.transpose() * (body.mass * model_->gravity);
      wrench.head<3>() = body.center_of_mass.cross(wrench.tail<3>());
      for (const auto& load : model_->loads) {
        if (load.body != i) continue;
        if (load.frame == AppliedWrench::Frame::body) {
          wrench.head<3>() += load.moment;
          wrench.tail<3>() += load.force;
        } else {
          const Vec3 force = pose.R.transpose() * load.force;
          wrench.head<3>() += pose.R.transpose() * load.moment + body.center_of_mass.cross(force);
          wrench.tail<3>() += force;
        }
      }
      const Vec6 momentum = inertia_[i] * twist;
      twist_rates_.segment<6>(offset) = inertia_inverse_[i] * (wrench + se3::ad(twist).transpose() * momentum);
    }
    rates.resize(twists_.size());
    group_.rates_from_body_twist_rates(state.poses, twists_.data(), twist_rates_.data(), rates.data());
  }

  std::size_t free_bodies() const override { return model_->bodies.size(); }
  std::size_t joint_coordinates() const override { return 0; }
  State initial_state() const override { return liembs::initial_state(*model_, group_); }
  void body_motion(const State& state, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses = state.poses;
    group_.to_body_twists(state.poses, state.velocities.data(), twists_.data());
    twists.resize(poses.size());
    for (std::size_t i = 0; i < poses.size(); ++i) twists[i] = twists_.segment<6>(static_cast<Eigen::Index>(6 * i));
  }

 private:
  std::shared_ptr<const Model> model_;
  const Group& group_;
  std::vector<Mat6> inertia_, inertia_inverse_;
  Eigen::VectorXd twists_, twist_rates_;
};

class NewtonEuler final : public Algorithm {
 public:
  std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext& context) const override {
    if (!context.model->joints.empty())
      throw ModelError("algorithm 'newton-euler' integrates unconnected free bodies, but the model has " +
                       std::to_string(context.model->joints.size()) + " joint(s) (first: '" +
                       context.model->joints.front().name + "'); use algorithm 'aba' or 'crba-cholesky'");
    if (context.representation)
      throw ModelError("algorithm 'newton-euler' and representation '" + context.representation_name +
                       "' do not combine: newton-euler integrates free bodies in absolute coordinates, "
                       "where each body's twist convention is fixed by the group ('" + context.group_name +
                       "'); remove the [representation] section");
    return std::make_unique<FreeBodyDynamics>(context.model, context.group);
  }
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Algorithm>(
      "newton-euler", "1.0.0", "forward dynamics of free rigid bodies (Newton-Euler, absolute coordinates)",
      [](const liembs::ConfigTable&) { return std::make_unique<NewtonEuler>(); });
}
