// Batch evaluation on threads (liembs/batch/batch_evaluation.hpp): every thread count gives
// the same bits, a batch equals the per-state kernel calls, an empty batch does nothing, and
// a bad row is named (the lowest bad row, whatever the thread count); rounds of rows
// (for_each_round) run in order, each set up while every thread waits.
#include <liembs/batch/batch_evaluation.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/representation.hpp>
#include <liembs/host/run.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace liembs;

namespace {

const char* const tree_algorithms[] = {"aba",      "crba-cholesky", "rnea",    "crba",     "coriolis",
                                       "gravity", "rnea-derivatives", "aba-derivatives", "regressor",
                                       "rnea-geometric-derivatives", "centroidal", "kinematics", "jacobians", "energy"};

struct LoadedRun {
  Registry registry;  // outlives the components created from its plugins
  Run run;
};

std::unique_ptr<LoadedRun> load(const std::string& file, const std::string& algorithm,
                                 const std::string& representation = "body-fixed") {
  auto loaded = std::make_unique<LoadedRun>();
  loaded->registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR "/configs/examples/") + file);
  document->set_override("algorithm.name=" + algorithm);
  document->set_override("representation.name=" + representation);
  loaded->run = load_run(document, loaded->registry, RunPurpose::evaluate);
  return loaded;
}

// Random input rows: angles and rates in [-2, 2]; a base quaternion column gets any
// non-zero value (the evaluator normalizes it).
std::vector<double> random_rows(const std::vector<std::string>& columns, std::size_t rows, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::vector<double> values(rows * columns.size());
  for (double& value : values) value = uniform(random);
  return values;
}

}  // namespace

TEST_CASE("every thread count gives the same bits for every tree algorithm", "[batch]") {
  for (const char* file : {"iiwa-arm.toml", "floating-arm.toml"})
    for (const char* algorithm : tree_algorithms) {
      INFO(file << ", " << algorithm);
      auto loaded = load(file, algorithm, "spatial");
      BatchEvaluation batch(loaded->run);
      // Enough rows for 3 threads, a ragged last block; 7 threads: rnea and aba only (each
      // thread's evaluator starts at another row, which 2 and 3 threads already show for
      // every algorithm; 7 for all cost 100 s under the sanitizers).
      const bool seven = std::strcmp(algorithm, "rnea") == 0 || std::strcmp(algorithm, "aba") == 0;
      const std::size_t rows = (seven ? 7 : 3) * min_rows_per_thread + 37;
      const std::vector<double> inputs = random_rows(batch.input_columns(), rows, 11);
      std::vector<double> reference(rows * batch.output_count());
      batch.set_threads(1);
      batch.evaluate(inputs, reference);
      for (unsigned threads : {2u, 3u, 7u}) {
        if (threads == 7 && !seven) continue;
        batch.set_threads(threads);
        std::vector<double> outputs(reference.size(), -1.0);
        batch.evaluate(inputs, outputs);
        CHECK(std::memcmp(outputs.data(), reference.data(), reference.size() * sizeof(double)) == 0);
      }
    }
}

TEST_CASE("a batch equals the per-state kernel calls", "[batch]") {
  for (const char* representation : {"body-fixed", "spatial", "hybrid", "mixed"}) {
    INFO(representation);
    auto rnea = load("iiwa-arm.toml", "rnea", representation);
    auto aba = load("iiwa-arm.toml", "aba", representation);
    auto crba = load("iiwa-arm.toml", "crba", representation);
    const auto tree = std::make_shared<const KinematicTree>(compile_tree(*rnea->run.model));
    auto dynamics = rnea->run.representation->bind_tree(tree);
    const int n = tree->dof();
    REQUIRE(n == 7);
    const std::size_t rows = 1000;
    const std::vector<double> inputs = random_rows(BatchEvaluation(rnea->run).input_columns(), rows, 5);
    std::vector<double> forces(rows * n), accelerations(rows * n), masses(rows * n * n);
    BatchEvaluation(rnea->run, 3).evaluate(inputs, forces);
    BatchEvaluation(aba->run, 2).evaluate(inputs, accelerations);  // the same columns, tau in qdd's place
    std::vector<double> crba_inputs;  // crba takes q alone
    for (std::size_t row = 0; row < rows; ++row)
      crba_inputs.insert(crba_inputs.end(), inputs.begin() + row * 3 * n, inputs.begin() + row * 3 * n + n);
    BatchEvaluation(crba->run, 2).evaluate(crba_inputs, masses);

    TreeState state;
    Eigen::VectorXd force, acceleration;
    Eigen::MatrixXd mass;
    for (std::size_t row = 0; row < rows; ++row) {
      const double* in = inputs.data() + row * 3 * n;
      state.q = Eigen::Map<const Eigen::VectorXd>(in, n);
      state.qd = Eigen::Map<const Eigen::VectorXd>(in + n, n);
      const Eigen::Map<const Eigen::VectorXd> last(in + 2 * n, n);
      dynamics->inverse_dynamics(state, last, force);
      dynamics->forward_dynamics(state, last, acceleration);
      dynamics->mass_matrix(state, mass);
      for (int i = 0; i < n; ++i) {
        REQUIRE(forces[row * n + i] == force(i));  // the same code on the same numbers: equal bits
        REQUIRE(accelerations[row * n + i] == acceleration(i));
        for (int j = 0; j < n; ++j) REQUIRE(masses[(row * n + i) * n + j] == mass(i, j));  // row-major
      }
    }
  }
}

