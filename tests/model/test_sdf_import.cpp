// SDF import (import_sdf, [model] sdf): the same robots as URDF files give the same RNEA,
// CRBA and ABA to round-off; a four-bar loop in SDF is cut by the topology like the TOML
// four-bar and moves like configs/four-bar/planar.toml; what is not modelled is listed once;
// bad files get libsdformat's or LieMBS's message with the file and line.
#include "model_format_support.hpp"
#include "../support/cli_process.hpp"

#include <liembs/error.hpp>
#include <liembs/loaders/mjcf_import.hpp>
#include <liembs/loaders/sdf_import.hpp>
#include <liembs/model/topology.hpp>
#include <liembs/model/visual_shapes.hpp>
#include <liembs/util/warning.hpp>

#include <fstream>

using namespace liembs;
using namespace liembs::test_formats;
using Catch::Matchers::Contains;

TEST_CASE("SDF import: the same robots as URDF files give the same RNEA and CRBA and ABA") {
  for (const TwinRobot& robot : twin_robots()) {
    INFO(robot.name);
    const Model sdf = import_sdf(models_dir() / "sdf" / (std::string(robot.name) + ".sdf"));
    CHECK(sdf.gravity == Vec3::Zero());  // a bare model, as URDF
    const Agreement agreement = compare_with_urdf_twin(robot, sdf, 7);
    INFO("RNEA " << agreement.inverse << ", CRBA " << agreement.mass << ", ABA " << agreement.forward);
    CHECK(agreement.inverse < 1e-12);
    CHECK(agreement.mass < 1e-12);
    CHECK(agreement.forward < 1e-12);
  }
}

TEST_CASE("SDF import: a four-bar loop is cut like the TOML four-bar and moves like configs/four-bar/planar.toml") {
  const Model sdf = import_sdf(models_dir() / "sdf/four-bar.sdf");
  const Topology topology = analyze_topology(sdf);
  REQUIRE(topology.cut_joints.size() == 1);
  CHECK(sdf.joints[topology.cut_joints[0]].name == "C");

  // The same bodies and joint screws as the TOML model.
  auto toml = liembs::testing::load_test_run("../../configs/four-bar/planar.toml");
  const Model& reference = *toml.run.model;
  REQUIRE(sdf.bodies.size() == reference.bodies.size());
  REQUIRE(sdf.joints.size() == reference.joints.size());
  for (std::size_t b = 0; b < sdf.bodies.size(); ++b) {
    INFO(reference.bodies[b].name);
    CHECK(sdf.bodies[b].name == reference.bodies[b].name);
    CHECK((sdf.bodies[b].reference_pose.matrix() - reference.bodies[b].reference_pose.matrix()).norm() < 1e-14);
    CHECK((sdf.bodies[b].spatial_inertia() - reference.bodies[b].spatial_inertia()).norm() < 1e-15);
  }
  for (std::size_t j = 0; j < sdf.joints.size(); ++j) {
    INFO(reference.joints[j].name);
    CHECK(sdf.joints[j].name == reference.joints[j].name);
    REQUIRE(sdf.joints[j].dof() == 1);
    CHECK((sdf.joints[j].screws[0] - reference.joints[j].screws[0]).norm() < 1e-14);
  }

  const RunAgreement runs = compare_four_bar_runs("../../configs/four-bar/planar-sdf.toml");
  INFO("largest difference " << runs.largest_difference << ", largest motion " << runs.largest_motion);
  CHECK(runs.largest_motion > 0.05);
  CHECK(runs.largest_difference < 1e-11);
}

TEST_CASE("SDF import: joints and axes and inertias are resolved in the world") {
  CapturedWarnings warnings;
  const Model model = import_sdf(models_dir() / "sdf/slide-arm.sdf");
  std::vector<std::string> joints;
  for (const auto& joint : model.joints) joints.push_back(joint.name);
  CHECK(joints == std::vector<std::string>{"shoulder_yaw", "shoulder_pitch", "telescope", "elbow", "wrist_slide", "wrist_roll"});
  CHECK(model.joints[0].parent == Joint::world);
  CHECK(model.joints[2].type == JointType::prismatic);
  // link1 at (0, 0, 0.1), its joint about the world z axis through it.
  CHECK((model.bodies[0].reference_pose.r - Vec3(0, 0, 0.1)).norm() < 1e-15);
  CHECK((model.joints[0].screws[0] - revolute_screw(Vec3::UnitZ(), Vec3(0, 0, 0.1))).norm() < 1e-15);
  Mat3 inertia;
  inertia << 0.04, 0.002, -0.001, 0.002, 0.05, 0.003, -0.001, 0.003, 0.02;
  CHECK((model.bodies[0].inertia - inertia).norm() < 1e-15);
  CHECK(model.bodies[0].mass == 2.0);
}

