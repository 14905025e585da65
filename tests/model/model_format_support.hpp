#pragma once
// Shared by the model-format tests (MJCF, SDF): a model's tree bound to a representation
// plugin of the build tree, random tree states, and relative differences.
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/plugin/representation.hpp>

#include "../test_support.hpp"

#include <liembs/host/run.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace liembs::test_formats {

inline std::filesystem::path models_dir() { return std::filesystem::path(LIEMBS_SOURCE_DIR) / "models"; }
inline std::filesystem::path data_dir() { return std::filesystem::path(LIEMBS_TEST_DATA_DIR); }

inline double relative_difference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = std::max({a.norm(), b.norm(), 1e-12});
  return (a - b).norm() / scale;
}

inline Eigen::VectorXd random_vector(std::mt19937& engine, Eigen::Index n, double scale) {
  std::uniform_real_distribution<double> uniform(-scale, scale);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = uniform(engine);
  return v;
}

// The body-fixed representation plugin of the build tree (the registry outlives it).
inline Representation& representation() {
  struct Loaded {
    Registry registry;
    std::shared_ptr<ConfigDocument> options = ConfigDocument::from_string("", "options");
    std::unique_ptr<Representation> representation;
    Loaded() {
      registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
      registry.load();
      representation = registry.create<Representation>("body-fixed", options->root());
    }
  };
  static Loaded loaded;
  return *loaded.representation;
}

struct BoundTree {
  std::shared_ptr<const KinematicTree> tree;
  std::unique_ptr<TreeDynamics> dynamics;
};

inline BoundTree bind(const Model& model) {
  BoundTree bound;
  bound.tree = std::make_shared<const KinematicTree>(compile_tree(model));
  bound.dynamics = representation().bind_tree(bound.tree);
  return bound;
}

// A random state of `tree` (base pose and twist if it floats).
inline TreeState random_state(const KinematicTree& tree, std::mt19937& engine) {
  TreeState state;
  state.base.R = so3::exp(random_vector(engine, 3, 3.0).head<3>());
  state.base.r = random_vector(engine, 3, 1.0).head<3>();
  if (tree.floating_base) state.base_twist = random_vector(engine, 6, 2.0);
  state.q = random_vector(engine, tree.dof(), 2.0);
  state.qd = random_vector(engine, tree.dof(), 2.0);
  return state;
}

// Largest relative differences of RNEA, CRBA and ABA between two trees of the same robot,
// matched by their degree-of-freedom names (the base first).
struct Agreement {
  double inverse = 0, mass = 0, forward = 0;
};

inline Agreement compare_trees(BoundTree& a, BoundTree& b, unsigned seed, int states = 8) {
  REQUIRE(a.tree->floating_base == b.tree->floating_base);
  REQUIRE(a.tree->dof() == b.tree->dof());
  const int base = a.tree->floating_base ? 6 : 0;
  const int nv = a.tree->velocity_dimension();
  // index[k]: b's generalized coordinate of a's coordinate k.
  std::vector<int> index(static_cast<std::size_t>(nv));
  for (int k = 0; k < base; ++k) index[static_cast<std::size_t>(k)] = k;
  for (int i = 0; i < a.tree->dof(); ++i) {
    const auto& names = b.tree->dof_names;
    const auto found = std::find(names.begin(), names.end(), a.tree->dof_names[static_cast<std::size_t>(i)]);
    REQUIRE(found != names.end());
    index[static_cast<std::size_t>(base + i)] = base + static_cast<int>(found - names.begin());
  }
  const auto to_b = [&](const Eigen::VectorXd& v) {
    Eigen::VectorXd out(v.size());
    for (int k = 0; k < nv; ++k) out(index[static_cast<std::size_t>(k)]) = v(k);
    return out;
  };
  const auto from_b = [&](const Eigen::MatrixXd& M) {
    Eigen::MatrixXd out(M.rows(), M.cols());
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) out(i, j) = M(index[static_cast<std::size_t>(i)], index[static_cast<std::size_t>(j)]);
    return out;
  };
  std::mt19937 engine(seed);
  Agreement worst;
  for (int s = 0; s < states; ++s) {
    const TreeState state_a = random_state(*a.tree, engine);
    TreeState state_b = state_a;
    state_b.q = to_b((Eigen::VectorXd(nv) << Eigen::VectorXd::Zero(base), state_a.q).finished()).tail(a.tree->dof());
    state_b.qd = to_b((Eigen::VectorXd(nv) << Eigen::VectorXd::Zero(base), state_a.qd).finished()).tail(a.tree->dof());
    const Eigen::VectorXd acceleration = random_vector(engine, nv, 5.0), force = random_vector(engine, nv, 20.0);
    Eigen::VectorXd tau_a, tau_b, qdd_a, qdd_b;
    Eigen::MatrixXd M_a, M_b;
    a.dynamics->inverse_dynamics(state_a, acceleration, tau_a);
    b.dynamics->inverse_dynamics(state_b, to_b(acceleration), tau_b);
    a.dynamics->mass_matrix(state_a, M_a);
    b.dynamics->mass_matrix(state_b, M_b);
    a.dynamics->forward_dynamics(state_a, force, qdd_a);
    b.dynamics->forward_dynamics(state_b, to_b(force), qdd_b);
    worst.inverse = std::max(worst.inverse, relative_difference(to_b(tau_a), tau_b));
    worst.mass = std::max(worst.mass, relative_difference(M_a, from_b(M_b)));
    worst.forward = std::max(worst.forward, relative_difference(to_b(qdd_a), qdd_b));
  }
  return worst;
}

