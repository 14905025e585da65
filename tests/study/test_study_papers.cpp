// The studies in studies/ run (in a reduced form where the full one takes minutes), each
// writes results.csv, study.json and report.html with every figure it announces, and each
// shows what its report claims: paper 002's ground joints stay at round-off on SE3 only and
// RK4 keeps order 4; the integrators on a tree show their orders; the four representations
// agree on every algorithm (papers 000/001); the higher-order algorithms agree (paper 003);
// rA, rp and rε give the same motion with the same orders of BDF2, generalized-alpha and
// projected RK4 on the free double pendulum and reproduce the driven mechanisms'
// prescribed motion (paper 004). A study file without a test of its own is run by the last
// test, which checks its outputs.
#include "../support/cli_process.hpp"
#include "mpi_launcher.hpp"
#include "study_csv.hpp"

#include <liembs/study/results.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cli_test::read_file;
using study_test::csv_rows;

namespace {

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-study-papers-test", name); }

// Runs the study studies/<name>.toml with the given extra options into `dir`/study and
// checks its outputs: a row per case in results.csv, study.json, and report.html with
// every figure it announces (or, without matplotlib, the message saying how to get it).
// Returns the rows of results.csv.
std::vector<std::map<std::string, std::string>> run_study(const std::string& name, const std::string& options,
                                                          const fs::path& dir) {
  const fs::path out = dir / "study";
  const auto result = cli_test::run_liembs("study '" LIEMBS_SOURCE_DIR "/studies/" + name + ".toml' " + options +
                                               " --output '" + out.string() + "'",
                                           dir);
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.out, Contains(" 0 failed)"));
  const auto rows = csv_rows(read_file(out / "results.csv"));
  CHECK_THAT(result.out, Contains("study '") && Contains(": " + std::to_string(rows.size()) + " cases ("));
  CHECK_THAT(read_file(out / "study.json"), Contains("\"cases\"") && Contains("\"liembs_version\""));
  if (std::system("'" LIEMBS_PYTHON_EXECUTABLE "' -c 'import matplotlib' >/dev/null 2>&1") == 0) {
    const std::string html = read_file(out / "report.html");
    CHECK(study_test::announced_figures(html) > 0);
    CHECK(study_test::has_every_announced_figure(html));
    // Every figure drawn again and checked: no legend covers another panel, every axis
    // label names its unit (scripts/study-report --check).
    const auto checked = cli_test::run_command("'" LIEMBS_PYTHON_EXECUTABLE "' '" LIEMBS_SOURCE_DIR
                                               "/scripts/study-report' '" + (out / "study.json").string() + "' --check",
                                               dir);
    INFO(checked.out << checked.err);
    CHECK(checked.status == 0);
    CHECK_THAT(checked.out, Contains(" figures checked, 0 problems"));
  } else {
    CHECK_THAT(result.err, Contains("report.html not written: it needs python3 with matplotlib"));
  }
  return rows;
}

// Few states and one timed pass: the agreement is checked as in the full study.
const std::string quick_timing =
    "--set timing.states=4 --set timing.repetitions=1 --set timing.min_cpu_seconds=0 --set timing.warmup=0 --jobs 2";
// Simulation studies whose tests check the measures, not the timings: a short minimum CPU time
// per timed repetition (integrators-tree keeps the study's default).
const std::string quick_simulation_timing = "--set measure.min_cpu_seconds=0.005 --jobs 2";

// The studies the tests below run with checks of their own.
const std::set<std::string> studies_with_tests{"paper-002", "integrators-tree", "representations", "paper-003",
                                               "paper-004"};

}  // namespace

TEST_CASE("study of paper 002: ground joints stay on SE3 and drift on SO3xR3, RK4 order 4", "[study][papers][paper-002]") {
  const fs::path dir = scratch("paper-002");
  const auto rows = run_study("paper-002", quick_simulation_timing, dir);
  CHECK(rows.size() >= 40);  // 40 cases and the rungs the ladder extension adds (docs/studies.md)
  int checked = 0;
  for (const auto& row : rows) {
    if (row.at("role") != "case") continue;
    const bool se3 = row.at("group.name") == "SE3";
    INFO(row.at("case"));
    if (row.at("model") == "heavy-top") {
      const double pivot = std::stod(row.at("constraint_violation_max.pivot"));
      CHECK((se3 ? pivot < 1e-11 : pivot > 1e-9));
      ++checked;
    }
    if (row.at("model") == "spherical-three-bar" && se3) {
      CHECK(std::stod(row.at("constraint_violation_max.joint1")) < 1e-12);
      CHECK(std::stod(row.at("constraint_violation_max.joint3")) < 1e-12);
    }
  }
  CHECK(checked >= 8);
  for (const auto& row : csv_rows(read_file(dir / "study" / "series.csv"))) {
    INFO(row.at("series"));
    CHECK(std::stod(row.at("observed_order")) == Approx(4.0).margin(0.35));
  }
}

