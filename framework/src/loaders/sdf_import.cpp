// SDF import: libsdformat loads and checks the file (sdf::Root::Load) and resolves every
// pose and axis by its frame semantics; the model is read from its DOM. The mapping is
// described in sdf_import.hpp and docs/sdf.md.
#include <liembs/error.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/loaders/sdf_import.hpp>
#include <liembs/model/topology.hpp>
#include <liembs/model/visual_shapes.hpp>
#include <liembs/util/warning.hpp>

#include <sdf/Console.hh>
#include <sdf/Box.hh>
#include <sdf/Capsule.hh>
#include <sdf/Cylinder.hh>
#include <sdf/Ellipsoid.hh>
#include <sdf/Geometry.hh>
#include <sdf/Joint.hh>
#include <sdf/JointAxis.hh>
#include <sdf/Link.hh>
#include <sdf/Material.hh>
#include <sdf/Mesh.hh>
#include <sdf/Model.hh>
#include <sdf/Root.hh>
#include <sdf/Sphere.hh>
#include <sdf/Visual.hh>
#include <sdf/World.hh>

#include "import_support.hpp"
#include "resource_uri.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>

namespace liembs {

namespace {

Vec3 to_vec3(const ignition::math::Vector3d& v) { return Vec3(v.X(), v.Y(), v.Z()); }

Pose to_pose(const ignition::math::Pose3d& pose) {
  Pose result;
  const auto& q = pose.Rot();
  result.R = Eigen::Quaterniond(q.W(), q.X(), q.Y(), q.Z()).normalized().toRotationMatrix();
  result.r = to_vec3(pose.Pos());
  return result;
}

std::string joint_type_name(sdf::JointType type) {
  switch (type) {
    case sdf::JointType::BALL: return "ball";
    case sdf::JointType::CONTINUOUS: return "continuous";
    case sdf::JointType::FIXED: return "fixed";
    case sdf::JointType::GEARBOX: return "gearbox";
    case sdf::JointType::PRISMATIC: return "prismatic";
    case sdf::JointType::REVOLUTE: return "revolute";
    case sdf::JointType::REVOLUTE2: return "revolute2";
    case sdf::JointType::SCREW: return "screw";
    case sdf::JointType::UNIVERSAL: return "universal";
    case sdf::JointType::INVALID: break;
  }
  return "invalid";
}

class Importer {
 public:
  explicit Importer(const std::filesystem::path& file) : file_(file.string()) {}

