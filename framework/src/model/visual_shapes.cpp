// Visual shapes of a model's bodies, for the viewer (liembs/model/visual_shapes.hpp).
#include <liembs/model/visual_shapes.hpp>

namespace liembs {

std::string_view to_string(VisualShape::Type type) {
  switch (type) {
    case VisualShape::Type::box: return "box";
    case VisualShape::Type::sphere: return "sphere";
    case VisualShape::Type::cylinder: return "cylinder";
    case VisualShape::Type::capsule: return "capsule";
    case VisualShape::Type::ellipsoid: return "ellipsoid";
    case VisualShape::Type::mesh: return "mesh";
  }
  return "unknown";
}

std::string_view to_string(VisualMesh::Format format) {
  switch (format) {
    case VisualMesh::Format::stl: return "stl";
    case VisualMesh::Format::obj: return "obj";
    case VisualMesh::Format::triangles: return "triangles";
  }
  return "unknown";
}

}  // namespace liembs
