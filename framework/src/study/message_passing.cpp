#include <liembs/error.hpp>
#include <liembs/study/message_passing.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace liembs::study {

MessagePassing::~MessagePassing() = default;

bool started_by_mpi_launcher() {
  // OpenMPI's mpirun, and the PMI of MPICH's hydra and of Slurm.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* value = std::getenv(name);
    if (value && std::atoi(value) > 1) return true;
  }
  return false;
}

std::unique_ptr<MessagePassing> load_mpi_world() {
  // Next to this library: <libdir>/liembs/liembs-study-mpi.so (build tree and install prefix).
  Dl_info info{};
  std::filesystem::path module;
  if (::dladdr(reinterpret_cast<void*>(&load_mpi_world), &info) && info.dli_fname)
    module = std::filesystem::path(info.dli_fname).parent_path() / "liembs" / "liembs-study-mpi.so";
  std::error_code ec;
  if (module.empty() || !std::filesystem::is_regular_file(module, ec))
    throw Error("started by an MPI launcher, but this LieMBS was built without MPI (no " +
                (module.empty() ? std::string("liembs-study-mpi.so") : module.string()) +
                "): install libopenmpi-dev and openmpi-bin (scripts/install-deps) and build again, or run "
                "liembs study without mpirun (--jobs N uses the cores of one machine)");
  // Global: OpenMPI's own components, loaded by MPI_Init, resolve symbols of libmpi.
  void* handle = ::dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) throw Error(module.string() + ": cannot load the MPI module: " + ::dlerror());
  using Entry = MessagePassing* (*)(std::string*);
  const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "liembs_study_mpi_world"));
  if (!entry) throw Error(module.string() + ": not a LieMBS MPI module (no liembs_study_mpi_world)");
  std::string error;
  MessagePassing* world = entry(&error);
  if (!world) throw Error(module.string() + ": " + error);
  return std::unique_ptr<MessagePassing>(world);  // the module stays loaded: MPI is not unloaded
}

}  // namespace liembs::study
