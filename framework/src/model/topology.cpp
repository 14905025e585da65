#include <liembs/error.hpp>
#include <liembs/model/topology.hpp>
#include <liembs/util/nearest_name.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/depth_first_search.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace liembs {

namespace {

// Vertex 0 is the world, vertex i + 1 is body i; each joint is an edge from its parent to
// its child, with the joint index as edge index. A breadth-first search follows joints from
// parent to child and chooses the spanning tree: it is directed away from the roots, and a
// joint whose child was reached first through another joint closes a loop. A depth-first
// search of the spanning tree then gives the order (see topology.hpp).
using JointGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                         boost::property<boost::edge_index_t, std::size_t>>;
using Vertex = boost::graph_traits<JointGraph>::vertex_descriptor;
using Edge = boost::graph_traits<JointGraph>::edge_descriptor;

std::size_t vertex_of(std::size_t body) { return body == Joint::world ? 0 : body + 1; }

struct SpanningTreeRecorder : boost::default_bfs_visitor {
  std::vector<bool>* in_tree;  // per joint
  void tree_edge(Edge edge, const JointGraph& graph) const { (*in_tree)[boost::get(boost::edge_index, graph, edge)] = true; }
};

// Preorder of the spanning tree: joints in the order their children are discovered.
struct PreorderRecorder : boost::default_dfs_visitor {
  std::vector<std::size_t>* joints;
  std::vector<Vertex>* vertices;
  void tree_edge(Edge edge, const JointGraph& graph) const { joints->push_back(boost::get(boost::edge_index, graph, edge)); }
  void discover_vertex(Vertex vertex, const JointGraph&) const { vertices->push_back(vertex); }
};

std::string body_name(const Model& model, std::size_t body) {
  return body == Joint::world ? std::string("world") : model.bodies[body].name;
}

}  // namespace

Topology analyze_topology(const Model& model) {
  const std::size_t bodies = model.bodies.size();
  JointGraph graph(bodies + 1);
  Topology topology;
  std::vector<bool> is_child(bodies, false);
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    const Joint& joint = model.joints[j];
    if (joint.parent == joint.child)
      throw ModelError("joint '" + joint.name + "' connects body '" + body_name(model, joint.child) + "' to itself");
    boost::add_edge(vertex_of(joint.parent), vertex_of(joint.child), j, graph);
    is_child[joint.child] = true;
    if (joint.parent == Joint::world) topology.world_connected = true;
  }
  for (std::size_t b = 0; b < bodies; ++b)
    if (!is_child[b]) topology.free_bodies.push_back(b);

  // Breadth-first search from every root (the world first, then the free bodies) for the
  // spanning tree.
  std::vector<boost::default_color_type> colors(bodies + 1, boost::white_color);
  auto color_map = boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, graph));
  std::vector<bool> in_tree(model.joints.size(), false);
  SpanningTreeRecorder recorder;
  recorder.in_tree = &in_tree;
  std::vector<Vertex> roots;
  if (topology.world_connected) roots.push_back(0);
  for (const std::size_t b : topology.free_bodies) roots.push_back(vertex_of(b));
  for (const Vertex root : roots)
    if (colors[root] == boost::white_color) boost::breadth_first_visit(graph, root, boost::visitor(recorder).color_map(color_map));

  for (std::size_t b = 0; b < bodies; ++b)
    if (colors[vertex_of(b)] == boost::white_color)
      throw ModelError("body '" + model.bodies[b].name +
                       "' is disconnected: no chain of joints leads to it from the world or from a free body "
                       "(every body of a closed chain is some joint's child)");

  // Depth-first preorder of the spanning tree from the same roots, the children of a body in
  // the order of their joints in the model (edges added in joint order): the order of the
  // coordinates users see (docs/user-guide.md, "Joint order").
  JointGraph tree(bodies + 1);
  for (std::size_t j = 0; j < model.joints.size(); ++j)
    if (in_tree[j]) boost::add_edge(vertex_of(model.joints[j].parent), vertex_of(model.joints[j].child), j, tree);
  std::fill(colors.begin(), colors.end(), boost::white_color);
  std::vector<Vertex> order;
  PreorderRecorder preorder;
  preorder.joints = &topology.tree_joints;
  preorder.vertices = &order;
  for (const Vertex root : roots)
    if (colors[root] == boost::white_color) boost::depth_first_visit(tree, root, preorder, color_map);

  topology.parent_joint.assign(bodies, Topology::none);
  for (const std::size_t j : topology.tree_joints) topology.parent_joint[model.joints[j].child] = j;
  std::vector<bool> is_free(bodies, false);
  for (const std::size_t b : topology.free_bodies) is_free[b] = true;
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    if (in_tree[j]) continue;
    const Joint& joint = model.joints[j];
    // A free body whose joint leads into a body already reached from another root is most
    // likely a joint written the wrong way round, not a second root.
    if (topology.root_count() > 1 && joint.parent != Joint::world && is_free[joint.parent])
      throw ModelError("joint '" + joint.name + "' points towards its root: its parent '" +
                       body_name(model, joint.parent) + "' is not moved by any joint, while its child '" +
                       body_name(model, joint.child) + "' is already connected to the root; swap parent and child");
    // A cut joint has no coordinates of its own: its values follow from the tree's.
    for (const auto& [key, given] : {std::pair{"initial_position", joint.initial_position_given},
                                     std::pair{"initial_velocity", joint.initial_velocity_given}})
      if (given)
        throw ModelError("joint '" + joint.name + "' closes a kinematic loop (the spanning tree cuts it), so it has "
                         "no coordinates of its own and its " + std::string(key) +
                         " cannot be given; give the values of the other joints of the loop, or list this "
                         "joint earlier so that another one is cut");
    topology.cut_joints.push_back(j);
  }
  for (const Vertex v : order)
    if (v != 0) topology.ordered_bodies.push_back(v - 1);
  return topology;
}

void require_single_tree(const Model& model, const Topology& topology, bool allow_loops) {
  if (topology.root_count() > 1) {
    std::vector<std::string> names;
    for (const std::size_t b : topology.free_bodies) names.push_back("'" + model.bodies[b].name + "'");
    throw ModelError("the model has several roots (" + std::string(topology.world_connected ? "the world and " : "") +
                     "free bodies " + join_names(names) +
                     "); a tree has one root: the world or a single floating base");
  }
  if (!allow_loops && !topology.cut_joints.empty()) {
    std::vector<std::string> names;
    for (const std::size_t j : topology.cut_joints) names.push_back("'" + model.joints[j].name + "'");
    throw ModelError("the model has a closed kinematic loop; the joints " + join_names(names) +
                     " would be cut to open it (closed loops need loop-closure constraints: simulate with "
                     "algorithm 'aba' or 'crba-cholesky', or use absolute coordinates, 'newton-euler')");
  }
}

}  // namespace liembs
