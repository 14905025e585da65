// MJCF import: MuJoCo parses and compiles the file (mj_loadXML); the model is read from the
// compiled mjModel and from mj_kinematics at qpos0. The mapping is described in
// mjcf_import.hpp and docs/mjcf.md.
#include <liembs/error.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/loaders/mjcf_import.hpp>
#include <liembs/model/topology.hpp>
#include <liembs/model/visual_shapes.hpp>
#include <liembs/util/warning.hpp>

#include <mujoco/mujoco.h>

#include <Eigen/Geometry>

#include "import_support.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

namespace liembs {

namespace {

using ModelPointer = std::unique_ptr<mjModel, decltype(&mj_deleteModel)>;
using DataPointer = std::unique_ptr<mjData, decltype(&mj_deleteData)>;

// MuJoCo's messages span lines ("message\nElement 'joint', line 4"): one line, " | " between.
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string result;
  for (const char c : text) {
    if (c == '\n') {
      if (!result.empty() && result.back() != ' ') result += " | ";
    } else {
      result += c;
    }
  }
  return result;
}

Vec3 vec3(const mjtNum* values) { return Vec3(values[0], values[1], values[2]); }

Mat3 rotation(const mjtNum* quaternion) {
  return Eigen::Quaterniond(quaternion[0], quaternion[1], quaternion[2], quaternion[3]).normalized().toRotationMatrix();
}

class Importer {
 public:
  explicit Importer(const std::filesystem::path& file) : file_(file.string()) {}

  // The geoms MuJoCo draws by default (groups 0 to 2, not transparent), in their body's
  // frame; planes and height fields are not read. A mesh geom draws the triangles MuJoCo
  // compiled (scaled, and moved into the mesh's inertial frame, which geom_pos and geom_quat
  // undo), one VisualMesh per mesh.
  ModelVisuals visuals() {
    load();
    name_objects();
    ModelVisuals result;
    std::vector<std::shared_ptr<const VisualMesh>> meshes(static_cast<std::size_t>(mj_->nmesh));
    for (int g = 0; g < mj_->ngeom; ++g) {
      const float* rgba = mj_->geom_matid[g] >= 0 ? mj_->mat_rgba + 4 * mj_->geom_matid[g] : mj_->geom_rgba + 4 * g;
      if (mj_->geom_group[g] > 2 || rgba[3] <= 0.0f) continue;
      const mjtNum* size = mj_->geom_size + 3 * g;
      VisualShape shape;
      shape.pose.R = rotation(mj_->geom_quat + 4 * g);
      shape.pose.r = vec3(mj_->geom_pos + 3 * g);
      shape.color = std::array<double, 4>{rgba[0], rgba[1], rgba[2], rgba[3]};
      switch (mj_->geom_type[g]) {
        case mjGEOM_SPHERE:
          shape.type = VisualShape::Type::sphere;
          shape.radius = size[0];
          break;
        case mjGEOM_CAPSULE:
        case mjGEOM_CYLINDER:
          shape.type = mj_->geom_type[g] == mjGEOM_CAPSULE ? VisualShape::Type::capsule : VisualShape::Type::cylinder;
          shape.radius = size[0];
          shape.length = 2.0 * size[1];  // MuJoCo: the half-length
          break;
        case mjGEOM_ELLIPSOID:
          shape.type = VisualShape::Type::ellipsoid;
          shape.radii = vec3(size);
          break;
        case mjGEOM_BOX:
          shape.type = VisualShape::Type::box;
          shape.box_size = 2.0 * vec3(size);  // MuJoCo: half-sizes
          break;
        case mjGEOM_MESH: {
          const int id = mj_->geom_dataid[g];
          if (id < 0 || id >= mj_->nmesh) continue;
          auto& mesh = meshes[static_cast<std::size_t>(id)];
          if (!mesh) mesh = compiled_mesh(id, g);
          if (!mesh) continue;
          shape.type = VisualShape::Type::mesh;
          shape.mesh = mesh;
          break;
        }
        default:
          continue;
      }
      const int body = mj_->geom_bodyid[g];
      if (body == 0)
        result.world.push_back(shape);
      else
        result.by_body[body_names_[body]].push_back(shape);
    }
    return result;
  }

