// Joints read from TOML ([[model.joints]], README.md "TOML format"): the world-frame screws
// of every joint type, the body-frame form against the equivalent world-frame description,
// initial joint values, and the error messages (file:line, key path, joint named).
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/model/model.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

const char* const file_name = "joints.toml";

Model load(const std::string& text) {
  auto document = ConfigDocument::from_string(text, file_name);
  return load_model(document->root().table("model"));
}

// "joints.toml:<line>:" of the first line of `text` containing `needle` (1-based).
std::string location_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  long line = 1;
  for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return std::string(file_name) + ":" + std::to_string(line) + ":";
}

std::string number(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}
std::string vec(const Vec3& v) {
  char buffer[100];
  std::snprintf(buffer, sizeof buffer, "[%.17g, %.17g, %.17g]", v.x(), v.y(), v.z());
  return buffer;
}
std::string mat(const Mat3& m) {
  std::string text("[");
  for (int i = 0; i < 3; ++i) {
    if (i > 0) text.append(", ");
    text.append(vec(m.row(i).transpose()));
  }
  text.append("]");
  return text;
}

// Two bodies, "upper" and "lower", at non-trivial poses.
const std::string two_bodies =
    "[model]\n"
    "[[model.bodies]]\nname = \"upper\"\nmass = 1.0\ninertia_diagonal = [0.1, 0.2, 0.25]\n"
    "position = [0.1, 0.2, 0.3]\nrotation_vector = [0.3, -0.2, 0.5]\n"
    "[[model.bodies]]\nname = \"lower\"\nmass = 2.0\ninertia_diagonal = [0.2, 0.2, 0.3]\n"
    "position = [0.7, -0.4, 0.1]\n";

// Two bodies without a pose (for body-frame joints).
const std::string two_bare_bodies =
    "[model]\n"
    "[[model.bodies]]\nname = \"upper\"\nmass = 1.0\ninertia_diagonal = [0.1, 0.2, 0.25]\n"
    "[[model.bodies]]\nname = \"lower\"\nmass = 2.0\ninertia_diagonal = [0.2, 0.2, 0.3]\n";

// A model with one joint "j", world -> upper, given by `lines`.
Model world_joint(const std::string& lines) {
  return load(two_bodies + "[[model.joints]]\nname = \"j\"\nparent = \"world\"\nchild = \"upper\"\n" + lines);
}

Vec6 screw(const Vec3& w, const Vec3& v) {
  Vec6 s;
  s << w, v;
  return s;
}

// Points on the axis of a revolute screw stay where they are under exp(Y theta); a helical
// screw moves them by pitch * theta along the axis.
void check_axis_motion(const Vec6& Y, const Vec3& e, const Vec3& point, double pitch) {
  for (const double s : {-1.3, 0.0, 0.7, 2.5}) {
    for (const double theta : {0.4, -1.1, 2.9}) {
      const Vec3 p = point + s * e;
      const Vec3 moved = se3::transform_point(se3::exp(Vec6(Y * theta)), p);
      INFO("s = " << s << ", theta = " << theta);
      CHECK((moved - (p + pitch * theta * e)).norm() < 1e-12);
      // ... and the rotation is by theta about e.
      CHECK((se3::exp(Vec6(Y * theta)).R - so3::exp(Vec3(theta * e))).norm() < 1e-12);
    }
  }
}

}  // namespace

