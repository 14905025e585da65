// Fuzz target 'output-path': an output path (relative, inside a scratch folder) through
// AtomicFile, the one writer every output goes through, with the output guard
// (liembs/io/file_guard.hpp) in front. The folder holds an input that was read (in.csv), a
// link to it, a hard link of it, a link to a subfolder, a fifo and a folder: whatever the
// path's spelling, the input, the links, the fifo and the folder stay as they were, and a
// refusal is a liembs::Error. Paths that leave the folder (absolute, or ".." above it) are
// skipped: they would write outside the scratch folder.
#include "../fuzz_support.hpp"

#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/file_guard.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;

namespace {

const std::string input_text = "q.a,q.b\n1,2\n";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The fixture, laid anew for every input.
fs::path lay_out() {
  const fs::path root = liembs::fuzz::scratch_folder() / "output-path";
  fs::remove_all(root);
  fs::create_directories(root / "sub");
  std::ofstream(root / "in.csv", std::ios::binary) << input_text;
  fs::create_symlink("in.csv", root / "link.csv");
  fs::create_hard_link(root / "in.csv", root / "hard.csv");
  fs::create_directory_symlink("sub", root / "dirlink");
  ::mkfifo((root / "fifo").c_str(), 0600);
  liembs::note_input(root / "in.csv");
  return root;
}

[[noreturn]] void finding(const std::string& path, const char* what) {
  std::fprintf(stderr, "FINDING: output path '%s': %s\n", path.c_str(), what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path(liembs::fuzz::as_text(data, size));
  if (path.empty() || path.size() > 200 || path.find('\0') != std::string::npos || path.front() == '/') return 0;
  const fs::path relative = fs::path(path).lexically_normal();
  if (relative.empty() || *relative.begin() == "..") return 0;  // outside the scratch folder
  const fs::path root = lay_out();
  liembs::fuzz::expect_clean([&] {
    liembs::AtomicFile file(root / path);
    file.stream() << "output\n";
    file.commit();
  });
  if (read(root / "in.csv") != input_text || read(root / "hard.csv") != input_text) finding(path, "the input changed");
  if (!fs::is_symlink(root / "link.csv") || fs::read_symlink(root / "link.csv") != "in.csv") finding(path, "the link changed");
  if (!fs::is_symlink(root / "dirlink") || !fs::is_directory(root / "sub")) finding(path, "a folder or its link changed");
  if (!fs::is_fifo(fs::symlink_status(root / "fifo"))) finding(path, "the fifo was replaced");
  return 0;
}
