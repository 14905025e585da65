// Joints as constraints (liembs/sim/joint_constraints.hpp), checked against their
// definitions: every joint type's rows vanish, with their velocity J V, along random
// motions of the joint; J is the derivative of g along the body-twist retraction
// C exp(e xi) (finite differences); eta = -J' V is minus the second derivative of g along
// motions with constant body twists; redundant rows of a planar loop are found.
#include <liembs/sim/joint_constraints.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>

#include <catch2/catch.hpp>

#include <random>

using namespace liembs;

namespace {

Vec3 random_vec3(std::mt19937& engine, double scale = 1.0) {
  std::uniform_real_distribution<double> uniform(-scale, scale);
  return {uniform(engine), uniform(engine), uniform(engine)};
}

Pose random_pose(std::mt19937& engine) {
  Pose pose;
  pose.R = so3::exp(random_vec3(engine, 2.0));
  pose.r = random_vec3(engine);
  return pose;
}

// A chain world -revolute-> link -(tested joint)-> tip, with random reference poses; the
// tested joint's screws are built from random world data as the TOML reader builds them.
Model chain_with(JointType type, std::mt19937& engine) {
  Model model;
  for (const char* name : {"link", "tip"}) {
    RigidBody body;
    body.name = name;
    body.reference_pose = random_pose(engine);
    model.bodies.push_back(body);
  }
  Joint base;
  base.name = "base";
  base.parent = Joint::world;
  base.child = 0;
  base.screws = {revolute_screw(random_vec3(engine).normalized(), random_vec3(engine))};
  model.joints.push_back(base);

  Joint joint;
  joint.name = "tested";
  joint.type = type;
  joint.parent = 0;
  joint.child = 1;
  const Vec3 point = random_vec3(engine), axis = random_vec3(engine).normalized();
  const Vec3 other = axis.cross(random_vec3(engine)).normalized();
  switch (type) {
    case JointType::revolute: joint.screws = {revolute_screw(axis, point)}; break;
    case JointType::prismatic: joint.screws = {prismatic_screw(axis)}; break;
    case JointType::cylindrical: joint.screws = {revolute_screw(axis, point), prismatic_screw(axis)}; break;
    case JointType::universal: joint.screws = {revolute_screw(axis, point), revolute_screw(other, point)}; break;
    case JointType::spherical:
      joint.screws = {revolute_screw(Vec3::UnitX(), point), revolute_screw(Vec3::UnitY(), point),
                      revolute_screw(Vec3::UnitZ(), point)};
      break;
    case JointType::planar:
      joint.screws = {prismatic_screw(other), prismatic_screw(axis.cross(other)), revolute_screw(axis, point)};
      break;
    case JointType::fixed: break;
    case JointType::helical: joint.screws = {helical_screw(axis, point, 0.1)}; break;
  }
  model.joints.push_back(joint);
  return model;
}

void randomize_joint_motion(Model& model, std::mt19937& engine) {
  std::uniform_real_distribution<double> uniform(-1.5, 1.5);
  for (Joint& joint : model.joints) {
    const auto n = static_cast<Eigen::Index>(joint.dof());
    joint.initial_position = Eigen::VectorXd::NullaryExpr(n, [&] { return uniform(engine); });
    joint.initial_velocity = Eigen::VectorXd::NullaryExpr(n, [&] { return uniform(engine); });
  }
}

Eigen::VectorXd stacked(const std::vector<Vec6>& twists) {
  Eigen::VectorXd v(6 * static_cast<Eigen::Index>(twists.size()));
  for (std::size_t i = 0; i < twists.size(); ++i) v.segment<6>(static_cast<Eigen::Index>(6 * i)) = twists[i];
  return v;
}

// Poses moved along constant body twists: C_i exp(t V_i).
std::vector<Pose> moved(const std::vector<Pose>& poses, const std::vector<Vec6>& twists, double t) {
  std::vector<Pose> out;
  for (std::size_t i = 0; i < poses.size(); ++i) out.push_back(se3::compose(poses[i], se3::exp(t * twists[i])));
  return out;
}

const std::vector<JointType> constraint_types{JointType::revolute,  JointType::prismatic, JointType::cylindrical,
                                              JointType::universal, JointType::spherical, JointType::planar,
                                              JointType::fixed};

}  // namespace

TEST_CASE("every joint type's constraint holds, at position and velocity level, along the joint's motions",
          "[constraints]") {
  std::mt19937 engine(11);
  for (const JointType type : constraint_types) {
    INFO(to_string(type));
    Model model = chain_with(type, engine);
    const JointConstraintSet constraints(model, {0, 1});
    const Eigen::Index expected_rows = 5 + (type == JointType::revolute || type == JointType::prismatic ? 5
                                            : type == JointType::spherical                              ? 3
                                            : type == JointType::universal || type == JointType::cylindrical ? 4
                                            : type == JointType::planar                                 ? 3
                                                                                                         : 6);
    CHECK(constraints.rows() == expected_rows);
    REQUIRE(constraints.blocks().size() == 2);
    CHECK(constraints.blocks()[1].name == "tested");
    for (int trial = 0; trial < 10; ++trial) {
      randomize_joint_motion(model, engine);
      std::vector<Pose> poses;
      std::vector<Vec6> twists;
      initial_body_motion(model, poses, twists);
      Eigen::VectorXd g, eta;
      Eigen::MatrixXd J;
      constraints.evaluate(poses, twists, &g, &J, &eta);
      CHECK(g.norm() < 1e-12);
      CHECK((J * stacked(twists)).norm() < 1e-12);
    }
  }
}

