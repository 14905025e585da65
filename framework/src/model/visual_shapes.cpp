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
  if (!model_table.contains("urdf")) return {};
  // The file as load_model finds it: relative to the TOML file's folder.
  std::filesystem::path file(model_table.string("urdf"));
  if (file.is_relative()) file = (model_table.file().parent_path() / file).lexically_normal();
  return read_urdf_visuals(file);
}

}  // namespace liembs
