// The closed-form equations of motion (liembs::closed_form) against their definitions:
// Jacobians and their rates against finite differences of the product of exponentials,
// the mass and Coriolis matrices against the energy and skew-symmetry properties, and the
// inverse dynamics against the Newton-Euler / projection equations of the model bodies
// and the potential of gravity. No recursion is involved anywhere.
#include <liembs/dynamics/closed_form.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/model/model.hpp>

#include <catch2/catch.hpp>

#include <random_trees.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace liembs;
using liembs::testing::random_state;
using liembs::testing::random_tree_model;
using liembs::testing::random_vector;
using liembs::testing::tree_options;
using liembs::testing::tree_variants;

namespace {

// Max-norm error of a relative to b, relative to max(1, |b|).
template <class A, class B>
double relative_error(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
  if (a.size() == 0 && b.size() == 0) return 0.0;
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

// Max-norm of the symmetric part of S relative to max(1, |S|).
double symmetric_part(const Eigen::MatrixXd& S) {
  if (S.size() == 0) return 0.0;
  return (S + S.transpose()).cwiseAbs().maxCoeff() / std::max(1.0, S.cwiseAbs().maxCoeff());
}

constexpr unsigned seeds_per_case = 3;

// The state moved along (q', base twist) by h: q + h q', C_base exp(h V_base).
TreeState moved(const KinematicTree& tree, const TreeState& state, double h) {
  TreeState out = state;
  out.q += h * state.qd;
  if (tree.floating_base) out.base = se3::compose(state.base, se3::exp(h * state.base_twist));
  return out;
}

// The state at time t on the trajectory with u' = acceleration through `state` at t = 0:
// q(t) = q + t q' + t^2/2 q'', C_base(t) = C_base exp(X(t)) with X = t V + t^2/2 V', whose
// body twist is dexp_left(X) X' (so V(0) = V, V'(0) = V').
TreeState on_trajectory(const KinematicTree& tree, const TreeState& state, const Eigen::VectorXd& acceleration,
                        double t) {
  TreeState out = state;
  const Eigen::VectorXd qdd = acceleration.tail(tree.dof());
  out.q = state.q + t * state.qd + 0.5 * t * t * qdd;
  out.qd = state.qd + t * qdd;
  if (tree.floating_base) {
    const Vec6 base_acceleration = acceleration.head<6>();
    const Vec6 X = t * state.base_twist + 0.5 * t * t * base_acceleration;
    const Vec6 Xd = state.base_twist + t * base_acceleration;
    out.base = se3::compose(state.base, se3::exp(X));
    out.base_twist = se3::dexp_left(X) * Xd;
  }
  return out;
}

// vee(C^-1 dC) from a central difference of poses.
Vec6 body_velocity(const Pose& minus, const Pose& center, const Pose& plus, double h) {
  const Mat4 derivative = (plus.matrix() - minus.matrix()) / (2.0 * h);
  return se3::vee(se3::inverse(center).matrix() * derivative);
}

// The tree state with joint coordinate k moved by eps, or (k < 0) the base moved by
// C exp(eps e_m), m = -k - 1.
TreeState perturbed(const KinematicTree& tree, const TreeState& state, int column, double eps) {
  TreeState out = state;
  const int base_columns = tree.floating_base ? 6 : 0;
  if (column < base_columns) {
    out.base = se3::compose(state.base, se3::exp(eps * Vec6::Unit(column)));
  } else {
    out.q(column - base_columns) += eps;
  }
  return out;
}

constexpr double fd_step = 1e-5;
constexpr double fd_tolerance = 1e-7;
constexpr double roundoff_tolerance = 1e-12;

}  // namespace

TEST_CASE("closed-form Jacobians are the derivatives of the product of exponentials", "[dynamics]") {
  for (const auto& tree_case : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_case; ++seed) {
      INFO(tree_case.name << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_case.options);
      const KinematicTree tree = compile_tree(model);
      const TreeState state = random_state(tree, 100 + seed);
      const int nv = tree.velocity_dimension();
      const std::vector<Pose> poses = closed_form::node_poses(tree, state);
      const std::vector<Pose> bodies = closed_form::body_poses(tree, state);
      REQUIRE(bodies.size() == model.bodies.size());
      for (int column = 0; column < nv; ++column) {
        INFO("column " << column);
        const TreeState plus = perturbed(tree, state, column, fd_step);
        const TreeState minus = perturbed(tree, state, column, -fd_step);
        const std::vector<Pose> poses_plus = closed_form::node_poses(tree, plus);
        const std::vector<Pose> poses_minus = closed_form::node_poses(tree, minus);
        for (int i = 0; i < tree.dof(); ++i) {
          INFO("node " << i);
          const auto ui = static_cast<std::size_t>(i);
          const Vec6 expected = body_velocity(poses_minus[ui], poses[ui], poses_plus[ui], fd_step);
          const Matrix6X J = closed_form::node_body_jacobian(tree, state, i);
          CHECK(relative_error(J.col(column), expected) < fd_tolerance);
        }
        const std::vector<Pose> bodies_plus = closed_form::body_poses(tree, plus);
        const std::vector<Pose> bodies_minus = closed_form::body_poses(tree, minus);
        for (std::size_t b = 0; b < bodies.size(); ++b) {
          INFO("body " << model.bodies[b].name);
          const Vec6 expected = body_velocity(bodies_minus[b], bodies[b], bodies_plus[b], fd_step);
          const Matrix6X J = closed_form::body_jacobian(tree, state, b);
          CHECK(relative_error(J.col(column), expected) < fd_tolerance);
        }
      }
    }
  }
}

