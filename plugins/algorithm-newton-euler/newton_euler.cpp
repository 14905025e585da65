// Algorithm plugin newton-euler: forward dynamics in absolute coordinates. Every body
// has its own pose on the run's group; joints are holonomic constraints between bodies
// (liembs/sim/joint_constraints.hpp), and the equations are the constrained
// Newton-Euler equations of paper 002 eq. 1:
//   M V' + J^T lambda = Q,   q' = q V,   g(q) = 0.
// Per body, in the body frame (paper 000's Newton-Euler equations in body-fixed
// representation; 002 eq. 40 for a frame at the COM):
//   M_b V_b' - ad_{V_b}^T M_b V_b = W_b,   V_b = (omega, R^T r'),
// with M_b the spatial inertia about the body-frame origin and W_b the body-frame wrench of
// gravity and applied loads. The parameterization's velocity coordinates v relate to the
// body twists linearly, V_b = T(q) v (T = 1 on SE3; diag(1, R^T) on SO3xR3; 6 x 7 for Euler
// parameters), so in them
//   M = T^T M_b T,  Q = T^T (Q_b - M_b T' v),  J = J_b T,  eta = eta_b - J_b T' v,
// which is the hybrid form of 002 eqs. 41-42 on SO3xR3 and 004 eqs. 39 and 43 for rp and re.
// T and T' v come from the group plugin (BodyVelocityMaps), so any parameterization works.
// The model's geometric constraints (DP1, DP2, D, CD of paper 004, possibly driven by f(t))
// follow the joints' rows, and the parameterization's internal constraints (rp: p^T p = 1)
// come last.
#include <liembs/config/config_table.hpp>
#include <liembs/sim/joint_constraints.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/constrained_system.hpp>

#include <Eigen/Cholesky>

#include <numeric>

namespace {

using namespace liembs;

std::vector<std::size_t> all_joints(const Model& model) {
  std::vector<std::size_t> joints(model.joints.size());
  std::iota(joints.begin(), joints.end(), std::size_t{0});
  return joints;
}

class AbsoluteCoordinateDynamics final : public ForwardDynamics, public ConstrainedSystem {
 public:
  AbsoluteCoordinateDynamics(std::shared_ptr<const Model> model, const Group& group)
      : model_(std::move(model)),
        group_(group),
        coordinates_(group.body_coordinates()),
        joints_(*model_, all_joints(*model_), /*geometric=*/true) {
    for (const auto& body : model_->bodies) {
      inertia_.push_back(body.spatial_inertia());
      inertia_inverse_.push_back(inertia_.back().llt().solve(Mat6::Identity()));
    }
    const auto n = static_cast<Eigen::Index>(6 * model_->bodies.size());
    twists_.resize(n);
    twist_rates_.resize(n);
    body_forces_.resize(n);
    poses_.resize(model_->bodies.size());
    twist_list_.resize(model_->bodies.size());
    // Structurally redundant rows (closed planar loops) are found once, at the initial state.
    if (joints_.rows() > 0) {
      const State initial = initial_state();
      body_twists_and_forces(initial);
      joints_.evaluate(poses_, twist_list_, nullptr, &body_jacobian_, nullptr);
      joints_.select_rows(independent_rows(body_jacobian_));
    }
    // The parameterization's internal constraints (rp: p^T p = 1) follow the joints' rows.
    blocks_ = joints_.blocks();
    std::vector<std::string> names;
    for (const auto& body : model_->bodies) names.push_back(body.name);
    for (auto& block : internal_constraint_blocks(group_, names, joints_.rows())) blocks_.push_back(std::move(block));
    rows_ = joints_.rows() + static_cast<Eigen::Index>(model_->bodies.size()) * coordinates_.internal_constraints;
  }

