#include "commands.hpp"

#include <liembs/batch/batch_evaluation.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/host/output_schema.hpp>
#include <liembs/host/plugin_options.hpp>

#include <liembs/error.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/util/nearest_name.hpp>

#include <boost/program_options.hpp>

#include <cstdio>
#include <iomanip>
#include <iostream>

namespace po = boost::program_options;

namespace liembs::cli {

ParsedOptions parse_command_line(const char* command, const std::string& synopsis, po::options_description& options,
                                 const std::vector<std::string>& arguments, const std::optional<FileArgument>& file) {
  options.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(options);
  po::positional_options_description positional;
  if (file) {
    all.add_options()("file", po::value<std::string>(), "TOML file");
    positional.add("file", 1);
  }
  ParsedOptions parsed;
  po::store(po::command_line_parser(arguments).options(all).positional(positional).run(), parsed.values);
  po::notify(parsed.values);
  if (parsed.values.count("help")) {
    std::cout << "Usage: liembs " << command << " " << synopsis << "\n\n" << options << "\n";
    parsed.help = true;
    return parsed;
  }
  if (file && !parsed.values.count("file"))
    throw po::error("missing the " + file->what + ": liembs " + command + " " + file->usage);
  return parsed;
}

void add_plugin_path_option(po::options_description& options) {
  options.add_options()("plugin-path", po::value<std::vector<std::string>>()->composing(),
                        "search this plugin folder or file first (repeatable)");
}

void add_common_run_options(po::options_description& options) {
  options.add_options()("set", po::value<std::vector<std::string>>()->composing(),
                        "override a value of the file: --set key.path=value (TOML syntax; repeatable)")(
      "unset", po::value<std::vector<std::string>>()->composing(),
      "remove a key of the file before the --set values apply: --unset key.path (repeatable)");
  add_plugin_path_option(options);
}

void add_plugin_paths(Registry& registry, const po::variables_map& values) {
  registry.append_search_path(Registry::default_search_path());
  if (values.count("plugin-path")) {
    std::vector<SearchPathEntry> extra;
    for (const auto& path : values["plugin-path"].as<std::vector<std::string>>())
      extra.push_back({path, "--plugin-path", true});
    registry.prepend_search_path(std::move(extra));
  }
}

std::shared_ptr<ConfigDocument> load_document(const po::variables_map& values) {
  auto document = ConfigDocument::load(values["file"].as<std::string>());
  if (values.count("unset"))
    for (const auto& key : values["unset"].as<std::vector<std::string>>())
      if (!document->remove_key(key))
        throw ConfigError(document->file().string() + ": --unset " + key + ": the file has no key '" + key + "'");
  if (values.count("set"))
    for (const auto& assignment : values["set"].as<std::vector<std::string>>()) document->set_override(assignment);
  return document;
}

void add_output_folder_options(po::options_description& options) {
  options.add_options()
      ("output,o", po::value<std::string>(), "output folder (default: [output] directory, else liembs-output/<file stem>)")
      ("quiet,q", "print nothing on success");
}

std::filesystem::path output_folder(const po::variables_map& values, const Run& run) {
  if (values.count("output")) return values["output"].as<std::string>();
  if (run.output_directory) return *run.output_directory;
  return std::filesystem::path("liembs-output") / run.config_file.stem();
}

unsigned thread_count_option(const char* command, const po::variables_map& values, const char* name) {
  const int asked = values[name].as<int>();
  if (asked < 1) throw po::error(std::string("--") + name + " must be at least 1, not " + std::to_string(asked));
  const unsigned machine = machine_threads();
  if (static_cast<unsigned>(asked) <= machine) return static_cast<unsigned>(asked);
  std::cerr << "liembs " << command << ": --" << name << " " << asked << " is more than the " << machine
            << " hardware threads of this machine; using " << machine << "\n";
  return machine;
}

Run load_run_from_options(const po::variables_map& values, Registry& registry) {
  add_plugin_paths(registry, values);
  return load_run(load_document(values), registry);
}

int guarded(const char* command, int (*body)(const std::vector<std::string>&),
            const std::vector<std::string>& arguments) {
  try {
    return body(arguments);
  } catch (...) {
    return report_exception(command, std::string("liembs ") + command + ": ");
  }
}

int report_exception(const char* command, const std::string& prefix) {
  try {
    throw;
  } catch (const Interrupted& interrupted) {
    std::cerr << prefix << interrupted.what() << "; no output written\n";
    return interrupted.exit_status();
  } catch (const po::error& error) {
    std::cerr << prefix << error.what() << "\n(see 'liembs " << command << " --help')\n";
    return exit_usage;
  } catch (const ConfigError& error) {
    std::cerr << prefix << "error: " << error.what() << "\n";
    return exit_config;
  } catch (const PluginError& error) {
    std::cerr << prefix << "plugin error: " << error.what() << "\n";
    return exit_plugin;
  } catch (const ModelError& error) {
    std::cerr << prefix << "model error: " << error.what() << "\n";
    return exit_model;
  } catch (const SimulationError& error) {
    std::cerr << prefix << "simulation failed: " << error.what() << "\n";
    return exit_simulation;
  } catch (const std::exception& error) {
    std::cerr << prefix << "error: " << error.what() << "\n";
    return exit_other;
  }
}

int run_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  add_common_run_options(options);
  add_output_folder_options(options);
  const auto parsed = parse_command_line("run", "FILE.toml [options]", options, arguments,
                                         FileArgument{"TOML file", "FILE.toml [options]"});
  if (parsed.help) return exit_ok;
  const auto& values = parsed.values;

