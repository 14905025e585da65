// Topology of models (analyze_topology, require_single_tree) and their compilation into a
// kinematic tree (compile_tree): chains, branched trees, floating bases, the topology errors,
// fixed joints merging inertia, multi-DoF joints expanded to one node per DoF, and the
// compiled nodes reproducing the model's product of exponentials.
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/model/model.hpp>
#include <liembs/model/topology.hpp>
#include <liembs/loaders/urdf_import.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

Pose make_pose(const Vec3& rotation_vector, const Vec3& position) {
  Pose pose;
  pose.R = so3::exp(rotation_vector);
  pose.r = position;
  return pose;
}

// Builds models in code: bodies by name, joints between names ("world" for the world).
struct ModelBuilder {
  Model model;

  ModelBuilder& body(const std::string& name, const Pose& pose = Pose{}, double mass = 1.0,
                     const Vec3& com = Vec3(0.1, -0.05, 0.2), const Vec3& principal = Vec3(0.02, 0.03, 0.04),
                     const Vec3& principal_axes = Vec3(0.3, 0.2, -0.4)) {
    RigidBody b;
    b.name = name;
    b.mass = mass;
    b.center_of_mass = com;
    const Mat3 Q = so3::exp(principal_axes);
    b.inertia = Q * principal.asDiagonal() * Q.transpose();
    b.reference_pose = pose;
    model.bodies.push_back(b);
    return *this;
  }

  std::size_t index(const std::string& name) const {
    return name == "world" ? Joint::world : model.body_index(name);
  }

  ModelBuilder& joint(const std::string& name, const std::string& parent, const std::string& child,
                      JointType type = JointType::revolute, std::vector<Vec6> screws = {}) {
    Joint j;
    j.name = name;
    j.type = type;
    j.parent = index(parent);
    j.child = index(child);
    if (screws.empty() && type != JointType::fixed) {
      // A revolute joint about an axis through the child's origin.
      const Pose& A = model.bodies[j.child].reference_pose;
      screws = {revolute_screw(A.R * Vec3(0.0, 0.0, 1.0), A.r)};
    }
    j.screws = std::move(screws);
    j.initial_position = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(j.screws.size()));
    j.initial_velocity = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(j.screws.size()));
    model.joints.push_back(j);
    return *this;
  }
};

std::size_t position_in(const std::vector<std::size_t>& list, std::size_t value) {
  return static_cast<std::size_t>(std::find(list.begin(), list.end(), value) - list.begin());
}

// Checks the invariants of a topology of a single tree and of its compiled tree.
void check_tree_order(const Model& model, const Topology& topology) {
  CHECK(topology.cut_joints.empty());
  CHECK(topology.tree_joints.size() == model.joints.size());
  CHECK(topology.ordered_bodies.size() == model.bodies.size());
  for (std::size_t b = 0; b < model.bodies.size(); ++b) {
    CHECK(position_in(topology.ordered_bodies, b) < model.bodies.size());  // every body once
    const std::size_t j = topology.parent_joint[b];
    if (j == Topology::none) {
      CHECK(std::find(topology.free_bodies.begin(), topology.free_bodies.end(), b) != topology.free_bodies.end());
      continue;
    }
    CHECK(model.joints[j].child == b);
    const std::size_t parent = model.joints[j].parent;
    if (parent == Joint::world) continue;
    // Parents come before children, in the body order and in the joint order.
    CHECK(position_in(topology.ordered_bodies, parent) < position_in(topology.ordered_bodies, b));
    if (topology.parent_joint[parent] != Topology::none)
      CHECK(position_in(topology.tree_joints, topology.parent_joint[parent]) < position_in(topology.tree_joints, j));
  }
  const KinematicTree tree = compile_tree(model);
  CHECK(tree.dof() == static_cast<int>(model.joint_dof()));
  for (int i = 0; i < tree.dof(); ++i) {
    const auto node = static_cast<std::size_t>(i);
    CHECK(tree.parent[node] < i);
    for (const int child : tree.children[node]) CHECK(tree.parent[static_cast<std::size_t>(child)] == i);
  }
}

// Sum over bodies of the spatial inertia about the node origin, computed from masses, centres of
// mass and rotational inertias (no adjoint maps): [[I_o, m c~], [-m c~, m 1]].
Mat6 composite_inertia(const std::vector<std::pair<RigidBody, Pose>>& bodies_in_node) {
  double mass = 0.0;
  Vec3 first_moment = Vec3::Zero();
  Mat3 rotational = Mat3::Zero();
  for (const auto& [body, offset] : bodies_in_node) {
    const Vec3 x = offset.R * body.center_of_mass + offset.r;  // COM in the node frame
    mass += body.mass;
    first_moment += body.mass * x;
    rotational += offset.R * body.inertia * offset.R.transpose() +
                  body.mass * (x.squaredNorm() * Mat3::Identity() - x * x.transpose());
  }
  Mat6 M;
  M.topLeftCorner<3, 3>() = rotational;
  M.topRightCorner<3, 3>() = so3::hat(first_moment);
  M.bottomLeftCorner<3, 3>() = -so3::hat(first_moment);
  M.bottomRightCorner<3, 3>() = mass * Mat3::Identity();
  return M;
}

