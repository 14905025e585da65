#pragma once
// Subcommands of the liembs program. Each returns the process exit status.
#include <liembs/config/config_table.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>

#include <boost/program_options.hpp>

#include <filesystem>
#include <memory>
#include <optional>
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
int outputs_command(const std::vector<std::string>& arguments);
int compare_command(const std::vector<std::string>& arguments);
int eval_command(const std::vector<std::string>& arguments);
int linearize_command(const std::vector<std::string>& arguments);
int study_command(const std::vector<std::string>& arguments);
int view_command(const std::vector<std::string>& arguments);

// The command line of a subcommand, parsed.
struct ParsedOptions {
  boost::program_options::variables_map values;
  bool help = false;  // --help was given and the usage printed: nothing else to do
};

// The positional FILE of a subcommand; without it: "missing the <what>: liembs <command> <usage>".
struct FileArgument {
  std::string what;
  std::string usage;
};

// Parses `arguments` against `options` plus --help (and FILE, stored as "file", when `file` is
// given). --help prints "Usage: liembs <command> <synopsis>" and the options. Usage errors are
// boost::program_options errors, which guarded() turns into exit_usage.
ParsedOptions parse_command_line(const char* command, const std::string& synopsis,
                                 boost::program_options::options_description& options,
                                 const std::vector<std::string>& arguments, const std::optional<FileArgument>& file);

// --plugin-path, and --set with it for the commands that run one file (run, validate).
void add_plugin_path_option(boost::program_options::options_description& options);
void add_common_run_options(boost::program_options::options_description& options);

// --output and --quiet of the commands that write into an output folder (run, linearize).
void add_output_folder_options(boost::program_options::options_description& options);
// The --output folder, else the file's [output] directory, else liembs-output/<file stem>.
std::filesystem::path output_folder(const boost::program_options::variables_map& values, const Run& run);

// The count of option `name` (--threads, --jobs): at least 1, else a usage error; more than
// machine_threads() (liembs/batch/batch_evaluation.hpp) is capped there, with a warning on stderr.
unsigned thread_count_option(const char* command, const boost::program_options::variables_map& values, const char* name);

// FILE loaded with its --set overrides and --plugin-path folders, for a simulation.
Run load_run_from_options(const boost::program_options::variables_map& values, Registry& registry);

// The default plugin search path behind the --plugin-path folders, in their order.
void add_plugin_paths(Registry& registry, const boost::program_options::variables_map& values);

// FILE with the --set overrides applied in their order.
std::shared_ptr<ConfigDocument> load_document(const boost::program_options::variables_map& values);

// Runs `body`, turning LieMBS errors into a message on stderr and an exit status.
int guarded(const char* command, int (*body)(const std::vector<std::string>&),
            const std::vector<std::string>& arguments);

// Inside a catch block: prints the exception being handled as guarded() does (each line
// starting with `prefix`) and returns its exit status.
int report_exception(const char* command, const std::string& prefix);

}  // namespace liembs::cli