TEST_CASE("an empty batch evaluates nothing, and sizes that do not fit are refused", "[batch]") {
  auto loaded = load("iiwa-arm.toml", "rnea");
  BatchEvaluation batch(loaded->run, 4);
  CHECK(batch.input_count() == 21);
  CHECK(batch.output_count() == 7);
  std::vector<double> none;
  CHECK_NOTHROW(batch.evaluate(none, none));
  std::vector<double> inputs(2 * 21), outputs(7);
  CHECK_THROWS_WITH(batch.evaluate(inputs, outputs), Catch::Contains("2 rows of 7 output columns need 14"));
  inputs.resize(22);
  CHECK_THROWS_WITH(batch.evaluate(inputs, outputs), Catch::Contains("not a multiple of the 21 input columns"));
}

TEST_CASE("a bad row is named: the lowest bad row, with its error's class, whatever the thread count", "[batch]") {
  auto loaded = load("floating-arm.toml", "rnea");
  BatchEvaluation batch(loaded->run);
  const std::size_t rows = 3000;
  std::vector<double> inputs = random_rows(batch.input_columns(), rows, 3);
  const std::size_t width = batch.input_count();
  REQUIRE(batch.input_columns()[3] == "base.qw");
  for (std::size_t bad : {2999u, 1717u, 2100u})  // a zero base quaternion
    for (int c = 3; c < 7; ++c) inputs[bad * width + static_cast<std::size_t>(c)] = 0.0;
  std::vector<double> outputs(rows * batch.output_count());
  for (unsigned threads : {1u, 2u, 3u, 7u}) {
    INFO(threads << " threads");
    batch.set_threads(threads);
    CHECK_THROWS_WITH(batch.evaluate(inputs, outputs), "row 1717: columns base.qw .. base.qz: the base quaternion is zero (it gives no rotation)");
    BatchMessages messages;
    messages.row_prefix = [](std::size_t row) { return "states.csv:" + std::to_string(row + 2) + ": "; };
    CHECK_THROWS_WITH(batch.evaluate(inputs, outputs, messages), "states.csv:1719: columns base.qw .. base.qz: the base quaternion is zero (it gives no rotation)");
  }

  // The row's error keeps its class (the CLI's exit status, the Python exception type).
  std::atomic<int> calls{0};
  const auto failing = [&](unsigned, std::size_t row) {
    ++calls;
    if (row == 700 || row == 901) throw SimulationError("singular at " + std::to_string(row));
    if (row == 1200) throw ConfigError("bad value");
  };
  for (unsigned threads : {1u, 2u, 5u}) {
    CHECK_THROWS_AS(for_each_row(2000, threads, failing), SimulationError);
    CHECK_THROWS_WITH(for_each_row(2000, threads, failing), "row 700: singular at 700");
  }
}

TEST_CASE("every row runs exactly once, on at most the threads asked for", "[batch]") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    const std::size_t rows = 10007;
    std::vector<std::atomic<int>> runs(rows);
    std::vector<std::atomic<int>> workers(threads);
    const unsigned used = for_each_row(rows, threads, [&](unsigned worker, std::size_t row) {
      ++runs[row];
      ++workers[worker];
    });
    CHECK(used == threads);
    for (std::size_t row = 0; row < rows; ++row) REQUIRE(runs[row] == 1);
  }
  // A small batch does not start threads it has no work for.
  CHECK(for_each_row(10, 8, [](unsigned, std::size_t) {}) == 1);
  CHECK(for_each_row(0, 8, [](unsigned, std::size_t) { FAIL("no row to run"); }) == 1);
  CHECK(available_cores() >= 1);
}

TEST_CASE("work alongside the rows runs once on the calling thread, a row's error comes first", "[batch]") {
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    for (const std::size_t rows : {std::size_t{0}, std::size_t{10}, std::size_t{5000}}) {
      INFO(rows << " rows");
      std::atomic<int> alongside_runs{0};
      std::thread::id alongside_thread;
      std::atomic<std::size_t> done{0};
      for_each_row(rows, threads, [&](unsigned, std::size_t) { ++done; }, {}, [&] {
        ++alongside_runs;
        alongside_thread = std::this_thread::get_id();
      });
      CHECK(alongside_runs == 1);
      CHECK(alongside_thread == std::this_thread::get_id());
      CHECK(done == rows);
    }
    // Its error is rethrown after every row has run, unless a row failed.
    std::atomic<std::size_t> done{0};
    const auto failing_alongside = [] { throw ModelError("the next chunk is unreadable"); };
    CHECK_THROWS_AS(for_each_row(3000, threads, [&](unsigned, std::size_t) { ++done; }, {}, failing_alongside), ModelError);
    CHECK(done == 3000);
    CHECK_THROWS_WITH(for_each_row(3000, threads, [&](unsigned, std::size_t) { ++done; }, {}, failing_alongside),
                      "the next chunk is unreadable");
    const auto failing_row = [](unsigned, std::size_t row) {
      if (row == 2100) throw SimulationError("singular");
    };
    CHECK_THROWS_WITH(for_each_row(3000, threads, failing_row, {}, failing_alongside), "row 2100: singular");
  }
}