  Registry registry;
  Run run = load_run_from_options(values, registry);

  RunOutput output;
  output.directory = output_folder(values, run);
  const bool quiet = values.count("quiet") > 0;
  output.progress = !quiet;

  const RunSummary summary = execute_run(run, output);
  if (!quiet) {
    std::cout << "run '" << run.title << "': group " << run.group_name << ", algorithm " << run.algorithm_name
              << ", integrator " << run.integrator_name << " (" << run.integrator->description() << ")\n"
              << "  steps                          " << summary.steps << " of " << run.settings.step_size
              << " s in " << std::setprecision(3) << summary.wall_seconds << " s ("
              << std::fixed << std::setprecision(0) << summary.steps / std::max(summary.wall_seconds, 1e-12)
              << " steps/s)\n"
              << std::scientific << std::setprecision(3)
              << "  energy drift (max relative)    " << summary.energy_drift_max
              << (!summary.prescribed_coordinates.empty() ? "  (prescribed motion: energy is not conserved)"
                  : run.model->is_conservative()           ? ""
                  : !run.model->loads.empty()              ? "  (applied loads: energy is not conserved)"
                                                           : "  (driving functions: energy is not conserved)")
              << "\n";
    if (!summary.prescribed_coordinates.empty()) {
      std::cout << "  prescribed coordinates         ";
      for (std::size_t i = 0; i < summary.prescribed_coordinates.size(); ++i)
        std::cout << (i ? ", " : "") << summary.prescribed_coordinates[i];
      std::cout << " (forces in tau.* columns)\n  work of the prescribed forces  " << summary.prescribed_work << " J\n";
      if (run.model->loads.empty())
        std::cout << "  energy balance error (max rel) " << summary.energy_balance_error_max << "\n";
    }
    std::cout
              << "  angular momentum drift         " << summary.angular_momentum_drift_max
              << (run.model->is_force_free() ? "" : "  (external forces: momentum is not conserved)") << "\n"
              << "  orthogonality error max        " << summary.orthogonality_error_max << "\n"
              << "  outputs in                     " << output.directory->string() << "\n";
    for (const auto& choice : summary.method_choices) std::cout << "  " << choice.statement() << "\n";
  }
  return exit_ok;
}

int validate_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  add_common_run_options(options);
  const auto parsed = parse_command_line("validate", "FILE.toml [options]", options, arguments,
                                         FileArgument{"TOML file", "FILE.toml [options]"});
  if (parsed.help) return exit_ok;
  Registry registry;
  add_plugin_paths(registry, parsed.values);
  auto document = load_document(parsed.values);
  const Run run = load_run(document, registry);
  std::cout << document->file().string() << ": valid (" << run.model->bodies.size() << " bodies; group "
            << run.group_name << ", algorithm " << run.algorithm_name << ", integrator " << run.integrator_name
            << ")\n";
  return exit_ok;
}

