// liembs eval: evaluates the algorithm and representation chosen in a TOML file for many
// states read from a CSV or .npy file, on every core (liembs/batch/evaluate_file.hpp,
// docs/algorithms.md "liembs eval").
#include "commands.hpp"

#include <liembs/batch/evaluate_file.hpp>
#include <liembs/error.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/progress_line.hpp>

#include <boost/program_options.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace po = boost::program_options;

namespace liembs::cli {

int eval_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  options.add_options()
      ("states", po::value<std::string>(), "CSV file of states (a header names the columns, docs/algorithms.md) or .npy array (rows x the inputs in --columns order)")
      ("output,o", po::value<std::string>(), "CSV or .npy file to write (written only if every row succeeds)")
      ("threads", po::value<int>(), "threads to evaluate on (default: every core this process may use; at most the machine's hardware threads)")
      ("set", po::value<std::vector<std::string>>()->composing(), "override a value of the file (repeatable)")
      ("plugin-path", po::value<std::vector<std::string>>()->composing(), "search this plugin folder first")
      ("columns", "print the input and output columns for FILE and exit");
  const auto parsed =
      parse_command_line("eval", "FILE.toml --states IN.csv|IN.npy --output OUT.csv|OUT.npy [options]", options,
                         arguments, FileArgument{"TOML file", "FILE.toml --states IN.csv --output OUT.csv"});
  if (parsed.help) return exit_ok;
  const auto& values = parsed.values;
  const bool list_columns = values.count("columns") > 0;
  if (!list_columns && (!values.count("states") || !values.count("output")))
    throw po::error("eval needs --states IN.csv and --output OUT.csv");

  Registry registry;
  add_plugin_paths(registry, values);
  auto document = load_document(values);
  Run run = load_run(document, registry, RunPurpose::evaluate);
  const auto& inputs = run.evaluator->input_columns();
  const auto& outputs = run.evaluator->output_columns();
  if (list_columns) {
    std::cout << "inputs:";
    for (const auto& name : inputs) std::cout << ' ' << name;
    std::cout << "\noutputs:";
    for (const auto& name : outputs) std::cout << ' ' << name;
    std::cout << "\n";
    return exit_ok;
  }
  const unsigned threads = values.count("threads") ? thread_count_option("eval", values, "threads") : 0;  // 0: every core
  BatchEvaluation batch(run, threads);
  const std::string states = values["states"].as<std::string>();
  // "12345 states (12 %)" on a terminal, for inputs that take more than a second.
  ProgressLine line;
  FileProgress progress;
  if (line.terminal())
    progress = [&line](std::size_t rows, double fraction) {
      if (!line.due()) return;
      char text[96];
      if (std::isnan(fraction))
        std::snprintf(text, sizeof text, "%zu states", rows);
      else
        std::snprintf(text, sizeof text, "%zu states (%3.0f %%)", rows, 100.0 * fraction);
      line.show(text);
    };
  const FileEvaluation result =
      evaluate_file(batch, states, values["output"].as<std::string>(), run.algorithm_name, {}, progress);
  line.clear();
  if (!result.dropped_columns.empty()) {
    std::cerr << "liembs eval: columns not copied to the .npy output (it holds the outputs only):";
    for (const auto& name : result.dropped_columns) std::cerr << ' ' << name;
    std::cerr << "\n";
  }
  std::cerr << "liembs eval: " << result.rows << " state(s) evaluated with algorithm '" << run.algorithm_name
            << "', representation '" << run.representation_name << "' on up to " << batch.threads() << " thread(s)\n";
  return exit_ok;
}

}  // namespace liembs::cli