TEST_CASE("revolute joint: Y = (e, y x e), the point on the axis matters, not where along the axis",
          "[model][joints]") {
  const Vec3 e = Vec3(0.0, 2.0, 1.0).normalized(), y(1.0, 2.0, 3.0);
  const Model model = world_joint("type = \"revolute\"\naxis = [0, 2, 1]\npoint = [1, 2, 3]\n");
  REQUIRE(model.joints.size() == 1);
  const Joint& joint = model.joints[0];
  CHECK(joint.name == "j");
  CHECK(joint.type == JointType::revolute);
  CHECK(joint.parent == Joint::world);
  CHECK(joint.child == 0);
  REQUIRE(joint.dof() == 1);
  CHECK((joint.screws[0] - screw(e, y.cross(e))).norm() < 1e-14);
  CHECK(std::abs(joint.screws[0].head<3>().norm() - 1.0) < 1e-15);  // the axis is normalized
  check_axis_motion(joint.screws[0], e, y, 0.0);
  CHECK(joint.initial_position.size() == 1);
  CHECK(joint.initial_position(0) == 0.0);
  CHECK(joint.initial_velocity(0) == 0.0);

  // Another point on the same axis gives the same screw.
  const Vec3 y2 = y + 3.7 * e;
  const Model shifted = world_joint("type = \"revolute\"\naxis = [0, 2, 1]\npoint = " + vec(y2) + "\n");
  CHECK((shifted.joints[0].screws[0] - joint.screws[0]).norm() < 1e-14);

  // A point off the axis changes the moment part by d x e.
  const Vec3 d(0.5, -0.2, 0.4);
  const Model moved = world_joint("type = \"revolute\"\naxis = [0, 2, 1]\npoint = " + vec(y + d) + "\n");
  const Vec6 difference = moved.joints[0].screws[0] - joint.screws[0];
  CHECK(difference.head<3>().norm() < 1e-15);
  CHECK((difference.tail<3>() - d.cross(e)).norm() < 1e-14);
  CHECK(difference.tail<3>().norm() > 0.1);

  // Without a point the axis passes through the world origin.
  const Model origin = world_joint("type = \"revolute\"\naxis = [0, 2, 1]\n");
  CHECK((origin.joints[0].screws[0] - screw(e, Vec3::Zero())).norm() < 1e-15);
}

TEST_CASE("prismatic joint: Y = (0, e)", "[model][joints]") {
  const Vec3 e = Vec3(1.0, 1.0, 0.0).normalized();
  const Model model = world_joint("type = \"prismatic\"\naxis = [3, 3, 0]\n");
  REQUIRE(model.joints[0].dof() == 1);
  CHECK(model.joints[0].type == JointType::prismatic);
  CHECK((model.joints[0].screws[0] - screw(Vec3::Zero(), e)).norm() < 1e-15);
  // exp(Y q) translates every point by q e.
  const Pose moved = se3::exp(Vec6(model.joints[0].screws[0] * 0.8));
  CHECK((moved.R - Mat3::Identity()).norm() < 1e-15);
  CHECK((moved.r - 0.8 * e).norm() < 1e-15);
}

TEST_CASE("helical joint: Y = (e, y x e + h e)", "[model][joints]") {
  const Vec3 e = Vec3(0.0, 0.0, -1.0), y(0.4, -0.3, 2.0);
  const double h = 0.025;
  const Model model = world_joint("type = \"helical\"\naxis = [0, 0, -5]\npoint = [0.4, -0.3, 2.0]\npitch = 0.025\n");
  REQUIRE(model.joints[0].dof() == 1);
  CHECK(model.joints[0].type == JointType::helical);
  const Vec6& Y = model.joints[0].screws[0];
  CHECK((Y - screw(e, y.cross(e) + h * e)).norm() < 1e-15);
  check_axis_motion(Y, e, y, h);
  // Independent of the point along the axis, dependent on its distance from the axis.
  const Model shifted =
      world_joint("type = \"helical\"\naxis = [0, 0, -5]\npoint = [0.4, -0.3, -7.0]\npitch = 0.025\n");
  CHECK((shifted.joints[0].screws[0] - Y).norm() < 1e-15);
  const Model off = world_joint("type = \"helical\"\naxis = [0, 0, -5]\npoint = [0.5, -0.3, 2.0]\npitch = 0.025\n");
  CHECK((off.joints[0].screws[0] - Y).norm() > 0.09);
  // A negative pitch (left-handed thread) is allowed; pitch 0 is a revolute joint.
  const Model left = world_joint("type = \"helical\"\naxis = [0, 0, -5]\npoint = [0.4, -0.3, 2.0]\npitch = -0.025\n");
  CHECK((left.joints[0].screws[0] - screw(e, y.cross(e) - h * e)).norm() < 1e-15);
  const Model flat = world_joint("type = \"helical\"\naxis = [0, 0, -5]\npoint = [0.4, -0.3, 2.0]\npitch = 0\n");
  CHECK((flat.joints[0].screws[0] - revolute_screw(e, y)).norm() < 1e-15);
  // The pitch is required.
  CHECK_THROWS_WITH(world_joint("type = \"helical\"\naxis = [0, 0, 1]\n"),
                    Contains("missing required key 'model.joints.0.pitch'"));
}

