#pragma once
// The shapes the viewer (`liembs view`, docs/viewer.md) draws for a model's bodies, read from
// a model file's visual geometry (URDF <visual>). They have no part in the dynamics and are
// kept out of the Model: a reader per format gives them by body name (liembs/loaders/*_import.hpp). A body without shapes
// is drawn as the box of its mass and inertia.
#include <liembs/lie/types.hpp>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

struct VisualShape {
  enum class Type { box, sphere, cylinder, capsule, ellipsoid };
  Type type = Type::box;
  Pose pose;                     // the shape's frame in the body frame
  Vec3 box_size = Vec3::Zero();  // box: edge lengths along the shape's x, y, z
  Vec3 radii = Vec3::Zero();     // ellipsoid: semi-axes along x, y, z
  double radius = 0.0;           // sphere, cylinder, capsule
  double length = 0.0;           // cylinder, capsule: along the shape's z axis (capsule: without its caps)
  std::optional<std::array<double, 4>> color;  // RGBA in [0, 1], when the file gives one
};

std::string_view to_string(VisualShape::Type type);

// Shapes by body name, and those fixed in the world (a URDF root link that stands for the world).
struct ModelVisuals {
  std::map<std::string, std::vector<VisualShape>> by_body;
  std::vector<VisualShape> world;
};

}  // namespace liembs