// The robots written in every format (models/urdf, models/mjcf, models/sdf): an arm with
// hinge and slide joints and a floating humanoid-like tree.
struct TwinRobot {
  const char* name;
  bool floating_base;
};
inline const std::vector<TwinRobot>& twin_robots() {
  static const std::vector<TwinRobot> robots{{"slide-arm", false}, {"humanoid", true}};
  return robots;
}

// `other`, the robot read from another format, against its URDF twin, both under gravity
// (0, 0, -9.81): the same coordinate names in the same order (the joints' names, depth-first
// in file order), and the largest differences of RNEA, CRBA and ABA.
inline Agreement compare_with_urdf_twin(const TwinRobot& robot, Model other, unsigned seed) {
  Model urdf = import_urdf(models_dir() / "urdf" / (std::string(robot.name) + ".urdf"), robot.floating_base);
  urdf.gravity = other.gravity = Vec3(0.0, 0.0, -9.81);
  BoundTree from_urdf = bind(urdf), from_other = bind(other);
  CHECK(from_urdf.tree->dof_names == from_other.tree->dof_names);
  return compare_trees(from_urdf, from_other, seed);
}

// The run of `config` (a four-bar from another format) against configs/four-bar/planar.toml,
// 0.5 s with the fixed steps of generalized-alpha (IDA's adaptive steps would turn the
// models' 1e-16 differences into differences at its tolerance): the largest difference of
// the bodies' final poses and twists (/10: rad/s), and the largest motion of a body.
struct RunAgreement {
  double largest_difference = 0.0, largest_motion = 0.0;
};
inline RunAgreement compare_four_bar_runs(const std::string& config) {
  const std::vector<std::string> shorter{"simulation.end_time=0.5", "integrator.name=generalized-alpha"};
  auto other = liembs::testing::load_test_run(config, shorter);
  auto toml = liembs::testing::load_test_run("../../configs/four-bar/planar.toml", shorter);
  const RunSummary other_summary = execute_run(other.run, RunOutput{});
  const RunSummary toml_summary = execute_run(toml.run, RunOutput{});
  std::vector<Pose> other_poses, toml_poses;
  std::vector<Vec6> other_twists, toml_twists;
  other.run.dynamics->body_motion(other_summary.final_state, other_poses, other_twists);
  toml.run.dynamics->body_motion(toml_summary.final_state, toml_poses, toml_twists);
  REQUIRE(other_poses.size() == toml_poses.size());
  RunAgreement agreement;
  for (std::size_t b = 0; b < toml_poses.size(); ++b) {
    agreement.largest_difference = std::max({agreement.largest_difference,
                                             (other_poses[b].matrix() - toml_poses[b].matrix()).norm(),
                                             (other_twists[b] - toml_twists[b]).norm() / 10.0});
    agreement.largest_motion = std::max(
        agreement.largest_motion, (toml_poses[b].matrix() - toml.run.model->bodies[b].reference_pose.matrix()).norm());
  }
  return agreement;
}

}  // namespace liembs::test_formats