  // --- ForwardDynamics ---
  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    if (joints_.rows() > 0) {
      evaluate(state, terms_, dae::mass | dae::forces | dae::jacobian | dae::acceleration_rhs);
      solve_index1(terms_, rates);
      return;
    }
    // No joints: M_b is block diagonal, V_b' = M_b^-1 Q_b body by body; the parameterization
    // turns body twist rates into its rates, satisfying its internal constraints exactly.
    body_twists_and_forces(state);
    for (std::size_t i = 0; i < model_->bodies.size(); ++i) {
      const auto offset = static_cast<Eigen::Index>(6 * i);
      twist_rates_.segment<6>(offset) = inertia_inverse_[i] * body_forces_.segment<6>(offset);
    }
    rates.resize(state.velocities.size());
    group_.rates_from_body_twist_rates(state.poses, state.chart.data(), state.velocities.data(), twist_rates_.data(),
                                       rates.data());
  }

  std::size_t free_bodies() const override { return model_->bodies.size(); }
  std::size_t joint_coordinates() const override { return 0; }

  State initial_state() const override {
    std::vector<Pose> poses;
    std::vector<Vec6> twists;
    initial_body_motion(*model_, poses, twists);
    State state;
    state.poses = poses;
    state.chart.resize(static_cast<Eigen::Index>(poses.size()) * coordinates_.chart);
    group_.chart_from_poses(state.poses, state.chart.data());
    Eigen::VectorXd stacked(6 * static_cast<Eigen::Index>(twists.size()));
    for (std::size_t i = 0; i < twists.size(); ++i) stacked.segment<6>(static_cast<Eigen::Index>(6 * i)) = twists[i];
    state.velocities.resize(static_cast<Eigen::Index>(poses.size()) * coordinates_.velocity);
    group_.from_body_twists(state.poses, state.chart.data(), stacked.data(), state.velocities.data());
    return state;
  }

  void body_motion(const State& state, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    poses = state.poses;
    group_.to_body_twists(state.poses, state.chart.data(), state.velocities.data(), twists_.data());
    twists.resize(poses.size());
    for (std::size_t i = 0; i < poses.size(); ++i) twists[i] = twists_.segment<6>(static_cast<Eigen::Index>(6 * i));
  }

  ConstrainedSystem* constraints() override { return rows_ > 0 ? this : nullptr; }
  // Free bodies without joints: no constraint rows, but the same DAE terms with their analytic
  // derivatives give the implicit integrators an analytic Newton matrix (dae_form).
  DynamicsCapabilities capabilities() override {
    DynamicsCapabilities declared;
    if (rows_ == 0) declared.dae_form = this;
    return declared;
  }

  // --- ConstrainedSystem ---
  Eigen::Index constraint_count() const override { return rows_; }
  const std::vector<ConstraintBlock>& blocks() const override { return blocks_; }
  std::vector<std::string> redundant_constraints() const override { return joints_.dropped_rows(); }
  int switch_drivers(double time) override { return joints_.switch_drivers(time); }

  GivenRates given_rates(const State& state) override {
    GivenRates given = given_joint_rates(*model_, state.poses);  // on body twists
    if (given.rows.rows() == 0) return given;
    maps_.update(group_, state, state.poses.size());
    Eigen::MatrixXd rows = Eigen::MatrixXd::Zero(given.rows.rows(), state.velocities.size());
    for (std::size_t i = 0; i < state.poses.size(); ++i)  // V_b = T v
      rows.middleCols(static_cast<Eigen::Index>(i) * maps_.velocity, maps_.velocity) =
          given.rows.middleCols<6>(static_cast<Eigen::Index>(6 * i)) * maps_.map(i);
    given.rows = std::move(rows);
    return given;
  }

