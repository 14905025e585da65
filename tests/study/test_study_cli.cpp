// liembs study end to end: --jobs 1 and --jobs 2 give the same results.csv (timings
// aside), an interrupted study re-runs only the missing cases, failing cases are rows (a
// crashed case's process too, not cached), progress shows on a terminal, the report
// contains every figure it announces, and schema errors exit 2.
#include "../support/cli_process.hpp"
#include "study_csv.hpp"

#include <liembs/study/results.hpp>

#include <catch2/catch.hpp>

#include "../support/signalled_process.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

// The results.csv columns that differ between two runs.
const std::vector<std::string>& timings = liembs::study::timing_columns();

using Result = cli_test::CliResult;
using cli_test::read_file;
using study_test::count;
using study_test::csv_rows;
using study_test::csv_without;

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-study-cli-test", name); }

Result run_cli(const std::string& arguments) { return cli_test::run_liembs(arguments, scratch("io")); }

// A small study: two groups and two tableaus, a step ladder, one impossible group.
fs::path small_study(const fs::path& dir) {
  const fs::path file = dir / "small.toml";
  std::ofstream(file) << "title = \"small\"\n[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR
                         "/free-body.toml'\nset = { simulation.end_time = 0.3 }\n"
                         "[reference]\nset = { integrator.tableau = \"rk4\", simulation.step_size = 5e-4 }\n"
                         "[[axes]]\nkey = \"group.name\"\nvalues = [\"SE3\", \"SO3xR3\", \"SE4\"]\n"
                         "[[axes]]\nkey = \"integrator.tableau\"\nvalues = [\"heun\", \"rk4\"]\n"
                         "[[axes]]\nkey = \"simulation.step_size\"\nvalues = [0.05, 0.025, 0.01]\nladder = true\n"
                         "[measure]\nsample_interval = 0.05\ntargets = [1e-5]\n"
                         "ladder_extensions = 0\nrepetitions = 1\n"  // the ladders as given (test_study_matched.cpp)
                         "min_cpu_seconds = 0.005\n";               // short timings: these tests are about the outputs
  return file;
}

}  // namespace

