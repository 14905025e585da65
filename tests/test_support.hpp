#pragma once
// Helpers shared by the test programs: a registry on the build tree's plugin folder and
// runs assembled from TOML text or the files in tests/data.
#include <liembs/config/config_table.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>

#include <memory>
#include <string>
#include <vector>

namespace liembs::testing {

inline std::unique_ptr<Registry> build_tree_registry() {
  auto registry = std::make_unique<Registry>();
  registry->append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  registry->load();
  return registry;
}

// A file in tests/data, or `name` itself when it is an absolute path (a test's scratch file).
inline std::string data_file(const std::string& name) {
  return !name.empty() && name.front() == '/' ? name : std::string(LIEMBS_TEST_DATA_DIR) + "/" + name;
}

// A run of a file in tests/data with "key=value" overrides applied. The registry must
// outlive the run (the components' code lives in the plugin libraries).
struct LoadedRun {
  std::unique_ptr<Registry> registry;
  Run run;
};

inline LoadedRun load_test_run(const std::string& file, const std::vector<std::string>& overrides = {}) {
  auto registry = std::make_unique<Registry>();
  registry->append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  auto document = ConfigDocument::load(data_file(file));
  for (const auto& assignment : overrides) document->set_override(assignment);
  Run run = load_run(document, *registry);
  return {std::move(registry), std::move(run)};
}

inline RunSummary simulate(const std::string& file, const std::vector<std::string>& overrides = {}) {
  LoadedRun loaded = load_test_run(file, overrides);
  return execute_run(loaded.run, RunOutput{});
}

}  // namespace liembs::testing