TEST_CASE("cylindrical joint: a revolute and a prismatic screw on one axis", "[model][joints]") {
  const Vec3 e = Vec3(1.0, -2.0, 2.0) / 3.0, y(0.3, 0.2, 0.1);
  const Model model = world_joint("type = \"cylindrical\"\naxis = [1, -2, 2]\npoint = [0.3, 0.2, 0.1]\n");
  const Joint& joint = model.joints[0];
  CHECK(joint.type == JointType::cylindrical);
  REQUIRE(joint.dof() == 2);
  CHECK((joint.screws[0] - screw(e, y.cross(e))).norm() < 1e-15);
  CHECK((joint.screws[1] - screw(Vec3::Zero(), e)).norm() < 1e-15);
  CHECK(joint.initial_position.size() == 2);
  CHECK(joint.initial_velocity.size() == 2);
  // The two screws commute (same axis): the joint is a helical joint of any pitch.
  CHECK(se3::bracket(joint.screws[0], joint.screws[1]).norm() < 1e-15);
}

TEST_CASE("universal joint: two revolute screws through the point", "[model][joints]") {
  const Vec3 a = Vec3(1.0, 0.0, 0.0), b = Vec3(0.0, 1.0, 1.0).normalized(), y(0.0, 0.0, 0.5);
  const Model model = world_joint("type = \"universal\"\naxes = [[2, 0, 0], [0, 1, 1]]\npoint = [0, 0, 0.5]\n");
  const Joint& joint = model.joints[0];
  CHECK(joint.type == JointType::universal);
  REQUIRE(joint.dof() == 2);
  CHECK((joint.screws[0] - screw(a, y.cross(a))).norm() < 1e-15);
  CHECK((joint.screws[1] - screw(b, y.cross(b))).norm() < 1e-15);
  // The centre stays fixed whatever the two angles.
  const Pose motion = se3::compose(se3::exp(Vec6(joint.screws[0] * 0.7)), se3::exp(Vec6(joint.screws[1] * -1.2)));
  CHECK((se3::transform_point(motion, y) - y).norm() < 1e-14);
}

TEST_CASE("spherical joint: revolute screws about the world x, y, z axes through the centre", "[model][joints]") {
  const Vec3 y(1.0, -1.0, 2.0);
  const Model model = world_joint("type = \"spherical\"\npoint = [1, -1, 2]\n");
  const Joint& joint = model.joints[0];
  CHECK(joint.type == JointType::spherical);
  REQUIRE(joint.dof() == 3);
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = Vec3::Unit(k);
    CHECK((joint.screws[static_cast<std::size_t>(k)] - screw(e, y.cross(e))).norm() < 1e-15);
  }
  Pose motion;
  for (int k = 0; k < 3; ++k)
    motion = se3::compose(motion, se3::exp(Vec6(joint.screws[static_cast<std::size_t>(k)] * (0.3 + 0.4 * k))));
  CHECK((se3::transform_point(motion, y) - y).norm() < 1e-14);
  CHECK(joint.initial_position.size() == 3);
}

TEST_CASE("planar joint: translations along u, w in the plane, then a rotation about the normal", "[model][joints]") {
  const Vec3 n = Vec3(0.0, 3.0, 4.0) / 5.0, y(0.2, 0.0, -0.1);
  const Model model = world_joint("type = \"planar\"\nnormal = [0, 3, 4]\npoint = [0.2, 0, -0.1]\n");
  const Joint& joint = model.joints[0];
  CHECK(joint.type == JointType::planar);
  REQUIRE(joint.dof() == 3);
  const Vec3 u = joint.screws[0].tail<3>(), w = joint.screws[1].tail<3>();
  CHECK(joint.screws[0].head<3>().norm() == 0.0);
  CHECK(joint.screws[1].head<3>().norm() == 0.0);
  CHECK(std::abs(u.norm() - 1.0) < 1e-15);
  CHECK(std::abs(w.norm() - 1.0) < 1e-15);
  CHECK(std::abs(u.dot(n)) < 1e-15);
  CHECK(std::abs(w.dot(n)) < 1e-15);
  CHECK((u.cross(w) - n).norm() < 1e-15);  // (u, w, n) right-handed
  CHECK((joint.screws[2] - screw(n, y.cross(n))).norm() < 1e-15);
  // Every motion keeps the normal and the plane's offset along it.
  Pose motion;
  for (int k = 0; k < 3; ++k)
    motion = se3::compose(motion, se3::exp(Vec6(joint.screws[static_cast<std::size_t>(k)] * (0.5 - 0.6 * k))));
  CHECK((motion.R * n - n).norm() < 1e-14);
  CHECK(std::abs(n.dot(se3::transform_point(motion, y) - y)) < 1e-14);
}

