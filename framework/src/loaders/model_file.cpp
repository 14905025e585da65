// Model files: the [model] table of a run file (bodies and joints in TOML, or the URDF, MJCF,
// SDF or JSON file it names), read into a Model (docs/user-guide.md, "Models").
#include <liembs/loaders/model_file.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/mjcf_import.hpp>
#include <liembs/loaders/sdf_import.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/util/nearest_name.hpp>
#include "model_readers.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <filesystem>
#include <set>

namespace liembs {

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

Vec3 read_axis(const ConfigTable& joint, std::string_view key, const std::string& who) {
  const Vec3 axis = joint.vec3(key);
  if (!(axis.norm() > 1e-12)) joint.fail(key, who + "the axis is zero");
  return axis.normalized();
}

// Any unit vector perpendicular to n.
Vec3 perpendicular(const Vec3& n) {
  const Vec3 trial = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  return n.cross(trial).normalized();
}

// The joint's screws in the coordinates its data are given in (world, or the child body
// frame at q = 0); see the decomposition in model.hpp.
std::vector<Vec6> read_screws(const ConfigTable& joint, JointType type, const std::string& who) {
  const Vec3 point = joint.vec3_or("point", Vec3::Zero());
  switch (type) {
    case JointType::revolute: return {revolute_screw(read_axis(joint, "axis", who), point)};
    case JointType::prismatic: return {prismatic_screw(read_axis(joint, "axis", who))};
    case JointType::helical:
      return {helical_screw(read_axis(joint, "axis", who), point, joint.number("pitch"))};
    case JointType::cylindrical: {
      const Vec3 axis = read_axis(joint, "axis", who);
      return {revolute_screw(axis, point), prismatic_screw(axis)};
    }
    case JointType::universal: {
      const auto rows = joint.number_rows("axes");
      if (rows.size() != 2 || rows.front().size() != 3) joint.fail("axes", who + "expected two axes [[x, y, z], [x, y, z]]");
      const Vec3 first(rows[0][0], rows[0][1], rows[0][2]), second(rows[1][0], rows[1][1], rows[1][2]);
      if (!(first.norm() > 1e-12) || !(second.norm() > 1e-12)) joint.fail("axes", who + "an axis is zero");
      if (first.normalized().cross(second.normalized()).norm() < 1e-9)
        joint.fail("axes", who + "the two axes are parallel");
      return {revolute_screw(first, point), revolute_screw(second, point)};
    }
    case JointType::spherical:
      return {revolute_screw(Vec3::UnitX(), point), revolute_screw(Vec3::UnitY(), point),
              revolute_screw(Vec3::UnitZ(), point)};
    case JointType::planar: {
      const Vec3 normal = read_axis(joint, "normal", who);
      const Vec3 u = perpendicular(normal), w = normal.cross(u);
      return {prismatic_screw(u), prismatic_screw(w), revolute_screw(normal, point)};
    }
    case JointType::fixed: return {};
  }
  return {};
}

Eigen::VectorXd read_joint_values(const ConfigTable& joint, std::string_view key, std::size_t dof, const std::string& who) {
  Eigen::VectorXd values = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dof));
  if (!joint.contains(key)) return values;
  std::vector<double> numbers;
  try {
    numbers = {joint.number(key)};
  } catch (const ConfigError&) {
    numbers = joint.numbers(key);
  }
  if (numbers.size() != dof)
    joint.fail(key, who + "expected " + std::to_string(dof) + " value(s), one per degree of freedom, found " +
                        std::to_string(numbers.size()));
  for (std::size_t k = 0; k < dof; ++k) values(static_cast<Eigen::Index>(k)) = numbers[k];
  return values;
}

const std::vector<std::string>& joint_type_names() {
  static const std::vector<std::string> names{"revolute", "prismatic", "helical", "cylindrical",
                                              "universal", "spherical", "planar", "fixed"};
  return names;
}

