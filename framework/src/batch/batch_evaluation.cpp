// Batch evaluation on several threads (liembs/batch/batch_evaluation.hpp).
#include <liembs/batch/batch_evaluation.hpp>

#include <liembs/error.hpp>
#include <liembs/sim/run.hpp>
#include <liembs/util/interrupt.hpp>

#include <sched.h>

#include <algorithm>
#include <atomic>
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

}  // namespace

unsigned for_each_row(std::size_t rows, unsigned threads, const std::function<void(unsigned, std::size_t)>& work,
                      const BatchMessages& messages, const std::function<void()>& alongside) {
  if (threads == 0) threads = available_cores();
  const std::size_t useful = std::max<std::size_t>(1, rows / min_rows_per_thread);
  const auto used = static_cast<unsigned>(std::min<std::size_t>(threads, useful));
  std::exception_ptr alongside_error;
  const auto run_alongside = [&] {
    if (!alongside) return;
    try {
      alongside();
    } catch (...) {
      alongside_error = std::current_exception();
    }
  };
  if (used == 1 && rows < min_rows_per_thread) {  // a small batch: in order, on the calling thread
    run_alongside();
    for (std::size_t row = 0; row < rows; ++row) {
      try {
        work(0, row);
      } catch (...) {
        rethrow_with_prefix(std::current_exception(), messages.row_prefix ? messages.row_prefix(row)
                                                                          : "row " + std::to_string(row) + ": ");
      }
    }
    if (const int signal = pending_interrupt())
      throw Interrupted(signal, messages.interrupted_where ? messages.interrupted_where(rows)
                                                          : "after " + std::to_string(rows) + " state(s)");
    if (alongside_error) std::rethrow_exception(alongside_error);
    return 1;
  }
  // Blocks of consecutive rows are taken in order from a shared counter, so a thread slowed
  // by other work on the machine takes fewer; which thread computes a row never changes its
  // result. Guided sizes: a block is an eighth of the rows left per thread (at most
  // max_block_rows, at least min_block_rows), so the blocks shrink towards the end and the
  // threads finish within about one short block of each other (a join waits for the last).
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> next_row{0}, stop_row{none}, rows_done{0};
  std::atomic<int> signal{0};
  struct Failure {
    std::size_t row = none;
    std::exception_ptr error;
  };
  std::vector<Failure> failures(used);

  const auto run_worker = [&](unsigned worker) {
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
        size = std::clamp<std::size_t>((rows - begin) / (8 * used), min_block_rows, max_block_rows);
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
      rows_done += end - begin;
    }
  };

  {
    std::vector<std::jthread> helpers;
    helpers.reserve(used - 1);
    for (unsigned worker = 1; worker < used; ++worker) {
      try {
        helpers.emplace_back(run_worker, worker);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: the blocks are shared out among those running
      }
    }
    run_alongside();
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
  return used;
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
              return run.algorithm->bind_evaluator(context);
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
      rows, [&](BatchEvaluator& evaluator, unsigned, std::size_t row) { evaluator.evaluate(input + row * in, output + row * out); },
      messages);
}

void BatchEvaluation::for_each_row(std::size_t rows, const std::function<void(BatchEvaluator&, unsigned, std::size_t)>& work,
                                   const BatchMessages& messages, const std::function<void()>& alongside) {
  const std::lock_guard lock(busy_);
  const auto wanted = static_cast<unsigned>(std::min<std::size_t>(threads_, std::max<std::size_t>(1, rows / min_rows_per_thread)));
  bind_evaluators(wanted);
  liembs::for_each_row(
      rows, wanted, [&](unsigned worker, std::size_t row) { work(*evaluators_[worker], worker, row); }, messages, alongside);
}

}  // namespace liembs
