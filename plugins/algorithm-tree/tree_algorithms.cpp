// Algorithm plugin for trees in relative coordinates, in the representation chosen for the
// run: forward dynamics by the articulated-body algorithm ("aba") or by the composite-
// rigid-body algorithm and a Cholesky solve ("crba-cholesky") for simulations, and
// inverse dynamics ("rnea"), the mass matrix ("crba"), the Coriolis matrix ("coriolis"),
// gravity forces ("gravity"), the analytic derivatives of inverse and forward dynamics
// ("rnea-derivatives", "aba-derivatives"), the inverse-dynamics regressor ("regressor"),
// the derivatives by the joints' geometry ("rnea-geometric-derivatives"), the centroidal
// quantities ("centroidal"), forward kinematics ("kinematics"), body Jacobians in the
// representation ("jacobians") and the energies ("energy") for `liembs eval`
// (docs/derivatives.md, docs/algorithms.md). A floating base moves on the run's group;
// its velocity coordinates are converted to and from the body twist the algorithms use.
// Joints that close loops are cut (the topology names them) and become loop-closure
// constraints on the tree (liembs/sim/joint_constraints.hpp): the run then solves
// the index-1 system with M from CRBA and Q from RNEA at zero acceleration, whichever of
// aba and crba-cholesky was chosen, since M itself is needed.
// Joints with a prescribed motion q(t) ([model.prescribed], docs/prescribed-motion.md) make
// the run hybrid dynamics: "aba" solves it by H-GHYB at order 0 (paper 003 Algorithm 4),
// "crba-cholesky" by the mass matrix partitioned into free and prescribed rows.
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/centroidal_algorithms.hpp>
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/sim/joint_constraints.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_geometric_derivatives.hpp>
#include <liembs/error.hpp>
#include <liembs/host/output_schema.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/plugin/representation.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/invariants.hpp>
#include <liembs/sim/prescribed_motion.hpp>

#include <liembs/lie/se3.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Geometry>

#include <algorithm>

