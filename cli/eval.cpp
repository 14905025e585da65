// liembs eval: evaluates the algorithm and representation chosen in a TOML file for many
// states read from a CSV file (README.md, "liembs eval").
#include "commands.hpp"

#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/plugin/registry.hpp>
#include <liembs/sim/run.hpp>
#include <liembs/util/interrupt.hpp>

#include <boost/program_options.hpp>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace po = boost::program_options;

namespace liembs::cli {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  for (std::string field; std::getline(stream, field, ',');) {
    const auto first = field.find_first_not_of(" \t\r");
    const auto last = field.find_last_not_of(" \t\r");
    fields.push_back(first == std::string::npos ? std::string() : field.substr(first, last - first + 1));
  }
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

}  // namespace

int eval_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  options.add_options()
      ("states", po::value<std::string>(), "CSV file of states, one per row, columns named as in README.md")
      ("output,o", po::value<std::string>(), "CSV file to write (written only if every row succeeds)")
      ("set", po::value<std::vector<std::string>>()->composing(), "override a value of the file (repeatable)")
      ("plugin-path", po::value<std::vector<std::string>>()->composing(), "search this plugin folder first")
      ("columns", "print the input and output columns for FILE and exit")
      ("help,h", "show this help");
  po::options_description all;
  all.add(options);
  all.add_options()("file", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map values;
  po::store(po::command_line_parser(arguments).options(all).positional(positional).run(), values);
  po::notify(values);
  if (values.count("help")) {
    std::cout << "Usage: liembs eval FILE.toml --states IN.csv --output OUT.csv [options]\n\n" << options << "\n";
    return exit_ok;
  }
  if (!values.count("file")) throw po::error("missing the TOML file: liembs eval FILE.toml --states IN.csv --output OUT.csv");
  const bool list_columns = values.count("columns") > 0;
  if (!list_columns && (!values.count("states") || !values.count("output")))
    throw po::error("eval needs --states IN.csv and --output OUT.csv");

  Registry registry;
  registry.append_search_path(Registry::default_search_path());
  if (values.count("plugin-path")) {
    std::vector<SearchPathEntry> extra;
    for (const auto& path : values["plugin-path"].as<std::vector<std::string>>()) extra.push_back({path, "--plugin-path", true});
    registry.prepend_search_path(std::move(extra));
  }
  auto document = ConfigDocument::load(values["file"].as<std::string>());
  if (values.count("set"))
    for (const auto& assignment : values["set"].as<std::vector<std::string>>()) document->set_override(assignment);
  Run run = load_run(document, registry, RunPurpose::evaluate);
  BatchEvaluator& evaluator = *run.evaluator;
  const auto& inputs = evaluator.input_columns();
  const auto& outputs = evaluator.output_columns();
  if (list_columns) {
    std::cout << "inputs:";
    for (const auto& name : inputs) std::cout << ' ' << name;
    std::cout << "\noutputs:";
    for (const auto& name : outputs) std::cout << ' ' << name;
    std::cout << "\n";
    return exit_ok;
  }

  const std::string states_file = values["states"].as<std::string>();
  std::ifstream in(states_file);
  if (!in) throw Error(states_file + ": cannot read the states file");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError(states_file + ":1: the file is empty; expected a header row");
  const std::vector<std::string> header = split_csv_line(line);
  std::map<std::string, std::size_t> column_of;
  for (std::size_t c = 0; c < header.size(); ++c) {
    if (header[c].empty()) throw ConfigError(states_file + ":1: column " + std::to_string(c + 1) + " has no name");
    if (!column_of.emplace(header[c], c).second)
      throw ConfigError(states_file + ":1: column '" + header[c] + "' appears twice");
  }
  std::vector<std::size_t> input_index;
  for (const auto& name : inputs) {
    const auto found = column_of.find(name);
    if (found == column_of.end()) {
      std::string expected;
      for (const auto& input : inputs) expected += (expected.empty() ? "" : ",") + input;
      throw ConfigError(states_file + ":1: missing column '" + name + "'; the inputs of algorithm '" +
                        run.algorithm_name + "' are: " + expected);
    }
    input_index.push_back(found->second);
  }
  std::vector<std::size_t> passthrough;  // other columns (e.g. time) are copied to the output
  for (std::size_t c = 0; c < header.size(); ++c)
    if (std::find(input_index.begin(), input_index.end(), c) == input_index.end()) passthrough.push_back(c);

  AtomicFile output(values["output"].as<std::string>());
  auto& out = output.stream();
  out << std::setprecision(17);
  bool first = true;
  for (const std::size_t c : passthrough) {
    out << (first ? "" : ",") << header[c];
    first = false;
  }
  for (const auto& name : outputs) {
    out << (first ? "" : ",") << name;
    first = false;
  }
  out << "\n";

  std::vector<double> input_values(inputs.size()), output_values(outputs.size());
  long long line_number = 1, rows = 0;
  auto interrupted_where = [&] { return "after " + std::to_string(rows) + " state(s) of " + states_file; };
  while (std::getline(in, line)) {
    ++line_number;
    throw_if_interrupted(interrupted_where);
    if ((rows & 1023) == 0) output.check();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> fields = split_csv_line(line);
    const std::string where = states_file + ":" + std::to_string(line_number);
    if (fields.size() != header.size())
      throw ConfigError(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                        std::to_string(header.size()));
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string& text = fields[input_index[i]];
      char* end = nullptr;
      errno = 0;
      const double value = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value))
        throw ConfigError(where + ": column '" + inputs[i] + "': '" + text + "' is not a finite number");
      input_values[i] = value;
    }
    try {
      evaluator.evaluate(input_values.data(), output_values.data());
    } catch (const SimulationError& error) {
      throw SimulationError(where + ": " + error.what());
    } catch (const Error& error) {
      throw Error(where + ": " + error.what());
    }
    first = true;
    for (const std::size_t c : passthrough) {
      out << (first ? "" : ",") << fields[c];
      first = false;
    }
    for (const double value : output_values) {
      out << (first ? "" : ",") << value;
      first = false;
    }
    out << "\n";
    ++rows;
  }
  throw_if_interrupted(interrupted_where);
  output.commit();
  std::cerr << "liembs eval: " << rows << " state(s) evaluated with algorithm '" << run.algorithm_name
            << "', representation '" << run.representation_name << "'\n";
  return exit_ok;
}

}  // namespace liembs::cli
