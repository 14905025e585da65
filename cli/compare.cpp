// liembs compare: runs one TOML file for every combination of --vary values and prints a
// side-by-side table (the seed of the comparative studies, docs/studies.md).
#include "commands.hpp"

#include <liembs/io/atomic_file.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/interrupt.hpp>

#include <boost/program_options.hpp>

#include <iomanip>
#include <iostream>
#include <sstream>

namespace po = boost::program_options;

namespace liembs::cli {

namespace {

struct Variation {
  std::string key;
  std::vector<std::string> values;
};

// "key=v1,v2,..." with commas inside [] or quotes kept (TOML arrays and strings).
Variation parse_variation(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0)
    throw po::error("--vary " + text + ": expected key.path=value1,value2,...");
  Variation variation{text.substr(0, equals), {}};
  std::string current;
  int depth = 0;
  bool quoted = false;
  for (const char c : text.substr(equals + 1)) {
    if (c == '"') quoted = !quoted;
    if (!quoted && c == '[') ++depth;
    if (!quoted && c == ']') --depth;
    if (c == ',' && depth == 0 && !quoted) {
      variation.values.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  variation.values.push_back(current);
  for (const auto& value : variation.values)
    if (value.empty()) throw po::error("--vary " + text + ": empty value");
  return variation;
}

// A CSV field in double quotes, inner quotes doubled (RFC 4180): labels may hold TOML strings.
std::string csv_quoted(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

}  // namespace

int compare_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  options.add_options()
      ("vary", po::value<std::vector<std::string>>()->composing(),
       "key.path=v1,v2,... : values to compare (repeatable; all combinations are run)")
      ("set", po::value<std::vector<std::string>>()->composing(), "override a value for every run (repeatable)")
      ("plugin-path", po::value<std::vector<std::string>>()->composing(), "search this plugin folder first")
      ("output,o", po::value<std::string>(), "write comparison.csv into this folder")
      ("quiet,q", "print nothing on success");
  const auto parsed = parse_command_line("compare", "FILE.toml --vary key=v1,v2 [--vary ...] [options]", options,
                                         arguments, FileArgument{"TOML file", "FILE.toml --vary key=v1,v2"});
  if (parsed.help) return exit_ok;
  const auto& values = parsed.values;
  if (!values.count("vary")) throw po::error("nothing to compare: give at least one --vary key=v1,v2");

  std::vector<Variation> variations;
  for (const auto& text : values["vary"].as<std::vector<std::string>>()) variations.push_back(parse_variation(text));

  // Cartesian product of the variations, the last one varying fastest.
  std::vector<std::vector<std::string>> combinations{{}};
  for (const auto& variation : variations) {
    std::vector<std::vector<std::string>> next;
    for (const auto& combination : combinations)
      for (const auto& value : variation.values) {
        auto extended = combination;
        extended.push_back(variation.key + "=" + value);
        next.push_back(std::move(extended));
      }
    combinations = std::move(next);
  }

  struct Row {
    std::string label;
    RunSummary summary;
  };
  std::vector<Row> rows;
  const std::string case_count = std::to_string(combinations.size());
  for (const auto& combination : combinations) {
    throw_if_interrupted([&] { return "after " + std::to_string(rows.size()) + " of " + case_count + " cases"; });
    Registry registry;
    add_plugin_paths(registry, values);
    auto document = load_document(values);
    std::string label;
    for (const auto& assignment : combination) {
      document->set_override(assignment);
      label += (label.empty() ? "" : " ") + assignment;
    }
    Run run = load_run(document, registry);
    try {
      rows.push_back({label, execute_run(run, RunOutput{})});
    } catch (const Interrupted& interrupted) {
      throw Interrupted(interrupted.signal(), "in case " + std::to_string(rows.size() + 1) + " of " + case_count +
                                                  " (" + label + ") " + interrupted.where() + "; " +
                                                  std::to_string(rows.size()) + " of " + case_count + " cases done");
    }
  }

  std::size_t width = 9;
  for (const auto& row : rows) width = std::max(width, row.label.size() + 2);
  if (!values.count("quiet")) {
    std::cout << std::left << std::setw(static_cast<int>(width)) << "variant" << std::right << std::setw(9) << "steps"
              << std::setw(12) << "wall [s]" << std::setw(13) << "steps/s" << std::setw(16) << "energy drift"
              << std::setw(18) << "ang.mom. drift" << std::setw(15) << "orthogonality" << "\n";
    for (const auto& row : rows) {
      const auto& s = row.summary;
      std::cout << std::left << std::setw(static_cast<int>(width)) << row.label << std::right << std::setw(9)
                << s.steps << std::setw(12) << std::fixed << std::setprecision(4) << s.wall_seconds << std::setw(13)
                << std::setprecision(0) << s.steps / std::max(s.wall_seconds, 1e-12) << std::scientific
                << std::setprecision(3) << std::setw(16) << s.energy_drift_max << std::setw(18)
                << s.angular_momentum_drift_max << std::setw(15) << s.orthogonality_error_max << "\n"
                << std::defaultfloat;
    }
  }
  if (values.count("output")) {
    const std::filesystem::path directory = values["output"].as<std::string>();
    prepare_output_folder(directory);
    AtomicFile file(directory / "comparison.csv");
    auto& out = file.stream();
    out << "variant,steps,wall_seconds,steps_per_second,energy_drift_max_relative,"
           "angular_momentum_drift_max_relative,orthogonality_error_max\n"
        << std::setprecision(17);
    for (const auto& row : rows) {
      const auto& s = row.summary;
      out << csv_quoted(row.label) << ',' << s.steps << ',' << s.wall_seconds << ','
          << s.steps / std::max(s.wall_seconds, 1e-12) << ',' << s.energy_drift_max << ','
          << s.angular_momentum_drift_max << ',' << s.orthogonality_error_max << '\n';
    }
    file.commit();
  }
  return exit_ok;
}

}  // namespace liembs::cli
