// Switching a plugin from the command line (docs/user-guide.md, "Changing a run from the
// command line"): the file's options of the plugin it named are dropped with a warning when
// the new plugin does not read them; options given with --set stay errors; --unset removes a
// key of the file, and names a key the file does not have.
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>

#include <string>

using Catch::Matchers::Contains;

namespace {

const std::string pendulum = "'" LIEMBS_SOURCE_DIR "/configs/examples/double-pendulum.toml'";

cli_test::CliResult liembs(const std::string& arguments) {
  return cli_test::run_liembs(arguments, cli_test::scratch_folder("liembs-overrides-test", "io"));
}

}  // namespace

TEST_CASE("switching integrator.name with --set drops the previous integrator's options with a warning", "[cli][overrides]") {
  const auto result = liembs("validate " + pendulum + " --set integrator.name=generalized-alpha");
  INFO(result.out << result.err);
  CHECK(result.status == 0);
  CHECK_THAT(result.err, Contains("warning: ") && Contains("double-pendulum.toml:50:") &&
                             Contains("'integrator.tableau' is dropped: it is an option of 'rkmk'") &&
                             Contains("'integrator.name=generalized-alpha' chose one that does not read it"));
  // the same name again is no switch: the option is read, nothing is dropped
  const auto same = liembs("validate " + pendulum + " --set integrator.name=rkmk");
  CHECK(same.status == 0);
  CHECK_THAT(same.err, !Contains("dropped"));
}

TEST_CASE("an option given with --set that the chosen plugin does not read stays an error", "[cli][overrides]") {
  const auto result =
      liembs("validate " + pendulum + " --set integrator.name=generalized-alpha --set integrator.tableau=rk3");
  INFO(result.out << result.err);
  CHECK(result.status == 2);
  CHECK_THAT(result.err, Contains("unknown key 'integrator.tableau'"));
}

TEST_CASE("unsetting: --unset removes a key of the file, and a key the file does not have is an error", "[cli][overrides]") {
  const auto result =
      liembs("validate " + pendulum + " --unset integrator.tableau --set integrator.name=generalized-alpha");
  INFO(result.out << result.err);
  CHECK(result.status == 0);
  CHECK_THAT(result.err, !Contains("dropped"));
  // rkmk without its tableau takes its default: the run is valid
  CHECK(liembs("validate " + pendulum + " --unset integrator.tableau").status == 0);
  const auto missing = liembs("validate " + pendulum + " --unset integrator.tablaeu");
  CHECK(missing.status == 2);
  CHECK_THAT(missing.err, Contains("--unset integrator.tablaeu: the file has no key 'integrator.tablaeu'"));
}