  // Every link's <visual> boxes, spheres, cylinders, capsules, ellipsoids and meshes (STL and
  // OBJ files, see visual_mesh_file) in the link frame, with the material's diffuse colour;
  // planes and height maps are not read, a mesh that cannot be drawn is left out after a warning.
  ModelVisuals visuals() {
    load(false);
    ModelVisuals result;
    ResourceSearch search;  // package:// and model:// mesh URIs
    for (std::uint64_t i = 0; i < sdf_->LinkCount(); ++i) {
      const sdf::Link& link = *sdf_->LinkByIndex(i);
      for (std::uint64_t v = 0; v < link.VisualCount(); ++v) {
        const sdf::Visual& visual = *link.VisualByIndex(v);
        const sdf::Geometry* geometry = visual.Geom();
        if (geometry == nullptr) continue;
        VisualShape shape;
        switch (geometry->Type()) {
          case sdf::GeometryType::BOX:
            shape.type = VisualShape::Type::box;
            shape.box_size = to_vec3(geometry->BoxShape()->Size());
            break;
          case sdf::GeometryType::SPHERE:
            shape.type = VisualShape::Type::sphere;
            shape.radius = geometry->SphereShape()->Radius();
            break;
          case sdf::GeometryType::CYLINDER:
            shape.type = VisualShape::Type::cylinder;
            shape.radius = geometry->CylinderShape()->Radius();
            shape.length = geometry->CylinderShape()->Length();
            break;
          case sdf::GeometryType::CAPSULE:
            shape.type = VisualShape::Type::capsule;
            shape.radius = geometry->CapsuleShape()->Radius();
            shape.length = geometry->CapsuleShape()->Length();
            break;
          case sdf::GeometryType::ELLIPSOID:
            shape.type = VisualShape::Type::ellipsoid;
            shape.radii = to_vec3(geometry->EllipsoidShape()->Radii());
            break;
          case sdf::GeometryType::MESH: {
            const sdf::Mesh& mesh = *geometry->MeshShape();
            const std::string where = this->where(mesh.Element()) + "link '" + link.Name() + "', visual '" +
                                      visual.Name() + "': ";
            shape.type = VisualShape::Type::mesh;
            shape.scale = to_vec3(mesh.Scale());
            if (!shape.scale.allFinite() || (shape.scale.array() == 0.0).any())
              fail_at(mesh.Element(), "link '" + link.Name() + "', visual '" + visual.Name() +
                                          "': <mesh><scale> must be finite and non-zero");
            if (!mesh.Submesh().empty()) {
              warn(where + "<mesh> '" + mesh.Uri() + "' is not drawn: <submesh> '" + mesh.Submesh() +
                   "' is not read (only whole meshes); the viewer draws the link's other shapes, or its inertia box");
              continue;
            }
            // A relative URI is relative to the file the <mesh> is in (an <include>d model's).
            shape.mesh = visual_mesh_file(mesh.FilePath().empty() ? file_ : mesh.FilePath(), mesh.Uri(), where, search);
            if (!shape.mesh) continue;
            break;
          }
          default:
            continue;
        }
        ignition::math::Pose3d pose;
        const sdf::Errors errors = visual.SemanticPose().Resolve(pose, link.Name());
        if (!errors.empty()) fail_with(errors, "visual '" + visual.Name() + "' of link '" + link.Name() + "'");
        shape.pose = to_pose(pose);
        if (const sdf::Material* material = visual.Material()) {
          const ignition::math::Color color = material->Diffuse();
          shape.color = std::array<double, 4>{color.R(), color.G(), color.B(), color.A()};
        }
        result.by_body[link.Name()].push_back(shape);
      }
    }
    return result;
  }