  // The triangles of mesh `id` as MuJoCo compiled them, or nothing after a warning naming
  // geom `geom` when there are more than max_visual_mesh_bytes of them.
  std::shared_ptr<const VisualMesh> compiled_mesh(int id, int geom) const {
    const auto vertex_count = static_cast<std::size_t>(mj_->mesh_vertnum[id]);
    const auto face_count = static_cast<std::size_t>(mj_->mesh_facenum[id]);
    const std::string name = object_name(mjOBJ_MESH, id);
    if (12 * (vertex_count + face_count) > max_visual_mesh_bytes) {
      warn(file_ + ": geom '" + object_name(mjOBJ_GEOM, geom) + "': mesh '" + name + "' is not drawn: " +
           std::to_string(vertex_count) + " vertices and " + std::to_string(face_count) + " triangles, more than the " +
           std::to_string(max_visual_mesh_bytes >> 20) + " MiB a page embeds; the viewer draws the body's other "
           "geoms, or its inertia box");
      return nullptr;
    }
    auto mesh = std::make_shared<VisualMesh>();
    mesh->format = VisualMesh::Format::triangles;
    mesh->name = name;
    const float* vertices = mj_->mesh_vert + 3 * mj_->mesh_vertadr[id];
    mesh->vertices.assign(vertices, vertices + 3 * vertex_count);
    const int* faces = mj_->mesh_face + 3 * mj_->mesh_faceadr[id];  // indices into the mesh's own vertices
    mesh->faces.assign(faces, faces + 3 * face_count);
    return mesh;
  }

  Model run() {
    load();
    name_objects();
    build_bodies_and_joints();
    read_gravity();
    read_equalities();
    check_loop_closures();
    report_what_is_not_modelled();
    return std::move(model_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ModelError(file_ + ": " + message); }

  void load() {
    static std::mutex loader_mutex;  // MuJoCo's XML loader keeps global state
    char error[2048] = "";
    {
      const std::lock_guard<std::mutex> lock(loader_mutex);
      mj_.reset(mj_loadXML(file_.c_str(), nullptr, error, sizeof error));
    }
    if (!mj_) fail("MuJoCo cannot load the model: " + one_line(error));
    if (error[0] != '\0') warn(file_ + ": MuJoCo: " + one_line(error));
    data_.reset(mj_makeData(mj_.get()));
    if (!data_) fail("MuJoCo cannot allocate the model's data (mj_makeData)");
    mju_copy(data_->qpos, mj_->qpos0, mj_->nq);
    mj_kinematics(mj_.get(), data_.get());
  }

  std::string object_name(mjtObj type, int id) const {
    const char* name = mj_id2name(mj_.get(), type, id);
    return name == nullptr ? std::string() : std::string(name);
  }

  // Names of bodies, joints and equalities, made up where the file gives none.
  void name_objects() {
    body_names_.resize(static_cast<std::size_t>(mj_->nbody));
    for (int b = 0; b < mj_->nbody; ++b) {
      body_names_[b] = object_name(mjOBJ_BODY, b);
      if (body_names_[b].empty()) body_names_[b] = "body" + std::to_string(b);
    }
    joint_names_.resize(static_cast<std::size_t>(mj_->njnt));
    for (int j = 0; j < mj_->njnt; ++j) {
      joint_names_[j] = object_name(mjOBJ_JOINT, j);
      if (joint_names_[j].empty()) {
        const int body = mj_->jnt_bodyid[j];
        joint_names_[j] = body_names_[body] + "_joint" + std::to_string(j - mj_->body_jntadr[body]);
      }
      used_joint_names_.insert(joint_names_[j]);
    }
  }

  std::string unique_joint_name(std::string name) {
    while (!used_joint_names_.insert(name).second) name += "_";
    return name;
  }

  Pose body_pose(int b) const {
    Pose pose;
    pose.R = rotation(data_->xquat + 4 * b);
    pose.r = vec3(data_->xpos + 3 * b);
    return pose;
  }

  RigidBody make_body(int b) const {
    RigidBody body;
    body.name = body_names_[b];
    body.reference_pose = body_pose(b);
    body.mass = mj_->body_mass[b];
    body.center_of_mass = vec3(mj_->body_ipos + 3 * b);
    const Mat3 axes = rotation(mj_->body_iquat + 4 * b);
    const Mat3 inertia = axes * vec3(mj_->body_inertia + 3 * b).asDiagonal() * axes.transpose();
    body.inertia = 0.5 * (inertia + inertia.transpose());
    if (!(body.mass >= 0.0) || !std::isfinite(body.mass))
      fail("body '" + body.name + "': mass must be >= 0 and finite");
    if (body.mass > 0.0 && !body.inertia.isZero(0.0)) {
      const std::string problem = check_inertia(body.inertia);
      if (!problem.empty()) fail("body '" + body.name + "': " + problem);
    }
    return body;
  }

  std::size_t add_body(RigidBody body) {
    model_.bodies.push_back(std::move(body));
    return model_.bodies.size() - 1;
  }

  void add_joint(Joint joint) {
    joint.initial_position = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
    joint.initial_velocity = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint.dof()));
    model_.joints.push_back(std::move(joint));
  }

