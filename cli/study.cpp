// liembs study: runs the cases of a study file (docs/studies.md) in parallel processes,
// caches each case, and writes results.csv, series.csv, study.json and report.html.
#include "commands.hpp"

#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/study/case_views.hpp>
#include <liembs/study/execution.hpp>
#include <liembs/study/message_passing.hpp>
#include <liembs/study/results.hpp>
#include <liembs/study/study_run.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/util/format.hpp>

#include <boost/program_options.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

namespace po = boost::program_options;

namespace liembs::cli {

namespace {

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

// Runs `arguments` (the program found on the PATH) as a child process and returns its wait
// status (-1 if it could not be started), its output discarded when `quiet`. It shares the
// fate of this process: on SIGINT or SIGTERM (noted by the interrupt facility) the child is
// sent SIGTERM (SIGKILL 5 s later if it is still there), waited for, and Interrupted is thrown
// with `where`; so it is when the child ends of SIGINT or SIGTERM (Ctrl-C reaches both).
// (std::system ignored SIGINT here while it waited.)
int run_child(const std::vector<std::string>& arguments, bool quiet, const std::string& where) {
  std::vector<char*> argv;
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    // SIGINT ignored: Ctrl-C reaches the whole process group, and this process, not the
    // child, decides (a Python child would print a traceback if it came while it starts).
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (quiet) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      // Ctrl-C reaches the whole process group: the child may end of it before this process
      // has noted its own copy. A child stopped by SIGINT or SIGTERM stops the study too.
      const int child_signal = WIFSIGNALED(status)                                           ? WTERMSIG(status)
                               : WIFEXITED(status) && (WEXITSTATUS(status) == 128 + SIGINT ||
                                                       WEXITSTATUS(status) == 128 + SIGTERM) ? WEXITSTATUS(status) - 128
                                                                                             : 0;
      if (child_signal == SIGINT || child_signal == SIGTERM) {
        for (int waited = 0; waited < 20 && !pending_interrupt(); ++waited)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        throw Interrupted(pending_interrupt() ? pending_interrupt() : child_signal, where);
      }
      if (const int signal = pending_interrupt()) throw Interrupted(signal, where);
      return status;
    }
    if (done < 0 && errno != EINTR) return -1;
    if (const int signal = pending_interrupt()) {
      ::kill(pid, SIGTERM);
      for (int waited = 0; ::waitpid(pid, &status, WNOHANG) == 0; ++waited) {
        if (waited == 500) ::kill(pid, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      throw Interrupted(signal, where);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A Python that has matplotlib: $LIEMBS_PYTHON, else the interpreter CMake found at build
// time (/usr/bin/python3 on Debian), never whichever python3 comes first on the PATH.
std::string python_with_matplotlib(const std::string& where) {
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("LIEMBS_PYTHON"); chosen && *chosen) candidates.push_back(chosen);
  if (std::string(LIEMBS_PYTHON_EXECUTABLE).empty()) candidates.push_back("/usr/bin/python3");
  else candidates.push_back(LIEMBS_PYTHON_EXECUTABLE);
  for (const auto& python : candidates)
    if (run_child({python, "-c", "import matplotlib"}, true, where) == 0) return python;
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
    if (!std::isfinite(r.ns_per_call())) continue;
    std::string label = d.models[item.model].name;
    for (std::size_t a = 0; a < d.axes.size(); ++a)
      if (static_cast<int>(a) != representation_axis && item.choice[a] >= 0)
        label += " " + d.axes[a].name + "=" + d.axes[a].labels[static_cast<std::size_t>(item.choice[a])];
    if (!lines.count(label)) labels.push_back(label);
    std::string& line = lines[label];
    line += (line.empty() ? "" : ", ") + (r.representation.empty() ? std::string("-") : r.representation) + " " +
            short_number(r.ns_per_call()) + " ns (x" + short_number(results.ratio_to_best[i]) + ")";
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
  if (values.count("list")) {  // every case checked as a run would be, none run
    if (!coordinator) return exit_ok;
    study::PluginSearch plugins;
    if (values.count("plugin-path")) plugins.paths = values["plugin-path"].as<std::vector<std::string>>();
    const std::vector<std::string> problems = study::check_cases(definition, cases, plugins);
    std::size_t failing = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      std::cout << cases[i].id;
      if (!problems[i].empty()) std::cout << "  (will fail: " << problems[i] << ")", ++failing;
      std::cout << "\n";
    }
    if (failing > 0)
      std::cerr << "liembs study: " << failing << " of " << cases.size()
                << " cases will fail (a failing case is a row of results.csv, not an error of the study)\n";
    return exit_ok;
  }

  study::ExecutionOptions execution;
  const bool algorithms = definition.kind == study::StudyKind::algorithms;
  // Timings run side by side disturb each other: an algorithm study times one case at a time
  // unless asked otherwise.
  execution.jobs = values.count("jobs") ? thread_count_option("study", values, "jobs")
                   : algorithms         ? 1u
                                        : std::max(1u, std::thread::hardware_concurrency());
  execution.force = values.count("force") > 0;
  if (values.count("plugin-path")) execution.plugins.paths = values["plugin-path"].as<std::vector<std::string>>();
  execution.world = world;
  const bool show_progress = !quiet && coordinator && ::isatty(STDERR_FILENO);
  if (show_progress) execution.progress = print_progress;
  const std::filesystem::path output =
      values.count("output") ? std::filesystem::path(values["output"].as<std::string>())
                             : std::filesystem::path("liembs-output") / file.stem();
  prepare_output_folder(output);  // a study writes its outputs (and its cache) into a folder
  if (coordinator) study::check_outputs(output);  // before any case runs

  study::ExecutionSummary summary;
  std::optional<study::StudyResults> ran = study::run_study(definition, cases, output, execution, summary);
  if (!ran) return exit_ok;  // an MPI rank other than 0: rank 0 writes the outputs
  const study::StudyResults& results = *ran;
  if (show_progress) std::fprintf(stderr, "\n");
  std::size_t views = 0;
  if (values.count("views")) views = study::write_case_views(results, output);
  // The outputs go to temporaries, the report is made from the temporary study.json, and all
  // are renamed into place together (commit_together): an interrupted or failed study leaves
  // the outputs of the run before it, all of them, and never a new results.csv beside an old
  // report.html; a study without a report removes the old one (docs/studies.md "Outputs").
  AtomicFile results_csv(output / study::results_file), json(output / study::json_file);
  std::optional<AtomicFile> series_csv;
  study::write_results_csv(results, results_csv.stream());
  if (!algorithms) study::write_series_csv(results, series_csv.emplace(output / study::series_file).stream());
  study::write_study_json(results, output, json.stream());
  json.stream().flush();
  for (AtomicFile* written : {&results_csv, &json, series_csv ? &*series_csv : nullptr})
    if (written) written->check();

  std::string report_note;
  std::optional<AtomicFile> report;
  if (!values.count("no-report")) {
    const std::string where = "while writing the report (" + std::to_string(results.cases.size()) + " cases done)";
    const std::string python = python_with_matplotlib(where);
    if (python.empty()) {
      report_note = "report.html not written: it needs python3 with matplotlib (Debian: apt install python3-matplotlib; "
                    "or name a Python that has it in LIEMBS_PYTHON)";
    } else {
      report.emplace(output / study::report_file);
      const std::vector<std::string> command{python, report_script().string(), json.temporary_path().string(),
                                             report->temporary_path().string()};
      const int status = run_child(command, false, where);
      if (status != 0) {
        std::string text;
        for (const auto& word : command) text += (text.empty() ? "" : " ") + word;
        throw Error("the report script failed (" +
                    (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                     : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                           : std::string("not started")) +
                    "): " + text);
      }
    }
  }
  throw_if_interrupted([&] { return std::string("before the outputs were written"); });
  std::vector<std::filesystem::path> stale;
  if (!report) stale.push_back(output / study::report_file);
  if (!series_csv) stale.push_back(output / study::series_file);
  commit_together({&results_csv, series_csv ? &*series_csv : nullptr, &json, report ? &*report : nullptr}, stale);

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
        std::cout << "; at " << short_number(matched.target) << ": " << study::describe(matched, d, series);
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
      ("jobs,j", po::value<int>(), "cases run at the same time (default: the number of cores; 1 for an algorithm study, whose cases are timings; at most the machine's hardware threads)")
      ("force", "run every case again, ignoring the results cached in the output folder")
      ("list", "print the cases, each checked as a run would be, and exit without running them")
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
