// Study files: the product of the axes with conditions and exclusions, inline runs, the
// references, and strict schema errors naming file:line:column and key.
#include <catch2/catch.hpp>

#include <liembs/error.hpp>
#include <liembs/study/study_file.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <unistd.h>

using namespace liembs;
using namespace liembs::study;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

fs::path write_study(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("liembs-study-file-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / name;
  std::ofstream(file) << text;
  return file;
}

const std::string free_body_model =
    "[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR "/free-body.toml'\n";

std::string error_of(const std::string& text) {
  try {
    load_study(write_study("broken.toml", text));
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("cases are the product of the axes, with conditions and exclusions", "[study]") {
  const auto file = write_study("product.toml", free_body_model + R"(
[reference]
set = { simulation.step_size = 1e-3 }

[[axes]]
key = "group.name"
values = ["SE3", "SO3xR3"]

[[axes]]
key = "integrator.name"
values = ["rkmk", "ida"]

[[axes]]
key = "integrator.tableau"
values = ["heun", "rk4"]
only = { integrator.name = "rkmk" }

[[axes]]
keys = ["integrator.relative_tolerance", "integrator.absolute_tolerance"]
name = "tolerance"
values = [[1e-6, 1e-8], [1e-8, 1e-10]]
ladder = true
except = { integrator.name = ["rkmk"] }

[[exclude]]
"group.name" = "SO3xR3"
integrator.tableau = "heun"
)");
  const Definition d = load_study(file);
  REQUIRE(d.axes.size() == 4);
  CHECK(d.axes[3].name == "tolerance");
  CHECK(d.axes[3].rungs == std::vector<double>{1e-6, 1e-8});
  const auto cases = expand_cases(d);
  std::vector<std::string> ids;
  for (const auto& item : cases) ids.push_back(item.id);
  CHECK(ids == std::vector<std::string>{
                   "body group.name=SE3 integrator.name=rkmk integrator.tableau=heun",
                   "body group.name=SE3 integrator.name=rkmk integrator.tableau=rk4",
                   "body group.name=SE3 integrator.name=ida tolerance=[1e-06, 1e-08]",
                   "body group.name=SE3 integrator.name=ida tolerance=[1e-08, 1e-10]",
                   "body group.name=SO3xR3 integrator.name=rkmk integrator.tableau=rk4",
                   "body group.name=SO3xR3 integrator.name=ida tolerance=[1e-06, 1e-08]",
                   "body group.name=SO3xR3 integrator.name=ida tolerance=[1e-08, 1e-10]",
                   "body [reference]",
                   "body [reference check]"});
  CHECK(cases[2].overrides == std::vector<std::string>{"group.name=\"SE3\"", "integrator.name=\"ida\"",
                                                       "integrator.relative_tolerance=1e-06",
                                                       "integrator.absolute_tolerance=1e-08"});
  // The reference check doubles the reference's step size.
  auto check = case_document(d, cases.back());
  CHECK(check->root().table("simulation").number("step_size") == Approx(2e-3));
  auto reference = case_document(d, cases[cases.size() - 2]);
  CHECK(reference->root().table("simulation").number("step_size") == Approx(1e-3));
}

TEST_CASE("an inline run reads like a run file, with positions in the study file", "[study]") {
  const auto file = write_study("inline.toml", R"(
[[models]]
name = "inline"
[models.run]
[models.run.model]
[[models.run.model.bodies]]
name = "b"
mass = 1.0
inertia_diagonal = [1.0, 2.0, 2.5]
angular_velocity = [0.0, 1.0, 0.1]
[models.run.group]
name = "SE3"
[models.run.integrator]
name = "rkmk"
[models.run.simulation]
end_time = 0.1
step_size = 0.01
masss = 3
)");
  const Definition d = load_study(file);
  const auto cases = expand_cases(d);
  REQUIRE(cases.size() == 1);
  auto document = case_document(d, cases[0]);
  CHECK(document->root().table("simulation").number("end_time") == Approx(0.1));
  try {
    document->root().table("model");
    document->reject_unused_keys();
    FAIL("the misspelt key was accepted");
  } catch (const ConfigError& error) {
    // The position in the study file, the key path inside the run.
    CHECK_THAT(std::string(error.what()), Contains("inline.toml:18:9: unknown key 'simulation.masss'"));
  }
}

TEST_CASE("study schema errors name the file, line, column and key", "[study][errors]") {
  CHECK_THAT(error_of(free_body_model + "[[axes]]\nkey = \"group.name\"\nvalues = [\"SE3\"]\nladdr = true\n"),
             Contains("broken.toml:7:") && Contains("unknown key 'axes.0.laddr' (did you mean 'ladder'?)"));
  CHECK_THAT(error_of("title = \"x\"\n"), Contains("missing [[models]]"));
  CHECK_THAT(error_of("[[models]]\nname = \"m\"\n"), Contains("missing 'file' (a run file) or an inline run"));
  CHECK_THAT(error_of("[[models]]\nname = \"m\"\nfile = \"nowhere.toml\"\n"),
             Contains("broken.toml:3:8: models.0.file: run file not found"));
  CHECK_THAT(error_of(free_body_model + "[[axes]]\nkey = \"simulation.step_size\"\nvalues = [0.1, \"fine\"]\nladder = true\n"),
             Contains("axes.0.values: a ladder's values must be positive numbers") && Contains("\"fine\""));
  CHECK_THAT(error_of(free_body_model + "[[axes]]\nkey = \"group.name\"\nvalues = []\n"),
             Contains("axes.0.values: an axis needs at least one value"));
  CHECK_THAT(error_of(free_body_model + "[[axes]]\nkey = \"group.name\"\nkeys = [\"a\"]\nvalues = [1]\n"),
             Contains("an axis needs either 'key'"));
  CHECK_THAT(error_of(free_body_model + "[[axes]]\nkeys = [\"a.b\", \"c.d\"]\nvalues = [[1, 2], [3]]\n"),
             Contains("value 1 has 1 elements for 2 keys"));
  CHECK_THAT(error_of(free_body_model + "[[axes]]\nkey = \"group.name\"\nvalues = [\"SE3\"]\n"
                                        "[[exclude]]\ngroup.nam = \"SE3\"\n"),
             Contains("broken.toml:8:") && Contains("exclude.0.group.nam: 'group.nam' is not an axis key or 'model'") &&
                 Contains("did you mean 'group.name'?"));
  CHECK_THAT(error_of(free_body_model + "[[axes]]\nkey = \"integrator.tableau\"\nvalues = [\"rk4\"]\n"
                                        "only = { integrator.name = \"rkmk\" }\n"),
             Contains("'integrator.name' is not an earlier axis's key or 'model'"));
  CHECK_THAT(error_of(free_body_model + "[measure]\norder_error = \"mean\"\n"),
             Contains("measure.order_error: 'mean' is not one of: max, end"));
  CHECK_THAT(error_of(free_body_model + free_body_model), Contains("model 'body' is defined twice"));
  CHECK_THAT(error_of("[[models]\n"), Contains("broken.toml:1:") && Contains("TOML syntax error"));
  // The minimum CPU time of a timed repetition: seconds in [0, 10].
  CHECK_THAT(error_of(free_body_model + "[measure]\nmin_cpu_seconds = -0.5\n"),
             Contains("broken.toml:5:") &&
                 Contains("measure.min_cpu_seconds: value -0.5 is out of range: expected in [0, 10]"));
  CHECK_THAT(error_of(free_body_model + "[measure]\nmin_cpu_seconds = 3600\n"),
             Contains("measure.min_cpu_seconds: value 3600 is out of range"));
  CHECK_THAT(error_of(free_body_model + "[measure]\nmin_cpu_seconds = \"fast\"\n"),
             Contains("measure.min_cpu_seconds: expected a number, found"));
  CHECK_THAT(error_of(free_body_model + "[measure]\nrepetitions = 0\n"),
             Contains("broken.toml:5:") && Contains("measure.repetitions: value 0 is out of range"));
  // An algorithm study reads the same keys in [timing], with the same checks.
  const std::string algorithms = "kind = \"algorithms\"\n" + free_body_model;
  CHECK_THAT(error_of(algorithms + "[timing]\nmin_cpu_seconds = -0.5\n"),
             Contains("broken.toml:6:") &&
                 Contains("timing.min_cpu_seconds: value -0.5 is out of range: expected in [0, 10]"));
  CHECK_THAT(error_of(algorithms + "[timing]\nrepetitions = 1001\n"),
             Contains("timing.repetitions: value 1001 is out of range"));
  CHECK_THAT(error_of(algorithms + "[timing]\nmin_cpu_second = 0.1\n"),
             Contains("unknown key 'timing.min_cpu_second'") && Contains("did you mean 'min_cpu_seconds'?"));
  CHECK_THAT(error_of(algorithms + "[measure]\nmin_cpu_seconds = 0.1\n"),
             Contains("'measure' is for simulation studies"));
}

TEST_CASE("repetitions and min_cpu_seconds: the declared defaults, or the file's values, in either kind of study",
          "[study]") {
  const CpuTimeSettings defaults;
  CHECK(defaults.min_cpu_seconds > 0);  // fast cases are run more than once by default
  CHECK(defaults.repetitions >= 2);     // with a spread, on more than one CPU with --jobs 1
  const std::string algorithms = "kind = \"algorithms\"\n" + free_body_model;
  for (const auto& [text, table] : {std::pair{free_body_model, "[measure]"}, {algorithms, "[timing]"}}) {
    INFO(table);
    const Definition plain = load_study(write_study("default.toml", text));
    CHECK(plain.cpu_time.min_cpu_seconds == defaults.min_cpu_seconds);
    CHECK(plain.cpu_time.repetitions == defaults.repetitions);
    const Definition zero = load_study(write_study("given.toml", text + table + "\nmin_cpu_seconds = 0\n"));
    CHECK(zero.cpu_time.min_cpu_seconds == 0.0);
    CHECK(zero.cpu_time.repetitions == defaults.repetitions);
    const Definition given =
        load_study(write_study("given.toml", text + table + "\nmin_cpu_seconds = 0.25\nrepetitions = 7\n"));
    CHECK(given.cpu_time.min_cpu_seconds == 0.25);
    CHECK(given.cpu_time.repetitions == 7);
  }
}

TEST_CASE("the defaults docs/studies.md states for [measure] and [timing] are the declared ones", "[study][docs]") {
  // The page's example blocks: "[measure]" lines say "(default X", the "[timing]" block lists
  // the defaults themselves. Each must be the value of a default-constructed Measure, Timing or
  // CpuTimeSettings (repetitions and min_cpu_seconds, in both tables).
  std::ifstream page(std::string(LIEMBS_SOURCE_DIR) + "/docs/studies.md");
  REQUIRE(page);
  const Measure measure;
  const Timing timing;
  const CpuTimeSettings cpu_time;
  const std::map<std::string, double> measure_defaults{
      {"ladder_extensions", static_cast<double>(measure.ladder_extensions)},
      {"repetitions", static_cast<double>(cpu_time.repetitions)},
      {"min_cpu_seconds", cpu_time.min_cpu_seconds},
      {"per_body", measure.per_body ? 1.0 : 0.0}};
  const std::map<std::string, double> timing_defaults{
      {"states", static_cast<double>(timing.states)}, {"repetitions", static_cast<double>(cpu_time.repetitions)},
      {"min_cpu_seconds", cpu_time.min_cpu_seconds}, {"warmup", static_cast<double>(timing.warmup)},
      {"seed", static_cast<double>(timing.seed)}, {"tolerance", timing.tolerance}};
  const auto number = [](const std::string& text) { return text == "true" ? 1.0 : text == "false" ? 0.0 : std::stod(text); };
  const std::regex measure_line(R"(^(\w+) = .*#.*\(default ([-+0-9.e]+|true|false)\b)");
  const std::regex timing_line(R"(^(\w+) = ([-+0-9.e]+)\s*(#.*)?$)");
  std::set<std::string> measure_seen, timing_seen;
  std::string block;
  for (std::string line; std::getline(page, line);) {
    if (line.rfind("```", 0) == 0) block.clear();
    else if (line.rfind("[measure]", 0) == 0) block = "measure";
    else if (line.rfind("[timing]", 0) == 0) block = "timing";
    else if (line.rfind("[", 0) == 0) block.clear();
    std::smatch match;
    if (block == "measure" && std::regex_search(line, match, measure_line)) {
      INFO(line);
      REQUIRE(measure_defaults.count(match[1]));
      CHECK(number(match[2]) == Approx(measure_defaults.at(match[1])));
      measure_seen.insert(match[1]);
    } else if (block == "timing" && std::regex_search(line, match, timing_line)) {
      INFO(line);
      REQUIRE(timing_defaults.count(match[1]));
      CHECK(number(match[2]) == Approx(timing_defaults.at(match[1])));
      timing_seen.insert(match[1]);
    }
  }
  // The page states every one of them (a reworded line would otherwise drop out unnoticed).
  CHECK(measure_seen == std::set<std::string>{"ladder_extensions", "min_cpu_seconds", "per_body", "repetitions"});
  CHECK(timing_seen ==
        std::set<std::string>{"min_cpu_seconds", "repetitions", "seed", "states", "tolerance", "warmup"});
}