// Sum of Ad_{T^-1}^T M_b Ad_{T^-1} with T the body's pose in the node frame.
Mat6 transformed_inertia(const std::vector<std::pair<RigidBody, Pose>>& bodies_in_node) {
  Mat6 sum = Mat6::Zero();
  for (const auto& [body, offset] : bodies_in_node) {
    const Mat6 Ad = se3::Ad_inverse(offset);
    sum += Ad.transpose() * body.spatial_inertia() * Ad;
  }
  return sum;
}

}  // namespace

TEST_CASE("a chain listed in any order is ordered parents first", "[topology]") {
  ModelBuilder builder;
  builder.body("a", make_pose({0, 0, 0}, {0, 0, 1}))
      .body("b", make_pose({0.1, 0, 0}, {0.5, 0, 1}))
      .body("c", make_pose({0, 0.2, 0}, {1.0, 0, 1}))
      .joint("bc", "b", "c")
      .joint("wa", "world", "a")
      .joint("ab", "a", "b");
  const Model& model = builder.model;
  const Topology topology = analyze_topology(model);
  CHECK(topology.world_connected);
  CHECK(topology.free_bodies.empty());
  CHECK(topology.root_count() == 1);
  CHECK(topology.tree_joints == std::vector<std::size_t>{1, 2, 0});
  CHECK(topology.parent_joint == std::vector<std::size_t>{1, 2, 0});
  CHECK(topology.ordered_bodies == std::vector<std::size_t>{0, 1, 2});
  CHECK(topology.cut_joints.empty());
  CHECK_NOTHROW(require_single_tree(model, topology));
  check_tree_order(model, topology);

  const KinematicTree tree = compile_tree(model);
  CHECK_FALSE(tree.floating_base);
  CHECK(tree.parent == std::vector<int>{-1, 0, 1});
  CHECK(tree.dof_names == std::vector<std::string>{"wa", "ab", "bc"});
  CHECK(tree.dof_joint == std::vector<std::size_t>{1, 2, 0});
  CHECK(tree.body_node == std::vector<int>{0, 1, 2});
  CHECK(tree.velocity_dimension() == 3);
  // B_i = A_parent^-1 A_child, X_i = Ad_{A_child}^-1 Y_i.
  for (std::size_t i = 0; i < 3; ++i) {
    const Joint& joint = model.joints[tree.dof_joint[i]];
    const Pose parent = joint.parent == Joint::world ? Pose{} : model.bodies[joint.parent].reference_pose;
    const Pose expected = se3::compose(se3::inverse(parent), model.bodies[joint.child].reference_pose);
    CHECK((tree.reference[i].R - expected.R).norm() < 1e-14);
    CHECK((tree.reference[i].r - expected.r).norm() < 1e-14);
    CHECK((tree.screw[i] - se3::Ad_inverse(model.bodies[joint.child].reference_pose) * joint.screws[0]).norm() < 1e-14);
    CHECK((tree.inertia[i] - model.bodies[joint.child].spatial_inertia()).norm() < 1e-14);
  }
}

TEST_CASE("a branched tree", "[topology]") {
  ModelBuilder builder;
  builder.body("hand_l", make_pose({0, 0, 0}, {-0.6, 0, 1.0}))
      .body("torso", make_pose({0, 0, 0}, {0, 0, 1.0}))
      .body("arm_r", make_pose({0, 0.3, 0}, {0.3, 0, 1.2}))
      .body("arm_l", make_pose({0, -0.3, 0}, {-0.3, 0, 1.2}))
      .body("head", make_pose({0, 0, 0}, {0, 0, 1.5}))
      .body("hand_r", make_pose({0, 0, 0.2}, {0.6, 0, 1.0}))
      .joint("wrist_l", "arm_l", "hand_l")
      .joint("shoulder_r", "torso", "arm_r")
      .joint("neck", "torso", "head", JointType::spherical,
             {revolute_screw(Vec3::UnitX(), Vec3(0, 0, 1.5)), revolute_screw(Vec3::UnitY(), Vec3(0, 0, 1.5)),
              revolute_screw(Vec3::UnitZ(), Vec3(0, 0, 1.5))})
      .joint("waist", "world", "torso")
      .joint("wrist_r", "arm_r", "hand_r")
      .joint("shoulder_l", "torso", "arm_l");
  const Model& model = builder.model;
  const Topology topology = analyze_topology(model);
  CHECK(topology.root_count() == 1);
  CHECK(topology.tree_joints.front() == 3);  // the waist, from the world
  CHECK_NOTHROW(require_single_tree(model, topology));
  check_tree_order(model, topology);
  const KinematicTree tree = compile_tree(model);
  CHECK(tree.dof() == 8);
  const auto torso_node = tree.body_node[model.body_index("torso")];
  CHECK(torso_node == 0);
  CHECK(tree.children[0].size() == 3);  // shoulders and the first DoF of the neck
}

