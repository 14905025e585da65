// Plugin registry: discovery, ABI check, lookup with suggestions, every error path.
#include "../support/cli_process.hpp"
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/util/warning.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {
std::string broken(const std::string& name) { return std::string(LIEMBS_TEST_BROKEN_PLUGIN_DIR) + "/" + name; }
std::shared_ptr<ConfigDocument> empty_options() { return ConfigDocument::from_string("", "options"); }
}  // namespace

TEST_CASE("the built-in plugins are found with kind, version, summary and file", "[registry]") {
  auto registry = testing::build_tree_registry();
  for (const auto& [kind, name] : std::vector<std::pair<Kind, std::string>>{
           {Kind::group, "SE3"}, {Kind::group, "SO3xR3"}, {Kind::integrator, "rkmk"}, {Kind::algorithm, "newton-euler"}}) {
    const ComponentInfo& info = registry->find(kind, name);
    CHECK(info.kind == kind);
    CHECK(!info.version.empty());
    CHECK(!info.summary.empty());
    CHECK_THAT(info.library, Contains("liembs-"));
  }
  auto group = registry->create<Group>("SE3", empty_options()->root());
  REQUIRE(group);
  const BodyCoordinates coordinates = group->body_coordinates();
  CHECK(coordinates.velocity == 6);
  CHECK(coordinates.chart == 0);
  CHECK(coordinates.internal_constraints == 0);
}

TEST_CASE("an unknown name lists the available names and the nearest match", "[registry]") {
  auto registry = testing::build_tree_registry();
  CHECK_THROWS_WITH(registry->find(Kind::group, "se3"),
                    Contains("unknown group 'se3'") && Contains("available: euler-angles, euler-parameters, SE3, SO3xR3, rotation-matrix") &&
                        Contains("did you mean 'SE3'?"));
  CHECK_THROWS_AS(registry->find(Kind::integrator, "rk45"), PluginError);
}

TEST_CASE("fingerprints are compared item by item", "[registry]") {
  CHECK(Registry::compare_fingerprints(abi::fingerprint, abi::fingerprint).empty());
  CHECK_THAT(Registry::compare_fingerprints("liembs=0.1;cxx_standard=202002", "liembs=0.1;cxx_standard=201703"),
             Contains("'cxx_standard'") && Contains("plugin built with 201703") && Contains("this liembs with 202002"));
  CHECK_THAT(Registry::compare_fingerprints("liembs=0.1", "liembs=0.1;extra=1"), Contains("'extra'"));
  CHECK_THAT(Registry::compare_fingerprints("liembs=0.1;isa=avx", "liembs=0.1"), Contains("(absent)"));
}

TEST_CASE("a plugin built with another Eigen alignment is refused before registration", "[registry]") {
  Registry registry;
  registry.append_search_path({{broken("abi-mismatch"), "test", true}});
  CHECK_THROWS_WITH(registry.load(), Contains("liembs-abi-mismatch.so") &&
                                         Contains("ABI mismatch in 'eigen_max_align_bytes'") &&
                                         Contains("plugin built with 0"));
  CHECK(registry.components().empty());
}

TEST_CASE("a plugin built for the previous minor version (the old plugin contract) is refused", "[registry]") {
  Registry registry;
  registry.append_search_path({{broken("old-abi"), "test", true}});
  const std::string previous = std::to_string(LIEMBS_VERSION_MAJOR) + "." + std::to_string(LIEMBS_VERSION_MINOR - 1);
  CHECK_THROWS_WITH(registry.load(), Contains("liembs-old-abi.so") && Contains("ABI mismatch in 'liembs'") &&
                                         Contains("plugin built for LieMBS " + previous) &&
                                         Contains("this liembs is " LIEMBS_VERSION_ABI) &&
                                         Contains("docs/plugins.md") && Contains("rebuild the plugin"));
  CHECK(registry.components().empty());
}

TEST_CASE("a plugin built for another instruction set (LIEMBS_ARCH, -march) is refused", "[registry]") {
  Registry registry;
  registry.append_search_path({{broken("isa-mismatch"), "test", true}});
  CHECK_THROWS_WITH(registry.load(), Contains("liembs-isa-mismatch.so") && Contains("ABI mismatch in 'isa'") &&
                                         Contains("this liembs with " LIEMBS_ABI_ISA));
  CHECK(registry.components().empty());
  CHECK_THAT(Registry::compare_fingerprints("isa=x86-64;eigen_max_align_bytes=16", "isa=x86-64+avx;eigen_max_align_bytes=32"),
             Contains("'isa'") && Contains("'eigen_max_align_bytes'"));
}

TEST_CASE("missing entry symbol, non-library file and missing path are errors naming the file", "[registry]") {
  Registry missing_entry;
  missing_entry.append_search_path({{broken("missing-entry"), "test", true}});
  CHECK_THROWS_WITH(missing_entry.load(), Contains("liembs-missing-entry.so") &&
                                              Contains("entry symbol 'liembs_plugin_register' is missing"));
  Registry not_library;
  not_library.append_search_path({{broken("not-a-library"), "test", true}});
  CHECK_THROWS_WITH(not_library.load(), Contains("liembs-not-a-library.so") && Contains("cannot load"));
  Registry absent;
  absent.append_search_path({{"/nonexistent/plugins", "the test", true}});
  CHECK_THROWS_WITH(absent.load(), Contains("not found: /nonexistent/plugins") && Contains("from the test"));
  Registry optional_absent;
  optional_absent.append_search_path({{"/nonexistent/plugins", "the test", false}});
  CHECK_NOTHROW(optional_absent.load());
}

