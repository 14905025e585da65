// The viewer's page (liembs/view/run_view.hpp, `liembs view`): what it embeds, that the data
// it draws from is the run's (columns as in trajectory.csv, inertia boxes with the bodies'
// inertia, joint axes that are the model's screws, constraint points that meet where the
// constraint holds them together), URDF visual shapes, and the errors of bad run folders.
#include "../support/cli_process.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/loaders/mjcf_import.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/loaders/sdf_import.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>
#include <liembs/util/warning.hpp>
#include <liembs/view/run_view.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <Eigen/Geometry>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using namespace liembs;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Json = nlohmann::json;

namespace {

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-view-test", name); }

cli_test::CliResult run_cli(const std::string& arguments) {
  static const fs::path io = scratch("io");
  return cli_test::run_liembs(arguments, io, LIEMBS_SOURCE_DIR);
}

// Runs `config` (relative to the source tree) with `settings` into a fresh folder.
fs::path run_into(const std::string& name, const std::string& config, const std::string& settings) {
  const fs::path folder = scratch(name);
  const auto result = run_cli("run " + config + " --quiet --output " + cli_test::single_quoted(folder) + " " + settings);
  INFO(result.err);
  REQUIRE(result.status == 0);
  return folder;
}

// The run's data as the page holds it (the <script id="run-data"> element).
Json page_data(const std::string& page) {
  const std::string open = "<script id=\"run-data\" type=\"application/json\">";
  const auto start = page.find(open);
  REQUIRE(start != std::string::npos);
  const auto end = page.find("</script>", start);
  REQUIRE(end != std::string::npos);
  return Json::parse(page.substr(start + open.size(), end - start - open.size()));
}

Vec3 vec3(const Json& json) { return Vec3(json[0].get<double>(), json[1].get<double>(), json[2].get<double>()); }
Mat3 rotation(const Json& xyzw) {
  return Eigen::Quaterniond(xyzw[3].get<double>(), xyzw[0].get<double>(), xyzw[1].get<double>(), xyzw[2].get<double>())
      .toRotationMatrix();
}

Model model_of(const std::string& config) {
  return load_model(ConfigDocument::load(fs::path(LIEMBS_SOURCE_DIR) / config)->root().table("model"));
}

// The pose of body `name` in frame `frame` of the page's columns.
Pose pose_at(const Json& data, const std::string& name, std::size_t frame) {
  const auto& columns = data["columns"];
  Pose pose;
  pose.r = Vec3(columns[name + ".x"][frame].get<double>(), columns[name + ".y"][frame].get<double>(),
                columns[name + ".z"][frame].get<double>());
  pose.R = Eigen::Quaterniond(columns[name + ".qw"][frame].get<double>(), columns[name + ".qx"][frame].get<double>(),
                              columns[name + ".qy"][frame].get<double>(), columns[name + ".qz"][frame].get<double>())
               .normalized()
               .toRotationMatrix();
  return pose;
}

// `liembs study --views` into `folder`/out: the model of run file `config` (in the source tree)
// with group.name = each of `groups` (SE4 fails: its case has no page), `settings` set.
cli_test::CliResult study_with_views(const fs::path& folder, const std::string& config, const std::string& groups,
                                     const std::string& settings, double sample_interval) {
  std::ofstream(folder / "study.toml") << "title = \"views\"\n[[models]]\nname = \"model\"\nfile = '" LIEMBS_SOURCE_DIR "/"
                                       << config << "'\nset = { " << settings << " }\n[[axes]]\nkey = \"group.name\"\n"
                                       << "values = [" << groups << "]\n[measure]\nsample_interval = " << sample_interval
                                       << "\n";
  return run_cli("study " + cli_test::single_quoted(folder / "study.toml") + " --quiet --views --output " +
                 cli_test::single_quoted(folder / "out"));
}

std::set<std::string> folder_entries(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("the page inlines three.js and the viewer and loads nothing from elsewhere", "[view]") {
  const fs::path run = run_into("pendulum", "configs/examples/double-pendulum.toml", "--set simulation.end_time=0.1");
  const std::string page = view_page(run);
  const std::string three = cli_test::read_file(LIEMBS_THREE_JS_FILE);
  REQUIRE(three.size() > 100000);
  CHECK(page.find(three) != std::string::npos);
  CHECK_THAT(page, Contains("OrbitControls"));
  CHECK_THAT(page, Contains("window.liembsView"));
  // No element that fetches: scripts without src, no <link>, <img>, <iframe>.
  CHECK_FALSE(std::regex_search(page, std::regex("<(script|img|iframe)[^>]*\\ssrc\\s*=", std::regex::icase)));
  CHECK_FALSE(std::regex_search(page, std::regex("<link[\\s>]", std::regex::icase)));
  CHECK(page.find("{{") == std::string::npos);  // every placeholder filled
}

TEST_CASE("the page's columns are the trajectory's, every k-th row and the last", "[view]") {
  const fs::path run = run_into("pendulum", "configs/examples/double-pendulum.toml",
                                "--set simulation.end_time=0.1 --set simulation.step_size=1e-3 "
                                "--set simulation.output_every=1");
  const auto table = cli_test::parse_csv(cli_test::read_file(run / "trajectory.csv"));
  REQUIRE(table.rows.size() == 101);

  SECTION("all rows when they fit") {
    const Json data = page_data(view_page(run));
    REQUIRE(data["columns"].size() == table.names.size());
    CHECK(data["rows_in_source"] == 101);
    for (std::size_t c = 0; c < table.names.size(); ++c) {
      const auto& values = data["columns"][table.names[c]];
      REQUIRE(values.size() == table.rows.size());
      for (std::size_t row = 0; row < table.rows.size(); ++row) CHECK(values[row].get<double>() == table.rows[row][c]);
    }
    CHECK(data["column"] == "total_energy");
  }
  SECTION("at most max_frames rows, the first and the last among them") {
    for (const std::size_t max_frames : {2, 7, 10, 100}) {
      ViewOptions options;
      options.max_frames = max_frames;
      const Json data = page_data(view_page(run, options));
      const auto& times = data["columns"]["time"];
      INFO("max_frames " << max_frames);
      CHECK(times.size() <= max_frames);
      CHECK(times.size() >= max_frames / 2);
      CHECK(times.front().get<double>() == table.rows.front()[0]);
      CHECK(times.back().get<double>() == table.rows.back()[0]);
      for (std::size_t k = 1; k < times.size(); ++k) CHECK(times[k].get<double>() > times[k - 1].get<double>());
    }
  }
}

TEST_CASE("a body without visual shapes is drawn as the box of its mass and inertia", "[view]") {
  const fs::path run = run_into("pendulum", "configs/examples/double-pendulum.toml", "--set simulation.end_time=0.01");
  const Model model = model_of("configs/examples/double-pendulum.toml");
  const Json data = page_data(view_page(run));
  REQUIRE(data["bodies"].size() == model.bodies.size());
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    const RigidBody& body = model.bodies[i];
    const Json& shapes = data["bodies"][i]["shapes"];
    INFO(body.name);
    CHECK(data["bodies"][i]["name"] == body.name);
    REQUIRE(shapes.size() == 1);
    CHECK(shapes[0]["type"] == "box");
    CHECK(shapes[0]["from"] == "inertia");
    // A uniform box with edges (a, b, c) has I = m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)
    // in its own axes; rotated into the body frame it is the body's inertia.
    const Vec3 e = vec3(shapes[0]["box_size"]);
    const Vec3 moments = body.mass / 12.0 * Vec3(e.y() * e.y() + e.z() * e.z(), e.x() * e.x() + e.z() * e.z(),
                                                 e.x() * e.x() + e.y() * e.y());
    const Mat3 R = rotation(shapes[0]["quaternion"]);
    const Mat3 box_inertia = R * moments.asDiagonal() * R.transpose();
    // The pendulum's links are slender rods (principal moments 0.001 against 0.021): their
    // thin edges are raised to 5 % of the longest, which adds m/12 (0.05 L)^2 to the moments.
    CHECK((box_inertia - body.inertia).norm() <= 0.01 * body.inertia.norm());
    CHECK((vec3(shapes[0]["position"]) - body.center_of_mass).norm() < 1e-15);
  }
}

TEST_CASE("a joint's axes on the page are the model's screws", "[view]") {
  for (const std::string config : {"configs/examples/iiwa-arm.toml", "configs/four-bar/spatial.toml",
                                   "configs/examples/double-pendulum.toml"}) {
    INFO(config);
    const fs::path run = run_into("tree", config, "--set simulation.end_time=0.002");
    const Model model = model_of(config);
    const Json data = page_data(view_page(run));
    REQUIRE(data["joints"].size() == model.joints.size());
    std::size_t axes = 0;
    for (std::size_t j = 0; j < model.joints.size(); ++j) {
      const Joint& joint = model.joints[j];
      const Json& page_joint = data["joints"][j];
      CHECK(page_joint["name"] == joint.name);
      REQUIRE(page_joint["axes"].size() == joint.screws.size());
      for (std::size_t k = 0; k < joint.screws.size(); ++k) {
        const Json& axis = page_joint["axes"][k];
        const long body = axis["body"].get<long>();
        const Pose frame = body < 0 ? Pose{} : model.bodies[static_cast<std::size_t>(body)].reference_pose;
        const Vec3 direction = frame.R * vec3(axis["direction"]);
        const Vec3 point = frame.R * vec3(axis["point"]) + frame.r;
        const Vec6& Y = joint.screws[k];
        const Vec6 rebuilt = axis["kind"] == "revolute" ? revolute_screw(direction, point) : prismatic_screw(direction);
        INFO(joint.name << " axis " << k);
        CHECK((rebuilt * (Y.head<3>().norm() > 0 ? Y.head<3>().norm() : Y.tail<3>().norm()) - Y).norm() < 1e-12);
        ++axes;
      }
    }
    CHECK(axes == model.joint_dof());
  }
}

TEST_CASE("the points of paper 004's constraints meet where the run holds them together", "[view]") {
  // The slider crank in absolute coordinates: a revolute, a spherical and a
  // revolute-cylindrical joint keep a point of one body on a point (or line) of another.
  const fs::path run = run_into("slider-crank", "configs/paper-004/slider-crank.toml", "--set simulation.end_time=0.05");
  const Json data = page_data(view_page(run));
  const auto body_name = [&](long index) { return data["bodies"][static_cast<std::size_t>(index)]["name"].get<std::string>(); };
  const std::size_t last = data["columns"]["time"].size() - 1;
  std::size_t coincident_pairs = 0;
  for (const auto& constraint : data["constraints"]) {
    if (constraint["name"] != "spherical_B" && constraint["name"] != "revolute_A") continue;
    std::vector<Vec3> world_points;
    for (const auto& mark : constraint["points"]) {
      const long body = mark["body"].get<long>();
      for (const std::size_t frame : {std::size_t{0}, last}) {
        const Pose pose = body < 0 ? Pose{} : pose_at(data, body_name(body), frame);
        world_points.push_back(pose.R * vec3(mark["point"]) + pose.r);
      }
    }
    INFO(constraint.dump());
    REQUIRE(world_points.size() == 4);  // P on i, Q on j, at the first and the last frame
    CHECK((world_points[0] - world_points[2]).norm() < 1e-6);
    CHECK((world_points[1] - world_points[3]).norm() < 1e-6);
    ++coincident_pairs;
  }
  CHECK(coincident_pairs == 2);
}

TEST_CASE("URDF visual shapes are read and drawn instead of the inertia box", "[view][urdf]") {
  const std::string urdf = R"(<?xml version="1.0"?>
<robot name="shapes">
  <material name="red"><color rgba="1 0 0 0.5"/></material>
  <link name="world_link">
    <visual><geometry><box size="1 1 0.02"/></geometry></visual>
  </link>
  <link name="arm">
    <inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual>
      <origin xyz="0 0 0.25" rpy="0 1.5707963267948966 0"/>
      <geometry><cylinder radius="0.03" length="0.5"/></geometry>
      <material name="red"/>
    </visual>
    <visual><origin xyz="0 0 0.5"/><geometry><sphere radius="0.05"/></geometry></visual>
    <visual><geometry><mesh filename="arm.stl"/></geometry></visual>
  </link>
  <link name="tip">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="continuous">
    <parent link="world_link"/><child link="arm"/><axis xyz="0 1 0"/>
  </joint>
  <joint name="wrist" type="continuous">
    <parent link="arm"/><child link="tip"/><origin xyz="0 0 0.5"/><axis xyz="1 0 0"/>
  </joint>
</robot>
)";
  const fs::path folder = scratch("urdf-shapes");
  std::ofstream(folder / "shapes.urdf") << urdf;
  CapturedWarnings warnings;
  const ModelVisuals visuals = read_urdf_visuals(folder / "shapes.urdf");
  REQUIRE(warnings.messages().size() == 1);  // arm.stl does not exist
  CHECK_THAT(warnings.messages()[0], Contains("link 'arm'") && Contains("'arm.stl' is not drawn"));
  REQUIRE(visuals.world.size() == 1);  // the massless root link is the world
  CHECK(visuals.world[0].type == VisualShape::Type::box);
  CHECK(visuals.world[0].box_size.isApprox(Vec3(1, 1, 0.02)));
  CHECK(visuals.by_body.count("world_link") == 0);
  REQUIRE(visuals.by_body.count("arm") == 1);
  const auto& arm = visuals.by_body.at("arm");
  REQUIRE(arm.size() == 2);  // the mesh's file is missing
  CHECK(arm[0].type == VisualShape::Type::cylinder);
  CHECK(arm[0].radius == 0.03);
  CHECK(arm[0].length == 0.5);
  CHECK(arm[0].pose.r.isApprox(Vec3(0, 0, 0.25)));
  CHECK((arm[0].pose.R * Vec3::UnitZ()).isApprox(Vec3::UnitX()));  // pitch 90 degrees: z onto x
  REQUIRE(arm[0].color.has_value());
  CHECK(*arm[0].color == std::array<double, 4>{1, 0, 0, 0.5});
  CHECK(arm[1].type == VisualShape::Type::sphere);
  CHECK(arm[1].radius == 0.05);
  CHECK(arm[1].pose.r.isApprox(Vec3(0, 0, 0.5)));
  CHECK_FALSE(arm[1].color.has_value());
  CHECK(visuals.by_body.count("tip") == 0);