TEST_CASE("fixed joint: no screw, no coordinates", "[model][joints]") {
  const Model model = world_joint("type = \"fixed\"\n");
  const Joint& joint = model.joints[0];
  CHECK(joint.type == JointType::fixed);
  CHECK(joint.dof() == 0);
  CHECK(joint.initial_position.size() == 0);
  CHECK(joint.initial_velocity.size() == 0);
  CHECK(model.joint_dof() == 0);
  CHECK(model.free_bodies() == std::vector<std::size_t>{1});
  CHECK(to_string(JointType::fixed) == "fixed");
}

TEST_CASE("initial_position and initial_velocity: scalars for one DoF, arrays for any", "[model][joints]") {
  const Model model = load(
      two_bodies +
      "[[model.joints]]\nname = \"a\"\ntype = \"revolute\"\nparent = \"world\"\nchild = \"upper\"\naxis = [0, 0, 1]\n"
      "initial_position = 0.5\ninitial_velocity = [-2.0]\n"
      "[[model.joints]]\nname = \"b\"\ntype = \"spherical\"\nparent = \"upper\"\nchild = \"lower\"\n"
      "initial_position = [0.1, 0.2, 0.3]\ninitial_velocity = [1, -1, 2]\n");
  REQUIRE(model.joints.size() == 2);
  CHECK(model.joints[0].initial_position == Eigen::VectorXd::Constant(1, 0.5));
  CHECK(model.joints[0].initial_velocity == Eigen::VectorXd::Constant(1, -2.0));
  CHECK(model.joints[1].initial_position == Eigen::Vector3d(0.1, 0.2, 0.3));
  CHECK(model.joints[1].initial_velocity == Eigen::Vector3d(1.0, -1.0, 2.0));  // integers are numbers
  CHECK(model.joint_dof() == 4);
  CHECK(model.free_bodies().empty());
  // An integer scalar, and an empty array for a fixed joint.
  const Model integer = world_joint("type = \"prismatic\"\naxis = [1, 0, 0]\ninitial_velocity = 3\n");
  CHECK(integer.joints[0].initial_velocity == Eigen::VectorXd::Constant(1, 3.0));
  const Model fixed = world_joint("type = \"fixed\"\ninitial_position = []\n");
  CHECK(fixed.joints[0].initial_position.size() == 0);
}