// The output schema (host/output_schema.hpp): the trajectory's columns and summary.json's
// keys, as text or as the Markdown tables of docs/user-guide.md.
int outputs_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  options.add_options()("markdown", "print the Markdown tables of docs/user-guide.md");
  const auto parsed = parse_command_line("outputs", "[--markdown]", options, arguments, std::nullopt);
  if (parsed.help) return exit_ok;
  if (parsed.values.count("markdown")) {
    std::cout << "trajectory.csv\n\n" << trajectory_columns_markdown() << "\nsummary.json\n\n" << summary_keys_markdown();
    return exit_ok;
  }
  std::cout << "trajectory.csv columns, in order:\n";
  for (const ColumnFamily& family : trajectory_columns())
    std::cout << "  " << std::left << std::setw(34) << family.pattern << " [" << family.unit << "] " << family.description
              << " (" << family.present << ")\n";
  std::cout << "summary.json keys:\n";
  for (const SummaryKey& key : summary_keys())
    std::cout << "  " << std::left << std::setw(34) << key.key << (key.unit.empty() ? "" : " [") << key.unit
              << (key.unit.empty() ? "" : "]") << " " << key.description << "\n";
  return exit_ok;
}

int plugins_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  add_plugin_path_option(options);
  options.add_options()("options", po::value<std::string>()->implicit_value(""),
                        "print the options NAME declares (key, type, default, admissible values, description); "
                        "without NAME, every component's")(
      "json", "with --options NAME: as JSON")("markdown", "with --options: the Markdown of docs/plugin-options.md");
  // "--options NAME" as "--options=NAME" (an option with an implicit value takes no separate word).
  std::vector<std::string> words;
  for (std::size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i] == "--options" && i + 1 < arguments.size() && !arguments[i + 1].starts_with("-"))
      words.push_back("--options=" + arguments[++i]);
    else
      words.push_back(arguments[i]);
  const auto parsed =
      parse_command_line("plugins", "[--options [NAME] [--json | --markdown]] [options]", options, words, std::nullopt);
  if (parsed.help) return exit_ok;
  Registry registry;
  add_plugin_paths(registry, parsed.values);
  registry.load();

  if (parsed.values.count("options")) {
    const std::string name = parsed.values["options"].as<std::string>();
    if (parsed.values.count("markdown")) {
      if (!name.empty()) throw ConfigError("plugins: --markdown prints every component's options; give --options without a name");
      std::cout << plugin_options_markdown(registry);
      return exit_ok;
    }
    std::vector<const ComponentInfo*> chosen;
    for (const Kind kind : all_kinds())
      for (const auto& info : registry.components())
        if (info.kind == kind && (name.empty() || info.name == name)) chosen.push_back(&info);
    if (chosen.empty()) {
      std::vector<std::string> names;
      for (const auto& info : registry.components()) names.push_back(info.name);
      std::string message = "plugins: no component named '" + name + "'";
      if (const std::string near = nearest_name(name, names); !near.empty()) message += " (did you mean '" + near + "'?)";
      throw PluginError(message + "; available: " + join_names(names));
    }
    if (parsed.values.count("json")) {
      if (chosen.size() != 1) throw ConfigError("plugins: --json prints one component's options; name it (--options NAME)");
      std::cout << plugin_options_json(*chosen.front());
      return exit_ok;
    }
    for (const ComponentInfo* info : chosen) std::cout << plugin_options_text(*info);
    return exit_ok;
  }
  if (parsed.values.count("json") || parsed.values.count("markdown"))
    throw ConfigError("plugins: --json and --markdown go with --options");

  // Columns as wide as their longest entry, two spaces apart.
  std::size_t kind_width = 4, name_width = 4, version_width = 7;
  for (const auto& info : registry.components()) {
    kind_width = std::max(kind_width, to_string(info.kind).size());
    name_width = std::max(name_width, info.name.size());
    version_width = std::max(version_width, info.version.size());
  }
  const auto column = [](std::size_t width) { return std::setw(static_cast<int>(width + 2)); };
  std::cout << std::left << column(kind_width) << "KIND" << column(name_width) << "NAME" << column(version_width)
            << "VERSION" << "SUMMARY\n";
  const std::string file_indent(kind_width + name_width + version_width + 6, ' ');
  for (const Kind kind : all_kinds())
    for (const auto& info : registry.components())
      if (info.kind == kind)
        std::cout << column(kind_width) << to_string(kind) << column(name_width) << info.name << column(version_width)
                  << info.version << info.summary << "\n" << file_indent << "file: " << info.library << "\n";
  for (const auto& info : registry.shadowed())
    std::cout << "shadowed: " << to_string(info.kind) << " '" << info.name << "' in " << info.library
              << " (an earlier folder on the search path provides it)\n";
  std::cout << "search path:";
  for (const auto& entry : registry.search_path()) std::cout << "\n  " << entry.path.string() << "  (" << entry.origin << ")";
  std::cout << "\n";
  return exit_ok;
}

}  // namespace liembs::cli