  SECTION("the page draws them") {
    std::ofstream(folder / "shapes.toml") << "[model]\nurdf = \"shapes.urdf\"\nfloating_base = false\n"
                                             "gravity = [0, 0, -9.81]\n[model.initial_position]\nshoulder = 0.5\n"
                                             "[representation]\nname = \"body-fixed\"\n[algorithm]\nname = \"aba\"\n"
                                             "[group]\nname = \"SE3\"\n[integrator]\nname = \"rkmk\"\n"
                                             "[simulation]\nend_time = 0.01\nstep_size = 1e-3\n";
    const fs::path run = folder / "run";
    const auto result = run_cli("run " + cli_test::single_quoted(folder / "shapes.toml") + " --quiet --output " +
                               cli_test::single_quoted(run));
    INFO(result.err);
    REQUIRE(result.status == 0);
    const Json data = page_data(view_page(run));
    REQUIRE(data["world_shapes"].size() == 1);
    const Json& arm_shapes = data["bodies"][0]["shapes"];
    REQUIRE(arm_shapes.size() == 2);
    CHECK(arm_shapes[0]["type"] == "cylinder");
    CHECK(arm_shapes[0]["from"] == "visual");
    CHECK(arm_shapes[0]["length"] == 0.5);
    CHECK(arm_shapes[0]["color"] == Json::array({1.0, 0.0, 0.0, 0.5}));
    CHECK(rotation(arm_shapes[0]["quaternion"]).isApprox(arm[0].pose.R, 1e-15));
    CHECK(arm_shapes[1]["type"] == "sphere");
    CHECK(data["bodies"][1]["shapes"][0]["from"] == "inertia");  // the tip has no visual
  }
  SECTION("a visual with a size that is not positive is an error naming the link") {
    std::string bad = urdf;
    bad.replace(bad.find("radius=\"0.05\""), 13, "radius=\"-0.05\"");
    std::ofstream(folder / "bad.urdf") << bad;
    CHECK_THROWS_WITH(read_urdf_visuals(folder / "bad.urdf"),
                      Contains("bad.urdf:") && Contains("link 'arm'") && Contains("sphere radius must be positive"));
  }
}

