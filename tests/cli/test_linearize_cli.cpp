// `liembs linearize` end to end: the files it writes (A.csv, B.csv with eval's column names,
// linearization.json), --at against the pose `liembs run` reached at that time, the default
// output folder, and its errors (unknown option, bad --at, a constrained model, an unwritable
// output folder) with no partial output.
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-linearize-test", name); }

cli_test::CliResult liembs(const std::string& arguments, const fs::path& cwd = fs::temp_directory_path()) {
  return cli_test::run_liembs(arguments, scratch("io"), cwd);
}

const std::string data = LIEMBS_TEST_DATA_DIR;
const std::string pendulum = "'" + data + "/trees/pendulum.toml'";
const std::string arm = "'" + data + "/trees/floating-arm.toml'";

// A.csv or B.csv: the header's names, each row's name (its first field) and its numbers.
struct NamedMatrix {
  std::vector<std::string> names, row_names;
  std::vector<std::vector<double>> rows;
};
NamedMatrix read_matrix(const fs::path& file) {
  NamedMatrix matrix;
  std::stringstream lines(cli_test::read_file(file));
  std::string line;
  if (std::getline(lines, line)) matrix.names = cli_test::csv_fields(line);
  while (std::getline(lines, line)) {
    const auto fields = cli_test::csv_fields(line);
    matrix.row_names.push_back(fields.front());
    auto& row = matrix.rows.emplace_back();
    for (std::size_t k = 1; k < fields.size(); ++k) row.push_back(std::stod(fields[k]));
  }
  return matrix;
}

bool empty_or_missing(const fs::path& dir) { return !fs::exists(dir) || fs::is_empty(dir); }

}  // namespace

TEST_CASE("liembs linearize writes A, B and linearization.json", "[linearize][cli]") {
  const fs::path out = scratch("arm");
  const auto result = liembs("linearize " + arm + " --at 0.5 -o '" + out.string() + "'");
  INFO(result.err);
  REQUIRE(result.status == 0);
  CHECK_THAT(result.out, Contains("20 states, 10 inputs, analytic"));
  const auto A = read_matrix(out / "A.csv");
  const auto B = read_matrix(out / "B.csv");
  const auto json = nlohmann::json::parse(cli_test::read_file(out / "linearization.json"));
  // The header names eval's columns: base.wx .. (velocities), qd.<dof>, base.mx .., tau.<dof>.
  REQUIRE(A.names.size() == 21);
  CHECK(A.names[0] == "state");
  CHECK(A.names[1] == "base.delta.wx");
  CHECK(A.names[7] == "q.shoulder[0]");
  CHECK(A.names[11] == "base.wx");
  CHECK(A.names[17] == "qd.shoulder[0]");
  CHECK(A.names[20] == "qd.extension");
  REQUIRE(B.names.size() == 11);
  CHECK(B.names[1] == "base.mx");
  CHECK(B.names[10] == "tau.extension");
  CHECK(A.rows.size() == 20);
  CHECK(B.rows.size() == 20);
  CHECK(json["time"].get<double>() == Approx(0.5));
  CHECK(json["method"] == "analytic");
  CHECK(json["state_names"].size() == 20);
  CHECK(json["x0"].size() == 20);
  CHECK(json["tau0"].size() == 10);
  CHECK(json["base_pose"]["quaternion_wxyz"].size() == 4);
  CHECK(A.row_names == json["state_names"].get<std::vector<std::string>>());
  CHECK(B.row_names == A.row_names);
  CHECK(std::vector<std::string>(B.names.begin() + 1, B.names.end()) ==
        json["input_names"].get<std::vector<std::string>>());
  // x' = (u, u') at delta = 0: dq'/du is the identity, B's configuration rows are zero, and the
  // configuration rates are the velocities of x0.
  for (std::size_t i = 0; i < 20; ++i) {
    for (std::size_t j = 0; j < 10; ++j) {
      if (i < 10) CHECK(A.rows[i][10 + j] == (i == j ? 1.0 : 0.0));
      if (i < 10) CHECK(B.rows[i][j] == 0.0);
    }
  }
  for (std::size_t k = 0; k < 10; ++k)
    CHECK(json["rates"][k].get<double>() == Approx(json["x0"][k + 10].get<double>()).margin(1e-15));
}