// docs/user-guide.md, "Joint order": depth-first from the root, the children of a body in the
// order of their joints in the file, for models written in code (the joints listed in no
// particular order), from URDF and from the aerial manipulator's run file.
TEST_CASE("the documented joint order: depth-first, children in the order the file lists them", "[topology]") {
  SECTION("a branched tree listed out of order") {
    ModelBuilder builder;
    builder.body("hand_l").body("torso").body("arm_r").body("arm_l").body("head").body("hand_r")
        .joint("wrist_l", "arm_l", "hand_l")
        .joint("shoulder_r", "torso", "arm_r")
        .joint("neck", "torso", "head", JointType::spherical,
               {revolute_screw(Vec3::UnitX(), Vec3::Zero()), revolute_screw(Vec3::UnitY(), Vec3::Zero()),
                revolute_screw(Vec3::UnitZ(), Vec3::Zero())})
        .joint("waist", "world", "torso")
        .joint("wrist_r", "arm_r", "hand_r")
        .joint("shoulder_l", "torso", "arm_l");
    const Topology topology = analyze_topology(builder.model);
    CHECK(topology.tree_joints == std::vector<std::size_t>{3, 1, 4, 2, 5, 0});
    const KinematicTree tree = compile_tree(builder.model);
    CHECK(tree.dof_names == std::vector<std::string>{"waist", "shoulder_r", "wrist_r", "neck[0]", "neck[1]", "neck[2]",
                                                     "shoulder_l", "wrist_l"});
    CHECK(tree.parent == std::vector<int>{-1, 0, 1, 0, 3, 4, 0, 6});
  }
  SECTION("URDF with branches: siblings in the order of their joints in the file") {
    const std::string link = R"(<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>)";
    std::string xml = R"(<robot name="branches"><link name="base">)" + link + "</link>";
    // The file lists both first joints before the second ones (breadth-first).
    for (const auto& [joint, parent, child] : {std::array<std::string, 3>{"b1", "base", "b"}, {"a1", "base", "a"},
                                               {"b2", "b", "b_tip"}, {"a2", "a", "a_tip"}})
      xml += "<link name=\"" + child + "\">" + link + "</link><joint name=\"" + joint + "\" type=\"revolute\"><parent link=\"" +
             parent + "\"/><child link=\"" + child + "\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
    xml += "</robot>";
    for (const bool floating : {false, true}) {
      const KinematicTree tree = compile_tree(import_urdf_string(xml, "branches.urdf", floating));
      CHECK(tree.dof_names == std::vector<std::string>{"b1", "b2", "a1", "a2"});
    }
  }
  SECTION("paper 003's aerial manipulator: q2 q3 q4 q5 q6 q7") {
    const auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-003/aerial-manipulator.toml");
    const KinematicTree tree = compile_tree(load_model(document->root().table("model")));
    CHECK(tree.floating_base);
    CHECK(tree.dof_names == std::vector<std::string>{"q2", "q3", "q4", "q5", "q6", "q7"});
    CHECK(tree.parent == std::vector<int>{-1, 0, 1, -1, 3, 4});
  }
}

TEST_CASE("a floating base is the single root", "[topology]") {
  ModelBuilder builder;
  builder.body("arm1", make_pose({0, 0, 0}, {0, 0, 0.5}))
      .body("arm2", make_pose({0.2, 0, 0}, {0, 0, 1.0}))
      .body("leg", make_pose({0, 0, 0}, {0, 0, -0.5}))
      .body("base", make_pose({0.1, 0.2, 0.3}, {0, 0, 0}), 10.0)
      .joint("elbow", "arm1", "arm2")
      .joint("hip", "base", "leg", JointType::prismatic, {prismatic_screw(Vec3(0, 0, -1))})
      .joint("shoulder", "base", "arm1");
  const Model& model = builder.model;
  const Topology topology = analyze_topology(model);
  CHECK_FALSE(topology.world_connected);
  CHECK(topology.free_bodies == std::vector<std::size_t>{3});
  CHECK(topology.root_count() == 1);
  CHECK(topology.ordered_bodies.front() == 3);
  CHECK(topology.parent_joint[3] == Topology::none);
  CHECK_NOTHROW(require_single_tree(model, topology));
  check_tree_order(model, topology);
  const KinematicTree tree = compile_tree(model);
  CHECK(tree.floating_base);
  CHECK(tree.base_body == 3);
  CHECK(tree.dof() == 3);
  CHECK(tree.velocity_dimension() == 9);
  CHECK(tree.body_node[3] == -1);
  CHECK((tree.base_inertia - model.bodies[3].spatial_inertia()).norm() < 1e-14);
  // The nodes on the base have B = A_base^-1 A_child.
  const std::size_t leg_node = static_cast<std::size_t>(tree.body_node[model.body_index("leg")]);
  CHECK(tree.parent[leg_node] == -1);
  const Pose expected = se3::compose(se3::inverse(model.bodies[3].reference_pose), model.bodies[2].reference_pose);
  CHECK((tree.reference[leg_node].R - expected.R).norm() < 1e-14);
  CHECK((tree.reference[leg_node].r - expected.r).norm() < 1e-14);
}

