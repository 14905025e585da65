// The same motion from every configuration parameterization: SE3, SO3xR3, euler-parameters
// (rp) and euler-angles (re) on the free spinning body, the heavy top, the spherical double
// pendulum and the closed spherical three-bar of configs/paper-002, with rkmk (RK4),
// generalized-alpha and ida; the rp normalization held by its constraint, and re runs
// through sin(theta) = 0 that switch charts.
#include "../test_support.hpp"
#include "parameterized_motion.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

using testing::Motion;

Motion run_file(const std::string& config, const std::vector<std::string>& overrides) {
  // The examples name rkmk's tableau: other integrators get the file without that line.
  const std::string path = std::string(LIEMBS_SOURCE_DIR) + "/configs/" + config;
  std::ifstream file(path);
  std::string text, line;
  const bool rkmk = std::find(overrides.begin(), overrides.end(), "integrator.name=generalized-alpha") == overrides.end() &&
                    std::find(overrides.begin(), overrides.end(), "integrator.name=ida") == overrides.end();
  while (std::getline(file, line))
    if (rkmk || line.rfind("tableau", 0) != 0) text += line + "\n";
  return testing::run_to_end(ConfigDocument::from_string(text, path), overrides);
}

double distance(const Motion& a, const Motion& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.poses.size(); ++i)
    d = std::max({d, (a.poses[i].R - b.poses[i].R).norm(), (a.poses[i].r - b.poses[i].r).norm()});
  return d;
}

const std::vector<std::string> parameterizations{"SE3", "SO3xR3", "euler-parameters", "euler-angles"};

struct Case {
  const char* config;
  double end_time, rkmk_step, alpha_step, rkmk_tolerance, alpha_tolerance, ida_tolerance;
};

// End times and steps keep the suite short; tolerances are the integrators' errors at these
// settings (measured against the SE3 RK4 reference at a tenth of the step) with a margin.
const std::vector<Case> cases{
    {"examples/spinning-body.toml", 1.0, 1e-3, 2e-4, 1e-9, 2e-5, 2e-6},
    {"paper-002/heavy-top.toml", 0.3, 2.5e-4, 2e-5, 2e-6, 2e-4, 2e-5},
    {"paper-002/spherical-double-pendulum.toml", 0.3, 2.5e-4, 2e-5, 1e-6, 1e-3, 2e-5},
    {"paper-002/spherical-three-bar.toml", 0.5, 1e-3, 2e-4, 1e-8, 1e-4, 2e-6},
};

std::vector<std::string> settings(const Case& c, const std::string& group, const std::string& integrator,
                                   double step) {
  std::vector<std::string> out{"group.name=" + group, "simulation.end_time=" + std::to_string(c.end_time),
                               "simulation.step_size=" + std::to_string(step), "integrator.name=" + integrator};
  if (integrator == "ida") out.push_back("integrator.relative_tolerance=1e-9");
  if (integrator == "ida") out.push_back("integrator.absolute_tolerance=1e-11");
  return out;
}

}  // namespace

TEST_CASE("the same motion on SE3, SO3xR3, euler-parameters and euler-angles with rkmk, generalized-alpha and ida",
          "[parameterizations][runs][heavy]") {
  for (const Case& c : cases) {
    const Motion reference = run_file(c.config, settings(c, "SE3", "rkmk", c.rkmk_step / 10));
    for (const auto& group : parameterizations) {
      INFO(c.config << " on " << group);
      const Motion rkmk = run_file(c.config, settings(c, group, "rkmk", c.rkmk_step));
      CHECK(distance(rkmk, reference) < c.rkmk_tolerance);
      const Motion alpha = run_file(c.config, settings(c, group, "generalized-alpha", c.alpha_step));
      CHECK(distance(alpha, reference) < c.alpha_tolerance);
      const Motion ida = run_file(c.config, settings(c, group, "ida", c.end_time / 10));
      CHECK(distance(ida, reference) < c.ida_tolerance);
      if (group == "euler-parameters") {
        // The normalization is a constraint of the DAE integrators: held to their tolerance.
        CHECK(alpha.summary.normalization_error_max < 1e-9);
        CHECK(ida.summary.normalization_error_max < 1e-8);  // IDA's Newton test at rtol 1e-9
      }
    }
  }
}

