// `liembs eval` with the higher-order algorithms (docs/higher-order.md): the documented
// columns, agreement with rnea at order 0, the H-GRNE -> H-GABI round trip through CSV files
// on the paper's aerial manipulator, hybrid dynamics with prescribed joints, and the errors
// of [algorithm] order / prescribed / base naming the key.
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

using Result = cli_test::CliResult;
using cli_test::read_file;

fs::path folder(const std::string& name) { return cli_test::scratch_folder("liembs-higher-order-test", name); }
Result run_liembs(const std::string& arguments) { return cli_test::run_liembs(arguments, folder("io")); }

// Header and first data row of a CSV text.
std::pair<std::vector<std::string>, std::vector<double>> first_row(const std::string& csv) {
  cli_test::CsvTable table = cli_test::parse_csv(csv);
  return {table.names, table.rows.at(0)};
}
double value_of(const std::pair<std::vector<std::string>, std::vector<double>>& row, const std::string& column) {
  for (std::size_t c = 0; c < row.first.size(); ++c)
    if (row.first[c] == column) return row.second.at(c);
  FAIL("no column " << column);
  return 0.0;
}

const std::string pendulum = "'" LIEMBS_SOURCE_DIR "/configs/examples/double-pendulum.toml'";
const std::string aerial = "'" LIEMBS_SOURCE_DIR "/configs/paper-003/aerial-manipulator.toml'";

}  // namespace

