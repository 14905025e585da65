// liembs study: runs the cases of a study file (docs/studies.md) in parallel processes,
// caches each case, and writes results.csv, series.csv, study.json and report.html.
#include "commands.hpp"

#include <liembs/error.hpp>
#include <liembs/study/case_views.hpp>
#include <liembs/study/execution.hpp>
#include <liembs/study/message_passing.hpp>
#include <liembs/study/results.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/util/format.hpp>

#include <boost/program_options.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <thread>

namespace po = boost::program_options;

namespace liembs::cli {

namespace {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// scripts/study-report: installed in share/liembs next to bin/, else in the source tree.
std::filesystem::path report_script() {
  std::error_code ec;
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = executable.parent_path().parent_path() / "share" / "liembs" / "study-report";
    if (std::filesystem::is_regular_file(installed, ec)) return installed;
  }
  return LIEMBS_STUDY_REPORT_SCRIPT;
}

// A Python that has matplotlib: $LIEMBS_PYTHON, python3 on the PATH, or the system's.
std::string python_with_matplotlib() {
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("LIEMBS_PYTHON"); chosen && *chosen) candidates.push_back(chosen);
  candidates.insert(candidates.end(), {"python3", "/usr/bin/python3"});
  for (const auto& python : candidates)
    if (std::system((shell_quote(python) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return python;
  return {};
}

void print_progress(const study::Progress& p) {
  std::string left = "";
  if (std::isfinite(p.seconds_left)) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, ", about %.0f s left", std::ceil(p.seconds_left));
    left = buffer;
  }
  std::fprintf(stderr, "\r  cases: %zu of %zu done (%zu cached), %zu running, %zu failed%s        ", p.done, p.total,
               p.cached, p.running, p.failed, left.c_str());
  std::fflush(stderr);
}

// A measure in the summary table: 3 digits, "-" for a missing one (NaN).
std::string short_number(double x) { return std::isnan(x) ? "-" : format_number(x, 3); }

// One line per model and algorithm (the axis values but the representation): the time per
// call of each representation, its ratio to the fastest and the largest difference.
void print_algorithm_costs(const study::StudyResults& results) {
  const auto& d = results.definition;
  const int representation_axis = study::representation_axis(d);
  std::vector<std::string> labels;
  std::map<std::string, std::string> lines;
  std::map<std::string, double> differences;
  for (std::size_t i = 0; i < results.cases.size(); ++i) {
    const auto& item = results.cases[i];
    const auto& r = results.records[i];
    if (!std::isfinite(r.ns_per_call_median)) continue;
    std::string label = d.models[item.model].name;
    for (std::size_t a = 0; a < d.axes.size(); ++a)
      if (static_cast<int>(a) != representation_axis && item.choice[a] >= 0)
        label += " " + d.axes[a].name + "=" + d.axes[a].labels[static_cast<std::size_t>(item.choice[a])];
    if (!lines.count(label)) labels.push_back(label);
    std::string& line = lines[label];
    line += (line.empty() ? "" : ", ") + (r.representation.empty() ? std::string("-") : r.representation) + " " +
            short_number(r.ns_per_call_median) + " ns (x" + short_number(results.ratio_to_best[i]) + ")";
    if (!std::isnan(r.max_relative_difference))
      differences[label] = std::max(differences.count(label) ? differences[label] : 0.0, r.max_relative_difference);
  }
  for (const auto& label : labels) {
    std::cout << "  " << label << ": " << lines[label];
    if (differences.count(label)) std::cout << "; largest difference " << short_number(differences[label]);
    std::cout << "\n";
  }
}

int run_study(const po::variables_map& values, study::MessagePassing* world) {
  const bool quiet = values.count("quiet") > 0;
  const bool coordinator = !world || world->rank() == 0;
  const std::filesystem::path file = values["file"].as<std::string>();
  study::Definition definition = study::load_study(load_document(values));
  std::vector<study::Case> cases = study::expand_cases(definition);
  if (values.count("list")) {
    if (coordinator)
      for (const auto& item : cases) std::cout << item.id << "\n";
    return exit_ok;
  }

  study::ExecutionOptions execution;
  const bool algorithms = definition.kind == study::StudyKind::algorithms;
  // Timings run side by side disturb each other: an algorithm study times one case at a time
  // unless asked otherwise.
  execution.jobs = values.count("jobs") ? values["jobs"].as<unsigned>()
                   : algorithms         ? 1u
                                        : std::max(1u, std::thread::hardware_concurrency());
  if (execution.jobs == 0) throw po::error("--jobs must be at least 1");
  execution.force = values.count("force") > 0;
  if (values.count("plugin-path")) execution.plugin_paths = values["plugin-path"].as<std::vector<std::string>>();
  execution.world = world;
  const bool show_progress = !quiet && coordinator && ::isatty(STDERR_FILENO);
  if (show_progress) execution.progress = print_progress;
  const std::filesystem::path output =
      values.count("output") ? std::filesystem::path(values["output"].as<std::string>())
                             : std::filesystem::path("liembs-output") / file.stem();
  if (std::error_code ec; std::filesystem::exists(output, ec) && !std::filesystem::is_directory(output, ec))
    throw Error(output.string() + ": exists and is not a folder; a study writes its outputs (and its cache) into a folder");

  study::ExecutionSummary summary;
  auto records = study::execute_cases(definition, cases, output, execution, summary);
  if (!coordinator) return exit_ok;  // rank 0 writes the outputs
  if (show_progress) std::fprintf(stderr, "\n");
  const study::StudyResults results = study::analyse(std::move(definition), std::move(cases), std::move(records));
  study::write_results_csv(results, output);
  if (!algorithms) study::write_series_csv(results, output);
  std::size_t views = 0;
  if (values.count("views")) views = study::write_case_views(results, output);
  study::write_study_json(results, output);

  std::string report_note;
  if (!values.count("no-report")) {
    const auto script = report_script();
    const std::string python = python_with_matplotlib();
    if (python.empty()) {
      report_note = "report.html not written: it needs python3 with matplotlib (Debian: apt install python3-matplotlib; "
                    "or name a Python that has it in LIEMBS_PYTHON)";
    } else {
      const std::string command = shell_quote(python) + " " + shell_quote(script.string()) + " " +
                                  shell_quote((output / "study.json").string()) + " " +
                                  shell_quote((output / "report.html").string());
      if (std::system(command.c_str()) != 0) throw Error("the report script failed: " + command);
    }
  }

  if (!quiet) {
    const auto& d = results.definition;
    std::cout << "study '" << d.title << "': " << results.cases.size() << " cases (" << summary.ran << " run, "
              << summary.cached << " cached, " << summary.failed << " failed)\n";
    for (std::size_t m = 0; m < d.models.size(); ++m)
      if (d.models[m].has_reference)
        std::cout << "  reference of " << d.models[m].name << ": error estimate "
                  << short_number(results.reference_error[m])
                  << (results.reference_failure[m].empty() ? "" : " (" + results.reference_failure[m] + ")") << "\n";
    for (const auto& series : results.series) {
      std::cout << "  " << series.label << ": ";
      if (series.fit.valid)
        std::cout << "order " << std::fixed << std::setprecision(2) << series.fit.slope << std::defaultfloat
                  << " over " << short_number(series.fit.x_min) << " .. " << short_number(series.fit.x_max);
      else
        std::cout << "no order (no two or more rungs with errors above the reference's on a line)";
      for (const auto& matched : series.matched)
        std::cout << "; at " << short_number(matched.target) << ": "
                  << (matched.cpu_seconds ? short_number(*matched.cpu_seconds) + " s CPU" : "not reached");
      std::cout << "\n";
    }
    if (algorithms) print_algorithm_costs(results);
    for (std::size_t i = 0; i < results.records.size(); ++i)
      if (!results.records[i].ok)
        std::cout << "  failed: " << results.cases[i].id << ": " << results.records[i].error << "\n";
    std::cout << "  outputs in " << output.string() << ": results.csv" << (algorithms ? "" : ", series.csv") << ", study.json"
              << (report_note.empty() && !values.count("no-report") ? ", report.html" : "")
              << (views ? ", views/ (" + std::to_string(views) + " pages)" : "") << "\n";
  }
  if (!report_note.empty()) std::cerr << "liembs study: " << report_note << "\n";
  return exit_ok;
}

}  // namespace

