// LieMBS's tree dynamics, in all four representations loaded through the plugin registry,
// against independent libraries (KDL, MuJoCo, DART; benchmarks/peers) on URDF models:
// inverse dynamics (RNEA), mass matrix (CRBA) and forward dynamics (ABA and CRBA +
// Cholesky), compared in the LieMBS coordinates (floating base: body twist, body wrench).
// Measured largest relative differences: 1e-15 (iiwa ID, M) to 2e-13 (24-joint chain);
// MuJoCo stores inertias in principal axes (mjcf_from_urdf diagonalizes full tensors), which
// stays within the same 1e-10 tolerance, so no looser bound is used for it. Forward dynamics
// may differ by a few eps cond(M) between two correct solvers, which the long chains exceed.
#include <peers/peer.hpp>
#include <support/model_generators.hpp>

#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/plugin/representation.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace liembs;
using namespace liembs::peers;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

const Eigen::Vector3d gravity(0.0, 0.0, -9.81);
constexpr double tolerance = 1e-10;  // relative
// Forward dynamics of ill-conditioned mass matrices (the 130-joint chain reaches cond(M) =
// 1.2e6): 5e-11 with GCC, 1.0e-10 with clang (different rounding of the same algorithms).
constexpr double solve_tolerance_per_condition = 10 * std::numeric_limits<double>::epsilon();
constexpr int states = 10;
const std::vector<std::string> representation_names{"body-fixed", "spatial", "hybrid", "mixed"};

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

// The representation plugins from the build tree; the registry outlives the components.
struct Representations {
  Registry registry;
  std::shared_ptr<ConfigDocument> options = ConfigDocument::from_string("", "options");
  std::vector<std::unique_ptr<Representation>> loaded;

  Representations() {
    registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
    registry.load();
    for (const auto& name : representation_names) loaded.push_back(registry.create<Representation>(name, options->root()));
  }
};

Representations& representations() {
  static Representations instance;
  return instance;
}

// LieMBS on one URDF model: the tree, its four bindings, and the map from the peers' joint
// order (import order) to the tree's node order.
struct LieMBSModel {
  std::shared_ptr<const KinematicTree> tree;
  std::vector<std::unique_ptr<TreeDynamics>> dynamics;
  std::vector<int> node_of_joint;  // peer joint k -> tree node
  int base = 0;                    // 6 with a floating base

  // Generalized vector in peer joint order <-> tree node order (base part unchanged).
  VectorXd to_tree(const VectorXd& v) const {
    VectorXd out(v.size());
    out.head(base) = v.head(base);
    for (std::size_t k = 0; k < node_of_joint.size(); ++k) out(base + node_of_joint[k]) = v(base + static_cast<int>(k));
    return out;
  }
  VectorXd from_tree(const VectorXd& v) const {
    VectorXd out(v.size());
    out.head(base) = v.head(base);
    for (std::size_t k = 0; k < node_of_joint.size(); ++k) out(base + static_cast<int>(k)) = v(base + node_of_joint[k]);
    return out;
  }
  MatrixXd from_tree(const MatrixXd& M) const {
    std::vector<int> index(static_cast<std::size_t>(M.rows()));
    for (int i = 0; i < base; ++i) index[static_cast<std::size_t>(i)] = i;
    for (std::size_t k = 0; k < node_of_joint.size(); ++k) index[static_cast<std::size_t>(base) + k] = base + node_of_joint[k];
    MatrixXd out(M.rows(), M.cols());
    for (Eigen::Index i = 0; i < M.rows(); ++i)
      for (Eigen::Index j = 0; j < M.cols(); ++j)
        out(i, j) = M(index[static_cast<std::size_t>(i)], index[static_cast<std::size_t>(j)]);
    return out;
  }
};