TEST_CASE("eval higher-order-rnea: documented columns, order 0 equal to rnea", "[cli][eval][higher-order]") {
  const fs::path dir = folder("columns");
  const Result columns = run_liembs("eval " + pendulum + " --set algorithm.name=higher-order-rnea --set algorithm.order=1 --columns");
  INFO(columns.err);
  REQUIRE(columns.status == 0);
  CHECK_THAT(columns.out, Contains("inputs: q.shoulder q.elbow qd.shoulder qd.elbow q.shoulder.d2 q.elbow.d2 q.shoulder.d3 q.elbow.d3\n"));
  CHECK_THAT(columns.out, Contains("outputs: tau.shoulder.d0 tau.elbow.d0 tau.shoulder.d1 tau.elbow.d1\n"));
  std::ofstream(dir / "in.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,q.shoulder.d2,q.elbow.d2,qdd.shoulder,qdd.elbow\n"
                                << "0.1,0.2,0.3,0.4,0.5,0.6,0.5,0.6\n";
  const auto eval = [&](const std::string& settings, const char* output) {
    const Result r = run_liembs("eval " + pendulum + " " + settings + " --states '" + (dir / "in.csv").string() + "' --output '" +
                                (dir / output).string() + "'");
    INFO(r.err);
    REQUIRE(r.status == 0);
    return first_row(read_file(dir / output));
  };
  const auto higher = eval("--set algorithm.name=higher-order-rnea --set algorithm.order=0", "higher.csv");
  const auto rnea = eval("--set algorithm.name=rnea", "rnea.csv");
  for (const char* joint : {"shoulder", "elbow"})
    CHECK(std::abs(value_of(higher, std::string("tau.") + joint + ".d0") - value_of(rnea, std::string("tau.") + joint)) < 1e-12);
}

TEST_CASE("eval: H-GRNE of order 5 fed to H-GABI returns the input derivatives on the aerial manipulator",
          "[cli][eval][higher-order][paper-003]") {
  const fs::path dir = folder("round-trip");
  const Result columns = run_liembs("eval " + aerial + " --columns");
  REQUIRE(columns.status == 0);
  std::stringstream inputs(columns.out.substr(columns.out.find(':') + 1, columns.out.find('\n') - columns.out.find(':') - 1));
  std::vector<std::string> names;
  for (std::string name; inputs >> name;) names.push_back(name);
  REQUIRE(names.size() == 7 + 6 + 6 + 6 + 12 * 6);  // pose, q, base twist, qd, u^(1..6)
  {
    std::ofstream out(dir / "states.csv");
    for (std::size_t c = 0; c < names.size(); ++c) out << (c ? "," : "") << names[c];
    out << "\n";
    for (std::size_t c = 0; c < names.size(); ++c)
      out << (c ? "," : "") << (names[c] == "base.qw" ? 0.9 : c < 7 ? 0.1 : 0.05 * std::sin(1.0 + static_cast<double>(c)));
    out << "\n";
  }
  const Result id = run_liembs("eval " + aerial + " --states '" + (dir / "states.csv").string() + "' --output '" +
                               (dir / "forces.csv").string() + "'");
  INFO(id.err);
  REQUIRE(id.status == 0);
  // H-GABI's inputs: the state columns of states.csv and the forces H-GRNE wrote.
  const auto states = first_row(read_file(dir / "states.csv")), forces = first_row(read_file(dir / "forces.csv"));
  {
    std::ofstream out(dir / "fd.csv");
    out << std::setprecision(17);
    for (std::size_t c = 0; c < 25; ++c) out << states.first[c] << ",";
    for (std::size_t c = 0; c < forces.first.size(); ++c) out << forces.first[c] << (c + 1 < forces.first.size() ? "," : "\n");
    for (std::size_t c = 0; c < 25; ++c) out << states.second[c] << ",";
    for (std::size_t c = 0; c < forces.second.size(); ++c) out << forces.second[c] << (c + 1 < forces.second.size() ? "," : "\n");
  }
  const Result fd = run_liembs("eval " + aerial + " --set algorithm.name=higher-order-aba --states '" + (dir / "fd.csv").string() +
                               "' --output '" + (dir / "rates.csv").string() + "'");
  INFO(fd.err);
  REQUIRE(fd.status == 0);
  const auto rates = first_row(read_file(dir / "rates.csv"));
  int compared = 0;
  for (const std::string& name : names)
    if (name.find(".d") != std::string::npos) {  // the derivative columns
      INFO(name);
      CHECK(std::abs(value_of(rates, name) - value_of(states, name)) < 1e-9 * (1.0 + std::abs(value_of(states, name))));
      ++compared;
    }
  CHECK(compared == 72);
}

TEST_CASE("eval hybrid-dynamics: prescribed joints give their forces, the others their accelerations",
          "[cli][eval][higher-order]") {
  const fs::path dir = folder("hybrid");
  const Result columns = run_liembs("eval " + pendulum +
                                    " --set algorithm.name=hybrid-dynamics --set algorithm.order=0 --set 'algorithm.prescribed=[\"elbow\"]' --columns");
  INFO(columns.err);
  REQUIRE(columns.status == 0);
  CHECK_THAT(columns.out, Contains("inputs: q.shoulder q.elbow qd.shoulder qd.elbow tau.shoulder.d0 q.elbow.d2\n"));
  CHECK_THAT(columns.out, Contains("outputs: q.shoulder.d2 tau.elbow.d0\n"));
  // Consistent with rnea: the accelerations (0.5, 0.6) need tau; prescribing the elbow's
  // acceleration and the shoulder's torque gives back the other two.
  std::ofstream(dir / "id.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,qdd.elbow\n0.1,0.2,0.3,0.4,0.5,0.6\n";
  const Result rnea = run_liembs("eval " + pendulum + " --set algorithm.name=rnea --states '" + (dir / "id.csv").string() +
                                 "' --output '" + (dir / "tau.csv").string() + "'");
  REQUIRE(rnea.status == 0);
  const auto tau = first_row(read_file(dir / "tau.csv"));
  std::ofstream(dir / "hybrid.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,tau.shoulder.d0,q.elbow.d2\n0.1,0.2,0.3,0.4,"
                                    << std::setprecision(17) << value_of(tau, "tau.shoulder") << ",0.6\n";
  const Result hybrid = run_liembs("eval " + pendulum +
                                   " --set algorithm.name=hybrid-dynamics --set algorithm.order=0 --set 'algorithm.prescribed=[\"elbow\"]' --states '" +
                                   (dir / "hybrid.csv").string() + "' --output '" + (dir / "out.csv").string() + "'");
  INFO(hybrid.err);
  REQUIRE(hybrid.status == 0);
  const auto out = first_row(read_file(dir / "out.csv"));
  CHECK(std::abs(value_of(out, "q.shoulder.d2") - 0.5) < 1e-10);
  CHECK(std::abs(value_of(out, "tau.elbow.d0") - value_of(tau, "tau.elbow")) < 1e-10);
}

TEST_CASE("eval higher-order algorithms: bad [algorithm] keys are errors naming the key", "[cli][eval][higher-order][errors]") {
  const auto columns = [](const std::string& settings) { return run_liembs("eval " + pendulum + " " + settings + " --columns"); };
  SECTION("order missing") {
    const Result r = columns("--set algorithm.name=higher-order-rnea");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.order"));
  }
  SECTION("order out of range") {
    const Result r = columns("--set algorithm.name=higher-order-aba --set algorithm.order=21");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.order"));
  }
  SECTION("order not an integer") {
    const Result r = columns("--set algorithm.name=higher-order-aba --set algorithm.order=1.5");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.order"));
  }
  SECTION("unknown key") {
    const Result r = columns("--set algorithm.name=higher-order-rnea --set algorithm.order=1 --set algorithm.prescribed=[]");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("unknown key 'algorithm.prescribed'"));
  }
  SECTION("prescribed joint unknown") {
    const Result r = columns("--set algorithm.name=hybrid-dynamics --set algorithm.order=0 --set 'algorithm.prescribed=[\"knee\"]'");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.prescribed") && Contains("'knee'") && Contains("shoulder, elbow"));
  }
  SECTION("base motion on a fixed base") {
    const Result r = columns("--set algorithm.name=hybrid-dynamics --set algorithm.order=0 --set algorithm.base=motion");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.base") && Contains("fixed"));
  }
  SECTION("not for simulations") {
    const Result r = run_liembs("validate " + pendulum + " --set algorithm.name=higher-order-aba --set algorithm.order=2");
    CHECK(r.status == 4);
    CHECK_THAT(r.err, Contains("higher-order-aba") && Contains("liembs eval"));
  }
}

namespace {

// The double pendulum with a body-frame load on the lower link and a world-frame one on the
// upper, plus `extra` TOML lines.
std::string loaded_pendulum(const fs::path& dir, const std::string& extra = "") {
  const fs::path file = dir / "loaded.toml";
  std::ofstream(file) << read_file(LIEMBS_SOURCE_DIR "/configs/examples/double-pendulum.toml")
                      << "\n[[model.loads]]\nbody = \"lower\"\nframe = \"body\"\nmoment = [0.1, 0.3, -0.2]\nforce = [1.0, 0.4, 0.5]\n"
                      << "\n[[model.loads]]\nbody = \"upper\"\nframe = \"world\"\nmoment = [0.2, 0.0, 0.1]\nforce = [0.3, -0.5, 2.0]\n"
                      << extra;
  return cli_test::single_quoted(file);
}

}  // namespace

TEST_CASE("eval varying_loads: the model's loads and their derivatives are input columns", "[cli][eval][higher-order][loads]") {
  const fs::path dir = folder("varying-loads");
  const std::string loaded = loaded_pendulum(dir);
  const std::string settings = " --set algorithm.name=higher-order-rnea --set algorithm.order=1 --set algorithm.varying_loads=true";
  const Result columns = run_liembs("eval " + loaded + settings + " --columns");
  INFO(columns.err);
  REQUIRE(columns.status == 0);
  std::string loads;
  for (int k = 0; k <= 1; ++k)
    for (const char* load : {"f_ext.lower.", "f_ext.upper.world."})
      for (const char* c : {"mx", "my", "mz", "fx", "fy", "fz"}) loads += std::string(" ") + load + c + ".d" + std::to_string(k);
  CHECK_THAT(columns.out, Contains("inputs: q.shoulder q.elbow qd.shoulder qd.elbow q.shoulder.d2 q.elbow.d2 q.shoulder.d3 q.elbow.d3" +
                                   loads + "\n"));
  // Rows: (1) the file's loads, no load rates; (2) the lower load's force rate w; (3) the
  // lower load's force v + w, no rates. A load's rate enters order 1 as its value enters
  // order 0 (W_app^(1) next to W_app^(0)): tau'(2) - tau'(1) = tau(3) - tau(1).
  const std::string motion = "0.1,0.2,0.3,0.4,0.5,0.6,1.0,-1.0";
  const std::string upper = ",0.2,0.0,0.1,0.3,-0.5,2.0";
  const std::string no_rates = ",0,0,0,0,0,0,0,0,0,0,0,0";
  {
    std::ofstream out(dir / "in.csv");
    out << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,q.shoulder.d2,q.elbow.d2,q.shoulder.d3,q.elbow.d3";
    for (std::size_t at = 0; at < loads.size();) {
      const std::size_t next = loads.find(' ', at + 1);
      out << "," << loads.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
      at = next == std::string::npos ? loads.size() : next;
    }
    out << "\n" << motion << ",0.1,0.3,-0.2,1.0,0.4,0.5" << upper << no_rates << "\n";
    out << motion << ",0.1,0.3,-0.2,1.0,0.4,0.5" << upper << ",0,0,0,0.7,-0.2,0.3,0,0,0,0,0,0\n";
    out << motion << ",0.1,0.3,-0.2,1.7,0.2,0.8" << upper << no_rates << "\n";
  }
  const Result eval = run_liembs("eval " + loaded + settings + " --states '" + (dir / "in.csv").string() + "' --output '" +
                                 (dir / "out.csv").string() + "'");
  INFO(eval.err);
  REQUIRE(eval.status == 0);
  const cli_test::CsvTable out = cli_test::parse_csv(read_file(dir / "out.csv"));
  const auto& rows = out.rows;
  REQUIRE(rows.size() == 3);
  REQUIRE(out.names == std::vector<std::string>{"tau.shoulder.d0", "tau.elbow.d0", "tau.shoulder.d1", "tau.elbow.d1"});
  for (int j = 0; j < 2; ++j) {
    const double change = rows[2][static_cast<std::size_t>(j)] - rows[0][static_cast<std::size_t>(j)];
    CHECK(std::abs(change) > 1e-3);
    CHECK(std::abs(rows[1][static_cast<std::size_t>(2 + j)] - rows[0][static_cast<std::size_t>(2 + j)] - change) < 1e-12);
  }
  // Row 1 is the model's constant loads: the same as without varying_loads.
  std::ofstream(dir / "plain.csv") << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,q.shoulder.d2,q.elbow.d2,q.shoulder.d3,q.elbow.d3\n"
                                   << motion << "\n";
  const Result plain = run_liembs("eval " + loaded + " --set algorithm.name=higher-order-rnea --set algorithm.order=1 --states '" +
                                  (dir / "plain.csv").string() + "' --output '" + (dir / "plain-out.csv").string() + "'");
  INFO(plain.err);
  REQUIRE(plain.status == 0);
  const auto constant = cli_test::parse_csv(read_file(dir / "plain-out.csv")).rows;
  for (std::size_t c = 0; c < 4; ++c) CHECK(std::abs(constant.at(0).at(c) - rows[0][c]) < 1e-12);
}

TEST_CASE("eval varying_loads: bad models and values are errors naming the key", "[cli][eval][higher-order][loads][errors]") {
  const fs::path dir = folder("varying-loads-errors");
  SECTION("no loads") {
    const Result r = run_liembs("eval " + pendulum +
                                " --set algorithm.name=higher-order-aba --set algorithm.order=1 --set algorithm.varying_loads=true --columns");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.varying_loads") && Contains("no [[model.loads]]"));
  }
  SECTION("two loads of one frame on one body") {
    const std::string loaded = loaded_pendulum(dir, "\n[[model.loads]]\nbody = \"lower\"\nforce = [0.0, 0.0, 1.0]\n");
    const Result r = run_liembs("eval " + loaded +
                                " --set algorithm.name=hybrid-dynamics --set algorithm.order=0 --set algorithm.varying_loads=true --columns");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.varying_loads") && Contains("body 'lower'"));
  }
  SECTION("not a boolean") {
    const Result r = run_liembs("eval " + loaded_pendulum(dir) +
                                " --set algorithm.name=higher-order-rnea --set algorithm.order=1 --set algorithm.varying_loads=1 --columns");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("algorithm.varying_loads"));
  }
}