// --at: the state `liembs run` reached at that time. The trajectory holds the bob's pose: the
// pivot's angle is 2 atan2(q . axis, q_w) of its quaternion, its rate w . axis.
TEST_CASE("liembs linearize --at reproduces the state of liembs run", "[linearize][cli]") {
  const fs::path run = scratch("run"), out = scratch("pendulum");
  REQUIRE(liembs("run " + pendulum + " -q -o '" + run.string() + "'").status == 0);
  REQUIRE(liembs("linearize " + pendulum + " --at 0.75 -q -o '" + out.string() + "'").status == 0);
  const auto trajectory = cli_test::parse_csv(cli_test::read_file(run / "trajectory.csv"));
  const auto json = nlohmann::json::parse(cli_test::read_file(out / "linearization.json"));
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(trajectory.names.begin(), trajectory.names.end(), name) -
                                    trajectory.names.begin());
  };
  const auto& row = trajectory.rows.at(750);
  REQUIRE(row[0] == Approx(0.75));
  const double s = 1.0 / std::sqrt(2.0);
  const double angle = 2.0 * std::atan2(s * (row[column("bob.qx")] + row[column("bob.qy")]), row[column("bob.qw")]);
  const double rate = s * (row[column("bob.wx")] + row[column("bob.wy")]);
  const double q0 = json["x0"][0].get<double>(), u0 = json["x0"][1].get<double>();
  CHECK(std::remainder(q0 - angle, 2.0 * M_PI) == Approx(0.0).margin(1e-9));
  CHECK(u0 == Approx(rate).margin(1e-9));
  CHECK(std::abs(q0 - 2.0) > 0.1);  // it moved from the initial 2.0
}

TEST_CASE("liembs linearize: default output folder, help", "[linearize][cli]") {
  const fs::path cwd = scratch("cwd");
  REQUIRE(liembs("linearize " + pendulum + " -q", cwd).status == 0);
  for (const char* name : {"A.csv", "B.csv", "linearization.json"})
    CHECK(fs::exists(cwd / "liembs-output" / "pendulum" / name));
  CHECK_THAT(liembs("--help").out, Contains("linearize FILE.toml"));
  const auto help = liembs("linearize --help");
  CHECK(help.status == 0);
  CHECK_THAT(help.out, Contains("--at"));
  CHECK_THAT(help.out, Contains("--set"));
}

TEST_CASE("liembs linearize: errors leave no output", "[linearize][cli]") {
  const fs::path out = scratch("errors");
  const std::string to = " -o '" + (out / "result").string() + "'";
  struct Case {
    std::string arguments;
    int status;
    std::string message;
  };
  const std::vector<Case> cases{
      {"linearize " + pendulum + " --frobnicate" + to, 1, "unrecognised option '--frobnicate'"},
      {"linearize " + pendulum + " --at abc" + to, 1, "the argument ('abc') for option '--at' is invalid"},
      {"linearize " + pendulum + " --at 3" + to, 1, "--at 3 is outside the run's time span [0, 2] s"},
      {"linearize " + pendulum + " --at -1" + to, 1, "--at -1 is outside"},
      {"linearize '" + data + "/four-bar-loop.toml'" + to, 4, "closes a loop; linearize supports trees"},
      {"linearize '" + data + "/prescribed-chain.toml'" + to, 4, "prescribed motion; linearize supports trees"},
      {"linearize " + pendulum + " --set simulation.end_tme=1" + to, 2, "end_tme"},
      {"linearize" + to, 1, "missing the TOML file"},
  };
  for (const auto& c : cases) {
    INFO(c.arguments);
    const auto result = liembs(c.arguments);
    CHECK(result.status == c.status);
    CHECK_THAT(result.err, Contains(c.message));
    CHECK(empty_or_missing(out / "result"));
  }
  // An output folder that cannot be made (a file in its place) or written (A.csv a folder).
  const fs::path file = out / "a-file";
  std::ofstream(file) << "x";
  auto result = liembs("linearize " + pendulum + " -o '" + (file / "sub").string() + "'");
  CHECK(result.status == 2);  // as for run (bad-input case io-output-under-a-file)
  CHECK_THAT(result.err, Contains("cannot create the output folder"));
  const fs::path blocked = out / "blocked";
  fs::create_directories(blocked / "A.csv");
  result = liembs("linearize " + pendulum + " -o '" + blocked.string() + "'");
  CHECK(result.status != 0);
  CHECK_THAT(result.err, Contains("A.csv"));
  CHECK(!fs::exists(blocked / "B.csv"));
  CHECK(!fs::exists(blocked / "linearization.json"));
  CHECK(std::distance(fs::directory_iterator(blocked), fs::directory_iterator{}) == 1);  // no temporaries
}
