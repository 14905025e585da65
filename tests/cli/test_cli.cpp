// The liembs program end to end: subcommands, outputs, and every error kind with its
// message and exit status (README.md, "Exit status").
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

using Result = cli_test::CliResult;
using cli_test::read_file;

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-cli-test", name); }

// Runs liembs with `arguments` (already shell-quoted where needed) from `cwd`.
Result liembs(const std::string& arguments, const fs::path& cwd = fs::temp_directory_path()) {
  return cli_test::run_liembs(arguments, scratch("io"), cwd);
}

const std::string data = LIEMBS_TEST_DATA_DIR;
const std::string free_body = "'" + data + "/free-body.toml'";
std::string broken(const std::string& name) { return "'" LIEMBS_TEST_BROKEN_PLUGIN_DIR "/" + name + "'"; }

fs::path write_config(const std::string& name, const std::string& text) {
  const fs::path file = scratch("configs") / name;
  std::ofstream(file) << text;
  return file;
}

// The data rows of a CSV text as numbers (header skipped).
std::vector<std::vector<double>> numeric_rows(const std::string& csv) { return cli_test::parse_csv(csv).rows; }

bool has_leftovers(const fs::path& dir) {
  if (!fs::exists(dir)) return false;
  for (const auto& entry : fs::directory_iterator(dir)) {
    (void)entry;
    return true;
  }
  return false;
}

}  // namespace

TEST_CASE("help of every command exits 0", "[cli]") {
  for (const char* command : {"--help", "run --help", "validate --help", "plugins --help", "compare --help"}) {
    const Result result = liembs(command);
    INFO(command << "\n" << result.err);
    CHECK(result.status == 0);
    CHECK_THAT(result.out, Contains("Usage: liembs"));
  }
  CHECK(liembs("").status == 1);
  CHECK_THAT(liembs("frobnicate").err, Contains("unknown command 'frobnicate'"));
}

TEST_CASE("liembs plugins lists the built-in components without any environment variable", "[cli]") {
  const Result result = liembs("plugins");
  INFO(result.err);
  CHECK(result.status == 0);
  for (const char* line : {"group           SE3", "group           SO3xR3", "integrator      rkmk",
                           "algorithm       newton-euler"})
    CHECK_THAT(result.out, Contains(line));
  CHECK_THAT(result.out, Contains("liembs-integrator-rkmk.so"));
  // Columns sized to their content: every name (the longest is 'generalized-alpha') ends
  // at least one space before the VERSION column, where a version number starts.
  std::stringstream lines(result.out);
  std::string header;
  std::getline(lines, header);
  const auto version_column = header.find("VERSION"), summary_column = header.find("SUMMARY");
  REQUIRE(version_column != std::string::npos);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == ' ' || line.rfind("search path", 0) == 0 || line.rfind("shadowed", 0) == 0) continue;
    INFO(line);
    REQUIRE(line.size() > summary_column);
    CHECK(line[version_column - 1] == ' ');
    CHECK(std::isdigit(static_cast<unsigned char>(line[version_column])));
    CHECK(line[summary_column - 1] == ' ');
    ++rows;
  }
  CHECK(rows >= 10);
}

