#pragma once
// The four representation plugins loaded from the build tree's plugin folder, for tests
// that compare them. The registry is declared first so that it outlives the components
// created from its libraries; `problems` says what is missing, and why (a missing plugin
// is a test failure, never a silent skip).
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/registry.hpp>
#include <liembs/plugin/representation.hpp>

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace liembs::testing {

inline constexpr std::array<const char*, 4> representation_names{"body-fixed", "spatial", "hybrid", "mixed"};

struct RepresentationPlugins {
  Registry registry;
  std::shared_ptr<ConfigDocument> options = ConfigDocument::from_string("", "options");
  std::vector<std::pair<std::string, std::unique_ptr<Representation>>> loaded;
  std::string problems;

  explicit RepresentationPlugins(const std::string& plugin_dir) {
    try {
      registry.append_search_path({{plugin_dir, "build tree", true}});
      registry.load();
    } catch (const std::exception& error) {
      problems = "cannot load the plugins of " + plugin_dir + ": " + error.what();
      return;
    }
    for (const char* name : representation_names) {
      try {
        loaded.emplace_back(name, registry.create<Representation>(name, options->root()));
      } catch (const std::exception& error) {
        problems += std::string(problems.empty() ? "" : "; ") + "representation plugin '" + name +
                    "' is not available from " + plugin_dir + ": " + error.what();
      }
    }
  }
};

}  // namespace liembs::testing
