// URDF -> MJCF for the MuJoCo peer, written from urdfdom's parse: the URDF frames map one to
// one onto MJCF bodies (body pos/quat = joint origin, joint axis in the body frame), so no
// LieMBS kinematics is involved. Only the coordinate order is taken from
// liembs::import_urdf_string (children written in that order, so MuJoCo numbers its dofs
// like LieMBS). Deep trees are split into <include> files: tinyxml2 9 (Debian 12) refuses
// documents nested more than 100 elements deep, and MuJoCo parses each included file on its
// own before grafting it in place.
#include <peers/peer_detail.hpp>

#include <urdf_parser/urdf_parser.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace liembs::peers {

namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string triple(double x, double y, double z) { return number(x) + " " + number(y) + " " + number(z); }

std::string quaternion_wxyz(const Eigen::Quaterniond& q) {
  return number(q.w()) + " " + number(q.x()) + " " + number(q.y()) + " " + number(q.z());
}

std::string attribute_pose(const urdf::Pose& pose) {
  const auto& p = pose.position;
  const auto& q = pose.rotation;
  return " pos=\"" + triple(p.x, p.y, p.z) + "\" quat=\"" + number(q.w) + " " + number(q.x) + " " + number(q.y) + " " +
         number(q.z) + "\"";
}

bool has_mass(const urdf::LinkConstSharedPtr& link) { return link->inertial && link->inertial->mass > 0.0; }

// <inertial> in principal axes: pos = centre of mass, quat = principal frame in the link
// frame, diaginertia = principal moments.
std::string inertial_xml(const urdf::Inertial& inertial, const std::string& indent) {
  const auto& o = inertial.origin;
  const Eigen::Quaterniond frame(o.rotation.w, o.rotation.x, o.rotation.y, o.rotation.z);
  Eigen::Quaterniond principal_frame = frame;
  Eigen::Vector3d moments(inertial.ixx, inertial.iyy, inertial.izz);
  if (inertial.ixy != 0.0 || inertial.ixz != 0.0 || inertial.iyz != 0.0) {
    Eigen::Matrix3d tensor;
    tensor << inertial.ixx, inertial.ixy, inertial.ixz, inertial.ixy, inertial.iyy, inertial.iyz, inertial.ixz,
        inertial.iyz, inertial.izz;
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver(tensor);
    Eigen::Matrix3d axes = solver.eigenvectors();
    if (axes.determinant() < 0.0) axes.col(2) *= -1.0;
    moments = solver.eigenvalues();
    principal_frame = frame * Eigen::Quaterniond(axes);
  }
  return indent + "<inertial pos=\"" + triple(o.position.x, o.position.y, o.position.z) + "\" quat=\"" +
         quaternion_wxyz(principal_frame.normalized()) + "\" mass=\"" + number(inertial.mass) + "\" diaginertia=\"" +
         triple(moments.x(), moments.y(), moments.z()) + "\"/>\n";
}

class MjcfWriter {
 public:
  MjcfWriter(const std::string& urdf, bool floating_base) : order_(detail::urdf_order(urdf, floating_base)) {
    model_ = urdf::parseURDF(urdf);
    if (!model_) throw std::invalid_argument("mjcf_from_urdf: urdfdom cannot read the URDF");
    floating_base_ = floating_base;
  }

