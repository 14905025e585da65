#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/util/nearest_name.hpp>

#include <Eigen/Eigenvalues>

#include <set>

namespace liembs {

Mat6 RigidBody::spatial_inertia() const {
  const Mat3 c = so3::hat(center_of_mass);
  Mat6 M;
  M.topLeftCorner<3, 3>() = inertia - mass * c * c;
  M.topRightCorner<3, 3>() = mass * c;
  M.bottomLeftCorner<3, 3>() = -mass * c;
  M.bottomRightCorner<3, 3>() = mass * Mat3::Identity();
  return M;
}

std::string_view to_string(JointType type) {
  switch (type) {
    case JointType::revolute: return "revolute";
    case JointType::prismatic: return "prismatic";
    case JointType::helical: return "helical";
    case JointType::cylindrical: return "cylindrical";
    case JointType::universal: return "universal";
    case JointType::spherical: return "spherical";
    case JointType::planar: return "planar";
    case JointType::fixed: return "fixed";
  }
  return "unknown";
}

Vec6 revolute_screw(const Vec3& axis, const Vec3& point) { return helical_screw(axis, point, 0.0); }

Vec6 prismatic_screw(const Vec3& axis) {
  Vec6 screw;
  screw << Vec3::Zero(), axis.normalized();
  return screw;
}

Vec6 helical_screw(const Vec3& axis, const Vec3& point, double pitch) {
  const Vec3 e = axis.normalized();
  Vec6 screw;
  screw << e, point.cross(e) + pitch * e;
  return screw;
}

std::size_t Model::joint_dof() const {
  std::size_t dof = 0;
  for (const auto& joint : joints) dof += joint.dof();
  return dof;
}

std::vector<std::size_t> Model::free_bodies() const {
  std::vector<bool> moved(bodies.size(), false);
  for (const auto& joint : joints) moved[joint.child] = true;
  std::vector<std::size_t> result;
  for (std::size_t i = 0; i < bodies.size(); ++i)
    if (!moved[i]) result.push_back(i);
  return result;
}

std::size_t Model::body_index(std::string_view name) const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].name == name) return i;
    names.push_back(bodies[i].name);
  }
  std::string message = "unknown body '" + std::string(name) + "'; bodies: " + join_names(names);
  const std::string suggestion = nearest_name(name, names);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  throw ModelError(message);
}

std::string check_inertia(const Mat3& inertia) {
  const double scale = inertia.cwiseAbs().maxCoeff();
  if (!(scale > 0.0) || !inertia.allFinite()) return "inertia tensor is zero or not finite";
  if ((inertia - inertia.transpose()).cwiseAbs().maxCoeff() > 1e-12 * scale)
    return "inertia tensor is not symmetric";
  const Eigen::SelfAdjointEigenSolver<Mat3> solver(inertia);
  const Vec3 principal = solver.eigenvalues();
  if (principal.minCoeff() <= 0.0) return "inertia tensor is not positive definite (principal moments " +
                                          std::to_string(principal(0)) + ", " + std::to_string(principal(1)) +
                                          ", " + std::to_string(principal(2)) + ")";
  // Each principal moment is at most the sum of the other two (equality for a flat body).
  const double tolerance = 1e-12 * principal.sum();
  for (int i = 0; i < 3; ++i)
    if (principal(i) > principal((i + 1) % 3) + principal((i + 2) % 3) + tolerance)
      return "principal moments violate the triangle inequality (" + std::to_string(principal(0)) + ", " +
             std::to_string(principal(1)) + ", " + std::to_string(principal(2)) + ")";
  return "";
}

namespace {

Mat3 read_rotation(const ConfigTable& body) {
  const std::vector<std::string> forms{"rotation_vector", "quaternion", "rotation_matrix"};
  int given = 0;
  for (const auto& form : forms) given += body.contains(form);
  if (given > 1) body.fail({}, "give at most one of rotation_vector, quaternion, rotation_matrix");
  if (body.contains("rotation_vector")) return so3::exp(body.vec3("rotation_vector"));
  if (body.contains("quaternion")) {
    const auto q = body.numbers("quaternion");
    if (q.size() != 4) body.fail("quaternion", "expected 4 numbers [w, x, y, z]");
    const Eigen::Quaterniond quaternion(q[0], q[1], q[2], q[3]);
    if (quaternion.norm() < 1e-12) body.fail("quaternion", "the quaternion is zero");
    return quaternion.normalized().toRotationMatrix();
  }
  if (body.contains("rotation_matrix")) {
    const Mat3 R = body.mat3("rotation_matrix");
    if ((R.transpose() * R - Mat3::Identity()).norm() > 1e-9 || R.determinant() < 0.0)
      body.fail("rotation_matrix", "not a rotation matrix (R^T R != 1 or det R != 1 to 1e-9)");
    return R;
  }
  return Mat3::Identity();
}

}  // namespace

Model load_model(const ConfigTable& table) {
  Model model;
  model.gravity = table.vec3_or("gravity", Vec3::Zero());
  const auto bodies = table.table_array("bodies");
  if (bodies.empty()) table.fail("bodies", "the model has no bodies: add at least one [[" + table.path_of("bodies") + "]]");

  std::set<std::string> names;
  for (const auto& body_table : bodies) {
    RigidBody body;
    body.name = body_table.string("name");
    if (body.name.empty()) body_table.fail("name", "body name is empty");
    if (!names.insert(body.name).second) body_table.fail("name", "duplicate body name '" + body.name + "'");
    const std::string who = "body '" + body.name + "': ";
    body.mass = body_table.number("mass", Range::positive());
    body.center_of_mass = body_table.vec3_or("center_of_mass", Vec3::Zero());
    if (body_table.contains("inertia") == body_table.contains("inertia_diagonal"))
      body_table.fail({}, who + "give exactly one of 'inertia' (3x3, about the centre of mass) or 'inertia_diagonal'");
    if (body_table.contains("inertia")) {
      body.inertia = body_table.mat3("inertia");
    } else {
      body.inertia = body_table.vec3("inertia_diagonal").asDiagonal();
    }
    const std::string problem = check_inertia(body.inertia);
    if (!problem.empty())
      body_table.fail(body_table.contains("inertia") ? "inertia" : "inertia_diagonal", who + problem);
    body.reference_pose.R = read_rotation(body_table);
    body.reference_pose.r = body_table.vec3_or("position", Vec3::Zero());
    body.initial_angular_velocity = body_table.vec3_or("angular_velocity", Vec3::Zero());
    body.initial_linear_velocity = body_table.vec3_or("linear_velocity", Vec3::Zero());
    model.bodies.push_back(body);
  }

  for (const auto& load : table.table_array("loads")) {
    AppliedWrench wrench;
    const std::string body = load.string("body");
    try {
      wrench.body = model.body_index(body);
    } catch (const ModelError& error) {
      load.fail("body", error.what());
    }
    wrench.frame = load.choice_or("frame", {"body", "world"}, "body") == "body" ? AppliedWrench::Frame::body
                                                                                 : AppliedWrench::Frame::world;
    wrench.moment = load.vec3_or("moment", Vec3::Zero());
    wrench.force = load.vec3_or("force", Vec3::Zero());
    model.loads.push_back(wrench);
  }
  return model;
}

}  // namespace liembs