TEST_CASE("the constraint Jacobian and eta agree with finite differences at violated states", "[constraints]") {
  std::mt19937 engine(12);
  for (const JointType type : constraint_types) {
    INFO(to_string(type));
    const Model model = chain_with(type, engine);
    const JointConstraintSet constraints(model, {0, 1});
    // A generic state: random poses (the constraints are violated) and random twists.
    std::vector<Pose> poses{random_pose(engine), random_pose(engine)};
    std::vector<Vec6> twists(2);
    for (auto& twist : twists) twist << random_vec3(engine), random_vec3(engine);
    Eigen::VectorXd g, eta;
    Eigen::MatrixXd J;
    constraints.evaluate(poses, twists, &g, &J, &eta);
    CHECK(g.norm() > 1e-2);

    // J: central differences of g along C_i exp(e xi_i), one body-twist direction at a time.
    const double e = 1e-6;
    Eigen::MatrixXd numeric(J.rows(), 12);
    for (int column = 0; column < 12; ++column) {
      std::vector<Vec6> direction(2, Vec6::Zero());
      direction[static_cast<std::size_t>(column / 6)](column % 6) = 1.0;
      Eigen::VectorXd plus, minus;
      constraints.evaluate(moved(poses, direction, e), twists, &plus, nullptr, nullptr);
      constraints.evaluate(moved(poses, direction, -e), twists, &minus, nullptr, nullptr);
      numeric.col(column) = (plus - minus) / (2 * e);
    }
    CHECK((numeric - J).norm() < 1e-8 * std::max(1.0, J.norm()));

    // eta: along C_i exp(t V_i) the body twists are constant, so g'' = J V' + J' V = -eta.
    const double h = 1e-4;
    Eigen::VectorXd g_plus, g_minus;
    constraints.evaluate(moved(poses, twists, h), twists, &g_plus, nullptr, nullptr);
    constraints.evaluate(moved(poses, twists, -h), twists, &g_minus, nullptr, nullptr);
    const Eigen::VectorXd second_derivative = (g_plus - 2 * g + g_minus) / (h * h);
    CHECK((second_derivative + eta).norm() < 1e-5 * std::max(1.0, eta.norm()));
    // and g' = J V along the same motion
    CHECK(((g_plus - g_minus) / (2 * h) - J * stacked(twists)).norm() < 1e-6 * std::max(1.0, J.norm()));
  }
}

TEST_CASE("a helical joint has no constraint form and is refused by name", "[constraints][errors]") {
  std::mt19937 engine(13);
  const Model model = chain_with(JointType::helical, engine);
  CHECK_THROWS_AS(JointConstraintSet(model, {1}), ModelError);
  CHECK_THROWS_WITH(JointConstraintSet(model, {1}), Catch::Contains("joint 'tested' is helical"));
}

TEST_CASE("redundant rows: a closed planar loop keeps an independent set", "[constraints]") {
  // Four parallel revolute axes around a planar parallelogram: 20 rows, mobility 1 for 18
  // coordinates, so 3 rows are redundant (the out-of-plane ones).
  Model model;
  const std::vector<Vec3> corners{{0, 0, 0}, {0, 0, 0.2}, {0.4, 0, 0.2}, {0.4, 0, 0}};
  for (const char* name : {"crank", "coupler", "rocker"}) {
    RigidBody body;
    body.name = name;
    model.bodies.push_back(body);
  }
  const std::vector<std::pair<std::size_t, std::size_t>> ends{{Joint::world, 0}, {0, 1}, {1, 2}, {Joint::world, 2}};
  for (std::size_t k = 0; k < 4; ++k) {
    Joint joint;
    joint.name = std::string(1, static_cast<char>('A' + k));
    joint.parent = ends[k].first;
    joint.child = ends[k].second;
    joint.screws = {revolute_screw(Vec3::UnitY(), corners[k])};
    joint.initial_position = Eigen::VectorXd::Zero(1);
    joint.initial_velocity = Eigen::VectorXd::Zero(1);
    model.joints.push_back(joint);
  }
  JointConstraintSet constraints(model, {0, 1, 2, 3});
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  initial_body_motion(model, poses, twists);
  Eigen::MatrixXd J;
  constraints.evaluate(poses, twists, nullptr, &J, nullptr);
  const auto rows = independent_rows(J);
  CHECK(rows.size() == 17);
  constraints.select_rows(rows);
  CHECK(constraints.rows() == 17);
  Eigen::MatrixXd kept;
  constraints.evaluate(poses, twists, nullptr, &kept, nullptr);
  Eigen::FullPivLU<Eigen::MatrixXd> lu(kept);
  CHECK(lu.rank() == 17);
  REQUIRE_FALSE(constraints.dropped_rows().empty());
  Eigen::Index total = 0;
  for (const auto& block : constraints.blocks()) total += block.rows;
  CHECK(total == 17);
}