TEST_CASE("rounds of rows run one after the other on the same threads, the next set up while all wait", "[batch]") {
  const std::vector<std::size_t> round_rows = {3000, 10, 700, 2049};
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    std::vector<std::vector<std::atomic<int>>> runs;
    for (const std::size_t rows : round_rows) runs.emplace_back(rows);
    std::atomic<int> busy{0};  // threads inside a row right now
    std::size_t round_now = 0;
    std::vector<std::size_t> rounds_set_up, alongside_rounds;
    std::vector<std::thread::id> alongside_threads;
    const auto next_round = [&](std::size_t round) {
      CHECK(busy == 0);  // every thread has finished the round before
      rounds_set_up.push_back(round);
      round_now = round;
      return round < round_rows.size() ? round_rows[round] : 0;
    };
    const auto work = [&](unsigned, std::size_t row) {
      ++busy;
      ++runs[round_now][row];
      --busy;
    };
    const auto alongside = [&](std::size_t round) {
      alongside_rounds.push_back(round);
      alongside_threads.push_back(std::this_thread::get_id());
    };
    const unsigned used = for_each_round(round_rows[0], threads, next_round, work, {}, alongside);
    CHECK(used == threads);  // decided by the first round's rows
    CHECK(rounds_set_up == std::vector<std::size_t>{1, 2, 3, 4});  // 4: no rows, the end
    CHECK(alongside_rounds == std::vector<std::size_t>{0, 1, 2, 3});
    for (const auto& id : alongside_threads) CHECK(id == std::this_thread::get_id());
    for (std::size_t round = 0; round < round_rows.size(); ++round)
      for (std::size_t row = 0; row < round_rows[round]; ++row) REQUIRE(runs[round][row] == 1);
  }
}

TEST_CASE("a failed row or alongside error ends the rounds after its round, the lowest row of that round named", "[batch]") {
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    std::size_t round_now = 0, last_set_up = 0;
    const auto next_round = [&](std::size_t round) {
      last_set_up = round_now = round;
      return std::size_t{1000};  // more rounds than the work reaches
    };
    BatchMessages messages;
    messages.row_prefix = [&](std::size_t row) { return "chunk " + std::to_string(round_now) + ", row " + std::to_string(row) + ": "; };
    const auto failing = [&](unsigned, std::size_t row) {
      if (round_now == 2 && (row == 600 || row == 900)) throw ModelError("singular at " + std::to_string(row));
    };
    CHECK_THROWS_WITH(for_each_round(1000, threads, next_round, failing, messages), "chunk 2, row 600: singular at 600");
    CHECK(last_set_up == 2);  // no round after the failed one

    round_now = last_set_up = 0;
    const auto failing_alongside = [&](std::size_t round) {
      if (round == 1) throw Error("chunk 2 is unreadable");
    };
    CHECK_THROWS_WITH(for_each_round(1000, threads, next_round, [](unsigned, std::size_t) {}, messages, failing_alongside),
                      "chunk 2 is unreadable");
    CHECK(last_set_up == 1);
  }
}

TEST_CASE("blocks are taken one at a time, in order, on every thread asked for, and the lowest failed block is named", "[batch]") {
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    // Block b waits until block b - 1 has run (as liembs eval's CSV blocks wait for the
    // start of their records): blocks taken out of order would wait for ever. 200 blocks
    // are too few rows for for_each_row to use more than one thread.
    const std::size_t blocks = 200;
    std::vector<std::atomic<int>> runs(blocks);
    std::atomic<std::size_t> done{0};
    const unsigned used = for_each_block(blocks, threads, [&](unsigned, std::size_t block) {
      while (done.load() != block) std::this_thread::yield();
      ++runs[block];
      done = block + 1;
    });
    CHECK(used == threads);
    for (std::size_t block = 0; block < blocks; ++block) REQUIRE(runs[block] == 1);
    // However few the blocks: every thread asked for (up to one a block).
    CHECK(for_each_block(2, threads, [](unsigned, std::size_t) {}) == std::min(threads, 2u));

    BatchMessages messages;
    messages.row_prefix = [](std::size_t block) { return "block " + std::to_string(block) + ": "; };
    const auto failing = [](unsigned, std::size_t block) {
      if (block == 70 || block == 150) throw ConfigError("bad at " + std::to_string(block));
    };
    CHECK_THROWS_WITH(for_each_block(blocks, threads, failing, messages), "block 70: bad at 70");
    CHECK_THROWS_AS(for_each_block(blocks, threads, failing, messages), ConfigError);
  }
}
