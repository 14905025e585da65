// Cost at matched accuracy (docs/studies.md): ladders that do not bracket a target are
// extended until they do, the side and bound are reported where they cannot be, and each
// case is timed as the fastest of its repetitions (each running it until it has used a minimum
// CPU time) with the spread reported. The study of
// issue 32: RK4 against generalized-alpha on a pendulum arm, targets 1e-4 and 1e-6.
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-study-matched-test", name); }

// RK4 beats both targets at every rung of the given ladder (a coarser rung is needed),
// generalized-alpha (order 2) misses 1e-6 at every rung (a finer one is needed).
fs::path arm_study(const fs::path& dir, int extensions) {
  const fs::path file = dir / "arm.toml";
  std::ofstream(file) << "title = \"rk4 against generalized-alpha\"\n[[models]]\nname = \"arm\"\nfile = '" LIEMBS_SOURCE_DIR
                         "/configs/examples/double-pendulum.toml'\nunset = [\"integrator.tableau\"]\n"
                         "set = { simulation.end_time = 1.0 }\n"
                         "[reference]\nset = { integrator.name = \"rkmk\", integrator.tableau = \"rk4\", "
                         "simulation.step_size = 1e-4 }\n"
                         "[[axes]]\nkey = \"integrator.name\"\nvalues = [\"rkmk\", \"generalized-alpha\"]\n"
                         "[[axes]]\nkey = \"integrator.tableau\"\nvalues = [\"rk4\"]\nonly = { integrator.name = \"rkmk\" }\n"
                         "[[axes]]\nkey = \"simulation.step_size\"\nvalues = [1e-2, 5e-3]\nladder = true\n"
                         "[measure]\nsample_interval = 0.1\ntargets = [1e-4, 1e-6]\nrepetitions = 2\nmin_cpu_seconds = 0.01\n"
                         "ladder_extensions = "
                      << extensions << "\n";
  return file;
}

json run_study(const fs::path& dir, int extensions, cli_test::CliResult& result) {
  const fs::path file = arm_study(dir, extensions);
  result = cli_test::run_liembs("study '" + file.string() + "' --no-report --output '" + (dir / "study").string() + "'",
                                dir);
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  return json::parse(cli_test::read_file(dir / "study" / "study.json"));
}

const json& series_of(const json& study, const std::string& integrator) {
  for (const auto& series : study.at("series"))
    if (series.at("label").get<std::string>().find(integrator) != std::string::npos) return series;
  FAIL("no series for " << integrator);
  return study;
}

}  // namespace

TEST_CASE("study: ladders are extended until they bracket every target, both methods get a cost",
          "[study][matched][heavy]") {
  const fs::path dir = scratch("extended");
  cli_test::CliResult result;
  // generalized-alpha (order 2, error 8.5e-4 at h = 5e-3) reaches 1e-6 below h = 3.1e-4:
  // five halvings of the ladder's end.
  const json study = run_study(dir, 6, result);
  const json& rk4 = series_of(study, "rkmk");
  const json& alpha = series_of(study, "generalized-alpha");
  for (const json* series : {&rk4, &alpha}) {
    INFO(series->dump(1));
    REQUIRE(series->at("matched").size() == 2);
    for (const auto& matched : series->at("matched")) {
      CHECK(matched.at("status") == "reached");
      CHECK(matched.at("cpu_seconds").get<double>() > 0);
      // the matched step lies between the series' rungs whose errors bracket the target
      const double rung = matched.at("rung").get<double>();
      const double target = matched.at("target").get<double>();
      bool bracketed = false;
      const auto& rungs = series->at("rungs");
      const auto& errors = series->at("errors");
      for (std::size_t k = 0; k + 1 < rungs.size(); ++k)
        bracketed = bracketed || (errors[k].get<double>() >= target && errors[k + 1].get<double>() <= target &&
                                  rungs[k].get<double>() >= rung && rung >= rungs[k + 1].get<double>());
      CHECK(bracketed);
    }
  }
  // RK4 needed coarser rungs than the file's, generalized-alpha finer ones
  CHECK(rk4.at("rungs").front().get<double>() > 1e-2);
  CHECK(alpha.at("rungs").back().get<double>() < 5e-3);
  CHECK_THAT(result.out, !Contains("not reached") && !Contains("better than the target"));
  // every measured case was timed in two repetitions, each running it until the runs had used
  // min_cpu_seconds; cpu_seconds is a time per run, the spread is there
  CHECK(study.at("measure").at("min_cpu_seconds") == 0.01);
  CHECK(study.at("measure").at("repetitions") == 2);
  // and whether the machine was quiet: its load average over 1, 5 and 15 minutes
  const json& load = study.at("machine").at("load_average");
  REQUIRE(load.size() == 3);
  for (const auto& x : load) CHECK(x.get<double>() >= 0);
  for (const auto& item : study.at("cases")) {
    if (item.at("role") != "case") continue;
    INFO(item.at("id"));
    CHECK(item.at("repetitions") == 2);
    const double per_run = item.at("cpu_seconds").get<double>();
    const auto runs = item.at("timed_runs").get<long long>();
    CHECK(static_cast<double>(runs) * per_run >= 0.01 * (1 - 1e-12));
    if (per_run < 0.01) CHECK(runs >= 2);
    CHECK(item.at("cpu_seconds_spread").get<double>() >= 0);
  }
  const std::string csv = cli_test::read_file(dir / "study" / "results.csv");
  CHECK_THAT(csv, Contains(",repetitions,timed_runs,cpu_seconds_spread,"));
}

TEST_CASE("study: without extensions, an unbracketed target reports its side and bound, never a bare 'not reached'",
          "[study][matched]") {
  const fs::path dir = scratch("bounded");
  cli_test::CliResult result;
  const json study = run_study(dir, 0, result);
  const json& rk4 = series_of(study, "rkmk");
  REQUIRE(rk4.at("rungs").size() == 2);
  const json& at_coarse_target = rk4.at("matched").at(0);
  INFO(rk4.dump(1));
  REQUIRE(at_coarse_target.at("status") == "better_at_every_rung");
  double cheapest = INFINITY;
  for (const auto& seconds : rk4.at("cpu_seconds")) cheapest = std::min(cheapest, seconds.get<double>());
  CHECK(at_coarse_target.at("bound").get<double>() == cheapest);
  CHECK_THAT(result.out, Contains("at 0.0001: better than the target at every rung, at most"));
  const json& alpha = series_of(study, "generalized-alpha");
  const json& at_fine_target = alpha.at("matched").at(1);
  REQUIRE(at_fine_target.at("status") == "worse_at_every_rung");
  CHECK(at_fine_target.at("bound").get<double>() == 5e-3);
  CHECK_THAT(result.out, Contains("at 1e-06: not reached down to simulation.step_size = 0.005"));
  CHECK_THAT(cli_test::read_file(dir / "study" / "series.csv"), Contains("status@0.0001") && Contains("better_at_every_rung"));
}
