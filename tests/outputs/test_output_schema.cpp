// The one output schema (host/output_schema.hpp): every trajectory column and summary key a
// run writes is declared, in the declared order, and the docs' tables are the declarations;
// tree runs write joint coordinates that `liembs eval` reads as they are; summary.json records
// the provenance of the build and of each plugin file.
#include "../support/cli_process.hpp"
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/host/output_schema.hpp>
#include <liembs/plugin/abi.hpp>
#include <liembs/version.hpp>

#include <Eigen/Geometry>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>

using namespace liembs;
using cli_test::parse_csv;
using cli_test::read_file;
using cli_test::run_liembs;
using cli_test::scratch_folder;
using cli_test::single_quoted;

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The floating arm of tests/data/trees with its base body renamed "torso" (a body named
// "base" owns the base.* pose columns itself) and `integrator` as its [integrator] section.
std::string floating_arm(const std::string& integrator) {
  std::string text = read_file(liembs::testing::data_file("trees/floating-arm.toml"));
  text = replace_all(text, "\"base\"", "\"torso\"");
  text = replace_all(text, "[integrator]\nname = \"rkmk\"\ntableau = \"rk4\"", "[integrator]\n" + integrator);
  REQUIRE(text.find(integrator) != std::string::npos);
  return text;
}

struct TextRun {
  std::unique_ptr<Registry> registry;
  Run run;
};

TextRun load_text(const std::string& text, const std::vector<std::string>& overrides = {}) {
  TextRun loaded{liembs::testing::build_tree_registry(), {}};
  auto document = ConfigDocument::from_string(text, "test.toml");
  for (const auto& assignment : overrides) document->set_override(assignment);
  loaded.run = load_run(document, *loaded.registry);
  return loaded;
}

std::string regex_escape(const std::string& text) {
  return std::regex_replace(text, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

std::string alternatives(const std::vector<std::string>& names) {
  std::string text = "(?:";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) text += '|';
    text += regex_escape(names[i]);
  }
  text += names.empty() ? "(?!))" : ")";
  return text;
}

// The declared pattern as a regular expression for a run of `shape`: "<body>.x,y,z" is
// <body>.x, <body>.y, <body>.z; placeholders stand for the run's bodies, coordinates and
// constraints; "[.<k>]" is an optional row index. Written from the docs' notation, not
// from make_run_layout.
std::regex pattern_regex(std::string_view pattern, const RunShape& shape) {
  std::string text(pattern);
  std::string optional_row;
  if (const auto at = text.find("[.<k>]"); at != std::string::npos) {
    text.erase(at);
    optional_row = R"((?:\.[0-9]+)?)";
  }
  std::vector<std::string> items;
  for (std::size_t start = 0;;) {
    const auto comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string& first = items.front();
  const std::string prefix = first.substr(0, first.find_last_of("._") + 1);
  std::string expression = "(?:";
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string name = i == 0 ? first : prefix + items[i];
    std::string piece = regex_escape(name);
    piece = replace_all(piece, "<body>", alternatives(shape.bodies));
    piece = replace_all(piece, "<dof>", alternatives(shape.tree ? shape.coordinates : std::vector<std::string>{}));
    piece = replace_all(piece, "<constraint>", alternatives(shape.constraints));
    if (i) expression += '|';
    expression += piece;
  }
  return std::regex(expression + ")" + optional_row);
}

// Every column matches the declaration make_run_layout says it belongs to, the declarations
// come in their declared order, and no name repeats.
void check_layout(const RunLayout& layout, std::set<std::size_t>& families_seen) {
  const auto& families = trajectory_columns();
  REQUIRE(layout.columns.size() == layout.family.size());
  std::set<std::string> unique(layout.columns.begin(), layout.columns.end());
  CHECK(unique.size() == layout.columns.size());
  for (std::size_t c = 0; c < layout.columns.size(); ++c) {
    const std::size_t family = layout.family[c];
    REQUIRE(family < families.size());
    INFO("column " << layout.columns[c] << ", declared as " << families[family].pattern);
    CHECK(std::regex_match(layout.columns[c], pattern_regex(families[family].pattern, layout.shape)));
    if (c > 0 && !(family == 1 || family == 2 || family == 3 || family == 4)) CHECK(family >= layout.family[c - 1]);
    families_seen.insert(family);
  }
}

// The text between <!-- schema:NAME --> and <!-- /schema:NAME --> in docs/user-guide.md.
std::string docs_table(const std::string& name) {
  const std::string text = read_file(std::string(LIEMBS_SOURCE_DIR) + "/docs/user-guide.md");
  const std::string open = "<!-- schema:" + name + " -->\n", close = "<!-- /schema:" + name + " -->";
  const auto begin = text.find(open), end = text.find(close);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  return text.substr(begin + open.size(), end - begin - open.size());
}

// A run of `file` (its own folder: the paper's JSON is relative to it) with every step a row.
cli_test::CsvTable absolute_run(const std::string& file, const std::vector<std::string>& overrides, const std::string& name,
                                RunSummary* summary_out = nullptr) {
  TextRun loaded{liembs::testing::build_tree_registry(), {}};
  auto document = ConfigDocument::load(file);
  for (const auto& assignment : overrides) document->set_override(assignment);
  document->set_override("simulation.output_every=1");
  loaded.run = load_run(document, *loaded.registry);
  const std::filesystem::path folder = scratch_folder("liembs-schema", name);
  const RunSummary summary = execute_run(loaded.run, RunOutput::into(folder));
  if (summary_out) *summary_out = summary;
  return parse_csv(read_file(folder / "trajectory.csv"));
}

// The largest difference between the recorded <body>.dwx..dvz and central differences of the
// recorded <body>.wx..vz (error O(h^2) for a smooth motion), over the interior rows from
// time `from` on, and the largest recorded acceleration.
struct AccelerationDifferences {
  double worst = 0.0, scale = 0.0;
  std::size_t compared = 0;
};
AccelerationDifferences acceleration_differences(const cli_test::CsvTable& csv, double from) {
  const auto column = [&](const std::string& name) {
    const auto at = std::find(csv.names.begin(), csv.names.end(), name);
    REQUIRE(at != csv.names.end());
    return static_cast<std::size_t>(at - csv.names.begin());
  };
  AccelerationDifferences result;
  const std::size_t time = column("time");
  for (const auto& name : csv.names) {
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".dwx") != 0) continue;
    const std::string body = name.substr(0, name.size() - 4);
    for (std::size_t c = 0; c < 6; ++c) {
      const std::string component(body_motion_components[7 + c]);
      const std::size_t velocity = column(body + "." + component);
      const std::size_t acceleration = column(body + "." + std::string(body_acceleration_components[c]));
      REQUIRE(body_acceleration_components[c] == "d" + component);
      for (std::size_t r = 1; r + 1 < csv.rows.size(); ++r) {
        const auto& before = csv.rows[r - 1];
        const auto& row = csv.rows[r];
        const auto& after = csv.rows[r + 1];
        if (row[time] < from) continue;
        const double slope = (after[velocity] - before[velocity]) / (after[time] - before[time]);
        result.worst = std::max(result.worst, std::abs(slope - row[acceleration]));
        result.scale = std::max(result.scale, std::abs(row[acceleration]));
        ++result.compared;
      }
    }
  }
  return result;
}

}  // namespace