TEST_CASE("euler-parameters: p^T p = 1 held by its constraint, drifting without it", "[parameterizations][rp]") {
  const std::vector<std::string> top{"group.name=euler-parameters", "simulation.end_time=1.0",
                                     "simulation.step_size=1e-3"};
  // rkmk integrates the index-1 form: the normalization drifts like any position constraint...
  const Motion free = run_file("paper-002/heavy-top.toml", top);
  CHECK(free.summary.normalization_error_max > 1e-12);
  // ...and is held to round-off when the state is projected onto the constraints.
  auto projected_settings = top;
  projected_settings.push_back("integrator.projection=true");
  const Motion projected = run_file("paper-002/heavy-top.toml", projected_settings);
  CHECK(projected.summary.normalization_error_max < 1e-12);
  CHECK(projected.summary.normalization_error_max < 1e-3 * free.summary.normalization_error_max);
  const auto names = projected.summary.constraint_names;
  CHECK(std::find(names.begin(), names.end(), "top.normalization") != names.end());
}

TEST_CASE("euler-angles: runs through sin(theta) = 0 switch charts and agree with SE3", "[parameterizations][re][heavy]") {
  // The heavy top starts at R = 1 (theta = 0 in the identity chart) and spins at up to 70 rad/s.
  const std::vector<std::string> common{"simulation.end_time=0.5"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), common.begin(), common.end());
    return extra;
  };
  const Motion reference = run_file("paper-002/heavy-top.toml", with({"simulation.step_size=2.5e-5"}));
  const Motion rkmk =
      run_file("paper-002/heavy-top.toml", with({"group.name=euler-angles", "simulation.step_size=2.5e-4"}));
  CHECK(rkmk.summary.chart_switches >= 2);
  CHECK(distance(rkmk, reference) < 5e-6);
  const Motion alpha = run_file("paper-002/heavy-top.toml",
                                with({"group.name=euler-angles", "integrator.name=generalized-alpha",
                                      "simulation.step_size=2e-5"}));
  CHECK(alpha.summary.chart_switches >= 2);
  CHECK(distance(alpha, reference) < 2e-4);
  const Motion ida = run_file("paper-002/heavy-top.toml",
                              with({"group.name=euler-angles", "integrator.name=ida", "simulation.step_size=0.05",
                                    "integrator.relative_tolerance=1e-9", "integrator.absolute_tolerance=1e-11"}));
  CHECK(ida.summary.chart_switches + ida.statistics.at("chart_switches") >= 2);
  CHECK(distance(ida, reference) < 2e-5);
}

TEST_CASE("trajectory.csv of an rp run has the normalization error and the normalization blocks",
          "[parameterizations][outputs]") {
  const auto folder = std::filesystem::temp_directory_path() / ("liembs-rp-" + std::to_string(::getpid()));
  Registry registry;
  registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-002/heavy-top.toml");
  document->set_override("group.name=euler-parameters");
  document->set_override("simulation.end_time=0.01");
  Run run = load_run(document, registry);
  RunOutput output;
  output.directory = folder;
  execute_run(run, output);
  std::ifstream csv(folder / "trajectory.csv");
  std::string header;
  std::getline(csv, header);
  CHECK_THAT(header, Contains(",orthogonality_error,normalization_error,violation.pivot,violation.top.normalization"));
  std::ifstream summary(folder / "summary.json");
  const std::string json((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
  CHECK_THAT(json, Contains("\"normalization_error_max\"") && Contains("\"top.normalization\""));
  std::filesystem::remove_all(folder);
}

TEST_CASE("a floating base in every parameterization: the tree algorithms map through T", "[parameterizations][tree]") {
  auto settings_for = [](const std::string& group, const std::string& integrator, double step) {
    return std::vector<std::string>{"group.name=" + group, "integrator.name=" + integrator,
                                    "simulation.end_time=0.5", "simulation.step_size=" + std::to_string(step)};
  };
  const Motion reference = run_file("examples/floating-arm.toml", settings_for("SE3", "rkmk", 1e-4));
  for (const auto& group : parameterizations) {
    INFO("floating arm on " << group);
    CHECK(distance(run_file("examples/floating-arm.toml", settings_for(group, "rkmk", 1e-3)), reference) < 1e-8);
    const Motion alpha = run_file("examples/floating-arm.toml", settings_for(group, "generalized-alpha", 1e-3));
    CHECK(distance(alpha, reference) < 1e-3);
    if (group == "euler-parameters") CHECK(alpha.summary.normalization_error_max < 1e-9);
  }
}
