// liembs view: the page that animates a run's trajectory (liembs/view/run_view.hpp,
// docs/viewer.md), written as view.html into the run folder unless --output names another file.
#include "commands.hpp"

#include <liembs/view/run_view.hpp>

#include <boost/program_options.hpp>

#include <iostream>

namespace po = boost::program_options;

namespace liembs::cli {

int view_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  ViewOptions view;
  options.add_options()
      ("output,o", po::value<std::string>(), "the page to write (default: RUN_DIR/view.html)")
      ("config", po::value<std::string>(), "the run's TOML file (default: summary.json's \"config\")")
      ("column", po::value<std::string>(), "the column plotted when the page opens (default: total_energy)")
      ("max-frames", po::value<std::size_t>()->default_value(view.max_frames),
       "at most this many trajectory rows in the page (every k-th row and the last)")
      ("quiet,q", "print nothing on success");
  const std::string synopsis = "RUN_DIR [options]";
  const auto parsed = parse_command_line("view", synopsis, options, arguments, FileArgument{"run folder", synopsis});
  if (parsed.help) return exit_ok;
  const auto& values = parsed.values;

  const std::filesystem::path run_directory = values["file"].as<std::string>();
  if (values.count("config")) view.config = values["config"].as<std::string>();
  if (values.count("column")) view.column = values["column"].as<std::string>();
  view.max_frames = values["max-frames"].as<std::size_t>();
  if (view.max_frames < 2) throw po::error("--max-frames must be at least 2");
  const std::filesystem::path output =
      values.count("output") ? std::filesystem::path(values["output"].as<std::string>()) : run_directory / "view.html";

  write_view(run_directory, output, view);
  if (!values.count("quiet")) std::cout << "wrote " << output.string() << "\n";
  return exit_ok;
}

}  // namespace liembs::cli
