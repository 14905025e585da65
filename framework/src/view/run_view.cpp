// The page of `liembs view` (liembs/view/run_view.hpp): the run's model reduced to what the
// page draws (shapes, joint axes, constraint points) and the trajectory's columns, as JSON
// inside the HTML template with three.js and the viewer's script (view_resources.hpp).
#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/io/csv.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/util/nearest_name.hpp>
#include <liembs/view/run_view.hpp>

#include "view_resources.hpp"

#include <nlohmann/json.hpp>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace liembs {

namespace {

using Json = nlohmann::ordered_json;

// The pose columns of a body in trajectory.csv, in the order the page reads them.
constexpr const char* pose_columns[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};

std::string read_text(const std::filesystem::path& file, const std::string& what) {
  std::ifstream stream(file, std::ios::binary);
  if (!stream) throw ConfigError(file.string() + ": cannot open " + what);
  note_input(file);  // the page must not replace it (liembs/io/file_guard.hpp)
  std::ostringstream text;
  text << stream.rdbuf();
  if (stream.bad()) throw ConfigError(file.string() + ": cannot read " + what);
  return text.str();
}

Json vector_json(const Vec3& v) { return Json::array({v.x(), v.y(), v.z()}); }

// three.js's order (x, y, z, w).
Json quaternion_json(const Mat3& R) {
  const Eigen::Quaterniond q(R);
  return Json::array({q.x(), q.y(), q.z(), q.w()});
}

}  // namespace

// Written here rather than with Boost.Archive's base64_from_binary<transform_width<...>>:
// that gives the same text (its '=' padding added by hand) but is slower on a mesh of
// max_visual_mesh_bytes, moving each byte through two iterator adaptors.
std::string base64(std::string_view bytes) {
  static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k)
      group = group << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) text += k <= n ? digits[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return text;
}

namespace {

// The meshes the page's shapes draw, each once (a file by its path, triangles by their
// VisualMesh), as the page's "meshes": {format, source, base64} for a file, {format,
// source, vertices, faces} for triangles. A shape refers to its mesh by index.
class MeshTable {
 public:
  std::size_t index(const VisualMesh& mesh) {
    const std::string key = mesh.format == VisualMesh::Format::triangles
                                ? "triangles:" + std::to_string(reinterpret_cast<std::uintptr_t>(&mesh))
                                : "file:" + mesh.file.string();
    const auto [found, added] = indices_.emplace(key, json_.size());
    if (!added) return found->second;
    Json json;
    json["format"] = std::string(to_string(mesh.format));
    if (mesh.format == VisualMesh::Format::triangles) {
      json["source"] = mesh.name;
      // Each float as the double its shortest text reads back to (0.1f as 0.1, not 0.100000001).
      Json vertices = Json::array();
      char text[32];
      for (const float value : mesh.vertices) {
        const auto end = std::to_chars(text, text + sizeof text, value).ptr;
        vertices.push_back(std::strtod(std::string(text, end).c_str(), nullptr));
      }
      json["vertices"] = std::move(vertices);
      json["faces"] = mesh.faces;
    } else {
      json["source"] = mesh.file.filename().string();
      const std::string bytes = read_text(mesh.file, "the mesh file");
      if (bytes.size() > max_visual_mesh_bytes)
        throw ConfigError(mesh.file.string() + ": " + std::to_string(bytes.size()) + " bytes, more than the " +
                          std::to_string(max_visual_mesh_bytes >> 20) + " MiB a page embeds");
      json["base64"] = base64(bytes);
    }
    json_.push_back(std::move(json));
    return found->second;
  }

  Json take() { return std::move(json_); }