TEST_CASE("every trajectory column a run writes is declared in the schema, in the declared order",
          "[outputs][schema]") {
  std::set<std::size_t> families_seen;
  std::set<std::string> summary_keys_seen;
  const auto check = [&](TextRun loaded) {
    const std::filesystem::path folder = scratch_folder("liembs-schema", "columns");
    const RunSummary summary = execute_run(loaded.run, RunOutput::into(folder));
    const auto csv = parse_csv(read_file(folder / "trajectory.csv"));
    CHECK(csv.names == summary.columns);
    for (const auto& row : csv.rows) REQUIRE(row.size() == csv.names.size());
    // The layout is rebuilt from what the run wrote: the same columns, each declared.
    RunShape shape;
    for (const auto& body : loaded.run.model->bodies) shape.bodies.push_back(body.name);
    for (const auto& name : summary.columns) {
      if (name.rfind("q.", 0) == 0) shape.coordinates.push_back(name.substr(2));
      if (name.rfind("violation.", 0) == 0) shape.constraints.push_back(name.substr(10));
      if (name.rfind("tau.", 0) == 0) shape.prescribed.push_back(name.substr(4));
      if (name.rfind("multiplier.", 0) == 0) shape.multipliers.push_back(name.substr(11));
    }
    shape.tree = !shape.coordinates.empty();
    shape.body_accelerations = !shape.tree && std::any_of(shape.bodies.begin(), shape.bodies.end(), [&](const std::string& body) {
                                 return std::count(summary.columns.begin(), summary.columns.end(), body + ".dwx") > 0;
                               });
    shape.floating_base = shape.tree && compile_tree(*loaded.run.model, true).floating_base;
    shape.accelerations = std::count_if(summary.columns.begin(), summary.columns.end(),
                                        [](const std::string& n) { return n.rfind("qdd.", 0) == 0; }) > 0;
    shape.normalization = std::count(summary.columns.begin(), summary.columns.end(), "normalization_error") > 0;
    const RunLayout layout = make_run_layout(shape);
    CHECK(layout.columns == summary.columns);
    check_layout(layout, families_seen);
    const auto json = nlohmann::ordered_json::parse(read_file(folder / "summary.json"));
    for (const auto& [key, value] : json.items()) {
      INFO("summary.json key " << key);
      CHECK_NOTHROW(summary_key(key));
      summary_keys_seen.insert(key);
    }
  };
  // A floating tree with a solver of accelerations (base.*, q, qd, base.d*, qdd).
  check(load_text(floating_arm("name = \"bdf\"")));
  // A closed loop with multipliers (violation.*, multiplier.*).
  check(load_text(read_file(liembs::testing::data_file("four-bar-loop.toml")), {"integrator.name=bdf"}));
  // Euler parameters (normalization_error) and Euler angles (chart switches).
  check(load_text(read_file(liembs::testing::data_file("free-body.toml")), {"group.name=euler-parameters"}));
  check(load_text(read_file(liembs::testing::data_file("free-body.toml")), {"group.name=euler-angles"}));
  // Absolute coordinates with a solver of accelerations (<body>.dwx..dvz).
  check(load_text(read_file(liembs::testing::data_file("free-body.toml")), {"integrator.name=bdf"}));
  // Prescribed motion (tau.*), from its folder (the URDF is relative to the file).
  {
    TextRun loaded{liembs::testing::build_tree_registry(), {}};
    loaded.run = load_run(ConfigDocument::load(liembs::testing::data_file("prescribed-chain.toml")), *loaded.registry);
    check(std::move(loaded));
  }
  // Every declaration is met by one of these runs, and every declared key but the ones only
  // prescribed motion of a conservative model has.
  CHECK(families_seen.size() == trajectory_columns().size());
  for (const SummaryKey& key : summary_keys()) {
    INFO("declared summary key " << key.key);
    CHECK(summary_keys_seen.count(std::string(key.key)) == 1);
  }
}

