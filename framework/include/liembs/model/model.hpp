#pragma once
// The multibody model as in papers 000/001: rigid bodies with their inertia and reference
// pose A_i (the pose at q = 0), joints given by their world-frame screws Y at q = 0 (the CAD
// form, no joint frames), gravity and applied loads. A body that is no joint's child is a
// free body: its configuration lives on the group chosen for the run (a floating base, or
// a body in absolute coordinates).
#include <liembs/lie/types.hpp>
#include <liembs/util/time_function.hpp>

#include <memory>
#include <string>
#include <vector>

namespace liembs {

struct RigidBody {
  std::string name;
  double mass = 1.0;
  Vec3 center_of_mass = Vec3::Zero();   // in the body frame
  Mat3 inertia = Mat3::Identity();      // about the centre of mass, in the body frame
  Pose reference_pose;                  // A_i: body frame in the world at q = 0 (free body: at t = 0)
  // Initial velocity of a free body (unused for a body moved by a joint):
  Vec3 initial_angular_velocity = Vec3::Zero();  // body-fixed omega
  Vec3 initial_linear_velocity = Vec3::Zero();   // world-frame velocity r' of the body origin

  // 6x6 inertia about the body-frame origin in body coordinates, angular part first:
  // [[I_c - m c~ c~, m c~], [-m c~, m 1]], so that (L_o, p) = M V for V = (omega, R^T r').
  Mat6 spatial_inertia() const;
};

// A constant wrench acting on a body. In the body frame the moment is taken about the
// body-frame origin; in the world frame the force acts at the centre of mass and the
// moment is a pure couple.
struct AppliedWrench {
  enum class Frame { body, world };
  std::size_t body = 0;
  Frame frame = Frame::body;
  Vec3 moment = Vec3::Zero();
  Vec3 force = Vec3::Zero();
};

enum class JointType { revolute, prismatic, helical, cylindrical, universal, spherical, planar, fixed };

std::string_view to_string(JointType type);

// A joint between a parent (a body or the world) and a child body. Its motion is the
// product of exponentials of its screws, in order (canonical coordinates of the second
// kind, 001 Remark 4): C_child = C_parent A_parent^-1 exp(Y_1 q_1) ... exp(Y_k q_k) A_child
// in the zero-reference form, i.e. relative motion B exp(X_1 q_1) ... exp(X_k q_k) with
// X_j = Ad_{A_child}^-1 Y_j.
//   revolute (e; y x e)   prismatic (0; e)   helical (e; y x e + h e)
//   cylindrical: revolute + prismatic on one axis; universal: two revolutes;
//   spherical: revolutes about the world x, y, z axes through the centre;
//   planar: prismatic along u, w then revolute about the normal n; fixed: no screw.
struct Joint {
  static constexpr std::size_t world = static_cast<std::size_t>(-1);

  std::string name;
  JointType type = JointType::revolute;
  std::size_t parent = world;  // body index or Joint::world
  std::size_t child = 0;       // body index
  std::vector<Vec6> screws;    // world-frame screws Y_j at q = 0, one per degree of freedom
  Eigen::VectorXd initial_position;  // q at t = 0 (size = dof)
  Eigen::VectorXd initial_velocity;  // q' at t = 0
  // Whether the file gave them (not defaulted to zero). Rates given in the file are kept by
  // the initial velocity projection of a closed-loop system; the others are adjusted.
  bool initial_position_given = false, initial_velocity_given = false;
  // A prescribed motion q(t) per degree of freedom ([model.prescribed]; docs/prescribed-motion.md),
  // or empty for a joint that moves freely. A tree run then integrates hybrid dynamics.
  std::vector<std::shared_ptr<const TimeFunction>> prescribed;

