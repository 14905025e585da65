#pragma once
// An output file that appears under its name only when complete: data goes to a
// temporary file in the same folder, commit() renames it into place, and destruction
// without commit() removes it. The temporary is registered with the interrupt facility
// (liembs/util/interrupt.hpp), so a second SIGINT or SIGTERM removes it too.
#include <filesystem>
#include <fstream>

namespace liembs {

class AtomicFile {
 public:
  // Throws Error if the target exists and is not a regular file (a folder, a device such
  // as /dev/full) or the temporary cannot be created.
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

}  // namespace liembs