TEST_CASE("study: --jobs 1 and --jobs 2 give the same results, failing cases are rows", "[study][cli]") {
  const fs::path dir = scratch("jobs");
  const fs::path file = small_study(dir);
  const Result one = run_cli("study '" + file.string() + "' --jobs 1 --no-report --output '" + (dir / "one").string() + "'");
  INFO(one.out << one.err);
  REQUIRE(one.status == 0);
  const Result two = run_cli("study '" + file.string() + "' --jobs 2 --no-report --output '" + (dir / "two").string() + "'");
  INFO(two.out << two.err);
  REQUIRE(two.status == 0);
  CHECK_THAT(one.out, Contains("20 cases (14 run, 0 cached, 6 failed)"));
  const std::string csv_one = read_file(dir / "one" / "results.csv");
  const std::string csv_two = read_file(dir / "two" / "results.csv");
  CHECK(csv_without(csv_one, timings) == csv_without(csv_two, timings));
  CHECK(csv_one != csv_two);  // the timings do differ: the comparison above is not vacuous
  CHECK(count(csv_one, "\n") == 1 + 20);
  // The impossible group: one row per case with the plugin's message, the others measured.
  CHECK(count(csv_one, ",failed,plugin,") == 6);
  CHECK_THAT(csv_one, Contains("unknown group 'SE4'"));
  CHECK(count(csv_one, ",ok,") == 14);
  // --list names the same 20 cases, marks the 6 that will fail with the plugin's message, runs none.
  const Result listed = run_cli("study '" + file.string() + "' --list");
  REQUIRE(listed.status == 0);
  CHECK(count(listed.out, "\n") == 20);
  CHECK(count(listed.out, "(will fail: ") == 6);
  CHECK(count(listed.out, "unknown group 'SE4'") == 6);
  CHECK_THAT(listed.err, Contains("6 of 20 cases will fail"));
  // Along each ladder of the torque-free body, the velocity error and the drifts of the
  // conserved energy and angular momentum shrink with the step (RK4 and Heun).
  std::map<std::string, std::map<double, std::map<std::string, double>>> ladders;  // group and tableau -> step -> column
  for (const auto& row : csv_rows(csv_one))
    if (row.at("role") == "case" && row.at("status") == "ok")
      for (const char* column : {"velocity_error_max", "energy_drift_max", "angular_momentum_drift_max", "steps",
                                 "rhs_evaluations"})
        ladders[row.at("group.name") + " " + row.at("integrator.tableau")][std::stod(row.at("simulation.step_size"))]
               [column] = std::stod(row.at(column));
  CHECK(ladders.size() == 4);
  for (const auto& [label, by_step] : ladders) {
    INFO(label);
    REQUIRE(by_step.size() == 3);
    const auto& fine = by_step.begin()->second;    // h = 0.01
    const auto& coarse = by_step.rbegin()->second;  // h = 0.05
    for (const char* column : {"velocity_error_max", "energy_drift_max", "angular_momentum_drift_max"}) {
      INFO(column);
      CHECK(fine.at(column) > 0.0);
      CHECK(fine.at(column) < coarse.at(column) / 10.0);
    }
    CHECK(fine.at("steps") == 30);
    CHECK(fine.at("rhs_evaluations") == (label.find("rk4") != std::string::npos ? 4 : 2) * 30);
  }
  // A ladder per group and tableau (those of SE4 without errors).
  const std::string series = read_file(dir / "one" / "series.csv");
  CHECK(count(series, "\n") == 1 + 6);
  CHECK_THAT(read_file(dir / "one" / "study.json"), Contains("\"reference_error_estimate\""));
  // Provenance as summary.json's: the build, and each plugin file the cases ran with.
  const std::string study_json = read_file(dir / "one" / "study.json");
  for (const char* key : {"\"provenance\"", "\"git_commit\"", "\"flavour\"", "\"abi_fingerprint\"",
                          "liembs-integrator-rkmk.so\"", "liembs-group-se3.so\"", "liembs-group-so3xr3.so\""})
    CHECK_THAT(study_json, Contains(key));
  for (const auto& entry : fs::directory_iterator(dir / "one"))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("study: an interrupted study re-runs only the missing cases, --force runs all", "[study][cli]") {
  const fs::path dir = scratch("resume");
  const fs::path file = small_study(dir);
  const std::string base = "study '" + file.string() + "' --jobs 2 --no-report --output '" + (dir / "out").string() + "'";
  const Result first = run_cli(base);
  REQUIRE(first.status == 0);
  const std::string before = read_file(dir / "out" / "results.csv");
  // As if the study had been stopped with three cases left: their records are missing.
  std::vector<fs::path> records;
  for (const auto& entry : fs::directory_iterator(dir / "out" / "cases")) records.push_back(entry.path());
  REQUIRE(records.size() == 14);
  std::sort(records.begin(), records.end());
  for (int i = 0; i < 3; ++i) fs::remove(records[static_cast<std::size_t>(i)]);
  const Result resumed = run_cli(base);
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.status == 0);
  CHECK_THAT(resumed.out, Contains("(3 run, 11 cached, 6 failed)"));
  CHECK(csv_without(read_file(dir / "out" / "results.csv"), timings) == csv_without(before, timings));
  // A damaged record is run again, not trusted.
  std::ofstream(records[5]) << "{ not json";
  CHECK_THAT(run_cli(base).out, Contains("(1 run, 13 cached, 6 failed)"));
  CHECK_THAT(run_cli(base + " --force").out, Contains("(14 run, 0 cached, 6 failed)"));
}