TEST_CASE("the body-frame form gives the same screws and reference poses as the world-frame form",
          "[model][joints]") {
  // One mechanism with every joint type, described twice: in the body frames (joint data in
  // the child frame, child pose relative to the parent) and in the world frame (poses and
  // joint data resolved in the world at q = 0, computed here). Spherical and planar joints
  // take their axes from the frame they are given in, so their children keep the world's
  // orientation (branch "s" below) for the two descriptions to coincide.
  struct Spec {
    const char* type;
    const char* parent;
    const char* child;
    Vec3 child_position, child_rotation;  // child in parent frame
    Vec3 axis, second_axis, point;        // in the child frame (axis = normal for planar)
    double pitch = 0.0;
  };
  const Vec3 o = Vec3::Zero();
  const std::vector<Spec> specs{
      {"revolute", "world", "b0", {0.1, 0.2, 0.3}, {0.3, -0.2, 0.5}, {0, 0, 1}, o, {0.05, 0.0, 0.0}},
      {"prismatic", "b0", "b1", {0.5, 0.0, 0.1}, {0.1, 0.4, -0.2}, {1, 1, 0}, o, o},
      {"helical", "b1", "b2", {0.0, -0.3, 0.2}, {-0.6, 0.1, 0.2}, {0, 1, 0}, o, {0.1, 0.0, 0.2}, 0.04},
      {"cylindrical", "b2", "b3", {0.2, 0.2, 0.0}, {0.0, 0.0, 1.2}, {1, 0, 1}, o, {0.0, 0.3, 0.0}},
      {"universal", "b3", "b4", {0.0, 0.0, 0.4}, {0.7, 0.0, 0.0}, {1, 0, 0}, {0, 1, 0}, {0.0, 0.0, -0.1}},
      {"fixed", "b4", "b5", {0.1, 0.0, 0.0}, {0.0, 0.2, 0.3}, o, o, o},
      {"revolute", "b5", "b6", {0.3, 0.1, -0.1}, {0.2, 0.2, 0.2}, {0, -1, 1}, o, {0.0, 0.1, 0.1}},
      {"spherical", "world", "s0", {1.0, 0.5, 0.0}, {0, 0, 0}, o, o, {0.1, -0.1, 0.2}},
      {"planar", "s0", "s1", {0.0, 0.4, 0.0}, {0, 0, 0}, {0.3, 0.0, 1.0}, o, {0.2, 0.0, 0.0}},
  };

  std::string bodies_bare = "[model]\n", bodies_posed = "[model]\n";
  std::string joints_body, joints_world;
  std::vector<std::pair<std::string, Pose>> poses;  // body poses at q = 0, computed here
  auto pose_of = [&](const std::string& name) {
    for (const auto& [n, pose] : poses)
      if (n == name) return pose;
    return Pose{};  // the world
  };
  for (std::size_t j = 0; j < specs.size(); ++j) {
    const Spec& spec = specs[j];
    Pose relative;
    relative.R = so3::exp(spec.child_rotation);
    relative.r = spec.child_position;
    const Pose parent = pose_of(spec.parent);
    const Pose child{parent.R * relative.R, parent.R * relative.r + parent.r};
    poses.emplace_back(spec.child, child);
    const std::string body = std::string("[[model.bodies]]\nname = \"") + spec.child +
                             "\"\nmass = 1.0\ninertia_diagonal = [0.1, 0.2, 0.25]\n";
    bodies_bare += body;
    bodies_posed += body + "position = " + vec(child.r) + "\nrotation_matrix = " + mat(child.R) + "\n";

    const std::string head = "[[model.joints]]\nname = \"j" + std::to_string(j) + "\"\ntype = \"" + spec.type +
                             "\"\nparent = \"" + spec.parent + "\"\nchild = \"" + spec.child + "\"\n";
    std::string local, world;
    const std::string type = spec.type;
    const Vec3 world_axis = child.R * spec.axis, world_point = se3::transform_point(child, spec.point);
    if (type == "universal") {
      local = "axes = [" + vec(spec.axis) + ", " + vec(spec.second_axis) + "]\n";
      world = "axes = [" + vec(world_axis) + ", " + vec(child.R * spec.second_axis) + "]\n";
    } else if (type == "planar") {
      local = "normal = " + vec(spec.axis) + "\n";
      world = "normal = " + vec(world_axis) + "\n";
    } else if (type != "spherical" && type != "fixed") {
      local = "axis = " + vec(spec.axis) + "\n";
      world = "axis = " + vec(world_axis) + "\n";
    }
    if (type != "prismatic" && type != "fixed") {
      local += "point = " + vec(spec.point) + "\n";
      world += "point = " + vec(world_point) + "\n";
    }
    if (type == "helical") {
      local += "pitch = " + number(spec.pitch) + "\n";
      world += "pitch = " + number(spec.pitch) + "\n";
    }
    joints_body += head + "frame = \"body\"\nchild_position = " + vec(spec.child_position) +
                   "\nchild_rotation_vector = " + vec(spec.child_rotation) + "\n" + local;
    joints_world += head + (j % 2 ? "frame = \"world\"\n" : "") + world;  // "world" is the default
  }
  const Model in_body = load(bodies_bare + joints_body);
  const Model in_world = load(bodies_posed + joints_world);
  REQUIRE(in_body.bodies.size() == specs.size());
  REQUIRE(in_body.joints.size() == specs.size());
  REQUIRE(in_world.joints.size() == specs.size());
  for (std::size_t b = 0; b < specs.size(); ++b) {
    INFO("body " << in_body.bodies[b].name);
    const Pose& expected = poses[b].second;
    CHECK((in_body.bodies[b].reference_pose.R - expected.R).norm() < 1e-14);
    CHECK((in_body.bodies[b].reference_pose.r - expected.r).norm() < 1e-14);
    CHECK((in_world.bodies[b].reference_pose.R - expected.R).norm() < 1e-14);
    CHECK((in_world.bodies[b].reference_pose.r - expected.r).norm() < 1e-14);
  }
  for (std::size_t j = 0; j < specs.size(); ++j) {
    const Joint &a = in_body.joints[j], &b = in_world.joints[j];
    INFO("joint " << a.name << " (" << to_string(a.type) << ")");
    CHECK(a.name == b.name);
    CHECK(a.type == b.type);
    CHECK(a.parent == b.parent);
    CHECK(a.child == b.child);
    REQUIRE(a.dof() == b.dof());
    for (std::size_t k = 0; k < a.dof(); ++k) CHECK((a.screws[k] - b.screws[k]).norm() < 1e-13);
  }
  CHECK(in_body.joint_dof() == 1 + 1 + 1 + 2 + 2 + 0 + 1 + 3 + 3);

  // The body-frame screws are the documented world-frame forms of the child-frame data.
  const Pose& A2 = poses[2].second;  // helical
  const Vec3 e2 = A2.R * specs[2].axis.normalized(), y2 = se3::transform_point(A2, specs[2].point);
  CHECK((in_body.joints[2].screws[0] - screw(e2, y2.cross(e2) + specs[2].pitch * e2)).norm() < 1e-14);
  const Pose& A1 = poses[1].second;  // prismatic
  CHECK((in_body.joints[1].screws[0] - screw(Vec3::Zero(), A1.R * specs[1].axis.normalized())).norm() < 1e-14);
}

