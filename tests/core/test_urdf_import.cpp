// URDF import: reference poses, world-frame screws, centres of mass and inertias checked
// against values worked out by hand; traversal order; floating and fixed bases; massless
// links; error paths name the file, the line and the link or joint.
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/loaders/urdf_import.hpp>

#include <unistd.h>

#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

constexpr double half_pi = 1.5707963267948966;

Mat3 rotation_rpy(double roll, double pitch, double yaw) {
  return (Eigen::AngleAxisd(yaw, Vec3::UnitZ()) * Eigen::AngleAxisd(pitch, Vec3::UnitY()) *
          Eigen::AngleAxisd(roll, Vec3::UnitX()))
      .toRotationMatrix();
}

// base --prismatic "slide"--> carriage --continuous "spin"--> rotor --fixed--> tool (no inertial)
const std::string test_robot = R"(<?xml version="1.0"?>
<robot name="test">
  <link name="base">
    <inertial>
      <origin xyz="0 0 0.05"/>
      <mass value="2"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="slide" type="prismatic">
    <parent link="base"/>
    <child link="carriage"/>
    <origin xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"/>
    <axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <link name="carriage">
    <inertial>
      <origin xyz="0.01 0.02 0.03" rpy="0.3 -0.2 0.5"/>
      <mass value="1.5"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.025" ixy="0.001" ixz="-0.002" iyz="0.003"/>
    </inertial>
  </link>
  <joint name="spin" type="continuous">
    <parent link="carriage"/>
    <child link="rotor"/>
    <origin xyz="0 0 0.5" rpy="1.5707963267948966 0 0"/>
    <axis xyz="0 0 2"/>
  </joint>
  <link name="rotor">
    <inertial>
      <origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/>
      <mass value="0.5"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="tool_mount" type="fixed">
    <parent link="rotor"/>
    <child link="tool"/>
    <origin xyz="0 0 0.1"/>
  </joint>
  <link name="tool"/>
</robot>
)";

const char* inertial_xml =
    "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" "
    "iyz=\"0\"/></inertial>";

std::string link(const std::string& name, bool with_inertial = true) {
  return "<link name=\"" + name + "\">" + (with_inertial ? inertial_xml : "") + "</link>\n";
}

std::string joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child, const std::string& extra = "") {
  std::string limit = type == "revolute" || type == "prismatic"
                          ? "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>"
                          : "";
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent + "\"/><child link=\"" + child +
         "\"/>" + limit + extra + "</joint>\n";
}

std::string robot(const std::string& body) { return "<robot name=\"r\">\n" + body + "</robot>\n"; }

const Joint& find_joint(const Model& model, const std::string& name) {
  for (const auto& j : model.joints)
    if (j.name == name) return j;
  FAIL("no joint " << name);
  return model.joints.front();
}

}  // namespace