TEST_CASE("the docs' output tables are the schema's declarations", "[outputs][schema][docs]") {
  INFO("docs/user-guide.md: paste the tables of build/bin/liembs outputs --markdown between the schema markers");
  CHECK(docs_table("trajectory") == trajectory_columns_markdown());
  CHECK(docs_table("summary") == summary_keys_markdown());
  // `liembs outputs --markdown` prints the same tables.
  const auto io = scratch_folder("liembs-schema", "outputs-command");
  const auto result = run_liembs("outputs --markdown", io);
  REQUIRE(result.status == 0);
  CHECK(result.out.find(trajectory_columns_markdown()) != std::string::npos);
  CHECK(result.out.find(summary_keys_markdown()) != std::string::npos);
}

TEST_CASE("an undeclared summary key is refused by the writer", "[outputs][schema]") {
  CHECK_THROWS_AS(summary_key("energy_drift_max"), std::logic_error);  // Python's old spelling
  CHECK(summary_key("energy_drift_max_relative").unit == "1");
}

TEST_CASE("tree runs write q, qd (and the floating base) as liembs eval reads them, rates the derivatives of the coordinates",
          "[outputs][tree]") {
  auto loaded = load_text(floating_arm("name = \"rkmk\"\ntableau = \"rk4\""), {"simulation.step_size=0.001"});
  const std::filesystem::path folder = scratch_folder("liembs-schema", "tree-rk4");
  execute_run(loaded.run, RunOutput::into(folder));
  const auto csv = parse_csv(read_file(folder / "trajectory.csv"));
  const auto column = [&](const std::string& name) {
    const auto at = std::find(csv.names.begin(), csv.names.end(), name);
    REQUIRE(at != csv.names.end());
    return static_cast<std::size_t>(at - csv.names.begin());
  };
  // The eval columns of rnea but its accelerations: all there, by name.
  const KinematicTree tree = compile_tree(*loaded.run.model, true);
  for (const auto& dof : tree.dof_names) {
    column("q." + dof);
    column("qd." + dof);
    CHECK(std::count(csv.names.begin(), csv.names.end(), "qdd." + dof) == 0);  // rk4 solves for none
  }
  CHECK(tree.dof_names == std::vector<std::string>{"shoulder[0]", "shoulder[1]", "elbow", "extension"});
  for (const char* c : {"x", "y", "z", "qw", "qx", "qy", "qz", "wx", "wy", "wz", "vx", "vy", "vz"})
    column(std::string("base.") + c);
  // The base's pose is the base body's; its twist is body-fixed: v = R^T (world velocity).
  for (const auto& row : csv.rows) {
    for (const char* c : {"x", "y", "z", "qw", "qx", "qy", "qz", "wx", "wy", "wz"})
      CHECK(row[column(std::string("base.") + c)] == row[column(std::string("torso.") + c)]);
    const Eigen::Quaterniond q(row[column("base.qw")], row[column("base.qx")], row[column("base.qy")], row[column("base.qz")]);
    const Vec3 world(row[column("torso.vx")], row[column("torso.vy")], row[column("torso.vz")]);
    const Vec3 body(row[column("base.vx")], row[column("base.vy")], row[column("base.vz")]);
    CHECK((q.toRotationMatrix().transpose() * world - body).norm() <= 1e-12 * (1.0 + world.norm()));
  }
  // qd = dq/dt: central differences of the q columns (h = 1e-3, error O(h^2)) at every row.
  const std::size_t time = column("time");
  for (const auto& dof : tree.dof_names) {
    const std::size_t q = column("q." + dof), qd = column("qd." + dof);
    double worst = 0.0;
    for (std::size_t r = 1; r + 1 < csv.rows.size(); ++r) {
      const double slope = (csv.rows[r + 1][q] - csv.rows[r - 1][q]) / (csv.rows[r + 1][time] - csv.rows[r - 1][time]);
      worst = std::max(worst, std::abs(slope - csv.rows[r][qd]));
    }
    INFO(dof);
    CHECK(worst < 1e-5);
  }
  // The first row holds the file's initial coordinates and rates.
  const std::vector<std::pair<std::string, double>> initial{
      {"q.shoulder[0]", 0.2}, {"q.shoulder[1]", -0.1}, {"qd.shoulder[0]", 1.0}, {"qd.shoulder[1]", -0.5},
      {"q.elbow", 0.0},       {"qd.elbow", 0.8},       {"q.extension", 0.0},    {"qd.extension", 0.3}};
  for (const auto& [name, value] : initial) CHECK(csv.rows.front()[column(name)] == value);
}