 private:
  std::map<std::string, std::size_t> indices_;
  Json json_ = Json::array();
};

Json shape_json(const VisualShape& shape, const char* origin, MeshTable& meshes) {
  Json json;
  json["type"] = std::string(to_string(shape.type));
  json["from"] = origin;
  json["position"] = vector_json(shape.pose.r);
  json["quaternion"] = quaternion_json(shape.pose.R);
  switch (shape.type) {
    case VisualShape::Type::box: json["box_size"] = vector_json(shape.box_size); break;
    case VisualShape::Type::ellipsoid: json["radii"] = vector_json(shape.radii); break;
    case VisualShape::Type::sphere: json["radius"] = shape.radius; break;
    case VisualShape::Type::cylinder:
    case VisualShape::Type::capsule:
      json["radius"] = shape.radius;
      json["length"] = shape.length;
      break;
    case VisualShape::Type::mesh:
      if (!shape.mesh) throw Error("a mesh shape without its mesh");
      json["mesh"] = meshes.index(*shape.mesh);
      json["scale"] = vector_json(shape.scale);
      break;
  }
  json["color"] = shape.color ? Json(*shape.color) : Json(nullptr);
  return json;
}

// The box of uniform density with the body's mass and inertia about its centre of mass: for
// principal moments I_k, edges a_k = sqrt(6 (I_l + I_m - I_k) / m). A flat or slender body's
// zero edges get 5 % of the longest so that it stays visible. Nothing for a massless body or
// a point mass.
std::optional<VisualShape> inertia_box(const RigidBody& body) {
  if (!(body.mass > 0.0) || body.inertia.isZero(0.0)) return std::nullopt;
  const Eigen::SelfAdjointEigenSolver<Mat3> solver(body.inertia);
  const Vec3 moments = solver.eigenvalues();
  Mat3 axes = solver.eigenvectors();
  if (axes.determinant() < 0.0) axes.col(2) *= -1.0;  // a rotation
  Vec3 edges;
  for (int k = 0; k < 3; ++k)
    edges(k) = std::sqrt(std::max(0.0, 6.0 * (moments.sum() - 2.0 * moments(k)) / body.mass));
  edges = edges.cwiseMax(0.05 * edges.maxCoeff());
  VisualShape box;
  box.type = VisualShape::Type::box;
  box.pose.R = axes;
  box.pose.r = body.center_of_mass;
  box.box_size = edges;
  return box;
}

// An axis of a joint or constraint, fixed in body `body` (-1: the world): `point` and
// `direction` in that body's frame at its reference pose.
Json axis_json(long body, const Pose& frame, const Vec3& world_point, const Vec3& world_direction, const char* kind) {
  Json json;
  json["body"] = body;
  json["kind"] = kind;
  json["point"] = vector_json(frame.R.transpose() * (world_point - frame.r));
  json["direction"] = vector_json(frame.R.transpose() * world_direction);
  return json;
}

long body_number(std::size_t index) { return index == Joint::world ? -1L : static_cast<long>(index); }

// The axes of a joint's screws Y = (e; v) at q = 0. A screw with e != 0 turns about the line
// through e x v / |e|^2 (revolute, helical), one with e = 0 slides along v (prismatic). The
// first axis of a joint with several is fixed in the parent, the others in the child: exact
// for one and two degrees of freedom (a universal joint's cross), drawn at q = 0 for the
// middle axis of three.
Json joint_json(const Model& model, const Joint& joint) {
  Json json;
  json["name"] = joint.name;
  json["type"] = std::string(to_string(joint.type));
  json["parent"] = body_number(joint.parent);
  json["child"] = body_number(joint.child);
  Json axes = Json::array();
  const Pose& child_pose = model.bodies[joint.child].reference_pose;
  for (std::size_t k = 0; k < joint.screws.size(); ++k) {
    const std::size_t attached = (k == 0 && joint.screws.size() > 1) ? joint.parent : joint.child;
    const Pose frame = attached == Joint::world ? Pose{} : model.bodies[attached].reference_pose;
    const Vec3 e = joint.screws[k].head<3>(), v = joint.screws[k].tail<3>();
    if (e.norm() > 1e-12) {
      const Vec3 direction = e.normalized();
      const Vec3 on_axis = e.cross(v) / e.squaredNorm();
      // The point of the axis nearest the child's origin.
      const Vec3 point = on_axis + direction * direction.dot(child_pose.r - on_axis);
      axes.push_back(axis_json(body_number(attached), frame, point, direction, "revolute"));
    } else if (v.norm() > 1e-12) {
      axes.push_back(axis_json(body_number(attached), frame, child_pose.r, v.normalized(), "prismatic"));
    }
  }
  json["axes"] = std::move(axes);
  return json;
}

// The points and directions of the geometric constraints (paper 004's GCONs) grouped by the
// name they share (a composite joint): points P on body i and Q on body j, and the body-fixed
// directions a_bar drawn through the first point the constraint has on that body.
Json constraints_json(const Model& model) {
  struct Marks {
    std::vector<std::pair<long, Vec3>> points;
    std::vector<std::pair<long, Vec3>> directions;
  };
  std::vector<std::string> order;
  std::map<std::string, Marks> by_name;
  const auto marks_of = [&](const std::string& name) -> Marks& {
    if (!by_name.count(name)) order.push_back(name);
    return by_name[name];
  };
  const auto body = [](std::size_t index) { return index == static_cast<std::size_t>(-1) ? -1L : static_cast<long>(index); };
  const auto add_point = [](Marks& marks, long on, const Vec3& point) {
    for (const auto& [b, p] : marks.points)
      if (b == on && (p - point).norm() < 1e-12) return;
    marks.points.emplace_back(on, point);
  };
  for (const auto& constraint : model.constraints) {
    Marks& marks = marks_of(constraint.name);
    using Type = GeometricConstraint::Type;
    if (constraint.type != Type::dp1) {
      add_point(marks, body(constraint.body_i), constraint.s_bar_p_i);
      add_point(marks, body(constraint.body_j), constraint.s_bar_q_j);
    }
    if (constraint.type == Type::dp1 || constraint.type == Type::dp2)
      marks.directions.emplace_back(body(constraint.body_i), constraint.a_bar_i);
    if (constraint.type == Type::dp1) marks.directions.emplace_back(body(constraint.body_j), constraint.a_bar_j);
  }
  Json list = Json::array();
  for (const auto& name : order) {
    const Marks& marks = by_name[name];
    Json points = Json::array(), axes = Json::array();
    for (const auto& [on, point] : marks.points) points.push_back({{"body", on}, {"point", vector_json(point)}});
    for (const auto& [on, direction] : marks.directions) {
      if (direction.norm() < 1e-12) continue;
      Vec3 through = Vec3::Zero();
      for (const auto& [b, p] : marks.points)
        if (b == on) {
          through = p;
          break;
        }
      axes.push_back({{"body", on}, {"kind", "direction"}, {"point", vector_json(through)},
                      {"direction", vector_json(direction.normalized())}});
    }
    list.push_back({{"name", name}, {"points", std::move(points)}, {"axes", std::move(axes)}});
  }
  return list;
}

// trajectory.csv as a table: the header's names and every row's numbers (NaN for a field
// that is not a finite number, e.g. the multipliers of the first row).
ViewTable read_trajectory(const std::filesystem::path& file) {
  const std::string text = read_text(file, "the trajectory");
  ViewTable table;
  table.source = file.string();
  std::vector<std::string_view> fields;
  std::size_t line = 0, line_breaks = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = csv::record_end(std::string_view(text).substr(start), line_breaks);
    const std::string_view record =
        std::string_view(text).substr(start, end == std::string_view::npos ? std::string_view::npos : end);
    start = end == std::string_view::npos ? text.size() : start + end + 1;
    line += 1 + line_breaks;
    if (csv::is_blank(record)) continue;
    csv::split_record(record, fields);
    if (table.names.empty()) {
      for (const auto field : fields) table.names.push_back(csv::unquote(field));
      if (table.names[0] != "time")
        throw ConfigError(file.string() + ":" + std::to_string(line) + ": the first column is '" + table.names[0] +
                          "', not 'time'");
      table.columns.resize(table.names.size());
      continue;
    }
    if (fields.size() != table.names.size())
      throw ConfigError(file.string() + ":" + std::to_string(line) + ": " + std::to_string(fields.size()) +
                        " fields, the header has " + std::to_string(table.names.size()));
    for (std::size_t c = 0; c < fields.size(); ++c) {
      double value = std::nan("");
      if (!csv::parse_finite(fields[c], value) && c == 0)
        throw ConfigError(file.string() + ":" + std::to_string(line) + ": time '" + std::string(fields[c]) +
                          "' is not a finite number");
      table.columns[c].push_back(value);
    }
  }
  if (table.names.empty()) throw ConfigError(file.string() + ": empty file, not a trajectory");
  if (table.columns[0].empty()) throw ConfigError(file.string() + ": no rows after the header");
  return table;
}