TEST_CASE("URDF import: reference poses, screws, centres of mass and inertias", "[urdf]") {
  const Model model = import_urdf_string(test_robot, "test.urdf", false);

  REQUIRE(model.bodies.size() == 4);
  CHECK(model.bodies[0].name == "base");
  CHECK(model.bodies[1].name == "carriage");
  CHECK(model.bodies[2].name == "rotor");
  CHECK(model.bodies[3].name == "tool");
  REQUIRE(model.joints.size() == 4);
  CHECK(model.joints[0].name == "world_to_base");
  CHECK(model.joints[0].type == JointType::fixed);
  CHECK(model.joints[0].parent == Joint::world);
  CHECK(model.joints[0].child == 0);
  CHECK(model.joint_dof() == 2);
  CHECK(model.free_bodies().empty());
  CHECK(model.gravity.isZero(0.0));

  // Reference poses A_child = A_parent * origin.
  const Mat3 Rz = rotation_rpy(0, 0, half_pi);
  const Mat3 Rx = rotation_rpy(half_pi, 0, 0);
  CHECK(model.bodies[0].reference_pose.R.isApprox(Mat3::Identity(), 1e-15));
  CHECK(model.bodies[0].reference_pose.r.isZero(0.0));
  CHECK((model.bodies[1].reference_pose.R - Rz).norm() < 1e-15);
  CHECK((model.bodies[1].reference_pose.r - Vec3(0.1, 0.2, 0.3)).norm() < 1e-15);
  CHECK((model.bodies[2].reference_pose.R - Rz * Rx).norm() < 1e-15);
  CHECK((model.bodies[2].reference_pose.r - Vec3(0.1, 0.2, 0.8)).norm() < 1e-15);
  CHECK((model.bodies[3].reference_pose.r - Vec3(0.2, 0.2, 0.8)).norm() < 1e-15);  // rotor z is world x

  // Prismatic along the carriage x axis = world y: Y = (0; 0, 1, 0).
  const Joint& slide = find_joint(model, "slide");
  CHECK(slide.type == JointType::prismatic);
  CHECK(slide.parent == 0);
  CHECK(slide.child == 1);
  REQUIRE(slide.screws.size() == 1);
  Vec6 expected;
  expected << 0, 0, 0, 0, 1, 0;
  CHECK((slide.screws[0] - expected).norm() < 1e-15);
  CHECK(slide.initial_position.size() == 1);
  CHECK(slide.initial_position.isZero(0.0));
  CHECK(slide.initial_velocity.size() == 1);
  CHECK(slide.initial_velocity.isZero(0.0));

  // Continuous about the rotor z axis (given as 0 0 2) = world x, through (0.1, 0.2, 0.8):
  // Y = (e; y x e) = (1, 0, 0; 0, 0.8, -0.2).
  const Joint& spin = find_joint(model, "spin");
  CHECK(spin.type == JointType::revolute);
  CHECK(spin.parent == 1);
  CHECK(spin.child == 2);
  REQUIRE(spin.screws.size() == 1);
  expected << 1, 0, 0, 0, 0.8, -0.2;
  CHECK((spin.screws[0] - expected).norm() < 1e-15);
  // Same as Ad_{A_rotor} (z; 0).
  Vec6 local_axis;
  local_axis << 0, 0, 1, 0, 0, 0;
  CHECK((se3::Ad(model.bodies[2].reference_pose) * local_axis - spin.screws[0]).norm() < 1e-15);

  const Joint& mount = find_joint(model, "tool_mount");
  CHECK(mount.type == JointType::fixed);
  CHECK(mount.screws.empty());
  CHECK(mount.parent == 2);
  CHECK(mount.child == 3);

  // Centres of mass in the link frame; inertia R I R^T.
  CHECK((model.bodies[0].center_of_mass - Vec3(0, 0, 0.05)).norm() < 1e-15);
  CHECK(model.bodies[0].mass == 2.0);
  CHECK((model.bodies[1].center_of_mass - Vec3(0.01, 0.02, 0.03)).norm() < 1e-15);
  CHECK(model.bodies[1].mass == 1.5);
  Mat3 urdf_inertia;
  urdf_inertia << 0.01, 0.001, -0.002, 0.001, 0.02, 0.003, -0.002, 0.003, 0.025;
  const Mat3 R_inertial = rotation_rpy(0.3, -0.2, 0.5);
  const Mat3 expected_inertia = R_inertial * urdf_inertia * R_inertial.transpose();
  CHECK((model.bodies[1].inertia - expected_inertia).norm() < 1e-15);
  CHECK((model.bodies[1].inertia - model.bodies[1].inertia.transpose()).norm() == 0.0);
  // Same principal moments, different tensor: the rotation was applied.
  const Eigen::SelfAdjointEigenSolver<Mat3> before(urdf_inertia), after(model.bodies[1].inertia);
  CHECK((before.eigenvalues() - after.eigenvalues()).norm() < 1e-15);
  CHECK((model.bodies[1].inertia - urdf_inertia).norm() > 1e-3);
  // Diagonal tensor turned by 90 degrees about z: the x and y moments swap.
  CHECK((model.bodies[2].inertia - Vec3(0.02, 0.01, 0.03).asDiagonal().toDenseMatrix()).norm() < 1e-15);
  CHECK((model.bodies[2].center_of_mass - Vec3(0.1, 0, 0)).norm() < 1e-15);

  // The link without inertial is a massless body welded to the rotor.
  CHECK(model.bodies[3].mass == 0.0);
  CHECK(model.bodies[3].inertia.isZero(0.0));
}

TEST_CASE("URDF import: floating base leaves the root free", "[urdf]") {
  const Model model = import_urdf_string(test_robot, "test.urdf", true);
  REQUIRE(model.bodies.size() == 4);
  REQUIRE(model.joints.size() == 3);
  CHECK(model.joints[0].name == "slide");
  CHECK(model.joints[1].name == "spin");
  CHECK(model.joints[2].name == "tool_mount");
  REQUIRE(model.free_bodies().size() == 1);
  CHECK(model.free_bodies()[0] == 0);
  CHECK(model.bodies[0].reference_pose.r.isZero(0.0));
  CHECK(model.bodies[0].initial_angular_velocity.isZero(0.0));
}