  void evaluate(const State& state, DaeTerms& terms, unsigned what) override {
    const std::size_t n = model_->bodies.size();
    const Eigen::Index nv = coordinates_.velocity;
    const auto dimension = static_cast<Eigen::Index>(n) * nv;
    const Eigen::Index joint_rows = joints_.rows();
    body_twists_and_forces(state);
    const bool needs_velocity_map = (what & (dae::mass | dae::forces | dae::jacobian | dae::acceleration_rhs)) != 0;
    if (needs_velocity_map) maps_.update(group_, state, n);

    const bool needs_constraint_jacobian = (what & (dae::jacobian | dae::acceleration_rhs)) != 0;
    // nu = f'(t) of rheonomic rows is the same in body twists and group coordinates (J V = J_b V_b).
    // M and Q alone (an integrator's damping differences) need no constraint row.
    if (what & (dae::residual | dae::jacobian | dae::acceleration_rhs | dae::velocity_rhs))
      joints_.evaluate(poses_, twist_list_, state.time, (what & dae::residual) ? &terms.residual : nullptr,
                       needs_constraint_jacobian ? &body_jacobian_ : nullptr,
                       (what & dae::acceleration_rhs) ? &terms.acceleration_rhs : nullptr,
                       ((what & dae::velocity_rhs) && joints_.rheonomic()) ? &terms.velocity_rhs : nullptr);

    if (what & dae::mass) terms.mass.setZero(dimension, dimension);
    if (what & dae::forces) terms.forces.resize(dimension);
    if (what & dae::jacobian) {
      terms.jacobian.resize(rows_, dimension);
      if (rows_ > joint_rows) terms.jacobian.bottomRows(rows_ - joint_rows).setZero();
    }
    if (nv == 6)
      write_body_terms<6>(terms, what);
    else if (nv == 7)
      write_body_terms<7>(terms, what);
    else
      write_body_terms<Eigen::Dynamic>(terms, what);
    if ((what & dae::acceleration_rhs) && joint_rows > 0) terms.acceleration_rhs.noalias() -= body_jacobian_ * maps_.map_rates;
    if (rows_ > joint_rows) {
      if (what & dae::residual) terms.residual.conservativeResize(rows_);
      if (what & dae::acceleration_rhs) terms.acceleration_rhs.conservativeResize(rows_);
      write_internal_constraints(group_, state, n, joint_rows, terms, what);
    }
  }

  // Analytic derivatives of the residual r = M a + J^T lambda - Q = T^T rho_b with the body
  // residual rho_b = M_b A_b + J_b^T lambda - W_b - ad_{V_b}^T M_b V_b, V_b = T v,
  // A_b = T a + T' v, and the pose increment zeta = T delta of each body:
  //   dQ_b/dV_b = ad_V^T M_b + Lambda(M_b V),  Lambda(p) = [[p_w~, p_f~], [p_f~, 0]] (d(ad_V^T p)/dV)
  //   C = T^T (M_b d(T'v)/dv - dQ_b/dV_b T)
  //   K = d(T^T rho_b)/d delta + T^T (-dW_b/d zeta T - dQ_b/dV_b d(T v)/d delta
  //       + M_b (d(T a)/d delta + d(T'v)/d delta)) + T_k^T d(J_b^T lambda)_k/d zeta_l T_l
  //   P = d(J_b V_b)/d zeta T + J_b d(T v)/d delta
  // (the rA instance is paper 004's G_ωω with [J ω]x and the reaction-force sensitivities of
  // Tables 3-6); the group gives the derivatives of T and T'v, the joint set those of J_b.
  unsigned analytic_derivatives() const override { return dae::damping | dae::stiffness | dae::velocity_constraint; }