LieMBSModel bind_liembs(const std::string& urdf, bool floating_base, const std::vector<std::string>& joint_names) {
  Model model = import_urdf_string(urdf, "model.urdf", floating_base);
  model.gravity = gravity;
  LieMBSModel bound;
  bound.tree = std::make_shared<const KinematicTree>(compile_tree(model));
  bound.base = floating_base ? 6 : 0;
  REQUIRE(bound.tree->floating_base == floating_base);
  REQUIRE(bound.tree->dof() == static_cast<int>(joint_names.size()));
  for (const auto& name : joint_names) {
    const auto& dof_names = bound.tree->dof_names;
    const auto found = std::find(dof_names.begin(), dof_names.end(), name);
    REQUIRE(found != dof_names.end());
    bound.node_of_joint.push_back(static_cast<int>(found - dof_names.begin()));
  }
  for (std::size_t p = 0; p < representations().loaded.size(); ++p) {
    bound.dynamics.push_back(representations().loaded[p]->bind_tree(bound.tree));
    REQUIRE(bound.dynamics.back()->representation() == representation_names[p]);
  }
  return bound;
}

// Largest relative differences between LieMBS (any representation) and one peer.
// solve_excess: the largest forward-dynamics difference (ABA, CRBA + Cholesky) over its
// state's bound max(tolerance, solve_tolerance_per_condition cond(M)).
struct Worst {
  double inverse = 0, mass = 0, forward = 0, cholesky = 0, condition = 0, solve_excess = 0;
};

// Compares every representation with `peer` on random states; returns the largest
// differences. Floating base: random base pose, body twist, body acceleration and wrench.
Worst compare(const LieMBSModel& liembs_model, PeerModel& peer, unsigned seed, double peer_tolerance = tolerance) {
  const int nv = liembs_model.tree->velocity_dimension();
  const int joints = liembs_model.tree->dof();
  REQUIRE(peer.dof() == nv);
  std::mt19937 engine(seed);
  Worst worst;
  for (int s = 0; s < states; ++s) {
    const Eigen::Matrix3d R = so3::exp(random_vector(engine, 3, 3.0).head<3>());
    const Eigen::Vector3d r = random_vector(engine, 3, 1.0).head<3>();
    const VectorXd positions = random_vector(engine, joints, 3.0);
    const VectorXd velocities = random_vector(engine, nv, 2.0);
    const VectorXd accelerations = random_vector(engine, nv, 5.0);
    const VectorXd forces = random_vector(engine, nv, 20.0);

    // The peer, converted to LieMBS coordinates (peer joint order).
    const VectorXd q = peer_positions(peer, R, r, positions);
    const VectorXd qd = peer_velocities(peer, q, velocities);
    VectorXd peer_tau, peer_qdd;
    MatrixXd peer_M;
    peer.inverse_dynamics(q, qd, peer_accelerations(peer, q, velocities, accelerations), peer_tau);
    peer.mass_matrix(q, peer_M);
    peer.forward_dynamics(q, qd, peer_forces(peer, q, forces), peer_qdd);
    const VectorXd expected_force = liembs_forces(peer, q, peer_tau);
    const MatrixXd expected_mass = liembs_mass_matrix(peer, q, peer_M);
    const VectorXd expected_acceleration = liembs_accelerations(peer, q, qd, peer_qdd);
    // Two backward-stable solves of M a = f differ by up to a few eps cond(M) (relative).
    const Eigen::VectorXd eigenvalues = Eigen::SelfAdjointEigenSolver<MatrixXd>(expected_mass).eigenvalues();
    const double condition = eigenvalues.maxCoeff() / eigenvalues.minCoeff();
    const double solve_tolerance = std::max(peer_tolerance, solve_tolerance_per_condition * condition);
    worst.condition = std::max(worst.condition, condition);

    TreeState state;
    state.base = Pose{R, r};
    const VectorXd tree_velocities = liembs_model.to_tree(velocities);
    state.base_twist = tree_velocities.head<6>();  // ignored for a fixed base
    if (liembs_model.base == 0) state.base_twist.setZero();
    state.q = liembs_model.to_tree((VectorXd(nv) << VectorXd::Zero(liembs_model.base), positions).finished())
                  .tail(joints);
    state.qd = tree_velocities.tail(joints);
    const VectorXd tree_accelerations = liembs_model.to_tree(accelerations);
    const VectorXd tree_forces = liembs_model.to_tree(forces);

    for (std::size_t p = 0; p < liembs_model.dynamics.size(); ++p) {
      TreeDynamics& dynamics = *liembs_model.dynamics[p];
      INFO(dynamics.representation() << " vs " << peer.name() << ", state " << s);
      VectorXd force, acceleration, acceleration_cholesky;
      MatrixXd mass;
      dynamics.inverse_dynamics(state, tree_accelerations, force);
      dynamics.mass_matrix(state, mass);
      dynamics.forward_dynamics(state, tree_forces, acceleration);
      dynamics.forward_dynamics_cholesky(state, tree_forces, acceleration_cholesky);
      const double inverse = relative_difference(liembs_model.from_tree(force), expected_force);
      const double mass_difference = relative_difference(liembs_model.from_tree(mass), expected_mass);
      const double forward = relative_difference(liembs_model.from_tree(acceleration), expected_acceleration);
      const double cholesky = relative_difference(liembs_model.from_tree(acceleration_cholesky), expected_acceleration);
      worst.inverse = std::max(worst.inverse, inverse);
      worst.mass = std::max(worst.mass, mass_difference);
      worst.forward = std::max(worst.forward, forward);
      worst.cholesky = std::max(worst.cholesky, cholesky);
      worst.solve_excess = std::max({worst.solve_excess, forward / solve_tolerance, cholesky / solve_tolerance});
    }
  }
  return worst;
}