namespace {

using namespace liembs;

class TreeForwardDynamics final : public ForwardDynamics,
                                  public ConstrainedSystem,
                                  public PrescribedMotion,
                                  public VelocityRateDerivatives {
 public:
  TreeForwardDynamics(std::shared_ptr<const Model> model, const Group& group, const Representation& representation,
                      const std::string& representation_name, bool articulated_body)
      : model_(std::move(model)),
        group_(group),
        coordinates_(group.body_coordinates()),
        tree_(std::make_shared<const KinematicTree>(compile_tree(*model_, true))),
        dynamics_(representation.bind_tree(tree_)),
        articulated_body_(articulated_body),
        base_velocities_(tree_->floating_base ? coordinates_.velocity : 0),
        internal_rows_(tree_->floating_base ? coordinates_.internal_constraints : 0) {
    force_.setZero(tree_->velocity_dimension());
    prescribed_ = PrescribedCoordinates(*model_, *tree_);
    if (!prescribed_.empty()) bind_prescribed_motion(representation);
    else bind_derivatives(representation, representation_name);
    if (!tree_->cut_joints.empty()) {
      loops_ = std::make_unique<JointConstraintSet>(*model_, tree_->cut_joints);
      // Closed planar loops have structurally redundant rows: keep an independent set.
      evaluate(initial_state(), terms_, dae::jacobian);
      loops_->select_rows(independent_rows(terms_.jacobian.topRows(loops_->rows())));
      blocks_ = loops_->blocks();
    }
    if (internal_rows_ > 0)  // the base's parameterization (rp: p^T p = 1)
      for (auto& block : internal_constraint_blocks(group_, {model_->bodies[tree_->base_body].name}, loop_rows()))
        blocks_.push_back(std::move(block));
  }

  void velocity_rates(const State& state, Eigen::VectorXd& rates) override {
    if (loops_) {
      evaluate(state, terms_, dae::mass | dae::forces | dae::jacobian | dae::acceleration_rhs);
      solve_index1(terms_, rates);
      return;
    }
    to_tree_state(state);
    if (!prescribed_.empty()) solve_hybrid_dynamics();
    else if (articulated_body_) dynamics_->forward_dynamics(tree_state_, force_, acceleration_);
    else dynamics_->forward_dynamics_cholesky(tree_state_, force_, acceleration_);
    rates.resize(state.velocities.size());
    if (tree_->floating_base) {
      // The base's rates satisfy its internal constraints exactly (Group::rates_from_body_twist_rates).
      group_.rates_from_body_twist_rates(state.poses, state.chart.data(), state.velocities.data(), acceleration_.data(),
                                         rates.data());
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
    state.velocities.resize(base_velocities_ + tree_->dof());
    if (tree_->floating_base) {
      const RigidBody& base = model_->bodies[tree_->base_body];
      state.poses.push_back(base.reference_pose);
      state.chart.resize(coordinates_.chart);
      group_.chart_from_poses(state.poses, state.chart.data());
      Vec6 twist;
      twist << base.initial_angular_velocity, base.reference_pose.R.transpose() * base.initial_linear_velocity;
      group_.from_body_twists(state.poses, state.chart.data(), twist.data(), state.velocities.data());
    }
    state.velocities.tail(tree_->dof()) = tree_->initial_velocity;
    if (!prescribed_.empty()) prescribe(state);
    return state;
  }

  // The optional views (plugin/algorithm.hpp): without loops or a base parameterization with
  // internal constraints, the DAE form M V' = Q and the ODE form's dF/dV, dF/d delta, when the
  // representation gives derivatives (not with prescribed motion, which binds none); and
  // prescribed joint motion, always.
  DynamicsCapabilities capabilities() override {
    DynamicsCapabilities declared;
    const bool unconstrained_with_derivatives = derivatives_ && constraint_count() == 0;
    if (unconstrained_with_derivatives) {
      declared.dae_form = this;
      declared.velocity_rate_derivatives = this;
    }
    declared.prescribed_motion = this;  // honours [model.prescribed] (an empty list without one)
    declared.no_analytic_derivatives = no_derivatives_;
    return declared;
  }

  // --- VelocityRateDerivatives: the ODE form's dF/dV and dF/d delta (generalized-alpha's
  // Newton matrix for a tree without constraint rows, docs/newton-matrices.md) ---

  // On a fixed base or a base on SE3 (T = 1, T' v = 0: v = u) F is the forward dynamics and
  // these are its derivatives du'/du, du'/dq (000 section 6.1, one dFD call). For another base
  // parameterization, from the DAE form r = M a - Q at a = F (r = 0 there for all q, V):
  // dF/dx = -M^-1 dr/dx with dr/dV = C and dr/d delta = K (evaluate_derivatives).
  void velocity_rate_derivatives(const State& state, Eigen::MatrixXd& by_velocity,
                                 Eigen::MatrixXd& by_configuration) override {
    to_tree_state(state);
    bool body_twists = true;
    if (tree_->floating_base) {
      base_map_.update(group_, state, 1);
      body_twists = base_map_.map(0).isIdentity(0.0) && base_map_.map_rate(0).isZero(0.0);
    }
    if (body_twists) {
      derivatives_->forward_dynamics_derivatives(tree_state_, force_, forward_);
      by_velocity = forward_.acceleration_by_u;
      by_configuration = forward_.acceleration_by_q;
      return;
    }
    evaluate(state, rate_terms_, dae::mass | dae::forces);
    mass_factor_.compute(rate_terms_.mass);
    rate_acceleration_ = mass_factor_.solve(rate_terms_.forces);
    evaluate_derivatives(state, rate_acceleration_, Eigen::VectorXd(), rate_derivatives_, dae::damping | dae::stiffness);
    by_velocity = -mass_factor_.solve(rate_derivatives_.damping);
    by_configuration = -mass_factor_.solve(rate_derivatives_.stiffness);
  }

  // --- PrescribedMotion ---
  const std::vector<std::string>& prescribed_coordinates() const override { return prescribed_.names(); }

  void prescribe(State& state) const override {
    Eigen::VectorXd position, rate, acceleration;
    prescribed_.evaluate(state.time, position, rate, acceleration);
    for (std::size_t i = 0; i < prescribed_.size(); ++i) {
      const Eigen::Index node = prescribed_.nodes()[i], k = static_cast<Eigen::Index>(i);
      state.coordinates(node) = position(k);
      state.velocities(base_velocities_ + node) = rate(k);
    }
  }

  void prescribed_forces(const State& state, Eigen::VectorXd& forces, Eigen::VectorXd& rates) override {
    to_tree_state(state);
    solve_hybrid_dynamics();
    forces = prescribed_force_;
    rates = prescribed_rate_;
  }

  void body_motion(const State& state, std::vector<Pose>& poses, std::vector<Vec6>& twists) override {
    to_tree_state(state);
    zero_.setZero(tree_->velocity_dimension());
    dynamics_->body_kinematics(tree_state_, zero_, kinematics_);
    poses = kinematics_.poses;
    twists = kinematics_.twists;
  }

  // Null for a tree without loops (an ODE for the explicit integrators); the implicit ones
  // still solve it in this DAE form when they use its analytic derivatives (capabilities():
  // dae_form, motion_equations.hpp).
  ConstrainedSystem* constraints() override { return constraint_count() > 0 ? this : nullptr; }

  // --- ConstrainedSystem: loop closures, in the generalized velocities u = (base twist, q')
  // mapped to the run's velocity coordinates (the base in its parameterization), then the
  // base's internal constraints. ---
  Eigen::Index constraint_count() const override { return loop_rows() + internal_rows_; }
  const std::vector<ConstraintBlock>& blocks() const override { return blocks_; }
  std::vector<std::string> redundant_constraints() const override {
    return loops_ ? loops_->dropped_rows() : std::vector<std::string>{};
  }

  GivenRates given_rates(const State&) override {  // joint rates are coordinates: unit rows
    GivenRates given;
    std::vector<Eigen::Index> columns;
    for (std::size_t i = 0; i < tree_->dof_joint.size(); ++i)
      if (model_->joints[tree_->dof_joint[i]].initial_velocity_given) {
        columns.push_back(base_velocities_ + static_cast<Eigen::Index>(i));
        given.names.push_back(tree_->dof_names[i]);
      }
    given.rows.setZero(static_cast<Eigen::Index>(columns.size()), base_velocities_ + tree_->dof());
    for (std::size_t k = 0; k < columns.size(); ++k) given.rows(static_cast<Eigen::Index>(k), columns[k]) = 1.0;
    return given;
  }

  // Analytic C, K and P from the inverse-dynamics derivatives (docs/newton-matrices.md, "Trees in
  // relative coordinates"): none with prescribed motion (hybrid dynamics is not this DAE).
  unsigned analytic_derivatives() const override {
    return derivatives_ ? dae::damping | dae::stiffness | dae::velocity_constraint : 0u;
  }

  // With u = T_f v (T_f = diag(T, 1), T the base's velocity map), u' = T_f a + m (m = (T' v, 0))
  // and the tree's residual rho = ID(q, u, u') + J_u^T lambda_L, the DAE residual is
  // r = T_f^T rho + J_int^T lambda_int, so along the retraction (base pose increment T delta):
  //   C = T_f^T (dtau/du T_f + M dm/dv)
  //   K = T_f^T ((dtau/dq + d(J_u^T lambda)/dq) T_f + dtau/du du/d delta + M du'/d delta)
  //       + d(T_f^T y)/d delta |_{y = rho} + d(J_int^T lambda_int)/d delta
  //   P = d(J_u u)/dq T_f + J_u du/d delta   (then the internal rows' own derivative)
  // dtau/dq, dtau/du and M come from TreeDerivatives (000 section 6.1), the loop terms from
  // closure_derivatives, the base map's derivatives from the group.
  void evaluate_derivatives(const State& state, const Eigen::VectorXd& acceleration, const Eigen::VectorXd& multipliers,
                            DaeDerivatives& out, unsigned what) override {
    to_tree_state(state);
    const Eigen::Index nv = tree_->velocity_dimension(), nb = base_velocities_, dof = tree_->dof(), n = nb + dof;
    const Eigen::Index rows = loop_rows();
    const bool damping = (what & dae::damping) != 0, stiffness = (what & dae::stiffness) != 0,
               velocity = (what & dae::velocity_constraint) != 0;
    tree_acceleration_.resize(nv);
    tree_acceleration_.tail(dof) = acceleration.tail(dof);
    if (tree_->floating_base) {
      base_map_.update(group_, state, 1);
      tree_acceleration_.head<6>().noalias() = base_map_.map(0) * acceleration.head(nb) + base_map_.map_rate(0);
    }
    derivatives_->inverse_dynamics_derivatives(tree_state_, tree_acceleration_, inverse_);
    tree_stiffness_ = inverse_.force_by_q;
    if (rows > 0 && (stiffness || velocity)) {
      multipliers_ = multipliers.size() > 0 ? Eigen::VectorXd(multipliers.head(rows)) : Eigen::VectorXd::Zero(rows);
      closure_derivatives(stiffness, velocity);
    }
    if (!tree_->floating_base) {  // T_f = 1
      if (damping) out.damping = inverse_.force_by_u;
      if (stiffness) out.stiffness = tree_stiffness_;
      if (velocity) out.velocity_constraint = rows > 0 ? closure_velocity_ : Eigen::MatrixXd(0, n);
      return;
    }
    // The base's map and its derivatives (one body); rho's base rows for d(T^T y)/d delta.
    const auto T = base_map_.map(0);
    Eigen::Matrix<double, 6, 1> base_residual = inverse_.force.head<6>();
    if (rows > 0 && stiffness) base_residual.noalias() += jacobian_u_.leftCols<6>().transpose() * multipliers_;
    rate_by_velocity_.resize(6, nb);
    map_velocity_by_position_.resize(6, nb);
    map_acceleration_by_position_.resize(6, nb);
    map_transpose_by_position_.resize(nb, nb);
    rate_by_position_.resize(6, nb);
    group_.velocity_map_derivatives(std::span<const Pose>(state.poses.data(), 1), state.chart.data(),
                                    state.velocities.data(), acceleration.data(), base_residual.data(),
                                    damping ? rate_by_velocity_.data() : nullptr,
                                    (stiffness || velocity) ? map_velocity_by_position_.data() : nullptr,
                                    stiffness ? map_acceleration_by_position_.data() : nullptr,
                                    stiffness ? map_transpose_by_position_.data() : nullptr,
                                    stiffness ? rate_by_position_.data() : nullptr);
    // X T_f for an nv-column X, and T_f^T Y for an nv-row Y.
    const auto times_map = [&](const Eigen::MatrixXd& X, Eigen::MatrixXd& result) {
      result.resize(X.rows(), n);
      result.leftCols(nb).noalias() = X.leftCols<6>() * T;
      result.rightCols(dof) = X.rightCols(dof);
    };
    const auto map_transpose_times = [&](const Eigen::MatrixXd& Y, Eigen::MatrixXd& result) {
      result.resize(n, Y.cols());
      result.topRows(nb).noalias() = T.transpose() * Y.topRows<6>();
      result.bottomRows(dof) = Y.bottomRows(dof);
    };
    if (damping) {
      times_map(inverse_.force_by_u, mapped_);
      mapped_.leftCols(nb).noalias() += inverse_.mass.leftCols<6>() * rate_by_velocity_;
      map_transpose_times(mapped_, out.damping);
    }
    if (stiffness) {
      times_map(tree_stiffness_, mapped_);
      mapped_.leftCols(nb).noalias() += inverse_.force_by_u.leftCols<6>() * map_velocity_by_position_;
      mapped_.leftCols(nb).noalias() +=
          inverse_.mass.leftCols<6>() * (map_acceleration_by_position_ + rate_by_position_);
      map_transpose_times(mapped_, out.stiffness);
      out.stiffness.topLeftCorner(nb, nb) += map_transpose_by_position_;
    }
    if (velocity) {
      out.velocity_constraint.setZero(rows + internal_rows_, n);
      if (rows > 0) {
        times_map(closure_velocity_, mapped_);
        mapped_.leftCols(nb).noalias() += jacobian_u_.leftCols<6>() * map_velocity_by_position_;
        out.velocity_constraint.topRows(rows) = mapped_;
      }
    }
    if (internal_rows_ > 0 && (stiffness || velocity)) {  // the base's parameterization (rp: p^T p = 1)
      internal_stiffness_.resize(nb, nb);
      internal_velocity_derivative_.resize(internal_rows_, nb);
      group_.internal_constraint_derivatives(std::span<const Pose>(state.poses.data(), 1), state.chart.data(),
                                             state.velocities.data(),
                                             multipliers.size() > 0 ? multipliers.data() + rows : nullptr,
                                             stiffness ? internal_stiffness_.data() : nullptr,
                                             velocity ? internal_velocity_derivative_.data() : nullptr);
      if (stiffness) out.stiffness.topLeftCorner(nb, nb) += internal_stiffness_;
      if (velocity) out.velocity_constraint.block(rows, 0, internal_rows_, nb) = internal_velocity_derivative_;
    }
  }

  void evaluate(const State& state, DaeTerms& terms, unsigned what) override {
    to_tree_state(state);
    const int nv = tree_->velocity_dimension();
    const Eigen::Index rows = loop_rows();
    zero_.setZero(nv);
    const bool needs_jacobian = (what & (dae::jacobian | dae::acceleration_rhs)) != 0;
    if (loops_) {
      const Eigen::VectorXd u = generalized_velocity();
      dynamics_->body_kinematics(tree_state_, zero_, kinematics_);
      loops_->evaluate(kinematics_.poses, kinematics_.twists, (what & dae::residual) ? &terms.residual : nullptr,
                       needs_jacobian ? &body_jacobian_ : nullptr,
                       (what & dae::acceleration_rhs) ? &terms.acceleration_rhs : nullptr);
      if (needs_jacobian) {
        // J_u = sum_b J_c,b J_b,  eta_u = eta_b - sum_b J_c,b J_b' u   (body twist V_b = J_b u)
        dynamics_->body_jacobians(tree_state_, jacobians_, (what & dae::acceleration_rhs) ? &jacobian_rates_ : nullptr);
        jacobian_u_.setZero(rows, nv);
        for (std::size_t b = 0; b < jacobians_.size(); ++b) {
          const auto block = body_jacobian_.middleCols<6>(static_cast<Eigen::Index>(6 * b));
          if (block.isZero(0.0)) continue;
          jacobian_u_.noalias() += block * jacobians_[b];
          if (what & dae::acceleration_rhs) terms.acceleration_rhs.noalias() -= block * (jacobian_rates_[b] * u);
        }
      }
    } else {
      jacobian_u_.setZero(0, nv);
      if (what & dae::residual) terms.residual.resize(0);
      if (what & dae::acceleration_rhs) terms.acceleration_rhs.resize(0);
    }
    if (what & dae::mass) dynamics_->mass_matrix(tree_state_, terms.mass);
    if (what & dae::forces) {
      dynamics_->inverse_dynamics(tree_state_, zero_, force_bias_);
      terms.forces = -force_bias_;  // Q = -(C u + gravity and load terms)
    }
    if (what & dae::jacobian) terms.jacobian = jacobian_u_;
    if (tree_->floating_base) to_base_coordinates(state, terms, what);
  }

 private:
  Eigen::Index loop_rows() const { return loops_ ? loops_->rows() : 0; }

  Eigen::VectorXd generalized_velocity() const {
    Eigen::VectorXd u(tree_->velocity_dimension());
    if (tree_->floating_base) u << tree_state_.base_twist, tree_state_.qd;
    else u = tree_state_.qd;
    return u;
  }

  // The base's velocity coordinates v relate to its body twist by u_base = T v_base, so with
  // T_full = diag(T, 1) and m = (T' v, 0):
  //   M = T_full^T M_u T_full,  Q = T_full^T (Q_u - M_u m),  J = J_u T_full,  eta = eta_u - J_u m,
  // then the base's internal constraints are appended.
  void to_base_coordinates(const State& state, DaeTerms& terms, unsigned what) {
    base_map_.update(group_, state, 1);
    const auto T = base_map_.map(0);
    const Eigen::Index nb = base_velocities_, dof = tree_->dof();
    const auto nu = static_cast<Eigen::Index>(tree_->velocity_dimension());
    Eigen::VectorXd map_rate = Eigen::VectorXd::Zero(nu);
    map_rate.head<6>() = base_map_.map_rate(0);
    if (what & dae::forces) {
      if (!(what & dae::mass)) dynamics_->mass_matrix(tree_state_, mass_scratch_);
      const Eigen::MatrixXd& mass = (what & dae::mass) ? terms.mass : mass_scratch_;
      Eigen::VectorXd forces(nb + dof);
      const Eigen::VectorXd body_forces = terms.forces - mass * map_rate;
      forces.head(nb).noalias() = T.transpose() * body_forces.head<6>();
      forces.tail(dof) = body_forces.tail(dof);
      terms.forces = std::move(forces);
    }
    if (what & dae::mass) {
      Eigen::MatrixXd mass(nb + dof, nb + dof);
      mass.topLeftCorner(nb, nb).noalias() = T.transpose() * terms.mass.topLeftCorner<6, 6>() * T;
      mass.topRightCorner(nb, dof).noalias() = T.transpose() * terms.mass.topRightCorner(6, dof);
      mass.bottomLeftCorner(dof, nb) = mass.topRightCorner(nb, dof).transpose();
      mass.bottomRightCorner(dof, dof) = terms.mass.bottomRightCorner(dof, dof);
      terms.mass = std::move(mass);
    }
    const Eigen::Index rows = loop_rows(), all_rows = rows + internal_rows_;
    if (what & dae::acceleration_rhs) {
      if (rows > 0) terms.acceleration_rhs.noalias() -= jacobian_u_ * map_rate;
      terms.acceleration_rhs.conservativeResize(all_rows);
    }
    if (what & dae::residual) terms.residual.conservativeResize(all_rows);
    if (what & dae::jacobian) {
      terms.jacobian.setZero(all_rows, nb + dof);
      terms.jacobian.topLeftCorner(rows, nb).noalias() = jacobian_u_.leftCols<6>() * T;
      terms.jacobian.topRightCorner(rows, dof) = jacobian_u_.rightCols(dof);
    }
    if (internal_rows_ > 0) write_internal_constraints(group_, state, 1, rows, terms, what);
  }

  // The loop closures' terms of the Newton matrices in the tree's coordinates u (base body
  // twist, q'), at tree_state_ and multipliers_: adds d(J_u^T lambda)/dq to tree_stiffness_ and
  // sets closure_velocity_ = d(J_u u)/dq at fixed u (with jacobian_u_ = J_u). With each body's
  // Jacobian J_b (body twist V_b = J_b u; its columns Z_k are the body-frame screws of the
  // base directions and of the nodes on the body's path), the pose increment J_b delta and
  // the closure rows' derivatives by those increments (JointConstraintSet::second_derivatives):
  //   d(J_u u)/dq = sum_b (dJ_c,b V_b/d zeta_b) J_b + J_c,b dV_b/dq,
  //     dV_b/dq_j = [W_bj, Z_j],  W_bj = sum_{k up to j on the path} Z_k u_k (base columns: 0)
  //   d(J_u^T lambda)/dq = sum_b,b' J_b^T (d(J_c,b^T lambda)/d zeta_b') J_b'
  //     + entries (k, j), k before j on b's path: [Z_k, Z_j] . (J_c,b^T lambda)
  // (the moving screws of paper 000 section 6.1: a joint moves the screws beyond it, and the
  // body-fixed reaction wrench with its body).
  void closure_derivatives(bool stiffness, bool velocity) {
    const Eigen::Index nv = tree_->velocity_dimension(), rows = loop_rows(), offset = tree_->floating_base ? 6 : 0;
    zero_.setZero(nv);
    dynamics_->body_kinematics(tree_state_, zero_, kinematics_);
    dynamics_->body_jacobians(tree_state_, jacobians_, nullptr);
    loops_->evaluate(kinematics_.poses, kinematics_.twists, nullptr, &body_jacobian_, nullptr);
    loops_->second_derivatives(kinematics_.poses, kinematics_.twists, stiffness ? &multipliers_ : nullptr,
                               stiffness ? &reaction_stiffness_ : nullptr, velocity ? &velocity_derivative_ : nullptr);
    const Eigen::VectorXd u = generalized_velocity();
    jacobian_u_.setZero(rows, nv);
    if (velocity) closure_velocity_.setZero(rows, nv);
    loop_bodies_.clear();
    for (std::size_t b = 0; b < jacobians_.size(); ++b)
      if (!body_jacobian_.middleCols<6>(static_cast<Eigen::Index>(6 * b)).isZero(0.0)) loop_bodies_.push_back(b);
    for (const std::size_t b : loop_bodies_) {
      const auto column = static_cast<Eigen::Index>(6 * b);
      const Matrix6X& J = jacobians_[b];
      const auto closure = body_jacobian_.middleCols<6>(column);
      jacobian_u_.noalias() += closure * J;
      // The nodes on the body's path, root first (parent[i] < i).
      path_.clear();
      for (int node = tree_->body_node[b]; node >= 0; node = tree_->parent[static_cast<std::size_t>(node)])
        path_.push_back(node);
      std::reverse(path_.begin(), path_.end());
      if (velocity) {
        closure_velocity_.noalias() += velocity_derivative_.middleCols<6>(column) * J;
        twist_rate_by_q_.setZero(6, nv);
        Vec6 partial_twist = J.leftCols(offset) * u.head(offset);
        for (const int node : path_) {
          const Eigen::Index j = offset + node;
          partial_twist += J.col(j) * u(j);
          twist_rate_by_q_.col(j).noalias() = se3::ad(partial_twist) * J.col(j);
        }
        closure_velocity_.noalias() += closure * twist_rate_by_q_;
      }
      if (stiffness) {
        const Vec6 wrench = closure.transpose() * multipliers_;
        for (std::size_t a = 0; a < path_.size(); ++a) {
          const Eigen::Index j = offset + path_[a];
          const Vec6 coadjoint = se3::ad(J.col(j)).transpose() * wrench;  // [Z_k, Z_j] . w = -Z_k . ad_Zj^T w
          for (Eigen::Index k = 0; k < offset; ++k) tree_stiffness_(k, j) -= J.col(k).dot(coadjoint);
          for (std::size_t c = 0; c < a; ++c) {
            const Eigen::Index k = offset + path_[c];
            tree_stiffness_(k, j) -= J.col(k).dot(coadjoint);
          }
        }
      }
    }
    if (stiffness)
      for (const std::size_t b : loop_bodies_)
        for (const std::size_t c : loop_bodies_) {
          const auto coupling =
              reaction_stiffness_.block<6, 6>(static_cast<Eigen::Index>(6 * b), static_cast<Eigen::Index>(6 * c));
          if (coupling.isZero(0.0)) continue;
          tree_stiffness_.noalias() += jacobians_[b].transpose() * (coupling * jacobians_[c]);
        }
  }

  // The tree state of a run state; prescribed coordinates and rates from q(t), q'(t).
  void to_tree_state(const State& state) {
    const int n = tree_->dof();
    if (tree_->floating_base) {
      tree_state_.base = state.poses.front();
      group_.to_body_twists(state.poses, state.chart.data(), state.velocities.data(), tree_state_.base_twist.data());
    }
    tree_state_.q = state.coordinates;
    tree_state_.qd = state.velocities.tail(n);
    if (prescribed_.empty()) return;
    prescribed_.evaluate(state.time, prescribed_position_, prescribed_rate_, prescribed_acceleration_);
    for (std::size_t i = 0; i < prescribed_.size(); ++i) {
      const int node = prescribed_.nodes()[i];
      tree_state_.q(node) = prescribed_position_(static_cast<Eigen::Index>(i));
      tree_state_.qd(node) = prescribed_rate_(static_cast<Eigen::Index>(i));
    }
  }

  // The Newton matrices' derivatives (evaluate_derivatives). A representation plugin that
  // declares no derivatives (RepresentationCapabilities) leaves them out: the integrators
  // then difference the ODE V' = F, and only newton_derivatives = "analytic" fails, with
  // this reason (NewtonDerivatives::require).
  void bind_derivatives(const Representation& representation, const std::string& representation_name) {
    if (representation.capabilities().derivatives)
      derivatives_ = representation.bind_derivatives(tree_);
    else
      no_derivatives_ = "representation '" + representation_name +
                        "' gives no analytic derivatives of tree dynamics (its plugin declares no "
                        "RepresentationCapabilities::derivatives)";
  }

  void bind_prescribed_motion(const Representation& representation) {
    if (!tree_->cut_joints.empty())
      throw ModelError("prescribed joint motion ([model.prescribed]) is not supported on closed loops (joint '" +
                       model_->joints[tree_->cut_joints.front()].name +
                       "' closes one): prescribe the motion as a driving constraint in absolute coordinates instead");
    if (internal_rows_ > 0)
      throw ModelError("prescribed joint motion ([model.prescribed]) needs a floating-base parameterization "
                       "without internal constraints (SE3, SO3xR3 or euler-angles)");
    const Eigen::Index nv = tree_->velocity_dimension(), prescribed = static_cast<Eigen::Index>(prescribed_.size());
    prescribed_force_.setZero(prescribed);
    const Eigen::Index base_rows = tree_->floating_base ? 6 : 0;  // rows of u = (base twist, q')
    for (int node = 0; node < tree_->dof(); ++node)
      (prescribed_.is_prescribed()[static_cast<std::size_t>(node)] ? prescribed_rows_ : free_rows_)
          .push_back(base_rows + node);
    if (tree_->floating_base) free_rows_.insert(free_rows_.begin(), {0, 1, 2, 3, 4, 5});
    if (articulated_body_) {
      if (!representation.capabilities().higher_order)
        throw ModelError("prescribed joint motion with 'aba' needs the hybrid dynamics of the representation, whose "
                         "plugin declares no RepresentationCapabilities::higher_order; use 'crba-cholesky'");
      hybrid_ = representation.bind_higher_order(tree_, 0);
      split_.base_motion = false;  // the base moves freely under its loads
      split_.joint_motion = prescribed_.is_prescribed();
      given_.setZero(nv, 1);
    }
  }

  // Hybrid dynamics at the tree state (to_tree_state first): acceleration_ (u', the prescribed
  // rows q''(t)) and prescribed_force_. The free joints and the base carry force_ (zero: the
  // model's loads and gravity act inside the algorithms).
  void solve_hybrid_dynamics() {
    const Eigen::Index nv = tree_->velocity_dimension(), np = static_cast<Eigen::Index>(prescribed_rows_.size()),
                       nf = static_cast<Eigen::Index>(free_rows_.size());
    if (articulated_body_) {  // H-GHYB (003 Algorithm 4), order 0
      given_.col(0) = force_;
      for (Eigen::Index i = 0; i < np; ++i) given_(prescribed_rows_[static_cast<std::size_t>(i)], 0) = prescribed_acceleration_(i);
      hybrid_->hybrid_dynamics(tree_state_, split_, given_, hybrid_rates_, hybrid_forces_);
      acceleration_ = hybrid_rates_.col(0);
      for (Eigen::Index i = 0; i < np; ++i)
        prescribed_force_(i) = hybrid_forces_(prescribed_rows_[static_cast<std::size_t>(i)], 0);
      return;
    }
    // M u' + b = tau with u'_P = q''(t), tau_F = force_F:  M_FF u'_F = tau_F - b_F - M_FP q''(t),
    // tau_P = M_PF u'_F + M_PP q''(t) + b_P.
    dynamics_->mass_matrix(tree_state_, mass_scratch_);
    zero_.setZero(nv);
    dynamics_->inverse_dynamics(tree_state_, zero_, force_bias_);
    acceleration_.resize(nv);
    for (Eigen::Index i = 0; i < np; ++i) acceleration_(prescribed_rows_[static_cast<std::size_t>(i)]) = prescribed_acceleration_(i);
    if (nf > 0) {
      free_mass_.resize(nf, nf);
      free_rhs_.resize(nf);
      for (Eigen::Index a = 0; a < nf; ++a) {
        const Eigen::Index row = free_rows_[static_cast<std::size_t>(a)];
        free_rhs_(a) = force_(row) - force_bias_(row);
        for (Eigen::Index i = 0; i < np; ++i)
          free_rhs_(a) -= mass_scratch_(row, prescribed_rows_[static_cast<std::size_t>(i)]) * prescribed_acceleration_(i);
        for (Eigen::Index b = 0; b < nf; ++b) free_mass_(a, b) = mass_scratch_(row, free_rows_[static_cast<std::size_t>(b)]);
      }
      free_mass_cholesky_.compute(free_mass_);
      if (free_mass_cholesky_.info() != Eigen::Success)
        throw SimulationError("the mass matrix of the free coordinates is not positive definite");
      free_rhs_ = free_mass_cholesky_.solve(free_rhs_);
      for (Eigen::Index a = 0; a < nf; ++a) acceleration_(free_rows_[static_cast<std::size_t>(a)]) = free_rhs_(a);
    }
    for (Eigen::Index i = 0; i < np; ++i) {
      const Eigen::Index row = prescribed_rows_[static_cast<std::size_t>(i)];
      prescribed_force_(i) = mass_scratch_.row(row).dot(acceleration_) + force_bias_(row) - force_(row);
    }
  }

  std::shared_ptr<const Model> model_;
  const Group& group_;
  BodyCoordinates coordinates_;
  std::shared_ptr<const KinematicTree> tree_;
  std::unique_ptr<TreeDynamics> dynamics_;
  bool articulated_body_;
  Eigen::Index base_velocities_;  // velocity coordinates of the floating base (0 without one)
  Eigen::Index internal_rows_;    // its internal constraints
  TreeState tree_state_;
  Eigen::VectorXd force_, acceleration_, zero_, force_bias_;
  BodyKinematics kinematics_;
  std::unique_ptr<JointConstraintSet> loops_;
  std::vector<ConstraintBlock> blocks_;
  DaeTerms terms_;
  Eigen::MatrixXd body_jacobian_, jacobian_u_, mass_scratch_;
  std::vector<Matrix6X> jacobians_, jacobian_rates_;
  BodyVelocityMaps base_map_;
  // Newton-matrix derivatives (evaluate_derivatives; null with prescribed motion): the tree's
  // inverse-dynamics derivatives, the loop terms in u and the base map's derivatives.
  std::unique_ptr<TreeDerivatives> derivatives_;
  std::string no_derivatives_;  // why derivatives_ is null without prescribed motion
  InverseDynamicsDerivatives inverse_;
  ForwardDynamicsDerivatives forward_;  // the ODE form's (velocity_rate_derivatives)
  DaeTerms rate_terms_;
  DaeDerivatives rate_derivatives_;
  Eigen::LLT<Eigen::MatrixXd> mass_factor_;
  Eigen::VectorXd rate_acceleration_;
  Eigen::VectorXd tree_acceleration_, multipliers_;
  Eigen::MatrixXd tree_stiffness_, closure_velocity_, reaction_stiffness_, velocity_derivative_, twist_rate_by_q_,
      mapped_, rate_by_velocity_, map_velocity_by_position_, map_acceleration_by_position_,
      map_transpose_by_position_, rate_by_position_, internal_stiffness_, internal_velocity_derivative_;
  std::vector<std::size_t> loop_bodies_;
  std::vector<int> path_;
  // Prescribed motion (empty without): coordinates, q, q', q'' at the last tree state, rows of
  // u (prescribed and free, the free ones with the base's first), the hybrid solver and its data.
  PrescribedCoordinates prescribed_;
  Eigen::VectorXd prescribed_position_, prescribed_rate_, prescribed_acceleration_, prescribed_force_;
  std::vector<Eigen::Index> prescribed_rows_, free_rows_;
  std::unique_ptr<HigherOrderDynamics> hybrid_;
  HybridSplit split_;
  Eigen::MatrixXd given_, hybrid_rates_, hybrid_forces_, free_mass_;
  Eigen::VectorXd free_rhs_;
  Eigen::LLT<Eigen::MatrixXd> free_mass_cholesky_;
};

// What a tree algorithm computes, for runs and for `liembs eval`.
enum class Quantity {
  forward_aba,
  forward_cholesky,
  inverse_dynamics,
  mass_matrix,
  coriolis_matrix,
  gravity_forces,
  inverse_dynamics_derivatives,
  forward_dynamics_derivatives,
  regressor,
  geometric_derivatives,
  centroidal,
  body_motion,
  body_jacobians,
  energy
};

bool uses_derivatives(Quantity quantity) {
  return quantity == Quantity::inverse_dynamics_derivatives || quantity == Quantity::forward_dynamics_derivatives ||
         quantity == Quantity::regressor;
}

// Whether the inputs hold the velocities (q' and the base twist): all but M(q), G(q) and J(q).
bool takes_velocities(Quantity quantity) {
  return quantity != Quantity::mass_matrix && quantity != Quantity::gravity_forces && quantity != Quantity::body_jacobians;
}

// The inertial parameters of a body in the regressor's columns (tree_derivatives.hpp).
const char* const inertial_parameter_names[kInertialParameters] = {"m",   "mcx", "mcy", "mcz", "Ixx",
                                                                   "Ixy", "Ixz", "Iyy", "Iyz", "Izz"};

// Column-oriented batch evaluation (README.md, "liembs eval"): inputs are the base state (if
// the tree floats) and q, q' and q'' or tau per degree of freedom; outputs are named after
// the generalized coordinates.
class TreeEvaluator final : public BatchEvaluator {
 public:
  TreeEvaluator(std::shared_ptr<const KinematicTree> tree, std::unique_ptr<TreeDynamics> dynamics,
                std::unique_ptr<TreeDerivatives> derivatives, std::unique_ptr<TreeGeometricDerivatives> geometric,
                std::shared_ptr<const Model> model_pointer, const Representation& representation, Quantity quantity)
      : tree_(std::move(tree)), dynamics_(std::move(dynamics)), derivatives_(std::move(derivatives)),
        geometric_(std::move(geometric)), quantity_(quantity), model_(std::move(model_pointer)), representation_(representation) {
    const Model& model = *model_;
    // "base.<base name>" for each of `base_names` if the tree floats, then "<prefix><dof name>".
    auto add_per_coordinate = [&](std::vector<std::string>& list, const char* prefix,
                                  const std::vector<const char*>& base_names) {
      if (tree_->floating_base)
        for (const char* c : base_names) list.push_back(std::string("base.") + c);
      for (const auto& name : tree_->dof_names) list.push_back(std::string(prefix) + name);
    };
    const std::vector<const char*> pose_names{"x", "y", "z", "qw", "qx", "qy", "qz"};
    const std::vector<const char*> twist_names{"wx", "wy", "wz", "vx", "vy", "vz"};
    const std::vector<const char*> rate_names{"dwx", "dwy", "dwz", "dvx", "dvy", "dvz"};
    const std::vector<const char*> wrench_names{"mx", "my", "mz", "fx", "fy", "fz"};
    std::vector<std::string> coordinates;  // generalized coordinate names
    add_per_coordinate(coordinates, "", twist_names);
    add_per_coordinate(inputs_, "q.", pose_names);
    if (takes_velocities(quantity)) add_per_coordinate(inputs_, "qd.", twist_names);
    const auto add_matrix = [&](const char* prefix) {  // row-major, rows and columns named after coordinates
      for (const auto& row : coordinates)
        for (const auto& column : coordinates) outputs_.push_back(std::string(prefix) + "." + row + "." + column);
    };
    switch (quantity) {
      case Quantity::forward_aba:
      case Quantity::forward_cholesky:
        add_per_coordinate(inputs_, "tau.", wrench_names);
        add_per_coordinate(outputs_, "qdd.", rate_names);
        break;
      case Quantity::inverse_dynamics:
        add_per_coordinate(inputs_, "qdd.", rate_names);
        add_per_coordinate(outputs_, "tau.", wrench_names);
        break;
      case Quantity::inverse_dynamics_derivatives:
        add_per_coordinate(inputs_, "qdd.", rate_names);
        add_per_coordinate(outputs_, "tau.", wrench_names);
        add_matrix("dtau_dq");
        add_matrix("dtau_du");
        add_matrix("M");
        break;
      case Quantity::forward_dynamics_derivatives:
        add_per_coordinate(inputs_, "tau.", wrench_names);
        add_per_coordinate(outputs_, "qdd.", rate_names);
        add_matrix("dqdd_dq");
        add_matrix("dqdd_du");
        add_matrix("dqdd_dtau");
        break;
      case Quantity::regressor:
        add_per_coordinate(inputs_, "qdd.", rate_names);
        for (const auto& row : coordinates)
          for (const RigidBody& body : model.bodies)
            for (const char* parameter : inertial_parameter_names) outputs_.push_back("Y." + row + "." + body.name + "." + parameter);
        break;
      case Quantity::geometric_derivatives: {
        // dtau_dB.<row>.<joint>.<xi component>, then dtau_dX.<row>.<dof>.<screw coordinate>.
        add_per_coordinate(inputs_, "qdd.", rate_names);
        add_per_coordinate(outputs_, "tau.", wrench_names);
        std::vector<std::string> joints;
        for (const int node : joint_first_nodes(*tree_))
          joints.push_back(model.joints[tree_->dof_joint[static_cast<std::size_t>(node)]].name);
        const auto add_parameters = [&](const std::string& prefix, const std::vector<std::string>& parameters) {
          for (const auto& row : coordinates)
            for (const auto& parameter : parameters)
              for (const char* component : twist_names) outputs_.push_back(prefix + row + "." + parameter + "." + component);
        };
        add_parameters("dtau_dB.", joints);
        add_parameters("dtau_dX.", tree_->dof_names);
        break;
      }
      case Quantity::centroidal: {
        // mass, com.<axis>, h_G.<component>, then J_com.<axis>.<coordinate> and
        // A_G.<component>.<coordinate> row-major (centroidal_algorithms.hpp).
        const std::vector<const char*> axes{"x", "y", "z"}, momentum{"kx", "ky", "kz", "lx", "ly", "lz"};
        bodies_ = model.bodies;
        outputs_.push_back("mass");
        for (const char* axis : axes) outputs_.push_back(std::string("com.") + axis);
        for (const char* component : momentum) outputs_.push_back(std::string("h_G.") + component);
        for (const char* axis : axes)
          for (const auto& column : coordinates) outputs_.push_back(std::string("J_com.") + axis + "." + column);
        for (const char* component : momentum)
          for (const auto& column : coordinates) outputs_.push_back(std::string("A_G.") + component + "." + column);
        break;
      }
      case Quantity::body_motion:
        // <body>.x .. <body>.vz: the body columns of trajectory.csv (host/output_schema.hpp).
        for (const RigidBody& body : model.bodies)
          for (const auto component : body_motion_components) outputs_.push_back(body.name + "." + std::string(component));
        break;
      case Quantity::body_jacobians:
        // J.<body>.<twist component>.<coordinate>: each body's 6 x nv Jacobian row-major, the
        // twist in this evaluator's representation (docs/algorithms.md, "twist of a body").
        for (const RigidBody& body : model.bodies)
          for (const char* component : twist_names)
            for (const auto& column : coordinates) outputs_.push_back("J." + body.name + "." + component + "." + column);
        break;
      case Quantity::energy:
        for (const auto name : energy_columns) outputs_.emplace_back(name);  // as trajectory.csv names them
        break;
      case Quantity::gravity_forces: add_per_coordinate(outputs_, "tau.", wrench_names); break;
      case Quantity::mass_matrix:
      case Quantity::coriolis_matrix: add_matrix(quantity == Quantity::mass_matrix ? "M" : "C"); break;
    }
  }

  const std::vector<std::string>& input_columns() const override { return inputs_; }
  const std::vector<std::string>& output_columns() const override { return outputs_; }

  void evaluate(const double* in, double* out) override {
    const int n = tree_->dof(), nv = tree_->velocity_dimension();
    const bool floating = tree_->floating_base;
    std::size_t k = 0;
    if (floating) {
      state_.base.r = Vec3(in[0], in[1], in[2]);
      Eigen::Quaterniond q(in[3], in[4], in[5], in[6]);
      if (q.norm() < 1e-12)
        throw ConfigError("columns " + inputs_[3] + " .. " + inputs_[6] + ": the base quaternion is zero (it gives no rotation)");
      state_.base.R = q.normalized().toRotationMatrix();
      k = 7;
    }
    state_.q = Eigen::Map<const Eigen::VectorXd>(in + k, n);
    k += static_cast<std::size_t>(n);
    state_.qd.setZero(n);
    state_.base_twist.setZero();
    if (takes_velocities(quantity_)) {
      if (floating) {
        state_.base_twist = Eigen::Map<const Vec6>(in + k);
        k += 6;
      }
      state_.qd = Eigen::Map<const Eigen::VectorXd>(in + k, n);
      k += static_cast<std::size_t>(n);
    }
    // The third input (accelerations or forces) in a vector of this evaluator: the kernels
    // take an Eigen::VectorXd, and a Map passed there would be copied into a new one.
    const auto third = [&]() -> const Eigen::VectorXd& {
      third_ = Eigen::Map<const Eigen::VectorXd>(in + k, nv);
      return third_;
    };
    switch (quantity_) {
      case Quantity::forward_aba:
        dynamics_->forward_dynamics(state_, third(), vector_);
        break;
      case Quantity::forward_cholesky:
        dynamics_->forward_dynamics_cholesky(state_, third(), vector_);
        break;
      case Quantity::inverse_dynamics:
        dynamics_->inverse_dynamics(state_, third(), vector_);
        break;
      case Quantity::gravity_forces: dynamics_->gravity_forces(state_, vector_); break;
      case Quantity::mass_matrix: dynamics_->mass_matrix(state_, matrix_); break;
      case Quantity::coriolis_matrix: dynamics_->coriolis_matrix(state_, matrix_); break;
      case Quantity::inverse_dynamics_derivatives: {
        derivatives_->inverse_dynamics_derivatives(state_, third(), inverse_);
        out = write_row_major(write_row_major(write_row_major(write_vector(out, inverse_.force), inverse_.force_by_q),
                                              inverse_.force_by_u),
                              inverse_.mass);
        return;
      }
      case Quantity::forward_dynamics_derivatives: {
        derivatives_->forward_dynamics_derivatives(state_, third(), forward_);
        out = write_row_major(write_row_major(write_row_major(write_vector(out, forward_.acceleration), forward_.acceleration_by_q),
                                              forward_.acceleration_by_u),
                              forward_.acceleration_by_force);
        return;
      }
      case Quantity::regressor:
        derivatives_->inverse_dynamics_regressor(state_, third(), matrix_);
        write_row_major(out, matrix_);
        return;
      case Quantity::geometric_derivatives:
        geometric_->inverse_dynamics_geometric_derivatives(state_, Eigen::Map<const Eigen::VectorXd>(in + k, nv), geometric_out_);
        write_row_major(write_row_major(write_vector(out, geometric_out_.force), geometric_out_.force_by_reference),
                        geometric_out_.force_by_screw);
        return;
      case Quantity::centroidal:
        centroidal::compute(bodies_, *dynamics_, state_, centroidal_workspace_, centroidal_);
        *out++ = centroidal_.mass;
        out = std::copy_n(centroidal_.center_of_mass.data(), 3, out);
        out = std::copy_n(centroidal_.momentum.data(), 6, out);
        write_row_major(write_row_major(out, centroidal_.center_of_mass_jacobian), centroidal_.momentum_matrix);
        return;
      case Quantity::body_motion:  // the numbers trajectory.csv writes for these bodies at this state
        dynamics_->body_kinematics(state_, zero_acceleration(), kinematics_);
        for (std::size_t b = 0; b < kinematics_.poses.size(); ++b, out += body_motion_components.size())
          body_motion_values(kinematics_.poses[b], kinematics_.twists[b], out);
        return;
      case Quantity::body_jacobians:  // J^b of every body, each column mapped as a twist to the representation's
        dynamics_->body_kinematics(state_, zero_acceleration(), kinematics_);
        dynamics_->body_jacobians(state_, jacobians_, nullptr);
        for (std::size_t b = 0; b < jacobians_.size(); ++b) {
          for (Eigen::Index c = 0; c < jacobians_[b].cols(); ++c)
            jacobians_[b].col(c) = representation_.twist_from_body(kinematics_.poses[b], jacobians_[b].col(c));
          out = write_row_major(out, jacobians_[b]);
        }
        return;
      case Quantity::energy: {  // compute_invariants, as a run's recorder computes trajectory.csv's energies
        dynamics_->body_kinematics(state_, zero_acceleration(), kinematics_);
        const Invariants invariants = compute_invariants(*model_, kinematics_.poses, kinematics_.twists);
        for (const double value : {invariants.kinetic_energy, invariants.potential_energy, invariants.total_energy()}) *out++ = value;
        return;
      }
    }
    if (quantity_ == Quantity::mass_matrix || quantity_ == Quantity::coriolis_matrix) write_row_major(out, matrix_);
    else write_vector(out, vector_);
  }

 private:
  // Writes a vector, or a matrix row by row (as the columns are named); returns the next free entry.
  static double* write_vector(double* out, const Eigen::VectorXd& vector) {
    Eigen::Map<Eigen::VectorXd>(out, vector.size()) = vector;
    return out + vector.size();
  }
  template <class Matrix>
  static double* write_row_major(double* out, const Matrix& matrix) {
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(out, matrix.rows(), matrix.cols()) = matrix;
    return out + matrix.size();
  }

  std::shared_ptr<const KinematicTree> tree_;
  std::unique_ptr<TreeDynamics> dynamics_;
  std::unique_ptr<TreeDerivatives> derivatives_;  // for the derivative quantities
  std::unique_ptr<TreeGeometricDerivatives> geometric_;  // for the geometric derivatives
  Quantity quantity_;
  InverseDynamicsDerivatives inverse_;
  ForwardDynamicsDerivatives forward_;
  GeometricDerivatives geometric_out_;
  const Eigen::VectorXd& zero_acceleration() {
    zero_.setZero(tree_->velocity_dimension());
    return zero_;
  }

  std::shared_ptr<const Model> model_;
  const Representation& representation_;  // the run's, which outlives its evaluators
  BodyKinematics kinematics_;
  std::vector<Matrix6X> jacobians_;
  Eigen::VectorXd zero_;
  std::vector<RigidBody> bodies_;  // for the centroidal quantities
  CentroidalWorkspace centroidal_workspace_;
  CentroidalQuantities centroidal_;
  std::vector<std::string> inputs_, outputs_;
  TreeState state_;
  Eigen::VectorXd vector_, third_;
  Eigen::MatrixXd matrix_;
};

class TreeAlgorithm final : public Algorithm {
 public:
  AlgorithmCapabilities capabilities() const override { return {.batch_evaluation = true, .uses_representation = true}; }
  TreeAlgorithm(std::string name, Quantity quantity) : name_(std::move(name)), quantity_(quantity) {}

  std::unique_ptr<ForwardDynamics> bind_forward_dynamics(const DynamicsContext& context) const override {
    if (quantity_ != Quantity::forward_aba && quantity_ != Quantity::forward_cholesky)
      throw ModelError("it does not compute forward dynamics, which a simulation integrates; use 'aba' or "
                       "'crba-cholesky' for trees (or 'newton-euler' for free bodies), or evaluate it with "
                       "'liembs eval'");
    check(context);
    return std::make_unique<TreeForwardDynamics>(context.model, context.group, *context.representation,
                                                 context.representation_name, quantity_ == Quantity::forward_aba);
  }

  std::unique_ptr<BatchEvaluator> bind_evaluator(const DynamicsContext& context) const override {
    check(context);
    auto tree = std::make_shared<const KinematicTree>(compile_tree(*context.model));
    auto dynamics = context.representation->bind_tree(tree);
    const RepresentationCapabilities provides = context.representation->capabilities();
    if ((uses_derivatives(quantity_) && !provides.derivatives) ||
        (quantity_ == Quantity::geometric_derivatives && !provides.geometric_derivatives))
      throw ModelError("representation '" + context.representation_name + "' does not provide " +
                       (quantity_ == Quantity::geometric_derivatives ? "the derivatives by the joints' geometry"
                                                                     : "analytic derivatives of tree dynamics") +
                       " (its plugin declares no RepresentationCapabilities::" +
                       (quantity_ == Quantity::geometric_derivatives ? "geometric_derivatives)" : "derivatives)"));
    auto derivatives = uses_derivatives(quantity_) ? context.representation->bind_derivatives(tree) : nullptr;
    auto geometric = quantity_ == Quantity::geometric_derivatives ? context.representation->bind_geometric_derivatives(tree)
                                                                  : nullptr;
    return std::make_unique<TreeEvaluator>(std::move(tree), std::move(dynamics), std::move(derivatives),
                                           std::move(geometric), context.model, *context.representation, quantity_);
  }

 private:
  void check(const DynamicsContext& context) const {
    if (!context.representation)
      throw ModelError("it needs a twist representation: add [representation] name = \"body-fixed\" "
                       "(or spatial, hybrid, mixed)");
    if (!context.model->constraints.empty())
      throw ModelError("the model has geometric constraints ([[model.constraints]] or a JSON model, e.g. '" +
                       context.model->constraints.front().name +
                       "'), which live in absolute coordinates: use algorithm 'newton-euler'");
    if (context.model->joints.empty() && context.model->bodies.size() > 1)
      throw ModelError("it works on one tree, but the model has " + std::to_string(context.model->bodies.size()) +
                       " unconnected free bodies; use algorithm 'newton-euler' for absolute coordinates");
  }

  std::string name_;
  Quantity quantity_;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  using liembs::Algorithm;
  const auto add = [&](const char* name, Quantity quantity, const char* summary) {
    registrar.add<Algorithm>(name, "1.0.0", summary, liembs::OptionDeclaration{}, [name = std::string(name), quantity](const liembs::ConfigTable&) {
      return std::make_unique<TreeAlgorithm>(name, quantity);
    });
  };
  add("aba", Quantity::forward_aba, "forward dynamics of a tree: articulated-body algorithm");
  add("crba-cholesky", Quantity::forward_cholesky, "forward dynamics of a tree: composite-rigid-body algorithm + Cholesky");
  add("rnea", Quantity::inverse_dynamics, "inverse dynamics of a tree: recursive Newton-Euler (liembs eval)");
  add("crba", Quantity::mass_matrix, "mass matrix of a tree: composite-rigid-body algorithm (liembs eval)");
  add("coriolis", Quantity::coriolis_matrix, "Coriolis matrix C with M' - 2C skew-symmetric (liembs eval)");
  add("gravity", Quantity::gravity_forces, "gravity and load forces of a tree (liembs eval)");
  add("rnea-derivatives", Quantity::inverse_dynamics_derivatives,
      "inverse dynamics of a tree and its analytic derivatives dtau/dq, dtau/du, M (liembs eval)");
  add("aba-derivatives", Quantity::forward_dynamics_derivatives,
      "forward dynamics of a tree and its analytic derivatives dqdd/dq, dqdd/du, M^-1 (liembs eval)");
  add("regressor", Quantity::regressor, "inverse-dynamics regressor Y of a tree, tau = Y pi (liembs eval)");
  add("centroidal", Quantity::centroidal,
      "centre of mass, its Jacobian and the centroidal momentum matrix A_G, h_G = A_G u (liembs eval)");
  add("kinematics", Quantity::body_motion,
      "forward kinematics of a tree: every body's pose and twist, trajectory.csv's body columns (liembs eval)");
  add("jacobians", Quantity::body_jacobians, "Jacobians of every body of a tree, twists in the representation (liembs eval)");
  add("energy", Quantity::energy, "kinetic, potential (gravity) and total energy of a tree (liembs eval)");
  add("rnea-geometric-derivatives", Quantity::geometric_derivatives,
      "inverse dynamics of a tree and its derivatives by the joints' references B and screws X (liembs eval)");
}