TEST_CASE("URDF import: joints in depth-first order, siblings in file order", "[urdf]") {
  const std::string xml = robot(link("torso") + joint("zeta", "revolute", "torso", "z1") + link("z1") +
                                joint("alpha", "continuous", "torso", "a1") + link("a1") +
                                joint("zeta_2", "revolute", "z1", "z2") + link("z2") +
                                joint("mid", "prismatic", "torso", "m1", "<axis xyz=\"0 0 1\"/>") + link("m1"));
  const Model model = import_urdf_string(xml, "tree.urdf", true);
  REQUIRE(model.joints.size() == 4);
  CHECK(model.joints[0].name == "zeta");
  CHECK(model.joints[1].name == "zeta_2");
  CHECK(model.joints[2].name == "alpha");
  CHECK(model.joints[3].name == "mid");
  REQUIRE(model.bodies.size() == 5);
  CHECK(model.bodies[0].name == "torso");
  CHECK(model.bodies[1].name == "z1");
  CHECK(model.bodies[2].name == "z2");
  CHECK(model.bodies[3].name == "a1");
  CHECK(model.bodies[4].name == "m1");
  // A revolute joint without <axis> turns about the URDF default x axis.
  Vec6 expected;
  expected << 1, 0, 0, 0, 0, 0;
  CHECK((model.joints[0].screws[0] - expected).norm() == 0.0);
}

TEST_CASE("URDF import: a massless root link is the world", "[urdf]") {
  const std::string fixed = robot(link("world", false) + joint("weld", "fixed", "world", "base", "<origin xyz=\"0 0 1\"/>") +
                                  link("base") + joint("j1", "revolute", "base", "l1") + link("l1"));
  const Model model = import_urdf_string(fixed, "fixed.urdf", false);
  REQUIRE(model.bodies.size() == 2);
  CHECK(model.bodies[0].name == "base");
  CHECK((model.bodies[0].reference_pose.r - Vec3(0, 0, 1)).norm() == 0.0);
  REQUIRE(model.joints.size() == 2);
  CHECK(model.joints[0].name == "weld");
  CHECK(model.joints[0].parent == Joint::world);
  CHECK(model.joints[1].parent == 0);

  const std::string floating = robot(link("world", false) +
                                     joint("float", "floating", "world", "base", "<origin xyz=\"1 2 3\"/>") + link("base") +
                                     joint("j1", "revolute", "base", "l1") + link("l1"));
  const Model free = import_urdf_string(floating, "floating.urdf", true);
  REQUIRE(free.bodies.size() == 2);
  REQUIRE(free.joints.size() == 1);
  CHECK(free.joints[0].name == "j1");
  REQUIRE(free.free_bodies().size() == 1);
  CHECK(free.bodies[free.free_bodies()[0]].name == "base");
  CHECK((free.bodies[0].reference_pose.r - Vec3(1, 2, 3)).norm() == 0.0);
  CHECK_THROWS_WITH(import_urdf_string(floating, "floating.urdf", false),
                    Contains("floating.urdf:") && Contains("joint 'float'") && Contains("fixed base"));

  // A massless root of a floating model is a free body when links with mass are welded to it.
  const std::string welded = robot(link("base_link", false) + joint("weld", "fixed", "base_link", "torso") +
                                   link("torso") + joint("j1", "revolute", "torso", "l1") + link("l1"));
  const Model welded_model = import_urdf_string(welded, "welded.urdf", true);
  REQUIRE(welded_model.free_bodies().size() == 1);
  CHECK(welded_model.bodies[welded_model.free_bodies()[0]].name == "base_link");
  CHECK(welded_model.bodies[0].mass == 0.0);
}

TEST_CASE("URDF import: the iiwa-like arm file", "[urdf]") {
  const Model model = import_urdf(std::string(LIEMBS_SOURCE_DIR) + "/models/urdf/iiwa-like-arm.urdf", false);
  CHECK(model.joint_dof() == 7);
  double mass = 0.0;
  for (const auto& body : model.bodies) {
    mass += body.mass;
    if (body.mass > 0.0) CHECK(check_inertia(body.inertia).empty());
  }
  CHECK(mass > 15.0);
  std::size_t revolute = 0;
  for (const auto& j : model.joints) revolute += j.type == JointType::revolute;
  CHECK(revolute == 7);
}