TEST_CASE("run writes trajectory.csv and summary.json, validate checks without running", "[cli]") {
  const fs::path out = scratch("run-ok") / "out";
  const Result result = liembs("run " + free_body + " --output '" + out.string() + "' --set simulation.output_every=10");
  INFO(result.err);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.out, Contains("energy drift"));
  const std::string csv = read_file(out / "trajectory.csv");
  CHECK_THAT(csv, Contains("time,body.x,body.y,body.z,body.qw"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 1 + 10);  // header, t = 0, every 10th of 100 steps
  // summary.json is valid JSON with the run's choices and figures, in the order written.
  const auto summary = nlohmann::ordered_json::parse(read_file(out / "summary.json"));
  CHECK(summary.at("choices").at("group") == "SE3");
  CHECK(summary.at("choices").at("representation").is_null());  // a free body has no tree representation
  CHECK(summary.at("steps") == 100);
  CHECK(summary.at("step_size") == 0.01);
  CHECK(summary.at("energy_drift_max_relative").is_number_float());
  CHECK(summary.at("energy_drift_max_relative").get<double>() < 1e-6);
  CHECK(summary.begin().key() == "config");
  for (const auto& entry : fs::directory_iterator(out))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);

  const Result quiet = liembs("run " + free_body + " --quiet --output '" + (out / "q").string() + "'");
  CHECK(quiet.status == 0);
  CHECK(quiet.out.empty());

  const Result valid = liembs("validate " + free_body);
  CHECK(valid.status == 0);
  CHECK_THAT(valid.out, Contains("valid (1 bodies; group SE3"));
}

TEST_CASE("compare prints one row per combination", "[cli]") {
  const fs::path out = scratch("compare");
  const Result result = liembs("compare " + free_body + " --vary group.name=SE3,SO3xR3 --vary integrator.tableau=heun,rk4"
                               " --output '" + out.string() + "'");
  INFO(result.err);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.out, Contains("group.name=SO3xR3 integrator.tableau=heun"));
  CHECK(std::count(result.out.begin(), result.out.end(), '\n') == 5);
  CHECK_THAT(read_file(out / "comparison.csv"), Contains("\"group.name=SE3 integrator.tableau=rk4\""));
  // A label holding a TOML string: its quotes are doubled in the CSV field (RFC 4180).
  const Result quoted = liembs("compare " + free_body + " --vary 'title=\"a\",\"b\"' --quiet --output '" + out.string() + "'");
  INFO(quoted.err);
  REQUIRE(quoted.status == 0);
  CHECK_THAT(read_file(out / "comparison.csv"), Contains("\n\"title=\"\"a\"\"\",") && Contains("\n\"title=\"\"b\"\"\","));
}

TEST_CASE("configuration errors exit 2 naming file, line and key", "[cli][errors]") {
  SECTION("unknown key with suggestion") {
    const Result r = liembs("validate " + free_body + " --set integrator.tablaeu=rk4");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("unknown key 'integrator.tablaeu'") && Contains("did you mean 'tableau'?"));
  }
  SECTION("wrong type") {
    const Result r = liembs("run " + free_body + " --set simulation.step_size=small");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("simulation.step_size: expected a number, found a string"));
  }
  SECTION("out of range, with position in the file") {
    const fs::path file = write_config("range.toml", read_file(data + "/free-body.toml") + "\n");
    std::string text = read_file(file);
    text.replace(text.find("step_size = 0.01"), 16, "step_size = -0.01");
    std::ofstream(file) << text;
    const Result r = liembs("run '" + file.string() + "'");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("range.toml:") && Contains("simulation.step_size: value -0.01 is out of range"));
  }
  SECTION("TOML syntax error") {
    const fs::path file = write_config("syntax.toml", "title = \"x\"\n[model\n");
    const Result r = liembs("validate '" + file.string() + "'");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("syntax.toml:2:") && Contains("TOML syntax error"));
  }
  SECTION("missing file") {
    const Result r = liembs("run /nonexistent/run.toml");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("/nonexistent/run.toml: cannot read"));
  }
  SECTION("invalid body names the body") {
    const Result r = liembs("validate " + free_body + " --set 'model.bodies.0.inertia=[[1,0,0],[0,1,0],[0,0,3]]'");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("body 'body'") && Contains("triangle inequality"));
  }
  SECTION("usage error") {
    const Result r = liembs("run");
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("missing the TOML file"));
  }
}

