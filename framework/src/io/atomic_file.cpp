#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/util/interrupt.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <csignal>

#include <cerrno>
#include <cstring>

namespace liembs {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  check_output(target_);  // not an input, not a link, device, fifo or folder (throws ConfigError)
  std::string name = target_.filename().string();
  name.insert(0, 1, '.');
  name.append(".tmp-").append(std::to_string(::getpid()));
  temporary_ = target_.parent_path() / name;
  // The temporary is created here, new (a stale one of a dead process with this pid is removed
  // first; a link planted under its name is removed, never followed).
  std::error_code ec;
  std::filesystem::remove(temporary_, ec);
  const int fd = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) throw Error(target_.string() + ": cannot create the output file: " + std::strerror(errno));
  ::close(fd);
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

void commit_together(const std::vector<AtomicFile*>& files, const std::vector<std::filesystem::path>& stale) {
  sigset_t interrupts, previous;
  sigemptyset(&interrupts);
  sigaddset(&interrupts, SIGINT);
  sigaddset(&interrupts, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &interrupts, &previous);
  try {
    for (AtomicFile* file : files)
      if (file) file->commit();
    for (const auto& path : stale) {
      std::error_code ec;
      std::filesystem::remove(path, ec);
      if (ec) throw Error(path.string() + ": cannot remove the output of an earlier run: " + ec.message());
    }
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);  // a signal that came meanwhile is handled now
}

}  // namespace liembs