TEST_CASE("liembs eval reads a bdf run's trajectory as it is: rnea of its q, qd, qdd gives zero forces (no loads)",
          "[outputs][tree][eval]") {
  const auto folder = scratch_folder("liembs-schema", "eval-round-trip");
  const auto file = folder / "arm.toml";
  std::ofstream(file) << floating_arm("name = \"bdf\"");
  const auto run = run_liembs("run " + single_quoted(file) + " --quiet --output " + single_quoted(folder / "run"), folder);
  REQUIRE(run.status == 0);
  const auto eval = run_liembs("eval " + single_quoted(file) + " --set algorithm.name=rnea --states " +
                                   single_quoted(folder / "run" / "trajectory.csv") + " --output " +
                                   single_quoted(folder / "tau.csv"),
                               folder);
  INFO(eval.err);
  REQUIRE(eval.status == 0);
  const auto forces = parse_csv(read_file(folder / "tau.csv"));
  const auto trajectory = parse_csv(read_file(folder / "run" / "trajectory.csv"));
  REQUIRE(forces.rows.size() == trajectory.rows.size());
  std::size_t checked = 0;
  double worst = 0.0, scale = 0.0;  // scale: the largest inertial force term, |M qdd| ~ |C qd|
  for (std::size_t c = 0; c < forces.names.size(); ++c) {
    const auto& name = forces.names[c];
    const bool force = name.rfind("tau.", 0) == 0 ||
                       (name.rfind("base.", 0) == 0 && std::string("mxmymzfxfyfz").find(name.substr(5)) != std::string::npos &&
                        name.size() == 7);
    if (!force) continue;
    ++checked;
    for (const auto& row : forces.rows) worst = std::max(worst, std::abs(row[c]));
  }
  for (std::size_t c = 0; c < trajectory.names.size(); ++c)
    if (trajectory.names[c].rfind("qdd.", 0) == 0 || trajectory.names[c].rfind("base.d", 0) == 0)
      for (const auto& row : trajectory.rows) scale = std::max(scale, std::abs(row[c]));
  CHECK(checked == 6 + 4);  // the base wrench and the four joint forces
  CHECK(scale > 0.1);       // the run does accelerate
  CHECK(worst <= 1e-6 * scale);
}

