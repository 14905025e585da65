#pragma once
// A group of processes exchanging text messages, for running a study distributed
// (`mpirun -np N liembs study ...`, docs/studies.md "MPI"): rank 0 hands the cases out one
// at a time and gathers their records, the other ranks run them. The MPI implementation
// is a module of its own (liembs-study-mpi.so, built when MPI is found), loaded only when
// the process was started by an MPI launcher, so `liembs` itself never needs MPI.
#include <memory>
#include <string>

namespace liembs::study {

class MessagePassing {
 public:
  virtual ~MessagePassing();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void send(int destination, int tag, const std::string& text) = 0;
  // The next message with `tag` from any rank, if one has arrived (does not wait): its text
  // in `text`, the sender's rank in `source`. Callers poll, so that a signal is noticed.
  virtual bool try_receive(int tag, int& source, std::string& text) = 0;
  // Ends the whole job at once (every rank), with `status`.
  [[noreturn]] virtual void abort(int status) = 0;
};

// Whether an MPI launcher started this process with more than one rank (mpirun of OpenMPI
// or MPICH): read from the environment, without loading anything.
bool started_by_mpi_launcher();

// The MPI world, from the module found next to the library (build tree or install prefix);
// throws Error saying how to get it when this LieMBS was built without MPI. MPI is
// finalized when the returned object is destroyed.
std::unique_ptr<MessagePassing> load_mpi_world();

}  // namespace liembs::study

// The module's entry point: creates the world (MPI_Init) or returns null with `error` set.
extern "C" liembs::study::MessagePassing* liembs_study_mpi_world(std::string* error);
