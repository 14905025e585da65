#pragma once
// A child process for the signal tests: started with SIGINT, SIGTERM and SIGPIPE at their
// default action and no signal blocked (a background job of a non-interactive shell would
// ignore SIGINT), stdout to /dev/null and stderr to a file; polled with a deadline, killed
// if the test ends early. Include after Catch.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace cli_test {

// The processes whose parent is `parent` (from /proc).
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream file(entry.path() / "stat");
    std::string stat;
    std::getline(file, stat);  // pid (comm) state ppid ...
    const auto after_name = stat.rfind(')');
    if (after_name == std::string::npos) continue;
    std::istringstream fields(stat.substr(after_name + 1));
    std::string state;
    pid_t ppid = 0;
    if (fields >> state >> ppid && ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

struct SignalledProcess {
  pid_t pid = -1;
  std::filesystem::path err;

  // Runs `argv` (argv[0] a path, or a name looked up on the PATH) with this process's
  // environment plus `environment` ("NAME=value" entries, which win). With
  // `own_process_group`, the child leads a process group of its own (pgid = pid), so that
  // kill(-pid, ...) reaches it and its children as Ctrl-C on a terminal does, and not the test.
  SignalledProcess(const std::vector<std::string>& arguments, const std::filesystem::path& err_file,
                   const std::vector<std::string>& environment = {}, bool own_process_group = false)
      : err(err_file) {
    std::vector<std::string> strings = arguments;
    std::vector<char*> argv;
    for (auto& a : strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> environment_strings = environment;
    for (char** entry = environ; *entry; ++entry) {
      const std::string text = *entry;
      const std::string name = text.substr(0, text.find('=') + 1);
      bool replaced = false;
      for (const auto& own : environment) replaced = replaced || own.rfind(name, 0) == 0;
      if (!replaced) environment_strings.push_back(text);
    }
    std::vector<char*> envp;
    for (auto& e : environment_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, static_cast<short>(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
                                                             (own_process_group ? POSIX_SPAWN_SETPGROUP : 0)));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int failed = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    REQUIRE(failed == 0);
  }
  SignalledProcess(const SignalledProcess&) = delete;
  SignalledProcess& operator=(const SignalledProcess&) = delete;

  // True once the process `of` (default: this child) has installed its handler for `signal`
  // (the SigCgt mask of /proc).
  bool catches(int signal, pid_t of = 0) const {
    std::ifstream status("/proc/" + std::to_string(of ? of : pid) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("SigCgt:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1u;
    return false;
  }

  // Polls `condition` while the child runs, for at most `seconds`.
  template <class Condition>
  void wait_for(Condition condition, int seconds = 120) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!condition()) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      int status = 0;
      REQUIRE(::waitpid(pid, &status, WNOHANG) == 0);  // still running
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // The exit status, or -signal if the child was killed by a signal.
  int finish() {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  ~SignalledProcess() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

}  // namespace cli_test