TEST_CASE("topology errors", "[topology][errors]") {
  SECTION("a body no root reaches: a cycle of joints with no root") {
    ModelBuilder builder;
    builder.body("a").body("b").body("c").joint("wa", "world", "a").joint("bc", "b", "c").joint("cb", "c", "b");
    CHECK_THROWS_AS(analyze_topology(builder.model), ModelError);
    CHECK_THROWS_WITH(analyze_topology(builder.model), Contains("body 'b' is disconnected"));
    CHECK_THROWS_WITH(compile_tree(builder.model), Contains("is disconnected"));
  }
  SECTION("several roots: two free bodies") {
    ModelBuilder builder;
    builder.body("p").body("q").body("x").joint("px", "p", "x");
    const Topology topology = analyze_topology(builder.model);
    CHECK(topology.root_count() == 2);
    CHECK(topology.free_bodies == std::vector<std::size_t>{0, 1});
    CHECK_THROWS_WITH(require_single_tree(builder.model, topology),
                      Contains("several roots") && Contains("'p'") && Contains("'q'") && !Contains("the world and"));
    CHECK_THROWS_AS(compile_tree(builder.model), ModelError);
  }
  SECTION("several roots: the world and a free body") {
    ModelBuilder builder;
    builder.body("a").body("loose").joint("wa", "world", "a");
    const Topology topology = analyze_topology(builder.model);
    CHECK(topology.root_count() == 2);
    CHECK_THROWS_WITH(require_single_tree(builder.model, topology),
                      Contains("several roots") && Contains("the world and free bodies 'loose'"));
    CHECK_THROWS_WITH(compile_tree(builder.model), Contains("several roots"));
  }
  SECTION("a closed loop (four-bar) names the joint to cut") {
    ModelBuilder builder;
    builder.body("crank", make_pose({0, 0, 0}, {0, 0, 0}))
        .body("coupler", make_pose({0, 0, 0}, {0, 0, 0.3}))
        .body("rocker", make_pose({0, 0, 0}, {1, 0, 0}))
        .joint("ground_crank", "world", "crank")
        .joint("crank_coupler", "crank", "coupler")
        .joint("ground_rocker", "world", "rocker")
        .joint("closing", "coupler", "rocker");
    const Topology topology = analyze_topology(builder.model);
    CHECK(topology.cut_joints == std::vector<std::size_t>{3});
    CHECK(topology.tree_joints.size() == 3);
    CHECK_THROWS_WITH(require_single_tree(builder.model, topology),
                      Contains("closed kinematic loop") && Contains("'closing'") && Contains("cut"));
    CHECK_THROWS_WITH(compile_tree(builder.model), Contains("closed kinematic loop"));
  }
  SECTION("a joint pointing towards its root") {
    ModelBuilder builder;
    builder.body("upper").body("lower").joint("shoulder", "world", "upper").joint("elbow", "lower", "upper");
    CHECK_THROWS_WITH(analyze_topology(builder.model),
                      Contains("joint 'elbow' points towards its root") && Contains("'upper'") &&
                          Contains("'lower'") && Contains("swap parent and child"));
    CHECK_THROWS_WITH(compile_tree(builder.model), Contains("joint 'elbow' points towards its root"));
  }
  SECTION("a joint connecting a body to itself") {
    ModelBuilder builder;
    builder.body("a").joint("wa", "world", "a").joint("self", "a", "a");
    CHECK_THROWS_WITH(analyze_topology(builder.model), Contains("joint 'self' connects body 'a' to itself"));
  }
  SECTION("a degree of freedom that moves no mass") {
    ModelBuilder builder;
    builder.body("a").body("ghost", Pose{}, 0.0, Vec3::Zero(), Vec3::Zero()).joint("wa", "world", "a").joint("spin", "a", "ghost");
    const Topology topology = analyze_topology(builder.model);
    CHECK_NOTHROW(require_single_tree(builder.model, topology));
    CHECK_THROWS_AS(compile_tree(builder.model), ModelError);
    CHECK_THROWS_WITH(compile_tree(builder.model), Contains("joint 'spin' moves no mass"));
    // The last DoF of a multi-DoF joint is the one named.
    ModelBuilder ball;
    ball.body("a").body("ghost", Pose{}, 0.0, Vec3::Zero(), Vec3::Zero()).joint("wa", "world", "a");
    ball.joint("ball", "a", "ghost", JointType::spherical,
               {revolute_screw(Vec3::UnitX(), Vec3::Zero()), revolute_screw(Vec3::UnitY(), Vec3::Zero()),
                revolute_screw(Vec3::UnitZ(), Vec3::Zero())});
    CHECK_THROWS_WITH(compile_tree(ball.model), Contains("joint 'ball' moves no mass") && Contains("ball[2]"));
    // A massless body is fine when it carries mass further down the tree.
    ModelBuilder carrier;
    carrier.body("ghost", Pose{}, 0.0, Vec3::Zero(), Vec3::Zero())
        .body("a")
        .joint("spin", "world", "ghost")
        .joint("wa", "ghost", "a");
    CHECK_NOTHROW(compile_tree(carrier.model));
  }
}

