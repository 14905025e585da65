// liembs study under mpirun -np 2 (docs/studies.md "MPI"): rank 0 hands the cases out to
// rank 1 and gathers them; results.csv is the serial run's (timings aside), the cache is
// written and a resumed run under MPI runs only the missing cases. Skipped with a message
// when mpirun or the MPI module is missing.
#include "../support/cli_process.hpp"
#include "study_csv.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cli_test::read_file;
using study_test::csv_without;

#ifdef LIEMBS_TEST_STUDY_MPI
namespace {

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-study-mpi-test", name); }

// As root, OpenMPI wants to be told; two ranks on fewer cores need --oversubscribe.
const std::string mpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
                           "mpirun -np 2 ";

cli_test::CliResult run(const std::string& prefix, const std::string& arguments, const fs::path& io) {
  const std::string command = prefix + "env -u LIEMBS_PLUGIN_PATH '" LIEMBS_CLI "' " + arguments + " >'" +
                              (io / "stdout").string() + "' 2>'" + (io / "stderr").string() + "'";
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(io / "stdout"), read_file(io / "stderr")};
}

}  // namespace
#endif

TEST_CASE("study under mpirun -np 2: the serial run's results, cached and resumable", "[study][mpi]") {
#ifndef LIEMBS_TEST_STUDY_MPI
  WARN("skipped: LieMBS was built without MPI (install libopenmpi-dev and openmpi-bin and configure again)");
  return;
#else
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    WARN("skipped: mpirun is not on the PATH (Debian: apt install openmpi-bin)");
    return;
  }
  const fs::path dir = scratch("mpi");
  const fs::path file = dir / "small.toml";
  std::ofstream(file) << "title = \"small\"\n[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR
                         "/free-body.toml'\nset = { simulation.end_time = 0.2 }\n"
                         "[reference]\nset = { integrator.tableau = \"rk4\", simulation.step_size = 1e-3 }\n"
                         "[[axes]]\nkey = \"group.name\"\nvalues = [\"SE3\", \"SO3xR3\", \"SE4\"]\n"
                         "[[axes]]\nkey = \"simulation.step_size\"\nvalues = [0.05, 0.025, 0.01]\nladder = true\n"
                         "[measure]\nsample_interval = 0.05\n";
  const std::string study = "study '" + file.string() + "' --no-report --output ";
  const auto serial = run("", study + "'" + (dir / "serial").string() + "' --jobs 2", dir);
  INFO(serial.out << serial.err);
  REQUIRE(serial.status == 0);
  const auto distributed = run(mpirun, study + "'" + (dir / "mpi").string() + "'", dir);
  INFO(distributed.out << distributed.err);
  REQUIRE(distributed.status == 0);
  CHECK_THAT(distributed.out, Contains("11 cases (8 run, 0 cached, 3 failed)"));
  CHECK(std::count(distributed.out.begin(), distributed.out.end(), '\n') ==
        std::count(serial.out.begin(), serial.out.end(), '\n'));  // only rank 0 prints
  const std::vector<std::string> timings{"cpu_seconds", "wall_seconds"};
  const std::string csv = read_file(dir / "mpi" / "results.csv");
  CHECK(csv_without(csv, timings) == csv_without(read_file(dir / "serial" / "results.csv"), timings));
  CHECK(read_file(dir / "mpi" / "series.csv") == read_file(dir / "serial" / "series.csv"));

  // Resume: three records removed, the next MPI run runs only those.
  std::vector<fs::path> records;
  for (const auto& entry : fs::directory_iterator(dir / "mpi" / "cases")) records.push_back(entry.path());
  REQUIRE(records.size() == 8);
  std::sort(records.begin(), records.end());
  for (int i = 0; i < 3; ++i) fs::remove(records[static_cast<std::size_t>(i)]);
  const auto resumed = run(mpirun, study + "'" + (dir / "mpi").string() + "'", dir);
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.status == 0);
  CHECK_THAT(resumed.out, Contains("11 cases (3 run, 5 cached, 3 failed)"));
  CHECK(csv_without(read_file(dir / "mpi" / "results.csv"), timings) == csv_without(csv, timings));
#endif
}
