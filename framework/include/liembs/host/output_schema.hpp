#pragma once
// The one declaration of a run's outputs (issue 31, "one schema"): every trajectory column
// family and every summary key, with its unit, meaning and when it is present. The
// trajectory.csv and summary.json writers (run.cpp), the Python module's arrays and dicts,
// the study's records and the docs' tables (`liembs outputs --markdown`, checked against
// docs/user-guide.md by a test) all read these declarations.
#include <liembs/lie/types.hpp>
#include <liembs/sim/column_names.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

// One family of trajectory columns, in column order. `pattern` is the documented name with
// placeholders: <body> (each model body), <dof> (each coordinate of the tree, named as
// `liembs eval` names them), <constraint> (each constraint block), <k> (a constraint row).
struct ColumnFamily {
  std::string_view pattern;
  std::string_view unit;
  std::string_view description;
  std::string_view present;  // when the run has these columns
};
const std::vector<ColumnFamily>& trajectory_columns();

// One summary.json key (and the same key of the Python summary dict).
struct SummaryKey {
  std::string_view key;
  std::string_view unit;
  std::string_view description;
  std::string_view present;
};
const std::vector<SummaryKey>& summary_keys();
// The declaration of `key`; throws std::logic_error for an undeclared key (a writer that
// uses a key must declare it first).
const SummaryKey& summary_key(std::string_view key);

// The numbers per body in the trajectory and in a study's record: position (3), orientation
// quaternion w, x, y, z (qw >= 0), body-fixed angular velocity (3), world velocity of the
// body origin (3).
inline constexpr std::array<std::string_view, 13> body_motion_components{
    "x", "y", "z", "qw", "qx", "qy", "qz", "wx", "wy", "wz", "vx", "vy", "vz"};
// The energy columns of the trajectory and of `liembs eval`'s algorithm 'energy'.
inline constexpr std::array<std::string_view, 3> energy_columns{"kinetic_energy", "potential_energy", "total_energy"};

// The 13 numbers of body_motion_components from a pose and its body-fixed twist (omega, R^T r').
void body_motion_values(const Pose& pose, const Vec6& twist, double* out);
// The accelerations per body in the trajectory of an absolute-coordinate run: the time
// derivatives of the last six body_motion_components, named "d" + the component as the
// floating base's twist rate is (column_names::twist_rate_components): dwx, dwy, dwz = omega'
// (body frame), dvx, dvy, dvz = r'' (world acceleration of the body origin).
inline constexpr const auto& body_acceleration_components = column_names::twist_rate_components;
// The 6 numbers of body_acceleration_components from a pose, its body twist V = (omega, u = R^T r')
// and the twist's rate V': omega' and r'' = R (u' + omega x u).
void body_acceleration_values(const Pose& pose, const Vec6& twist, const Vec6& twist_rate, double* out);

// What a run's columns depend on (RunLayout): the model's bodies, the tree's coordinates,
// the constraint blocks and so on.
struct RunShape {
  std::vector<std::string> bodies;
  bool tree = false;           // joint coordinates q.<dof> and rates qd.<dof>
  bool floating_base = false;  // base.* pose and twist (tree runs)
  std::string base_body;       // the floating base's body
  std::vector<std::string> coordinates;  // <dof>, in the order of State::coordinates
  bool accelerations = false;  // qdd.<dof> (and base.dwx..dvz): the integrator reports them
  bool body_accelerations = false;  // <body>.dwx..dvz: absolute coordinates, the integrator reports V'
  bool normalization = false;  // the parameterization has an invariant of its own (rp)
  std::vector<std::string> constraints;  // constraint blocks
  std::vector<std::string> prescribed;   // prescribed coordinates (tau.<dof>)
  std::vector<std::string> multipliers;  // multiplier column suffixes, "<constraint>[.<k>]"
};

// The columns of one run, in order, expanded from trajectory_columns() for `shape`.
// `family[c]` is the index of column c's declaration.
// Names are unique. A floating base whose body is named "base" is written once, by the
// base.* columns `liembs eval` reads (`body_kept` false for it: its base.vx,vy,vz are then
// R^T r', not the world velocity). Another body named "base" keeps its columns, and the
// floating base's columns it already has are left out (`base_kept`: pose 7, twist 6, twist
// rate 6 in column_names' order).
struct RunLayout {
  RunShape shape;
  std::vector<std::string> columns;
  std::vector<std::size_t> family;
  std::vector<bool> body_kept;
  std::array<bool, 19> base_kept{};
};
RunLayout make_run_layout(RunShape shape);

// A plugin component a run used, for the provenance of its outputs (summary.json, study.json).
struct PluginProvenance {
  std::string kind, name, version, file, abi_fingerprint;
};
// summary.json's and study.json's "provenance" object as JSON text: this build's version,
// commit, compiler and flavour, and `plugins` (host/summary_json.cpp).
std::string provenance_json_text(const std::vector<PluginProvenance>& plugins);

// The tables of the docs (docs/user-guide.md, between <!-- schema:trajectory --> and
// <!-- /schema:trajectory -->, and schema:summary): Markdown, one row per declaration.
std::string trajectory_columns_markdown();
std::string summary_keys_markdown();

}  // namespace liembs