TEST_CASE("summary.json records the build and each plugin file the run used", "[outputs][provenance]") {
  auto loaded = load_text(floating_arm("name = \"rkmk\"\ntableau = \"rk4\""));
  const std::filesystem::path folder = scratch_folder("liembs-schema", "provenance");
  execute_run(loaded.run, RunOutput::into(folder));
  const auto json = nlohmann::json::parse(read_file(folder / "summary.json"));
  const auto& provenance = json.at("provenance");
  CHECK(provenance.at("liembs_version") == LIEMBS_VERSION);
  const std::string commit = provenance.at("git_commit");
  if (std::filesystem::exists(std::filesystem::path(LIEMBS_SOURCE_DIR) / ".git"))
    CHECK(std::regex_match(commit, std::regex("[0-9a-f]{40}")));
  CHECK(!provenance.at("compiler").get<std::string>().empty());
  const std::string flavour = provenance.at("flavour");
  CHECK((flavour == "portable" || flavour.rfind("native (-march=", 0) == 0));
  // One entry per component of the run, naming the library that was loaded for it.
  const auto& plugins = provenance.at("plugins");
  REQUIRE(plugins.size() == 4);
  std::set<std::string> kinds;
  for (const auto& plugin : plugins) {
    const std::string kind = plugin.at("kind"), name = plugin.at("name"), file = plugin.at("file");
    kinds.insert(kind);
    CHECK(json.at("choices").at(kind) == name);
    CHECK(std::filesystem::is_regular_file(file));
    CHECK(std::filesystem::canonical(file).parent_path() == std::filesystem::canonical(LIEMBS_TEST_PLUGIN_DIR));
    CHECK(plugin.at("abi_fingerprint") == abi::fingerprint);  // a plugin loads only when it equals the host's
    CHECK(!plugin.at("version").get<std::string>().empty());
  }
  CHECK(kinds == std::set<std::string>{"group", "algorithm", "representation", "integrator"});
}

