#pragma once
// CPU time of study cases (docs/studies.md, "Cost" and "Algorithm studies"): the clocks, and
// a run repeated until it has used a minimum CPU time, as Google Benchmark's min_time does
// (a run of a fraction of a millisecond timed once is mostly noise).
#include <time.h>

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

}  // namespace liembs::study
