#pragma once
// Subcommands of the liembs program. Each returns the process exit status.
#include <string>
#include <vector>

namespace liembs::cli {

// Exit statuses, documented in README.md.
enum ExitStatus : int {
  exit_ok = 0,
  exit_usage = 1,
  exit_config = 2,
  exit_plugin = 3,
  exit_model = 4,
  exit_simulation = 5,
  exit_other = 6,
};

int run_command(const std::vector<std::string>& arguments);
int validate_command(const std::vector<std::string>& arguments);
int plugins_command(const std::vector<std::string>& arguments);
int compare_command(const std::vector<std::string>& arguments);
int eval_command(const std::vector<std::string>& arguments);
int study_command(const std::vector<std::string>& arguments);

// Runs `body`, turning LieMBS errors into a message on stderr and an exit status.
int guarded(const char* command, int (*body)(const std::vector<std::string>&),
            const std::vector<std::string>& arguments);

}  // namespace liembs::cli