// A five-bar linkage (four moving links, world -> a -> b -> c, world -> d, closing joint
// c -> d) is a valid single loop: analyze_topology documents that closed loops are not errors
// and lists the joint to cut. The breadth-first search reaches c from d through the closing
// joint before it reaches it from b, takes the closing joint as a tree edge in the wrong
// direction and reports "points towards its root" instead.
TEST_CASE("a longer closed loop is reported with the joint to cut", "[topology][errors]") {
  ModelBuilder builder;
  builder.body("a").body("b").body("c").body("d")
      .joint("wa", "world", "a")
      .joint("ab", "a", "b")
      .joint("bc", "b", "c")
      .joint("wd", "world", "d")
      .joint("closing", "c", "d");
  Topology topology;
  REQUIRE_NOTHROW(topology = analyze_topology(builder.model));
  CHECK(topology.cut_joints.size() == 1);
  CHECK_THROWS_WITH(require_single_tree(builder.model, topology), Contains("closed kinematic loop"));
}

TEST_CASE("fixed joints merge the welded bodies' inertia into the parent node", "[topology][fixed]") {
  const Pose A_a = make_pose({0.2, -0.1, 0.3}, {0.0, 0.1, 1.0});
  const Pose A_b = make_pose({-0.4, 0.5, 0.1}, {0.3, 0.2, 1.1});
  const Pose A_c = make_pose({0.7, 0.0, -0.2}, {0.5, -0.3, 0.8});
  const Pose A_e = make_pose({0.0, 0.3, 0.0}, {0.6, 0.1, 1.4});
  ModelBuilder builder;
  builder.body("a", A_a, 2.0, Vec3(0.1, 0.0, 0.0))
      .body("b", A_b, 0.7, Vec3(0.0, 0.2, -0.1), Vec3(0.01, 0.015, 0.02), Vec3(0.5, 0.1, 0.0))
      .body("c", A_c, 1.3, Vec3(-0.05, 0.1, 0.3), Vec3(0.03, 0.02, 0.045), Vec3(0.0, -0.6, 0.2))
      .body("e", A_e, 0.4)
      .joint("hinge", "world", "a")
      .joint("weld_ab", "a", "b", JointType::fixed)
      .joint("weld_bc", "b", "c", JointType::fixed)
      .joint("on_welded", "b", "e");
  const Model& model = builder.model;
  const KinematicTree tree = compile_tree(model);
  REQUIRE(tree.dof() == 2);
  CHECK(tree.dof_names == std::vector<std::string>{"hinge", "on_welded"});
  CHECK(tree.body_node == std::vector<int>{0, 0, 0, 1});

  // Offsets of the welded bodies in the node (body a) frame.
  const Pose T_b = se3::compose(se3::inverse(A_a), A_b), T_c = se3::compose(se3::inverse(A_a), A_c);
  CHECK((tree.body_offset[1].R - T_b.R).norm() < 1e-14);
  CHECK((tree.body_offset[1].r - T_b.r).norm() < 1e-14);
  CHECK((tree.body_offset[2].R - T_c.R).norm() < 1e-14);
  CHECK((tree.body_offset[2].r - T_c.r).norm() < 1e-14);

  const std::vector<std::pair<RigidBody, Pose>> merged{
      {model.bodies[0], Pose{}}, {model.bodies[1], T_b}, {model.bodies[2], T_c}};
  const Mat6 expected = composite_inertia(merged);
  INFO("node inertia\n" << tree.inertia[0] << "\nexpected\n" << expected);
  CHECK((tree.inertia[0] - expected).norm() < 1e-13);
  CHECK((tree.inertia[0] - transformed_inertia(merged)).norm() < 1e-13);
  CHECK(std::abs(tree.inertia[0](5, 5) - (2.0 + 0.7 + 1.3)) < 1e-14);  // total mass preserved
  CHECK((tree.inertia[0] - tree.inertia[0].transpose()).norm() < 1e-14);

  // The joint on the welded body hangs from the merged node, with B = A_a^-1 A_e.
  CHECK(tree.parent[1] == 0);
  const Pose B = se3::compose(se3::inverse(A_a), A_e);
  CHECK((tree.reference[1].R - B.R).norm() < 1e-14);
  CHECK((tree.reference[1].r - B.r).norm() < 1e-14);
  CHECK((tree.screw[1] - se3::Ad_inverse(A_e) * model.joints[3].screws[0]).norm() < 1e-14);
  CHECK((tree.inertia[1] - model.bodies[3].spatial_inertia()).norm() < 1e-14);
}

