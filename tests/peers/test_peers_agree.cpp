// The peer wrappers (KDL, MuJoCo, DART) agree with each other on inverse dynamics, mass
// matrix and forward dynamics, in the LieMBS joint order, before LieMBS is compared with
// them; the floating-base conversions make MuJoCo's and DART's free joints agree.
#include <peers/peer.hpp>
#include <support/model_generators.hpp>

#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/urdf_import.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Geometry>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

using namespace liembs;
using namespace liembs::peers;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

const Eigen::Vector3d gravity(0.0, 0.0, -9.81);
constexpr double tolerance = 1e-9;  // relative
constexpr int states = 20;

double relative_difference(const MatrixXd& a, const MatrixXd& b) {
  const double scale = std::max({a.norm(), b.norm(), 1e-12});
  return (a - b).norm() / scale;
}

VectorXd random_vector(std::mt19937& engine, Eigen::Index n, double scale) {
  std::uniform_real_distribution<double> uniform(-scale, scale);
  VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = uniform(engine);
  return v;
}

std::vector<std::string> import_order(const std::string& urdf, bool floating_base) {
  std::vector<std::string> names;
  for (const auto& joint : import_urdf_string(urdf, "model.urdf", floating_base).joints)
    if (joint.dof() > 0) names.push_back(joint.name);
  return names;
}

// Fixed base: all peers get the same q, qd, qdd, tau.
void check_fixed_base_agreement(std::vector<std::unique_ptr<PeerModel>>& peers, const std::string& urdf,
                                unsigned seed) {
  const std::vector<std::string> order = import_order(urdf, false);
  const int n = static_cast<int>(order.size());
  for (const auto& peer : peers) {
    INFO(peer->name());
    CHECK(peer->joint_names() == order);
    CHECK(peer->dof() == n);
    CHECK(peer->position_size() == n);
    CHECK_FALSE(peer->floating_base());
  }
  std::mt19937 engine(seed);
  double worst_id = 0.0, worst_m = 0.0, worst_fd = 0.0;
  for (int s = 0; s < states; ++s) {
    const VectorXd q = random_vector(engine, n, 3.0);
    const VectorXd qd = random_vector(engine, n, 2.0);
    const VectorXd qdd = random_vector(engine, n, 5.0);
    const VectorXd tau = random_vector(engine, n, 20.0);
    std::vector<VectorXd> id(peers.size()), fd(peers.size());
    std::vector<MatrixXd> M(peers.size());
    for (std::size_t p = 0; p < peers.size(); ++p) {
      peers[p]->inverse_dynamics(q, qd, qdd, id[p]);
      peers[p]->mass_matrix(q, M[p]);
      peers[p]->forward_dynamics(q, qd, tau, fd[p]);
      // Round trip within the peer: ID(FD(tau)) = tau.
      VectorXd round_trip;
      peers[p]->inverse_dynamics(q, qd, fd[p], round_trip);
      INFO(peers[p]->name() << " state " << s);
      CHECK(relative_difference(round_trip, tau) < tolerance);
      CHECK(relative_difference(M[p], M[p].transpose()) < 1e-14);
    }
    for (std::size_t p = 1; p < peers.size(); ++p) {
      INFO(peers[0]->name() << " vs " << peers[p]->name() << ", state " << s);
      worst_id = std::max(worst_id, relative_difference(id[0], id[p]));
      worst_m = std::max(worst_m, relative_difference(M[0], M[p]));
      worst_fd = std::max(worst_fd, relative_difference(fd[0], fd[p]));
      CHECK(relative_difference(id[0], id[p]) < tolerance);
      CHECK(relative_difference(M[0], M[p]) < tolerance);
      CHECK(relative_difference(fd[0], fd[p]) < tolerance);
    }
  }
  std::string names;
  for (const auto& peer : peers) names += peer->name() + " ";
  // Measured: ~1e-15 for inverse dynamics and mass matrix, ~1e-14 for forward dynamics.
  INFO("largest relative differences (" << names << "): inverse dynamics " << worst_id << ", mass matrix " << worst_m
                                        << ", forward dynamics " << worst_fd);
  CHECK(std::max({worst_id, worst_m, worst_fd}) < tolerance);
}

}  // namespace

TEST_CASE("peers agree on the iiwa-like arm", "[peers]") {
  const std::string urdf = test_models::urdf_model("iiwa-like-arm.urdf");
  std::vector<std::unique_ptr<PeerModel>> peers;
  peers.push_back(make_kdl(urdf, gravity));
  peers.push_back(make_mujoco(urdf, gravity, false));
  peers.push_back(make_dart(urdf, gravity, false));
  CHECK(peers[0]->joint_names() == std::vector<std::string>{"a1", "a2", "a3", "a4", "a5", "a6", "a7"});
  check_fixed_base_agreement(peers, urdf, 11);
}

