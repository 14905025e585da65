#pragma once
// The multibody model: rigid bodies with their inertia, reference pose and initial
// velocity, gravity and applied loads. Bodies without joints are free bodies whose
// configuration lives on the group chosen for the run (absolute coordinates).
#include <liembs/lie/types.hpp>

#include <string>
#include <vector>

namespace liembs {

class ConfigTable;

struct RigidBody {
  std::string name;
  double mass = 1.0;
  Vec3 center_of_mass = Vec3::Zero();   // in the body frame
  Mat3 inertia = Mat3::Identity();      // about the centre of mass, in the body frame
  Pose initial_pose;                    // body frame in the world at t = 0
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

struct Model {
  std::vector<RigidBody> bodies;
  Vec3 gravity = Vec3::Zero();
  std::vector<AppliedWrench> loads;

  // Index of the body called `name`; throws ModelError listing the body names.
  std::size_t body_index(std::string_view name) const;
  // True when the only forces are gravity (energy is then an invariant).
  bool is_conservative() const { return loads.empty(); }
  // True when no external force acts (spatial momentum is then an invariant).
  bool is_force_free() const { return loads.empty() && gravity.isZero(0.0); }
};

// Reads the [model] table (format in README.md, "TOML format") and validates it:
// duplicate names, non-positive mass, inertia not symmetric positive definite or
// violating the triangle inequality, rotation not orthonormal; errors name the body.
Model load_model(const ConfigTable& model_table);

// Checks that an inertia tensor about the centre of mass is physically possible;
// returns "" or the reason.
std::string check_inertia(const Mat3& inertia);

}  // namespace liembs
