// ConfigTable / ConfigDocument: typed reads, ranges, locations, unknown keys, overrides.
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>

#include <catch2/catch.hpp>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {
std::shared_ptr<ConfigDocument> parse(const char* text) { return ConfigDocument::from_string(text, "test.toml"); }
}  // namespace

TEST_CASE("typed reads return the values of the file", "[config]") {
  auto document = parse("a = 1\nb = 2.5\nname = \"x\"\nflag = true\nv = [1, 2.0, 3]\n"
                        "m = [[1,0,0],[0,2,0],[0,0,3]]\n[sub]\nk = 4\n");
  ConfigTable root = document->root();
  CHECK(root.number("a") == 1.0);
  CHECK(root.integer("a") == 1);
  CHECK(root.number("b") == 2.5);
  CHECK(root.string("name") == "x");
  CHECK(root.boolean_or("flag", false));
  CHECK(root.vec3("v") == Vec3(1, 2, 3));
  CHECK(root.mat3("m")(2, 2) == 3.0);
  CHECK(root.table("sub").integer("k") == 4);
  CHECK(root.number_or("absent", 7.0) == 7.0);
  CHECK_NOTHROW(document->reject_unused_keys());
}

TEST_CASE("type and range errors name file, line, column and key path", "[config]") {
  auto document = parse("[simulation]\nstep_size = \"small\"\nend_time = -1.0\ncount = 1.5\n");
  ConfigTable simulation = document->root().table("simulation");
  CHECK_THROWS_WITH(simulation.number("step_size"),
                    Contains("test.toml:2:13") && Contains("simulation.step_size") &&
                        Contains("expected a number, found a string"));
  CHECK_THROWS_WITH(simulation.number("end_time", Range::positive()),
                    Contains("test.toml:3:12") && Contains("out of range") && Contains("> 0"));
  CHECK_THROWS_WITH(simulation.integer("count"), Contains("expected an integer"));
  CHECK_THROWS_WITH(simulation.number("missing"), Contains("missing required key 'simulation.missing'"));
  CHECK_THROWS_AS(simulation.number("missing"), ConfigError);
}

TEST_CASE("keys nobody reads are rejected with a suggestion", "[config]") {
  auto document = parse("[integrator]\nname = \"rkmk\"\ntablaeu = \"rk4\"\n");
  ConfigTable integrator = document->root().table("integrator");
  integrator.string("name");
  integrator.string_or("tableau", "rk4");
  CHECK_THROWS_WITH(document->reject_unused_keys(),
                    Contains("test.toml:3:1") && Contains("unknown key 'integrator.tablaeu'"));
  auto typo = parse("[integrator]\nname = \"rkmk\"\nnmae = 1\n");
  typo->root().table("integrator").string("name");
  CHECK_THROWS_WITH(typo->reject_unused_keys(), Contains("did you mean 'name'?"));
}

TEST_CASE("an unknown key in a table with a declared owner names the owner and its keys", "[config]") {
  // The owner's keys are suggestions even when its reader never asked for them (rho_infinity is
  // read only when given), and the message lists them with the owner's help.
  auto document = parse("[integrator]\nname = \"x\"\nrho_infinty = 0.5\n[other]\nrho_infinty = 1\n");
  ConfigTable integrator = document->root().table("integrator");
  integrator.string("name");
  integrator.declare_owner("integrator 'x'", {"rho_infinity", "tolerance"}, "liembs plugins --options x");
  document->root().table("other");
  try {
    document->reject_unused_keys();
    FAIL("unknown keys accepted");
  } catch (const ConfigError& error) {
    const std::string message = error.what();
    const std::string owned = message.substr(0, message.find('\n'));
    const std::string unowned = message.substr(message.find('\n') + 1);
    CHECK_THAT(owned, Contains("unknown key 'integrator.rho_infinty' (did you mean 'rho_infinity'?)") &&
                          Contains("integrator 'x' has no option 'rho_infinty'; its options: rho_infinity, tolerance "
                                   "(liembs plugins --options x)"));
    // The other table has no owner: no list, no suggestion from the owner's keys.
    CHECK_THAT(unowned, Contains("unknown key 'other.rho_infinty'"));
    CHECK(unowned.find("has no option") == std::string::npos);
    CHECK(unowned.find("did you mean") == std::string::npos);
  }
  auto none = parse("[group]\nname = \"SE3\"\ntolerance = 1\n");
  none->root().table("group").declare_owner("group 'SE3'", {}, "");
  CHECK_THROWS_WITH(none->reject_unused_keys(), Contains("group 'SE3' has no option 'tolerance', it has no options"));
}

TEST_CASE("unread sections and array-of-table entries are rejected", "[config]") {
  auto document = parse("[[bodies]]\nname = \"a\"\nmass = 1\n[[bodies]]\nname = \"b\"\nmas = 1\n[extra]\nx = 1\n");
  for (const auto& body : document->root().table_array("bodies")) {
    body.string("name");
    body.number_or("mass", 1.0);
  }
  CHECK_THROWS_WITH(document->reject_unused_keys(),
                    Contains("unknown key 'bodies.1.mas'") && Contains("unknown key 'extra'"));
}

TEST_CASE("choices list the allowed values and the nearest one", "[config]") {
  auto document = parse("tableau = \"rk5\"\n");
  CHECK_THROWS_WITH(document->root().choice("tableau", {"euler", "heun", "rk3", "rk4"}),
                    Contains("'rk5' is not one of: euler, heun, rk3, rk4") && Contains("did you mean"));
}

TEST_CASE("overrides set values with TOML syntax, create tables and index arrays", "[config]") {
  auto document = parse("[simulation]\nstep_size = 0.1\n[[model.bodies]]\nmass = 1.0\n");
  document->set_override("simulation.step_size=0.05");
  document->set_override("group.name=SE3");  // bare word: taken as a string
  document->set_override("model.bodies.0.mass=2");
  document->set_override("model.gravity=[0, 0, -9.81]");
  ConfigTable root = document->root();
  CHECK(root.table("simulation").number("step_size") == 0.05);
  CHECK(root.table("group").string("name") == "SE3");
  CHECK(root.table("model").table_array("bodies")[0].number("mass") == 2.0);
  CHECK(root.table("model").vec3("gravity").z() == -9.81);
  CHECK_THROWS_WITH(document->set_override("model.bodies.3.mass=1"), Contains("not an index"));
  CHECK_THROWS_WITH(document->set_override("simulation.step_size.x=1"), Contains("not a table"));
  CHECK_THROWS_WITH(document->set_override("novalue"), Contains("expected key.path=value"));
}

TEST_CASE("syntax errors carry the position", "[config]") {
  CHECK_THROWS_WITH(parse("a = [1, 2\nb = 3\n"), Contains("test.toml:") && Contains("TOML syntax error"));
  CHECK_THROWS_AS(ConfigDocument::load("/nonexistent/file.toml"), ConfigError);
}
