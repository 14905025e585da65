#pragma once
// The four representation plugins loaded from the build tree's plugin folder, for tests
// that compare them. The registry is declared first so that it outlives the components
// created from its libraries; `problems` says what is missing, and why (a missing plugin
// is a test failure, never a silent skip).
#include <liembs/config/config_table.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/plugin/representation.hpp>

#include <Eigen/Core>

#include <algorithm>
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

#ifdef LIEMBS_TEST_PLUGIN_DIR
// The build tree's representation plugins, loaded once per test program.
inline const RepresentationPlugins& build_tree_representations() {
  static const RepresentationPlugins loaded(LIEMBS_TEST_PLUGIN_DIR);
  return loaded;
}
#endif

// Largest entry of |a - b| relative to max(1, largest |b|); 1e300 when the shapes differ.
inline double relative_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return 1e300;
  if (a.size() == 0) return 0.0;
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

}  // namespace liembs::testing

// Fails the test unless all four representation plugins loaded (a missing one is never skipped).
#define REQUIRE_BUILD_TREE_REPRESENTATIONS()                                                                   \
  do {                                                                                                  \
    if (!liembs::testing::build_tree_representations().problems.empty())                                \
      FAIL(liembs::testing::build_tree_representations().problems);                                     \
    REQUIRE(liembs::testing::build_tree_representations().loaded.size() ==                              \
            liembs::testing::representation_names.size());                                              \
  } while (false)
