// Visual shapes of a model's bodies, for the viewer (liembs/model/visual_shapes.hpp).
#include <liembs/config/config_table.hpp>
#include <liembs/model/visual_shapes.hpp>

namespace liembs {

std::string_view to_string(VisualShape::Type type) {
  switch (type) {
    case VisualShape::Type::box: return "box";
    case VisualShape::Type::sphere: return "sphere";
    case VisualShape::Type::cylinder: return "cylinder";
    case VisualShape::Type::capsule: return "capsule";
    case VisualShape::Type::ellipsoid: return "ellipsoid";
  }
  return "unknown";
}

ModelVisuals read_model_visuals(const ConfigTable& model_table) {
  for (const char* key : {"urdf", "mjcf", "sdf"}) {
    if (!model_table.contains(key)) continue;
    // The file as load_model finds it: relative to the TOML file's folder.
    std::filesystem::path file(model_table.string(key));
    if (file.is_relative()) file = (model_table.file().parent_path() / file).lexically_normal();
    const std::string format = key;
    if (format == "urdf") return read_urdf_visuals(file);
    if (format == "mjcf") return read_mjcf_visuals(file);
    return read_sdf_visuals(file);
  }
  return {};
}

}  // namespace liembs
