#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>
#include <liembs/study/algorithm_timing.hpp>
#include <liembs/study/cpu_time.hpp>
#include <liembs/study/execution.hpp>
#include <liembs/study/message_passing.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/version.hpp>

#include <Eigen/Geometry>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

namespace liembs::study {

namespace {

void set_up_registry(Registry& registry, const PluginSearch& plugins) {
  registry.append_search_path(plugins.rest.empty() ? Registry::default_search_path() : plugins.rest);
  std::vector<SearchPathEntry> extra;
  for (const auto& path : plugins.paths) extra.push_back({path, "--plugin-path", true});
  registry.prepend_search_path(std::move(extra));
}

// 64-bit FNV-1a: a stable hash of text, the same on every run and machine.
std::string fnv1a_hex(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

std::string text_of(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

double sample_interval_of(const Definition& definition, const Run& run) {
  return definition.measure.sample_interval > 0 ? definition.measure.sample_interval : run.settings.end_time / 100.0;
}

// The representation an algorithm case is compared with: the first value of the
// representation axis, or empty (no such axis, or the case is that representation).
std::string comparison_representation(const Definition& definition, const Case& item) {
  const int axis = representation_axis(definition);
  if (axis < 0 || item.choice[static_cast<std::size_t>(axis)] <= 0) return {};
  return value_label(definition.axes[static_cast<std::size_t>(axis)].values.front().front());
}

// The record's CPU time from timed repetitions (cpu_time.hpp), for either kind of case.
void record_timing(const TimedRepetitions& timed, CaseRecord& record) {
  record.repetitions = timed.repetitions;
  record.cpu_seconds = timed.fastest;
  record.cpu_seconds_slowest = timed.slowest;
  record.timed_runs = timed.fastest_runs;
}

// An algorithm case: its algorithm timed on random states of its model (with `rotate_cpus` on
// one CPU after another, as a simulation case), and its outputs compared with those of the
// study's first representation on the same states.
void run_algorithm_case(const Definition& definition, const Case& item, const PluginSearch& plugins, bool rotate_cpus,
                        CaseRecord& record) {
  const Timing& timing = definition.timing;
  Registry registry;
  set_up_registry(registry, plugins);
  Run run = load_run(case_document(definition, item), registry, RunPurpose::evaluate);
  record.algorithm = run.algorithm_name;
  record.representation = run.representation_name;
  for (const auto& body : run.model->bodies) record.bodies.push_back(body.name);
  record.plugins = run.plugins;
  BatchEvaluator& evaluator = *run.evaluator;
  record.inputs = evaluator.input_columns().size();
  record.outputs = evaluator.output_columns().size();
  record.states = timing.states;
  const auto states = static_cast<std::size_t>(timing.states);
  const std::vector<double> inputs =
      random_states(evaluator.input_columns(), states, static_cast<unsigned long long>(timing.seed));
  std::vector<double> outputs;
  const auto wall_start = std::chrono::steady_clock::now();
  record_timing(time_calls(evaluator, inputs, states, timing.warmup, definition.cpu_time, rotate_cpus, outputs), record);
  record.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  record.ok = true;

  const std::string compared = comparison_representation(definition, item);
  if (compared.empty()) {
    if (representation_axis(definition) >= 0) record.max_relative_difference = 0.0;  // the first representation itself
    return;
  }
  auto document = case_document(definition, item);
  document->set_override("representation.name=\"" + compared + "\"");
  Registry reference_registry;  // declared before the run whose code it holds
  set_up_registry(reference_registry, plugins);
  Run reference = load_run(document, reference_registry, RunPurpose::evaluate);
  if (reference.evaluator->output_columns() != evaluator.output_columns() ||
      reference.evaluator->input_columns() != evaluator.input_columns())
    throw ModelError("representation '" + record.representation + "' gives other columns than '" + compared + "'");
  std::vector<double> expected(states * record.outputs);
  for (std::size_t s = 0; s < states; ++s)
    reference.evaluator->evaluate(inputs.data() + s * record.inputs, expected.data() + s * record.outputs);
  const Difference difference = max_relative_difference(outputs, expected, record.outputs);
  record.compared_with = compared;
  record.max_relative_difference = difference.value;
  if (!(difference.value <= timing.tolerance)) {
    char text[64];
    std::snprintf(text, sizeof text, "%.3g (tolerance %.3g)", difference.value, timing.tolerance);
    record.ok = false;
    record.failure_kind = "disagreement";
    record.error = "representation '" + record.representation + "' disagrees with '" + compared +
                   "': largest relative difference " + text + " at state " + std::to_string(difference.row) +
                   ", output " + evaluator.output_columns()[difference.column];
  }
}

// Two runs of a case did the same computation: the same final state and integrator counters,
// bit for bit.
bool same_run(const RunSummary& a, const RunSummary& b) {
  const State &x = a.final_state, &y = b.final_state;
  auto same = [](const Eigen::VectorXd& u, const Eigen::VectorXd& v) { return u.size() == v.size() && u == v; };
  auto same_statistics = [](const auto& u, const auto& v) {
    return std::equal(u.begin(), u.end(), v.begin(), v.end(), [](const auto& p, const auto& q) {
      return p.first == q.first && (p.second == q.second || (std::isnan(p.second) && std::isnan(q.second)));
    });
  };
  if (a.steps != b.steps || !same_statistics(a.integrator_statistics, b.integrator_statistics) || x.time != y.time ||
      x.poses.size() != y.poses.size() || !same(x.chart, y.chart) || !same(x.coordinates, y.coordinates) ||
      !same(x.velocities, y.velocities))
    return false;
  for (std::size_t i = 0; i < x.poses.size(); ++i)
    if (x.poses[i].R != y.poses[i].R || x.poses[i].r != y.poses[i].r) return false;
  return true;
}

// The CPU time of a simulation case (docs/studies.md "Cost"), after its measured run `run`
// gave `measured`: time_repetitions with the study's settings ([measure] repetitions and
// min_cpu_seconds), a run being one execute_run; with `rotate_cpus` the repetitions run on one
// CPU after another (CpuRotation). Only execute_run is timed, never loading. The loaded run is
// run again (Integrator::start restarts it) when a second run repeats the measured one bit for
// bit; otherwise (a component that keeps state between runs) each run is loaded afresh.
void time_simulation(const Definition& definition, const Case& item, const PluginSearch& plugins, bool rotate_cpus,
                     Run& run, const RunSummary& measured, CaseRecord& record) {
  const RunOutput quiet;
  auto timed = [&](Run& target, RunSummary* summary) {
    throw_if_interrupted([&] { return "in case '" + item.id + "'"; });
    const double start = cpu_seconds_now(CpuClock::process);
    RunSummary result = execute_run(target, quiet);
    const double seconds = cpu_seconds_now(CpuClock::process) - start;
    if (summary) *summary = std::move(result);
    return seconds;
  };
  RunSummary again;
  timed(run, &again);  // untimed: a warm-up, and the check that the loaded run can be run again
  const bool reuse = same_run(again, measured);
  auto timed_run = [&] {
    if (reuse) return timed(run, nullptr);
    Registry registry;  // declared before the run whose code it holds
    set_up_registry(registry, plugins);
    Run fresh = load_run(case_document(definition, item), registry);
    return timed(fresh, nullptr);
  };
  record_timing(time_repetitions(definition.cpu_time, rotate_cpus, timed_run), record);
}

// A case checked in this process before it is handed to a child: its cache key, or the
// reason it cannot run.
struct Prepared {
  std::string hash;
  std::optional<CaseRecord> failure;
};

Prepared prepare(const Definition& definition, const Case& item, const PluginSearch& plugins) {
  Prepared prepared;
  try {
    Registry registry;
    set_up_registry(registry, plugins);
    auto document = case_document(definition, item);
    const bool algorithms = definition.kind == StudyKind::algorithms;
    Run run = load_run(document, registry, algorithms ? RunPurpose::evaluate : RunPurpose::simulate);
    std::string key = std::string("liembs ") + LIEMBS_VERSION + "\nstudy record 5\nconfig " +
                      std::filesystem::absolute(run.config_file).lexically_normal().string() + "\n";
    for (const auto& [kind, name] : {std::pair{Kind::group, run.group_name}, {Kind::algorithm, run.algorithm_name},
                                     {Kind::integrator, run.integrator_name},
                                     {Kind::representation, run.representation_name}})
      if (!name.empty()) key += "plugin " + name + " " + registry.find(kind, name).version + "\n";
    if (algorithms) {
      const Timing& t = definition.timing;
      key += "timing " + std::to_string(t.states) + " " + std::to_string(t.warmup) + " " + std::to_string(t.seed) +
             " " + text_of(t.tolerance) + "\n";
      const std::string compared = comparison_representation(definition, item);
      if (!compared.empty())
        key += "compared with " + compared + " " + registry.find(Kind::representation, compared).version + "\n";
    } else {
      key += "sample_interval " + text_of(sample_interval_of(definition, run)) + "\n";
    }
    key += "repetitions " + std::to_string(definition.cpu_time.repetitions) + " min_cpu_seconds " +
           text_of(definition.cpu_time.min_cpu_seconds) + "\n";
    key += document->to_toml();
    prepared.hash = fnv1a_hex(key);
  } catch (const Interrupted&) {
    throw;
  } catch (const ConfigError& error) {
    // A mistake in the study (an axis sets a key no run reads, a wrong type): not a result.
    throw ConfigError(definition.file.string() + ": case '" + item.id + "': " + error.what());
  } catch (const Error& error) {
    CaseRecord failure;
    failure.id = item.id;
    failure.failure_kind = error.kind();
    failure.error = error.what();
    prepared.failure = std::move(failure);
  }
  return prepared;
}

std::filesystem::path record_path(const std::filesystem::path& output, const std::string& hash) {
  return output / "cases" / (hash + ".json");
}

std::optional<CaseRecord> read_record(const std::filesystem::path& file, const std::string& hash) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    CaseRecord record = record_from_json(text.str());
    if (record.hash != hash) return std::nullopt;
    return record;
  } catch (const Error&) {
    return std::nullopt;  // a damaged cache entry is run again
  }
}

std::string signal_description(int signal) {
  const char* name = ::strsignal(signal);
  return "signal " + std::to_string(signal) + (name ? std::string(" (") + name + ")" : std::string());
}

// MPI messages. task (rank 0 to a rank): "<index> <hash>" or "stop"; result (a rank to rank 0):
// the record as JSON, or "interrupted <signal>" when the rank stopped without one; interrupt
// (rank 0 to a busy rank): "<signal>", stop the running case.
constexpr int task_tag = 1, result_tag = 2, interrupt_tag = 3;
const std::string interrupted_prefix = "interrupted ";

// Runs a case in a child process that stores its record atomically in the cache and leaves
// without running the parent's exit handlers (its plugins and files belong to the parent).
pid_t start_case_process(const Definition& definition, const Case& item, const std::string& hash,
                         const std::filesystem::path& output, const PluginSearch& plugins, bool alone) {
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot start a process for a case: ") + std::strerror(errno));
  if (pid > 0) return pid;
  int status = 0;
  try {
    CaseRecord record = run_case(definition, item, plugins, alone);
    record.hash = hash;
    AtomicFile file(record_path(output, hash));
    file.stream() << to_json(record) << "\n";
    file.commit();
  } catch (const Interrupted& interrupted) {
    ::_exit(interrupted.exit_status());  // no record: the case runs again next time
  } catch (const std::exception& error) {
    std::fprintf(stderr, "liembs study: case '%s': %s\n", item.id.c_str(), error.what());
    status = 6;
  }
  std::fflush(nullptr);
  ::_exit(status);
}

// The record a case's process left, given its wait status; a crash record when it left none
// (not cached: a crash may not repeat, e.g. a resource limit or a signal from outside).
CaseRecord collect_record(int status, const std::filesystem::path& output, const std::string& hash) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    if (auto record = read_record(record_path(output, hash), hash)) return std::move(*record);
  CaseRecord record;
  record.hash = hash;
  record.failure_kind = "crash";
  record.error = WIFSIGNALED(status) ? "the case's process was killed by " + signal_description(WTERMSIG(status))
                                     : "the case's process exited with status " +
                                           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                                           " without a result";
  return record;
}

// SIGINT or SIGTERM when a case's process was killed by one or stopped for one (exit status
// 128 + the signal, as `liembs run` does); 0 otherwise.
int interrupting_signal(int status) {
  for (const int signal : {SIGINT, SIGTERM})
    if ((WIFSIGNALED(status) && WTERMSIG(status) == signal) || (WIFEXITED(status) && WEXITSTATUS(status) == 128 + signal))
      return signal;
  return 0;
}

// An MPI rank other than 0: runs the cases rank 0 sends, one at a time, each in a child
// process as in a local run, and sends back their records until told to stop. On SIGINT or
// SIGTERM (mpirun forwards them to every rank) or rank 0's interrupt message, it stops the
// running case as a local run does, sends its record if it had finished and "interrupted"
// otherwise, answers any further task with "interrupted", and throws Interrupted once rank 0
// says stop.
void serve_cases(const Definition& definition, const std::vector<Case>& cases, const std::filesystem::path& output,
                 const ExecutionOptions& options) {
  MessagePassing& world = *options.world;
  std::error_code ec;
  std::filesystem::create_directories(output / "cases", ec);  // this rank's children write there first
  if (ec) throw Error((output / "cases").string() + ": cannot create the folder: " + ec.message());
  std::fflush(nullptr);
  int stopped_by = 0;  // the signal this rank stopped for
  auto interrupt_requested = [&] {
    if (const int signal = pending_interrupt()) return signal;
    int source = 0;
    std::string text;
    return world.try_receive(interrupt_tag, source, text) ? std::atoi(text.c_str()) : 0;
  };
  for (;;) {
    // Waiting for a task, a signal is only noted: rank 0 answers every result with a task or
    // "stop", so this rank stops after its next message.
    int source = 0;
    std::string task;
    while (!world.try_receive(task_tag, source, task)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (task == "stop") break;
    std::istringstream fields(task);
    std::size_t index = 0;
    std::string hash;
    if (!(fields >> index >> hash) || index >= cases.size())
      throw Error("MPI rank " + std::to_string(world.rank()) + ": malformed task from rank 0: " + task);
    if (!stopped_by) stopped_by = interrupt_requested();
    if (stopped_by) {
      world.send(0, result_tag, interrupted_prefix + std::to_string(stopped_by));
      continue;
    }
    const pid_t pid = start_case_process(definition, cases[index], hash, output, options.plugins, false);
    int status = 0;
    for (;;) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (done < 0 && errno != EINTR) throw Error(std::string("waiting for a case's process failed: ") + std::strerror(errno));
      if ((stopped_by = interrupt_requested())) {
        // As locally: the case stops at its next step; a record it left just before counts.
        ::kill(pid, stopped_by);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // mpirun's signal can end the case's process before this rank has noticed it: a case that
    // did not finish is then interrupted, not a crash (which rank 0 would count as done).
    if (!stopped_by && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      if (!(stopped_by = interrupt_requested())) stopped_by = interrupting_signal(status);
    std::optional<CaseRecord> record;
    if (!stopped_by)
      record = collect_record(status, output, hash);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      record = read_record(record_path(output, hash), hash);
    if (!record) {
      world.send(0, result_tag, interrupted_prefix + std::to_string(stopped_by));
      continue;
    }
    record->id = cases[index].id;
    world.send(0, result_tag, to_json(*record));
  }
  if (stopped_by) throw Interrupted(stopped_by, "on MPI rank " + std::to_string(world.rank()));
}

}  // namespace

CaseRecord run_case(const Definition& definition, const Case& item, const PluginSearch& plugins, bool alone) {
  CaseRecord record;
  record.id = item.id;
  try {
    if (definition.kind == StudyKind::algorithms) {
      run_algorithm_case(definition, item, plugins, alone, record);
      return record;
    }
    Registry registry;
    set_up_registry(registry, plugins);
    Run run = load_run(case_document(definition, item), registry);
    record.group = run.group_name;
    record.algorithm = run.algorithm_name;
    record.representation = run.representation_name;
    record.integrator = run.integrator_name;
    record.integrator_description = run.integrator->description();
    record.integrator_order = run.integrator->order();
    record.end_time = run.settings.end_time;
    record.step_size = run.settings.step_size;
    record.sample_interval = sample_interval_of(definition, run);
    for (const auto& body : run.model->bodies) record.bodies.push_back(body.name);
    record.plugins = run.plugins;

    const double interval = record.sample_interval, end_time = record.end_time;
    double energy_initial = 0.0;  // the drift series are divided by the run's scales at its end
    Vec3 momentum_initial = Vec3::Zero();
    RunOutput output;
    output.observer = [&](const RunSample& sample) {
      const double t = sample.time;
      const bool on_grid = std::abs(t - std::round(t / interval) * interval) <= 1e-6 * interval;
      const bool at_end = std::abs(t - end_time) <= 1e-9 * std::max(1.0, end_time);
      if (!on_grid && !at_end) return;
      if (!record.times.empty() && std::abs(record.times.back() - t) <= 1e-6 * interval) return;
      const Invariants& invariants = sample.invariants;
      if (record.times.empty()) {
        energy_initial = invariants.total_energy();
        momentum_initial = invariants.angular_momentum;
      }
      record.times.push_back(t);
      std::vector<double> motion(sample.poses.size() * motion_per_body);  // as trajectory.csv's <body>.* columns
      for (std::size_t b = 0; b < sample.poses.size(); ++b)
        body_motion_values(sample.poses[b], sample.twists[b], motion.data() + b * motion_per_body);
      record.motion.push_back(std::move(motion));
      record.energy_drift.push_back(invariants.total_energy() - energy_initial);
      record.angular_momentum_drift.push_back((invariants.angular_momentum - momentum_initial).norm());
      record.violations.push_back(sample.violations);
    };
    // The measured run (untimed): the motion, drifts, violations and counters.
    const RunSummary summary = execute_run(run, output);
    time_simulation(definition, item, plugins, alone, run, summary, record);
    record.wall_seconds = summary.wall_seconds;
    record.steps = summary.steps;
    record.statistics = summary.integrator_statistics;
    if (!std::isnan(record.statistic("steps"))) record.steps = static_cast<long long>(record.statistic("steps"));
    record.joints = summary.constraint_names;
    for (double& drift : record.energy_drift) drift = relative_change(drift, summary.energy_scale);  // signed
    for (double& drift : record.angular_momentum_drift) drift = relative_change(drift, summary.angular_momentum_scale);
    record.energy_drift_max = summary.energy_drift_max;
    record.angular_momentum_drift_max = summary.angular_momentum_drift_max;
    record.orthogonality_error_max = summary.orthogonality_error_max;
    record.constraint_violation_max = summary.constraint_violation_max;
    record.velocity_violation_max = summary.velocity_violation_max;
    record.ok = true;
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& error) {
    record.ok = false;
    record.failure_kind = error.kind();
    record.error = error.what();
    record.times.clear();
    record.motion.clear();
    record.energy_drift.clear();
    record.angular_momentum_drift.clear();
    record.violations.clear();
  }
  return record;
}

std::vector<std::string> check_cases(const Definition& definition, const std::vector<Case>& cases,
                                     const PluginSearch& plugins) {
  std::vector<std::string> problems;
  for (const Case& item : cases) {
    if (const int signal = pending_interrupt()) throw Interrupted(signal, "while checking the cases");
    const Prepared prepared = prepare(definition, item, plugins);
    problems.push_back(prepared.failure ? prepared.failure->error : std::string());
  }
  return problems;
}

std::vector<CaseRecord> execute_cases(const Definition& definition, const std::vector<Case>& cases,
                                      const std::filesystem::path& output, const ExecutionOptions& options,
                                      ExecutionSummary& summary) {
  if (options.world && options.world->size() > 1 && options.world->rank() != 0) {
    serve_cases(definition, cases, output, options);
    return {};
  }
  std::vector<std::optional<CaseRecord>> records(cases.size());
  std::vector<std::string> hashes(cases.size());
  std::vector<std::size_t> pending;
  Progress progress;
  progress.total = cases.size();
  const bool distributed = options.world && options.world->size() > 1;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (const int signal = pending_interrupt()) {
      if (distributed)  // the other ranks wait for their first task
        for (int rank = 1; rank < options.world->size(); ++rank) options.world->send(rank, task_tag, "stop");
      throw Interrupted(signal, "while checking the cases (" + std::to_string(i) + " of " +
                                    std::to_string(cases.size()) + "), before any ran");
    }
    Prepared prepared = prepare(definition, cases[i], options.plugins);
    if (prepared.failure) {
      records[i] = std::move(prepared.failure);
      ++summary.failed, ++progress.done, ++progress.failed;
      continue;
    }
    hashes[i] = prepared.hash;
    if (!options.force)
      if (auto cached = read_record(record_path(output, prepared.hash), prepared.hash)) {
        cached->id = cases[i].id;
        if (!cached->ok) ++summary.failed, ++progress.failed;
        records[i] = std::move(cached);
        ++summary.cached, ++progress.done, ++progress.cached;
        continue;
      }
    pending.push_back(i);
  }
  std::error_code ec;
  std::filesystem::create_directories(output / "cases", ec);
  if (ec) throw Error((output / "cases").string() + ": cannot create the folder: " + ec.message());

  const auto start = std::chrono::steady_clock::now();
  double run_seconds = 0.0;  // wall time of the cases run so far, summed
  std::size_t finished_runs = 0;
  const unsigned jobs = distributed ? static_cast<unsigned>(options.world->size() - 1) : std::max(1u, options.jobs);
  std::map<long, std::pair<std::size_t, std::chrono::steady_clock::time_point>> running;  // by pid or rank
  auto report = [&] {
    if (!options.progress) return;
    progress.running = running.size();
    progress.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::size_t left = progress.total - progress.done;
    progress.seconds_left = finished_runs > 0 ? run_seconds / static_cast<double>(finished_runs) *
                                                    static_cast<double>(left) / static_cast<double>(jobs)
                                              : not_available;
    options.progress(progress);
  };
  auto finish = [&](long runner, CaseRecord record) {
    const auto found = running.find(runner);
    const auto [index, started] = found->second;
    running.erase(found);
    run_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ++finished_runs;
    record.id = cases[index].id;
    if (!record.ok) ++summary.failed, ++progress.failed;
    ++summary.ran, ++progress.done;
    records[index] = std::move(record);
    report();
  };
  auto interrupted = [&](int signal) {
    return Interrupted(signal, "after " + std::to_string(progress.done) + " of " + std::to_string(progress.total) +
                                   " cases; the finished ones are kept in " + (output / "cases").string() +
                                   " and not run again");
  };
  report();
  std::fflush(nullptr);  // nothing buffered is written twice by the children

  std::size_t next = 0;
  if (distributed) {
    // Rank 0 hands the cases out one at a time to the other ranks and gathers their
    // records (docs/studies.md "MPI"); it writes them to the cache like a local run.
    MessagePassing& world = *options.world;
    for (int rank = 1; rank < world.size(); ++rank) {
      if (next < pending.size()) {
        const std::size_t index = pending[next++];
        world.send(rank, task_tag, std::to_string(index) + " " + hashes[index]);
        running[rank] = {index, std::chrono::steady_clock::now()};
      } else {
        world.send(rank, task_tag, "stop");
      }
    }
    report();
    // On SIGINT or SIGTERM here, or a rank's "interrupted" (mpirun forwards the signals to
    // every rank), no case is handed out any more: the busy ranks are told to stop their
    // case, and each answers with its record (the case had finished) or "interrupted".
    int stop_signal = 0;
    auto stop_busy_ranks = [&](int signal) {
      stop_signal = signal;
      for (const auto& entry : running) world.send(static_cast<int>(entry.first), interrupt_tag, std::to_string(signal));
    };
    while (!running.empty()) {
      if (const int signal = stop_signal ? 0 : pending_interrupt()) stop_busy_ranks(signal);
      int rank = 0;
      std::string text;
      if (!world.try_receive(result_tag, rank, text)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      const auto found = running.find(rank);
      if (found == running.end()) throw Error("MPI rank " + std::to_string(rank) + " sent a result it was not asked for");
      const std::size_t index = found->second.first;
      if (text.rfind(interrupted_prefix, 0) == 0) {
        running.erase(found);
        world.send(rank, task_tag, "stop");
        if (!stop_signal) stop_busy_ranks(std::atoi(text.c_str() + interrupted_prefix.size()));
        continue;
      }
      CaseRecord record;
      try {
        record = record_from_json(text);
      } catch (const Error& error) {
        throw Error("MPI rank " + std::to_string(rank) + " sent a malformed record for case '" + cases[index].id +
                    "': " + error.what());
      }
      if (record.failure_kind != "crash") {  // a crash may not repeat: not cached
        AtomicFile file(record_path(output, hashes[index]));
        file.stream() << text << "\n";
        file.commit();
      }
      finish(rank, std::move(record));
      if (!stop_signal && next < pending.size()) {
        const std::size_t index_next = pending[next++];
        world.send(rank, task_tag, std::to_string(index_next) + " " + hashes[index_next]);
        running[rank] = {index_next, std::chrono::steady_clock::now()};
        report();
      } else {
        world.send(rank, task_tag, "stop");
      }
    }
    if (stop_signal) throw interrupted(stop_signal);
  } else {
    while (next < pending.size() || !running.empty()) {
      if (const int signal = pending_interrupt()) {
        // Stop the running cases (a signal sent to this process only does not reach them)
        // and count those that finished before it (they exit 0 with their record cached).
        std::vector<long> stopped;
        for (const auto& entry : running) stopped.push_back(entry.first), ::kill(static_cast<pid_t>(entry.first), signal);
        for (const long pid : stopped) {
          int status = 0;
          ::waitpid(static_cast<pid_t>(pid), &status, 0);
          const std::string& hash = hashes[running.at(pid).first];
          if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            if (auto record = read_record(record_path(output, hash), hash)) finish(pid, std::move(*record));
        }
        throw interrupted(signal);
      }
      while (next < pending.size() && running.size() < jobs) {
        const std::size_t index = pending[next++];
        const pid_t pid =
            start_case_process(definition, cases[index], hashes[index], output, options.plugins, jobs == 1);
        running[pid] = {index, std::chrono::steady_clock::now()};
        report();
      }
      // Polled, not blocking: the signal handlers restart system calls (SA_RESTART), and a
      // SIGINT or SIGTERM must stop the study without waiting for a long case to end.
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (pid < 0) {
        if (errno == EINTR) continue;
        throw Error(std::string("waiting for a case's process failed: ") + std::strerror(errno));
      }
      const auto found = running.find(pid);
      if (found == running.end()) continue;
      // A SIGINT or SIGTERM sent to the process group (Ctrl-C) reaches the cases too and can
      // end one before the check above sees it: that case was interrupted, not a crash to
      // count (its signal is pending here by now: it was raised before the case ended).
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && pending_interrupt()) {
        running.erase(found);
        continue;
      }
      finish(pid, collect_record(status, output, hashes[found->second.first]));
    }
  }
  std::vector<CaseRecord> result;
  for (auto& record : records) result.push_back(std::move(*record));
  return result;
}

}  // namespace liembs::study
