#pragma once
// CPU time of study cases (docs/studies.md, "Cost" and "Algorithm studies"): the clocks, and
// a run repeated until it has used a minimum CPU time, as Google Benchmark's min_time does
// (a run of a fraction of a millisecond timed once is mostly noise).
#include <sched.h>
#include <time.h>

#include <cstddef>
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

}  // namespace liembs::study
