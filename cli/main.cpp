// liembs: run, validate and compare multibody simulations described in TOML files, and
// list the available plugins.
#include "commands.hpp"

#include <liembs/host/registry.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/version.hpp>

#include <cstring>
#include <iostream>

namespace {

const std::string usage = std::string(
    "Usage: liembs <command> [options]\n"
    "\n"
    "Commands:\n"
    "  run FILE.toml       integrate the model of FILE and write trajectory.csv and summary.json\n"
    "  validate FILE.toml  check FILE (schema, model, plugins) without running it\n"
    "  compare FILE.toml   run FILE for every combination of --vary values and print a table\n"
    "  eval FILE.toml      evaluate FILE's algorithm for the states of a CSV file (--states, --output)\n"
    "  linearize FILE.toml A and B of the tree's x' = f(x, tau) at the initial state or --at T (A.csv, B.csv)\n"
    "  study STUDY.toml    run the cases of a study file; write results.csv, study.json, report.html\n"
    "  view RUN_DIR        write RUN_DIR/view.html: the run's trajectory animated in 3-D, a column plotted\n"
    "  plugins             list the plugin components found on the search path (--options NAME: their options)\n"
    "  outputs             list the columns of trajectory.csv and the keys of summary.json\n"
    "\n"
    "Run 'liembs <command> --help' for the options of a command.\n"
    "Plugin search path, in order: ") + liembs::search_order_text() + ".\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace liembs::cli;
  if (argc < 2) {
    std::cerr << usage;
    return exit_usage;
  }
  const std::string command = argv[1];
  const std::vector<std::string> arguments(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << usage;
    return exit_ok;
  }
  if (command == "--version") {
    std::cout << "liembs " << LIEMBS_VERSION << "\n";
    return exit_ok;
  }
  // Commands that write outputs stop at a safe point on SIGINT/SIGTERM and remove their
  // temporaries (liembs/util/interrupt.hpp).
  if (command == "run" || command == "compare" || command == "eval" || command == "linearize" || command == "view")
    liembs::install_interrupt_handlers();
  if (command == "run") return guarded("run", run_command, arguments);
  if (command == "validate") return guarded("validate", validate_command, arguments);
  if (command == "plugins") return guarded("plugins", plugins_command, arguments);
  if (command == "outputs") return guarded("outputs", outputs_command, arguments);
  if (command == "compare") return guarded("compare", compare_command, arguments);
  if (command == "eval") return guarded("eval", eval_command, arguments);
  if (command == "linearize") return guarded("linearize", linearize_command, arguments);
  if (command == "study") return guarded("study", study_command, arguments);
  if (command == "view") return guarded("view", view_command, arguments);
  std::cerr << "liembs: unknown command '" << command << "'\n\n" << usage;
  return exit_usage;
}
