// URDF import: urdfdom parses the file (semantics and its own error checks); TinyXML, which
// urdfdom is built on, is read beforehand for the location of XML syntax errors, the line
// of each <link> and <joint> element and the order of the joints in the file (urdfdom keeps
// them in name order). The mapping to the model is described in urdf_import.hpp.
#include <liembs/io/file_guard.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/model/visual_shapes.hpp>

#include <console_bridge/console.h>
#include <tinyxml.h>
#include <urdf_parser/urdf_parser.h>

#include "import_support.hpp"
#include "resource_uri.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace liembs {

namespace {

// Collects what urdfdom reports through console_bridge while it parses, instead of
// printing it. console_bridge has one global handler, hence the mutex.
class CapturedLog final : public console_bridge::OutputHandler {
 public:
  CapturedLog() { console_bridge::useOutputHandler(this); }
  ~CapturedLog() override { console_bridge::restorePreviousOutputHandler(); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) errors.push_back(text);
  }

  std::vector<std::string> errors;
};

std::string format(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::mutex& urdfdom_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Where each <link>/<joint> element is in the file, and the joints' order of appearance.
struct XmlIndex {
  std::map<std::string, int> link_line;
  std::map<std::string, int> joint_line;
  std::map<std::string, std::size_t> joint_rank;
};

class Importer {
 public:
  Importer(const std::string& xml, const std::string& source, bool floating_base)
      : xml_(xml), source_(source), floating_base_(floating_base) {}

  // Links own their children through shared pointers: joints that form a cycle (rejected
  // by check_tree) would keep urdfdom's links alive, so the links are unlinked here.
  ~Importer() {
    if (!urdf_) return;
    for (auto& [name, link] : urdf_->links_) {
      link->child_links.clear();
      link->child_joints.clear();
    }
  }

  Importer(const Importer&) = delete;
  Importer& operator=(const Importer&) = delete;

  ModelVisuals visuals() {
    index_xml();
    parse();
    ModelVisuals result;
    ResourceSearch search;  // package:// and model:// mesh URIs
    for (const auto& [name, link] : urdf_->links_) {
      auto shapes = visual_shapes(link, search);
      if (shapes.empty()) continue;
      if (link == urdf_->getRoot() && !has_mass(link)) result.world = std::move(shapes);
      else result.by_body[name] = std::move(shapes);
    }
    return result;
  }

  Model run() {
    index_xml();
    parse();
    check_tree();
    build();
    check_massless_bodies();
    return std::move(model_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ModelError(source_ + ": " + message); }

  [[noreturn]] void fail_link(const std::string& link, const std::string& message) const {
    throw ModelError(where(index_.link_line, link) + "link '" + link + "': " + message);
  }

  [[noreturn]] void fail_joint(const std::string& joint, const std::string& message) const {
    throw ModelError(where(index_.joint_line, joint) + "joint '" + joint + "': " + message);
  }

  std::string where(const std::map<std::string, int>& lines, const std::string& name) const {
    const auto found = lines.find(name);
    if (found == lines.end()) return source_ + ": ";
    return source_ + ":" + std::to_string(found->second) + ": ";
  }

  void index_xml() {
    TiXmlDocument document;
    document.Parse(xml_.c_str());
    if (document.Error()) {
      std::string location = source_;
      if (document.ErrorRow() > 0)
        location += ":" + std::to_string(document.ErrorRow()) + ":" + std::to_string(document.ErrorCol());
      throw ModelError(location + ": malformed XML: " + document.ErrorDesc());
    }
    const TiXmlElement* robot = document.FirstChildElement("robot");
    if (robot == nullptr) fail("not a URDF file: no <robot> element");
    for (const TiXmlElement* link = robot->FirstChildElement("link"); link != nullptr;
         link = link->NextSiblingElement("link")) {
      if (const char* name = link->Attribute("name")) index_.link_line.emplace(name, link->Row());
    }
    std::size_t rank = 0;
    for (const TiXmlElement* joint = robot->FirstChildElement("joint"); joint != nullptr;
         joint = joint->NextSiblingElement("joint")) {
      if (const char* name = joint->Attribute("name")) {
        index_.joint_line.emplace(name, joint->Row());
        index_.joint_rank.emplace(name, rank++);
      }
    }
  }

  void parse() {
    std::vector<std::string> errors;
    {
      const std::lock_guard<std::mutex> lock(urdfdom_mutex());
      CapturedLog log;
      try {
        urdf_ = urdf::parseURDF(xml_);
      } catch (const std::exception& error) {
        log.errors.push_back(error.what());
      }
      errors = log.errors;
    }
    if (!urdf_ || !errors.empty()) {
      std::string message;
      for (const auto& error : errors) message += (message.empty() ? "" : "; ") + error;
      if (message.empty()) message = "urdfdom could not read the model";
      fail("invalid URDF: " + message);
    }
  }

  // urdfdom accepts a link that is the child of two joints (the later one wins) and
  // cycles away from the root; a URDF is a tree.
  void check_tree() {
    std::map<std::string, std::vector<std::string>> parent_joints;
    for (const auto& [name, joint] : urdf_->joints_) parent_joints[joint->child_link_name].push_back(name);
    for (auto& [link, joints] : parent_joints) {
      if (joints.size() > 1) {
        std::sort(joints.begin(), joints.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
        fail_link(link, "child of several joints ('" + joints[0] + "' and '" + joints[1] +
                            "'): URDF describes trees, closed loops are not supported");
      }
    }
    root_ = urdf_->getRoot();
    std::set<std::string> reached;
    std::vector<urdf::LinkConstSharedPtr> stack{root_};
    while (!stack.empty()) {
      const auto link = stack.back();
      stack.pop_back();
      if (!reached.insert(link->name).second) continue;
      for (const auto& child : link->child_links) stack.push_back(child);
    }
    for (const auto& [name, link] : urdf_->links_)
      if (reached.count(name) == 0)
        fail_link(name, "not connected to the root link '" + root_->name +
                            "' (its joints form a cycle or it has no parent joint on a path from the root)");
  }

  std::size_t rank(const std::string& joint) const {
    const auto found = index_.joint_rank.find(joint);
    return found == index_.joint_rank.end() ? index_.joint_rank.size() : found->second;
  }

  static Pose to_pose(const urdf::Pose& pose) {
    Eigen::Quaterniond rotation(pose.rotation.w, pose.rotation.x, pose.rotation.y, pose.rotation.z);
    Pose result;
    result.R = rotation.normalized().toRotationMatrix();
    result.r = Vec3(pose.position.x, pose.position.y, pose.position.z);
    return result;
  }

  static bool finite(const urdf::Pose& pose) {
    const auto& p = pose.position;
    const auto& q = pose.rotation;
    return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z) && std::isfinite(q.x) &&
           std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
  }

  static bool has_mass(const urdf::LinkConstSharedPtr& link) { return link->inertial && link->inertial->mass != 0.0; }

  std::vector<urdf::JointSharedPtr> ordered_child_joints(const urdf::LinkConstSharedPtr& link) const {
    std::vector<urdf::JointSharedPtr> joints = link->child_joints;
    std::stable_sort(joints.begin(), joints.end(),
                     [&](const auto& a, const auto& b) { return rank(a->name) < rank(b->name); });
    return joints;
  }

  // The link's <visual> boxes, spheres, cylinders and meshes (STL and OBJ files, see
  // visual_mesh_file) in the link frame; a mesh that cannot be drawn is left out after a warning.
  std::vector<VisualShape> visual_shapes(const urdf::LinkConstSharedPtr& link, ResourceSearch& search) const {
    std::vector<VisualShape> shapes;
    for (const auto& visual : link->visual_array) {
      if (!visual || !visual->geometry) continue;
      if (!finite(visual->origin)) fail_link(link->name, "<visual><origin> is not finite");
      VisualShape shape;
      shape.pose = to_pose(visual->origin);
      const auto positive = [&](double value, const char* what) {
        if (!std::isfinite(value) || value <= 0.0)
          fail_link(link->name, std::string("<visual> ") + what + " must be positive and finite, got " + format(value));
        return value;
      };
      switch (visual->geometry->type) {
        case urdf::Geometry::BOX: {
          const auto& box = static_cast<const urdf::Box&>(*visual->geometry);
          shape.type = VisualShape::Type::box;
          shape.box_size = Vec3(positive(box.dim.x, "box size"), positive(box.dim.y, "box size"),
                                positive(box.dim.z, "box size"));
          break;
        }
        case urdf::Geometry::SPHERE:
          shape.type = VisualShape::Type::sphere;
          shape.radius = positive(static_cast<const urdf::Sphere&>(*visual->geometry).radius, "sphere radius");
          break;
        case urdf::Geometry::CYLINDER: {
          const auto& cylinder = static_cast<const urdf::Cylinder&>(*visual->geometry);
          shape.type = VisualShape::Type::cylinder;
          shape.radius = positive(cylinder.radius, "cylinder radius");
          shape.length = positive(cylinder.length, "cylinder length");
          break;
        }
        case urdf::Geometry::MESH: {
          const auto& mesh = static_cast<const urdf::Mesh&>(*visual->geometry);
          shape.type = VisualShape::Type::mesh;
          shape.scale = Vec3(mesh.scale.x, mesh.scale.y, mesh.scale.z);
          if (!shape.scale.allFinite() || (shape.scale.array() == 0.0).any())
            fail_link(link->name, "<visual><mesh> scale must be finite and non-zero, got " + format(mesh.scale.x) + " " +
                                      format(mesh.scale.y) + " " + format(mesh.scale.z));
          shape.mesh = visual_mesh_file(source_, mesh.filename, where(index_.link_line, link->name) + "link '" +
                                                                    link->name + "': ", search);
          if (!shape.mesh) continue;
          break;
        }
        default:
          continue;
      }
      if (visual->material && visual->material->texture_filename.empty()) {
        const urdf::Color& color = visual->material->color;
        shape.color = std::array<double, 4>{color.r, color.g, color.b, color.a};
      }
      shapes.push_back(shape);
    }
    return shapes;
  }

  RigidBody make_body(const urdf::LinkConstSharedPtr& link, const Pose& reference_pose) const {
    RigidBody body;
    body.name = link->name;
    body.reference_pose = reference_pose;
    body.mass = 0.0;
    body.inertia = Mat3::Zero();
    if (!link->inertial) return body;
    const urdf::Inertial& inertial = *link->inertial;
    if (!std::isfinite(inertial.mass) || inertial.mass < 0.0)
      fail_link(link->name, "mass must be >= 0 and finite, got " + format(inertial.mass));
    if (!finite(inertial.origin)) fail_link(link->name, "<inertial><origin> is not finite");
    Mat3 tensor;
    tensor << inertial.ixx, inertial.ixy, inertial.ixz, inertial.ixy, inertial.iyy, inertial.iyz, inertial.ixz,
        inertial.iyz, inertial.izz;
    if (!tensor.allFinite()) fail_link(link->name, "<inertia> is not finite");
    if (inertial.mass == 0.0) {
      if (!tensor.isZero(0.0))
        fail_link(link->name, "mass 0 with a non-zero inertia tensor (give the link a mass or remove <inertia>)");
      return body;
    }
    const Pose frame = to_pose(inertial.origin);
    body.mass = inertial.mass;
    body.center_of_mass = frame.r;
    // The tensor is given in the inertial frame; in the link frame it is R I R^T.
    Mat3 inertia = frame.R * tensor * frame.R.transpose();
    body.inertia = 0.5 * (inertia + inertia.transpose());
    if (!tensor.isZero(0.0)) {
      const std::string problem = check_inertia(body.inertia);
      if (!problem.empty()) fail_link(link->name, problem);
    }
    return body;
  }

  // Depth-first pre-order from the root, children in file order.
  void build() {
    const bool root_is_world = !has_mass(root_) && (!floating_base_ || has_floating_child(root_));
    std::size_t root_index = Joint::world;
    if (!root_is_world) {
      root_index = add_body(make_body(root_, Pose{}));
      if (!floating_base_) {
        Joint weld;
        weld.name = unique_joint_name("world_to_" + root_->name);
        weld.type = JointType::fixed;
        weld.parent = Joint::world;
        weld.child = root_index;
        model_.joints.push_back(weld);
      }
    }
    visit_children(root_, root_index, Pose{}, root_is_world);
    if (model_.bodies.empty()) fail("the model has no links with mass (root link '" + root_->name + "' is the world)");
  }

  bool has_floating_child(const urdf::LinkConstSharedPtr& link) const {
    return std::any_of(link->child_joints.begin(), link->child_joints.end(),
                       [](const auto& joint) { return joint->type == urdf::Joint::FLOATING; });
  }

  std::size_t add_body(RigidBody body) {
    model_.bodies.push_back(std::move(body));
    return model_.bodies.size() - 1;
  }

  std::string unique_joint_name(std::string name) const {
    while (urdf_->joints_.count(name) != 0) name += "_";
    return name;
  }

  void visit_children(const urdf::LinkConstSharedPtr& link, std::size_t link_index, const Pose& link_pose,
                      bool link_is_world) {
    for (const auto& urdf_joint : ordered_child_joints(link)) {
      const urdf::LinkConstSharedPtr child = urdf_->getLink(urdf_joint->child_link_name);
      if (!finite(urdf_joint->parent_to_joint_origin_transform)) fail_joint(urdf_joint->name, "<origin> is not finite");
      if (urdf_joint->mimic)
        fail_joint(urdf_joint->name,
                   "mimic joints are not supported (the coupling is a constraint); remove <mimic> to import it as an "
                   "independent joint");
      const Pose child_pose = se3::compose(link_pose, to_pose(urdf_joint->parent_to_joint_origin_transform));
      const std::size_t child_index = add_body(make_body(child, child_pose));

      Joint joint;
      joint.name = urdf_joint->name;
      joint.parent = link_is_world ? Joint::world : link_index;
      joint.child = child_index;
      const Vec3 axis(urdf_joint->axis.x, urdf_joint->axis.y, urdf_joint->axis.z);
      const auto checked_axis = [&]() -> Vec3 {
        if (!axis.allFinite() || axis.norm() < 1e-12)
          fail_joint(urdf_joint->name, "the <axis> is zero or not finite");
        return child_pose.R * axis.normalized();  // the axis is given in the child (joint) frame
      };
      bool add = true;
      switch (urdf_joint->type) {
        case urdf::Joint::REVOLUTE:
        case urdf::Joint::CONTINUOUS:
          joint.type = JointType::revolute;
          joint.screws.push_back(revolute_screw(checked_axis(), child_pose.r));
          break;
        case urdf::Joint::PRISMATIC:
          joint.type = JointType::prismatic;
          joint.screws.push_back(prismatic_screw(checked_axis()));
          break;
        case urdf::Joint::FIXED:
          joint.type = JointType::fixed;
          break;
        case urdf::Joint::FLOATING:
          if (!link_is_world)
            fail_joint(urdf_joint->name, "a floating joint is only allowed from a root link without mass (the world); "
                                         "parent link '" + link->name + "' is not one");
          if (!floating_base_)
            fail_joint(urdf_joint->name, "floating joint, but the model is imported with a fixed base (floating_base = false)");
          add = false;  // the child is a free body at the joint's origin
          break;
        case urdf::Joint::PLANAR:
          fail_joint(urdf_joint->name, "planar joints are not supported");
        default:
          fail_joint(urdf_joint->name, "unknown joint type");
      }
      if (add) {
        joint.initial_position = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
        joint.initial_velocity = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
        model_.joints.push_back(std::move(joint));
      }
      visit_children(child, child_index, child_pose, false);
    }
  }

  // A moving group of welded bodies needs mass (import_support.hpp).
  void check_massless_bodies() const {
    if (const auto body = massless_moving_body(model_))
      fail_link(model_.bodies[*body].name, "no mass (no <inertial> or mass 0) and not welded by fixed joints to a link "
                                           "with mass or to the world: a massless moving body makes the mass matrix "
                                           "singular");
  }

  const std::string& xml_;
  std::string source_;
  bool floating_base_;
  XmlIndex index_;
  urdf::ModelInterfaceSharedPtr urdf_;
  urdf::LinkConstSharedPtr root_;
  Model model_;
};

}  // namespace

Model import_urdf_string(const std::string& xml, const std::string& source_name, bool floating_base) {
  return Importer(xml, source_name, floating_base).run();
}

namespace {

std::string read_urdf_text(const std::filesystem::path& file) {
  std::ifstream stream(file, std::ios::binary);
  if (!stream) throw ModelError(file.string() + ": cannot open the URDF file");
  note_input(file);
  std::ostringstream text;
  text << stream.rdbuf();
  if (stream.bad()) throw ModelError(file.string() + ": cannot read the URDF file");
  return text.str();
}

}  // namespace

Model import_urdf(const std::filesystem::path& file, bool floating_base) {
  return import_urdf_string(read_urdf_text(file), file.string(), floating_base);
}

ModelVisuals read_urdf_visuals(const std::filesystem::path& file) {
  const std::string xml = read_urdf_text(file);
  return Importer(xml, file.string(), false).visuals();
}

}  // namespace liembs
