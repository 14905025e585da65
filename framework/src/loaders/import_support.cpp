#include "import_support.hpp"
#include "resource_uri.hpp"

#include <liembs/error.hpp>
#include <liembs/util/warning.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <numeric>

namespace liembs {

void require_model_file(const std::filesystem::path& file, const std::string& format) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) throw ModelError(file.string() + ": cannot open the " + format + " file");
}

std::optional<std::size_t> massless_moving_body(const Model& model) {
  const std::size_t n = model.bodies.size();
  std::vector<std::size_t> group(n);
  std::iota(group.begin(), group.end(), std::size_t{0});
  const auto find = [&](std::size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  std::vector<bool> welded_to_world(n, false);
  for (const auto& joint : model.joints) {
    if (joint.type != JointType::fixed) continue;
    if (joint.parent == Joint::world)
      welded_to_world[joint.child] = true;
    else
      group[find(joint.child)] = find(joint.parent);
  }
  std::vector<double> group_mass(n, 0.0);
  std::vector<bool> group_welded(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    group_mass[find(i)] += model.bodies[i].mass;
    if (welded_to_world[i]) group_welded[find(i)] = true;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!(model.bodies[i].mass > 0.0) && !group_welded[find(i)] && !(group_mass[find(i)] > 0.0)) return i;
  return std::nullopt;
}

std::string quoted_names(const std::vector<std::string>& names, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) text += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

void warn_not_modelled(const std::string& file, const std::vector<std::string>& items) {
  if (items.empty()) return;
  std::string message = file + ": not modelled by LieMBS, left out of the dynamics: ";
  for (std::size_t i = 0; i < items.size(); ++i) message += (i ? "; " : "") + items[i];
  warn(message);
}

namespace {

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

// Why `file` is not the `format` file its name says, or "" when it looks like one: a binary
// STL is an 80-byte header, the number n of triangles (4 bytes, little-endian) and 50 bytes
// per triangle; an ASCII STL starts with "solid"; an OBJ file has a face line ("f ...").
std::string mesh_file_problem(const std::filesystem::path& file, VisualMesh::Format format, std::uintmax_t size) {
  std::ifstream stream(file, std::ios::binary);
  if (!stream) return "cannot open " + file.string();
  if (format == VisualMesh::Format::stl) {
    std::array<unsigned char, 84> head{};
    stream.read(reinterpret_cast<char*>(head.data()), head.size());
    const auto read = static_cast<std::size_t>(stream.gcount());
    if (read == head.size()) {
      const std::uintmax_t triangles = head[80] | head[81] << 8 | head[82] << 16 | std::uintmax_t{head[83]} << 24;
      if (size == 84 + 50 * triangles) return triangles > 0 ? "" : file.string() + " is a binary STL file without triangles";
    }
    std::size_t start = 0;
    while (start < read && std::isspace(head[start])) ++start;
    if (read - start >= 5 && std::string(head.begin() + long(start), head.begin() + long(start) + 5) == "solid") return "";
    return file.string() + " is not an STL file (neither binary, 84 + 50 bytes per triangle, nor ASCII, 'solid ...')";
  }
  for (std::string line; std::getline(stream, line);) {
    std::size_t start = 0;
    while (start < line.size() && std::isspace(static_cast<unsigned char>(line[start]))) ++start;
    if (line.size() > start + 1 && line[start] == 'f' && std::isspace(static_cast<unsigned char>(line[start + 1]))) return "";
  }
  return file.string() + " has no faces ('f' lines): not an OBJ mesh";
}

}  // namespace

std::shared_ptr<const VisualMesh> visual_mesh_file(const std::filesystem::path& model_file, const std::string& uri,
                                                   const std::string& where, ResourceSearch& search) {
  const auto not_drawn = [&](const std::string& why) -> std::shared_ptr<const VisualMesh> {
    warn(where + "<mesh> '" + uri + "' is not drawn: " + why +
         "; the viewer draws the link's other shapes, or its inertia box");
    return nullptr;
  };
  std::filesystem::path file;
  std::string found_in;  // how a package:// or model:// URI led to `file`
  if (is_resource_uri(uri)) {
    const ResourceSearch::Found found = search.resolve(uri, model_file);
    if (!found.file) return not_drawn(found.note);
    file = *found.file;
    found_in = " (" + found.note + ")";
  } else {
    std::string path = uri;
    if (path.rfind("file://", 0) == 0) path.erase(0, 7);
    const std::size_t scheme = path.find("://");
    if (scheme != std::string::npos)
      return not_drawn("only paths relative to the model file, absolute paths, file://, package:// and model:// URIs "
                       "are read, not " + path.substr(0, scheme + 3) + " (give the path of the file)");
    if (path.empty()) return not_drawn("no file name");
    file = path;
    if (file.is_relative()) file = model_file.parent_path() / file;
    file = file.lexically_normal();
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) return not_drawn("no file " + file.string() + found_in);
  auto mesh = std::make_shared<VisualMesh>();
  const std::string extension = lower_case(file.extension().string());
  if (extension == ".stl") mesh->format = VisualMesh::Format::stl;
  else if (extension == ".obj") mesh->format = VisualMesh::Format::obj;
  else return not_drawn("only STL (.stl) and OBJ (.obj) files are read, not " + file.filename().string());
  const std::uintmax_t size = std::filesystem::file_size(file, error);
  if (error) return not_drawn("cannot read " + file.string() + ": " + error.message());
  if (size > max_visual_mesh_bytes)
    return not_drawn(file.string() + " has " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(max_visual_mesh_bytes >> 20) + " MiB a page embeds (simplify the mesh)");
  if (const std::string problem = mesh_file_problem(file, mesh->format, size); !problem.empty()) return not_drawn(problem);
  mesh->file = file;
  return mesh;
}

}  // namespace liembs
