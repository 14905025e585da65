// Plugin options declared once (issue 32 item 4; liembs/plugin/options.hpp): `liembs plugins
// --options` prints each built-in plugin's declaration, docs/plugin-options.md is that
// declaration, the host refuses an undeclared key naming the plugin and its options, and the
// default a plugin applies is the declared one (a run with every declared default written out
// is the run without them, bit for bit).
#include "../support/cli_process.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/options.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

using Result = cli_test::CliResult;

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-plugin-options-test", name); }

Result run_cli(const std::string& arguments) { return cli_test::run_liembs(arguments, scratch("io")); }

const fs::path free_body = fs::path(LIEMBS_SOURCE_DIR) / "tests" / "data" / "free-body.toml";

std::string docs_section() {
  const std::string text = cli_test::read_file(fs::path(LIEMBS_SOURCE_DIR) / "docs" / "plugin-options.md");
  const std::string open = "<!-- plugin-options -->\n", close = "<!-- /plugin-options -->";
  const auto begin = text.find(open), end = text.find(close);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  return text.substr(begin + open.size(), end - begin - open.size());
}

nlohmann::json declaration(const std::string& name) {
  const Result result = run_cli("plugins --options " + name + " --json");
  INFO(result.err);
  REQUIRE(result.status == 0);
  return nlohmann::json::parse(result.out);
}

// A copy of free-body.toml with `extra` appended to its [integrator] table.
fs::path free_body_with(const std::string& name, const std::string& integrator_lines) {
  std::string text = cli_test::read_file(free_body);
  const std::string marker = "name = \"rkmk\"";
  const auto at = text.find(marker);
  REQUIRE(at != std::string::npos);
  text.replace(at, marker.size(), integrator_lines);
  const fs::path file = scratch(name) / "free-body.toml";
  std::ofstream(file) << text;
  return file;
}

}  // namespace

TEST_CASE("every built-in plugin declares its options, and docs/plugin-options.md is that declaration",
          "[plugins][options][docs]") {
  const Result all = run_cli("plugins --options");
  INFO(all.err);
  REQUIRE(all.status == 0);
  CHECK_THAT(all.out, !Contains("declares no options table"));
  for (const char* name : {"rkmk", "bdf", "generalized-alpha", "ida", "kinematics", "SE3", "euler-angles", "aba",
                           "newton-euler", "higher-order-aba", "hybrid-dynamics", "spatial"})
    CHECK_THAT(all.out, Contains(std::string("'").append(name).append("'")));
  const Result markdown = run_cli("plugins --options --markdown");
  REQUIRE(markdown.status == 0);
  INFO("docs/plugin-options.md: paste build/bin/liembs plugins --options --markdown between the markers");
  CHECK(docs_section() == markdown.out);
}

TEST_CASE("liembs plugins --options NAME prints key, type, default, admissible values and description",
          "[plugins][options]") {
  const nlohmann::json alpha = declaration("generalized-alpha");
  CHECK(alpha["kind"] == "integrator");
  CHECK(alpha["options_declared"] == true);
  bool found = false;
  for (const auto& option : alpha["options"])
    if (option["key"] == "rho_infinity") {
      found = true;
      CHECK(option["type"] == "number");
      CHECK(option["default"] == "0.9");
      CHECK(option["range"] == "in [0, 1]");
      CHECK(!option["description"].get<std::string>().empty());
    }
  CHECK(found);
  // The options every implicit integrator shares are declared once and listed by each.
  for (const char* name : {"bdf", "generalized-alpha", "ida"}) {
    std::set<std::string> keys;
    const nlohmann::json declared = declaration(name);
    for (const auto& option : declared["options"]) keys.insert(option["key"].get<std::string>());
    CHECK(keys.count("newton_derivatives") == 1);
    CHECK(keys.count("linear_solver") == 1);
    CHECK(keys.count("unconstrained_form") == 1);
  }
  CHECK(declaration("SE3")["options"].empty());

  const Result text = run_cli("plugins --options bdf");
  REQUIRE(text.status == 0);
  CHECK_THAT(text.out, Contains("newton_matrix") && Contains("\"quasi-newton\", \"quasi-newton-reused\" or \"full\""));

  const Result unknown = run_cli("plugins --options generalised-alpha");
  CHECK(unknown.status == 3);
  CHECK_THAT(unknown.err, Contains("no component named 'generalised-alpha'") && Contains("did you mean 'generalized-alpha'"));
  const Result json_of_all = run_cli("plugins --options --json");
  CHECK(json_of_all.status == 2);
  CHECK_THAT(json_of_all.err, Contains("--options NAME"));
}