namespace {

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("liembs-test-sdf-" + name);
  std::ofstream(path) << text;
  return path;
}

std::string sdf_link(const std::string& name, const std::string& inside = "<inertial><mass>1</mass></inertial>") {
  return "    <link name=\"" + name + "\">" + inside + "</link>\n";
}

std::string sdf_model(const std::string& body) {
  return "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"m\">\n" + body + "  </model>\n</sdf>\n";
}

}  // namespace

TEST_CASE("SDF import: what LieMBS does not model is listed once") {
  const auto file = write_file("limits.sdf", sdf_model(sdf_link("a", "<inertial><mass>1</mass></inertial><collision name=\"c\"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>") +
                                                    sdf_link("b", "") +
                                                    "    <joint name=\"j\" type=\"revolute\"><parent>world</parent><child>a</child>"
                                                    "<axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit>"
                                                    "<dynamics><damping>0.2</damping></dynamics></axis></joint>\n"
                                                    "    <joint name=\"k\" type=\"revolute\"><parent>a</parent><child>b</child>"
                                                    "<axis><xyz>0 1 0</xyz></axis></joint>\n"));
  CapturedWarnings warnings;
  const Model model = import_sdf(file);
  REQUIRE(warnings.messages().size() == 1);
  CHECK_THAT(warnings.messages()[0], Contains("limits.sdf: not modelled by LieMBS") && Contains("limits of 'j'") &&
                                         Contains("damping of 'j'") && Contains("contacts of 1 collision(s)") &&
                                         Contains("no <inertial> on 'b'"));
  CHECK(model.bodies[1].mass == 1.0);  // SDF's default inertial
}

TEST_CASE("SDF import: bad files get libsdformat's errors with file and line or name the link or joint") {
  const std::string chain = sdf_link("a") + "    <joint name=\"j\" type=\"revolute\"><parent>world</parent><child>a</child><axis><xyz>0 0 1</xyz></axis></joint>\n";
  SECTION("truncated") {
    const std::string whole = sdf_model(chain);
    const auto file = write_file("truncated.sdf", whole.substr(0, whole.size() / 2));
    CHECK_THROWS_WITH(import_sdf(file), Contains("truncated.sdf: libsdformat cannot load the file") &&
                                             Contains("Line number="));
  }
  SECTION("a URDF file libsdformat cannot convert is named as one, with the key that reads it") {
    const std::string urdf = std::string(LIEMBS_SOURCE_DIR) + "/models/urdf/slide-arm.urdf";
    CHECK_THROWS_WITH(import_sdf(urdf), Contains("slide-arm.urdf: libsdformat cannot load the file (a URDF file: read it "
                                                 "as one, with [model] urdf or liembs.Model.from_urdf)"));
  }
  SECTION("unknown joint type") {
    const auto file = write_file("twist.sdf", sdf_model(sdf_link("a") + "    <joint name=\"j\" type=\"twist\"><parent>world</parent><child>a</child></joint>\n"));
    CHECK_THROWS_WITH(import_sdf(file), Contains("twist.sdf") && Contains("twist"));
  }
  SECTION("screw joints are refused") {
    const auto file = write_file("screw.sdf", sdf_model(sdf_link("a") + "    <joint name=\"j\" type=\"screw\"><parent>world</parent><child>a</child><axis><xyz>0 0 1</xyz></axis></joint>\n"));
    CHECK_THROWS_WITH(import_sdf(file), Contains("screw.sdf:5: joint 'j': screw joints are not read"));
  }
  SECTION("zero mass on a moving link") {
    const auto file = write_file("massless.sdf", sdf_model(sdf_link("a", "<inertial><mass>0</mass><inertia><ixx>0</ixx><iyy>0</iyy><izz>0</izz></inertia></inertial>") +
                                                           "    <joint name=\"j\" type=\"revolute\"><parent>world</parent><child>a</child><axis><xyz>0 0 1</xyz></axis></joint>\n"));
    CHECK_THROWS_WITH(import_sdf(file), Contains("massless.sdf:4: link 'a': mass 0 on a moving link"));
  }
  SECTION("a cycle without a usable cut") {
    // Two links that are each other's parent: no joint attaches them to the world or leaves
    // a free body, so no spanning tree reaches them.
    const auto file = write_file("cycle.sdf", sdf_model(sdf_link("a") + sdf_link("b") +
                                                        "    <joint name=\"j\" type=\"revolute\"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis></joint>\n"
                                                        "    <joint name=\"k\" type=\"revolute\"><parent>b</parent><child>a</child><axis><xyz>0 0 1</xyz></axis></joint>\n"));
    CHECK_THROWS_WITH(import_sdf(file), Contains("cycle.sdf: body 'a' is disconnected"));
  }
  SECTION("missing file") {
    CHECK_THROWS_WITH(import_sdf("/nonexistent/robot.sdf"), Contains("/nonexistent/robot.sdf: cannot open the SDF file"));
  }
}

