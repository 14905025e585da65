#pragma once
// Reading a model, and the shapes the viewer draws for it, from the [model] table of a run file.
#include <liembs/config/config_table.hpp>
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>

namespace liembs {

// Reads the [model] table (format in README.md, "TOML format", "Tree models") and validates
// it: duplicate names, non-positive mass, inertia not symmetric positive definite or
// violating the triangle inequality, rotation not orthonormal; errors name the body.
// With `urdf = "file"` (relative to the TOML file) the bodies and joints come from the URDF
// file (import_urdf); a URDF problem is a ModelError naming the key's position.
// [model.initial_position] / [model.initial_velocity] set joint values by joint name, and
// [model.prescribed] joint motions as expressions of t (docs/prescribed-motion.md).
// [[model.constraints]] adds geometric constraints (docs/geometric-constraints.md); with
// `json = "file"` the bodies' poses and velocities and the constraints come from a model
// file in the JSON schema of paper 004's authors, and [[model.bodies]] give their inertia.
Model load_model(const ConfigTable& model_table);

// The visual shapes of the model a [model] table describes: from its urdf, mjcf or sdf file
// when it has one, else none (TOML and paper 004's JSON have no visual geometry).
ModelVisuals read_model_visuals(const ConfigTable& model_table);

}  // namespace liembs