TEST_CASE("study of the integrators on a tree: orders 2, 3, 4 and 2, the same under mpirun -np 2", "[study][papers][mpi]") {
  const fs::path dir = scratch("integrators");
  const auto rows = run_study("integrators-tree", "--jobs 2", dir);
  const std::map<std::string, double> expected{{"double-pendulum integrator.name=rkmk integrator.tableau=heun", 2.0},
                                               {"double-pendulum integrator.name=rkmk integrator.tableau=rk3", 3.0},
                                               {"double-pendulum integrator.name=rkmk integrator.tableau=rk4", 4.0},
                                               {"double-pendulum integrator.name=generalized-alpha", 2.0}};
  int checked = 0;
  std::map<std::string, std::string> orders;  // series -> observed order, as written
  for (const auto& row : csv_rows(read_file(dir / "study" / "series.csv"))) {
    orders[row.at("series")] = row.at("observed_order");
    const auto found = expected.find(row.at("series"));
    if (found == expected.end()) continue;
    INFO(row.at("series"));
    CHECK(std::stod(row.at("observed_order")) == Approx(found->second).margin(0.3));
    ++checked;
  }
  CHECK(checked == 4);
#ifdef LIEMBS_TEST_STUDY_MPI
  if (!study_test::mpirun_on_path()) {
    WARN("mpirun is not on the PATH: the study was not run under MPI (Debian: apt install openmpi-bin)");
    return;
  }
  // A study of studies/ under mpirun -np 2: every output, and the serial run's results apart from the timings.
  const fs::path mpi = dir / "mpi";
  const auto result = cli_test::run_liembs("study '" LIEMBS_SOURCE_DIR "/studies/integrators-tree.toml' --output '" +
                                               mpi.string() + "'",
                                           dir, {}, study_test::mpirun_launcher());
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.out, Contains(std::to_string(rows.size()) + " cases (" + std::to_string(rows.size()) +
                                  " run, 0 cached, 0 failed)"));
  const std::vector<std::string>& timings = liembs::study::timing_columns();
  CHECK(study_test::csv_without(read_file(mpi / "results.csv"), timings) ==
        study_test::csv_without(read_file(dir / "study" / "results.csv"), timings));
  std::map<std::string, std::string> mpi_orders;
  for (const auto& row : csv_rows(read_file(mpi / "series.csv"))) mpi_orders[row.at("series")] = row.at("observed_order");
  CHECK(mpi_orders == orders);
  CHECK_THAT(read_file(mpi / "study.json"), Contains("\"cases\""));
  if (fs::exists(dir / "study" / "report.html")) CHECK(study_test::has_every_announced_figure(read_file(mpi / "report.html")));
#endif
}

TEST_CASE("study of papers 000/001: every algorithm agrees in the four representations", "[study][papers]") {
  const auto rows = run_study("representations", quick_timing, scratch("representations"));
  CHECK(rows.size() == 5 * 7 * 4);
  std::set<std::string> compared;
  for (const auto& row : rows) {
    INFO(row.at("case"));
    CHECK(row.at("status") == "ok");
    CHECK(std::stod(row.at("max_relative_difference")) < 1e-9);
    CHECK(std::stod(row.at("ratio_to_best")) >= 1.0);
    if (!row.at("compared_with").empty()) compared.insert(row.at("representation"));
  }
  CHECK(compared == std::set<std::string>{"spatial", "hybrid", "mixed"});
}

TEST_CASE("study of paper 003: the higher-order algorithms agree across representations", "[study][papers]") {
  const auto rows = run_study("paper-003", quick_timing, scratch("paper-003"));
  CHECK(rows.size() == 4 * 2 * 6 * 2);
  for (const auto& row : rows) {
    INFO(row.at("case"));
    CHECK(row.at("status") == "ok");
    CHECK(std::stod(row.at("max_relative_difference")) < 1e-8);
  }
}