TEST_CASE("plugin errors exit 3 with the file and the reason", "[cli][errors]") {
  SECTION("unknown name: available names and nearest match, at the key's position") {
    const Result r = liembs("run " + free_body + " --set group.name=se3");
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Contains("group.name: unknown group 'se3'; available: euler-angles, euler-parameters, SE3, SO3xR3, rotation-matrix (did you mean 'SE3'?)"));
  }
  SECTION("library not found") {
    const Result r = liembs("run " + free_body + " --set 'plugins.paths=[\"/nonexistent/liembs-x.so\"]'");
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Contains("plugin library or folder not found: /nonexistent/liembs-x.so") &&
                          Contains("[plugins] paths"));
  }
  SECTION("entry symbol missing") {
    const Result r = liembs("plugins --plugin-path " + broken("missing-entry"));
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Contains("liembs-missing-entry.so: entry symbol 'liembs_plugin_register' is missing"));
  }
  SECTION("ABI mismatch") {
    const Result r = liembs("run " + free_body + " --plugin-path " + broken("abi-mismatch"));
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Contains("liembs-abi-mismatch.so: ABI mismatch in 'eigen_max_align_bytes'"));
  }
  SECTION("built for the previous minor version of LieMBS") {
    const Result r = liembs("plugins --plugin-path " + broken("old-abi"));
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Contains("liembs-old-abi.so: ABI mismatch in 'liembs': plugin built for LieMBS") &&
                          Contains("docs/plugins.md") && Contains("rebuild the plugin against this LieMBS"));
  }
  SECTION("not a shared library") {
    const Result r = liembs("plugins --plugin-path " + broken("not-a-library"));
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Contains("liembs-not-a-library.so: cannot load the plugin library"));
  }
  SECTION("exception while creating a component") {
    const Result r = liembs("run " + free_body + " --plugin-path " + broken("throwing-factory") +
                            " --set integrator.name=throwing");
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Contains("creating integrator 'throwing'") && Contains("deliberate failure in the factory"));
  }
  SECTION("LIEMBS_PLUGIN_PATH is searched") {
    const fs::path dir = scratch("env");
    const std::string command = "LIEMBS_PLUGIN_PATH=" + broken("throwing-factory") + " '" LIEMBS_CLI "' plugins > '" +
                                (dir / "out").string() + "'";
    CHECK(std::system(command.c_str()) == 0);
    CHECK_THAT(read_file(dir / "out"), Contains("throwing") && Contains("LIEMBS_PLUGIN_PATH"));
  }
}