TEST_CASE("URDF import: errors name the file, the line and the link or joint", "[urdf]") {
  // XML syntax
  CHECK_THROWS_AS(import_urdf_string("<robot name='r'><link name='a'>", "bad.urdf", false), ModelError);
  CHECK_THROWS_WITH(import_urdf_string("<robot name='r'>\n<link name='a'></joint>\n</robot>", "bad.urdf", false),
                    Contains("bad.urdf:2") && Contains("malformed XML"));
  CHECK_THROWS_WITH(import_urdf_string("<model/>", "bad.urdf", false), Contains("bad.urdf") && Contains("<robot>"));
  CHECK_THROWS_WITH(import_urdf("/nonexistent/arm.urdf", false), Contains("/nonexistent/arm.urdf") && Contains("cannot open"));

  // Reported by urdfdom
  CHECK_THROWS_WITH(import_urdf_string(robot(link("a") + joint("j", "fixed", "nowhere", "a")), "p.urdf", false),
                    Contains("p.urdf") && Contains("nowhere") && Contains("[j]"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("a") + link("b")), "two.urdf", false),
                    Contains("two.urdf") && Contains("Two root links") && Contains("[a]") && Contains("[b]"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("a") + link("b") + joint("j", "wobbly", "a", "b")), "t.urdf", false),
                    Contains("t.urdf") && Contains("wobbly"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("a") + link("b") +
                                             "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child "
                                             "link=\"b\"/></joint>"),
                                       "l.urdf", false),
                    Contains("l.urdf") && Contains("[j]") && Contains("limits"));

  // Topology
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base") + link("a") + link("b") + joint("ab", "fixed", "a", "b") +
                                             joint("ba", "fixed", "b", "a")),
                                       "cycle.urdf", false),
                    Contains("cycle.urdf") && Contains("link 'a'") && Contains("not connected to the root link 'base'"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base") + link("a") + link("b") + joint("j1", "fixed", "base", "a") +
                                             joint("j2", "fixed", "base", "b") + joint("j3", "fixed", "b", "a")),
                                       "loop.urdf", false),
                    Contains("loop.urdf:") && Contains("link 'a'") && Contains("'j1' and 'j3'"));

  // Mass and inertia, with the line of the link
  const std::string massless_moving = "<robot name=\"r\">\n" + link("base") + joint("j", "revolute", "base", "ghost") +
                                      link("ghost", false) + "</robot>";
  CHECK_THROWS_WITH(import_urdf_string(massless_moving, "m.urdf", false),
                    Contains("m.urdf:4: link 'ghost'") && Contains("no mass"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base") + joint("j", "revolute", "base", "a") +
                                             "<link name=\"a\"><inertial><mass value=\"-1\"/><inertia ixx=\"1\" "
                                             "iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>"),
                                       "n.urdf", false),
                    Contains("n.urdf:4: link 'a'") && Contains("mass"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base") + joint("j", "revolute", "base", "rod") +
                                             "<link name=\"rod\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" "
                                             "iyy=\"1\" izz=\"3\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>"),
                                       "i.urdf", false),
                    Contains("i.urdf:4: link 'rod'") && Contains("triangle inequality"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("world", false) + joint("float", "floating", "world", "a") + link("a") +
                                             joint("float2", "floating", "a", "b") + link("b")),
                                       "f.urdf", true),
                    Contains("f.urdf:5: joint 'float2'") && Contains("floating"));
  // A floating model whose root has no mass and nothing with mass welded to it.
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base", false) + joint("j", "revolute", "base", "a") + link("a")),
                                       "r.urdf", true),
                    Contains("link 'base'") && Contains("no mass"));

  // Joints
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base") + joint("j", "revolute", "base", "a", "<axis xyz=\"0 0 0\"/>") +
                                             link("a")),
                                       "a.urdf", false),
                    Contains("a.urdf:3: joint 'j'") && Contains("axis"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base") +
                                             joint("j", "revolute", "base", "a", "<mimic joint=\"k\"/>") + link("a") +
                                             joint("k", "revolute", "base", "b") + link("b")),
                                       "mimic.urdf", false),
                    Contains("joint 'j'") && Contains("mimic"));
  CHECK_THROWS_WITH(import_urdf_string(robot(link("base") + joint("p", "planar", "base", "a") + link("a")), "pl.urdf",
                                       false),
                    Contains("joint 'p'") && Contains("planar"));
}

