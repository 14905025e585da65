#pragma once
// Topology of a model, computed with Boost.Graph: the roots (the world and the free
// bodies), a spanning tree in traversal order, and the joints that close loops. The spanning
// tree is the one a breadth-first search from the roots finds (which joints a loop cuts:
// docs/constrained-systems.md); its order is depth-first preorder, the children of a body in
// the order of their joints in the model (Pinocchio's convention). That order is the order
// of the tree's coordinates everywhere (compile_tree; docs/user-guide.md, "Joint order").
#include <liembs/model/model.hpp>

#include <cstddef>
#include <vector>

namespace liembs {

struct Topology {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  std::vector<std::size_t> free_bodies;       // bodies that are no joint's child (floating roots)
  bool world_connected = false;               // some joint has the world as parent
  std::vector<std::size_t> tree_joints;       // spanning-tree joints in depth-first preorder, siblings in model order
  std::vector<std::size_t> cut_joints;        // joints that close a kinematic loop
  std::vector<std::size_t> parent_joint;      // per body: its spanning-tree joint, or none (free body)
  std::vector<std::size_t> ordered_bodies;    // bodies in the same preorder (roots first)

  std::size_t root_count() const { return free_bodies.size() + (world_connected ? 1 : 0); }
};

// Builds the joint graph (vertex 0 = world, vertex i + 1 = body i, one edge per joint) and
// checks it: a joint connecting a body to itself, a joint pointing towards its root (the
// tree must be directed away from the root), and a body that no root reaches are
// ModelErrors naming the joint or body. Closed loops are not errors here: the joints that
// would be cut are listed in cut_joints (a cut joint given an initial_position or
// initial_velocity in the file is a ModelError: it has no coordinates of its own).
Topology analyze_topology(const Model& model);

// For the tree algorithms: one root (the world or a single floating body) and, unless
// `allow_loops` (loop closures become constraints), no loop; otherwise a ModelError that
// names the free bodies or the joints to cut.
void require_single_tree(const Model& model, const Topology& topology, bool allow_loops = false);

}  // namespace liembs