  void evaluate_derivatives(const State& state, const Eigen::VectorXd& acceleration, const Eigen::VectorXd& multipliers,
                            DaeDerivatives& out, unsigned what) override {
    const std::size_t n = model_->bodies.size();
    const Eigen::Index nv = coordinates_.velocity, block = 6 * nv;
    const auto dimension = static_cast<Eigen::Index>(n) * nv;
    const Eigen::Index joint_rows = joints_.rows();
    const bool damping = (what & dae::damping) != 0, stiffness = (what & dae::stiffness) != 0,
               velocity = (what & dae::velocity_constraint) != 0 && rows_ > 0;
    body_twists_and_forces(state);
    maps_.update(group_, state, n);
    if ((stiffness || velocity) && joint_rows > 0)
      joints_.evaluate(poses_, twist_list_, state.time, nullptr, &body_jacobian_, nullptr);
    if (stiffness) {
      body_residual_.resize(static_cast<Eigen::Index>(6 * n));
      for (std::size_t i = 0; i < n; ++i) {
        const auto b = static_cast<Eigen::Index>(6 * i);
        body_residual_.segment<6>(b).noalias() =
            inertia_[i] * (maps_.map(i) * acceleration.segment(static_cast<Eigen::Index>(i) * nv, nv) +
                           maps_.map_rate(i)) -
            body_forces_.segment<6>(b);
      }
      if (joint_rows > 0) body_residual_.noalias() += body_jacobian_.transpose() * multipliers.head(joint_rows);
    }
    const auto count = static_cast<Eigen::Index>(n) * block;
    rate_by_velocity_.resize(damping ? count : 0);
    map_velocity_by_position_.resize((stiffness || velocity) ? count : 0);
    map_acceleration_by_position_.resize(stiffness ? count : 0);
    map_transpose_by_position_.resize(stiffness ? static_cast<Eigen::Index>(n) * nv * nv : 0);
    rate_by_position_.resize(stiffness ? count : 0);
    auto data = [](Eigen::VectorXd& v) { return v.size() > 0 ? v.data() : nullptr; };
    group_.velocity_map_derivatives(state.poses, state.chart.data(), state.velocities.data(), acceleration.data(),
                                    stiffness ? body_residual_.data() : nullptr, data(rate_by_velocity_),
                                    data(map_velocity_by_position_), data(map_acceleration_by_position_),
                                    data(map_transpose_by_position_), data(rate_by_position_));
    using Block = Eigen::Map<const Eigen::Matrix<double, 6, Eigen::Dynamic>>;
    auto part = [&](const Eigen::VectorXd& v, std::size_t i) { return Block(v.data() + static_cast<Eigen::Index>(i) * block, 6, nv); };

    if (damping) out.damping.setZero(dimension, dimension);
    if (stiffness) out.stiffness.setZero(dimension, dimension);
    for (std::size_t i = 0; i < n && (damping || stiffness); ++i) {
      const auto o = static_cast<Eigen::Index>(i) * nv;
      const auto T = maps_.map(i);
      const Vec6 twist = twists_.segment<6>(static_cast<Eigen::Index>(6 * i));
      const Vec6 momentum = inertia_[i] * twist;
      Mat6 force_by_twist = se3::ad(twist).transpose() * inertia_[i];  // dQ_b/dV_b
      force_by_twist.topLeftCorner<3, 3>() += so3::hat(momentum.head<3>());
      force_by_twist.topRightCorner<3, 3>() += so3::hat(momentum.tail<3>());
      force_by_twist.bottomLeftCorner<3, 3>() += so3::hat(momentum.tail<3>());
      if (damping)
        out.damping.block(o, o, nv, nv).noalias() =
            T.transpose() * (inertia_[i] * part(rate_by_velocity_, i) - force_by_twist * T);
      if (stiffness) {
        Eigen::Matrix<double, 6, Eigen::Dynamic> body_part =
            inertia_[i] * (part(map_acceleration_by_position_, i) + part(rate_by_position_, i)) -
            force_by_twist * part(map_velocity_by_position_, i);
        body_part.noalias() -= wrench_by_rotation(i, state.poses[i]) * T.topRows<3>();
        out.stiffness.block(o, o, nv, nv).noalias() = T.transpose() * body_part;
        out.stiffness.block(o, o, nv, nv) += Eigen::Map<const Eigen::MatrixXd>(
            map_transpose_by_position_.data() + static_cast<Eigen::Index>(i) * nv * nv, nv, nv);
      }
    }
    if (what & dae::velocity_constraint) out.velocity_constraint.setZero(rows_, dimension);  // 0 x n unconstrained
    if ((stiffness || velocity) && joint_rows > 0) {
      const Eigen::VectorXd joint_multipliers = stiffness ? Eigen::VectorXd(multipliers.head(joint_rows)) : Eigen::VectorXd();
      joints_.second_derivatives(poses_, twist_list_, stiffness ? &joint_multipliers : nullptr,
                                 stiffness ? &reaction_stiffness_ : nullptr, velocity ? &velocity_derivative_ : nullptr);
      for (std::size_t j = 0; j < n; ++j) {
        const auto oj = static_cast<Eigen::Index>(j) * nv;
        const auto Tj = maps_.map(j);
        if (velocity)
          out.velocity_constraint.block(0, oj, joint_rows, nv) =
              velocity_derivative_.middleCols<6>(static_cast<Eigen::Index>(6 * j)).lazyProduct(Tj) +
              body_jacobian_.middleCols<6>(static_cast<Eigen::Index>(6 * j)).lazyProduct(part(map_velocity_by_position_, j));
        for (std::size_t i = 0; i < n && stiffness; ++i) {
          const auto coupling = reaction_stiffness_.block<6, 6>(static_cast<Eigen::Index>(6 * i), static_cast<Eigen::Index>(6 * j));
          if (coupling.isZero(0.0)) continue;
          out.stiffness.block(static_cast<Eigen::Index>(i) * nv, oj, nv, nv).noalias() +=
              maps_.map(i).transpose() * coupling * Tj;
        }
      }
    }
    if (rows_ > joint_rows && (stiffness || velocity)) {  // the parameterization's internal constraints
      const int k = coordinates_.internal_constraints;
      internal_stiffness_.resize(stiffness ? static_cast<Eigen::Index>(n) * nv * nv : 0);
      internal_velocity_derivative_.resize(velocity ? static_cast<Eigen::Index>(n) * k * nv : 0);
      group_.internal_constraint_derivatives(state.poses, state.chart.data(), state.velocities.data(),
                                             multipliers.size() > 0 ? multipliers.data() + joint_rows : nullptr,
                                             data(internal_stiffness_), data(internal_velocity_derivative_));
      for (std::size_t i = 0; i < n; ++i) {
        const auto o = static_cast<Eigen::Index>(i) * nv;
        if (stiffness)
          out.stiffness.block(o, o, nv, nv) +=
              Eigen::Map<const Eigen::MatrixXd>(internal_stiffness_.data() + static_cast<Eigen::Index>(i) * nv * nv, nv, nv);
        if (velocity)
          out.velocity_constraint.block(joint_rows + static_cast<Eigen::Index>(i) * k, o, k, nv) =
              Eigen::Map<const Eigen::MatrixXd>(internal_velocity_derivative_.data() + static_cast<Eigen::Index>(i) * k * nv, k, nv);
      }
    }
  }

