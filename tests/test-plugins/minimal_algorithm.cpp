// An algorithm plugin that implements only the REQUIRED operations of the algorithm kind
// (liembs/plugin/algorithm.hpp): forward dynamics of ONE free rigid body under gravity,
// M V' = ad_V^T M V + W (body twist V = (omega, R^T r'), M the spatial inertia about the body
// origin, W the gravity wrench), and no capabilities() at all. The tests run it with the
// implicit integrators and check the stated fallbacks (ODE form, differenced Newton matrix)
// and that the motion equals the built-in newton-euler's.
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/plugin.hpp>

namespace {

using namespace liembs;

class FreeBodyDynamics final : public ForwardDynamics {
 public:
  FreeBodyDynamics(std::shared_ptr<const Model> model, const Group& group)
      : model_(std::move(model)), group_(group), inertia_(model_->bodies.front().spatial_inertia()) {}

  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    const RigidBody& body = model_->bodies.front();
    Vec6 twist;
    group_.to_body_twists(state.poses, state.chart.data(), state.velocities.data(), twist.data());
    const Vec3 omega = twist.head<3>(), v = twist.tail<3>();
    const Vec6 momentum = inertia_ * twist;
    Vec6 wrench;  // ad_V^T (M V): (-omega x L - v x p, -omega x p)
    wrench.head<3>() = -omega.cross(momentum.head<3>()) - v.cross(momentum.tail<3>());
    wrench.tail<3>() = -omega.cross(momentum.tail<3>());
    const Vec3 weight = state.poses.front().R.transpose() * (body.mass * model_->gravity);
    wrench.head<3>() += body.center_of_mass.cross(weight);
    wrench.tail<3>() += weight;
    const Vec6 twist_rate = inertia_.llt().solve(wrench);
    rates.resize(state.velocities.size());
    group_.rates_from_body_twist_rates(state.poses, state.chart.data(), state.velocities.data(), twist_rate.data(),
                                       rates.data());
  }

  std::size_t free_bodies() const override { return 1; }
  std::size_t joint_coordinates() const override { return 0; }

  State initial_state() const override {
    const RigidBody& body = model_->bodies.front();
    State state;
    state.poses.push_back(body.reference_pose);
    state.chart.resize(group_.body_coordinates().chart);
    group_.chart_from_poses(state.poses, state.chart.data());
    Vec6 twist;
    twist << body.initial_angular_velocity, body.reference_pose.R.transpose() * body.initial_linear_velocity;
    state.velocities.resize(group_.body_coordinates().velocity);
    group_.from_body_twists(state.poses, state.chart.data(), twist.data(), state.velocities.data());
    return state;
  }

  void body_motion(const State& state, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses = state.poses;
    twists.resize(1);
    group_.to_body_twists(state.poses, state.chart.data(), state.velocities.data(), twists.front().data());
  }

 private:
  std::shared_ptr<const Model> model_;
  const Group& group_;
  Mat6 inertia_;
};

class MinimalFreeBody final : public Algorithm {
 public:
  std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext& context) const override {
    if (context.model->bodies.size() != 1 || !context.model->joints.empty() || !context.model->loads.empty())
      throw ModelError("it integrates one free body under gravity only");
    return std::make_unique<FreeBodyDynamics>(context.model, context.group);
  }
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<Algorithm>("minimal-free-body", "0.0.1", "one free body, REQUIRED operations only (test plugin)",
                           [](const ConfigTable&) { return std::make_unique<MinimalFreeBody>(); });
}