TEST_CASE("study: a case whose process is killed is a crash row, not cached, and the study goes on", "[study][cli]") {
  const fs::path dir = scratch("crash"), out = dir / "out", file = dir / "study.toml";
  // Two cases one at a time: a long one, killed from outside, then a short one.
  std::ofstream(file) << "[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR "/free-body.toml'\n"
                      << "[[axes]]\nkeys = [\"simulation.end_time\", \"simulation.step_size\"]\nname = \"run\"\n"
                      << "values = [[20.0, 2e-6], [0.1, 0.01]]\n";
  cli_test::SignalledProcess study({LIEMBS_CLI, "study", file.string(), "--output", out.string(), "--jobs", "1",
                                    "--no-report"},
                                   dir / "err");
  std::vector<pid_t> cases;
  study.wait_for([&] { return !(cases = cli_test::children_of(study.pid)).empty(); });
  REQUIRE(cases.size() == 1);
  ::kill(cases.front(), SIGKILL);
  CHECK(study.finish() == 0);
  const auto rows = csv_rows(read_file(out / "results.csv"));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("status") == "failed");
  CHECK(rows[0].at("failure_kind") == "crash");
  CHECK_THAT(rows[0].at("error_message"), Contains("the case's process was killed by signal 9"));
  CHECK(rows[1].at("status") == "ok");
  std::size_t records = 0;
  for (const auto& entry : fs::directory_iterator(out / "cases")) records += entry.path().extension() == ".json";
  CHECK(records == 1);  // a crash may not repeat: the next run tries the case again
}

TEST_CASE("study: progress on a terminal: cases done, cached, running, failed, time left", "[study][cli]") {
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    WARN("skipped: 'script' (util-linux) is not on the PATH to give liembs a terminal");
    return;
  }
  const fs::path dir = scratch("progress");
  const fs::path file = small_study(dir);
  // script(1) runs the study on a pseudo-terminal and copies what it shows to its stdout.
  const std::string command = "script -qec \"env -u LIEMBS_PLUGIN_PATH '" LIEMBS_CLI "' study '" + file.string() +
                              "' --jobs 2 --no-report --output '" + (dir / "out").string() + "'\" /dev/null >'" +
                              (dir / "terminal").string() + "' 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string terminal = read_file(dir / "terminal");
  INFO(terminal);
  CHECK_THAT(terminal, Contains("cases: 6 of 20 done (0 cached), 0 running, 6 failed"));  // SE4's, before any ran
  CHECK_THAT(terminal, Contains(" 2 running, "));
  CHECK_THAT(terminal, Contains("cases: 20 of 20 done (0 cached), 0 running, 6 failed, about 0 s left"));
  CHECK_THAT(terminal, Contains("20 cases (14 run, 0 cached, 6 failed)"));
  // Not on a terminal: no progress.
  const Result quiet = run_cli("study '" + file.string() + "' --no-report --output '" + (dir / "out").string() + "'");
  CHECK(quiet.err.find("cases:") == std::string::npos);
  CHECK_THAT(quiet.out, Contains("20 cases (0 run, 14 cached, 6 failed)"));
}

TEST_CASE("study: the report contains every figure it announces", "[study][cli][report]") {
  const fs::path dir = scratch("report");
  const fs::path file = small_study(dir);
  const Result result = run_cli("study '" + file.string() + "' --output '" + (dir / "out").string() + "'");
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  if (std::system("'" LIEMBS_PYTHON_EXECUTABLE "' -c 'import matplotlib' >/dev/null 2>&1") != 0) {
    CHECK_THAT(result.err, Contains("report.html not written: it needs python3 with matplotlib"));
    CHECK_FALSE(fs::exists(dir / "out" / "report.html"));
    return;
  }
  const std::string html = read_file(dir / "out" / "report.html");
  // Per group: work-precision and error-vs-step figures, energy drift (no joints: no violation figure).
  CHECK(study_test::announced_figures(html) == 3);
  CHECK(study_test::has_every_announced_figure(html));
  CHECK_THAT(html, Contains("unknown group 'SE4'"));
  CHECK_THAT(html, Contains("<h2>Build and plugins</h2>"));
  CHECK_THAT(html, Contains("liembs-integrator-rkmk.so"));

  // By hand with --figures: the same report, and each figure as an SVG file named after its title.
  const std::string python = "'" LIEMBS_PYTHON_EXECUTABLE "'";
  const fs::path figures = dir / "figures";
  REQUIRE(std::system((python + " '" LIEMBS_SOURCE_DIR "/scripts/study-report' '" + (dir / "out" / "study.json").string() +
                       "' '" + (dir / "again.html").string() + "' --figures '" + figures.string() + "'")
                          .c_str()) == 0);
  CHECK(read_file(dir / "again.html") == html);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(figures)) {
    names.push_back(entry.path().filename().string());
    const std::string svg = read_file(entry.path());
    CHECK(svg.rfind("<?xml", 0) == 0);
    REQUIRE(svg.find("<svg") != std::string::npos);
    CHECK(html.find(svg.substr(svg.find("<svg"))) != std::string::npos);  // the report's figure, whole
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"body-energy-drift-against-time.svg", "body-error-against-simulation-step-size.svg",
                                          "body-work-precision-diagram-simulation-step-size.svg"});
}

