#pragma once
// Batch evaluation on several threads (docs/batch.md): one algorithm's row function
// (BatchEvaluator, liembs/plugin/algorithm.hpp: the one `liembs eval` uses, so every
// algorithm plugin that can be evaluated, tree algorithms and later ones alike, works here)
// applied to many states. The rows are split over threads; every thread has an evaluator
// of its own (its workspace), bound once and reused, so no state allocates. A row is always
// computed by the same code on its own, whatever thread takes it: the results are
// bit-identical for every thread count.
//
// Threads: std::jthread, started for one call (all the rounds of for_each_round) and
// joined before it returns. No pool lives
// between calls, so nothing idles, nothing outlives the evaluators, and a process that
// forks between calls (Python's multiprocessing) forks no worker. Starting a thread costs
// tens of microseconds, small against a block of rows; small batches use fewer threads.
#include <liembs/plugin/algorithm.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace liembs {

struct Run;

// The number of cores this process may run on (its CPU affinity), at least 1.
unsigned available_cores();

// The most threads a batch (or a study's cases) runs at once: the machine's hardware threads
// (std::thread::hardware_concurrency(), at least available_cores()). More only cost memory
// (10^6 threads took 1.4 GB) and switches.
unsigned machine_threads();
// `asked` threads capped at machine_threads(); 0 means available_cores(). Every count a user
// gives (`liembs eval --threads`, `liembs study -j`, the Python module's threads=) goes through it.
unsigned capped_threads(unsigned asked);

// Evaluates one row and checks it, the policy of every batch evaluation (`liembs eval`, the
// Python module; docs/batch.md "Bad rows"): an input that is not finite (NaN, infinity) or an
// output that is not (inputs so large that the algorithm overflows) throws ConfigError naming
// the column; nothing non-finite is ever returned or written.
void evaluate_row(BatchEvaluator& evaluator, const double* inputs, double* outputs);

// How a failed row or an interruption is described in the error thrown.
struct BatchMessages {
  // Prefix of a failed row's message, e.g. "row 17: " (the default) or "states.csv:19: ".
  std::function<std::string(std::size_t row)> row_prefix;
  // How far the work got when SIGINT/SIGTERM stopped it (liembs/util/interrupt.hpp), given
  // the rows finished; default "after N state(s)".
  std::function<std::string(std::size_t rows_done)> interrupted_where;
  // Called on the calling thread (worker 0) after each block of rows it finishes, with the
  // rows finished so far by all threads, over all rounds (for_each_block: blocks): a progress
  // report (`liembs eval` on a terminal) that costs the other threads nothing.
  std::function<void(std::size_t rows_done)> progress;
};

// Runs work(worker, row) for rows [0, rows) on up to `threads` threads (worker in
// [0, threads)), in blocks of consecutive rows taken in order. If rows fail, the error of
// the lowest failing row is rethrown, with the same class (ConfigError, ModelError,
// SimulationError, ...) and its message prefixed by messages.row_prefix(row); the rows
// after a failure may or may not have run. Between blocks a pending SIGINT/SIGTERM stops
// every thread and throws Interrupted. Returns the number of threads used (fewer for small
// batches: at least min_rows_per_thread rows each).
// `alongside`, if given, runs once on the calling thread before it takes rows, while the
// other threads start on them (liembs eval writes the previous chunk of a file and reads
// the next one there). Its exception is rethrown after the rows have run, unless a row
// failed or a signal stopped them (those are thrown first).
unsigned for_each_row(std::size_t rows, unsigned threads, const std::function<void(unsigned worker, std::size_t row)>& work,
                      const BatchMessages& messages = {}, const std::function<void()>& alongside = {});

// Rounds of rows on the same threads, started once (liembs eval: a round per chunk of a
// file): round 0 has `first_rows` rows; when every thread has finished round r,
// next_round(r + 1) runs once, while the threads wait, and returns the rows of round r + 1
// (0: the end). In each round, work(worker, row) runs for rows [0, rows of the round) and
// alongside(r), if given, on the calling thread before it takes rows, as for for_each_row.
// A failed row, a signal or an error of `alongside` ends the work after its round, and is
// thrown as for for_each_row (next_round's error last); the threads used are decided by
// `first_rows`. for_each_row is the case of one round.
unsigned for_each_round(std::size_t first_rows, unsigned threads, const std::function<std::size_t(std::size_t round)>& next_round,
                        const std::function<void(unsigned worker, std::size_t row)>& work, const BatchMessages& messages = {},
                        const std::function<void(std::size_t round)>& alongside = {});

