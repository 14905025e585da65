// Counts a user gives are bounded by the machine (docs/reliability.md, "Bounded resources"):
// --threads and --jobs above the hardware threads run on those, with a warning, and give the
// same results as an explicit count.
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-bounds-test", name); }

const std::string inputs = LIEMBS_SOURCE_DIR "/tests/bad-inputs/inputs";

}  // namespace

TEST_CASE("eval --threads and study --jobs beyond the machine are capped, with a warning", "[cli][threads]") {
  const fs::path dir = scratch("threads");
  const unsigned machine = std::max(std::thread::hardware_concurrency(), 1u);
  const std::string eval = "eval '" + inputs + "/double-pendulum.toml' --set algorithm.name=rnea --states '" + inputs +
                           "/csv-good.csv' --output '";
  const auto capped = cli_test::run_liembs(eval + (dir / "capped.csv").string() + "' --threads 1000000", dir, dir);
  INFO(capped.err);
  CHECK(capped.status == 0);
  CHECK_THAT(capped.err, Contains("liembs eval: --threads 1000000 is more than the " + std::to_string(machine) +
                                  " hardware threads of this machine; using " + std::to_string(machine)));
  const auto explicit_count = cli_test::run_liembs(eval + (dir / "one.csv").string() + "' --threads 1", dir, dir);
  CHECK(explicit_count.status == 0);
  CHECK(cli_test::read_file(dir / "capped.csv") == cli_test::read_file(dir / "one.csv"));
  const auto negative = cli_test::run_liembs(eval + (dir / "x.csv").string() + "' --threads=-3", dir, dir);
  CHECK(negative.status == 1);
  CHECK_THAT(negative.err, Contains("--threads must be at least 1, not -3"));
  CHECK_FALSE(fs::exists(dir / "x.csv"));

  const auto study = cli_test::run_liembs("study '" + inputs + "/study-free-body.toml' --no-report -q --jobs 100000 --output '" +
                                              (dir / "study").string() + "'",
                                          dir, dir);
  INFO(study.err);
  CHECK(study.status == 0);
  CHECK_THAT(study.err, Contains("liembs study: --jobs 100000 is more than the " + std::to_string(machine)));
  CHECK(fs::exists(dir / "study" / "results.csv"));
}
