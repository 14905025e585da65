#include "random_trees.hpp"

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <utility>

namespace liembs::testing {

namespace {

double uniform(std::mt19937& gen, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen); }

Vec3 uniform_vector(std::mt19937& gen, double scale) {
  return Vec3(uniform(gen, -scale, scale), uniform(gen, -scale, scale), uniform(gen, -scale, scale));
}

Vec3 unit_vector(std::mt19937& gen) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Vec3 e;
  do {
    e = Vec3(normal(gen), normal(gen), normal(gen));
  } while (e.norm() < 1e-3);
  return e.normalized();
}

// A unit vector orthogonal to the unit vector e.
Vec3 orthogonal_unit_vector(std::mt19937& gen, const Vec3& e) {
  Vec3 w;
  do {
    const Vec3 d = unit_vector(gen);
    w = d - d.dot(e) * e;
  } while (w.norm() < 1e-3);
  return w.normalized();
}

// Uniform rotation from a normalized Gaussian quaternion.
Mat3 random_rotation(std::mt19937& gen) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::Quaterniond q;
  do {
    q = Eigen::Quaterniond(normal(gen), normal(gen), normal(gen), normal(gen));
  } while (q.norm() < 1e-3);
  return q.normalized().toRotationMatrix();
}

RigidBody random_body(std::mt19937& gen, std::size_t index) {
  RigidBody body;
  body.name = "body" + std::to_string(index);
  body.mass = uniform(gen, 0.5, 2.0);
  body.center_of_mass = uniform_vector(gen, 0.3);
  // Principal moments of a mass distribution with second moments s_x, s_y, s_z > 0:
  // (s_y + s_z, s_x + s_z, s_x + s_y) satisfy the triangle inequality strictly.
  const Vec3 s = body.mass * Vec3(uniform(gen, 0.01, 0.1), uniform(gen, 0.01, 0.1), uniform(gen, 0.01, 0.1));
  const Vec3 principal(s.y() + s.z(), s.x() + s.z(), s.x() + s.y());
  const Mat3 R = random_rotation(gen);
  body.inertia = R * principal.asDiagonal() * R.transpose();
  body.inertia = 0.5 * (body.inertia + body.inertia.transpose()).eval();
  body.reference_pose.R = random_rotation(gen);
  body.reference_pose.r = uniform_vector(gen, 1.0);
  return body;
}

std::vector<Vec6> random_screws(std::mt19937& gen, JointType type, const Vec3& point) {
  const Vec3 e = unit_vector(gen);
  switch (type) {
    case JointType::revolute: return {revolute_screw(e, point)};
    case JointType::prismatic: return {prismatic_screw(e)};
    case JointType::helical: {
      double pitch = uniform(gen, -0.3, 0.3);
      if (std::abs(pitch) < 0.05) pitch = std::copysign(0.05, pitch);
      return {helical_screw(e, point, pitch)};
    }
    case JointType::cylindrical: return {revolute_screw(e, point), prismatic_screw(e)};
    case JointType::universal: return {revolute_screw(e, point), revolute_screw(orthogonal_unit_vector(gen, e), point)};
    case JointType::spherical:
      return {revolute_screw(Vec3::UnitX(), point), revolute_screw(Vec3::UnitY(), point),
              revolute_screw(Vec3::UnitZ(), point)};
    case JointType::planar: {
      const Vec3 u = orthogonal_unit_vector(gen, e);
      const Vec3 w = e.cross(u);
      return {prismatic_screw(u), prismatic_screw(w), revolute_screw(u.cross(w), point)};
    }
    case JointType::fixed: return {};
  }
  return {};
}

}  // namespace

std::vector<JointType> moving_joint_types() {
  return {JointType::revolute,  JointType::prismatic, JointType::helical, JointType::cylindrical,
          JointType::universal, JointType::spherical, JointType::planar};
}

std::vector<JointType> all_joint_types() {
  std::vector<JointType> types = moving_joint_types();
  types.push_back(JointType::fixed);
  return types;
}

