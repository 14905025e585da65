#pragma once
// mpirun for the study tests: two ranks, allowed as root (OpenMPI wants to be told) and on
// fewer cores than ranks (oversubscription). Used where the build has the MPI module
// (LIEMBS_TEST_STUDY_MPI).
#include <cstdlib>
#include <string>
#include <vector>

namespace study_test {

// The environment mpirun needs here, as NAME=value entries.
inline const std::vector<std::string>& mpi_environment() {
  static const std::vector<std::string> environment{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                                    "OMPI_MCA_rmaps_base_oversubscribe=1"};
  return environment;
}

// A shell prefix that starts the command after it as two MPI ranks.
inline std::string mpirun_launcher() {
  std::string prefix;
  for (const auto& assignment : mpi_environment()) prefix += assignment + " ";
  return prefix + "mpirun -np 2 ";
}

inline bool mpirun_on_path() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

}  // namespace study_test
