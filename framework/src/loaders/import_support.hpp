#pragma once
// What the model-file importers (URDF, MJCF, SDF) share (framework/src/model).
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace liembs {

// Throws ModelError("<file>: cannot open the <format> file") unless `file` is a regular file.
void require_model_file(const std::filesystem::path& file, const std::string& format);

// A body that moves without mass: bodies welded by fixed joints move as one, a group welded
// to the world does not move, and every other group needs mass (else the mass matrix is
// singular). Returns the first such body, or nothing.
std::optional<std::size_t> massless_moving_body(const Model& model);

// "'a', 'b', 'c' and 4 more": at most `shown` names.
std::string quoted_names(const std::vector<std::string>& names, std::size_t shown = 6);

// The one warning of an import: "<file>: not modelled by LieMBS, left out of the dynamics:
// <item>; <item>..." (nothing when `items` is empty).
void warn_not_modelled(const std::string& file, const std::vector<std::string>& items);

class ResourceSearch;

// The mesh file a <mesh> of `model_file` names by `uri`: a path relative to the model file's
// folder, an absolute path, a file:// URI, or a package:// or model:// URI found by `search`
// (resource_uri.hpp), of an STL (binary or ASCII) or OBJ file of at most
// max_visual_mesh_bytes. Anything else (a package or model not found, other schemes, a missing
// file, another format, a larger file, a file that is not what its name says) is not drawn:
// a warning "<where><mesh> 'uri' is not drawn: <why>; ..." and nullptr. `where` names the
// model file, line and link ("arm.urdf:12: link 'arm': ").
std::shared_ptr<const VisualMesh> visual_mesh_file(const std::filesystem::path& model_file, const std::string& uri,
                                                   const std::string& where, ResourceSearch& search);

}  // namespace liembs