TEST_CASE("fixed joints on a floating base and on the world", "[topology][fixed]") {
  const Pose A_base = make_pose({0.3, 0.2, -0.1}, {1.0, 2.0, 3.0});
  const Pose A_tank = make_pose({0.0, 0.0, 0.9}, {1.2, 2.1, 2.5});
  const Pose A_arm = make_pose({0.1, 0.0, 0.0}, {1.0, 2.0, 3.5});
  ModelBuilder floating;
  floating.body("tank", A_tank, 3.0, Vec3(0.0, 0.1, 0.0))
      .body("base", A_base, 10.0)
      .body("arm", A_arm)
      .joint("mount", "base", "tank", JointType::fixed)
      .joint("shoulder", "base", "arm");
  const KinematicTree tree = compile_tree(floating.model);
  CHECK(tree.floating_base);
  CHECK(tree.base_body == 1);
  CHECK(tree.dof() == 1);
  CHECK(tree.body_node == std::vector<int>{-1, -1, 0});
  const Pose T_tank = se3::compose(se3::inverse(A_base), A_tank);
  const std::vector<std::pair<RigidBody, Pose>> merged{{floating.model.bodies[1], Pose{}}, {floating.model.bodies[0], T_tank}};
  CHECK((tree.base_inertia - composite_inertia(merged)).norm() < 1e-12);
  CHECK(std::abs(tree.base_inertia(5, 5) - 13.0) < 1e-14);

  // Bodies welded to the world do not move; a joint on one starts at the world.
  const Pose A_post = make_pose({0.0, 0.0, 0.4}, {0.0, 0.0, 1.0});
  const Pose A_link = make_pose({0.2, 0.0, 0.0}, {0.5, 0.0, 1.0});
  ModelBuilder welded;
  welded.body("post", A_post).body("link", A_link).joint("anchor", "world", "post", JointType::fixed).joint("hinge", "post", "link");
  const KinematicTree fixed_tree = compile_tree(welded.model);
  CHECK_FALSE(fixed_tree.floating_base);
  CHECK(fixed_tree.dof() == 1);
  CHECK(fixed_tree.body_node == std::vector<int>{-1, 0});
  CHECK((fixed_tree.body_offset[0].r - A_post.r).norm() < 1e-14);
  CHECK(fixed_tree.parent[0] == -1);
  CHECK((fixed_tree.reference[0].R - A_link.R).norm() < 1e-14);
  CHECK((fixed_tree.reference[0].r - A_link.r).norm() < 1e-14);
}