TEST_CASE("a body-frame spherical joint turns about the child frame's axes", "[model][joints]") {
  const Model model = load(two_bare_bodies +
                           "[[model.joints]]\nname = \"ball\"\ntype = \"spherical\"\nframe = \"body\"\n"
                           "parent = \"world\"\nchild = \"upper\"\nchild_position = [0.5, 0.0, 1.0]\n"
                           "child_rotation_vector = [0.0, 0.0, 1.5707963267948966]\npoint = [0.0, 0.0, 0.2]\n"
                           "[[model.joints]]\nname = \"hinge\"\ntype = \"revolute\"\nframe = \"body\"\n"
                           "parent = \"upper\"\nchild = \"lower\"\naxis = [1, 0, 0]\n");
  const Pose A = model.bodies[0].reference_pose;
  CHECK((A.r - Vec3(0.5, 0.0, 1.0)).norm() < 1e-15);
  const Vec3 centre = se3::transform_point(A, Vec3(0.0, 0.0, 0.2));
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = A.R.col(k);
    CHECK((model.joints[0].screws[static_cast<std::size_t>(k)] - screw(e, centre.cross(e))).norm() < 1e-14);
  }
  // Defaults: the child sits at the parent's frame, the point is the child origin.
  CHECK((model.bodies[1].reference_pose.R - A.R).norm() < 1e-15);
  CHECK((model.bodies[1].reference_pose.r - A.r).norm() < 1e-15);
  const Vec3 e = A.R * Vec3::UnitX();
  CHECK((model.joints[1].screws[0] - screw(e, A.r.cross(e))).norm() < 1e-14);
}

TEST_CASE("body-frame joints listed before their parent's joint are resolved", "[model][joints]") {
  const Model model = load(two_bare_bodies +
                           "[[model.joints]]\nname = \"elbow\"\ntype = \"revolute\"\nframe = \"body\"\n"
                           "parent = \"upper\"\nchild = \"lower\"\nchild_position = [1, 0, 0]\naxis = [0, 0, 1]\n"
                           "[[model.joints]]\nname = \"shoulder\"\ntype = \"revolute\"\nframe = \"body\"\n"
                           "parent = \"world\"\nchild = \"upper\"\nchild_position = [0, 0, 2]\n"
                           "child_rotation_vector = [0, 0, 1.5707963267948966]\naxis = [0, 0, 1]\n");
  CHECK((model.bodies[0].reference_pose.r - Vec3(0, 0, 2)).norm() < 1e-15);
  CHECK((model.bodies[1].reference_pose.r - Vec3(0, 1, 2)).norm() < 1e-15);
  CHECK((model.joints[0].screws[0] - screw(Vec3::UnitZ(), Vec3(0, 1, 2).cross(Vec3::UnitZ()))).norm() < 1e-15);
}