  // MuJoCo numbers bodies depth-first in file order, parents first.
  void build_bodies_and_joints() {
    body_index_.assign(static_cast<std::size_t>(mj_->nbody), Joint::world);
    depth_.assign(static_cast<std::size_t>(mj_->nbody), 0);
    for (int b = 1; b < mj_->nbody; ++b) {
      const int parent_body = mj_->body_parentid[b];
      const std::size_t parent = body_index_[parent_body];
      const int joint_count = mj_->body_jntnum[b];
      const int first_joint = mj_->body_jntadr[b];
      depth_[b] = depth_[parent_body] + 1;
      if (joint_count == 1 && mj_->jnt_type[first_joint] == mjJNT_FREE) {
        body_index_[b] = add_body(make_body(b));  // a free body: no joint
        depth_[b] = 0;
        continue;
      }
      if (joint_count == 0) {
        body_index_[b] = add_body(make_body(b));
        Joint weld;
        weld.name = unique_joint_name(body_names_[b] + "_weld");
        weld.type = JointType::fixed;
        weld.parent = parent;
        weld.child = body_index_[b];
        add_joint(std::move(weld));
        if (mj_->body_mocapid[b] >= 0) mocap_bodies_.push_back(body_names_[b]);
        continue;
      }
      // One joint per link of a chain; massless links carry the inner joints.
      std::size_t link_parent = parent;
      for (int k = 0; k < joint_count; ++k) {
        const int j = first_joint + k;
        const bool last = k + 1 == joint_count;
        std::size_t child;
        if (last) {
          child = add_body(make_body(b));
        } else {
          RigidBody link;
          link.name = body_names_[b] + "/" + joint_names_[j];
          link.reference_pose = body_pose(b);
          link.mass = 0.0;
          link.inertia = Mat3::Zero();
          child = add_body(std::move(link));
        }
        Joint joint;
        joint.name = joint_names_[j];
        joint.parent = link_parent;
        joint.child = child;
        const Vec3 axis = vec3(data_->xaxis + 3 * j).normalized();
        const Vec3 anchor = vec3(data_->xanchor + 3 * j);
        switch (mj_->jnt_type[j]) {
          case mjJNT_HINGE:
            joint.type = JointType::revolute;
            joint.screws = {revolute_screw(axis, anchor)};
            break;
          case mjJNT_SLIDE:
            joint.type = JointType::prismatic;
            joint.screws = {prismatic_screw(axis)};
            break;
          case mjJNT_BALL:
            joint.type = JointType::spherical;
            joint.screws = {revolute_screw(Vec3::UnitX(), anchor), revolute_screw(Vec3::UnitY(), anchor),
                            revolute_screw(Vec3::UnitZ(), anchor)};
            break;
          default:  // MuJoCo allows a free joint only alone on a top-level body
            fail("joint '" + joint.name + "' of body '" + body_names_[b] + "': unsupported joint type " +
                 std::to_string(mj_->jnt_type[j]));
        }
        add_joint(std::move(joint));
        link_parent = child;
      }
      body_index_[b] = link_parent;
    }
    if (model_.bodies.empty()) fail("the model has no bodies besides the world");
  }

  void read_gravity() {
    if ((mj_->opt.disableflags & mjDSBL_GRAVITY) == 0) model_.gravity = vec3(mj_->opt.gravity);
  }