  std::size_t dof() const { return screws.size(); }
};

// World-frame screw coordinates at q = 0 (001 eq. 12).
Vec6 revolute_screw(const Vec3& axis, const Vec3& point);
Vec6 prismatic_screw(const Vec3& axis);
Vec6 helical_screw(const Vec3& axis, const Vec3& point, double pitch);

// A basic geometric constraint (GCON) of paper 004, eqs. 1-4, between body i and body j
// (either may be Joint::world, the ground), in absolute coordinates:
//   DP1  a_i^T a_j - f(t)          a_i = A_i a_bar_i, a_j = A_j a_bar_j
//   DP2  a_i^T d_ij - f(t)         d_ij = r_j + A_j s_bar_q_j - r_i - A_i s_bar_p_i
//   D    d_ij^T d_ij - f(t)        (f = C^2 > 0: a squared distance)
//   CD   c^T d_ij - f(t)           c a world direction (x, y, z for a coordinate difference)
// d_ij points from P on i to Q on j. A composite joint of the paper's Table 1 (spherical,
// revolute, ...) is a run of GCONs sharing the composite's name.
struct GeometricConstraint {
  enum class Type { dp1, dp2, distance, coordinate_difference };
  std::string name;  // its block in reports: the [[model.constraints]] entry's name
  Type type = Type::dp1;
  std::size_t body_i = static_cast<std::size_t>(-1), body_j = static_cast<std::size_t>(-1);  // -1: ground
  Vec3 a_bar_i = Vec3::Zero(), a_bar_j = Vec3::Zero();        // body-fixed directions (DP1; DP2 uses a_bar_i)
  Vec3 s_bar_p_i = Vec3::Zero(), s_bar_q_j = Vec3::Zero();    // body-fixed points P, Q (DP2, D, CD)
  Vec3 c = Vec3::Zero();                                       // world direction (CD)
  std::shared_ptr<const TimeFunction> f;                       // prescribed f(t); null: f = 0
  // A DP1 driver's alternate (same bodies, other vectors and f), swapped in when
  // | |f(t)| - 1 | < 0.1 (paper 004 section 4.2); null if none.
  std::shared_ptr<const GeometricConstraint> alternate;
};

std::string_view to_string(GeometricConstraint::Type type);

// The lower pairs of paper 004's Table 1 composed from GCONs (docs/geometric-constraints.md):
// spherical, universal, revolute, cylindrical, translational, revolute-cylindrical, appended
// to `out` as GCONs named `name`. Axes a_bar_*, b_bar_* are normalized here.
const std::vector<std::string>& composite_joint_types();
struct CompositeJointData {
  std::size_t body_i, body_j;
  Vec3 s_bar_p_i = Vec3::Zero(), s_bar_q_j = Vec3::Zero();
  Vec3 a_bar_i = Vec3::Zero(), a_bar_j = Vec3::Zero(), b_bar_i = Vec3::Zero(), b_bar_j = Vec3::Zero();
};
void add_composite_joint(const std::string& name, const std::string& type, const CompositeJointData& data,
                         std::vector<GeometricConstraint>& out);


struct Model {
  std::vector<RigidBody> bodies;
  std::vector<Joint> joints;
  std::vector<GeometricConstraint> constraints;  // absolute coordinates only (newton-euler)
  Vec3 gravity = Vec3::Zero();
  std::vector<AppliedWrench> loads;

  // Index of the body called `name`; throws ModelError listing the body names.
  std::size_t body_index(std::string_view name) const;
  // Total number of joint coordinates.
  std::size_t joint_dof() const;
  // Bodies that are no joint's child (they float on the run's group).
  std::vector<std::size_t> free_bodies() const;
  // True when some joint follows a prescribed motion (Joint::prescribed).
  bool has_prescribed_motion() const;
  // True when the only forces are gravity and nothing drives the motion (no applied loads,
  // prescribed joint motion or driving function of a geometric constraint): energy is then
  // an invariant. A driven run's energy changes by the work of what drives it.
  bool is_conservative() const;
  // True when no external force acts (spatial momentum is then an invariant).
  bool is_force_free() const { return loads.empty() && gravity.isZero(0.0); }
};


// Checks that an inertia tensor about the centre of mass is physically possible;
// returns "" or the reason.
std::string check_inertia(const Mat3& inertia);

}  // namespace liembs
