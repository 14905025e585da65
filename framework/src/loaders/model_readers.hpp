#pragma once
// Readers of the parts of [model] that live in files of their own (framework/src/model).
#include <liembs/config/config_table.hpp>
#include <liembs/model/model.hpp>

#include <memory>
#include <string>

namespace liembs {

// [[model.constraints]]: geometric constraints (DP1, DP2, D, CD) and the composite joints
// of paper 004's Table 1, appended to model.constraints (docs/geometric-constraints.md).
void read_geometric_constraints(const ConfigTable& model_table, Model& model);

// [model] json = "file": bodies (poses, velocities) and constraints from a model file in the
// JSON schema of paper 004's authors; [[model.bodies]] give mass and inertia by name, and
// [model.drivers.<constraint>] override f and give alternate drivers.
Model read_json_model(const ConfigTable& model_table);

// f(t) of a constraint key: a number or an expression string; a parse error names the key
// and the character position.
std::shared_ptr<const TimeFunction> read_time_function(const ConfigTable& table, std::string_view key);

}  // namespace liembs