TEST_CASE("the model bodies sit where their reference poses and the joint screws put them", "[dynamics]") {
  // At q = 0 (and the base at its reference pose) every body is at A_b; the spatial
  // Jacobian column of each joint DoF then equals its world-frame screw Y (001 eq. 28).
  for (const auto& tree_case : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_case; ++seed) {
      INFO(tree_case.name << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_case.options);
      const KinematicTree tree = compile_tree(model);
      TreeState state;
      state.q = Eigen::VectorXd::Zero(tree.dof());
      state.qd = Eigen::VectorXd::Zero(tree.dof());
      if (tree.floating_base) state.base = model.bodies[tree.base_body].reference_pose;
      const std::vector<Pose> bodies = closed_form::body_poses(tree, state);
      for (std::size_t b = 0; b < bodies.size(); ++b) {
        INFO("body " << model.bodies[b].name);
        CHECK(relative_error(bodies[b].matrix(), model.bodies[b].reference_pose.matrix()) < roundoff_tolerance);
      }
      // The k-th node of joint j (KinematicTree::dof_joint) carries the joint's k-th screw.
      const int base_columns = tree.floating_base ? 6 : 0;
      for (std::size_t j = 0; j < model.joints.size(); ++j) {
        const Joint& joint = model.joints[j];
        INFO("joint " << joint.name);
        const Matrix6X spatial = se3::Ad(bodies[joint.child]) * closed_form::body_jacobian(tree, state, joint.child);
        std::size_t k = 0;
        for (int i = 0; i < tree.dof(); ++i) {
          if (tree.dof_joint[static_cast<std::size_t>(i)] != j) continue;
          REQUIRE(k < joint.dof());
          CHECK(relative_error(spatial.col(base_columns + i), joint.screws[k]) < roundoff_tolerance);
          ++k;
        }
        CHECK(k == joint.dof());
      }
    }
  }
}