// An algorithm plugin with the REQUIRED operations only (tests/test-plugins/minimal_algorithm.cpp)
// runs with the implicit integrators by their fallbacks, which summary.json and the console
// state with the reason; its motion is the built-in newton-euler's, whose declared DAE form
// gives the analytic Newton matrix.
TEST_CASE("a plugin without optional capabilities runs with its fallbacks stated", "[cli][contract]") {
  const fs::path config = write_config("tumbling-body.toml", R"(title = "tumbling body"
[model]
gravity = [0.0, 0.0, -9.81]
[[model.bodies]]
name = "body"
mass = 1.5
center_of_mass = [0.04, -0.03, 0.02]
inertia = [[0.030, 0.002, -0.001], [0.002, 0.022, 0.0015], [-0.001, 0.0015, 0.012]]
rotation_vector = [0.4, 0.1, -0.3]
angular_velocity = [1.0, 3.0, -2.0]
linear_velocity = [0.3, -0.1, 0.2]
[algorithm]
name = "minimal-free-body"
[group]
name = "SE3"
[integrator]
name = "bdf"
[simulation]
end_time = 0.2
step_size = 0.005
)");
  const std::string plugin = " --plugin-path " + broken("minimal-algorithm");
  const fs::path minimal = scratch("minimal"), builtin = scratch("builtin"), chart = scratch("chart");
  for (const char* integrator : {"bdf", "generalized-alpha", "ida"}) {
    INFO(integrator);
    const Result r = liembs("run '" + config.string() + "'" + plugin + " --output '" + minimal.string() +
                            "' --set integrator.name=" + integrator);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Contains("newton matrix: finite-differences (algorithm 'minimal-free-body' declares no analytic"));
    CHECK_THAT(r.out, Contains("unconstrained form: ode ("));  // bdf's default form is dae: then the reason is the plugin
    if (std::string(integrator) == "bdf")
      CHECK_THAT(r.out, Contains("unconstrained form: ode (algorithm 'minimal-free-body' declares no dae_form"));
    const auto summary = nlohmann::json::parse(read_file(minimal / "summary.json"));
    CHECK(summary["method_choices"]["newton_matrix"]["choice"] == "finite-differences");
    CHECK(summary["method_choices"]["unconstrained_form"]["choice"] == "ode");
    CHECK_THAT(summary["method_choices"]["newton_matrix"]["reason"].get<std::string>(),
               Contains("algorithm 'minimal-free-body' declares no analytic"));
    CHECK(!summary["method_choices"].contains("group_derivatives"));  // no analytic K: the group's are not used

    // The built-in newton-euler declares its DAE form: analytic, and the same motion.
    const Result b = liembs("run '" + config.string() + "' --output '" + builtin.string() +
                            "' --set algorithm.name=newton-euler --set integrator.name=" + integrator);
    INFO(b.err);
    REQUIRE(b.status == 0);
    const auto analytic = nlohmann::json::parse(read_file(builtin / "summary.json"));
    CHECK(analytic["method_choices"]["newton_matrix"]["choice"] == "analytic");
    CHECK(analytic["method_choices"]["unconstrained_form"]["choice"] == "dae");
    CHECK_THAT(b.out, Contains("newton matrix: analytic"));
    const auto x = numeric_rows(read_file(minimal / "trajectory.csv")), y = numeric_rows(read_file(builtin / "trajectory.csv"));
    REQUIRE(x.size() == y.size());
    double largest = 0.0;
    for (std::size_t c = 0; c < x.back().size(); ++c) largest = std::max(largest, std::abs(x.back()[c] - y.back()[c]));
    CHECK(largest < 1e-6);
  }
  // A group without closed-form velocity-map derivatives (euler-parameters): the analytic
  // Newton matrix of newton-euler (K too: generalized-alpha) uses the group's default
  // differences, and says so; its internal constraint rows make the run constrained, and
  // generalized-alpha records their multipliers (rkmk, below, declares none and says so).
  const Result r = liembs("run '" + config.string() + "' --output '" + chart.string() +
                          "' --set algorithm.name=newton-euler --set group.name=euler-parameters --set integrator.name=generalized-alpha");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("group derivatives: central-differences (group 'euler-parameters' declares no closed-form "
                             "velocity_map_derivatives"));
  const auto summary = nlohmann::json::parse(read_file(chart / "summary.json"));
  CHECK(summary["method_choices"]["group_derivatives"]["choice"] == "central-differences");
  CHECK(!summary["method_choices"].contains("multipliers"));
  const auto explicit_folder = chart.parent_path() / (chart.filename().string() + "-rkmk");
  const Result e = liembs("run '" + config.string() + "' --output '" + explicit_folder.string() +
                          "' --set algorithm.name=newton-euler --set group.name=euler-parameters --set integrator.name=rkmk");
  INFO(e.err);
  REQUIRE(e.status == 0);
  const auto explicit_summary = nlohmann::json::parse(read_file(explicit_folder / "summary.json"));
  CHECK(explicit_summary["method_choices"]["multipliers"]["choice"] == "not-recorded");
}

TEST_CASE("a run whose state stops being finite exits 5 and leaves no output file", "[cli][errors]") {
  const fs::path out = scratch("diverge") / "out";
  const Result r = liembs("run " + free_body + " --output '" + out.string() +
                          "' --set 'model.gravity=[0,0,-1e308]' --set simulation.step_size=0.5");
  CHECK(r.status == 5);
  CHECK_THAT(r.err, Contains("body 'body' is not finite after the step from t = 0") && Contains("step size 0.5"));
  CHECK_FALSE(has_leftovers(out));
}