namespace {

// The bytes of base64 text (RFC 4648), decoded here independently of the page's encoder.
std::string from_base64(const std::string& text) {
  const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  unsigned bits = 0, count = 0;
  for (const char c : text) {
    if (c == '=') break;
    const auto value = digits.find(c);
    REQUIRE(value != std::string::npos);
    bits = (bits << 6 | static_cast<unsigned>(value)) & 0xffffff;
    if ((count += 6) >= 8) {
      count -= 8;
      bytes += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return bytes;
}

std::string file_bytes(const fs::path& file) {
  std::ifstream stream(file, std::ios::binary);
  REQUIRE(stream);
  return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

// Sets (or with nullptr unsets) environment variables while it lives, then restores them: the
// search paths of package:// and model:// URIs, which the importers read when they load.
class Environment {
 public:
  Environment(std::initializer_list<std::pair<const char*, const char*>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value) ::setenv(name, value, 1);
      else ::unsetenv(name);
    }
  }
  ~Environment() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// No search path of package:// and model:// URIs: only the model file's folders are searched.
Environment no_search_paths() {
  return {{"ROS_PACKAGE_PATH", nullptr}, {"AMENT_PREFIX_PATH", nullptr}, {"GZ_SIM_RESOURCE_PATH", nullptr},
          {"IGN_GAZEBO_RESOURCE_PATH", nullptr}, {"SDF_PATH", nullptr}, {"GAZEBO_MODEL_PATH", nullptr}};
}

// Writes `text` to `file`, creating its folders.
void write_file(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

// A one-link arm whose one visual is the mesh `uri` (its <link> and <mesh> on line 3), as a
// URDF or an SDF file by `file`'s extension.
void write_mesh_arm(const fs::path& file, const std::string& uri) {
  if (file.extension() == ".urdf")
    write_file(file, "<robot name=\"arm\">\n<link name=\"base\"/>\n<link name=\"arm\"><inertial><mass value=\"1\"/>"
                     "<inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial><visual>"
                     "<geometry><mesh filename=\"" + uri + "\"/></geometry></visual></link>\n<joint name=\"shoulder\" "
                     "type=\"continuous\"><parent link=\"base\"/><child link=\"arm\"/><axis xyz=\"1 0 0\"/></joint>"
                     "</robot>\n");
  else
    write_file(file, "<sdf version=\"1.9\"><model name=\"arm\">\n<link name=\"arm\"><inertial><mass>1</mass><inertia><ixx>"
                     "0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>\n<visual name=\"cover\"><geometry>"
                     "<mesh><uri>" + uri + "</uri></mesh></geometry></visual></link>\n<joint name=\"shoulder\" type="
                     "\"revolute\"><parent>world</parent><child>arm</child><axis><xyz>1 0 0</xyz></axis></joint>"
                     "</model></sdf>\n");
}

// The page's data for a URDF or SDF model file: a short run of it (a run file in a folder of
// its own), then `liembs view`'s page, made in this process (with its environment; its
// warnings are not passed on).
Json model_page(const fs::path& model_file) {
  static int runs = 0;
  const fs::path folder = scratch("model-page-" + std::to_string(++runs));
  write_file(folder / "run.toml", "[model]\n" + model_file.extension().string().substr(1) + " = " +
                                      cli_test::single_quoted(model_file) + "\ngravity = [0.0, 0.0, -9.81]\n"
                                      "[representation]\nname = \"body-fixed\"\n[algorithm]\nname = \"aba\"\n"
                                      "[group]\nname = \"SE3\"\n[integrator]\nname = \"rkmk\"\ntableau = \"rk4\"\n"
                                      "[simulation]\nend_time = 0.02\nstep_size = 1e-3\n");
  const auto result = run_cli("run " + cli_test::single_quoted(folder / "run.toml") + " --quiet --output " +
                              cli_test::single_quoted(folder / "run"));
  INFO(result.err);
  REQUIRE(result.status == 0);
  const CapturedWarnings warnings;  // those of reading the shapes, checked where the tests read them
  return page_data(view_page(folder / "run"));
}

// The bytes of the one mesh file the page of a mesh arm (write_mesh_arm) embeds.
std::string embedded_mesh(const fs::path& model_file) {
  const Json data = model_page(model_file);
  REQUIRE(data["meshes"].size() == 1);
  return from_base64(data["meshes"][0]["base64"]);
}

// The one warning reading a mesh arm (write_mesh_arm) gives when its mesh is not drawn.
std::string mesh_warning(const fs::path& model_file) {
  CapturedWarnings warnings;
  const ModelVisuals visuals = model_file.extension() == ".urdf" ? read_urdf_visuals(model_file) : read_sdf_visuals(model_file);
  CHECK(visuals.by_body.empty());
  REQUIRE(warnings.messages().size() == 1);
  return warnings.messages()[0];
}

// What the viewer makes of a model file with meshes: the shapes read from it, the warnings
// that gives (without package or model search paths) and its page's data (model_page).
struct MeshModel {
  fs::path file;
  ModelVisuals visuals;
  std::vector<std::string> warnings;
  Json page;
};

using Edits = std::vector<std::pair<std::string, std::string>>;

// `model` with each (text, replacement) of `edits` made once, written into `folder` (whose
// files its relative mesh paths then name).
fs::path edited_model(const fs::path& model, const fs::path& folder, const Edits& edits) {
  std::string text = file_bytes(model);
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  write_file(folder / model.filename(), text);
  return folder / model.filename();
}

// The URDF or SDF file `model` as it is, or edited into `folder` (edited_model), made into a page.
MeshModel mesh_model(const fs::path& model, const Edits& edits = {}, const fs::path& folder = {}) {
  MeshModel result;
  result.file = edits.empty() ? model : edited_model(model, folder, edits);
  const Environment cleared = no_search_paths();
  {
    CapturedWarnings warnings;
    result.visuals = result.file.extension() == ".urdf" ? read_urdf_visuals(result.file) : read_sdf_visuals(result.file);
    result.warnings = warnings.messages();
  }
  result.page = model_page(result.file);
  return result;
}

// The page draws each body's shapes as they were read, its meshes with the bytes of their
// files, each file embedded once, and a body without shapes as its inertia box.
void check_page_draws(const MeshModel& model) {
  const Json& meshes = model.page["meshes"];
  std::set<fs::path> files;
  for (const Json& body : model.page["bodies"]) {
    const std::string name = body["name"];
    INFO("body " << name);
    const Json& shapes = body["shapes"];
    const auto read = model.visuals.by_body.find(name);
    if (read == model.visuals.by_body.end()) {
      REQUIRE(shapes.size() == 1);
      CHECK(shapes[0]["from"] == "inertia");
      continue;
    }
    REQUIRE(shapes.size() == read->second.size());
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      const VisualShape& shape = read->second[k];
      REQUIRE(shape.mesh);
      CHECK(shapes[k]["type"] == "mesh");
      CHECK(shapes[k]["from"] == "visual");
      CHECK(vec3(shapes[k]["scale"]) == shape.scale);
      CHECK(vec3(shapes[k]["position"]) == shape.pose.r);
      CHECK(rotation(shapes[k]["quaternion"]).isApprox(shape.pose.R, 1e-15));
      if (shape.color) CHECK(shapes[k]["color"] == Json(*shape.color));
      const Json& mesh = meshes.at(shapes[k]["mesh"].get<std::size_t>());
      CHECK(mesh["source"] == shape.mesh->file.filename().string());
      CHECK(mesh["format"] == (shape.mesh->format == VisualMesh::Format::obj ? "obj" : "stl"));
      CHECK(from_base64(mesh["base64"]) == file_bytes(shape.mesh->file));  // the file's bytes, all of them
      files.insert(shape.mesh->file);
    }
  }
  CHECK(meshes.size() == files.size());
}

// What both mesh arms (tests/data/meshes/mesh-arm.urdf and .sdf) say: two warnings that hold
// `warnings` (the URI not found, then the hand's missing file: the hand keeps its inertia
// box); the arm's first shape is the binary STL (scale 1 1 2, 5 cm up, yawed 90 degrees, steel
// blue), shape `obj_index` of `obj_body` the OBJ (scale 2 1 1, at (0.02, 0, 0.2), rolled 90
// degrees); and the page draws them all.
void check_mesh_arm(const MeshModel& model, const std::array<std::string, 2>& warnings, const std::string& obj_body,
                    std::size_t obj_index) {
  const fs::path source = fs::path(LIEMBS_SOURCE_DIR) / "tests/data/meshes";
  REQUIRE(model.warnings.size() == 2);
  CHECK_THAT(model.warnings[0], Contains(warnings[0]));
  CHECK_THAT(model.warnings[1], Contains(warnings[1]) && Contains("not drawn: no file " + (source / "hand.stl").string()));
  CHECK(model.visuals.by_body.count("hand") == 0);
  const VisualShape& stl = model.visuals.by_body.at("arm").at(0);
  const VisualShape& obj = model.visuals.by_body.at(obj_body).at(obj_index);
  for (const VisualShape* shape : {&stl, &obj}) {
    CHECK(shape->type == VisualShape::Type::mesh);
    REQUIRE(shape->mesh);
  }
  CHECK(stl.mesh->format == VisualMesh::Format::stl);
  CHECK(stl.mesh->file == source / "tetrahedron-binary.stl");
  CHECK(stl.scale == Vec3(1, 1, 2));
  CHECK(stl.pose.r.isApprox(Vec3(0, 0, 0.05), 1e-15));
  CHECK((stl.pose.R * Vec3::UnitX()).isApprox(Vec3::UnitY(), 1e-15));  // yaw 90 degrees
  CHECK(*stl.color == std::array<double, 4>{0.5, 0.5, 0.75, 1});
  CHECK(obj.mesh->format == VisualMesh::Format::obj);
  CHECK(obj.mesh->file == source / "tetrahedron.obj");
  CHECK(obj.scale == Vec3(2, 1, 1));
  CHECK(obj.pose.r.isApprox(Vec3(0.02, 0, 0.2), 1e-15));
  CHECK((obj.pose.R * Vec3::UnitY()).isApprox(Vec3::UnitZ(), 1e-15));  // roll 90 degrees
  check_page_draws(model);
}

}  // namespace

TEST_CASE("base64 (the page's mesh files): RFC 4648's vectors, and bytes of every length mod 3 round trip",
          "[view][mesh]") {
  // RFC 4648, section 10: lengths 0 to 6, each remainder mod 3 twice.
  const std::vector<std::pair<std::string, std::string>> vectors{
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) CHECK(base64(bytes) == text);
  // Every byte value, in lengths 0 to 13 and 256 (the high bit set, zero bytes inside).
  std::string all(256, '\0');
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = static_cast<char>(255 - k);
  for (const std::size_t length : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 256}) {
    INFO("length " << length);
    const std::string bytes = all.substr(all.size() - length);
    const std::string text = base64(bytes);
    CHECK(text.size() == (length + 2) / 3 * 4);
    CHECK(text.size() - text.find_last_not_of('=') - 1 == (3 - length % 3) % 3);  // the padding
    CHECK(from_base64(text) == bytes);
  }
}

TEST_CASE("URDF meshes: STL and OBJ files relative to the model are embedded once, with their pose and scale",
          "[view][urdf][mesh]") {
  const fs::path source = fs::path(LIEMBS_SOURCE_DIR) / "tests/data/meshes";
  const fs::path urdf = source / "mesh-arm.urdf";
  const MeshModel model = mesh_model(urdf);
  // The package:// URI and the missing file are named with the file, line and link.
  check_mesh_arm(model,
                 {urdf.string() + ":8: link 'arm': <mesh> 'package://mesh_arm/meshes/cover.stl' is not drawn: no "
                                  "package 'mesh_arm': looked in ROS_PACKAGE_PATH (not set)",
                  urdf.string() + ":30: link 'hand': <mesh> 'hand.stl' is not drawn"},
                 "forearm", 1);
  const auto& arm = model.visuals.by_body.at("arm");
  const auto& forearm = model.visuals.by_body.at("forearm");
  REQUIRE(arm.size() == 2);
  REQUIRE(forearm.size() == 2);
  REQUIRE(arm[1].mesh);
  CHECK(arm[1].mesh->file == source / "tetrahedron-binary.stl");
  CHECK(arm[1].scale == Vec3::Constant(0.5));
  REQUIRE(forearm[0].mesh);
  CHECK(forearm[0].mesh->format == VisualMesh::Format::stl);
  CHECK(forearm[0].mesh->file == source / "tetrahedron-ascii.stl");
  CHECK(*forearm[1].color == std::array<double, 4>{1, 0.5, 0, 1});
  CHECK(model.page["meshes"].size() == 3);  // the binary STL drawn twice is embedded once

  SECTION("files that are not meshes LieMBS reads are left out with a warning, never an error") {
    const fs::path folder = scratch("urdf-bad-meshes");
    write_file(folder / "truncated.stl", file_bytes(source / "tetrahedron-binary.stl").substr(0, 200));
    write_file(folder / "faceless.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    write_file(folder / "part.dae", "<COLLADA/>");
    write_file(folder / "huge.stl", "solid huge\n");
    fs::resize_file(folder / "huge.stl", max_visual_mesh_bytes + 1);
    const MeshModel bad = mesh_model(urdf,
                                     {{"\"tetrahedron-binary.stl\" scale=\"1 1 2\"", "\"truncated.stl\""},
                                      {"\"tetrahedron-binary.stl\" scale=\"0.5 0.5 0.5\"",
                                       "\"file://" + (folder / "faceless.obj").string() + "\""},
                                      {"\"tetrahedron-ascii.stl\"", "\"part.dae\""},
                                      {"\"./tetrahedron.obj\"", "\"huge.stl\""}},
                                     folder);
    CHECK(bad.visuals.by_body.empty());
    check_page_draws(bad);  // inertia boxes
    const auto& messages = bad.warnings;
    REQUIRE(messages.size() == 6);
    CHECK_THAT(messages[0], Contains("link 'arm'") && Contains("'truncated.stl' is not drawn") &&
                                Contains("is not an STL file"));
    CHECK_THAT(messages[1], Contains("link 'arm'") && Contains("faceless.obj' is not drawn") &&
                                Contains("has no faces"));
    CHECK_THAT(messages[3], Contains("link 'forearm'") && Contains("'part.dae' is not drawn") &&
                                Contains("only STL (.stl) and OBJ (.obj) files"));
    CHECK_THAT(messages[4], Contains("link 'forearm'") && Contains("'huge.stl' is not drawn") &&
                                Contains(std::to_string(max_visual_mesh_bytes + 1) + " bytes, more than the " +
                                         std::to_string(max_visual_mesh_bytes >> 20) + " MiB"));
  }

  SECTION("docs/viewer.md states the size limit the code has") {
    const std::string doc = file_bytes(fs::path(LIEMBS_SOURCE_DIR) / "docs/viewer.md");
    CHECK_THAT(doc, Contains("or one of more than " + std::to_string(max_visual_mesh_bytes >> 20) +
                             " MiB (`liembs::max_visual_mesh_bytes`)"));
  }

  SECTION("a zero scale is an error naming the link") {
    const fs::path zero = edited_model(urdf, scratch("urdf-zero-scale"), {{"scale=\"1 1 2\"", "scale=\"1 0 2\""}});
    CHECK_THROWS_WITH(read_urdf_visuals(zero),
                      Contains(zero.string() + ":") && Contains("link 'arm'") && Contains("scale must be finite and non-zero"));
  }
}

TEST_CASE("SDF meshes: files relative to the SDF file with their pose and scale, model:// and missing files warned",
          "[view][sdf][mesh]") {
  const fs::path source = fs::path(LIEMBS_SOURCE_DIR) / "tests/data/meshes";
  const fs::path sdf = source / "mesh-arm.sdf";
  const MeshModel model = mesh_model(sdf);
  check_mesh_arm(model,
                 {sdf.string() + ":19: link 'arm', visual 'cover': <mesh> 'model://mesh_arm/meshes/cover.stl' is not "
                                 "drawn: no model 'mesh_arm': looked in GZ_SIM_RESOURCE_PATH (not set)",
                  sdf.string() + ":39: link 'hand', visual 'palm': <mesh> 'hand.stl' is not drawn"},
                 "arm", 1);
  CHECK(model.visuals.by_body.at("arm").size() == 2);
  CHECK(model.page["meshes"].size() == 2);

  SECTION("a <submesh> is not read: a warning, and the mesh is left out") {
    const MeshModel submesh =
        mesh_model(sdf,
                   {{"<uri>tetrahedron-binary.stl</uri>", "<uri>" + (source / "tetrahedron-binary.stl").string() + "</uri>"},
                    {"<uri>tetrahedron.obj</uri>",
                     "<uri>" + (source / "tetrahedron.obj").string() + "</uri><submesh><name>lid</name></submesh>"}},
                   scratch("sdf-submesh"));
    CHECK(submesh.visuals.by_body.at("arm").size() == 1);
    check_page_draws(submesh);
    REQUIRE(submesh.warnings.size() == 3);
    CHECK_THAT(submesh.warnings[1], Contains("link 'arm', visual 'tip'") && Contains("<submesh> 'lid' is not read"));
  }
}

TEST_CASE("package:// and model:// mesh URIs are found where ROS and Gazebo find them", "[view][mesh][uri]") {
  const fs::path meshes = fs::path(LIEMBS_SOURCE_DIR) / "tests/data/meshes";
  const std::string binary = file_bytes(meshes / "tetrahedron-binary.stl"), ascii = file_bytes(meshes / "tetrahedron-ascii.stl");
  const fs::path root = scratch("resource-uris");
  const auto package_xml = [](const std::string& name) {
    return "<?xml version=\"1.0\"?>\n<package format=\"3\">\n  <!-- <name>not_this</name> -->\n  <name> " + name +
           " </name>\n  <version>1.0.0</version>\n</package>\n";
  };
  const auto paths = [](std::initializer_list<fs::path> folders) {
    std::string text;
    for (const auto& folder : folders) {
      if (!text.empty()) text += ':';
      text += folder.string();
    }
    return text;
  };
  const Environment cleared = no_search_paths();

  SECTION("package://: a package in ROS_PACKAGE_PATH, by its package.xml, below the folders listed") {
    // ws/src/arm_description says it is mesh_arm; the folders named mesh_arm inside another
    // package and in a hidden folder are not packages of that name.
    write_file(root / "ws/src/arm_description/package.xml", package_xml("mesh_arm"));
    write_file(root / "ws/src/arm_description/meshes/cover.stl", ascii);
    write_file(root / "ws/a_tools/package.xml", package_xml("a_tools"));
    write_file(root / "ws/a_tools/mesh_arm/meshes/cover.stl", binary);
    write_file(root / "ws/.hidden/mesh_arm/meshes/cover.stl", binary);
    fs::create_directories(root / "empty");
    const fs::path urdf = root / "robots/arm.urdf";
    write_mesh_arm(urdf, "package://mesh_arm/meshes/cover.stl");
    const Environment ros{{"ROS_PACKAGE_PATH", paths({root / "empty", root / "missing", root / "ws"}).c_str()}};
    CapturedWarnings warnings;
    const ModelVisuals visuals = read_urdf_visuals(urdf);
    CHECK(warnings.messages().empty());
    REQUIRE(visuals.by_body.at("arm").at(0).mesh);
    CHECK(visuals.by_body.at("arm")[0].mesh->file == root / "ws/src/arm_description/meshes/cover.stl");
    CHECK(embedded_mesh(urdf) == ascii);  // the page embeds that file's bytes

    SECTION("a path inside the package by '..' is read; one that leaves it is refused") {
      write_file(root / "ws/src/secret.stl", binary);
      write_mesh_arm(urdf, "package://mesh_arm/meshes/../meshes/cover.stl");
      CHECK(embedded_mesh(urdf) == ascii);
      for (const std::string uri : {"package://mesh_arm/../secret.stl", "package://mesh_arm/meshes/../../secret.stl"}) {
        write_mesh_arm(urdf, uri);
        CHECK_THAT(mesh_warning(urdf), Contains(urdf.string() + ":3: link 'arm': <mesh> '" + uri + "' is not drawn: "
                                                  "the path leaves the folder of package 'mesh_arm'"));
      }
    }

    SECTION("a package deeper than the crawl goes is not found") {
      fs::create_directories(root / "ws/src/1/2/3");
      fs::rename(root / "ws/src/arm_description", root / "ws/src/1/2/3/arm_description");
      CHECK_THAT(mesh_warning(urdf), Contains("no package 'mesh_arm': looked in ROS_PACKAGE_PATH (" +
                                              (root / "empty").string() + ", " + (root / "missing").string() + ", " +
                                              (root / "ws").string() + "; each with its subfolders 4 levels down)"));
    }
  }

  SECTION("package://: the same name in two places: the first wins, even without the file") {
    write_file(root / "one/mesh_arm/meshes/cover.stl", binary);  // a folder named mesh_arm, no package.xml
    write_file(root / "two/b_description/package.xml", package_xml("mesh_arm"));
    write_file(root / "two/b_description/meshes/cover.stl", ascii);
    write_file(root / "two/a_description/package.xml", package_xml("mesh_arm"));  // by name, before b_
    write_file(root / "two/a_description/meshes/cover.stl", binary);
    const fs::path urdf = root / "robots/arm.urdf";
    write_mesh_arm(urdf, "package://mesh_arm/meshes/cover.stl");
    {
      const Environment ros{{"ROS_PACKAGE_PATH", paths({root / "one", root / "two"}).c_str()}};
      CHECK(embedded_mesh(urdf) == binary);
    }
    {
      const Environment ros{{"ROS_PACKAGE_PATH", paths({root / "two", root / "one"}).c_str()}};
      CHECK(read_urdf_visuals(urdf).by_body.at("arm").at(0).mesh->file == root / "two/a_description/meshes/cover.stl");
      fs::rename(root / "two/a_description/meshes/cover.stl", root / "two/a_description/meshes/old.stl");
      // Not the file of b_description, nor that of one/mesh_arm.
      CHECK_THAT(mesh_warning(urdf),
                 Contains("is not drawn: no file " + (root / "two/a_description/meshes/cover.stl").string() +
                          " (package 'mesh_arm' is " + (root / "two/a_description").string() +
                          ", found in ROS_PACKAGE_PATH)"));
    }
  }

  SECTION("package://: a ROS 2 package under AMENT_PREFIX_PATH") {
    write_file(root / "install/share/ament_index/resource_index/packages/mesh_arm", "");
    write_file(root / "install/share/mesh_arm/meshes/cover.stl", ascii);
    write_file(root / "other/share/mesh_arm/meshes/cover.stl", binary);  // not in the ament index
    const fs::path urdf = root / "robots/arm.urdf";
    write_mesh_arm(urdf, "package://mesh_arm/meshes/cover.stl");
    const Environment ament{{"AMENT_PREFIX_PATH", paths({root / "other", root / "install"}).c_str()}};
    CHECK(embedded_mesh(urdf) == ascii);
  }

  SECTION("package://: the folder holding the model file that is the package") {
    write_file(root / "mesh_arm/meshes/cover.stl", ascii);  // named mesh_arm
    write_file(root / "mesh_arm/urdf/arm_description/package.xml", package_xml("mesh_arm"));
    write_file(root / "mesh_arm/urdf/arm_description/meshes/cover.stl", binary);
    const fs::path urdf = root / "mesh_arm/urdf/arm_description/urdf/arm.urdf";  // the nearest is the package
    write_mesh_arm(urdf, "package://mesh_arm/meshes/cover.stl");
    CHECK(embedded_mesh(urdf) == binary);
    write_mesh_arm(root / "mesh_arm/urdf/arm.urdf", "package://mesh_arm/meshes/cover.stl");
    CHECK(embedded_mesh(root / "mesh_arm/urdf/arm.urdf") == ascii);
  }

  SECTION("model://: the model folder in Gazebo's resource paths, in their order") {
    write_file(root / "gz/mesh_arm/meshes/cover.stl", ascii);
    write_file(root / "sdf/mesh_arm/meshes/cover.stl", binary);
    const fs::path sdf = root / "worlds/arm.sdf";
    write_mesh_arm(sdf, "model://mesh_arm/meshes/cover.stl");
    {
      const Environment gazebo{{"SDF_PATH", (root / "sdf").c_str()}};
      CHECK(embedded_mesh(sdf) == binary);
    }
    const Environment gazebo{{"SDF_PATH", (root / "sdf").c_str()},
                             {"GZ_SIM_RESOURCE_PATH", paths({root / "empty", root / "gz"}).c_str()}};
    CHECK(embedded_mesh(sdf) == ascii);
    // package:// in an SDF file is looked up as ROS does: not in Gazebo's paths.
    write_mesh_arm(sdf, "package://mesh_arm/meshes/cover.stl");
    CHECK_THAT(mesh_warning(sdf), Contains("no package 'mesh_arm'"));
  }

  SECTION("model://: the folder holding the model file that has the model's name") {
    write_file(root / "models/mesh_arm/meshes/cover.stl", ascii);
    const fs::path sdf = root / "models/mesh_arm/model.sdf";
    write_mesh_arm(sdf, "model://mesh_arm/meshes/cover.stl");
    CHECK(embedded_mesh(sdf) == ascii);
    write_mesh_arm(sdf, "model://mesh_arm/../secret.stl");
    CHECK_THAT(mesh_warning(sdf), Contains("the path leaves the folder of model 'mesh_arm'"));
  }

  SECTION("not found: the warning says where it looked, and the link keeps its inertia box") {
    const fs::path urdf = root / "robots/arm.urdf", sdf = root / "robots/arm.sdf";
    write_mesh_arm(urdf, "package://mesh_arm/meshes/cover.stl");
    write_mesh_arm(sdf, "model://mesh_arm/meshes/cover.stl");
    const Environment search{{"ROS_PACKAGE_PATH", (root / "ros").c_str()}, {"AMENT_PREFIX_PATH", ""},
                             {"SDF_PATH", paths({root / "a", root / "b"}).c_str()}};
    const std::string package_warning = mesh_warning(urdf);
    CHECK(package_warning ==
          urdf.string() + ":3: link 'arm': <mesh> 'package://mesh_arm/meshes/cover.stl' is not drawn: no package "
          "'mesh_arm': looked in ROS_PACKAGE_PATH (" + (root / "ros").string() + "; each with its subfolders 4 levels "
          "down), AMENT_PREFIX_PATH (empty), then " + (root / "robots").string() + " and the folders above it; the "
          "viewer draws the link's other shapes, or its inertia box");
    CHECK(mesh_warning(sdf) ==
          sdf.string() + ":3: link 'arm', visual 'cover': <mesh> 'model://mesh_arm/meshes/cover.stl' is not drawn: no "
          "model 'mesh_arm': looked in GZ_SIM_RESOURCE_PATH (not set), IGN_GAZEBO_RESOURCE_PATH (not set), SDF_PATH (" +
          (root / "a").string() + ", " + (root / "b").string() + "), GAZEBO_MODEL_PATH (not set), then " +
          (root / "robots").string() + " and the folders above it; the viewer draws the link's other shapes, or its "
          "inertia box");
    // docs/viewer.md states the depth the crawl goes to, as the warning says it.
    std::smatch depth;
    REQUIRE(std::regex_search(package_warning, depth, std::regex("its subfolders ([0-9]+) levels down")));
    CHECK_THAT(file_bytes(fs::path(LIEMBS_SOURCE_DIR) / "docs/viewer.md"),
               Contains("down to " + depth[1].str() + " levels (`ResourceSearch::max_package_depth`)"));
    const Json data = model_page(urdf);
    CHECK(data["meshes"].empty());
    REQUIRE(data["bodies"][0]["shapes"].size() == 1);
    CHECK(data["bodies"][0]["shapes"][0]["from"] == "inertia");
  }

  SECTION("a URI without a package name or a file is refused") {
    const fs::path urdf = root / "robots/arm.urdf";
    for (const auto& [uri, why] : std::vector<std::pair<std::string, std::string>>{
             {"package:///meshes/cover.stl", "no package name after package://"},
             {"package://mesh_arm", "no file after the package name 'mesh_arm'"},
             {"model://../cover.stl", "no model name after model://"}}) {
      write_mesh_arm(urdf, uri);
      CHECK_THAT(mesh_warning(urdf), Contains("'" + uri + "' is not drawn: " + why));
    }
  }
}

TEST_CASE("MJCF meshes: the triangles MuJoCo compiled, drawn where the file puts the mesh", "[view][mjcf][mesh]") {
  const fs::path file = fs::path(LIEMBS_SOURCE_DIR) / "tests/data/meshes/mesh-arm.xml";
  const ModelVisuals visuals = read_mjcf_visuals(file);
  // The tetrahedron's vertices (tests/data/meshes/tetrahedron.*) and its four triangles.
  const std::vector<Vec3> tetrahedron{Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(0, 0.1, 0), Vec3(0, 0, 0.1)};
  // Where the file puts them: the mesh's scale, then the geom's pose.
  const auto placed = [&](const Vec3& scale, const Pose& geom) {
    std::vector<Vec3> points;
    for (const auto& v : tetrahedron) points.push_back(geom.R * scale.cwiseProduct(v) + geom.r);
    return points;
  };
  // MuJoCo moves a mesh's vertices into its inertial frame and the geom's pose by the inverse:
  // drawn at the shape's pose, every compiled vertex is one of the file's, and each is drawn.
  const auto check_drawn = [&](const VisualShape& shape, const std::vector<Vec3>& expected) {
    REQUIRE(shape.type == VisualShape::Type::mesh);
    REQUIRE(shape.mesh);
    const VisualMesh& mesh = *shape.mesh;
    CHECK(mesh.format == VisualMesh::Format::triangles);
    CHECK(shape.scale == Vec3::Ones());  // applied by MuJoCo
    REQUIRE(mesh.faces.size() == 3 * 4);
    REQUIRE(mesh.vertices.size() % 3 == 0);  // (MuJoCo keeps an STL's three vertices per triangle)
    const std::size_t vertex_count = mesh.vertices.size() / 3;
    std::set<std::size_t> matched;
    for (std::size_t k = 0; k < vertex_count; ++k) {
      const Vec3 drawn = shape.pose.R * Vec3(mesh.vertices[3 * k], mesh.vertices[3 * k + 1], mesh.vertices[3 * k + 2]) +
                         shape.pose.r;
      std::size_t near = 0;
      for (std::size_t e = 0; e < expected.size(); ++e)
        if ((drawn - expected[e]).norm() < 1e-6) {  // float vertices
          matched.insert(e);
          ++near;
        }
      CHECK(near == 1);
    }
    CHECK(matched.size() == expected.size());
    for (const int index : mesh.faces) CHECK((index >= 0 && static_cast<std::size_t>(index) < vertex_count));
  };
  Pose stretched_pose, wedge_pose;
  stretched_pose.r = Vec3(0, 0, 0.05);
  stretched_pose.R = Eigen::AngleAxisd(M_PI / 2, Vec3::UnitZ()).toRotationMatrix();
  wedge_pose.r = Vec3(0.02, 0, 0.2);
  wedge_pose.R = Eigen::AngleAxisd(M_PI / 2, Vec3::UnitX()).toRotationMatrix();
  const auto& arm = visuals.by_body.at("arm");
  REQUIRE(arm.size() == 2);
  check_drawn(arm[0], placed(Vec3(1, 1, 2), stretched_pose));
  check_drawn(arm[1], placed(Vec3(2, 1, 1), wedge_pose));
  CHECK(arm[0].mesh->name == "stretched");
  CHECK(arm[1].mesh->name == "wedge");
  const auto& hand = visuals.by_body.at("hand");
  REQUIRE(hand.size() == 1);
  check_drawn(hand[0], placed(Vec3(1, 1, 2), Pose{}));
  CHECK(hand[0].mesh == arm[0].mesh);  // one mesh, two geoms

  SECTION("the page holds each compiled mesh once") {
    Model model = import_mjcf(file);
    ViewTable table;
    table.source = "table";
    table.names = {"time"};
    table.columns = {{0.0}};
    for (const auto& body : model.bodies)
      for (const char* column : {".x", ".y", ".z", ".qw", ".qx", ".qy", ".qz"}) {
        table.names.push_back(body.name + column);
        table.columns.push_back({std::string(column) == ".qw" ? 1.0 : 0.0});
      }
    const Json data = page_data(view_page(model, visuals, table, ViewOptions{}));
    REQUIRE(data["meshes"].size() == 2);
    CHECK(data["meshes"][0]["format"] == "triangles");
    CHECK(data["meshes"][0]["source"] == "stretched");
    CHECK(data["meshes"][0]["faces"].size() == 12);
    const Json& vertices = data["meshes"][0]["vertices"];
    REQUIRE(vertices.size() == arm[0].mesh->vertices.size());
    for (std::size_t k = 0; k < vertices.size(); ++k)
      CHECK(static_cast<float>(vertices[k].get<double>()) == arm[0].mesh->vertices[k]);  // the float, to the bit
    CHECK(data["bodies"][1]["shapes"][0]["mesh"] == 0);
    CHECK(data["bodies"][0]["shapes"][1]["mesh"] == 1);
  }
}

TEST_CASE("liembs view writes RUN_DIR/view.html, or --output", "[view][cli]") {
  const fs::path run = run_into("cli", "configs/examples/spinning-body.toml", "--set simulation.end_time=0.05");
  auto result = run_cli("view " + cli_test::single_quoted(run));
  INFO(result.err);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.out, Contains("view.html"));
  const std::string page = cli_test::read_file(run / "view.html");
  CHECK(page_data(page)["bodies"][0]["name"] == "body");

  const fs::path other = scratch("cli-other") / "page.html";
  result = run_cli("view " + cli_test::single_quoted(run) + " --quiet --column kinetic_energy --max-frames 10 --output " +
                  cli_test::single_quoted(other));
  REQUIRE(result.status == 0);
  CHECK(result.out.empty());
  const Json data = page_data(cli_test::read_file(other));
  CHECK(data["column"] == "kinetic_energy");
  CHECK(data["columns"]["time"].size() <= 10);
}

TEST_CASE("liembs view refuses what is not a run with exit status 2 and writes nothing", "[view][cli]") {
  const fs::path good = run_into("good", "configs/examples/double-pendulum.toml", "--set simulation.end_time=0.01");
  const fs::path folder = scratch("bad");
  const auto copy_run = [&](const std::string& name) {
    const fs::path run = folder / name;
    fs::create_directories(run);
    for (const char* file : {"summary.json", "trajectory.csv"}) fs::copy_file(good / file, run / file);
    return run;
  };
  const auto set_config = [](const fs::path& run, const fs::path& config) {
    Json summary = Json::parse(cli_test::read_file(run / "summary.json"));
    summary["config"] = config.string();
    std::ofstream(run / "summary.json") << summary.dump(2);
  };

  struct Case {
    std::string name;
    fs::path run;
    std::string extra, message;
  };
  std::vector<Case> cases;
  cases.push_back({"missing folder", folder / "nowhere", "", "not a folder"});
  fs::create_directories(folder / "empty");
  cases.push_back({"folder without summary.json", folder / "empty", "", "not a run folder (no summary.json"});
  {
    const fs::path run = copy_run("no-trajectory");
    fs::remove(run / "trajectory.csv");
    cases.push_back({"no trajectory", run, "", "has no trajectory.csv"});
  }
  {
    const fs::path run = copy_run("no-config");
    set_config(run, folder / "gone.toml");
    cases.push_back({"model file gone", run, "", "gone.toml' (summary.json \"config\") does not exist"});
  }
  {
    const fs::path run = copy_run("broken-model");
    std::ofstream(folder / "broken.toml") << "[model]\n[[model.bodies]]\nname = \"upper\"\nmass = -1\n";
    set_config(run, folder / "broken.toml");
    cases.push_back({"model that cannot be loaded", run, "", "cannot load the run's model from"});
  }
  {
    const fs::path run = copy_run("other-model");
    cases.push_back({"trajectory of another model", run,
                     "--config " + cli_test::single_quoted(fs::path(LIEMBS_SOURCE_DIR) / "configs/examples/spinning-body.toml"),
                     "no pose columns body.x"});
  }
  {
    const fs::path run = copy_run("bad-column");
    cases.push_back({"unknown column", run, "--column total_enrgy", "did you mean 'total_energy'"});
  }
  {
    const fs::path run = copy_run("truncated");
    const std::string text = cli_test::read_file(run / "trajectory.csv");
    std::ofstream(run / "trajectory.csv") << text.substr(0, text.size() - 40);
    cases.push_back({"truncated trajectory", run, "", "fields, the header has"});
  }
  {
    const fs::path run = copy_run("output-over-input");
    cases.push_back({"output over the trajectory", run, "--output " + cli_test::single_quoted(run / "trajectory.csv"),
                     "would overwrite"});
  }
  for (const auto& item : cases) {
    INFO(item.name);
    const std::string trajectory =
        fs::exists(item.run / "trajectory.csv") ? cli_test::read_file(item.run / "trajectory.csv") : "";
    const auto before = fs::is_directory(item.run) ? folder_entries(item.run) : std::set<std::string>{};
    const auto result = run_cli("view " + cli_test::single_quoted(item.run) + " " + item.extra);
    INFO(result.err);
    CHECK(result.status == 2);
    CHECK_THAT(result.err, Contains("liembs view: error: ") && Contains(item.message));
    if (fs::is_directory(item.run)) CHECK(folder_entries(item.run) == before);  // no view.html, no temporary
    if (!trajectory.empty()) CHECK(cli_test::read_file(item.run / "trajectory.csv") == trajectory);
  }
}

TEST_CASE("liembs study --views gives each warning of its pages once, with on how many pages it came",
          "[view][study][mesh]") {
  // Two cases of the mesh arm: its package:// and missing meshes are warned once each, not per page.
  const fs::path folder = scratch("study-mesh-warnings");
  const Environment cleared = no_search_paths();  // the child's too: package://mesh_arm is not found
  const auto result = study_with_views(folder, "tests/data/meshes/mesh-arm.toml", R"("SE3", "SO3xR3", "SE4")",
                                       "simulation.end_time = 0.02", 0.01);
  INFO(result.err);
  REQUIRE(result.status == 0);
  const fs::path urdf = fs::path(LIEMBS_SOURCE_DIR) / "tests/data/meshes/mesh-arm.urdf";
  std::vector<std::string> not_drawn;
  std::istringstream lines(result.err);
  for (std::string line; std::getline(lines, line);)
    if (line.find("is not drawn") != std::string::npos) not_drawn.push_back(line);
  REQUIRE(not_drawn.size() == 2);
  CHECK_THAT(not_drawn[0], Contains("warning: " + urdf.string() + ":8: link 'arm': <mesh> "
                                    "'package://mesh_arm/meshes/cover.stl' is not drawn: no package 'mesh_arm'") &&
                               EndsWith("inertia box (on 2 of the 2 pages of --views)"));
  CHECK_THAT(not_drawn[1], Contains(urdf.string() + ":30: link 'hand': <mesh> 'hand.stl' is not drawn") &&
                               EndsWith("(on 2 of the 2 pages of --views)"));
  CHECK(folder_entries(folder / "out/views").size() == 2);

  SECTION("liembs view gives them for its one page, without a count") {
    const fs::path run = run_into("mesh-arm-view", "tests/data/meshes/mesh-arm.toml", "--set simulation.end_time=0.02");
    const auto view = run_cli("view " + cli_test::single_quoted(run) + " --quiet");
    REQUIRE(view.status == 0);
    CHECK_THAT(view.err, Contains("link 'arm': <mesh> 'package://mesh_arm/meshes/cover.stl' is not drawn") &&
                             Contains("link 'hand': <mesh> 'hand.stl' is not drawn") && !Contains("pages of --views"));
  }
}

TEST_CASE("liembs study --views writes a page per case that ran, linked from the report", "[view][study]") {
  const fs::path folder = scratch("study");
  const auto result = study_with_views(folder, "tests/data/free-body.toml", R"("SE3", "SE4")", "simulation.end_time = 0.2",
                                       0.05);
  const fs::path out = folder / "out";
  INFO(result.err);
  REQUIRE(result.status == 0);
  const Json study = Json::parse(cli_test::read_file(out / "study.json"));
  std::size_t pages = 0;
  for (const auto& item : study["cases"]) {
    INFO(item["id"]);
    if (!item["ok"].get<bool>()) {
      CHECK(item["view"].is_null());
      continue;
    }
    REQUIRE(item["view"].is_string());
    const fs::path page_file = out / item["view"].get<std::string>();
    REQUIRE(fs::exists(page_file));
    ++pages;
    // The page shows the case's record: its sample times and the body's motion.
    const Json data = page_data(cli_test::read_file(page_file));
    const std::string hash = page_file.stem().string();
    const Json record = Json::parse(cli_test::read_file(out / "cases" / (hash + ".json")));
    REQUIRE(data["columns"]["time"] == record["times"]);
    const auto& motion = record["motion"];
    REQUIRE(data["columns"]["body.qz"].size() == motion.size());
    for (std::size_t k = 0; k < motion.size(); ++k) {
      CHECK(data["columns"]["body.x"][k] == motion[k][0]);
      CHECK(data["columns"]["body.qz"][k] == motion[k][6]);
    }
    CHECK(data["column"] == "energy_drift_relative");
    if (fs::exists(out / "report.html"))
      CHECK_THAT(cli_test::read_file(out / "report.html"), Contains("href=\"" + item["view"].get<std::string>() + "\""));
  }
  CHECK(pages == 1);
}
