#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>

#include <unistd.h>

namespace liembs {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  std::string name = target_.filename().string();
  name.insert(0, 1, '.');
  name.append(".tmp-").append(std::to_string(::getpid()));
  temporary_ = target_.parent_path() / name;
  stream_.open(temporary_, std::ios::out | std::ios::trunc);
  if (!stream_) throw Error(target_.string() + ": cannot create the output file");
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  stream_.close();
  std::error_code ec;
  std::filesystem::remove(temporary_, ec);
}

void AtomicFile::commit() {
  stream_.flush();
  const bool good = static_cast<bool>(stream_);
  stream_.close();
  if (!good) throw Error(target_.string() + ": writing the output file failed");
  std::error_code ec;
  std::filesystem::rename(temporary_, target_, ec);
  if (ec) throw Error(target_.string() + ": cannot move the finished file into place: " + ec.message());
  committed_ = true;
}

}  // namespace liembs
