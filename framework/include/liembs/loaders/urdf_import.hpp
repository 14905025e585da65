#pragma once
// URDF import (urdfdom) into the LieMBS model: bodies with their reference pose A_i (the
// link frame at q = 0), mass, centre of mass and inertia about the centre of mass in the link
// frame, and joints with their world-frame screws Y at q = 0.
//
// Mapping:
//   - Every link becomes a body of the same name, except a root link without mass (no
//     <inertial> or mass 0) when it only stands for the world frame: this is the case when
//     floating_base is false, or when the root has a floating child joint. Its child
//     joints are then attached to the world (Joint::world).
//   - A root link with mass becomes a free body (no parent joint) when floating_base is true,
//     otherwise it is welded to the world by a JointType::fixed joint named
//     "world_to_<root link>".
//   - A joint's <origin> is the child link frame in the parent link frame at q = 0, so
//     A_child = A_parent * origin; <axis> is given in the child link frame (normalized here):
//       revolute, continuous -> JointType::revolute, Y = (R_child a; r_child x R_child a)
//       prismatic            -> JointType::prismatic, Y = (0; R_child a)
//       fixed                -> JointType::fixed (no screw; the tree algorithms merge it)
//       floating             -> no joint: the child is a free body with A = origin; allowed
//                               only as a child joint of a massless root link (the world),
//                               and only with floating_base = true
//       planar               -> rejected (no agreed coordinates)
//     <limit>, <dynamics>, <calibration>, <safety_controller> are ignored (pure rigid-body
//     dynamics); <mimic> is rejected (it is a constraint, not an independent joint).
//   - <inertial><origin xyz rpy> gives the centre of mass (xyz, link frame) and the
//     orientation R of the frame the <inertia> tensor is given in: inertia about the centre
//     of mass in the link frame = R I_urdf R^T.
//   - A link without mass is allowed only when it is welded by fixed joints to links with
//     mass (its fixed-joint group has a positive total mass), or when its group is welded to
//     the world; it becomes a body with mass 0 and inertia 0. Otherwise the import fails
//     (a massless moving body makes the mass matrix singular).
//   - A link with mass needs a symmetric positive definite inertia tensor satisfying the
//     triangle inequality (check_inertia); a zero tensor (point mass) is accepted.
//
// Order: bodies and joints are listed in depth-first pre-order from the root link; the
// children of a link are visited in the order their joints appear in the file. The compiled
// tree keeps that order (compile_tree, analyze_topology), so the joint coordinates are the
// movable joints along this traversal (for a serial chain: from the base to the tip), not
// the joints in file order when branches are listed interleaved (docs/user-guide.md,
// "Joint order").
//
// initial_position and initial_velocity of every joint are zero vectors of size dof;
// gravity is zero (URDF has none) and there are no loads.
//
// Errors throw ModelError with the file name (source_name for strings), the line of the
// element when known and the link or joint concerned, e.g.
//   arm.urdf:42: link 'wrist': negative mass -1
// Malformed XML and the errors urdfdom reports (unknown joint type, missing limits of a
// revolute joint, unknown parent or child link, two root links, ...) are passed through.
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>

#include <filesystem>
#include <string>

namespace liembs {

// Reads a URDF file. Throws ModelError (and names the file) when it cannot be read.
Model import_urdf(const std::filesystem::path& file, bool floating_base);

// Reads URDF text; source_name stands for the file in error messages.
Model import_urdf_string(const std::string& xml, const std::string& source_name, bool floating_base);

// The <visual> boxes, spheres, cylinders and meshes of every link of a URDF file, in the link
// frame, with their <material> colour. A <mesh filename scale> is drawn when its file is an
// STL or OBJ file found relative to the URDF file or through a package:// URI (ROS's package
// path) or model:// URI (Gazebo's resource paths), as docs/viewer.md says
// (liembs::VisualMesh); otherwise a warning names the file, link and URI (and where it
// looked), and the mesh is left out. The shapes of a root link without
// mass (which import_urdf turns into the world) are the world's. Throws ModelError naming the
// file, line and link for a non-positive or non-finite size or a zero mesh scale.
ModelVisuals read_urdf_visuals(const std::filesystem::path& file);

}  // namespace liembs
