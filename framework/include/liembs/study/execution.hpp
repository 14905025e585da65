#pragma once
// Running the cases of a study: each case in a process of its own (a crash is a failed
// row, not the end of the study), up to `jobs` at a time, each result cached in
// <output>/cases/<hash>.json under a hash of the case's fully resolved configuration, the
// LieMBS version and the versions of the plugins it uses.
#include <liembs/host/registry.hpp>
#include <liembs/study/measures.hpp>
#include <liembs/study/study_file.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace liembs::study {

struct Progress {
  std::size_t total = 0, done = 0, running = 0, failed = 0, cached = 0;
  double elapsed_seconds = 0.0;
  double seconds_left = not_available;  // estimate from the cases run so far
};

class MessagePassing;

// Where a case finds its plugins: `paths` first (--plugin-path; Python: plugin_path=), then
// `rest`, or Registry::default_search_path() (the program's) when it is empty (the Python
// module gives its own, with the plugins of its build or install).
struct PluginSearch {
  std::vector<std::string> paths;
  std::vector<SearchPathEntry> rest;
};

struct ExecutionOptions {
  unsigned jobs = 1;
  bool force = false;                     // ignore cached results
  PluginSearch plugins;
  std::function<void(const Progress&)> progress;  // called when a case starts or ends
  // Under an MPI launcher with more than one rank: rank 0 hands the cases out to the
  // others (jobs is then ignored) and returns the records; the other ranks run them and
  // return nothing.
  MessagePassing* world = nullptr;
};

struct ExecutionSummary {
  std::size_t cached = 0, ran = 0, failed = 0;
};

// Runs one case in this process and measures it; a failure is recorded, not thrown
// (except Interrupted). `alone`: no other case runs meanwhile (--jobs 1), so the timed
// repetitions of a case run on one CPU after another (docs/studies.md "Cost"; cases side by
// side would be moved onto each other's CPU).
CaseRecord run_case(const Definition& definition, const Case& item, const PluginSearch& plugins, bool alone = false);

// Checks every case as a run would, without running any (`liembs study --list`): its run file
// loaded with the case's overrides, its plugins created with their options. A ConfigError is a
// mistake in the study and is thrown naming the study file and the case, as execute_cases does;
// any other error (an unknown plugin, a model the algorithm cannot bind) is a case that will
// fail, returned as its message ("" for a valid case), in the order of `cases`.
std::vector<std::string> check_cases(const Definition& definition, const std::vector<Case>& cases,
                                     const PluginSearch& plugins);

// Runs every case (validated first: a configuration error of a case is a ConfigError
// naming the case, since it is a mistake in the study) and returns their records in the
// order of `cases`.
std::vector<CaseRecord> execute_cases(const Definition& definition, const std::vector<Case>& cases,
                                      const std::filesystem::path& output, const ExecutionOptions& options,
                                      ExecutionSummary& summary);

}  // namespace liembs::study