// ---------------------------------------------------------------------------------------
// [model] urdf = "..." in a TOML file.

namespace {

namespace fs = std::filesystem;

fs::path scratch_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("liembs-urdf-toml-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir / "models");
  return dir;
}

// Writes model.toml (with `toml`) and models/robot.urdf (with `urdf`) into a fresh folder and
// loads the [model] table.
Model load_toml_with_urdf(const std::string& name, const std::string& toml, const std::string& urdf) {
  const fs::path dir = scratch_folder(name);
  std::ofstream(dir / "models" / "robot.urdf") << urdf;
  std::ofstream(dir / "model.toml") << toml;
  const auto document = ConfigDocument::load(dir / "model.toml");
  const Model model = load_model(document->root().table("model"));
  document->reject_unused_keys();
  return model;
}

}  // namespace

TEST_CASE("TOML model from a URDF file: bodies, joints, gravity, loads and initial values", "[urdf][config]") {
  const Model expected = import_urdf_string(test_robot, "robot.urdf", false);
  const Model model = load_toml_with_urdf("ok",
                                          "[model]\n"
                                          "urdf = \"models/robot.urdf\"   # relative to this file\n"
                                          "gravity = [0, 0, -9.81]\n"
                                          "[model.initial_position]\n"
                                          "spin = 0.3\n"
                                          "[model.initial_velocity]\n"
                                          "slide = [-0.5]\n"
                                          "[[model.loads]]\n"
                                          "body = \"rotor\"\n"
                                          "moment = [0, 0, 0.1]\n",
                                          test_robot);
  REQUIRE(model.bodies.size() == expected.bodies.size());
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    CHECK(model.bodies[i].name == expected.bodies[i].name);
    CHECK(model.bodies[i].mass == expected.bodies[i].mass);
    CHECK(model.bodies[i].inertia == expected.bodies[i].inertia);
    CHECK(model.bodies[i].reference_pose.r == expected.bodies[i].reference_pose.r);
  }
  REQUIRE(model.joints.size() == expected.joints.size());
  for (std::size_t i = 0; i < model.joints.size(); ++i) {
    CHECK(model.joints[i].name == expected.joints[i].name);
    CHECK(model.joints[i].screws == expected.joints[i].screws);
  }
  CHECK(model.free_bodies().empty());  // floating_base defaults to false
  CHECK(model.gravity == Vec3(0, 0, -9.81));
  REQUIRE(model.loads.size() == 1);
  CHECK(model.bodies[model.loads[0].body].name == "rotor");
  const Joint& spin = find_joint(model, "spin");
  const Joint& slide = find_joint(model, "slide");
  CHECK(spin.initial_position(0) == 0.3);
  CHECK(spin.initial_velocity(0) == 0.0);
  CHECK(slide.initial_position(0) == 0.0);
  CHECK(slide.initial_velocity(0) == -0.5);

  const Model floating = load_toml_with_urdf("floating", "[model]\nurdf = \"models/robot.urdf\"\nfloating_base = true\n",
                                             test_robot);
  REQUIRE(floating.free_bodies().size() == 1);
  CHECK(floating.bodies[floating.free_bodies()[0]].name == "base");
  CHECK(floating.gravity == Vec3::Zero());
}

TEST_CASE("TOML initial values by joint name also apply to TOML joints", "[config]") {
  const auto document = ConfigDocument::from_string(
      "[model]\n[[model.bodies]]\nname = \"a\"\nmass = 1\ninertia_diagonal = [1, 1, 1]\n"
      "[[model.bodies]]\nname = \"b\"\nmass = 1\ninertia_diagonal = [1, 1, 1]\n"
      "[[model.joints]]\nname = \"hinge\"\ntype = \"revolute\"\nparent = \"world\"\nchild = \"a\"\naxis = [0, 0, 1]\n"
      "[[model.joints]]\nname = \"ball\"\ntype = \"spherical\"\nparent = \"a\"\nchild = \"b\"\ninitial_velocity = [1, 2, 3]\n"
      "[model.initial_position]\nhinge = 0.5\nball = [0.1, 0.2, 0.3]\n",
      "joints.toml");
  const Model model = load_model(document->root().table("model"));
  CHECK(find_joint(model, "hinge").initial_position(0) == 0.5);
  CHECK(find_joint(model, "ball").initial_position == Eigen::Vector3d(0.1, 0.2, 0.3));
  CHECK(find_joint(model, "ball").initial_velocity == Eigen::Vector3d(1, 2, 3));
}