TEST_CASE("closed-form Jacobian rates are the time derivatives along the motion", "[dynamics]") {
  for (const auto& tree_case : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_case; ++seed) {
      INFO(tree_case.name << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_case.options);
      const KinematicTree tree = compile_tree(model);
      const TreeState state = random_state(tree, 200 + seed);
      const TreeState plus = moved(tree, state, fd_step);
      const TreeState minus = moved(tree, state, -fd_step);
      for (int i = 0; i < tree.dof(); ++i) {
        INFO("node " << i);
        const Matrix6X expected = (closed_form::node_body_jacobian(tree, plus, i) -
                                   closed_form::node_body_jacobian(tree, minus, i)) /
                                  (2.0 * fd_step);
        CHECK(relative_error(closed_form::node_body_jacobian_rate(tree, state, i), expected) < fd_tolerance);
      }
      for (std::size_t b = 0; b < model.bodies.size(); ++b) {
        INFO("body " << model.bodies[b].name);
        const Matrix6X expected =
            (closed_form::body_jacobian(tree, plus, b) - closed_form::body_jacobian(tree, minus, b)) / (2.0 * fd_step);
        CHECK(relative_error(closed_form::body_jacobian_rate(tree, state, b), expected) < fd_tolerance);
      }
    }
  }
}

TEST_CASE("closed-form mass matrix is SPD and M' - 2C is skew-symmetric", "[dynamics]") {
  for (const auto& tree_case : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_case; ++seed) {
      INFO(tree_case.name << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_case.options);
      const KinematicTree tree = compile_tree(model);
      const TreeState state = random_state(tree, 300 + seed);
      const Eigen::VectorXd u = closed_form::generalized_velocity(tree, state);
      const Eigen::MatrixXd M = closed_form::mass_matrix(tree, state);
      if (M.size() == 0) continue;
      CHECK(relative_error(M, Eigen::MatrixXd(M.transpose())) < 1e-15);
      CHECK(Eigen::LLT<Eigen::MatrixXd>(M).info() == Eigen::Success);

      const Eigen::MatrixXd Mdot =
          (closed_form::mass_matrix(tree, moved(tree, state, fd_step)) -
           closed_form::mass_matrix(tree, moved(tree, state, -fd_step))) /
          (2.0 * fd_step);
      const Eigen::MatrixXd C = closed_form::coriolis_matrix(tree, state);
      const Eigen::MatrixXd S = Mdot - 2.0 * C;
      CHECK(symmetric_part(S) < fd_tolerance);
      CHECK(std::abs(u.dot(S * u)) < fd_tolerance * std::max(1.0, S.cwiseAbs().maxCoeff()) * u.squaredNorm());
    }
  }
}

TEST_CASE("kinetic energy and mass matrix are sums over the model bodies", "[dynamics]") {
  // Body twists from finite differences of the body poses along the motion, inertias from
  // the model (RigidBody::spatial_inertia), independent of how the tree merged them.
  for (const auto& tree_case : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_case; ++seed) {
      INFO(tree_case.name << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_case.options);
      const KinematicTree tree = compile_tree(model);
      const TreeState state = random_state(tree, 400 + seed);
      const std::vector<Pose> center = closed_form::body_poses(tree, state);
      const std::vector<Pose> plus = closed_form::body_poses(tree, moved(tree, state, fd_step));
      const std::vector<Pose> minus = closed_form::body_poses(tree, moved(tree, state, -fd_step));
      const int nv = tree.velocity_dimension();
      double energy = 0.0;
      Eigen::MatrixXd M = Eigen::MatrixXd::Zero(nv, nv);
      for (std::size_t b = 0; b < model.bodies.size(); ++b) {
        const Mat6 inertia = model.bodies[b].spatial_inertia();
        const Vec6 V = body_velocity(minus[b], center[b], plus[b], fd_step);
        energy += 0.5 * V.dot(inertia * V);
        const Matrix6X J = closed_form::body_jacobian(tree, state, b);
        M += J.transpose() * inertia * J;
      }
      CHECK(std::abs(closed_form::kinetic_energy(tree, state) - energy) < fd_tolerance * std::max(1.0, energy));
      CHECK(relative_error(closed_form::mass_matrix(tree, state), M) < roundoff_tolerance);
    }
  }
}