  // Connect and weld equalities become joints that the topology cuts. Each is directed from
  // the deeper body to the shallower one, so that the breadth-first spanning tree reaches
  // the child through its own joints first.
  void read_equalities() {
    for (int e = 0; e < mj_->neq; ++e) {
      const int type = mj_->eq_type[e];
      std::string name = object_name(mjOBJ_EQUALITY, e);
      const char* type_name = type == mjEQ_CONNECT ? "connect"
                              : type == mjEQ_WELD  ? "weld"
                              : type == mjEQ_JOINT ? "joint"
                              : type == mjEQ_TENDON ? "tendon"
                                                    : "other";
      if (name.empty()) name = type_name + std::to_string(e);
      if (type != mjEQ_CONNECT && type != mjEQ_WELD) {
        unread_equalities_.push_back(name + "' (" + type_name);
        continue;
      }
      if (!mj_->eq_active[e]) {
        unread_equalities_.push_back(name + "' (inactive " + type_name);
        continue;
      }
      const int body1 = mj_->eq_obj1id[e], body2 = mj_->eq_obj2id[e];
      const mjtNum* data = mj_->eq_data + mjNEQDATA * e;
      const Pose pose1 = body1 == 0 ? Pose{} : body_pose(body1), pose2 = body2 == 0 ? Pose{} : body_pose(body2);
      const std::string who = std::string(type_name) + " equality '" + name + "' between '" + body_names_[body1] +
                              "' and '" + body_names_[body2] + "': ";
      if (body1 == body2) fail(who + "both sides are the same body");
      Joint joint;
      joint.name = unique_joint_name(name);
      if (type == mjEQ_CONNECT) {
        // data: the anchor in body1's frame, then in body2's (the compiler's, from qpos0).
        const Vec3 anchor = pose1.R * vec3(data) + pose1.r;
        const Vec3 anchor2 = pose2.R * vec3(data + 3) + pose2.r;
        if ((anchor - anchor2).norm() > 1e-9 * std::max(1.0, anchor.norm()))
          fail(who + "the anchor is not at the same place on both bodies at qpos0");
        joint.type = JointType::spherical;
        joint.screws = {revolute_screw(Vec3::UnitX(), anchor), revolute_screw(Vec3::UnitY(), anchor),
                        revolute_screw(Vec3::UnitZ(), anchor)};
      } else {
        // data[3..9]: the pose of body2 in body1's frame the weld keeps (relpose).
        const Vec3 position = pose1.R.transpose() * (pose2.r - pose1.r);
        const Mat3 orientation = pose1.R.transpose() * pose2.R;
        if ((position - vec3(data + 3)).norm() > 1e-9 * std::max(1.0, position.norm()) ||
            (orientation - rotation(data + 6)).norm() > 1e-9)
          fail(who + "its relpose is not the bodies' relative pose at qpos0; LieMBS's loop closures hold in the "
                     "reference configuration (remove relpose or move the bodies)");
        joint.type = JointType::fixed;
      }
      if (body1 == 0 || body2 == 0) {
        // To the world: from the body to a massless anchor welded to the world, which the
        // spanning tree reaches from the world before any body.
        joint.parent = body_index_[body1 == 0 ? body2 : body1];
        joint.child = add_world_anchor(name);
      } else {
        const bool body1_is_parent = depth_[body1] >= depth_[body2];
        joint.parent = body_index_[body1_is_parent ? body1 : body2];
        joint.child = body_index_[body1_is_parent ? body2 : body1];
      }
      closure_joints_.push_back(model_.joints.size());
      add_joint(std::move(joint));
    }
  }

  // A massless body "world/<equality>" at the world origin, welded to the world by a fixed
  // joint of the same name.
  std::size_t add_world_anchor(const std::string& equality) {
    RigidBody anchor;
    anchor.name = "world/" + equality;
    anchor.mass = 0.0;
    anchor.inertia = Mat3::Zero();
    const std::size_t index = add_body(std::move(anchor));
    Joint weld;
    weld.name = unique_joint_name("world/" + equality);
    weld.type = JointType::fixed;
    weld.parent = Joint::world;
    weld.child = index;
    add_joint(std::move(weld));
    return index;
  }

