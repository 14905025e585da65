#pragma once
// The shapes the viewer (`liembs view`, docs/viewer.md) draws for a model's bodies, read from
// a model file's visual geometry (URDF and SDF <visual>, MJCF geoms). They have no part in the dynamics and are
// kept out of the Model: a reader per format gives them by body name (liembs/loaders/*_import.hpp). A body without shapes
// is drawn as the box of its mass and inertia.
#include <liembs/lie/types.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

// The triangles of a mesh shape: a file the viewer's page embeds and parses with three.js's
// loaders (STL, binary or ASCII, and Wavefront OBJ), or triangles given directly (MJCF: the
// meshes MuJoCo compiled). Shared by every shape that draws it.
struct VisualMesh {
  enum class Format { stl, obj, triangles };
  Format format = Format::triangles;
  std::filesystem::path file;   // stl, obj: the file, resolved against the model file
  std::string name;             // triangles: the mesh's name in the model file
  std::vector<float> vertices;  // triangles: x, y, z of each vertex, in the shape's frame before scaling
  std::vector<int> faces;       // triangles: three indices into the vertices per triangle
};

// The largest mesh a page embeds: a file of more bytes, or triangles of more than this many
// bytes of vertices and faces, is not drawn (a warning names it; the body keeps its other
// shapes or its inertia box).
inline constexpr std::uintmax_t max_visual_mesh_bytes = std::uintmax_t{32} << 20;

struct VisualShape {
  enum class Type { box, sphere, cylinder, capsule, ellipsoid, mesh };
  Type type = Type::box;
  Pose pose;                     // the shape's frame in the body frame
  Vec3 box_size = Vec3::Zero();  // box: edge lengths along the shape's x, y, z
  Vec3 radii = Vec3::Zero();     // ellipsoid: semi-axes along x, y, z
  double radius = 0.0;           // sphere, cylinder, capsule
  double length = 0.0;           // cylinder, capsule: along the shape's z axis (capsule: without its caps)
  std::shared_ptr<const VisualMesh> mesh;  // mesh: its triangles
  Vec3 scale = Vec3::Ones();     // mesh: factors along the shape's x, y, z
  std::optional<std::array<double, 4>> color;  // RGBA in [0, 1], when the file gives one
};

std::string_view to_string(VisualShape::Type type);
std::string_view to_string(VisualMesh::Format format);

// Shapes by body name, and those fixed in the world (a URDF root link that stands for the world).
struct ModelVisuals {
  std::map<std::string, std::vector<VisualShape>> by_body;
  std::vector<VisualShape> world;
};

}  // namespace liembs
