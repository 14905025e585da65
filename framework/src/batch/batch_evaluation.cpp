// Batch evaluation on several threads (liembs/batch/batch_evaluation.hpp).
#include <liembs/batch/batch_evaluation.hpp>

#include <liembs/error.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/interrupt.hpp>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <system_error>
#include <thread>

namespace liembs {

unsigned available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<unsigned>(count);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

unsigned machine_threads() { return std::max(std::thread::hardware_concurrency(), available_cores()); }

unsigned capped_threads(unsigned asked) { return asked == 0 ? available_cores() : std::min(asked, machine_threads()); }

namespace {

[[noreturn]] void not_finite(const char* kind, const std::string& column, double value, const char* hint) {
  throw ConfigError(std::string(kind) + " column '" + column + "' is " +
                    (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") + ", not a finite number" + hint);
}

}  // namespace

void evaluate_row(BatchEvaluator& evaluator, const double* inputs, double* outputs) {
  const auto& in = evaluator.input_columns();
  for (std::size_t c = 0; c < in.size(); ++c)
    if (!std::isfinite(inputs[c])) not_finite("input", in[c], inputs[c], "");
  evaluator.evaluate(inputs, outputs);
  const auto& out = evaluator.output_columns();
  for (std::size_t c = 0; c < out.size(); ++c)
    if (!std::isfinite(outputs[c]))
      not_finite("output", out[c], outputs[c], " (the algorithm overflowed: are the row's inputs within range?)");
}

namespace {

// Rethrows `error` with `prefix` before its message, keeping its class (so the exit status
// of the CLI and the Python exception type stay those of the row's error).
[[noreturn]] void rethrow_with_prefix(const std::exception_ptr& error, const std::string& prefix) {
  try {
    std::rethrow_exception(error);
  } catch (const Interrupted&) {
    throw;
  } catch (const ConfigError& e) {
    throw ConfigError(prefix + e.what());
  } catch (const PluginError& e) {
    throw PluginError(prefix + e.what());
  } catch (const ModelError& e) {
    throw ModelError(prefix + e.what());
  } catch (const SimulationError& e) {
    throw SimulationError(prefix + e.what());
  } catch (const std::exception& e) {
    throw Error(prefix + e.what());
  }
}

void lower_to(std::atomic<std::size_t>& value, std::size_t candidate) {
  std::size_t current = value.load();
  while (candidate < current && !value.compare_exchange_weak(current, candidate)) {
  }
}

// The barrier between the rounds of for_each_round: the last thread to arrive runs
// `complete` (the next round is set up there while every other thread waits) and releases
// the others. With `spin`, a waiting thread spins for up to 200 µs before it sleeps: the
// guided blocks end the threads' rounds within tens of microseconds of each other, and a
// sleeping thread's core may go idle and take longer than that to wake (a thread started
// per round instead costs its start and its join every round). Without (one round, the
// helpers only wait to end), it sleeps at once.
class RoundBarrier {
 public:
  RoundBarrier(unsigned count, bool spin) : count_(count), spin_(spin) {}

  // A thread that will never arrive (it could not be started); called before the calling
  // thread arrives (others may have).
  void drop() { --count_; }

  template <class Complete>
  void arrive_and_wait(Complete&& complete) {
    const unsigned generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_.load()) {
      arrived_.store(0, std::memory_order_relaxed);
      complete();
      generation_.store(generation + 1, std::memory_order_release);
      generation_.notify_all();
      return;
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_ ? 200 : 0);
    while (generation_.load(std::memory_order_acquire) == generation) {
      if (std::chrono::steady_clock::now() > give_up) {
        generation_.wait(generation, std::memory_order_acquire);
      } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#else
        std::this_thread::yield();
#endif
      }
    }
  }

 private:
  std::atomic<unsigned> count_, arrived_{0}, generation_{0};
  bool spin_;
};

// for_each_row as for_each_round: one round, `alongside` in it.
std::size_t one_round(std::size_t) { return 0; }
std::function<void(std::size_t)> in_the_round(const std::function<void()>& alongside) {
  if (!alongside) return {};
  return [&alongside](std::size_t) { alongside(); };
}

// for_each_round; `spin`: more than one round may come (RoundBarrier); `one_by_one`: rows
// are taken one at a time and every thread is used (for_each_block).
unsigned run_rounds(std::size_t first_rows, unsigned threads, const std::function<std::size_t(std::size_t)>& next_round,
                    const std::function<void(unsigned, std::size_t)>& work, const BatchMessages& messages,
                    const std::function<void(std::size_t)>& alongside, bool spin, bool one_by_one = false) {
  if (threads == 0) threads = available_cores();
  const std::size_t useful = std::max<std::size_t>(1, one_by_one ? first_rows : first_rows / min_rows_per_thread);
  const auto used = static_cast<unsigned>(std::min<std::size_t>(threads, useful));

  // The round being run: set before the threads start and by the barrier's completion,
  // while every thread waits; read by all during the round.
  std::size_t round = 0, rows = first_rows;
  bool finished = false;
  // Blocks of consecutive rows are taken in order from a shared counter, so a thread slowed
  // by other work on the machine takes fewer; which thread computes a row never changes its
  // result. Guided sizes: a block is an eighth of the rows left per thread (at most
  // max_block_rows, at least min_block_rows), so the blocks shrink towards the end and the
  // threads finish a round within about one short block of each other.
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> next_row{0}, stop_row{none}, rows_done{0};
  std::atomic<int> signal{0};
  struct Failure {
    std::size_t row = none;
    std::exception_ptr error;
  };
  std::vector<Failure> failures(used);
  std::exception_ptr alongside_error, next_round_error;

  const auto take_rows = [&](unsigned worker) {
    for (;;) {
      if (const int pending = pending_interrupt()) {
        signal = pending;
        stop_row = 0;
        return;
      }
      // Blocks are claimed in increasing order: when a row fails, every block before it was
      // claimed earlier and runs to its end, so the lowest failing row is always found.
      std::size_t begin = next_row.load(), size = 0;
      do {
        if (begin >= rows || begin >= stop_row.load()) return;
        size = one_by_one ? 1 : std::clamp<std::size_t>((rows - begin) / (8 * used), min_block_rows, max_block_rows);
      } while (!next_row.compare_exchange_weak(begin, begin + size));
      const std::size_t end = std::min(rows, begin + size);
      for (std::size_t row = begin; row < end; ++row) {
        try {
          work(worker, row);
        } catch (...) {
          failures[worker] = {row, std::current_exception()};
          lower_to(stop_row, row);
          return;
        }
      }
      const std::size_t done = rows_done += end - begin;
      if (worker == 0 && messages.progress) messages.progress(done);
    }
  };
  // After every thread has finished a round: the next one, unless something stopped this one.
  const auto end_round = [&]() noexcept {
    const bool failed = std::any_of(failures.begin(), failures.end(), [](const Failure& f) { return f.error != nullptr; });
    if (signal || failed || alongside_error || rows == 0) {
      finished = true;
      return;
    }
    try {
      rows = next_round(++round);
    } catch (...) {
      next_round_error = std::current_exception();
      rows = 0;
    }
    finished = rows == 0;
    next_row = 0;
  };
  RoundBarrier barrier(used, spin);
  const auto run_worker = [&](unsigned worker) {
    while (!finished) {
      if (worker == 0 && alongside) {
        try {
          alongside(round);
        } catch (...) {
          alongside_error = std::current_exception();
        }
      }
      take_rows(worker);
      barrier.arrive_and_wait(end_round);
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(used - 1);
    for (unsigned worker = 1; worker < used; ++worker) {
      try {
        helpers.emplace_back(run_worker, worker);
      } catch (const std::system_error&) {  // no more threads to be had: the others share the rows
        for (; worker < used; ++worker) barrier.drop();
        break;
      }
    }
    run_worker(0);
  }  // joins the helpers

  if (signal) {
    const std::size_t done = rows_done.load();
    throw Interrupted(signal, messages.interrupted_where ? messages.interrupted_where(done)
                                                        : "after " + std::to_string(done) + " state(s)");
  }
  const auto first = std::min_element(failures.begin(), failures.end(),
                                      [](const Failure& a, const Failure& b) { return a.row < b.row; });
  if (first->error)
    rethrow_with_prefix(first->error, messages.row_prefix ? messages.row_prefix(first->row)
                                                          : "row " + std::to_string(first->row) + ": ");
  if (alongside_error) std::rethrow_exception(alongside_error);
  if (next_round_error) std::rethrow_exception(next_round_error);
  return used;
}

}  // namespace

unsigned for_each_round(std::size_t first_rows, unsigned threads, const std::function<std::size_t(std::size_t)>& next_round,
                        const std::function<void(unsigned, std::size_t)>& work, const BatchMessages& messages,
                        const std::function<void(std::size_t)>& alongside) {
  return run_rounds(first_rows, threads, next_round, work, messages, alongside, true);
}

unsigned for_each_row(std::size_t rows, unsigned threads, const std::function<void(unsigned, std::size_t)>& work,
                      const BatchMessages& messages, const std::function<void()>& alongside) {
  return run_rounds(rows, threads, one_round, work, messages, in_the_round(alongside), false);
}

unsigned for_each_block(std::size_t blocks, unsigned threads, const std::function<void(unsigned, std::size_t)>& work,
                        const BatchMessages& messages) {
  return run_rounds(blocks, threads, one_round, work, messages, {}, false, true);
}

BatchEvaluation::BatchEvaluation(Binder bind, unsigned threads) : bind_(std::move(bind)) {
  set_threads(threads);
  bind_evaluators(1);
}

BatchEvaluation::BatchEvaluation(const Run& run, unsigned threads)
    : BatchEvaluation(
          [&run]() -> std::unique_ptr<BatchEvaluator> {
            const DynamicsContext context{run.model, *run.group, run.group_name, run.representation.get(),
                                          run.representation_name};
            try {
              return bind_batch_evaluator(*run.algorithm, context);
            } catch (const ModelError& error) {
              throw ModelError(run.config_file.string() + ": algorithm '" + run.algorithm_name + "'" +
                               (run.representation ? ", representation '" + run.representation_name + "'" : std::string()) +
                               ": " + error.what());
            }
          },
          threads) {}

BatchEvaluation::~BatchEvaluation() = default;

void BatchEvaluation::set_threads(unsigned threads) { threads_ = threads == 0 ? available_cores() : threads; }

void BatchEvaluation::bind_evaluators(unsigned count) {
  while (evaluators_.size() < count) {
    auto evaluator = bind_();
    if (!evaluator) throw Error("the algorithm bound no evaluator");
    if (!evaluators_.empty() && (evaluator->input_columns() != evaluators_.front()->input_columns() ||
                                 evaluator->output_columns() != evaluators_.front()->output_columns()))
      throw Error("the algorithm bound evaluators with different columns");
    evaluators_.push_back(std::move(evaluator));
  }
}

void BatchEvaluation::evaluate(std::span<const double> inputs, std::span<double> outputs, const BatchMessages& messages) {
  const std::size_t in = input_count(), out = output_count();
  const std::size_t rows = in > 0 ? inputs.size() / in : outputs.size() / std::max<std::size_t>(out, 1);
  if (in > 0 && inputs.size() % in != 0)
    throw ConfigError("the inputs hold " + std::to_string(inputs.size()) + " values, not a multiple of the " +
                      std::to_string(in) + " input columns");
  if (outputs.size() != rows * out)
    throw ConfigError("the outputs hold " + std::to_string(outputs.size()) + " values; " + std::to_string(rows) +
                      " rows of " + std::to_string(out) + " output columns need " + std::to_string(rows * out));
  const double* input = inputs.data();
  double* output = outputs.data();
  for_each_row(
      rows, [&](BatchEvaluator& evaluator, unsigned, std::size_t row) { evaluate_row(evaluator, input + row * in, output + row * out); },
      messages);
}

unsigned BatchEvaluation::bind_for(std::size_t rows) {
  return bind_threads(static_cast<unsigned>(std::min<std::size_t>(threads_, std::max<std::size_t>(1, rows / min_rows_per_thread))));
}

unsigned BatchEvaluation::bind_threads(unsigned wanted) {
  wanted = std::clamp(wanted, 1u, threads_);
  bind_evaluators(wanted);
  return wanted;
}

void BatchEvaluation::for_each_row(std::size_t rows, const std::function<void(BatchEvaluator&, unsigned, std::size_t)>& work,
                                   const BatchMessages& messages, const std::function<void()>& alongside) {
  const std::lock_guard lock(busy_);
  liembs::for_each_row(
      rows, bind_for(rows), [&](unsigned worker, std::size_t row) { work(*evaluators_[worker], worker, row); }, messages,
      alongside);
}

void BatchEvaluation::for_each_round(std::size_t first_rows, const std::function<std::size_t(std::size_t)>& next_round,
                                     const std::function<void(BatchEvaluator&, unsigned, std::size_t)>& work,
                                     const BatchMessages& messages, const std::function<void(std::size_t)>& alongside) {
  const std::lock_guard lock(busy_);
  liembs::for_each_round(
      first_rows, bind_for(first_rows), next_round,
      [&](unsigned worker, std::size_t row) { work(*evaluators_[worker], worker, row); }, messages, alongside);
}

void BatchEvaluation::for_each_block(std::size_t blocks,
                                     const std::function<void(BatchEvaluator&, unsigned, std::size_t)>& work,
                                     const BatchMessages& messages) {
  const std::lock_guard lock(busy_);
  liembs::for_each_block(
      blocks, bind_threads(static_cast<unsigned>(std::min<std::size_t>(threads_, std::max<std::size_t>(1, blocks)))),
      [&](unsigned worker, std::size_t block) { work(*evaluators_[worker], worker, block); }, messages);
}

}  // namespace liembs
