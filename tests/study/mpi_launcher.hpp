#pragma once
// mpirun for the study tests: two ranks, allowed as root (OpenMPI wants to be told) and on
// fewer cores than ranks (oversubscription). Used where the build has the MPI module
// (LIEMBS_TEST_STUDY_MPI).
#include <cstdlib>
#include <string>
#include <vector>

namespace study_test {

constexpr bool address_sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// The environment mpirun needs here, as NAME=value entries.
// Under AddressSanitizer the ranks run without leak checking: OpenMPI's components leak at
// MPI_Finalize and are dlclose'd before LeakSanitizer reports, so their stacks show only
// "<unknown module>" frames that no suppression can name (docs/reliability.md). The same study
// code is leak-checked by the serial study tests.
inline const std::vector<std::string>& mpi_environment() {
  static const std::vector<std::string> environment = [] {
    std::vector<std::string> entries{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                     "OMPI_MCA_rmaps_base_oversubscribe=1"};
    if (address_sanitizer_build()) {
      const char* options = std::getenv("ASAN_OPTIONS");
      entries.push_back("ASAN_OPTIONS=" + std::string(options != nullptr ? options : "") + ":detect_leaks=0");
    }
    return entries;
  }();
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