// Runs the comparison against every peer and checks the largest differences.
void check_against_peers(const std::string& label, const std::string& urdf, bool floating_base,
                         const std::vector<std::pair<std::unique_ptr<PeerModel>, double>>& peers, unsigned seed) {
  REQUIRE_FALSE(peers.empty());
  const LieMBSModel liembs_model = bind_liembs(urdf, floating_base, peers.front().first->joint_names());
  REQUIRE(liembs_model.dynamics.size() == representation_names.size());
  for (const auto& [peer, peer_tolerance] : peers) {
    CHECK(peer->joint_names() == peers.front().first->joint_names());
    CHECK(peer->floating_base() == floating_base);
    const Worst worst = compare(liembs_model, *peer, seed, peer_tolerance);
    std::ostringstream message;
    message << label << ": LieMBS (4 representations) vs " << peer->name() << ", largest relative difference: "
            << "inverse dynamics " << worst.inverse << ", mass matrix " << worst.mass << ", ABA " << worst.forward
            << ", CRBA + Cholesky " << worst.cholesky << " (tolerance " << peer_tolerance
            << "; forward dynamics max(tolerance, 10 eps cond(M)), largest cond(M) " << worst.condition << ")";
    INFO(message.str());
    CHECK(worst.inverse < peer_tolerance);
    CHECK(worst.mass < peer_tolerance);
    CHECK(worst.solve_excess < 1.0);
    // Also printed on success: the measured agreement is part of the test's report.
    if (worst.inverse < peer_tolerance && worst.mass < peer_tolerance && worst.solve_excess < 1.0) WARN(message.str());
  }
}

using Peers = std::vector<std::pair<std::unique_ptr<PeerModel>, double>>;

}  // namespace

TEST_CASE("LieMBS agrees with KDL, MuJoCo and DART on the iiwa-like arm", "[peers][liembs]") {
  const std::string urdf = test_models::urdf_model("iiwa-like-arm.urdf");
  Peers peers;
  peers.emplace_back(make_kdl(urdf, gravity), tolerance);
  peers.emplace_back(make_mujoco(urdf, gravity, false), tolerance);
  peers.emplace_back(make_dart(urdf, gravity, false), tolerance);
  check_against_peers("iiwa-like arm", urdf, false, peers, 101);
}