TEST_CASE("an exception in a factory becomes a PluginError naming the component", "[registry]") {
  Registry registry;
  registry.append_search_path({{broken("throwing-factory"), "test", true}});
  registry.load();
  CHECK_THROWS_WITH(registry.create<Integrator>("throwing", empty_options()->root()),
                    Contains("creating integrator 'throwing'") && Contains("liembs-throwing-factory.so") &&
                        Contains("deliberate failure in the factory"));
}

TEST_CASE("earlier search-path entries shadow later ones, with a warning naming both files", "[registry]") {
  // A copy of one plugin in a folder of its own, searched first: the copy wins.
  const auto folder = cli_test::scratch_folder("liembs-test-registry", "shadowed-plugin");
  const auto original = std::filesystem::path(LIEMBS_TEST_PLUGIN_DIR) / "liembs-group-se3.so";
  const auto copy = folder / "liembs-group-se3.so";
  std::filesystem::copy_file(original, copy, std::filesystem::copy_options::overwrite_existing);
  Registry registry;
  registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "built-in", true, SearchTier::program}});
  registry.append_search_path({{copy, "--plugin-path", true, SearchTier::command_line}});
  CapturedWarnings warnings;
  registry.load();
  CHECK(registry.names(Kind::group).size() == 5);  // SE3, SO3xR3 (also rotation-matrix), rp, re
  CHECK(registry.find(Kind::group, "SE3").library == copy.string());
  REQUIRE(registry.shadowed().size() == 1);
  CHECK(registry.shadowed()[0].library == original.string());
  REQUIRE(warnings.messages().size() == 1);
  const std::string message = warnings.messages()[0];
  CHECK_THAT(message, Contains("group 'SE3'") && Contains(copy.string()) && Contains(original.string()) &&
                          Contains("using " + copy.string()));
}

TEST_CASE("a plugin file reached twice on the search path is loaded once, without a shadowing warning", "[registry]") {
  // The built-in folder named again by another spelling and through a symlink: the same files.
  const auto folder = cli_test::scratch_folder("liembs-test-registry", "same-folder-twice");
  const auto link = folder / "plugins";
  std::filesystem::create_directory_symlink(LIEMBS_TEST_PLUGIN_DIR, link);
  Registry registry;
  registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "built-in", true, SearchTier::program}});
  registry.prepend_search_path({{std::string(LIEMBS_TEST_PLUGIN_DIR) + "/.", "--plugin-path", true, SearchTier::command_line},
                                {link, "--plugin-path", true, SearchTier::command_line}});
  CapturedWarnings warnings;
  registry.load();
  CHECK(warnings.messages().empty());
  CHECK(registry.shadowed().empty());
  CHECK(registry.names(Kind::group).size() == 5);
  // Loaded from its first place on the search path.
  CHECK(registry.find(Kind::group, "SE3").library == (std::filesystem::path(std::string(LIEMBS_TEST_PLUGIN_DIR) + "/.") /
                                                      "liembs-group-se3.so").string());
}

TEST_CASE("search-path entries are kept in the documented order whatever order they are added in", "[registry]") {
  Registry registry;
  registry.append_search_path({{"/install", "install prefix", false, SearchTier::install},
                               {"/program", "next to the program", false, SearchTier::program}});
  registry.append_search_path({{"/environment", "LIEMBS_PLUGIN_PATH", true, SearchTier::environment}});
  registry.prepend_search_path({{"/command-line", "--plugin-path", true, SearchTier::command_line}});
  // [plugins] paths of a run file are added after the command line's: they must not shadow it
  registry.prepend_search_path({{"/run-file/a", "[plugins] paths", true, SearchTier::run_file},
                                {"/run-file/b", "[plugins] paths", true, SearchTier::run_file}});
  std::vector<std::string> order;
  for (const auto& entry : registry.search_path()) order.push_back(entry.path.string());
  CHECK(order == std::vector<std::string>{"/command-line", "/run-file/a", "/run-file/b", "/environment", "/program",
                                          "/install"});
}

TEST_CASE("the search order is one sentence, the same in --help and docs/plugins.md", "[registry][docs]") {
  const std::string sentence = search_order_text();
  std::ifstream page(std::string(LIEMBS_SOURCE_DIR) + "/docs/plugins.md");
  REQUIRE(page);
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Contains("**Search path**, in order: " + sentence + "."));
  const auto io = cli_test::scratch_folder("liembs-test-registry", "help");
  const auto help = cli_test::run_liembs("--help", io);
  CHECK(help.status == 0);
  CHECK_THAT(help.out, Contains("Plugin search path, in order: " + sentence + "."));
}

TEST_CASE("LIEMBS_PLUGIN_PATH: its entries, in order and required, head the default search path", "[registry]") {
  const char* saved = std::getenv("LIEMBS_PLUGIN_PATH");
  const std::string previous = saved ? saved : "";
  ::setenv("LIEMBS_PLUGIN_PATH", "/first/plugins::/second/one.so:", 1);
  const auto environment = Registry::environment_search_path();
  REQUIRE(environment.size() == 2);  // empty items are skipped
  CHECK(environment[0].path == "/first/plugins");
  CHECK(environment[1].path == "/second/one.so");
  for (const auto& entry : environment) {
    CHECK(entry.origin == "LIEMBS_PLUGIN_PATH");
    CHECK(entry.required);
  }
  const auto defaults = Registry::default_search_path();
  REQUIRE(defaults.size() > 2);
  CHECK(defaults[0].path == environment[0].path);
  CHECK(defaults[1].path == environment[1].path);
  CHECK(defaults[2].origin != "LIEMBS_PLUGIN_PATH");
  ::unsetenv("LIEMBS_PLUGIN_PATH");
  CHECK(Registry::environment_search_path().empty());
  if (saved) ::setenv("LIEMBS_PLUGIN_PATH", previous.c_str(), 1);
}
