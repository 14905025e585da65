#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/util/nearest_name.hpp>


#include <Eigen/Eigenvalues>

#include <algorithm>
#include <filesystem>
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

std::string_view to_string(GeometricConstraint::Type type) {
  switch (type) {
    case GeometricConstraint::Type::dp1: return "DP1";
    case GeometricConstraint::Type::dp2: return "DP2";
    case GeometricConstraint::Type::distance: return "D";
    case GeometricConstraint::Type::coordinate_difference: return "CD";
  }
  return "unknown";
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

bool Model::is_conservative() const {
  if (!loads.empty() || has_prescribed_motion()) return false;
  for (const auto& constraint : constraints)
    if (constraint.f) return false;  // a driver: its constraint forces do work
  return true;
}

bool Model::has_prescribed_motion() const {
  return std::any_of(joints.begin(), joints.end(), [](const Joint& joint) { return !joint.prescribed.empty(); });
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

}  // namespace liembs
