// The papers' studies in studies/ run (in a reduced form where the full one takes minutes)
// and show what their reports claim: the four representations agree on every algorithm
// (papers 000/001), the higher-order algorithms agree and cost more with the order and
// the size (paper 003), and rA, rp and rε give the same motion with the same order 2 of
// BDF2 and generalized-alpha on the free double pendulum and reproduce the driven
// mechanisms' prescribed motion (paper 004).
#include "../support/cli_process.hpp"
#include "study_csv.hpp"

#include <catch2/catch.hpp>

#include <cmath>
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

// Runs a study of studies/ with the given extra options into `dir`/study; its results.csv rows.
std::vector<std::map<std::string, std::string>> run_study(const std::string& name, const std::string& options,
                                                          const fs::path& dir) {
  const fs::path out = dir / "study";
  const auto result = cli_test::run_liembs("study '" LIEMBS_SOURCE_DIR "/studies/" + name + ".toml' --no-report " +
                                               options + " --output '" + out.string() + "'",
                                           dir);
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.out, Contains(" 0 failed)"));
  return csv_rows(read_file(out / "results.csv"));
}

// Few states and one timed pass: the agreement is checked as in the full study.
const std::string quick_timing = "--set timing.states=4 --set timing.repetitions=1 --set timing.warmup=0 --jobs 2";

}  // namespace

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

TEST_CASE("study of paper 004: rA, rp and rε agree, BDF2 and generalized-alpha of order 2", "[study][papers]") {
  const fs::path dir = scratch("paper-004");
  const auto rows = run_study("paper-004", "--jobs 2", dir);
  // The free double pendulum: the same error in the three parameterizations, per integrator and step.
  std::map<std::string, std::map<std::string, double>> errors;  // integrator and step -> group -> error
  for (const auto& row : rows) {
    if (row.at("role") != "case") continue;
    INFO(row.at("case"));
    const double error = std::stod(row.at("pose_error_max"));
    if (row.at("model") == "double-pendulum")
      errors[row.at("integrator.name") + " " + row.at("simulation.step_size")][row.at("group.name")] = error;
    else
      CHECK(error < 1e-8);  // driven mechanisms: the motion is prescribed
  }
  CHECK(errors.size() == 3 + 3 + 1);
  for (const auto& [label, by_group] : errors) {
    INFO(label);
    REQUIRE(by_group.size() == 3);
    const double rA = by_group.at("rotation-matrix");
    CHECK(rA > 1e-9);
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
    CHECK(std::stod(row.at("observed_order")) == Approx(2.0).margin(0.2));
    ++fits;
  }
  CHECK(fits == 6);
}
