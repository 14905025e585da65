// liembs linearize: A and B of x' = f(x, tau) of a tree about the run's initial state or the
// state its integrator reaches at --at T (liembs/host/linearization.hpp, docs/derivatives.md
// "Linearization").
#include "commands.hpp"

#include <liembs/host/registry.hpp>
#include <liembs/host/linearization.hpp>
#include <liembs/host/run.hpp>

#include <boost/program_options.hpp>

#include <cmath>
#include <iostream>
#include <sstream>

namespace po = boost::program_options;

namespace liembs::cli {

int linearize_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  add_common_run_options(options);
  options.add_options()("at", po::value<double>(),
                        "linearize at the state the run's integrator reaches at time T in [0, end_time] (default: "
                        "the initial state)");
  add_output_folder_options(options);
  const auto parsed = parse_command_line("linearize", "FILE.toml [--at T] [options]", options, arguments,
                                         FileArgument{"TOML file", "FILE.toml [--at T] [options]"});
  if (parsed.help) return exit_ok;
  const auto& values = parsed.values;

  Registry registry;
  Run run = load_run_from_options(values, registry);
  std::optional<double> at;
  if (values.count("at")) {
    at = values["at"].as<double>();
    if (!std::isfinite(*at) || *at < 0.0 || *at > run.settings.end_time) {
      std::ostringstream message;
      message << "--at " << *at << " is outside the run's time span [0, " << run.settings.end_time
              << "] s (simulation.end_time)";
      throw po::error(message.str());
    }
  }
  const std::filesystem::path directory = output_folder(values, run);

  const Linearization linearization = linearize_run(run, at);
  write_linearization(run, linearization, directory);
  if (!values.count("quiet"))
    std::cout << "linearized '" << run.title << "' at t = " << linearization.time << " s: " << linearization.A.rows()
              << " states, " << linearization.B.cols() << " inputs, " << linearization.method << " ("
              << run.representation_name << ")\n  outputs in " << directory.string() << "\n";
  return exit_ok;
}

}  // namespace liembs::cli
