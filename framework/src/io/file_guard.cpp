// Outputs never replace an input (liembs/io/file_guard.hpp).
#include <liembs/error.hpp>
#include <liembs/io/file_guard.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace liembs {

namespace {

struct InputFile {
  dev_t device;
  ino_t inode;
  timespec changed;  // st_ctim when read
  std::string path;  // as the user or the file that names it spelled it

  // Whether `info` is this file: the same device and inode, and not a later file that got the
  // inode of this one once it was deleted (a long-lived process: tests, Python).
  bool is(const struct stat& info) const {
    if (info.st_dev != device || info.st_ino != inode) return false;
    if (info.st_ctim.tv_sec == changed.tv_sec && info.st_ctim.tv_nsec == changed.tv_nsec) return true;
    struct stat now {};
    return ::stat(path.c_str(), &now) == 0 && now.st_dev == device && now.st_ino == inode;
  }
};

struct Inputs {
  std::mutex mutex;
  std::vector<InputFile> files;
  int open_scopes = 0;
};

Inputs& inputs() {
  static Inputs instance;
  return instance;
}

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a fifo (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

void note_input(const std::filesystem::path& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return;
  Inputs& all = inputs();
  std::lock_guard lock(all.mutex);
  for (auto& known : all.files)
    if (known.device == info.st_dev && known.inode == info.st_ino) {
      known.changed = info.st_ctim;
      known.path = file.string();
      return;
    }
  all.files.push_back({info.st_dev, info.st_ino, info.st_ctim, file.string()});
}

void check_output(const std::filesystem::path& target) {
  const std::string name = target.string();
  const auto file_name = target.filename();
  if (file_name.empty() || file_name == "." || file_name == "..")
    throw ConfigError(name + ": an output needs a file name (the path names a folder)");
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  struct stat info {};
  if (::stat(folder.c_str(), &info) == 0 && !S_ISDIR(info.st_mode))
    throw ConfigError(name + ": cannot write there: " + folder.string() + " is " + kind_of(info.st_mode) +
                      ", not a folder");
  if (::lstat(target.c_str(), &info) != 0) {
    if (errno == ENOENT) return;  // a new file: no input can be it
    throw Error(name + ": cannot inspect the output path: " + std::strerror(errno));
  }
  if (S_ISLNK(info.st_mode)) {
    std::error_code ec;
    const auto resolved = std::filesystem::weakly_canonical(target, ec);
    throw ConfigError(name + ": the output path is a symbolic link" +
                      (ec ? std::string() : " (to " + resolved.string() + ")") +
                      "; outputs are written as regular files of the output folder, never through a link "
                      "(remove the link or name its target)");
  }
  if (!S_ISREG(info.st_mode))
    throw ConfigError(name + ": the output path is " + kind_of(info.st_mode) +
                      "; outputs are written only to new or regular files");
  Inputs& all = inputs();
  std::lock_guard lock(all.mutex);
  for (const auto& known : all.files)
    if (known.is(info))
      throw ConfigError(name + ": the output would replace the input " + known.path +
                        (known.path == name ? "" : " (the same file)") +
                        "; choose another output name or folder");
}

void prepare_output_folder(const std::filesystem::path& folder) {
  struct stat info {};
  if (::stat(folder.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode))
      throw ConfigError(folder.string() + ": the output folder exists and is " + kind_of(info.st_mode) + ", not a folder");
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) {
    if (ec == std::errc::not_a_directory || ec == std::errc::file_exists)
      throw ConfigError(folder.string() + ": cannot create the output folder: " + ec.message());
    throw Error(folder.string() + ": cannot create the output folder: " + ec.message());
  }
}

InputScope::InputScope() {
  Inputs& all = inputs();
  std::lock_guard lock(all.mutex);
  ++all.open_scopes;
}

InputScope::~InputScope() {
  Inputs& all = inputs();
  std::lock_guard lock(all.mutex);
  if (--all.open_scopes == 0) all.files.clear();
}

}  // namespace liembs