TEST_CASE("closed-form inverse dynamics equals the projected Newton-Euler equations of the bodies", "[dynamics]") {
  // Euler-Jourdain (000 eq. 79): Q = sum_b J_b^T (M_b V_b' - ad_{V_b}^T M_b V_b - M_b (0; R_b^T g)),
  // with V_b' from finite differences of V_b along the trajectory with acceleration u'.
  // This exercises the Coriolis and gravity terms without the closed-form C.
  for (const auto& tree_case : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_case; ++seed) {
      INFO(tree_case.name << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_case.options);
      const KinematicTree tree = compile_tree(model);
      const TreeState state = random_state(tree, 500 + seed);
      const int nv = tree.velocity_dimension();
      const Eigen::VectorXd acceleration = random_vector(nv, 600 + seed);
      const TreeState plus = on_trajectory(tree, state, acceleration, fd_step);
      const TreeState minus = on_trajectory(tree, state, acceleration, -fd_step);
      const std::vector<Pose> poses = closed_form::body_poses(tree, state);
      const BodyKinematics kinematics = closed_form::body_kinematics(tree, state, acceleration);
      Eigen::VectorXd expected = Eigen::VectorXd::Zero(nv);
      for (std::size_t b = 0; b < model.bodies.size(); ++b) {
        INFO("body " << model.bodies[b].name);
        const Mat6 inertia = model.bodies[b].spatial_inertia();
        const Matrix6X J = closed_form::body_jacobian(tree, state, b);
        const Vec6 V = J * closed_form::generalized_velocity(tree, state);
        const Vec6 Vdot =
            (closed_form::body_jacobian(tree, plus, b) * closed_form::generalized_velocity(tree, plus) -
             closed_form::body_jacobian(tree, minus, b) * closed_form::generalized_velocity(tree, minus)) /
            (2.0 * fd_step);
        CHECK(relative_error(kinematics.twists[b], V) < roundoff_tolerance);
        CHECK(relative_error(kinematics.accelerations[b], Vdot) < fd_tolerance);
        CHECK(relative_error(kinematics.poses[b].matrix(), poses[b].matrix()) < roundoff_tolerance);
        Vec6 gravity;
        gravity << Vec3::Zero(), poses[b].R.transpose() * model.gravity;
        const Vec6 wrench = inertia * Vdot - se3::ad(V).transpose() * inertia * V - inertia * gravity;
        expected += J.transpose() * wrench;
      }
      const Eigen::VectorXd force = closed_form::inverse_dynamics(tree, state, acceleration);
      CHECK(relative_error(force, expected) < fd_tolerance);
      // And forward dynamics inverts it.
      CHECK(relative_error(closed_form::forward_dynamics(tree, state, force), acceleration) < 1e-10);
    }
  }
}

TEST_CASE("closed-form gravity forces are the gradient of the potential energy", "[dynamics]") {
  // U = -sum_b m_b g . (position of the centre of mass); force = ... + dU/du.
  auto potential = [](const Model& model, const KinematicTree& tree, const TreeState& state) {
    const std::vector<Pose> poses = closed_form::body_poses(tree, state);
    double U = 0.0;
    for (std::size_t b = 0; b < model.bodies.size(); ++b)
      U -= model.bodies[b].mass * model.gravity.dot(se3::transform_point(poses[b], model.bodies[b].center_of_mass));
    return U;
  };
  for (const auto& tree_case : tree_variants()) {
    for (unsigned seed = 1; seed <= seeds_per_case; ++seed) {
      INFO(tree_case.name << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_case.options);
      const KinematicTree tree = compile_tree(model);
      const TreeState state = random_state(tree, 700 + seed);
      Eigen::VectorXd gradient(tree.velocity_dimension());
      for (int column = 0; column < tree.velocity_dimension(); ++column)
        gradient(column) = (potential(model, tree, perturbed(tree, state, column, fd_step)) -
                            potential(model, tree, perturbed(tree, state, column, -fd_step))) /
                           (2.0 * fd_step);
      CHECK(relative_error(closed_form::gravity_forces(tree, state), gradient) < fd_tolerance);
    }
  }
}