// Reads [[model.joints]]. A joint is given either by world-frame screw data at q = 0 (the
// CAD form of 001, frame = "world", the default) or in the child body frame together with
// the child's reference pose relative to the parent (frame = "body": child_position,
// child_rotation_vector), which then defines the child's reference pose.
void read_joints(const ConfigTable& table, Model& model, const std::vector<bool>& pose_given,
                 std::set<std::string>& initial_given) {
  struct Pending {
    ConfigTable table;
    Joint joint;
    bool body_frame;
    std::vector<Vec6> local_screws;
    Pose child_in_parent;
  };
  std::vector<Pending> pending;
  std::set<std::string> names;
  std::vector<bool> body_frame_child(model.bodies.size(), false);
  for (const auto& joint_table : table.table_array("joints")) {
    Joint joint;
    joint.name = joint_table.string("name");
    if (joint.name.empty()) joint_table.fail("name", "joint name is empty");
    if (!names.insert(joint.name).second) joint_table.fail("name", "duplicate joint name '" + joint.name + "'");
    const std::string who = "joint '" + joint.name + "': ";
    const std::string type = joint_table.string("type");
    if (std::find(joint_type_names().begin(), joint_type_names().end(), type) == joint_type_names().end()) {
      std::string message = who + "'" + type + "' is not one of: " + join_names(joint_type_names());
      const std::string suggestion = nearest_name(type, joint_type_names());
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      joint_table.fail("type", message);
    }
    for (std::size_t t = 0; t < joint_type_names().size(); ++t)
      if (joint_type_names()[t] == type) joint.type = static_cast<JointType>(t);
    const std::string parent = joint_table.string("parent");
    const std::string child = joint_table.string("child");
    if (parent == "world") {
      joint.parent = Joint::world;
    } else {
      std::vector<std::string> candidates{"world"};
      for (const auto& body : model.bodies) candidates.push_back(body.name);
      if (std::find(candidates.begin(), candidates.end(), parent) == candidates.end()) {
        std::string message = who + "unknown body '" + parent + "' as parent; expected 'world' or a body: " + join_names(candidates);
        const std::string suggestion = nearest_name(parent, candidates);
        if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
        joint_table.fail("parent", message);
      }
      joint.parent = model.body_index(parent);
    }
    try {
      joint.child = model.body_index(child);
    } catch (const ModelError& error) {
      joint_table.fail("child", who + error.what());
    }
    if (joint.parent == joint.child) joint_table.fail("child", who + "parent and child are the same body");
    const bool body_frame = joint_table.choice_or("frame", {"world", "body"}, "world") == "body";
    std::vector<Vec6> screws = read_screws(joint_table, joint.type, who);
    Pose child_in_parent;
    if (body_frame) {
      if (pose_given[joint.child])
        joint_table.fail("frame", who + "with frame = \"body\" the child's reference pose comes from child_position and "
                                        "child_rotation_vector; remove position/rotation from body '" + child + "'");
      if (body_frame_child[joint.child])
        joint_table.fail("child", who + "body '" + child + "' is already placed by another body-frame joint");
      body_frame_child[joint.child] = true;
      child_in_parent.r = joint_table.vec3_or("child_position", Vec3::Zero());
      child_in_parent.R = so3::exp(joint_table.vec3_or("child_rotation_vector", Vec3::Zero()));
    } else {
      for (const char* key : {"child_position", "child_rotation_vector"})
        if (joint_table.contains(key)) joint_table.fail(key, who + "only read with frame = \"body\"");
    }
    joint.initial_position = read_joint_values(joint_table, "initial_position", screws.size(), who);
    joint.initial_velocity = read_joint_values(joint_table, "initial_velocity", screws.size(), who);
    for (const char* key : {"initial_position", "initial_velocity"})
      if (joint_table.contains(key)) initial_given.insert(joint.name + "/" + key);
    joint.initial_position_given = joint_table.contains("initial_position");
    joint.initial_velocity_given = joint_table.contains("initial_velocity");
    pending.push_back({joint_table, joint, body_frame, std::move(screws), child_in_parent});
  }

  // Body-frame joints define their child's reference pose from the parent's: resolve them
  // parents first.
  std::vector<bool> resolved(model.bodies.size(), true);
  for (const auto& item : pending)
    if (item.body_frame) resolved[item.joint.child] = false;
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& item : pending) {
      if (!item.body_frame || resolved[item.joint.child]) continue;
      const bool parent_known = item.joint.parent == Joint::world || resolved[item.joint.parent];
      if (!parent_known) continue;
      const Pose parent_pose = item.joint.parent == Joint::world ? Pose{} : model.bodies[item.joint.parent].reference_pose;
      model.bodies[item.joint.child].reference_pose = se3::compose(parent_pose, item.child_in_parent);
      resolved[item.joint.child] = true;
      progress = true;
    }
  }
  for (auto& item : pending) {
    if (item.body_frame) {
      if (!resolved[item.joint.child])
        item.table.fail("frame", "joint '" + item.joint.name + "': the reference pose of body '" +
                                     model.bodies[item.joint.child].name + "' depends on itself through a loop of "
                                     "body-frame joints");
      const Mat6 to_world = se3::Ad(model.bodies[item.joint.child].reference_pose);
      for (auto& screw : item.local_screws) screw = to_world * screw;  // Y = Ad_{A_child} X
    }
    item.joint.screws = std::move(item.local_screws);
    model.joints.push_back(std::move(item.joint));
  }
}