TEST_CASE("TOML model from a URDF file: errors name the TOML key and the URDF problem", "[urdf][config]") {
  const std::string head = "title = \"x\"\n[model]\nurdf = \"models/robot.urdf\"\n";
  SECTION("missing URDF file: a configuration error at the key") {
    const std::string missing = "[model]\nurdf = \"models/nothing.urdf\"\n";
    CHECK_THROWS_AS(load_toml_with_urdf("missing", missing, test_robot), ConfigError);
    CHECK_THROWS_WITH(load_toml_with_urdf("missing", missing, test_robot),
                      Contains("model.toml:2:8: model.urdf: URDF file not found: ") &&
                          Contains("models/nothing.urdf"));
  }
  SECTION("invalid URDF: a model error naming the TOML position and the URDF line") {
    const std::string bad = robot(link("base") + joint("j", "revolute", "base", "a", "<axis xyz=\"0 0 0\"/>") + link("a"));
    CHECK_THROWS_AS(load_toml_with_urdf("bad-axis", head, bad), ModelError);
    CHECK_THROWS_WITH(load_toml_with_urdf("bad-axis", head, bad),
                      Contains("model.toml:3:8: model.urdf: ") && Contains("robot.urdf:3: joint 'j'") &&
                          Contains("axis"));
    CHECK_THROWS_WITH(load_toml_with_urdf("bad-xml", head, "<robot name='r'>\n<link name='a'></joint>\n</robot>"),
                      Contains("model.toml:3:8: model.urdf: ") && Contains("robot.urdf:2") &&
                          Contains("malformed XML"));
  }
  SECTION("bodies or joints next to the URDF") {
    CHECK_THROWS_AS(load_toml_with_urdf("mixed", head + "[[model.bodies]]\nname = \"x\"\nmass = 1\n", test_robot),
                    ConfigError);
    CHECK_THROWS_WITH(load_toml_with_urdf("mixed", head + "[[model.joints]]\nname = \"x\"\n", test_robot),
                      Contains("model.joints: the bodies and joints come from model.urdf"));
  }
  SECTION("floating_base without a URDF file") {
    CHECK_THROWS_WITH(load_toml_with_urdf("no-urdf", "[model]\nfloating_base = true\n[[model.bodies]]\nname = \"a\"\n"
                                                     "mass = 1\ninertia_diagonal = [1, 1, 1]\n",
                                          test_robot),
                      Contains("model.floating_base: only read together with a URDF file"));
    CHECK_THROWS_WITH(load_toml_with_urdf("not-bool", head + "floating_base = 1\n", test_robot),
                      Contains("model.floating_base"));
  }
  SECTION("initial values: unknown joint with suggestion, fixed joint, wrong size") {
    CHECK_THROWS_AS(load_toml_with_urdf("unknown", head + "[model.initial_position]\nspn = 1\n", test_robot), ConfigError);
    CHECK_THROWS_WITH(load_toml_with_urdf("unknown", head + "[model.initial_position]\nspn = 1\n", test_robot),
                      Contains("model.toml:5:7: model.initial_position.spn: unknown joint 'spn'; joints: slide, spin (did") &&
                          Contains("did you mean 'spin'?"));
    CHECK_THROWS_WITH(load_toml_with_urdf("fixed", head + "[model.initial_velocity]\ntool_mount = 1\n", test_robot),
                      Contains("model.initial_velocity.tool_mount: joint 'tool_mount': a fixed joint has no coordinates"));
    CHECK_THROWS_WITH(load_toml_with_urdf("size", head + "[model.initial_position]\nslide = [1, 2]\n", test_robot),
                      Contains("model.initial_position.slide: joint 'slide': expected 1 value(s)"));
  }
}

TEST_CASE("TOML initial values: a joint may not get them twice", "[config]") {
  const auto document = ConfigDocument::from_string(
      "[model]\n[[model.bodies]]\nname = \"a\"\nmass = 1\ninertia_diagonal = [1, 1, 1]\n"
      "[[model.joints]]\nname = \"hinge\"\ntype = \"revolute\"\nparent = \"world\"\nchild = \"a\"\naxis = [0, 0, 1]\n"
      "initial_position = 0.1\n[model.initial_position]\nhinge = 0.5\n",
      "twice.toml");
  CHECK_THROWS_WITH(load_model(document->root().table("model")),
                    Contains("model.initial_position.hinge: joint 'hinge': also given as initial_position"));
}
