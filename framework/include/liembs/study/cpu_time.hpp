#pragma once
// CPU time of study cases (docs/studies.md, "Cost" and "Algorithm studies"): the clocks, a
// run repeated until it has used a minimum CPU time, as Google Benchmark's min_time does (a
// run of a fraction of a millisecond timed once is mostly noise), and timed repetitions of
// that on one CPU after another. Simulation cases (a run: one integration) and algorithm
// cases (a run: one pass of the algorithm over the random states) are timed the same way.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace liembs::study {

// CPU seconds used so far by this process (all its threads) or by the calling thread.
enum class CpuClock { process, thread };

inline double cpu_seconds_now(CpuClock clock) {
  timespec now{};
  ::clock_gettime(clock == CpuClock::process ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

struct RepeatedRuns {
  long long runs = 0;
  double cpu_seconds = 0.0;  // of all the runs together
  double per_run() const { return cpu_seconds / static_cast<double>(runs); }
};

// Calls `timed_run` (it runs once and returns the CPU seconds of its timed part, so that
// set-up can be left out) at least once and until the runs together have used at least
// `min_cpu_seconds`: runs * per_run() >= min_cpu_seconds.
template <class TimedRun>
RepeatedRuns repeat_for_cpu_time(double min_cpu_seconds, TimedRun&& timed_run) {
  RepeatedRuns repeated;
  do {
    repeated.cpu_seconds += timed_run();
    ++repeated.runs;
  } while (repeated.cpu_seconds < min_cpu_seconds);
  return repeated;
}

// How a study times its cases: [measure] of a simulation study, [timing] of an algorithm study
// (the keys `repetitions` and `min_cpu_seconds`, read by load_study; docs/studies.md states
// these defaults, checked by test-study).
struct CpuTimeSettings {
  long long repetitions = 3;     // timed repetitions; the fastest counts, the slowest gives the spread
  double min_cpu_seconds = 0.05; // s of CPU time each repetition runs for (0: one run)
  static constexpr long long repetitions_max = 1000;
  static constexpr double min_cpu_seconds_max = 10.0;  // s: a larger value is a mistake, not a measurement
};

// Runs the calling thread on one allowed CPU after another, from the one it is on, and back on
// all of them when destroyed. On a shared or virtual machine the CPUs' speeds differ and change
// (another machine's work on the same physical core): a case's process stays on the CPU it was
// started on, and its fastest repetition differed by up to 25 % between two runs of a study as
// it landed on a fast or a slow CPU; the fastest of repetitions on different CPUs repeats.
class CpuRotation {
 public:
  CpuRotation() {
    if (::sched_getaffinity(0, sizeof allowed_, &allowed_) != 0) return;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed_)) cpus_.push_back(cpu);
    const int current = ::sched_getcpu();
    for (std::size_t i = 0; i < cpus_.size(); ++i)
      if (cpus_[i] == current) first_ = i;
  }
  ~CpuRotation() {
    if (moved_) ::sched_setaffinity(0, sizeof allowed_, &allowed_);
  }
  CpuRotation(const CpuRotation&) = delete;
  CpuRotation& operator=(const CpuRotation&) = delete;

  // The k-th CPU from the first one, cyclically (nothing with fewer than two CPUs allowed).
  void move_to(std::size_t k) {
    if (cpus_.size() < 2) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus_[(first_ + k) % cpus_.size()], &one);
    moved_ = ::sched_setaffinity(0, sizeof one, &one) == 0 || moved_;
  }

 private:
  cpu_set_t allowed_{};
  std::vector<int> cpus_;
  std::size_t first_ = 0;
  bool moved_ = false;
};

// The CPU time of a case: `repetitions` timed repetitions, each repeat_for_cpu_time of
// `timed_run`; with `rotate_cpus`, repetition k runs on the k-th CPU from the one the thread is
// on (CpuRotation), and the thread may use all its CPUs again afterwards.
struct TimedRepetitions {
  long long repetitions = 0;
  double fastest = std::numeric_limits<double>::quiet_NaN();  // CPU seconds per run, fastest repetition
  double slowest = std::numeric_limits<double>::quiet_NaN();  // the slowest repetition's
  long long fastest_runs = 0;  // runs of the fastest repetition
  long long total_runs = 0;    // runs of all the repetitions
};

template <class TimedRun>
TimedRepetitions time_repetitions(const CpuTimeSettings& settings, bool rotate_cpus, TimedRun&& timed_run) {
  TimedRepetitions timed;
  std::optional<CpuRotation> cpus;
  if (rotate_cpus) cpus.emplace();
  for (long long repetition = 0; repetition < settings.repetitions; ++repetition) {
    if (cpus) cpus->move_to(static_cast<std::size_t>(repetition));
    const RepeatedRuns repeated = repeat_for_cpu_time(settings.min_cpu_seconds, timed_run);
    const double per_run = repeated.per_run();
    if (repetition == 0 || per_run < timed.fastest) {
      timed.fastest = per_run;
      timed.fastest_runs = repeated.runs;
    }
    timed.slowest = repetition == 0 ? per_run : std::max(timed.slowest, per_run);
    timed.total_runs += repeated.runs;
    ++timed.repetitions;
  }
  return timed;
}

}  // namespace liembs::study