 private:
  // M = T^T M_b T, Q = T^T (Q_b - M_b T' v) and J = J_b T body by body, with T (6 x NV) of
  // fixed size for the usual parameterizations (NV = 6: SE3, SO3xR3, Euler angles; 7: Euler
  // parameters). The joints' rows of J are assigned for every body's columns.
  template <int NV>
  void write_body_terms(DaeTerms& terms, unsigned what) {
    const Eigen::Index nv = coordinates_.velocity, joint_rows = joints_.rows();
    for (std::size_t i = 0; i < model_->bodies.size(); ++i) {
      const auto o = static_cast<Eigen::Index>(i) * nv;
      const auto b = static_cast<Eigen::Index>(6 * i);
      const Eigen::Map<const Eigen::Matrix<double, 6, NV>> T(maps_.maps.data() + 6 * o, 6, nv);
      if (what & dae::mass) {
        const Eigen::Matrix<double, 6, NV> inertia_map = inertia_[i] * T;
        terms.mass.template block<NV, NV>(o, o, nv, nv).noalias() = T.transpose() * inertia_map;
      }
      if (what & dae::forces) {
        const Vec6 body_force = body_forces_.segment<6>(b) - inertia_[i] * maps_.map_rate(i);
        terms.forces.template segment<NV>(o, nv).noalias() = T.transpose() * body_force;
      }
      if ((what & dae::jacobian) && joint_rows > 0)
        terms.jacobian.template block<Eigen::Dynamic, NV>(0, o, joint_rows, nv).noalias() =
            body_jacobian_.middleCols<6>(b).lazyProduct(T);
    }
  }