// JSON can only hold '<' in strings here; written as \u003c it cannot end the <script>
// element the data sits in.
std::string script_safe(const std::string& json) {
  std::string text;
  text.reserve(json.size());
  for (const char c : json) {
    if (c == '<') text += "\\u003c";
    else text += c;
  }
  return text;
}

// The model of the run and its shapes: its TOML file's [model] table, relative paths resolved
// against that file.
std::pair<Model, ModelVisuals> load_run_model(const std::filesystem::path& config,
                                              const std::filesystem::path& run_directory) {
  if (!std::filesystem::is_regular_file(config))
    throw ConfigError(run_directory.string() + ": the run's model file '" + config.string() +
                      "' (summary.json \"config\") does not exist; give it with --config FILE.toml");
  try {
    auto document = ConfigDocument::load(config);
    const ConfigTable model_table = document->root().table("model");
    return {load_model(model_table), read_model_visuals(model_table)};
  } catch (const Error& error) {
    throw ConfigError(run_directory.string() + ": cannot load the run's model from " + config.string() + ": " +
                      error.what());
  }
}

// Length the page sizes frames, axes and markers by: the extent of the bodies' paths and shapes.
double model_scale(const Model& model, const ModelVisuals& visuals, const ViewTable& table,
                   const std::vector<std::size_t>& x_columns) {
  Vec3 low = Vec3::Constant(std::numeric_limits<double>::infinity()), high = -low;
  for (const std::size_t column : x_columns)
    for (std::size_t row = 0; row < table.columns[column].size(); ++row) {
      const Vec3 position(table.columns[column][row], table.columns[column + 1][row], table.columns[column + 2][row]);
      if (!position.allFinite()) continue;
      low = low.cwiseMin(position);
      high = high.cwiseMax(position);
    }
  double scale = (high - low).allFinite() ? (high - low).norm() : 0.0;
  for (const auto& [name, shapes] : visuals.by_body)
    for (const auto& shape : shapes)
      scale = std::max({scale, shape.box_size.norm(), 2.0 * shape.radii.maxCoeff(), 2.0 * shape.radius, shape.length});
  for (const auto& body : model.bodies)
    if (const auto box = inertia_box(body)) scale = std::max(scale, box->box_size.norm());
  return scale > 0.0 ? scale : 1.0;
}