// The model file named by [model] `key` (urdf, mjcf, sdf), relative to the TOML file's
// folder; the file's bodies and joints replace [[model.bodies]] and [[model.joints]].
std::filesystem::path model_file(const ConfigTable& table, const char* key, const std::string& format) {
  for (const char* list : {"bodies", "joints"})
    if (table.contains(list))
      table.fail(list, "the bodies and joints come from " + table.path_of(key) + "; remove [[" + table.path_of(list) +
                           "]] or the " + key + " key");
  std::filesystem::path file(table.string(key));
  if (file.empty()) table.fail(key, "the " + format + " file name is empty");
  if (file.is_relative()) file = (table.file().parent_path() / file).lexically_normal();
  std::error_code error_code;
  if (!std::filesystem::is_regular_file(file, error_code)) table.fail(key, format + " file not found: " + file.string());
  return file;
}

// A model file's problem is a ModelError at the position of its key.
template <class Import>
Model import_at_key(const ConfigTable& table, const char* key, Import&& import) {
  try {
    return import();
  } catch (const ModelError& error) {
    throw ModelError(table.location(key) + ": " + table.path_of(key) + ": " + error.what());
  }
}

// The joint named by key `name` of a table keyed by joint names ([model.initial_position],
// [model.prescribed]); an unknown or fixed joint fails at the key.
Joint& joint_with_coordinates(const ConfigTable& values, const std::string& name, Model& model) {
  const auto found = std::find_if(model.joints.begin(), model.joints.end(),
                                  [&](const Joint& joint) { return joint.name == name; });
  if (found == model.joints.end()) {
    std::vector<std::string> names;  // joints with coordinates
    for (const auto& joint : model.joints)
      if (joint.dof() > 0) names.push_back(joint.name);
    std::string message = "unknown joint '" + name + "'; joints: " + join_names(names);
    const std::string suggestion = nearest_name(name, names);
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    values.fail(name, message);
  }
  if (found->dof() == 0) values.fail(name, "joint '" + name + "': a fixed joint has no coordinates");
  return *found;
}

// [model.initial_position] / [model.initial_velocity]: joint name = value (a number, or an
// array with one value per degree of freedom).
void read_initial_values(const ConfigTable& table, std::string_view key, Model& model,
                         const std::set<std::string>& initial_given) {
  const auto values = table.optional_table(key);
  if (!values) return;
  for (const std::string& name : values->keys()) {
    Joint* const found = &joint_with_coordinates(*values, name, model);
    const std::string who = "joint '" + name + "': ";
    if (initial_given.count(name + "/" + std::string(key)) != 0)
      values->fail(name, who + "also given as " + std::string(key) + " in its [[model.joints]] table");
    const Eigen::VectorXd read = read_joint_values(*values, name, found->dof(), who);
    if (key == "initial_position") {
      found->initial_position = read;
      found->initial_position_given = true;
    } else {
      found->initial_velocity = read;
      found->initial_velocity_given = true;
    }
  }
}

// [model.prescribed]: joint name = q(t), an expression of t or a number for a 1-DoF joint, an
// array of them (one per degree of freedom, in the joint's order) for a multi-DoF joint. The
// initial position and rate then come from q(0), q'(0), so the file must not give them.
void read_prescribed_motion(const ConfigTable& table, Model& model) {
  const auto motions = table.optional_table("prescribed");
  if (!motions) return;
  for (const std::string& name : motions->keys()) {
    Joint& joint = joint_with_coordinates(*motions, name, model);
    const std::string who = "joint '" + name + "': ";
    if (joint.initial_position_given || joint.initial_velocity_given)
      motions->fail(name, who + "its initial position and rate come from the prescribed motion; remove its "
                                "initial_position / initial_velocity");
    if (!motions->is_array(name)) {
      if (joint.dof() != 1)
        motions->fail(name, who + "a " + std::string(to_string(joint.type)) + " joint has " +
                                std::to_string(joint.dof()) + " coordinates: give an array of " +
                                std::to_string(joint.dof()) + " expressions, one per coordinate");
      joint.prescribed = {read_time_function(*motions, name)};
      continue;
    }
    const std::vector<std::string> texts = motions->value_texts(name);
    if (texts.size() != joint.dof())
      motions->fail(name, who + "expected " + std::to_string(joint.dof()) + " expression(s), one per degree of "
                                "freedom, found " + std::to_string(texts.size()));
    std::vector<std::string> expressions;
    try {
      const std::vector<double> numbers = motions->numbers(name);
      for (const double x : numbers) joint.prescribed.push_back(std::make_shared<const TimeFunction>(x));
    } catch (const ConfigError&) {
      expressions = motions->strings_or(name, {});
    }
    for (std::size_t k = 0; k < expressions.size(); ++k) {
      try {
        joint.prescribed.push_back(std::make_shared<const TimeFunction>(TimeFunction::parse(expressions[k])));
      } catch (const ExpressionError& error) {
        motions->fail(name, who + "coordinate " + std::to_string(k) + ": cannot read the expression \"" +
                                TimeFunction::excerpt(expressions[k]) + "\"" +
                                (error.position() ? " at character " + std::to_string(error.position()) : std::string()) +
                                ": " + error.what());
      }
    }
  }
}