// for_each_row for rows that are pieces of work of their own (liembs eval: a block of a
// CSV file, hundreds of states): a thread takes one at a time, in increasing order, so
// work(worker, block) may wait for a lower block that another thread has taken; up to
// `threads` threads run, whatever the number of blocks. Errors and signals as for
// for_each_row (`rows_done` counts blocks).
unsigned for_each_block(std::size_t blocks, unsigned threads, const std::function<void(unsigned worker, std::size_t block)>& work,
                        const BatchMessages& messages = {});

inline constexpr std::size_t min_rows_per_thread = 256;
// The sizes of the blocks of rows the threads take (guided: shrinking towards the end).
inline constexpr std::size_t min_block_rows = 16, max_block_rows = 2048;

class BatchEvaluation {
 public:
  // Binds a new evaluator (a workspace) of the algorithm; called once per thread used.
  using Binder = std::function<std::unique_ptr<BatchEvaluator>()>;

  // `threads` = 0 means available_cores() (the user's counts are capped_threads() first:
  // the CLI and the Python module do that; tests may run more threads than cores). Binds the first evaluator at once (so that a
  // model the algorithm refuses fails here).
  explicit BatchEvaluation(Binder bind, unsigned threads = 0);
  // The algorithm, representation and model of a run loaded for evaluation (RunPurpose::
  // evaluate or simulate); the run must outlive this object.
  explicit BatchEvaluation(const Run& run, unsigned threads = 0);
  ~BatchEvaluation();

  unsigned threads() const { return threads_; }
  void set_threads(unsigned threads);  // 0: available_cores()

  const std::vector<std::string>& input_columns() const { return evaluators_.front()->input_columns(); }
  const std::vector<std::string>& output_columns() const { return evaluators_.front()->output_columns(); }
  std::size_t input_count() const { return input_columns().size(); }
  std::size_t output_count() const { return output_columns().size(); }

  // Evaluates the rows of `inputs` (row-major, input_count() values a row) into `outputs`
  // (row-major, output_count() values a row), both preallocated: rows = inputs.size() /
  // input_count(). Throws ConfigError if the sizes do not fit, and a failed row's error as
  // for_each_row (message "row N: ...", rows counted from 0).
  void evaluate(std::span<const double> inputs, std::span<double> outputs, const BatchMessages& messages = {});

  // The general form: work(evaluator, worker, row) on the threads, each with its own
  // evaluator, for readers that also parse and format rows in the threads (liembs eval);
  // `alongside` as for the free function.
  void for_each_row(std::size_t rows,
                    const std::function<void(BatchEvaluator& evaluator, unsigned worker, std::size_t row)>& work,
                    const BatchMessages& messages = {}, const std::function<void()>& alongside = {});
  // for_each_round with an evaluator per thread.
  void for_each_round(std::size_t first_rows, const std::function<std::size_t(std::size_t round)>& next_round,
                      const std::function<void(BatchEvaluator& evaluator, unsigned worker, std::size_t row)>& work,
                      const BatchMessages& messages = {}, const std::function<void(std::size_t round)>& alongside = {});
  // for_each_block with an evaluator per thread.
  void for_each_block(std::size_t blocks,
                      const std::function<void(BatchEvaluator& evaluator, unsigned worker, std::size_t block)>& work,
                      const BatchMessages& messages = {});

 private:
  void bind_evaluators(unsigned count);
  unsigned bind_for(std::size_t rows);  // binds the evaluators of the threads `rows` rows use; their number
  unsigned bind_threads(unsigned wanted);  // binds the evaluators of `wanted` threads (at most threads())

  Binder bind_;
  unsigned threads_ = 1;
  std::vector<std::unique_ptr<BatchEvaluator>> evaluators_;
  std::mutex busy_;  // one batch at a time per object (the evaluators are its workspaces)
};

}  // namespace liembs