TEST_CASE("multi-DoF joints expand to one node per DoF named joint[k]", "[topology][multi-dof]") {
  auto document = ConfigDocument::from_string(R"(
[model]
[[model.bodies]]
name = "a"
mass = 1.0
inertia_diagonal = [0.1, 0.2, 0.25]
position = [0.0, 0.0, 1.0]
rotation_vector = [0.2, 0.0, 0.1]
[[model.bodies]]
name = "b"
mass = 2.0
center_of_mass = [0.0, 0.1, 0.0]
inertia_diagonal = [0.2, 0.2, 0.3]
position = [0.0, 0.5, 1.0]
[[model.bodies]]
name = "c"
mass = 0.5
inertia_diagonal = [0.01, 0.02, 0.025]
position = [0.3, 0.5, 1.0]
[[model.joints]]
name = "wrist"
type = "universal"
parent = "world"
child = "a"
axes = [[1, 0, 0], [0, 1, 0]]
point = [0.0, 0.0, 1.0]
initial_position = [0.1, 0.2]
initial_velocity = [-1.0, -2.0]
[[model.joints]]
name = "ball"
type = "spherical"
parent = "a"
child = "b"
point = [0.0, 0.5, 1.0]
initial_position = [0.3, 0.4, 0.5]
[[model.joints]]
name = "slide"
type = "planar"
parent = "b"
child = "c"
normal = [0, 0, 1]
initial_velocity = [0.7, 0.8, 0.9]
)",
                                               "multi.toml");
  const Model model = load_model(document->root().table("model"));
  const KinematicTree tree = compile_tree(model);
  REQUIRE(tree.dof() == 8);
  CHECK(tree.dof_names == std::vector<std::string>{"wrist[0]", "wrist[1]", "ball[0]", "ball[1]", "ball[2]",
                                                   "slide[0]", "slide[1]", "slide[2]"});
  CHECK(tree.dof_joint == std::vector<std::size_t>{0, 0, 1, 1, 1, 2, 2, 2});
  CHECK(tree.parent == std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6});
  CHECK(tree.body_node == std::vector<int>{1, 4, 7});
  Eigen::VectorXd q(8), qd(8);
  q << 0.1, 0.2, 0.3, 0.4, 0.5, 0.0, 0.0, 0.0;
  qd << -1.0, -2.0, 0.0, 0.0, 0.0, 0.7, 0.8, 0.9;
  CHECK(tree.initial_position == q);
  CHECK(tree.initial_velocity == qd);
  for (const std::size_t inner : {0u, 2u, 3u, 5u, 6u}) {  // not the last DoF of a joint: no inertia
    INFO("inner node " << inner);
    CHECK(tree.inertia[inner].norm() == 0.0);
  }
  for (const std::size_t later : {1u, 3u, 4u, 6u, 7u}) {  // not the first DoF of a joint: B = identity
    INFO("later node " << later);
    CHECK((tree.reference[later].R - Mat3::Identity()).norm() == 0.0);
    CHECK(tree.reference[later].r.norm() == 0.0);
  }
  // The first DoF carries B = A_parent^-1 A_child.
  const Pose B_ball = se3::compose(se3::inverse(model.bodies[0].reference_pose), model.bodies[1].reference_pose);
  CHECK((tree.reference[2].R - B_ball.R).norm() < 1e-15);
  CHECK((tree.reference[2].r - B_ball.r).norm() < 1e-15);
  CHECK((tree.inertia[1] - model.bodies[0].spatial_inertia()).norm() < 1e-15);
  CHECK((tree.inertia[4] - model.bodies[1].spatial_inertia()).norm() < 1e-15);
  CHECK((tree.inertia[7] - model.bodies[2].spatial_inertia()).norm() < 1e-15);
  for (int i = 0; i < 8; ++i) {
    const auto node = static_cast<std::size_t>(i);
    const Joint& joint = model.joints[tree.dof_joint[node]];
    const std::string& name = tree.dof_names[node];  // "joint[k]"
    REQUIRE(name.back() == ']');
    const auto k = static_cast<std::size_t>(name[name.size() - 2] - '0');
    CHECK((tree.screw[node] - se3::Ad_inverse(model.bodies[joint.child].reference_pose) * joint.screws[k]).norm() < 1e-14);
  }
}

