#pragma once
// Random multibody models and states for the tree-dynamics tests: chains and branched
// trees, fixed or floating base, every joint type, bodies with random mass, offset centre
// of mass, rotated full inertia tensors and random reference poses. Everything is drawn
// from a seeded std::mt19937, so a seed names a model.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_state.hpp>
#include <liembs/model/model.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace liembs::testing {

// The joint types that move (all but fixed).
std::vector<JointType> moving_joint_types();
// All joint types, fixed included.
std::vector<JointType> all_joint_types();

struct RandomTreeOptions {
  std::size_t bodies = 4;      // number of bodies, the floating base included
  bool branched = false;       // false: a chain (body i's parent is body i - 1)
  bool floating_base = false;  // true: body 0 is no joint's child; else body 0 hangs on the world
  std::vector<JointType> joint_types = moving_joint_types();  // drawn uniformly per joint
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
};

// A model with options.bodies bodies and one joint per non-base body. Body i > 0 is
// attached to body i - 1 (chain) or to a random earlier body (branched; with a fixed
// base also the world). Joint screws are given in the world frame at q = 0 as in
// model.hpp: cylindrical = [revolute(e, y), prismatic(e)], universal = two orthogonal
// revolutes through a common point, spherical = revolutes about the world x, y, z axes
// through the centre, planar = [prismatic(u), prismatic(w), revolute(n = u x w)].
// No applied loads; initial positions and velocities are zero.
Model random_tree_model(unsigned seed, const RandomTreeOptions& options = {});

// A named set of options, for sweeps.
struct TreeVariant {
  std::string name;
  RandomTreeOptions options;
};

RandomTreeOptions tree_options(std::size_t bodies, bool branched, bool floating_base,
                               std::vector<JointType> joint_types = all_joint_types());

// The sweep the dynamics tests run: a fixed chain (5 bodies), a fixed branched tree (7), a
// floating chain (4) and a floating branched tree (7) drawing from every joint type, then
// a fixed and a floating chain of 3 bodies for each joint type alone.
std::vector<TreeVariant> tree_variants();

// A random state of the tree: base pose (uniform rotation, position in [-1, 1]^3) and
// body twist in [-1, 1]^6 if the base floats, q in [-pi, pi], q' in [-1, 1].
TreeState random_state(const KinematicTree& tree, unsigned seed);

// A vector of n entries uniform in [-scale, scale].
Eigen::VectorXd random_vector(Eigen::Index n, unsigned seed, double scale = 1.0);

// `model` with a random body-frame load on every body and, when world_frame, a world-frame one too.
Model with_loads(Model model, unsigned seed, bool world_frame = true);

}  // namespace liembs::testing