TEST_CASE("closed-form dynamics of one free body is the Newton-Euler equation", "[dynamics]") {
  const Model model = random_tree_model(11, tree_options(1, false, true));
  REQUIRE(model.joints.empty());
  const KinematicTree tree = compile_tree(model);
  REQUIRE(tree.floating_base);
  REQUIRE(tree.dof() == 0);
  const Mat6 M = model.bodies[0].spatial_inertia();
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const TreeState state = random_state(tree, seed);
    const Vec6 V = state.base_twist;
    const Vec6 acceleration = random_vector(6, 50 + seed);
    Vec6 gravity;
    gravity << Vec3::Zero(), state.base.R.transpose() * model.gravity;
    const Vec6 expected = M * acceleration - se3::ad(V).transpose() * M * V - M * gravity;
    const Eigen::VectorXd force = closed_form::inverse_dynamics(tree, state, acceleration);
    CHECK(relative_error(force, expected) < roundoff_tolerance);
    CHECK(relative_error(closed_form::mass_matrix(tree, state), M) < roundoff_tolerance);
    CHECK(relative_error(closed_form::forward_dynamics(tree, state, expected), acceleration) < 1e-12);
    // The body's centre of mass falls freely when no wrench acts: r_c'' = g.
    const Eigen::VectorXd free = closed_form::forward_dynamics(tree, state, Eigen::VectorXd::Zero(6));
    const Vec3 w = V.head<3>(), v = V.tail<3>(), c = model.bodies[0].center_of_mass;
    const Vec3 wd = free.head<3>(), vd = free.tail<3>();
    // r_c' = R (v + w x c)  =>  r_c'' = R (w x (v + w x c) + vd + wd x c)
    const Vec3 com_acceleration = state.base.R * (w.cross(v + w.cross(c)) + vd + wd.cross(c));
    CHECK(relative_error(com_acceleration, model.gravity) < 1e-12);
  }
}

TEST_CASE("closed-form dynamics of a single revolute and a single prismatic joint", "[dynamics]") {
  // 000 section 9: Q = (e^T Theta_c e + m |e x (c - p)|^2) q'' - e . ((c - p) x m g) for a
  // revolute joint (axis e through p, Theta_c the world-frame inertia about the COM c), and
  // Q = m q'' - m e . g for a prismatic joint.
  for (unsigned seed = 1; seed <= 5; ++seed) {
    for (const JointType type : {JointType::revolute, JointType::prismatic}) {
      INFO(to_string(type) << ", seed " << seed);
      const Model model = random_tree_model(seed, tree_options(1, false, false, {type}));
      REQUIRE(model.joints.size() == 1);
      const KinematicTree tree = compile_tree(model);
      REQUIRE(tree.dof() == 1);
      const TreeState state = random_state(tree, 10 + seed);
      const double qdd = random_vector(1, 20 + seed)(0);
      const Pose C = closed_form::body_poses(tree, state)[0];
      const RigidBody& body = model.bodies[0];
      const Vec6& Y = model.joints[0].screws[0];
      const double m = body.mass;
      double expected = 0.0, scale = 0.0;  // scale: the terms' magnitudes (the sum can cancel)
      if (type == JointType::revolute) {
        const Vec3 e = Y.head<3>();
        const Vec3 p = e.cross(Y.tail<3>());  // the point on the axis closest to the origin (Y = (e; p x e))
        const Vec3 c = se3::transform_point(C, body.center_of_mass);
        const Mat3 inertia = C.R * body.inertia * C.R.transpose();
        const double inertial = (e.dot(inertia * e) + m * e.cross(c - p).squaredNorm()) * qdd;
        const double gravitational = e.dot((c - p).cross(m * model.gravity));
        expected = inertial - gravitational;
        scale = std::abs(inertial) + std::abs(gravitational);
      } else {
        const Vec3 e = Y.tail<3>();
        expected = m * qdd - m * e.dot(model.gravity);
        scale = std::abs(m * qdd) + std::abs(m * e.dot(model.gravity));
      }
      Eigen::VectorXd acceleration(1);
      acceleration << qdd;
      CHECK(closed_form::inverse_dynamics(tree, state, acceleration)(0) == Approx(expected).epsilon(1e-12).margin(1e-12 * scale));
    }
  }
}