TEST_CASE("a key the plugin does not declare is refused, naming the plugin, the nearest option and the list",
          "[plugins][options][errors]") {
  const fs::path file = free_body_with("typo", "name = \"generalized-alpha\"\nrho_infinty = 0.5");
  const Result result = run_cli("run " + cli_test::single_quoted(file) + " --quiet --output " +
                               cli_test::single_quoted(scratch("typo-out") / "out"));
  CHECK(result.status == 2);
  CHECK_THAT(result.err, Contains(file.string() + ":") && Contains("unknown key 'integrator.rho_infinty'") &&
                             Contains("integrator 'generalized-alpha' has no option 'rho_infinty'") &&
                             Contains("did you mean 'rho_infinity'") && Contains("liembs plugins --options generalized-alpha"));
  CHECK(!fs::exists(scratch("typo-out") / "out" / "summary.json"));

  // A plugin without options refuses every key.
  const Result group = run_cli("run " + cli_test::single_quoted(free_body) + " --set group.tolerance=1 --quiet --output " +
                              cli_test::single_quoted(scratch("group-out") / "out"));
  CHECK(group.status == 2);
  CHECK_THAT(group.err, Contains("unknown key 'group.tolerance'") && Contains("group 'SE3' has no option 'tolerance', it has no options"));

  // The declared range is the one applied.
  const fs::path range = free_body_with("range", "name = \"generalized-alpha\"\nrho_infinity = 1.5");
  const Result out_of_range = run_cli("run " + cli_test::single_quoted(range) + " --quiet --output " +
                                     cli_test::single_quoted(scratch("range-out") / "out"));
  CHECK(out_of_range.status == 2);
  CHECK_THAT(out_of_range.err, Contains("integrator.rho_infinity") && Contains("in [0, 1]"));
}

TEST_CASE("the default a plugin applies is its declared default: writing every default out changes nothing",
          "[plugins][options]") {
  // free-body.toml under each integrator that can run it (kinematics needs drivers), and the
  // euler-angles group: the trajectory without options against the one with every declared
  // default written into the file, compared as text (17 digits).
  struct Case {
    std::string name, table, extra;
  };
  const std::vector<Case> cases{{"rkmk", "integrator", ""},
                                {"bdf", "integrator", ""},
                                {"generalized-alpha", "integrator", ""},
                                {"ida", "integrator", ""},
                                {"euler-angles", "group", ""}};
  for (const Case& c : cases) {
    INFO(c.table << " " << c.name);
    std::string defaults;
    int written = 0;
    const nlohmann::json declared = declaration(c.name);
    for (const auto& option : declared["options"])
      if (!option["default"].is_null()) {
        defaults.append("\n").append(option["key"].get<std::string>()).append(" = ").append(option["default"].get<std::string>());
        ++written;
      }
    CHECK(written > 0);
    const std::string integrator = c.table == "integrator" ? "name = \"" + c.name + "\"" : "name = \"rkmk\"";
    const fs::path plain = free_body_with(c.name + "-plain", integrator);
    fs::path explicit_file;
    if (c.table == "integrator") {
      explicit_file = free_body_with(c.name + "-explicit", integrator + defaults);
    } else {
      explicit_file = free_body_with(c.name + "-explicit", integrator);
      std::string text = cli_test::read_file(explicit_file);
      const std::string marker = "[group]\nname = \"SE3\"";
      const auto at = text.find(marker);
      REQUIRE(at != std::string::npos);
      text.replace(at, marker.size(), "[group]\nname = \"" + c.name + "\"" + defaults);
      std::ofstream(explicit_file) << text;
    }
    const std::string group = c.table == "group" ? " --set group.name=" + c.name : "";
    const fs::path out_plain = scratch(c.name + "-out-plain") / "out", out_explicit = scratch(c.name + "-out-explicit") / "out";
    const std::string end = " --set simulation.end_time=0.2 --quiet --output ";
    const Result a = run_cli("run " + cli_test::single_quoted(plain) + group + end + cli_test::single_quoted(out_plain));
    const Result b = run_cli("run " + cli_test::single_quoted(explicit_file) + end + cli_test::single_quoted(out_explicit));
    INFO(a.err << b.err);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    CHECK(cli_test::read_file(out_plain / "trajectory.csv") == cli_test::read_file(out_explicit / "trajectory.csv"));
  }
}

TEST_CASE("a plugin reading an option it did not declare is a bug found at once", "[plugins][options]") {
  using namespace liembs;
  const OptionDeclaration declared{OptionSpec::number("tolerance", 1e-10, Range::positive(), "a tolerance")};
  auto document = ConfigDocument::from_string("tolerance = 1e-8\nother = 2\n", "options.toml");
  const ConfigTable table = document->root();
  CHECK(declared.number(table, "tolerance") == 1e-8);
  CHECK_THROWS_AS(declared.number(table, "other"), std::logic_error);      // undeclared
  CHECK_THROWS_AS(declared.integer(table, "tolerance"), std::logic_error);  // declared as a number
  // A default outside its own range, or not among the choices, is refused where it is declared.
  CHECK_THROWS_AS(OptionSpec::number("x", -1.0, Range::positive(), ""), std::logic_error);
  CHECK_THROWS_AS(OptionSpec::choice("x", {"a", "b"}, "c", ""), std::logic_error);
  // Absent: the declared default; present and outside the range: the ConfigError names the key.
  auto empty = ConfigDocument::from_string("", "empty.toml");
  CHECK(declared.number(empty->root(), "tolerance") == 1e-10);
  auto bad = ConfigDocument::from_string("tolerance = -1\n", "bad.toml");
  CHECK_THROWS_WITH(declared.number(bad->root(), "tolerance"), Contains("bad.toml:1") && Contains("tolerance"));
}
