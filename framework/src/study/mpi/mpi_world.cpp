// The MPI module of `liembs study` (liembs-study-mpi.so): MessagePassing over MPI's C API.
// Loaded by load_mpi_world() only under an MPI launcher.
#include <liembs/study/message_passing.hpp>

#include <mpi.h>

#include <cstdlib>
#include <string>

namespace {

class MpiWorld final : public liembs::study::MessagePassing {
 public:
  MpiWorld() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiWorld() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int destination, int tag, const std::string& text) override {
    MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, destination, tag, MPI_COMM_WORLD);
  }
  bool try_receive(int tag, int& source, std::string& text) override {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &arrived, &status);
    if (!arrived) return false;
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    text.assign(static_cast<std::size_t>(length), '\0');
    MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    source = status.MPI_SOURCE;
    return true;
  }
  [[noreturn]] void abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) liembs::study::MessagePassing* liembs_study_mpi_world(
    std::string* error) {
  // The ranks run their cases in forked processes that never call MPI: OpenMPI's warning
  // about fork() does not apply (a user's own setting wins).
  ::setenv("OMPI_MCA_mpi_warn_on_fork", "0", 0);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    if (error) *error = "MPI_Init failed";
    return nullptr;
  }
  return new MpiWorld();
}