  Model run() {
    load();
    read_links();
    read_joints();
    check_topology();
    report_what_is_not_modelled();
    return std::move(model_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ModelError(file_ + ": " + message); }

  std::string where(const sdf::ElementPtr& element) const {
    std::string location = file_;
    if (element) {
      if (const auto line = element->LineNumber()) location += ":" + std::to_string(*line);
    }
    return location + ": ";
  }

  [[noreturn]] void fail_at(const sdf::ElementPtr& element, const std::string& message) const {
    throw ModelError(where(element) + message);
  }

  // libsdformat's errors, each at its file and line.
  [[noreturn]] void fail_with(const sdf::Errors& errors, const std::string& context) const {
    std::string message;
    constexpr std::size_t shown = 5;
    for (std::size_t i = 0; i < errors.size() && i < shown; ++i) {
      const sdf::Error& error = errors[i];
      std::string location = error.FilePath().value_or(file_);
      if (const auto line = error.LineNumber())
        location += ":" + std::to_string(*line);
      else if (const auto path = error.XmlPath())
        location += " (" + *path + ")";
      message += (i ? "; " : "") + location + ": " + error.Message();
    }
    if (errors.size() > shown) message += "; and " + std::to_string(errors.size() - shown) + " more";
    if (!console_.empty()) message += "; libsdformat says: " + console_;
    throw ModelError(file_ + ": " + context + ": " + message);
  }

  // What libsdformat printed (sdferr, sdfwarn: the XML parser's errors with their line are
  // only printed), on one line without its colour codes and source locations.
  static std::string console_text(const std::string& printed) {
    std::string text;
    for (std::size_t i = 0; i < printed.size(); ++i) {
      if (printed[i] == '\033') {  // "\033[1;31mError [parser.cc:719]\033[0m "
        const std::size_t end = printed.find('m', i);
        if (end == std::string::npos) break;
        i = end;
        continue;
      }
      if (printed[i] == '[') {
        const std::size_t close = printed.find(']', i);
        if (close != std::string::npos && printed.find(".cc:", i) < close) {
          i = close + (close + 1 < printed.size() && printed[close + 1] == ' ' ? 1 : 0);
          continue;
        }
      }
      text += printed[i] == '\n' ? ' ' : printed[i];
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
  }

  // report_printed: pass on what libsdformat printed as a warning (once per file: not again
  // when the visuals are read).
  void load(bool report_printed = true) {
    static std::mutex parser_mutex;  // libsdformat's parser and console are global
    sdf::Errors errors;
    {
      const std::lock_guard<std::mutex> lock(parser_mutex);
      sdf::Console::ConsoleStream& stream = sdf::Console::Instance()->GetMsgStream();
      std::ostringstream printed;
      std::ostream* const previous = stream.GetStream();
      stream.SetStream(&printed);
      try {
        errors = root_.Load(file_);
      } catch (...) {
        stream.SetStream(previous);
        throw;
      }
      stream.SetStream(previous);
      console_ = console_text(printed.str());
    }
    if (!errors.empty()) {
      // libsdformat converts some URDF files and fails on others with SDF's terms.
      const bool urdf = std::filesystem::path(file_).extension() == ".urdf";
      fail_with(errors, urdf ? "libsdformat cannot load the file (a URDF file: read it as one, with [model] urdf "
                               "or liembs.Model.from_urdf)"
                             : "libsdformat cannot load the file");
    }
    if (report_printed && !console_.empty()) warn(file_ + ": libsdformat: " + console_);
    if (root_.Model() != nullptr) {
      sdf_ = root_.Model();
      model_pose_ = to_pose(sdf_->RawPose());
    } else if (root_.WorldCount() == 1 && root_.WorldByIndex(0)->ModelCount() == 1) {
      const sdf::World& world = *root_.WorldByIndex(0);
      sdf_ = world.ModelByIndex(0);
      ignition::math::Pose3d pose;
      const sdf::Errors pose_errors = sdf_->SemanticPose().Resolve(pose, "world");
      if (!pose_errors.empty()) fail_with(pose_errors, "model '" + sdf_->Name() + "': cannot resolve its pose");
      model_pose_ = to_pose(pose);
      model_.gravity = to_vec3(world.Gravity());
    } else {
      std::vector<std::string> names;
      for (std::uint64_t w = 0; w < root_.WorldCount(); ++w)
        for (std::uint64_t m = 0; m < root_.WorldByIndex(w)->ModelCount(); ++m)
          names.push_back(root_.WorldByIndex(w)->ModelByIndex(m)->Name());
      fail("expected one <model> (at the top or in one <world>), found " +
           (names.empty() ? std::string("none") : quoted_names(names)));
    }
    if (sdf_->ModelCount() > 0)
      fail_at(sdf_->ModelByIndex(0)->Element(), "model '" + sdf_->Name() + "': nested model '" +
                                                    sdf_->ModelByIndex(0)->Name() + "' is not read (flatten it into the model)");
    if (sdf_->Static()) fail_at(sdf_->Element(), "model '" + sdf_->Name() + "' is static: nothing in it moves");
    if (sdf_->LinkCount() == 0) fail_at(sdf_->Element(), "model '" + sdf_->Name() + "' has no links");
  }

  // A pose resolved in the model frame, then placed in the world.
  Pose in_world(const sdf::SemanticPose& semantic, const sdf::ElementPtr& element, const std::string& who) const {
    ignition::math::Pose3d pose;
    const sdf::Errors errors = semantic.Resolve(pose, "__model__");
    if (!errors.empty()) fail_with(errors, who + " (line " + std::to_string(element ? element->LineNumber().value_or(0) : 0) + "): cannot resolve the pose");
    return se3::compose(model_pose_, to_pose(pose));
  }

  void read_links() {
    for (std::uint64_t i = 0; i < sdf_->LinkCount(); ++i) {
      const sdf::Link& link = *sdf_->LinkByIndex(i);
      const std::string who = "link '" + link.Name() + "'";
      RigidBody body;
      body.name = link.Name();
      body.reference_pose = in_world(link.SemanticPose(), link.Element(), who);
      const ignition::math::Inertiald& inertial = link.Inertial();
      body.mass = inertial.MassMatrix().Mass();
      body.center_of_mass = to_vec3(inertial.Pose().Pos());
      const auto moment = inertial.Moi();  // about the centre of mass, in link axes
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) body.inertia(r, c) = moment(r, c);
      body.inertia = 0.5 * (body.inertia + body.inertia.transpose());
      if (!std::isfinite(body.mass) || body.mass < 0.0)
        fail_at(link.Element(), who + ": mass must be >= 0 and finite");
      if (body.mass == 0.0 && !body.inertia.isZero(0.0))
        fail_at(link.Element(), who + ": mass 0 with a non-zero inertia tensor");
      if (body.mass > 0.0 && !body.inertia.isZero(0.0)) {
        const std::string problem = check_inertia(body.inertia);
        if (!problem.empty()) fail_at(link.Element(), who + ": " + problem);
      }
      const sdf::ElementPtr element = link.Element();
      if (element && !element->HasElement("inertial")) default_inertial_.push_back(link.Name());
      if (element && element->HasElement("gravity") && !element->Get<bool>("gravity")) no_gravity_.push_back(link.Name());
      if (element && element->HasElement("kinematic") && element->Get<bool>("kinematic")) kinematic_.push_back(link.Name());
      collisions_ += link.CollisionCount();
      sensors_ += link.SensorCount();
      body_index_.emplace(link.Name(), model_.bodies.size());
      model_.bodies.push_back(std::move(body));
    }
  }

  std::size_t body_of(const std::string& link, const sdf::Joint& joint) const {
    if (link == "world") return Joint::world;
    const auto found = body_index_.find(link);
    if (found == body_index_.end())
      fail_at(joint.Element(), "joint '" + joint.Name() + "': link '" + link + "' is not a link of model '" + sdf_->Name() + "'");
    return found->second;
  }

  Vec3 axis(const sdf::Joint& joint, unsigned index) const {
    const sdf::JointAxis* axis = joint.Axis(index);
    if (axis == nullptr)
      fail_at(joint.Element(), "joint '" + joint.Name() + "': " + (index == 0 ? "<axis>" : "<axis2>") + " is missing");
    ignition::math::Vector3d xyz;
    const sdf::Errors errors = axis->ResolveXyz(xyz, "__model__");
    if (!errors.empty()) fail_with(errors, "joint '" + joint.Name() + "': cannot resolve its axis");
    const Vec3 e = model_pose_.R * to_vec3(xyz);
    if (!e.allFinite() || e.norm() < 1e-12) fail_at(joint.Element(), "joint '" + joint.Name() + "': the axis is zero");
    return e.normalized();
  }

  void read_joints() {
    for (std::uint64_t i = 0; i < sdf_->JointCount(); ++i) {
      const sdf::Joint& sdf_joint = *sdf_->JointByIndex(i);
      const std::string who = "joint '" + sdf_joint.Name() + "'";
      Joint joint;
      joint.name = sdf_joint.Name();
      std::string parent_link, child_link;
      sdf::Errors errors = sdf_joint.ResolveParentLink(parent_link);
      if (errors.empty()) errors = sdf_joint.ResolveChildLink(child_link);
      if (!errors.empty()) fail_with(errors, who + ": cannot resolve its links");
      joint.parent = body_of(parent_link, sdf_joint);
      joint.child = body_of(child_link, sdf_joint);
      if (joint.child == Joint::world) fail_at(sdf_joint.Element(), who + ": the world cannot be a joint's child");
      if (joint.parent == joint.child) fail_at(sdf_joint.Element(), who + ": parent and child are the same link");
      const Vec3 origin = in_world(sdf_joint.SemanticPose(), sdf_joint.Element(), who).r;
      switch (sdf_joint.Type()) {
        case sdf::JointType::REVOLUTE:
        case sdf::JointType::CONTINUOUS:
          joint.type = JointType::revolute;
          joint.screws = {revolute_screw(axis(sdf_joint, 0), origin)};
          break;
        case sdf::JointType::PRISMATIC:
          joint.type = JointType::prismatic;
          joint.screws = {prismatic_screw(axis(sdf_joint, 0))};
          break;
        case sdf::JointType::BALL:
          joint.type = JointType::spherical;
          joint.screws = {revolute_screw(Vec3::UnitX(), origin), revolute_screw(Vec3::UnitY(), origin),
                          revolute_screw(Vec3::UnitZ(), origin)};
          break;
        case sdf::JointType::UNIVERSAL:
        case sdf::JointType::REVOLUTE2: {
          const Vec3 first = axis(sdf_joint, 0), second = axis(sdf_joint, 1);
          if (first.cross(second).norm() < 1e-9) fail_at(sdf_joint.Element(), who + ": the two axes are parallel");
          joint.type = JointType::universal;
          joint.screws = {revolute_screw(first, origin), revolute_screw(second, origin)};
          break;
        }
        case sdf::JointType::FIXED:
          joint.type = JointType::fixed;
          break;
        default:
          fail_at(sdf_joint.Element(), who + ": " + joint_type_name(sdf_joint.Type()) +
                                           " joints are not read (revolute, continuous, prismatic, ball, universal, "
                                           "revolute2 and fixed are)");
      }
      note_joint_properties(sdf_joint);
      joint.initial_position = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
      joint.initial_velocity = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
      model_.joints.push_back(std::move(joint));
    }
    check_moving_masses();
  }

  void note_joint_properties(const sdf::Joint& joint) {
    constexpr double unlimited = 1e15;  // SDF's default limits are +-1e16
    bool limited = false, damped = false, friction = false, spring = false;
    for (unsigned index = 0; index < 2; ++index) {
      const sdf::JointAxis* axis = joint.Axis(index);
      if (axis == nullptr) continue;
      limited = limited || std::abs(axis->Lower()) < unlimited || std::abs(axis->Upper()) < unlimited;
      damped = damped || axis->Damping() != 0.0;
      friction = friction || axis->Friction() != 0.0;
      spring = spring || axis->SpringStiffness() != 0.0;
    }
    if (limited) limited_.push_back(joint.Name());
    if (damped) damped_.push_back(joint.Name());
    if (friction) friction_.push_back(joint.Name());
    if (spring) springs_.push_back(joint.Name());
  }

  // A moving group of welded links needs mass (import_support.hpp).
  void check_moving_masses() const {
    if (const auto body = massless_moving_body(model_))
      fail_at(sdf_->LinkByIndex(*body)->Element(),
              "link '" + model_.bodies[*body].name + "': mass 0 on a moving link (not welded by fixed joints to a link "
              "with mass or to the world): a massless moving body makes the mass matrix singular");
  }

  // Joints that leave links unreachable (a cycle with no joint to the world or free link to
  // start from) are named here with the file.
  void check_topology() const {
    try {
      analyze_topology(model_);
    } catch (const ModelError& error) {
      fail(error.what());
    }
  }

  void report_what_is_not_modelled() const {
    std::vector<std::string> items;
    if (!default_inertial_.empty())
      items.push_back("no <inertial> on " + quoted_names(default_inertial_) + " (SDF's default mass 1 and unit inertia are used)");
    if (!limited_.empty()) items.push_back("limits of " + quoted_names(limited_));
    if (!damped_.empty()) items.push_back("damping of " + quoted_names(damped_));
    if (!friction_.empty()) items.push_back("friction of " + quoted_names(friction_));
    if (!springs_.empty()) items.push_back("springs of " + quoted_names(springs_));
    if (collisions_ > 0) items.push_back("contacts of " + std::to_string(collisions_) + " collision(s)");
    if (sensors_ > 0) items.push_back(std::to_string(sensors_) + " sensor(s)");
    if (sdf_->Element() && sdf_->Element()->HasElement("plugin")) items.push_back("plugins");
    if (!no_gravity_.empty()) items.push_back("<gravity>false</gravity> of " + quoted_names(no_gravity_) + " (gravity acts on them)");
    if (!kinematic_.empty()) items.push_back("<kinematic>true</kinematic> of " + quoted_names(kinematic_) + " (they move dynamically)");
    warn_not_modelled(file_, items);
  }

  std::string file_;
  std::string console_;  // what libsdformat printed while loading
  sdf::Root root_;
  const sdf::Model* sdf_ = nullptr;
  Pose model_pose_;
  std::map<std::string, std::size_t> body_index_;
  std::vector<std::string> default_inertial_, no_gravity_, kinematic_, limited_, damped_, friction_, springs_;
  std::uint64_t collisions_ = 0, sensors_ = 0;
  Model model_;
};

}  // namespace

Model import_sdf(const std::filesystem::path& file) {
  note_input(file);  // an output must not replace it (liembs/io/file_guard.hpp)
  require_model_file(file, "SDF");
  return Importer(file).run();
}

ModelVisuals read_sdf_visuals(const std::filesystem::path& file) {
  require_model_file(file, "SDF");
  return Importer(file).visuals();
}

}  // namespace liembs