  // The equalities must be exactly the joints the topology cuts: an equality that joins two
  // floating trees (the only case the directions chosen above leave) would be a joint of the
  // tree, not a loop closure.
  void check_loop_closures() const {
    Topology topology;
    try {
      topology = analyze_topology(model_);
    } catch (const ModelError& error) {
      fail(error.what());
    }
    const auto is_cut = [&](std::size_t j) {
      return std::find(topology.cut_joints.begin(), topology.cut_joints.end(), j) != topology.cut_joints.end();
    };
    for (const std::size_t j : closure_joints_) {
      if (is_cut(j)) continue;
      const Joint& joint = model_.joints[j];
      std::string also;
      for (const std::size_t cut : topology.cut_joints)
        if (std::find(closure_joints_.begin(), closure_joints_.end(), cut) == closure_joints_.end())
          also = " (the spanning tree would cut joint '" + model_.joints[cut].name + "' instead)";
      fail("equality '" + joint.name + "' between '" + model_.bodies[joint.parent].name + "' and '" +
           model_.bodies[joint.child].name + "' closes no loop of one tree: it joins two floating trees" + also +
           "; LieMBS keeps equalities as loop closures of a tree (join the bodies by a joint instead)");
    }
  }

  void report_what_is_not_modelled() const {
    std::vector<std::string> items;
    const auto dof_names_where = [&](const mjtNum* values) {
      std::vector<std::string> names;
      for (int j = 0; j < mj_->njnt; ++j) {
        const int count = mj_->jnt_type[j] == mjJNT_FREE ? 6 : mj_->jnt_type[j] == mjJNT_BALL ? 3 : 1;
        for (int k = 0; k < count; ++k)
          if (values[mj_->jnt_dofadr[j] + k] != 0.0) {
            names.push_back(joint_names_[j]);
            break;
          }
      }
      return names;
    };
    if (const auto names = dof_names_where(mj_->dof_armature); !names.empty())
      items.push_back("ARMATURE of " + quoted_names(names) +
                      " (MuJoCo's mass matrix is the bodies' plus diag(armature); LieMBS's is the bodies' alone)");
    if (mj_->nu > 0) items.push_back(std::to_string(mj_->nu) + " actuator(s)");
    if (mj_->ntendon > 0) items.push_back(std::to_string(mj_->ntendon) + " tendon(s)");
    int contact_geoms = 0;
    for (int g = 0; g < mj_->ngeom; ++g)
      if (mj_->geom_contype[g] != 0 || mj_->geom_conaffinity[g] != 0) ++contact_geoms;
    if (contact_geoms > 0 && (mj_->opt.disableflags & mjDSBL_CONTACT) == 0)
      items.push_back("contacts of " + std::to_string(contact_geoms) + " geom(s)");
    if (const auto names = dof_names_where(mj_->dof_damping); !names.empty())
      items.push_back("damping of " + quoted_names(names));
    if (const auto names = dof_names_where(mj_->dof_frictionloss); !names.empty())
      items.push_back("friction loss of " + quoted_names(names));
    std::vector<std::string> limited, springs;
    for (int j = 0; j < mj_->njnt; ++j) {
      if (mj_->jnt_limited[j]) limited.push_back(joint_names_[j]);
      if (mj_->jnt_stiffness[j] != 0.0) springs.push_back(joint_names_[j]);
    }
    if (!limited.empty()) items.push_back("limits of " + quoted_names(limited));
    if (!springs.empty()) items.push_back("springs (stiffness) of " + quoted_names(springs));
    if (mj_->opt.density != 0.0 || mj_->opt.viscosity != 0.0 || vec3(mj_->opt.wind).norm() != 0.0)
      items.push_back("fluid forces (density, viscosity, wind)");
    for (const auto& equality : unread_equalities_) items.push_back("equality '" + equality + ")");
    if (!mocap_bodies_.empty()) items.push_back("mocap motion of " + quoted_names(mocap_bodies_) + " (welded in place)");
    warn_not_modelled(file_, items);
  }

  std::string file_;
  ModelPointer mj_{nullptr, &mj_deleteModel};
  DataPointer data_{nullptr, &mj_deleteData};
  std::vector<std::string> body_names_, joint_names_;
  std::set<std::string> used_joint_names_;
  std::vector<std::size_t> body_index_;  // MuJoCo body -> model body (the last link of its chain)
  std::vector<int> depth_;               // depth in MuJoCo's tree (free bodies: 0)
  std::vector<std::size_t> closure_joints_;
  std::vector<std::string> unread_equalities_, mocap_bodies_;
  Model model_;
};

}  // namespace

Model import_mjcf(const std::filesystem::path& file) {
  note_input(file);  // an output must not replace it (liembs/io/file_guard.hpp)
  require_model_file(file, "MJCF");
  return Importer(file).run();
}

ModelVisuals read_mjcf_visuals(const std::filesystem::path& file) {
  require_model_file(file, "MJCF");
  return Importer(file).visuals();
}

}  // namespace liembs
