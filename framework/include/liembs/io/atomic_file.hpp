#pragma once
// An output file that appears under its name only when complete: data goes to a
// temporary file in the same folder, commit() renames it into place, and destruction
// without commit() removes it. The temporary is registered with the interrupt facility
// (liembs/util/interrupt.hpp), so a second SIGINT or SIGTERM removes it too.
#include <filesystem>
#include <fstream>
#include <vector>

namespace liembs {

class AtomicFile {
 public:
  // Throws ConfigError if the target is an input of the operation or not a regular file (a
  // folder, a device such as /dev/full, a link: liembs/io/file_guard.hpp), Error if the
  // temporary cannot be created.
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return stream_; }
  // The temporary file, for writers that write at offsets from threads (pwrite on a
  // descriptor of their own) beside the stream.
  const std::filesystem::path& temporary_path() const { return temporary_; }
  // Throws Error if writing has failed so far (e.g. a full disk); lets long writers stop early.
  void check() const;
  void commit();  // throws Error if writing or renaming failed

 private:
  std::filesystem::path target_, temporary_;
  std::ofstream stream_;
  int interrupt_slot_ = -1;
  bool committed_ = false;
};

// Commits `files` (null entries skipped) one after the other and removes the `stale` paths
// (outputs of an earlier run that this one does not write again), with SIGINT and SIGTERM
// blocked meanwhile: no interrupt falls between them, so a set of outputs (a study's
// results.csv, study.json and report.html) is replaced together. Throws as commit(); a
// failed rename leaves the files before it committed.
void commit_together(const std::vector<AtomicFile*>& files, const std::vector<std::filesystem::path>& stale = {});

}  // namespace liembs