TEST_CASE("constrained runs: a failed projection or IDA step exits 5 naming time, step and joint, no output left",
          "[cli][errors]") {
  const std::string heavy_top = "'" LIEMBS_SOURCE_DIR "/configs/paper-002/heavy-top.toml'";
  SECTION("rkmk projection") {
    const fs::path out = scratch("projection") / "out";
    const Result r = liembs("run " + heavy_top + " --output '" + out.string() +
                            "' --set group.name=SO3xR3 --set integrator.projection=true"
                            " --set integrator.projection_max_iterations=1 --set integrator.projection_tolerance=1e-30");
    CHECK(r.status == 5);
    CHECK_THAT(r.err, Contains("t = 0 s with step size 0.001 s") && Contains("joint 'pivot'"));
    CHECK_FALSE(has_leftovers(out));
  }
  SECTION("ida with forces that blow up") {
    const fs::path out = scratch("ida-failure") / "out";
    const Result r = liembs("run " + heavy_top + " --output '" + out.string() +
                            "' --set integrator.name=ida --set 'model.gravity=[0,0,-1e300]'");
    CHECK(r.status == 5);
    CHECK_THAT(r.err, Contains("IDA") && Contains("step size") && Contains("joint 'pivot'"));
    CHECK_FALSE(has_leftovers(out));
  }
}

TEST_CASE("tree models: closed loops and wrong combinations are refused before the run", "[cli][errors]") {
  SECTION("a closed loop runs with the cut joint as a constraint, but liembs eval refuses it, naming the joint") {
    CHECK(liembs("validate '" + data + "/four-bar-loop.toml'").status == 0);
    const Result r = liembs("eval '" + data + "/four-bar-loop.toml' --set algorithm.name=rnea --states /dev/null --output '" +
                            (scratch("loop") / "loop.csv").string() + "'");
    CHECK(r.status == 4);
    CHECK_THAT(r.err, Contains("closed kinematic loop") && Contains("'C' would be cut") && Contains("newton-euler"));
  }
  SECTION("an algorithm without forward dynamics cannot be simulated") {
    const Result r = liembs("run '" LIEMBS_SOURCE_DIR "/configs/examples/double-pendulum.toml' --set algorithm.name=rnea");
    CHECK(r.status == 4);
    CHECK_THAT(r.err, Contains("algorithm 'rnea', representation 'hybrid'") && Contains("does not compute forward dynamics"));
  }
  SECTION("newton-euler refuses a joint it cannot write as a constraint") {
    const Result r = liembs("validate '" + data + "/helical-absolute.toml'");
    CHECK(r.status == 4);
    CHECK_THAT(r.err, Contains("algorithm 'newton-euler'") && Contains("joint 'screw' is helical"));
  }
  SECTION("a joint to an unknown body") {
    const Result r = liembs("validate '" LIEMBS_SOURCE_DIR "/configs/examples/double-pendulum.toml' --set model.joints.1.child=lowr");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("model.joints.1.child") && Contains("unknown body 'lowr'") && Contains("did you mean 'lower'?"));
  }
}