  // dW_b/d theta (6 x 3) of the body-frame wrench of gravity and world-frame loads: with
  // R <- R exp(theta~), R^T x changes by (R^T x)~ theta; body-frame loads do not change.
  Eigen::Matrix<double, 6, 3> wrench_by_rotation(std::size_t i, const Pose& pose) const {
    const RigidBody& body = model_->bodies[i];
    Eigen::Matrix<double, 6, 3> derivative;
    const Mat3 force = so3::hat(pose.R.transpose() * (body.mass * model_->gravity));
    derivative.topRows<3>() = so3::hat(body.center_of_mass) * force;
    derivative.bottomRows<3>() = force;
    for (const auto& load : model_->loads) {
      if (load.body != i || load.frame == AppliedWrench::Frame::body) continue;
      const Mat3 load_force = so3::hat(pose.R.transpose() * load.force);
      derivative.topRows<3>() += so3::hat(pose.R.transpose() * load.moment) + so3::hat(body.center_of_mass) * load_force;
      derivative.bottomRows<3>() += load_force;
    }
    return derivative;
  }

  // Poses, body twists V_b and the body-frame forces Q_b = W_b + ad_{V_b}^T M_b V_b of every body.
  void body_twists_and_forces(const State& state) {
    group_.to_body_twists(state.poses, state.chart.data(), state.velocities.data(), twists_.data());
    for (std::size_t i = 0; i < model_->bodies.size(); ++i) {
      const RigidBody& body = model_->bodies[i];
      const Pose& pose = state.poses[i];
      const auto offset = static_cast<Eigen::Index>(6 * i);
      const Vec6 twist = twists_.segment<6>(offset);
      poses_[i] = pose;
      twist_list_[i] = twist;
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
      body_forces_.segment<6>(offset) = wrench + se3::ad(twist).transpose() * (inertia_[i] * twist);
    }
  }

  std::shared_ptr<const Model> model_;
  const Group& group_;
  BodyCoordinates coordinates_;
  JointConstraintSet joints_;
  std::vector<ConstraintBlock> blocks_;
  Eigen::Index rows_ = 0;  // joint rows, then the internal constraints
  std::vector<Mat6> inertia_, inertia_inverse_;
  BodyVelocityMaps maps_;
  Eigen::VectorXd twists_, twist_rates_, body_forces_;
  Eigen::MatrixXd body_jacobian_, reaction_stiffness_, velocity_derivative_;
  Eigen::VectorXd body_residual_, rate_by_velocity_, map_velocity_by_position_, map_acceleration_by_position_,
      map_transpose_by_position_, rate_by_position_, internal_stiffness_, internal_velocity_derivative_;
  std::vector<Pose> poses_;
  std::vector<Vec6> twist_list_;
  DaeTerms terms_;
};

class NewtonEuler final : public Algorithm {
 public:
  AlgorithmCapabilities capabilities() const override { return {.batch_evaluation = false, .uses_representation = false}; }
  std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext& context) const override {
    if (context.representation)
      throw ModelError("algorithm 'newton-euler' and representation '" + context.representation_name +
                       "' do not combine: newton-euler integrates bodies in absolute coordinates, "
                       "where each body's twist convention is fixed by the group ('" + context.group_name +
                       "'); remove the [representation] section");
    return std::make_unique<AbsoluteCoordinateDynamics>(context.model, context.group);
  }
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Algorithm>(
      "newton-euler", "2.0.0",
      "forward dynamics in absolute coordinates: every body on the group, joints as constraints (index-1)",
      liembs::OptionDeclaration{}, [](const liembs::ConfigTable&) { return std::make_unique<NewtonEuler>(); });
}