TEST_CASE("study: schema errors exit 2 naming the file, line and key", "[study][cli][errors]") {
  const fs::path dir = scratch("errors");
  const fs::path file = dir / "bad.toml";
  std::ofstream(file) << "[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR "/free-body.toml'\n"
                      << "[[axes]]\nkey = \"group.name\"\nvalues = [\"SE3\"]\nladdr = true\n";
  const Result r = run_cli("study '" + file.string() + "' --output '" + (dir / "out").string() + "'");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Contains("bad.toml:7:") && Contains("unknown key 'axes.0.laddr' (did you mean 'ladder'?)"));
  CHECK_FALSE(fs::exists(dir / "out"));

  // An axis over a key no run reads is a mistake in the study, not a failing case.
  std::ofstream(file) << "[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR "/free-body.toml'\n"
                      << "[[axes]]\nkey = \"integrator.tablaeu\"\nvalues = [\"rk4\"]\n";
  const Result unknown = run_cli("study '" + file.string() + "' --output '" + (dir / "out").string() + "'");
  CHECK(unknown.status == 2);
  CHECK_THAT(unknown.err, Contains("case 'body integrator.tablaeu=rk4'") &&
                              Contains("unknown key 'integrator.tablaeu' (did you mean 'tableau'?)"));
  CHECK_FALSE(fs::exists(dir / "out" / "results.csv"));
  // --list checks every case as a run would: the same error, nothing written.
  const Result listed = run_cli("study '" + file.string() + "' --list");
  CHECK(listed.status == 2);
  CHECK_THAT(listed.err, Contains("case 'body integrator.tablaeu=rk4'") &&
                             Contains("unknown key 'integrator.tablaeu' (did you mean 'tableau'?)"));
  CHECK(run_cli("study").status == 1);
  CHECK(run_cli("study --help").status == 0);
}


TEST_CASE("study over the four parameterizations: the same errors and RK4's order 4 in each", "[study][cli][parameterizations]") {
  const fs::path dir = scratch("parameterizations");
  const fs::path file = dir / "parameterizations.toml";
  std::ofstream(file) << "title = \"parameterizations\"\n[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR
                         "/free-body.toml'\nset = { simulation.end_time = 0.5 }\n"
                         "[reference]\nset = { simulation.step_size = 5e-4 }\n"
                         "[[axes]]\nkey = \"group.name\"\n"
                         "values = [\"SE3\", \"rotation-matrix\", \"euler-parameters\", \"euler-angles\"]\n"
                         "[[axes]]\nkey = \"simulation.step_size\"\nvalues = [0.05, 0.025, 0.0125]\nladder = true\n"
                         "[measure]\nsample_interval = 0.05\n";
  const fs::path out = dir / "out";
  const Result result = run_cli("study '" + file.string() + "' --jobs 2 --no-report --output '" + out.string() + "'");
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  std::map<std::string, int> ok_cases;
  for (const auto& row : csv_rows(read_file(out / "results.csv")))
    if (row.at("role") == "case" && row.at("status") == "ok") ++ok_cases[row.at("group")];
  CHECK(ok_cases == std::map<std::string, int>{{"SE3", 3}, {"euler-angles", 3}, {"euler-parameters", 3}, {"rotation-matrix", 3}});
  int series = 0;
  for (const auto& row : csv_rows(read_file(out / "series.csv"))) {
    INFO(row.at("series"));
    CHECK(std::stod(row.at("observed_order")) == Approx(4.0).margin(0.4));
    ++series;
  }
  CHECK(series == 4);
}
