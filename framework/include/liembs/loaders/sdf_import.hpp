#pragma once
// SDF import through libsdformat (sdf::Root::Load, the DOM of sdf::Model, sdf::Link,
// sdf::Joint): poses are resolved by libsdformat's frame semantics (SemanticPose().Resolve,
// JointAxis::ResolveXyz), so relative_to, <frame>s and expressed_in are SDF's. docs/sdf.md.
//
// The file holds one model: a top-level <model>, or a <world> with exactly one <model>
// (nested models and <include>d models are refused). Mapping, in the world frame (a bare
// model: its own pose's frame):
//   - Every <link> becomes a body of the same name, reference pose = the link frame;
//     mass, centre of mass and inertia about it in link axes from <inertial> (the tensor in
//     the inertial frame, rotated by its pose). A link without <inertial> has SDF's default
//     (mass 1, unit inertia) and is named in the warning.
//   - Joints, at the joint frame's origin p (the child link frame by default) with axes
//     resolved in the world:
//       revolute, continuous -> JointType::revolute (e; p x e)
//       prismatic            -> JointType::prismatic (0; e)
//       ball                 -> JointType::spherical about p
//       universal, revolute2 -> JointType::universal, axis then axis2, both through p
//       fixed                -> JointType::fixed
//     screw and gearbox joints are refused. A joint whose parent is "world" attaches to the
//     world; a link that is no joint's child is a free body (a floating base).
//   - Joints may form closed loops: the topology code (analyze_topology) chooses the joints
//     to cut, from the order of the joints in the file.
//   - Gravity: the world's <gravity>; zero for a bare model (as URDF).
// Order: bodies and joints in file order.
//
// Not modelled, listed once in a warning (liembs::warn) and left out of the dynamics:
// joint limits, damping, friction, springs, collisions (contacts), sensors, plugins,
// links with <gravity>false</gravity> or <kinematic>true</kinematic>.
//
// Errors throw ModelError starting with the file: libsdformat's errors (sdf::Errors, each
// with its file and line), and for what LieMBS cannot represent the link or joint with the
// line of its element, e.g.
//   four-bar.sdf:31: link 'rocker': mass 0 on a moving link ...
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>

#include <filesystem>

namespace liembs {

Model import_sdf(const std::filesystem::path& file);

// The <visual> boxes, spheres, cylinders, capsules, ellipsoids and meshes of every link of an
// SDF file, in the link frame (libsdformat's frame semantics), with the material's diffuse
// colour; planes and height maps are not read. A <mesh><uri><scale> is drawn when its file is
// an STL or OBJ file found relative to the file the <mesh> is in, or through a model:// URI
// (Gazebo's resource paths) or a package:// URI (ROS's package path), as docs/viewer.md
// says (liembs::VisualMesh); a URI not found, a missing file or a <submesh> gives a warning
// naming the file, line, link and URI (and where it looked), and the mesh is left out. Throws ModelError as import_sdf does, and for
// a zero mesh scale.
ModelVisuals read_sdf_visuals(const std::filesystem::path& file);

}  // namespace liembs