TEST_CASE("absolute-coordinate runs record accelerations: central differences of the recorded velocities, O(h^2)",
          "[outputs][absolute][paper-004]") {
  const std::string four_link = std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-004/four-link.toml";
  // From 0.01 s on: bdf's first three steps carry the index-3 start transient (its first step,
  // backward Euler, gives a_1 close to a_0 / 2 whatever h: q_1 = q_0 + h V_0 + h^2 a_1).
  const double from = 0.01;
  for (const char* integrator : {"bdf", "kinematics", "generalized-alpha", "ida"}) {
    for (const char* group : {"SO3xR3", "euler-parameters", "euler-angles"}) {
      std::array<AccelerationDifferences, 2> differences;
      for (int k = 0; k < 2; ++k) {
        const double h = k == 0 ? 1e-3 : 5e-4;
        std::vector<std::string> settings{std::string("integrator.name=") + integrator,
                                          std::string("group.name=") + group, "simulation.end_time=0.1",
                                          "simulation.step_size=" + std::to_string(h)};
        // bdf of order 2: its V' is O(h^2) (backward Euler's a_n is a first-order difference of V).
        if (std::string(integrator) == "bdf") settings.push_back("integrator.order=2");
        const auto csv = absolute_run(four_link, settings, std::string("four-link-") + integrator + "-" + group);
        differences[k] = acceleration_differences(csv, from);
        // The multipliers are there too, finite after t = 0 (NaN before the first step).
        std::size_t multipliers = 0;
        for (std::size_t c = 0; c < csv.names.size(); ++c)
          if (csv.names[c].rfind("multiplier.", 0) == 0) {
            ++multipliers;
            for (std::size_t r = 1; r < csv.rows.size(); ++r) REQUIRE(std::isfinite(csv.rows[r][c]));
          }
        // The four link's 18 constraint rows, and rp's normalization of each of the three bodies.
        CHECK(multipliers == (std::string(group) == "euler-parameters" ? 21u : 18u));
      }
      INFO(integrator << " in " << group << ": " << differences[0].worst << " at h = 1e-3, " << differences[1].worst
                      << " at h = 5e-4 (largest acceleration " << differences[0].scale << ")");
      CHECK(differences[0].compared >= 3 * 6 * 89);  // three bodies, six components, rows from 0.01 to 0.099 s
      CHECK(differences[0].scale > 10.0);                            // the mechanism does accelerate
      CHECK(differences[0].worst < 1e-3 * differences[0].scale);
      // Second order: 1/4 for the fixed steps; ida's own steps follow its tolerance, not h, and
      // its V' (the derivative of its interpolant) adds an error that does not shrink with h.
      CHECK(differences[1].worst < (std::string(integrator) == "ida" ? 0.6 : 0.3) * differences[0].worst);
    }
  }
}

TEST_CASE("accelerations after an Euler-angle chart switch are the integrator's, taken in the chart it stepped in",
          "[outputs][absolute]") {
  // The torque-free body of tests/data tumbles through four chart switches in 3 s.
  RunSummary summary;
  const auto csv = absolute_run(liembs::testing::data_file("free-body.toml"),
                                {"group.name=euler-angles", "integrator.name=generalized-alpha", "simulation.end_time=3",
                                 "simulation.step_size=1e-3"},
                                "free-body-chart-switches", &summary);
  CHECK(summary.chart_switches == 4);
  const AccelerationDifferences differences = acceleration_differences(csv, 0.0);
  INFO("largest difference " << differences.worst << ", largest acceleration " << differences.scale);
  CHECK(differences.worst < 1e-3);  // 4e-4 (V' in the new chart's coordinates with the old T: 56 rad/s^2)
}

TEST_CASE("integrators without accelerations or multipliers write no such columns (never zeros)", "[outputs][absolute]") {
  const auto csv = absolute_run(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-004/four-link.toml",
                                {"integrator.name=rkmk", "integrator.projection=true", "simulation.end_time=0.01"},
                                "four-link-rkmk");
  for (const auto& name : csv.names) {
    INFO(name);
    CHECK(name.find(".dwx") == std::string::npos);
    CHECK(name.rfind("multiplier.", 0) != 0);
  }
  CHECK(std::count(csv.names.begin(), csv.names.end(), "rotor.wx") == 1);
}