TEST_CASE("LieMBS agrees with KDL, MuJoCo and DART on random chains with full inertia tensors", "[peers][liembs]") {
  for (const int joints : {6, 24}) {
    const std::string urdf = test_models::random_chain_urdf(joints, 40 + static_cast<unsigned>(joints), false);
    Peers peers;
    peers.emplace_back(make_kdl(urdf, gravity), tolerance);
    peers.emplace_back(make_dart(urdf, gravity, false), tolerance);
    peers.emplace_back(make_mujoco(urdf, gravity, false), tolerance);
    check_against_peers("random chain of " + std::to_string(joints), urdf, false, peers, 200 + static_cast<unsigned>(joints));
  }
}

TEST_CASE("LieMBS agrees with MuJoCo and DART on a 130-joint chain (MJCF split into nested include files)",
          "[peers][liembs]") {
  // 130 nested bodies exceed tinyxml2's depth limit of 100 in one file: mjcf_from_urdf writes
  // 64 bodies per file, so MuJoCo reads two nested <include> files.
  const std::string urdf = test_models::random_chain_urdf(130, 61, false);
  REQUIRE(mjcf_from_urdf(urdf, gravity, false).includes.size() == 2);
  Peers peers;
  peers.emplace_back(make_dart(urdf, gravity, false), tolerance);
  peers.emplace_back(make_mujoco(urdf, gravity, false), tolerance);
  check_against_peers("random chain of 130", urdf, false, peers, 501);
}

TEST_CASE("LieMBS agrees with MuJoCo and DART on a branched tree", "[peers][liembs]") {
  // The torso with four limbs, welded to the world (KDL handles chains only).
  const std::string urdf = test_models::floating_torso_urdf(51, false);
  Peers peers;
  peers.emplace_back(make_dart(urdf, gravity, false), tolerance);
  peers.emplace_back(make_mujoco(urdf, gravity, false), tolerance);
  check_against_peers("branched tree (4 limbs x 6 joints)", urdf, false, peers, 301);
}

TEST_CASE("LieMBS agrees with MuJoCo and DART on floating bases", "[peers][liembs]") {
  SECTION("floating torso with four limbs") {
    const std::string urdf = test_models::floating_torso_urdf(52, false);
    Peers peers;
    peers.emplace_back(make_dart(urdf, gravity, true), tolerance);
    peers.emplace_back(make_mujoco(urdf, gravity, true), tolerance);
    check_against_peers("floating torso", urdf, true, peers, 401);
  }
  SECTION("floating chain (the base link floats)") {
    const std::string urdf = test_models::random_chain_urdf(8, 53, false);
    Peers peers;
    peers.emplace_back(make_dart(urdf, gravity, true), tolerance);
    peers.emplace_back(make_mujoco(urdf, gravity, true), tolerance);
    check_against_peers("floating chain of 8", urdf, true, peers, 402);
  }
}

TEST_CASE("the comparison detects a wrong model", "[peers][liembs]") {
  // Same chain, LieMBS with a heavier last link: every quantity must differ from DART's.
  const std::string urdf = test_models::random_chain_urdf(6, 46, false);
  auto dart = make_dart(urdf, gravity, false);
  std::string heavier = urdf;
  const auto last_mass = heavier.rfind("<mass value=\"");
  REQUIRE(last_mass != std::string::npos);
  heavier.insert(last_mass + std::string("<mass value=\"").size(), 1, '1');  // "1.5" -> "11.5" etc.
  const LieMBSModel wrong = bind_liembs(heavier, false, dart->joint_names());
  const Worst worst = compare(wrong, *dart, 7);
  CHECK(worst.inverse > 1e-3);
  CHECK(worst.mass > 1e-3);
  CHECK(worst.forward > 1e-3);
}
