// Model loading and validation: errors name the body; spatial inertia properties.
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/model/model.hpp>

#include <catch2/catch.hpp>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {
Model load(const std::string& bodies) {
  auto document = ConfigDocument::from_string("[model]\n" + bodies, "model.toml");
  return load_model(document->root().table("model"));
}
const char* good_body =
    "[[model.bodies]]\nname = \"a\"\nmass = 2.0\ninertia_diagonal = [0.1, 0.2, 0.25]\n";
}  // namespace

TEST_CASE("a valid body is read with its pose and velocities", "[model]") {
  const Model model = load(std::string(good_body) +
                           "position = [1, 2, 3]\nrotation_vector = [0, 0, 1.5707963267948966]\n"
                           "angular_velocity = [0, 0, 1]\nlinear_velocity = [1, 0, 0]\n");
  REQUIRE(model.bodies.size() == 1);
  CHECK(model.bodies[0].reference_pose.r == Vec3(1, 2, 3));
  CHECK((model.bodies[0].reference_pose.R * Vec3::UnitX() - Vec3::UnitY()).norm() < 1e-15);
  CHECK(model.body_index("a") == 0);
  CHECK_THROWS_WITH(model.body_index("b"), Contains("unknown body 'b'") && Contains("bodies: a"));
}

TEST_CASE("invalid bodies are rejected with the body named", "[model]") {
  CHECK_THROWS_WITH(load("[[model.bodies]]\nname = \"a\"\nmass = 0\ninertia_diagonal = [1,1,1]\n"),
                    Contains("model.bodies.0.mass") && Contains("out of range"));
  CHECK_THROWS_WITH(load("[[model.bodies]]\nname = \"arm\"\nmass = 1\ninertia_diagonal = [1,1,-1]\n"),
                    Contains("body 'arm'") && Contains("not positive definite"));
  CHECK_THROWS_WITH(load("[[model.bodies]]\nname = \"rod\"\nmass = 1\ninertia_diagonal = [1,1,3]\n"),
                    Contains("body 'rod'") && Contains("triangle inequality"));
  CHECK_THROWS_WITH(load("[[model.bodies]]\nname = \"s\"\nmass = 1\ninertia = [[1,0.5,0],[0,1,0],[0,0,1]]\n"),
                    Contains("body 's'") && Contains("not symmetric"));
  CHECK_THROWS_WITH(load(std::string(good_body) + good_body), Contains("duplicate body name 'a'"));
  CHECK_THROWS_WITH(load(std::string(good_body) + "rotation_matrix = [[1,0,0],[0,1,0],[0,0,2]]\n"),
                    Contains("not a rotation matrix"));
  CHECK_THROWS_WITH(load(std::string(good_body) + "rotation_vector = [0,0,1]\nquaternion = [1,0,0,0]\n"),
                    Contains("at most one of"));
  CHECK_THROWS_WITH(load("gravity = [0, 0, -9.81]\n"), Contains("no bodies"));
  CHECK_THROWS_WITH(load(std::string(good_body) + "[[model.loads]]\nbody = \"b\"\nforce = [1,0,0]\n"),
                    Contains("model.loads.0.body") && Contains("unknown body 'b'"));
}

TEST_CASE("spatial inertia is the inertia about the body origin", "[model]") {
  RigidBody body;
  body.mass = 2.0;
  body.center_of_mass = Vec3(0.1, -0.2, 0.3);
  body.inertia = Vec3(0.1, 0.2, 0.25).asDiagonal();
  const Mat6 M = body.spatial_inertia();
  CHECK((M - M.transpose()).norm() < 1e-15);
  CHECK(M.llt().info() == Eigen::Success);
  // Equals Ad_X^T M_c Ad_X with X the pose of the COM frame in the body frame.
  Mat6 at_com = Mat6::Zero();
  at_com.topLeftCorner<3, 3>() = body.inertia;
  at_com.bottomRightCorner<3, 3>() = body.mass * Mat3::Identity();
  Pose com_in_body;
  com_in_body.r = body.center_of_mass;
  const Mat6 transformed = se3::Ad_inverse(com_in_body).transpose() * at_com * se3::Ad_inverse(com_in_body);
  CHECK((transformed - M).norm() < 1e-14);
}
