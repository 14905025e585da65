#pragma once
// The names of the generalized-coordinate columns, shared by `liembs eval` (the tree
// algorithms' input and output columns), the trajectory of a tree run (output_schema.hpp) and
// the Python module: "base.<component>" for a floating base, "<prefix><dof>" per degree of
// freedom (docs/algorithms.md, "liembs eval"). Header-only, no dependencies: plugins use it.
#include <array>
#include <string_view>

namespace liembs::column_names {

inline constexpr std::string_view base = "base.";  // floating-base columns: base.x, base.wx, ...

// Per degree of freedom: coordinates, rates, accelerations, generalized forces.
inline constexpr std::string_view coordinate = "q.";
inline constexpr std::string_view rate = "qd.";
inline constexpr std::string_view acceleration = "qdd.";
inline constexpr std::string_view force = "tau.";

// The floating base's pose (world position, orientation quaternion), body twist
// (omega, R^T r'), its time derivative and a body-frame wrench (moment, force).
inline constexpr std::array<std::string_view, 7> pose_components{"x", "y", "z", "qw", "qx", "qy", "qz"};
inline constexpr std::array<std::string_view, 6> twist_components{"wx", "wy", "wz", "vx", "vy", "vz"};
inline constexpr std::array<std::string_view, 6> twist_rate_components{"dwx", "dwy", "dwz", "dvx", "dvy", "dvz"};
inline constexpr std::array<std::string_view, 6> wrench_components{"mx", "my", "mz", "fx", "fy", "fz"};

// Derivative outputs of the tree algorithms: the `liembs eval` column prefixes
// ("<prefix>.<row>.<column>") and the keys of the Python module's dicts.
inline constexpr std::string_view mass_matrix = "M";
inline constexpr std::string_view coriolis_matrix = "C";
inline constexpr std::string_view force_by_position = "dtau_dq";       // d tau / d q
inline constexpr std::string_view force_by_velocity = "dtau_du";       // d tau / d u (u = base twist, q')
inline constexpr std::string_view acceleration_by_position = "dqdd_dq";
inline constexpr std::string_view acceleration_by_velocity = "dqdd_du";
inline constexpr std::string_view acceleration_by_force = "dqdd_dtau";  // = M^-1
inline constexpr std::string_view force_by_reference = "dtau_dB";      // geometric: by the joints' references
inline constexpr std::string_view force_by_screw = "dtau_dX";          // geometric: by the joints' screws
inline constexpr std::string_view regressor = "Y";

// The vector outputs' keys in the Python dicts: "tau" and "qdd" (the prefixes without the dot).
inline constexpr std::string_view force_key = "tau";
inline constexpr std::string_view acceleration_key = "qdd";

}  // namespace liembs::column_names