TEST_CASE("eval computes the chosen algorithm for every row and checks its input", "[cli][eval]") {
  const std::string model = "'" LIEMBS_SOURCE_DIR "/configs/examples/double-pendulum.toml'";
  const fs::path dir = scratch("eval");
  std::ofstream(dir / "states.csv") << "time,q.shoulder,q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,qdd.elbow\n"
                                       "0,0.1,0.2,0.3,0.4,0.5,0.6\n1,-1,2,0,0,0,0\n";
  SECTION("inverse dynamics in every representation agree, forward dynamics inverts them") {
    std::vector<std::vector<double>> reference;
    for (const char* representation : {"body-fixed", "spatial", "hybrid", "mixed"}) {
      const fs::path out = dir / (std::string("tau-") + representation + ".csv");
      const Result r = liembs("eval " + model + " --set algorithm.name=rnea --set representation.name=" + representation +
                              " --states '" + (dir / "states.csv").string() + "' --output '" + out.string() + "'");
      INFO(r.err);
      REQUIRE(r.status == 0);
      const std::string csv = read_file(out);
      CHECK_THAT(csv, Contains("time,tau.shoulder,tau.elbow"));
      const auto rows = numeric_rows(csv);
      REQUIRE(rows.size() == 2);
      if (reference.empty()) reference = rows;
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = 0; j < rows[i].size(); ++j) CHECK(std::abs(rows[i][j] - reference[i][j]) < 1e-12);
    }
    // Forward dynamics (ABA) of these forces returns the accelerations of states.csv.
    std::ofstream(dir / "forces.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,tau.shoulder,tau.elbow\n"
                                      << "0.1,0.2,0.3,0.4," << std::setprecision(17) << reference[0][1] << ',' << reference[0][2] << "\n";
    const Result r = liembs("eval " + model + " --set algorithm.name=aba --states '" + (dir / "forces.csv").string() +
                            "' --output '" + (dir / "qdd.csv").string() + "'");
    REQUIRE(r.status == 0);
    const auto qdd = numeric_rows(read_file(dir / "qdd.csv"));
    REQUIRE(qdd.size() == 1);
    CHECK(std::abs(qdd[0][0] - 0.5) < 1e-12);
    CHECK(std::abs(qdd[0][1] - 0.6) < 1e-12);
  }
  SECTION("a missing column is named with the expected inputs, and nothing is written") {
    std::ofstream(dir / "bad.csv") << "q.shoulder,qd.shoulder\n0,0\n";
    const Result r = liembs("eval " + model + " --set algorithm.name=rnea --states '" + (dir / "bad.csv").string() +
                            "' --output '" + (dir / "out.csv").string() + "'");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("bad.csv:1: missing column 'q.elbow'") && Contains("q.shoulder,q.elbow,qd.shoulder"));
    CHECK_FALSE(fs::exists(dir / "out.csv"));
  }
  SECTION("a bad number names the line and column") {
    std::ofstream(dir / "nan.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,qdd.elbow\n0,0,0,0,0,0\n0,x,0,0,0,0\n";
    const Result r = liembs("eval " + model + " --set algorithm.name=rnea --states '" + (dir / "nan.csv").string() +
                            "' --output '" + (dir / "out.csv").string() + "'");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("nan.csv:3: column 'q.elbow': 'x' is not a finite number"));
    CHECK_FALSE(fs::exists(dir / "out.csv"));
  }
}

TEST_CASE("a model from a URDF file: the iiwa-like arm example runs and conserves energy", "[cli][urdf]") {
  const std::string config = "'" LIEMBS_SOURCE_DIR "/configs/examples/iiwa-arm.toml'";
  // Energy drift at two step sizes (run from another folder: the URDF path is relative to
  // the TOML file): small, and shrinking at the order of rk4.
  std::vector<double> drifts;
  for (const char* step : {"1e-3", "5e-4"}) {
    const fs::path out = scratch(std::string("iiwa-") + step) / "out";
    const Result r = liembs("run " + config + " --output '" + out.string() + "' --set simulation.end_time=1.0" +
                            " --set simulation.step_size=" + step + " --set simulation.output_every=10");
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
    drifts.push_back(summary.at("energy_drift_max_relative").get<double>());
    const std::string csv = read_file(out / "trajectory.csv");
    CHECK_THAT(csv, Contains("iiwa_link7.x"));
    // The initial values by joint name reached the state: the arm moves.
    const auto rows = numeric_rows(csv);
    REQUIRE(rows.size() >= 2);
    CHECK(rows.front() != rows.back());
  }
  INFO("energy drift " << drifts[0] << " (h = 1e-3), " << drifts[1] << " (h = 5e-4)");
  CHECK(drifts[1] < 1e-6);
  CHECK(drifts[1] > 0.0);
  const double ratio = drifts[0] / drifts[1];  // 2^4 = 16 for a fourth-order method
  CHECK(ratio > 12.0);
  CHECK(ratio < 22.0);
}