Model random_tree_model(unsigned seed, const RandomTreeOptions& options) {
  std::mt19937 gen(seed);
  Model model;
  model.gravity = options.gravity;
  for (std::size_t b = 0; b < options.bodies; ++b) model.bodies.push_back(random_body(gen, b));

  const std::vector<JointType> types = options.joint_types.empty() ? moving_joint_types() : options.joint_types;
  for (std::size_t child = options.floating_base ? 1 : 0; child < options.bodies; ++child) {
    Joint joint;
    joint.name = "joint" + std::to_string(child);
    joint.child = child;
    if (child == 0) {
      joint.parent = Joint::world;
    } else if (!options.branched) {
      joint.parent = child - 1;
    } else {
      // Branched: any earlier body, or (fixed base) the world as a further root branch.
      const int lowest = options.floating_base ? 0 : -1;
      const int pick = std::uniform_int_distribution<int>(lowest, static_cast<int>(child) - 1)(gen);
      joint.parent = pick < 0 ? Joint::world : static_cast<std::size_t>(pick);
    }
    joint.type = types[std::uniform_int_distribution<std::size_t>(0, types.size() - 1)(gen)];
    // Axis point (or centre) near the child's reference position.
    const Vec3 point = model.bodies[child].reference_pose.r + uniform_vector(gen, 0.3);
    joint.screws = random_screws(gen, joint.type, point);
    joint.initial_position = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
    joint.initial_velocity = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
    model.joints.push_back(joint);
  }
  return model;
}

RandomTreeOptions tree_options(std::size_t bodies, bool branched, bool floating_base,
                               std::vector<JointType> joint_types) {
  RandomTreeOptions options;
  options.bodies = bodies;
  options.branched = branched;
  options.floating_base = floating_base;
  options.joint_types = std::move(joint_types);
  return options;
}

std::vector<TreeVariant> tree_variants() {
  std::vector<TreeVariant> variants{{"fixed chain", tree_options(5, false, false)},
                                    {"fixed branched tree", tree_options(7, true, false)},
                                    {"floating chain", tree_options(4, false, true)},
                                    {"floating branched tree", tree_options(7, true, true)}};
  for (const JointType type : all_joint_types()) {
    const std::string name(to_string(type));
    variants.push_back({"fixed chain of " + name + " joints", tree_options(3, false, false, {type})});
    variants.push_back({"floating chain of " + name + " joints", tree_options(3, false, true, {type})});
  }
  return variants;
}

TreeState random_state(const KinematicTree& tree, unsigned seed) {
  std::mt19937 gen(seed);
  TreeState state;
  if (tree.floating_base) {
    state.base.R = random_rotation(gen);
    state.base.r = uniform_vector(gen, 1.0);
    state.base_twist << uniform_vector(gen, 1.0), uniform_vector(gen, 1.0);
  }
  state.q.resize(tree.dof());
  state.qd.resize(tree.dof());
  for (int i = 0; i < tree.dof(); ++i) state.q(i) = uniform(gen, -std::numbers::pi, std::numbers::pi);
  for (int i = 0; i < tree.dof(); ++i) state.qd(i) = uniform(gen, -1.0, 1.0);
  return state;
}

Eigen::VectorXd random_vector(Eigen::Index n, unsigned seed, double scale) {
  std::mt19937 gen(seed);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = uniform(gen, -scale, scale);
  return v;
}

Model with_loads(Model model, unsigned seed, bool world_frame) {
  const Eigen::VectorXd values = random_vector(12 * static_cast<Eigen::Index>(model.bodies.size()), seed);
  for (std::size_t b = 0; b < model.bodies.size(); ++b)
    for (const AppliedWrench::Frame frame : {AppliedWrench::Frame::body, AppliedWrench::Frame::world}) {
      if (frame == AppliedWrench::Frame::world && !world_frame) continue;
      AppliedWrench load;
      load.body = b;
      load.frame = frame;
      const Eigen::Index at = 12 * static_cast<Eigen::Index>(b) + (frame == AppliedWrench::Frame::world ? 6 : 0);
      load.moment = values.segment<3>(at);
      load.force = values.segment<3>(at + 3);
      model.loads.push_back(load);
    }
  return model;
}

}  // namespace liembs::testing