int study_command(const std::vector<std::string>& arguments) {
  po::options_description options("Options");
  options.add_options()
      ("output,o", po::value<std::string>(), "output folder (default: liembs-output/<study file stem>)")
      ("jobs,j", po::value<unsigned>(), "cases run at the same time (default: the number of cores; 1 for an algorithm study, whose cases are timings)")
      ("force", "run every case again, ignoring the results cached in the output folder")
      ("list", "print the cases and exit without running them")
      ("no-report", "do not write report.html")
      ("views", "also write the viewer's page of every case that ran, views/<case hash>.html (about 1 MB each), "
                "linked from report.html");
  add_common_run_options(options);
  options.add_options()("quiet,q", "print nothing on success");
  const auto parsed = parse_command_line("study", "STUDY.toml [options]", options, arguments,
                                         FileArgument{"study file", "STUDY.toml"});
  if (parsed.help) return exit_ok;
  const auto& values = parsed.values;

  install_interrupt_handlers();
  // Under mpirun: the MPI module, loaded only then (docs/studies.md "MPI").
  std::unique_ptr<study::MessagePassing> world;
  if (study::started_by_mpi_launcher()) world = study::load_mpi_world();
  try {
    return run_study(values, world.get());
  } catch (const Interrupted& interrupted) {
    if (!world) throw;
    // Every rank stopped in order (execute_cases): rank 0 says how far the study got, the
    // others are silent, and MPI is finalized on the way out.
    if (world->rank() == 0) std::cerr << "liembs study: " << interrupted.what() << "; no output written\n";
    return interrupted.exit_status();
  } catch (...) {
    if (!world) throw;
    // Any other error: the other ranks may be waiting for cases; report here and end the whole job.
    const std::string prefix = world->rank() == 0 ? std::string("liembs study: ")
                                                  : "liembs study (MPI rank " + std::to_string(world->rank()) + "): ";
    world->abort(report_exception("study", prefix));
  }
  return exit_other;  // not reached: abort() ends the process
}

}  // namespace liembs::cli