TEST_CASE("a model from a URDF file: errors name the TOML key and the URDF problem", "[cli][errors][urdf]") {
  const fs::path dir = scratch("urdf-errors");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return cli_test::single_quoted(dir / name);
  };
  const std::string tail = "[group]\nname = \"SE3\"\n[integrator]\nname = \"rkmk\"\n[simulation]\nend_time = 1.0\n"
                           "step_size = 0.01\n";
  SECTION("missing URDF file: exit 2") {
    const std::string config = write("missing.toml", "[model]\nurdf = \"arm.urdf\"\n" + tail);
    const Result r = liembs("validate " + config);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("missing.toml:2:8: model.urdf: URDF file not found: ") && Contains("arm.urdf"));
  }
  SECTION("URDF parse error: exit 4, TOML position and URDF line") {
    write("broken.urdf", "<robot name=\"r\">\n<link name=\"a\">\n</joint>\n</robot>\n");
    const std::string config = write("broken.toml", "title = \"t\"\n[model]\nurdf = \"broken.urdf\"\n" + tail);
    const Result r = liembs("run " + config + " --output '" + (dir / "out").string() + "'");
    CHECK(r.status == 4);
    CHECK_THAT(r.err, Contains("model error: ") && Contains("broken.toml:3:8: model.urdf: ") &&
                          Contains("broken.urdf:3") && Contains("malformed XML"));
    CHECK_FALSE(has_leftovers(dir / "out"));
  }
  SECTION("invalid URDF model: exit 4 naming the link") {
    write("heavy.urdf", "<robot name=\"r\">\n<link name=\"base\"/>\n"
                        "<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/><child link=\"rod\"/></joint>\n"
                        "<link name=\"rod\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"3\" "
                        "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n</robot>\n");
    const std::string config = write("heavy.toml", "[model]\nurdf = \"heavy.urdf\"\n" + tail);
    const Result r = liembs("validate " + config);
    CHECK(r.status == 4);
    CHECK_THAT(r.err, Contains("heavy.toml:2:8: model.urdf: ") && Contains("heavy.urdf:4: link 'rod'") &&
                          Contains("triangle inequality"));
  }
  SECTION("unknown joint name in initial_position: exit 2 with a suggestion") {
    const Result r = liembs("validate '" LIEMBS_SOURCE_DIR "/configs/examples/iiwa-arm.toml' --set model.initial_position.a9=1");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("model.initial_position.a9: unknown joint 'a9'") && Contains("did you mean 'a"));
  }
  SECTION("bodies next to the URDF: exit 2 naming the key") {
    const Result r = liembs("validate '" LIEMBS_SOURCE_DIR "/configs/examples/iiwa-arm.toml' --set 'model.bodies=[{name = \"x\"}]'");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("model.bodies: the bodies and joints come from model.urdf"));
  }
}