void read_toml_bodies_and_joints(const ConfigTable& table, Model& model, std::set<std::string>& initial_given) {
  const auto bodies = table.table_array("bodies");
  if (bodies.empty()) table.fail("bodies", "the model has no bodies: add at least one [[" + table.path_of("bodies") + "]]");

  std::set<std::string> names;
  std::vector<bool> pose_given;
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
    pose_given.push_back(body_table.contains("position") || body_table.contains("rotation_vector") ||
                         body_table.contains("quaternion") || body_table.contains("rotation_matrix"));
    body.reference_pose.R = read_rotation(body_table);
    body.reference_pose.r = body_table.vec3_or("position", Vec3::Zero());
    body.initial_angular_velocity = body_table.vec3_or("angular_velocity", Vec3::Zero());
    body.initial_linear_velocity = body_table.vec3_or("linear_velocity", Vec3::Zero());
    model.bodies.push_back(body);
  }

  read_joints(table, model, pose_given, initial_given);
}

void read_loads(const ConfigTable& table, Model& model) {
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
}

}  // namespace

Model load_model(const ConfigTable& table) {
  Model model;
  std::set<std::string> initial_given;
  // At most one model file; gravity from the TOML file replaces an MJCF or SDF file's.
  const std::vector<const char*> sources{"json", "urdf", "mjcf", "sdf"};
  const char* source = nullptr;
  for (const char* key : sources) {
    if (!table.contains(key)) continue;
    if (source != nullptr)
      table.fail(key, "give one model file: " + table.path_of(source) + " or " + table.path_of(key) + ", not both");
    source = key;
  }
  const std::string source_name = source == nullptr ? "" : source;
  if (table.contains("floating_base") && source_name != "urdf")
    table.fail("floating_base", "only read together with a URDF file (model.urdf); MJCF and SDF files say it with a free joint or "
                 "a free link");
  if (source_name == "json") {
    model = read_json_model(table);
  } else if (source_name == "urdf") {
    const std::filesystem::path file = model_file(table, "urdf", "URDF");
    const bool floating_base = table.boolean_or("floating_base", false);
    model = import_at_key(table, "urdf", [&] { return import_urdf(file, floating_base); });
  } else if (source_name == "mjcf") {
    const std::filesystem::path file = model_file(table, "mjcf", "MJCF");
    model = import_at_key(table, "mjcf", [&] { return import_mjcf(file); });
  } else if (source_name == "sdf") {
    const std::filesystem::path file = model_file(table, "sdf", "SDF");
    model = import_at_key(table, "sdf", [&] { return import_sdf(file); });
  } else {
    read_toml_bodies_and_joints(table, model, initial_given);
  }
  if ((source_name != "mjcf" && source_name != "sdf") || table.contains("gravity")) model.gravity = table.vec3_or("gravity", Vec3::Zero());
  read_geometric_constraints(table, model);
  read_initial_values(table, "initial_position", model, initial_given);
  read_initial_values(table, "initial_velocity", model, initial_given);
  read_prescribed_motion(table, model);
  read_loads(table, model);
  return model;
}

ModelVisuals read_model_visuals(const ConfigTable& model_table) {
  for (const char* key : {"urdf", "mjcf", "sdf"}) {
    if (!model_table.contains(key)) continue;
    // The file as load_model finds it: relative to the TOML file's folder.
    std::filesystem::path file(model_table.string(key));
    if (file.is_relative()) file = (model_table.file().parent_path() / file).lexically_normal();
    const std::string format = key;
    if (format == "urdf") return read_urdf_visuals(file);
    if (format == "mjcf") return read_mjcf_visuals(file);
    return read_sdf_visuals(file);
  }
  return {};
}

}  // namespace liembs
