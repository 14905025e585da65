#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/util/interrupt.hpp>

#include <unistd.h>

namespace liembs {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  std::error_code ec;
  const auto status = std::filesystem::status(target_, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw Error(target_.string() + ": exists and is not a regular file; outputs are written to regular files");
  std::string name = target_.filename().string();
  name.insert(0, 1, '.');
  name.append(".tmp-").append(std::to_string(::getpid()));
  temporary_ = target_.parent_path() / name;
  stream_.open(temporary_, std::ios::out | std::ios::trunc);
  if (!stream_) throw Error(target_.string() + ": cannot create the output file");
  interrupt_slot_ = register_temporary(temporary_.string());
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  stream_.close();
  std::error_code ec;
  std::filesystem::remove(temporary_, ec);
  unregister_temporary(interrupt_slot_);
}

void AtomicFile::check() const {
  if (!stream_) throw Error(target_.string() + ": writing the output file failed (disk full or file too large?)");
}

void AtomicFile::commit() {
  stream_.flush();
  stream_.close();  // sets failbit if the last write or the close fails
  const bool good = static_cast<bool>(stream_);
  if (!good) throw Error(target_.string() + ": writing the output file failed (disk full or file too large?)");
  std::error_code ec;
  std::filesystem::rename(temporary_, target_, ec);
  if (ec) throw Error(target_.string() + ": cannot move the finished file into place: " + ec.message());
  committed_ = true;
  unregister_temporary(interrupt_slot_);
}

}  // namespace liembs