// The rows the page keeps: every k-th and the last, at most max_frames of them
// (k = ceil((rows - 1) / (max_frames - 1))).
std::vector<std::size_t> kept_rows(std::size_t rows, std::size_t max_frames) {
  const std::size_t stride = rows <= max_frames ? 1 : (rows - 1 + max_frames - 2) / (max_frames - 1);
  std::vector<std::size_t> kept;
  for (std::size_t row = 0; row < rows; row += stride) kept.push_back(row);
  if (kept.back() != rows - 1) kept.push_back(rows - 1);
  return kept;
}

// The page's data: the model reduced to what is drawn, and the table's kept rows.
std::string page_data(const Model& model, const ModelVisuals& visuals, const ViewTable& table,
                      const ViewOptions& options) {
  if (table.names.empty() || table.names[0] != "time" || table.columns.size() != table.names.size() ||
      table.columns[0].empty())
    throw ConfigError(table.source + ": no rows, or the first column is not 'time'");
  for (const auto& column : table.columns)
    if (column.size() != table.columns[0].size()) throw ConfigError(table.source + ": columns of different lengths");
  std::map<std::string, std::size_t> column_index;
  for (std::size_t c = 0; c < table.names.size(); ++c) column_index.emplace(table.names[c], c);
  std::vector<std::size_t> x_columns;  // per body, the index of <body>.x; the other six follow it
  for (const auto& body : model.bodies) {
    const auto x = column_index.find(body.name + ".x");
    bool found = x != column_index.end() && x->second + std::size(pose_columns) <= table.names.size();
    for (std::size_t k = 1; found && k < std::size(pose_columns); ++k)
      found = table.names[x->second + k] == body.name + "." + pose_columns[k];
    if (!found)
      throw ConfigError(table.source + ": no pose columns " + body.name + ".x, .y, .z, .qw, .qx, .qy, .qz for body '" +
                        body.name + "' of the model (was the run made from another model?)");
    x_columns.push_back(x->second);
  }
  std::string column = options.column.empty() ? "total_energy" : options.column;
  if (!column_index.count(column) || column == "time") {
    if (!options.column.empty()) {
      const std::vector<std::string> names(table.names.begin() + 1, table.names.end());
      const std::string near = nearest_name(column, names);
      throw ConfigError("--column '" + column + "' is not a column of " + table.source +
                        (near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
    column = table.names.size() > 1 ? table.names[1] : "time";
  }

  Json data;
  data["title"] = table.title;
  auto notes = Json::array();
  for (const auto& [key, value] : table.notes) notes.push_back(key + " " + value);
  data["notes"] = std::move(notes);
  data["rows_in_source"] = table.columns[0].size();
  const double gravity = model.gravity.norm();
  data["up"] = vector_json(gravity > 0.0 ? Vec3(-model.gravity / gravity) : Vec3::UnitZ());
  data["scale"] = model_scale(model, visuals, table, x_columns);
  MeshTable meshes;
  Json bodies = Json::array();
  for (const auto& body : model.bodies) {
    Json shapes = Json::array();
    if (const auto found = visuals.by_body.find(body.name); found != visuals.by_body.end())
      for (const auto& shape : found->second) shapes.push_back(shape_json(shape, "visual", meshes));
    if (shapes.empty()) {
      if (const auto box = inertia_box(body)) shapes.push_back(shape_json(*box, "inertia", meshes));
    }
    bodies.push_back({{"name", body.name},
                      {"mass", body.mass},
                      {"center_of_mass", vector_json(body.center_of_mass)},
                      {"shapes", std::move(shapes)}});
  }
  data["bodies"] = std::move(bodies);
  Json world_shapes = Json::array();
  for (const auto& shape : visuals.world) world_shapes.push_back(shape_json(shape, "visual", meshes));
  data["world_shapes"] = std::move(world_shapes);
  data["meshes"] = meshes.take();
  Json joints = Json::array();
  for (const auto& joint : model.joints) joints.push_back(joint_json(model, joint));
  data["joints"] = std::move(joints);
  data["constraints"] = constraints_json(model);
  data["column"] = column;

  // The columns, written by hand: the shortest text that reads back to each number (a drift
  // of 1e-12 on an energy of 10 stays visible), null where there is none.
  const auto rows = kept_rows(table.columns[0].size(), std::max<std::size_t>(options.max_frames, 2));
  std::string text = data.dump();
  text.pop_back();  // the closing brace
  text += ",\"columns\":{";
  char number[csv::max_number_chars];
  for (std::size_t c = 0; c < table.names.size(); ++c) {
    text += (c ? ",\n" : "\n") + Json(table.names[c]).dump() + ":[";
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (k) text += ',';
      const double value = table.columns[c][rows[k]];
      if (std::isfinite(value)) text.append(number, csv::append_number(number, value));
      else text += "null";
    }
    text += ']';
  }
  text += "}}";
  return script_safe(text);
}


// Replaces each "{{NAME}}" of the template by its text, in one pass.
std::string fill_template(std::string_view page, const std::map<std::string_view, std::string_view>& parts) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t open; (open = page.find("{{", start)) != std::string_view::npos;) {
    const std::size_t close = page.find("}}", open);
    const auto part = close == std::string_view::npos ? parts.end() : parts.find(page.substr(open + 2, close - open - 2));
    if (part == parts.end()) {  // not a placeholder
      out.append(page.substr(start, open + 2 - start));
      start = open + 2;
      continue;
    }
    out.append(page.substr(start, open - start));
    out.append(part->second);
    start = close + 2;
  }
  out.append(page.substr(start));
  return out;
}