TEST_CASE("peers agree on a random 12-joint chain with principal-axis inertial frames", "[peers]") {
  const std::string urdf = test_models::random_chain_urdf(12, 7, true);
  std::vector<std::unique_ptr<PeerModel>> peers;
  peers.push_back(make_kdl(urdf, gravity));
  peers.push_back(make_mujoco(urdf, gravity, false));
  peers.push_back(make_dart(urdf, gravity, false));
  check_fixed_base_agreement(peers, urdf, 12);
}

TEST_CASE("peers agree on a random 12-joint chain with full inertia tensors", "[peers]") {
  const std::string urdf = test_models::random_chain_urdf(12, 8, false);
  std::vector<std::unique_ptr<PeerModel>> peers;
  peers.push_back(make_kdl(urdf, gravity));
  peers.push_back(make_dart(urdf, gravity, false));
  SECTION("KDL and DART") { check_fixed_base_agreement(peers, urdf, 13); }
  SECTION("with MuJoCo (tensors diagonalized by mjcf_from_urdf)") {
    peers.push_back(make_mujoco(urdf, gravity, false));
    check_fixed_base_agreement(peers, urdf, 14);
  }
}

TEST_CASE("MuJoCo's complete mj_forward and mj_inverse agree with the smooth-dynamics calls", "[peers]") {
  const std::string urdf = test_models::random_chain_urdf(6, 3, true);
  const auto mujoco = make_mujoco(urdf, gravity, false);
  const std::vector<std::string> pipelines = mujoco->pipelines();
  REQUIRE(pipelines.size() == 2);
  std::mt19937 engine(5);
  const VectorXd q = random_vector(engine, 6, 3.0), qd = random_vector(engine, 6, 2.0);
  const VectorXd tau = random_vector(engine, 6, 10.0);
  VectorXd qdd, qdd_forward, tau_inverse;
  mujoco->forward_dynamics(q, qd, tau, qdd);
  mujoco->run_pipeline(0, q, qd, tau, qdd_forward);
  CHECK(relative_difference(qdd, qdd_forward) < 1e-12);
  mujoco->run_pipeline(1, q, qd, qdd, tau_inverse);
  CHECK(relative_difference(tau, tau_inverse) < 1e-12);
  CHECK_THROWS(mujoco->run_pipeline(2, q, qd, tau, qdd));
}

TEST_CASE("KDL refuses a branching tree, peers refuse vectors of the wrong size", "[peers]") {
  CHECK_THROWS_AS(make_kdl(test_models::floating_torso_urdf(1), gravity), std::invalid_argument);
  const auto dart = make_dart(test_models::random_chain_urdf(3, 1, true), gravity, false);
  VectorXd tau;
  CHECK_THROWS_AS(dart->inverse_dynamics(VectorXd::Zero(2), VectorXd::Zero(3), VectorXd::Zero(3), tau),
                  std::invalid_argument);
}

TEST_CASE("floating base: MuJoCo and DART agree through the LieMBS conventions", "[peers]") {
  for (const bool diagonal : {true, false}) {
    const std::string urdf = test_models::floating_torso_urdf(21, diagonal);
    const auto mujoco = make_mujoco(urdf, gravity, true);
    const auto dart = make_dart(urdf, gravity, true);
    const std::vector<std::string> order = import_order(urdf, true);
    REQUIRE(order.size() == 24);
    CHECK(order.front() == "limb1_joint1");
    CHECK(order.back() == "limb4_joint6");
    CHECK(mujoco->joint_names() == order);
    CHECK(dart->joint_names() == order);
    CHECK(mujoco->base_coordinates() == BaseCoordinates::mujoco_free);
    CHECK(dart->base_coordinates() == BaseCoordinates::dart_free);
    CHECK(mujoco->dof() == 30);
    CHECK(dart->dof() == 30);
    CHECK(mujoco->position_size() == 31);
    CHECK(dart->position_size() == 30);

    std::mt19937 engine(diagonal ? 31 : 32);
    double worst = 0.0;
    for (int s = 0; s < states; ++s) {
      const Eigen::Matrix3d R = so3::exp(random_vector(engine, 3, 3.0).head<3>());
      const Eigen::Vector3d r = random_vector(engine, 3, 1.0).head<3>();
      const VectorXd joints = random_vector(engine, 24, 3.0);
      const VectorXd velocities = random_vector(engine, 30, 2.0);
      const VectorXd accelerations = random_vector(engine, 30, 5.0);
      const VectorXd forces = random_vector(engine, 30, 20.0);

      std::vector<VectorXd> id, fd;
      std::vector<MatrixXd> M;
      for (PeerModel* peer : {mujoco.get(), dart.get()}) {
        INFO(peer->name() << " state " << s);
        const VectorXd q = peer_positions(*peer, R, r, joints);
        // Conversions round trip.
        Eigen::Matrix3d R_back;
        Eigen::Vector3d r_back;
        VectorXd joints_back;
        split_peer_positions(*peer, q, R_back, r_back, joints_back);
        CHECK((R_back - R).norm() < 1e-14);
        CHECK((r_back - r).norm() == 0.0);
        CHECK(joints_back == joints);
        const VectorXd qd = peer_velocities(*peer, q, velocities);
        CHECK((liembs_velocities(*peer, q, qd) - velocities).norm() < 1e-14);
        const VectorXd qdd = peer_accelerations(*peer, q, velocities, accelerations);
        CHECK((liembs_accelerations(*peer, q, qd, qdd) - accelerations).norm() < 1e-13);
        CHECK((liembs_forces(*peer, q, peer_forces(*peer, q, forces)) - forces).norm() < 1e-13);

        VectorXd tau, acceleration;
        MatrixXd peer_M;
        peer->inverse_dynamics(q, qd, qdd, tau);
        id.push_back(liembs_forces(*peer, q, tau));
        peer->mass_matrix(q, peer_M);
        M.push_back(liembs_mass_matrix(*peer, q, peer_M));
        peer->forward_dynamics(q, qd, peer_forces(*peer, q, forces), acceleration);
        fd.push_back(liembs_accelerations(*peer, q, qd, acceleration));
      }
      INFO("state " << s);
      CHECK(relative_difference(id[0], id[1]) < tolerance);
      CHECK(relative_difference(M[0], M[1]) < tolerance);
      CHECK(relative_difference(fd[0], fd[1]) < tolerance);
      worst = std::max({worst, relative_difference(id[0], id[1]), relative_difference(M[0], M[1]),
                        relative_difference(fd[0], fd[1])});
      // In LieMBS coordinates the mass matrix maps accelerations to forces: M V' + bias = ID.
      VectorXd bias_mujoco = id[0] - M[0] * accelerations;
      CHECK(relative_difference(M[0] * fd[0] + bias_mujoco, forces) < tolerance);
    }
    // Measured: ~3e-15.
    INFO("floating torso (" << (diagonal ? "principal-axis" : "full") << " inertia): MuJoCo vs DART, largest "
                            << "relative difference " << worst);
    CHECK(worst < tolerance);
  }
}

