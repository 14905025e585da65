#pragma once
// An output file that appears under its name only when complete: data goes to a
// temporary file in the same folder, commit() renames it into place, and destruction
// without commit() removes it.
#include <filesystem>
#include <fstream>

namespace liembs {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return stream_; }
  void commit();  // throws Error if writing or renaming failed

 private:
  std::filesystem::path target_, temporary_;
  std::ofstream stream_;
  bool committed_ = false;
};

}  // namespace liembs