TEST_CASE("study of paper 004: rA, rp and rε agree, BDF2 and generalized-alpha of order 2, projected RK4 of order 4",
          "[study][papers]") {
  const fs::path dir = scratch("paper-004");
  const auto rows = run_study("paper-004", quick_simulation_timing, dir);
  // The free double pendulum: the same error in the three parameterizations, per integrator and step.
  std::map<std::string, std::map<std::string, double>> errors;  // integrator and step -> group -> error
  int projected = 0;
  for (const auto& row : rows) {
    if (row.at("role") != "case") continue;
    INFO(row.at("case"));
    const double error = std::stod(row.at("pose_error_max"));
    if (row.at("model") == "double-pendulum")
      errors[row.at("integrator.name") + " " + row.at("simulation.step_size")][row.at("group.name")] = error;
    else
      CHECK(error < 1e-8);  // driven mechanisms: the motion is prescribed
    if (row.at("integrator.name") == "rkmk") {  // projected onto g = 0 after every step
      CHECK(std::stod(row.at("constraint_violation_max")) < 1e-11);
      ++projected;
    }
    // The cost counters: fixed steps over 1 s; RK4's four stages per step; at least one
    // Newton iteration per step of the implicit methods; ida's own steps and failures.
    const std::string integrator = row.at("integrator.name");
    const long steps = std::stol(row.at("steps"));
    if (integrator == "ida") {
      CHECK(steps > 10);
      CHECK(std::stol(row.at("rhs_evaluations")) > steps);
      CHECK(std::stol(row.at("newton_iterations")) >= steps);
      CHECK(std::stol(row.at("failed_steps")) >= 0);
    } else {
      CHECK(steps == std::lround(1.0 / std::stod(row.at("simulation.step_size"))));
      if (integrator == "rkmk") CHECK(std::stol(row.at("rhs_evaluations")) == 4 * steps);
      else CHECK(std::stol(row.at("newton_iterations")) >= steps);
    }
  }
  CHECK(projected == 4 * 3 * 3);  // every mechanism, parameterization and step
  CHECK(errors.size() == 3 + 3 + 3 + 1);
  for (const auto& [label, by_group] : errors) {
    INFO(label);
    REQUIRE(by_group.size() == 3);
    const double rA = by_group.at("rotation-matrix");
    CHECK(rA > 1e-11);
    // Fixed steps: the same discrete motion up to the coordinates' round-off and Newton
    // tolerances; ida chooses its own steps in each, so only the magnitude agrees.
    const double spread = label.rfind("ida", 0) == 0 ? 4.0 : 1.5;
    for (const char* group : {"euler-parameters", "euler-angles"}) {
      CHECK(by_group.at(group) < spread * rA);
      CHECK(by_group.at(group) > rA / spread);
    }
  }
  int fits = 0;
  for (const auto& row : csv_rows(read_file(dir / "study" / "series.csv"))) {
    if (row.at("model") != "double-pendulum") continue;
    INFO(row.at("series"));
    const bool rk4 = row.at("series").find("integrator.name=rkmk") != std::string::npos;
    CHECK(std::stod(row.at("observed_order")) == Approx(rk4 ? 4.0 : 2.0).margin(0.2));
    ++fits;
  }
  CHECK(fits == 9);
}

TEST_CASE("every study in studies/ runs and writes results.csv, study.json and report.html", "[study][papers]") {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(LIEMBS_SOURCE_DIR "/studies"))
    if (entry.path().extension() == ".toml") found.insert(entry.path().stem().string());
  CHECK(found.size() >= studies_with_tests.size());
  for (const auto& name : studies_with_tests) {
    INFO(name);
    CHECK(found.count(name) == 1);  // the tests above run it
  }
  for (const auto& name : found) {
    if (studies_with_tests.count(name)) continue;
    INFO("studies/" << name << ".toml has no test of its own: run here, with few states if it times algorithms");
    const bool algorithms =
        read_file(LIEMBS_SOURCE_DIR "/studies/" + name + ".toml").find("kind = \"algorithms\"") != std::string::npos;
    const auto rows = run_study(name, algorithms ? quick_timing : quick_simulation_timing, scratch(name));
    CHECK_FALSE(rows.empty());
  }
}
