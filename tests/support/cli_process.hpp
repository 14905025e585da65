#pragma once
// Tests that run the liembs program as a child process (LIEMBS_CLI, set for every test
// program): scratch folders, whole-file reads and one run with its exit status and output.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cli_test {  // not in namespace liembs: the tests call their runner liembs()

struct CliResult {
  int status;  // the exit status, -1 when the program did not exit normally
  std::string out, err;
};

// A CSV text as written by liembs: the header's names and every data row as numbers.
struct CsvTable {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
};

inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  for (std::string field; std::getline(stream, field, ',');) fields.push_back(field);
  return fields;
}

inline CsvTable parse_csv(const std::string& text) {
  CsvTable table;
  std::stringstream lines(text);
  std::string line;
  if (std::getline(lines, line)) table.names = csv_fields(line);
  while (std::getline(lines, line)) {
    std::vector<double>& row = table.rows.emplace_back();
    for (const std::string& field : csv_fields(line)) row.push_back(std::stod(field));
  }
  return table;
}

// A path in single quotes, for a TOML string or a shell word. (Not "'" + path.string() + "'":
// GCC 12's -Wrestrict misreads operator+(const char*, std::string&&), GCC bug 105329.)
inline std::string single_quoted(const std::filesystem::path& path) {
  std::string quoted(1, '\'');
  quoted += path.string();
  quoted += '\'';
  return quoted;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// An empty folder <temp>/<prefix>-<pid>/<name>, one set of folders per test process.
inline std::filesystem::path scratch_folder(const std::string& prefix, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs liembs with `arguments` (already shell-quoted where needed) and LIEMBS_PLUGIN_PATH unset,
// from `cwd` when given, else from the test's folder, started by `launcher` when given (e.g.
// "mpirun -np 2 "); stdout and stderr go through files in `io`.
inline CliResult run_liembs(const std::string& arguments, const std::filesystem::path& io,
                            const std::filesystem::path& cwd = {}, const std::string& launcher = {}) {
  const std::string command = (cwd.empty() ? std::string() : "cd '" + cwd.string() + "' && ") + launcher +
                              "env -u LIEMBS_PLUGIN_PATH '" LIEMBS_CLI "' " + arguments + " >'" +
                              (io / "out").string() + "' 2>'" + (io / "err").string() + "'";
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(io / "out"), read_file(io / "err")};
}

// Runs a shell command (already quoted) with stdout and stderr through files in `io`.
inline CliResult run_command(const std::string& command, const std::filesystem::path& io) {
  const int raw = std::system((command + " >'" + (io / "out").string() + "' 2>'" + (io / "err").string() + "'").c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(io / "out"), read_file(io / "err")};
}

}  // namespace cli_test