TEST_CASE("the compiled nodes, and their frames aligned to the joint screws, reproduce the product of exponentials of the world screws", "[topology]") {
  // C_body(q) = exp(Y_1 q_1) ... exp(Y_n q_n) A_body over the joints from the root to the body,
  // against the tree's B_i exp(X_i q_i) composed along the parents, times the body offset.
  auto document = ConfigDocument::from_string(R"(
[model]
[[model.bodies]]
name = "base"
mass = 5.0
inertia_diagonal = [0.5, 0.6, 0.7]
position = [0.1, 0.2, 0.3]
rotation_vector = [0.1, 0.2, 0.3]
[[model.bodies]]
name = "arm"
mass = 1.0
inertia_diagonal = [0.1, 0.2, 0.25]
[[model.bodies]]
name = "tool"
mass = 0.3
inertia_diagonal = [0.01, 0.01, 0.015]
position = [0.4, 0.0, 1.5]
rotation_vector = [0.0, 0.5, 0.0]
[[model.bodies]]
name = "sensor"
mass = 0.1
center_of_mass = [0.0, 0.02, 0.0]
inertia_diagonal = [0.001, 0.001, 0.001]
position = [0.45, 0.0, 1.6]
[[model.bodies]]
name = "finger"
mass = 0.05
inertia_diagonal = [0.001, 0.001, 0.0015]
[[model.bodies]]
name = "leg"
mass = 2.0
inertia_diagonal = [0.1, 0.1, 0.05]
position = [0.1, 0.2, -0.5]
[[model.joints]]
name = "shoulder"
type = "universal"
frame = "body"
parent = "base"
child = "arm"
child_position = [0.0, 0.0, 0.6]
child_rotation_vector = [0.3, 0.0, 0.0]
axes = [[1, 0, 0], [0, 1, 0]]
[[model.joints]]
name = "screw"
type = "helical"
parent = "arm"
child = "tool"
axis = [0.0, 0.3, 1.0]
point = [0.4, 0.0, 1.5]
pitch = 0.02
[[model.joints]]
name = "mount"
type = "fixed"
parent = "tool"
child = "sensor"
[[model.joints]]
name = "grip"
type = "cylindrical"
frame = "body"
parent = "sensor"
child = "finger"
child_position = [0.0, 0.1, 0.0]
axis = [0, 1, 0]
point = [0.0, 0.0, 0.05]
[[model.joints]]
name = "hip"
type = "spherical"
parent = "base"
child = "leg"
point = [0.1, 0.2, -0.1]
)",
                                               "poe.toml");
  const Model model = load_model(document->root().table("model"));
  const Topology topology = analyze_topology(model);
  check_tree_order(model, topology);
  const KinematicTree tree = compile_tree(model);
  REQUIRE(tree.floating_base);
  REQUIRE(tree.base_body == 0);
  REQUIRE(tree.dof() == 2 + 1 + 2 + 3);

  std::mt19937 random(7);
  std::uniform_real_distribution<double> angle(-2.0, 2.0);
  for (int trial = 0; trial < 5; ++trial) {
    Eigen::VectorXd q(tree.dof());
    for (int i = 0; i < q.size(); ++i) q(i) = angle(random);
    const Pose base = make_pose({angle(random), angle(random), angle(random)}, {angle(random), angle(random), angle(random)});
    // Tree forward kinematics, in the model's node frames and in the frames aligned to the
    // joint screws that the recursive kernels use (whose screws must be axial).
    const auto forward_kinematics = [&](const KinematicTree& nodes) {
      std::vector<Pose> poses(static_cast<std::size_t>(nodes.dof()));
      for (int i = 0; i < nodes.dof(); ++i) {
        const auto node = static_cast<std::size_t>(i);
        const Pose parent = nodes.parent[node] < 0 ? base : poses[static_cast<std::size_t>(nodes.parent[node])];
        poses[node] = se3::compose(se3::compose(parent, nodes.reference[node]), se3::exp(Vec6(nodes.screw[node] * q(i))));
      }
      return poses;
    };
    const std::vector<Pose> node_pose = forward_kinematics(tree);
    const AlignedTree aligned = align_node_frames(tree);
    const std::vector<Pose> aligned_pose = forward_kinematics(aligned.tree);
    for (int i = 0; i < tree.dof(); ++i) {
      const Vec6& X = aligned.tree.screw[static_cast<std::size_t>(i)];
      CHECK(std::abs(X(0)) + std::abs(X(1)) + std::abs(X(3)) + std::abs(X(4)) == 0.0);
      CHECK(std::abs(X(2)) + std::abs(X(5)) > 0.0);
    }
    // Joint coordinates of each model joint, from the node order.
    std::vector<Eigen::VectorXd> joint_q(model.joints.size());
    for (int i = 0; i < tree.dof(); ++i) {
      auto& values = joint_q[tree.dof_joint[static_cast<std::size_t>(i)]];
      values.conservativeResize(values.size() + 1);
      values(values.size() - 1) = q(i);
    }
    for (std::size_t b = 0; b < model.bodies.size(); ++b) {
      const int node = tree.body_node[b];
      const Pose from_tree = se3::compose(node < 0 ? base : node_pose[static_cast<std::size_t>(node)], tree.body_offset[b]);
      const Pose from_aligned =
          se3::compose(node < 0 ? base : aligned_pose[static_cast<std::size_t>(node)], aligned.tree.body_offset[b]);
      CHECK((from_aligned.R - from_tree.R).norm() < 1e-13);
      CHECK((from_aligned.r - from_tree.r).norm() < 1e-13);
      // Model product of exponentials, relative to the base's displacement D = C_base A_base^-1.
      Pose product;
      for (std::size_t body = b; topology.parent_joint[body] != Topology::none;) {
        const Joint& joint = model.joints[topology.parent_joint[body]];
        Pose motion;
        for (std::size_t k = 0; k < joint.dof(); ++k)
          motion = se3::compose(motion, se3::exp(Vec6(joint.screws[k] * joint_q[topology.parent_joint[body]](static_cast<Eigen::Index>(k)))));
        product = se3::compose(motion, product);
        body = joint.parent;
      }
      const Pose displacement = se3::compose(base, se3::inverse(model.bodies[0].reference_pose));
      const Pose from_model = se3::compose(se3::compose(displacement, product), model.bodies[b].reference_pose);
      INFO("trial " << trial << ", body " << model.bodies[b].name);
      CHECK((from_tree.R - from_model.R).norm() < 1e-12);
      CHECK((from_tree.r - from_model.r).norm() < 1e-12);
    }
  }
}
