#pragma once
// MJCF import through MuJoCo's own parser and compiler (mj_loadXML): the LieMBS model is
// read from the compiled mjModel, so defaults, classes, <include>, angle units, Euler
// conventions, fromto and inertias computed from geoms are MuJoCo's. docs/mjcf.md.
//
// Mapping (all poses at qpos0, MuJoCo's reference configuration, which becomes q = 0):
//   - Every MuJoCo body but the world becomes a body of the same name, with reference pose
//     A = (xpos, xquat) of mj_kinematics at qpos0, mass body_mass, centre of mass body_ipos
//     and inertia about the centre of mass in body axes R(body_iquat) diag(body_inertia)
//     R(body_iquat)^T (MuJoCo keeps the principal moments and axes).
//   - hinge -> JointType::revolute with Y = (e; p x e), e = xaxis, p = xanchor;
//     slide -> JointType::prismatic, Y = (0; e); ball -> JointType::spherical about xanchor
//     (LieMBS coordinates: rotations about the world x, y, z axes, not MuJoCo's quaternion);
//     free -> no joint: the body is a free body (a floating base).
//     LieMBS's q of a hinge or slide is MuJoCo's qpos - qpos0 (the joint's `ref`).
//   - A body with several joints becomes a chain: one massless body "<body>/<joint>" per
//     joint but the last, all at the body's pose, the joints in MuJoCo's order (the product
//     of exponentials MuJoCo applies); the last joint moves the body itself.
//   - A body without joints is welded to its parent by a JointType::fixed joint named
//     "<body>_weld" (mocap bodies too: they stay where qpos0 puts them).
//   - Gravity is opt.gravity (zero when the file disables gravity).
//   - Active equality constraints: connect -> JointType::spherical joint between body1 and
//     body2 about the anchor, weld -> JointType::fixed joint (its relpose must be the pose at
//     qpos0); both are loop closures: the topology code cuts them (an error if it would cut
//     another joint instead). An equality with the world joins the body to a massless body
//     "world/<equality>" at the world origin, welded to the world by a fixed joint of the same
//     name. Joint, tendon and distance equalities are not modelled.
//   - Unnamed bodies are called "body<id>", unnamed joints "<body>_joint<k>", unnamed
//     equalities "<type><id>".
// Bodies and joints are in MuJoCo's order: depth-first from the world, children and joints in
// file order.
//
// Everything that changes MuJoCo's dynamics but is not a rigid-body property (armature,
// actuators, tendons, contacts, joint damping, friction loss, limits, springs, fluid forces,
// unread equalities, mocap) is listed in ONE warning (liembs::warn), and left out.
// Armature in particular: MuJoCo's mass matrix is the bodies' plus diag(armature); LieMBS's
// is the bodies' alone.
//
// Errors throw ModelError starting with the file name: MuJoCo's own message (its error
// buffer, with the element and line) for files MuJoCo refuses, e.g.
//   arm.xml: MuJoCo cannot load the model: XML Error: invalid keyword: 'twist' | Element 'joint', line 4
// and the body, joint or equality concerned for what LieMBS cannot represent.
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>

#include <filesystem>

namespace liembs {

Model import_mjcf(const std::filesystem::path& file);

// The geoms MuJoCo draws by default (groups 0 to 2, alpha > 0) of an MJCF file, through
// MuJoCo's compiler (sizes as full lengths: MuJoCo's half-sizes doubled), with their colour;
// planes and height fields are not read. A mesh geom gives the triangles MuJoCo compiled from
// its file (VisualMesh::Format::triangles, scale applied). Bodies are named as import_mjcf names them;
// the world body's geoms are the world's. Throws ModelError as import_mjcf does.
ModelVisuals read_mjcf_visuals(const std::filesystem::path& file);

}  // namespace liembs