TEST_CASE("floating base conventions: one free body obeys the body-frame Newton-Euler equations", "[peers]") {
  // Inverse dynamics of a single free body, in the LieMBS convention, is the applied body
  // wrench W = M V' - ad_V^T M V - W_gravity (M: spatial inertia about the link origin).
  const std::string urdf = R"(<robot name="body"><link name="body"><inertial>
      <origin xyz="0.05 -0.02 0.03" rpy="0.3 0.2 -0.4"/><mass value="2.5"/>
      <inertia ixx="0.04" ixy="0.002" ixz="-0.001" iyy="0.03" iyz="0.003" izz="0.02"/></inertial></link></robot>)";
  const RigidBody body = import_urdf_string(urdf, "body.urdf", true).bodies.at(0);
  const Mat6 M = body.spatial_inertia();
  std::mt19937 engine(41);
  for (const auto& peer : {make_mujoco(urdf, gravity, true), make_dart(urdf, gravity, true)}) {
    for (int s = 0; s < 5; ++s) {
      INFO(peer->name() << " state " << s);
      const Eigen::Matrix3d R = so3::exp(random_vector(engine, 3, 3.0).head<3>());
      const Eigen::Vector3d r = random_vector(engine, 3, 1.0).head<3>();
      const Vec6 V = random_vector(engine, 6, 2.0), V_dot = random_vector(engine, 6, 5.0);
      const Eigen::Vector3d weight = body.mass * R.transpose() * gravity;  // body frame, at the COM
      Vec6 gravity_wrench;
      gravity_wrench << body.center_of_mass.cross(weight), weight;
      const Vec6 expected = M * V_dot - se3::ad(V).transpose() * (M * V) - gravity_wrench;

      const VectorXd q = peer_positions(*peer, R, r, VectorXd(0));
      const VectorXd qd = peer_velocities(*peer, q, V);
      VectorXd tau, acceleration;
      peer->inverse_dynamics(q, qd, peer_accelerations(*peer, q, V, V_dot), tau);
      CHECK(relative_difference(liembs_forces(*peer, q, tau), expected) < tolerance);
      peer->forward_dynamics(q, qd, peer_forces(*peer, q, expected), acceleration);
      CHECK(relative_difference(liembs_accelerations(*peer, q, qd, acceleration), V_dot) < tolerance);
      MatrixXd peer_mass_matrix;
      peer->mass_matrix(q, peer_mass_matrix);
      CHECK(relative_difference(liembs_mass_matrix(*peer, q, peer_mass_matrix), M) < tolerance);
    }
  }
}

TEST_CASE("mjcf_from_urdf writes a free joint for a floating base", "[peers]") {
  const std::string urdf = test_models::floating_torso_urdf(2, true);
  CHECK_THAT(mjcf_from_urdf(urdf, gravity, true).model, Catch::Matchers::Contains("<freejoint name=\"torso_free\"/>"));
  CHECK_THAT(mjcf_from_urdf(urdf, gravity, false).model, !Catch::Matchers::Contains("freejoint"));
}