std::string page_html(const std::string& data) {
  return fill_template(view_resources::viewer_html, {{"THREE_JS", view_resources::three_js},
                                                     {"ORBIT_CONTROLS_JS", view_resources::orbit_controls_js},
                                                     {"STL_LOADER_JS", view_resources::stl_loader_js},
                                                     {"OBJ_LOADER_JS", view_resources::obj_loader_js},
                                                     {"VIEWER_JS", view_resources::viewer_js},
                                                     {"RUN_DATA", data}});
}

// A run folder read: its model, its trajectory, and the files they came from.
struct RunFolder {
  Model model;
  ModelVisuals visuals;
  ViewTable table;
  std::vector<std::filesystem::path> inputs;
};

RunFolder read_run_folder(const std::filesystem::path& run_directory, const ViewOptions& options) {
  if (!std::filesystem::is_directory(run_directory))
    throw ConfigError(run_directory.string() + ": not a folder (give the --output folder of 'liembs run')");
  const auto summary_file = run_directory / "summary.json";
  if (!std::filesystem::exists(summary_file))
    throw ConfigError(run_directory.string() + ": not a run folder (no summary.json; 'liembs run FILE.toml --output " +
                      run_directory.string() + "' writes one)");
  Json summary;
  try {
    summary = Json::parse(read_text(summary_file, "the run's summary"));
  } catch (const Json::exception& error) {
    throw ConfigError(summary_file.string() + ": not a run summary: " + error.what());
  }
  if (!summary.is_object()) throw ConfigError(summary_file.string() + ": not a run summary (not a JSON object)");
  const auto trajectory_file = run_directory / "trajectory.csv";
  if (!std::filesystem::exists(trajectory_file))
    throw ConfigError(run_directory.string() + ": the run has no trajectory.csv (it was made with [output] "
                      "trajectory = false?); nothing to animate");

  std::filesystem::path config;
  if (options.config) config = *options.config;
  else if (summary.contains("config") && summary["config"].is_string()) config = summary["config"].get<std::string>();
  else throw ConfigError(summary_file.string() + ": no \"config\" (the run's TOML file); give it with --config FILE.toml");

  auto [model, visuals] = load_run_model(config, run_directory);
  RunFolder run{std::move(model), std::move(visuals), read_trajectory(trajectory_file),
                {summary_file, trajectory_file, config}};
  const auto title = summary.find("title");
  run.table.title = title != summary.end() && title->is_string() ? title->get<std::string>()
                                                                 : run_directory.filename().string();
  const auto choices = summary.find("choices");
  if (choices != summary.end() && choices->is_object())
    for (const auto& [key, value] : choices->items())
      if (value.is_string() && key != "integrator_description") run.table.notes.emplace_back(key, value.get<std::string>());
  return run;
}

}  // namespace

std::string view_page(const Model& model, const ModelVisuals& visuals, const ViewTable& table,
                      const ViewOptions& options) {
  return page_html(page_data(model, visuals, table, options));
}

std::string view_page(const std::filesystem::path& run_directory, const ViewOptions& options) {
  const RunFolder run = read_run_folder(run_directory, options);
  return view_page(run.model, run.visuals, run.table, options);
}

void write_view(const std::filesystem::path& run_directory, const std::filesystem::path& output,
                const ViewOptions& options) {
  const RunFolder run = read_run_folder(run_directory, options);
  std::error_code error;  // a missing output is no input
  for (const auto& input : run.inputs)
    if (std::filesystem::equivalent(output, input, error))
      throw ConfigError("the page " + output.string() + " would overwrite " + input.string() + ", an input of the view");
  const std::string page = view_page(run.model, run.visuals, run.table, options);
  AtomicFile file(output);
  file.stream() << page;
  file.commit();
}

}  // namespace liembs
