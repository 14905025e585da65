#pragma once
// The shapes the viewer (`liembs view`, docs/viewer.md) draws for a model's bodies, read from
// a model file's visual geometry (URDF <visual>). They have no part in the dynamics and are
// kept out of the Model: a reader per format gives them by body name. A body without shapes
// is drawn as the box of its mass and inertia.
#include <liembs/lie/types.hpp>

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

class ConfigTable;

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

// The <visual> boxes, spheres and cylinders of every link of a URDF file, in the link frame,
// with their <material> colour; meshes are not read. The shapes of a root link without mass
// (which import_urdf turns into the world) are the world's. Throws ModelError
// naming the file, line and link for a non-positive or non-finite size.
ModelVisuals read_urdf_visuals(const std::filesystem::path& file);

// The geoms MuJoCo draws by default (groups 0 to 2, alpha > 0) of an MJCF file, through
// MuJoCo's compiler (sizes as full lengths: MuJoCo's half-sizes doubled), with their colour;
// planes, height fields and meshes are not read. Bodies are named as import_mjcf names them;
// the world body's geoms are the world's. Throws ModelError as import_mjcf does.
ModelVisuals read_mjcf_visuals(const std::filesystem::path& file);

// The <visual> boxes, spheres, cylinders, capsules and ellipsoids of every link of an SDF
// file, in the link frame (libsdformat's frame semantics), with the material's diffuse
// colour; meshes, planes and height maps are not read. Throws ModelError as import_sdf does.
ModelVisuals read_sdf_visuals(const std::filesystem::path& file);

// The visual shapes of the model a [model] table describes: from its urdf, mjcf or sdf file
// when it has one, else none (TOML and paper 004's JSON have no visual geometry).
ModelVisuals read_model_visuals(const ConfigTable& model_table);

}  // namespace liembs