  Mjcf write(const Eigen::Vector3d& gravity) {
    std::string xml = "<mujoco model=\"" + model_->getName() + "\">\n";
    xml += "  <compiler angle=\"radian\" inertiafromgeom=\"false\" boundmass=\"0\" boundinertia=\"0\" "
           "balanceinertia=\"false\" fusestatic=\"false\" discardvisual=\"true\"/>\n";
    xml += "  <option gravity=\"" + triple(gravity.x(), gravity.y(), gravity.z()) + "\"/>\n";
    xml += "  <worldbody>\n";
    const urdf::LinkConstSharedPtr root = model_->getRoot();
    const bool root_is_world = !has_mass(root) && (!floating_base_ || has_floating_child(root));
    if (root_is_world) {
      children(root, "    ", 0, xml);
    } else {
      xml += "    <body name=\"" + root->name + "\" pos=\"0 0 0\" quat=\"1 0 0 0\">\n";
      if (floating_base_) xml += "      <freejoint name=\"" + root->name + "_free\"/>\n";
      if (has_mass(root)) xml += inertial_xml(*root->inertial, "      ");
      children(root, "      ", 1, xml);
      xml += "    </body>\n";
    }
    xml += "  </worldbody>\n</mujoco>\n";
    result_.model = std::move(xml);
    return std::move(result_);
  }

 private:
  static bool has_floating_child(const urdf::LinkConstSharedPtr& link) {
    return std::any_of(link->child_joints.begin(), link->child_joints.end(),
                       [](const auto& joint) { return joint->type == urdf::Joint::FLOATING; });
  }

  // Bodies nested in one file at most; with <mujoco>, <worldbody> and a joint inside the
  // deepest body, well under tinyxml2's 100.
  static constexpr int bodies_per_file = 64;

  // The child bodies of `link`, written at `depth` bodies deep in the current file.
  void children(const urdf::LinkConstSharedPtr& link, const std::string& indent, int depth, std::string& xml) {
    if (depth == bodies_per_file && !link->child_joints.empty()) {
      const std::size_t index = result_.includes.size();  // deeper parts are appended after it
      result_.includes.push_back({"peer-model-part-" + std::to_string(index + 1) + ".xml", ""});
      std::string part = "<mujocoinclude>\n";
      children(link, "  ", 0, part);
      result_.includes[index].text = part + "</mujocoinclude>\n";
      xml += indent + "<include file=\"" + result_.includes[index].name + "\"/>\n";
      return;
    }
    std::vector<urdf::JointSharedPtr> joints = link->child_joints;
    std::stable_sort(joints.begin(), joints.end(),
                     [&](const auto& a, const auto& b) { return order_.rank(a->name) < order_.rank(b->name); });
    for (const auto& joint : joints) {
      const urdf::LinkConstSharedPtr child = model_->getLink(joint->child_link_name);
      xml += indent + "<body name=\"" + child->name + "\"" + attribute_pose(joint->parent_to_joint_origin_transform) +
             ">\n";
      const std::string inner = indent + "  ";
      const std::string axis = triple(joint->axis.x, joint->axis.y, joint->axis.z);
      switch (joint->type) {
        case urdf::Joint::REVOLUTE:
        case urdf::Joint::CONTINUOUS:
          xml += inner + "<joint name=\"" + joint->name + "\" type=\"hinge\" pos=\"0 0 0\" axis=\"" + axis + "\"/>\n";
          break;
        case urdf::Joint::PRISMATIC:
          xml += inner + "<joint name=\"" + joint->name + "\" type=\"slide\" pos=\"0 0 0\" axis=\"" + axis + "\"/>\n";
          break;
        case urdf::Joint::FLOATING:
          xml += inner + "<freejoint name=\"" + joint->name + "\"/>\n";
          break;
        case urdf::Joint::FIXED:
          break;  // a body without joint is welded to its parent
        default:
          throw std::invalid_argument("mjcf_from_urdf: joint '" + joint->name + "' has an unsupported type");
      }
      if (has_mass(child)) xml += inertial_xml(*child->inertial, inner);
      children(child, inner, depth + 1, xml);
      xml += indent + "</body>\n";
    }
  }

  detail::UrdfOrder order_;
  urdf::ModelInterfaceSharedPtr model_;
  bool floating_base_ = false;
  Mjcf result_;
};

}  // namespace

Mjcf mjcf_from_urdf(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base) {
  return MjcfWriter(urdf, floating_base).write(gravity);
}

}  // namespace liembs::peers
