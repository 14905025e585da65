#pragma once
// Quantities a passive system conserves, computed from a state independently of the
// group used to integrate it.
#include <liembs/model/model.hpp>
#include <liembs/plugin/group.hpp>
#include <liembs/plugin/state.hpp>

namespace liembs {

struct Invariants {
  double kinetic_energy = 0.0;
  double potential_energy = 0.0;  // of gravity, zero at the world origin
  double total_energy() const { return kinetic_energy + potential_energy; }
  Vec3 angular_momentum = Vec3::Zero();  // about the world origin, world frame
  Vec3 linear_momentum = Vec3::Zero();   // world frame
  double orthogonality_error = 0.0;      // max over bodies of ||R^T R - 1||_F
};

// From the pose and body-fixed twist of every model body.
Invariants compute_invariants(const Model& model, const std::vector<Pose>& poses, const std::vector<Vec6>& twists);

// Initial state of a model of free bodies: reference poses and initial velocities in the
// group's convention.
State initial_state(const Model& model, const Group& group);

// Body-fixed twists (omega, R^T r') of all bodies, 6 per body.
Eigen::VectorXd body_twists(const Group& group, const State& state);

}  // namespace liembs