TEST_CASE("joint errors name the file, line, key and joint", "[model][joints][errors]") {
  const std::string joint_head = "[[model.joints]]\nname = \"shoulder\"\n";

  SECTION("unknown parent body, with the nearest name") {
    const std::string text = two_bodies + joint_head + "type = \"revolute\"\nparent = \"uper\"\nchild = \"lower\"\naxis = [0, 0, 1]\n";
    CHECK_THROWS_AS(load(text), ConfigError);
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "parent = \"uper\"")) &&
                                      Contains("model.joints.0.parent") && Contains("joint 'shoulder'") &&
                                      Contains("unknown body 'uper'") && Contains("did you mean 'upper'?") &&
                                      Contains("'world'"));
  }
  SECTION("unknown child body, with the nearest name") {
    const std::string text = two_bodies + joint_head + "type = \"revolute\"\nparent = \"world\"\nchild = \"lowr\"\naxis = [0, 0, 1]\n";
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "child = \"lowr\"")) &&
                                      Contains("model.joints.0.child") && Contains("joint 'shoulder'") &&
                                      Contains("unknown body 'lowr'") && Contains("did you mean 'lower'?"));
  }
  SECTION("parent and child the same body") {
    const std::string text = two_bodies + joint_head + "type = \"revolute\"\nparent = \"upper\"\nchild = \"upper\"\naxis = [0, 0, 1]\n";
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "child = \"upper\"")) &&
                                      Contains("model.joints.0.child") && Contains("joint 'shoulder'") &&
                                      Contains("parent and child are the same body"));
  }
  SECTION("zero axis") {
    for (const char* type : {"revolute", "prismatic", "helical", "cylindrical"}) {
      const std::string text = two_bodies + joint_head + "type = \"" + type +
                               "\"\nparent = \"world\"\nchild = \"upper\"\npitch = 0.1\naxis = [0, 0, 0]\n";
      INFO(type);
      CHECK_THROWS_WITH(load(text), Contains(location_of(text, "axis = [0, 0, 0]")) &&
                                        Contains("model.joints.0.axis") && Contains("joint 'shoulder'") &&
                                        Contains("the axis is zero"));
    }
    const std::string planar = two_bodies + joint_head + "type = \"planar\"\nparent = \"world\"\nchild = \"upper\"\nnormal = [0, 0, 0]\n";
    CHECK_THROWS_WITH(load(planar), Contains(location_of(planar, "normal = [0, 0, 0]")) &&
                                        Contains("model.joints.0.normal") && Contains("joint 'shoulder'") &&
                                        Contains("the axis is zero"));
    const std::string universal = two_bodies + joint_head +
                                  "type = \"universal\"\nparent = \"world\"\nchild = \"upper\"\naxes = [[0, 0, 0], [0, 1, 0]]\n";
    CHECK_THROWS_WITH(load(universal), Contains(location_of(universal, "axes = ")) &&
                                           Contains("model.joints.0.axes") && Contains("joint 'shoulder'") &&
                                           Contains("an axis is zero"));
  }
  SECTION("parallel universal axes") {
    const std::string text = two_bodies + joint_head +
                             "type = \"universal\"\nparent = \"world\"\nchild = \"upper\"\naxes = [[1, 0, 0], [-2, 0, 0]]\n";
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "axes = ")) && Contains("model.joints.0.axes") &&
                                      Contains("joint 'shoulder'") && Contains("the two axes are parallel"));
    const std::string three = two_bodies + joint_head +
                              "type = \"universal\"\nparent = \"world\"\nchild = \"upper\"\naxes = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n";
    CHECK_THROWS_WITH(load(three), Contains("model.joints.0.axes") && Contains("expected two axes"));
  }
  SECTION("wrong number of initial values") {
    const std::string scalar = two_bodies + joint_head +
                               "type = \"universal\"\nparent = \"world\"\nchild = \"upper\"\naxes = [[1, 0, 0], [0, 1, 0]]\n"
                               "initial_position = 0.3\n";
    CHECK_THROWS_WITH(load(scalar), Contains(location_of(scalar, "initial_position")) &&
                                        Contains("model.joints.0.initial_position") && Contains("joint 'shoulder'") &&
                                        Contains("expected 2 value(s)") && Contains("found 1"));
    const std::string array = two_bodies + joint_head +
                              "type = \"revolute\"\nparent = \"world\"\nchild = \"upper\"\naxis = [1, 0, 0]\n"
                              "initial_velocity = [1.0, 2.0]\n";
    CHECK_THROWS_WITH(load(array), Contains(location_of(array, "initial_velocity")) &&
                                       Contains("model.joints.0.initial_velocity") && Contains("joint 'shoulder'") &&
                                       Contains("expected 1 value(s)") && Contains("found 2"));
    const std::string fixed = two_bodies + joint_head + "type = \"fixed\"\nparent = \"world\"\nchild = \"upper\"\n"
                                                        "initial_velocity = 1.0\n";
    CHECK_THROWS_WITH(load(fixed), Contains("model.joints.0.initial_velocity") && Contains("expected 0 value(s)"));
  }
  SECTION("duplicate joint names") {
    const std::string text = two_bodies + joint_head +
                             "type = \"revolute\"\nparent = \"world\"\nchild = \"upper\"\naxis = [1, 0, 0]\n" +
                             joint_head + "type = \"revolute\"\nparent = \"upper\"\nchild = \"lower\"\naxis = [1, 0, 0]\n";
    const auto second = text.find("name = \"shoulder\"", text.find("name = \"shoulder\"") + 1);
    long line = 1;
    for (std::size_t i = 0; i < second; ++i) line += text[i] == '\n';
    CHECK_THROWS_WITH(load(text), Contains(std::string(file_name) + ":" + std::to_string(line) + ":") &&
                                      Contains("model.joints.1.name") && Contains("duplicate joint name 'shoulder'"));
  }
  SECTION("unknown type, with the list of types") {
    const std::string text = two_bodies + joint_head + "type = \"revolut\"\nparent = \"world\"\nchild = \"upper\"\n";
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "type = \"revolut\"")) &&
                                      Contains("model.joints.0.type") && Contains("'revolut'") &&
                                      Contains("revolute, prismatic, helical, cylindrical, universal, spherical, "
                                               "planar, fixed") &&
                                      Contains("did you mean 'revolute'?"));
  }
  SECTION("child_position without frame = \"body\"") {
    const std::string text = two_bare_bodies + joint_head +
                             "type = \"revolute\"\nparent = \"world\"\nchild = \"upper\"\naxis = [1, 0, 0]\n"
                             "child_position = [0, 0, 1]\n";
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "child_position")) &&
                                      Contains("model.joints.0.child_position") && Contains("joint 'shoulder'") &&
                                      Contains("frame = \"body\""));
    const std::string world = two_bare_bodies + joint_head +
                              "type = \"revolute\"\nframe = \"world\"\nparent = \"world\"\nchild = \"upper\"\naxis = [1, 0, 0]\n"
                              "child_rotation_vector = [0, 0, 1]\n";
    CHECK_THROWS_WITH(load(world), Contains(location_of(world, "child_rotation_vector")) &&
                                       Contains("model.joints.0.child_rotation_vector") && Contains("joint 'shoulder'"));
  }
  SECTION("a body-frame joint on a body that also gives its position") {
    // two_bodies gives "lower" a position.
    const std::string text = two_bodies + joint_head +
                             "type = \"revolute\"\nframe = \"body\"\nparent = \"upper\"\nchild = \"lower\"\naxis = [1, 0, 0]\n";
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "frame = \"body\"")) && Contains("model.joints.0.frame") &&
                                      Contains("joint 'shoulder'") && Contains("body 'lower'") &&
                                      Contains("position"));
    // A rotation alone counts too.
    const std::string rotated = two_bare_bodies + "rotation_vector = [0, 0, 1]\n" + joint_head +
                                "type = \"revolute\"\nframe = \"body\"\nparent = \"upper\"\nchild = \"lower\"\naxis = [1, 0, 0]\n";
    CHECK_THROWS_WITH(load(rotated), Contains("model.joints.0.frame") && Contains("body 'lower'"));
  }
  SECTION("an unknown frame") {
    const std::string text = two_bare_bodies + joint_head +
                             "type = \"revolute\"\nframe = \"child\"\nparent = \"world\"\nchild = \"upper\"\naxis = [1, 0, 0]\n";
    CHECK_THROWS_WITH(load(text), Contains(location_of(text, "frame = \"child\"")) &&
                                      Contains("model.joints.0.frame") && Contains("world, body"));
  }
}

// The unknown-type message lists the types and gives the key path, but unlike the other
// joint errors it does not say which joint (only its index in model.joints).
TEST_CASE("the unknown-type error names the joint", "[model][joints][errors]") {
  const std::string text = two_bodies +
                           "[[model.joints]]\nname = \"shoulder\"\ntype = \"revolut\"\nparent = \"world\"\nchild = \"upper\"\n";
  CHECK_THROWS_WITH(load(text), Contains("joint 'shoulder'"));
}