TEST_CASE("SDF import: liembs eval takes the same columns as the URDF and MJCF twins") {
  const auto io = cli_test::scratch_folder("liembs-test-sdf", "eval");
  const std::string configs = std::string(LIEMBS_SOURCE_DIR) + "/configs/formats/";
  for (const std::string robot : {"slide-arm", "humanoid"}) {
    INFO(robot);
    const auto urdf = cli_test::run_liembs("eval " + configs + robot + "-urdf.toml --set algorithm.name=rnea --columns", io);
    const auto sdf = cli_test::run_liembs("eval " + configs + robot + "-sdf.toml --set algorithm.name=rnea --columns", io);
    REQUIRE(urdf.status == 0);
    REQUIRE(sdf.status == 0);
    CHECK(sdf.out == urdf.out);
    CHECK(sdf.err.empty());
  }
}

TEST_CASE("Visual shapes: the arm's URDF and MJCF and SDF files give the same primitives in the body frames") {
  // models/*/slide-arm.*: a cylinder, boxes and a sphere (MJCF: half-sizes; all rotated).
  const ModelVisuals urdf = read_urdf_visuals(models_dir() / "urdf/slide-arm.urdf");
  for (const ModelVisuals& other : {read_mjcf_visuals(models_dir() / "mjcf/slide-arm.xml"),
                                    read_sdf_visuals(models_dir() / "sdf/slide-arm.sdf")}) {
    REQUIRE(other.by_body.size() == urdf.by_body.size());
    CHECK(other.world.empty());
    for (const auto& [body, shapes] : urdf.by_body) {
      INFO(body);
      REQUIRE(other.by_body.count(body) == 1);
      const auto& others = other.by_body.at(body);
      REQUIRE(others.size() == shapes.size());
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        CHECK(others[k].type == shapes[k].type);
        CHECK((others[k].pose.matrix() - shapes[k].pose.matrix()).norm() < 1e-12);
        CHECK((others[k].box_size - shapes[k].box_size).norm() < 1e-15);
        CHECK(others[k].radius == Approx(shapes[k].radius).epsilon(1e-15));
        CHECK(others[k].length == Approx(shapes[k].length).epsilon(1e-15));
      }
    }
  }
  // The humanoid's capsules (URDF has none: its twin draws cylinders over the whole length).
  const ModelVisuals mjcf = read_mjcf_visuals(models_dir() / "mjcf/humanoid.xml");
  const ModelVisuals sdf = read_sdf_visuals(models_dir() / "sdf/humanoid.sdf");
  for (const ModelVisuals* visuals : {&mjcf, &sdf}) {
    const VisualShape& shin = visuals->by_body.at("shin_l").at(0);
    CHECK(shin.type == VisualShape::Type::capsule);
    CHECK(shin.radius == Approx(0.05));
    CHECK(shin.length == Approx(0.3));
    CHECK((shin.pose.r - Vec3(0, 0, -0.2)).norm() < 1e-15);
  }
  CHECK(mjcf.by_body.at("torso").at(0).color.has_value());
}