TEST_CASE("eval writes the analytic derivatives and the regressor under their documented column names",
          "[cli][eval][derivatives]") {
  const std::string model = "'" LIEMBS_SOURCE_DIR "/configs/examples/double-pendulum.toml'";
  const fs::path dir = scratch("eval-derivatives");
  std::ofstream(dir / "id.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,qdd.elbow\n0.1,0.2,0.3,0.4,0.5,0.6\n";
  std::ofstream(dir / "fd.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,tau.shoulder,tau.elbow\n0.1,0.2,0.3,0.4,1.5,-2\n";
  const auto eval = [&](const std::string& algorithm, const char* states) {
    const fs::path out = dir / (algorithm + ".csv");
    const Result r = liembs("eval " + model + " --set algorithm.name=" + algorithm + " --states '" + (dir / states).string() +
                            "' --output '" + out.string() + "'");
    INFO(r.err);
    REQUIRE(r.status == 0);
    return read_file(out);
  };
  // Rows and columns named after the coordinates, row-major; M as crba writes it.
  const std::string inverse = eval("rnea-derivatives", "id.csv");
  CHECK_THAT(inverse, Contains("tau.shoulder,tau.elbow,dtau_dq.shoulder.shoulder,dtau_dq.shoulder.elbow,"
                               "dtau_dq.elbow.shoulder,dtau_dq.elbow.elbow,dtau_du.shoulder.shoulder"));
  CHECK_THAT(inverse, Contains("dtau_du.elbow.elbow,M.shoulder.shoulder,M.shoulder.elbow,M.elbow.shoulder,M.elbow.elbow"));
  const auto derivatives = numeric_rows(inverse).at(0);
  const auto mass = numeric_rows(eval("crba", "id.csv")).at(0);  // qd.*, qdd.* copied, then M
  REQUIRE(derivatives.size() == 2 + 3 * 4);
  REQUIRE(mass.size() == 4 + 4);
  for (int k = 0; k < 4; ++k) CHECK(std::abs(derivatives[10 + k] - mass[4 + k]) < 1e-12);
  // dqdd/dtau = M^-1.
  const std::string forward = eval("aba-derivatives", "fd.csv");
  CHECK_THAT(forward, Contains("qdd.shoulder,qdd.elbow,dqdd_dq.shoulder.shoulder"));
  CHECK_THAT(forward, Contains("dqdd_du.elbow.elbow,dqdd_dtau.shoulder.shoulder,dqdd_dtau.shoulder.elbow"));
  const auto f = numeric_rows(forward).at(0);
  REQUIRE(f.size() == 2 + 3 * 4);
  const double* M = &mass[4];
  const double* Minv = &f[10];
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) CHECK(std::abs(M[2 * r] * Minv[c] + M[2 * r + 1] * Minv[2 + c] - (r == c ? 1.0 : 0.0)) < 1e-12);
  const std::string regressor = eval("regressor", "id.csv");
  CHECK_THAT(regressor, Contains("Y.shoulder.upper.m,Y.shoulder.upper.mcx"));
  CHECK_THAT(regressor, Contains("Y.elbow.lower.Izz"));
  CHECK(numeric_rows(regressor).at(0).size() == 2 * 2 * 10);
  // Geometric derivatives: tau as rnea, then 6 columns per joint (B) and per degree of freedom (X) for each row.
  const std::string geometric = eval("rnea-geometric-derivatives", "id.csv");
  CHECK_THAT(geometric, Contains("tau.shoulder,tau.elbow,dtau_dB.shoulder.shoulder.wx,dtau_dB.shoulder.shoulder.wy"));
  CHECK_THAT(geometric, Contains("dtau_dB.elbow.elbow.vz,dtau_dX.shoulder.shoulder.wx"));
  CHECK_THAT(geometric, Contains("dtau_dX.elbow.elbow.vz"));
  const auto g = numeric_rows(geometric).at(0);
  REQUIRE(g.size() == 2 + 2 * 12 + 2 * 12);
  CHECK(std::abs(g[0] - derivatives[0]) < 1e-12);
  CHECK(std::abs(g[1] - derivatives[1]) < 1e-12);
  // A derivative algorithm cannot integrate a run.
  const Result r = liembs("validate " + model + " --set algorithm.name=rnea-derivatives");
  CHECK(r.status == 4);
  CHECK_THAT(r.err, Contains("rnea-derivatives") && Contains("does not compute forward dynamics"));
}
