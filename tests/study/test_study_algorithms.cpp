// Algorithm studies (kind = "algorithms", docs/studies.md): random states, the timing
// method (that of simulation cases, a run being a pass over the states), the agreement
// measure, a study end to end with a representation made to disagree (the test plugin
// 'skewed'), the same results with --jobs 1 and 2 (timings aside), the report's figures and
// the schema errors.
#include "../support/cli_process.hpp"
#include "study_csv.hpp"

#include <liembs/study/algorithm_timing.hpp>
#include <liembs/study/results.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cli_test::read_file;
using study_test::count;
using study_test::csv_rows;
using study_test::csv_without;

namespace {

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-study-algorithms-test", name); }

cli_test::CliResult run_liembs(const std::string& arguments) { return cli_test::run_liembs(arguments, scratch("io")); }

// Counts its calls and returns twice its inputs.
class DoublingEvaluator final : public liembs::BatchEvaluator {
 public:
  const std::vector<std::string>& input_columns() const override { return inputs_; }
  const std::vector<std::string>& output_columns() const override { return outputs_; }
  void evaluate(const double* in, double* out) override {
    ++calls;
    for (std::size_t i = 0; i < inputs_.size(); ++i) out[i] = 2.0 * in[i];
  }
  long long calls = 0;

 private:
  std::vector<std::string> inputs_{"q.a", "qd.a"}, outputs_{"y.a", "y.b"};
};

// Two algorithms in three representations on the 6-joint chain; 'skewed' (a test plugin)
// is 1 % off in one inertia.
fs::path skewed_study(const fs::path& dir) {
  const fs::path file = dir / "algorithms.toml";
  std::ofstream(file) << "title = \"algorithms\"\nkind = \"algorithms\"\n"
                         "[[models]]\nname = \"chain\"\n[models.run.model]\nurdf = '" LIEMBS_SOURCE_DIR
                         "/models/urdf/chain-6.urdf'\ngravity = [0.0, 0.0, -9.81]\n"
                         "[[axes]]\nkey = \"algorithm.name\"\nvalues = [\"rnea\", \"crba\"]\n"
                         "[[axes]]\nkey = \"representation.name\"\nvalues = [\"body-fixed\", \"spatial\", \"skewed\"]\n"
                         "[timing]\nstates = 7\nrepetitions = 3\nmin_cpu_seconds = 0.004\nwarmup = 1\nseed = 5\n";
  return file;
}

std::string with_skewed_plugin() { return " --plugin-path '" LIEMBS_TEST_BROKEN_PLUGIN_DIR "/skewed-representation'"; }

}  // namespace

TEST_CASE("algorithm study: random states are reproducible and in range", "[study][algorithms]") {
  const std::vector<std::string> columns{"base.x", "base.qw", "base.qx", "base.qy", "base.qz", "q.j1", "q.j1.d3", "tau.j1"};
  const auto a = liembs::study::random_states(columns, 50, 3);
  CHECK(a == liembs::study::random_states(columns, 50, 3));
  CHECK(a != liembs::study::random_states(columns, 50, 4));
  REQUIRE(a.size() == 50 * columns.size());
  double largest_coordinate = 0.0;
  for (std::size_t s = 0; s < 50; ++s) {
    const double* row = a.data() + s * columns.size();
    CHECK(std::hypot(std::hypot(row[1], row[2]), std::hypot(row[3], row[4])) == Approx(1.0).epsilon(1e-14));
    CHECK(std::abs(row[0]) <= 1.0);
    CHECK(std::abs(row[5]) <= 3.0);
    CHECK(std::abs(row[6]) <= 1.0);  // a derivative of q, not a coordinate
    CHECK(std::abs(row[7]) <= 1.0);
    largest_coordinate = std::max(largest_coordinate, std::abs(row[5]));
  }
  CHECK(largest_coordinate > 1.5);  // coordinates do span [-3, 3]
}

TEST_CASE("algorithm study: the timing passes over every state warm-up times, then until each repetition has "
          "used the minimum CPU time",
          "[study][algorithms]") {
  DoublingEvaluator evaluator;
  const std::vector<double> inputs{1, 2, 3, 4, 5, 6};
  std::vector<double> outputs;
  // One pass per repetition without a minimum.
  auto timing = liembs::study::time_calls(evaluator, inputs, 3, 2, {5, 0.0}, false, outputs);
  CHECK(evaluator.calls == 3 * (2 + 5));
  CHECK(outputs == std::vector<double>{2, 4, 6, 8, 10, 12});
  CHECK(timing.repetitions == 5);
  CHECK(timing.total_runs == 5);
  CHECK(timing.fastest_runs == 1);
  CHECK(timing.fastest >= 0.0);
  CHECK(timing.fastest <= timing.slowest);
  // With a minimum (a pass of three trivial calls takes far less): many passes per repetition,
  // and the fastest repetition's passes used at least the minimum.
  const double minimum = 0.002;
  evaluator.calls = 0;
  timing = liembs::study::time_calls(evaluator, inputs, 3, 1, {2, minimum}, true, outputs);
  CHECK(evaluator.calls == 3 * (1 + timing.total_runs));
  CHECK(timing.fastest_runs >= 2);
  CHECK(static_cast<double>(timing.fastest_runs) * timing.fastest >= minimum * (1 - 1e-12));
  CHECK(timing.fastest <= timing.slowest);
  CHECK(outputs == std::vector<double>{2, 4, 6, 8, 10, 12});
  CHECK_THROWS_WITH(liembs::study::time_calls(evaluator, inputs, 3, 1, {0, minimum}, false, outputs),
                    Contains("at least one state and one repetition"));
}

TEST_CASE("algorithm study: the largest relative difference and where it is", "[study][algorithms]") {
  using liembs::study::max_relative_difference;
  // Rows of width 2: relative to max(1, |row of b|).
  const std::vector<double> b{0.5, 0.1, 100.0, -50.0, 0.0, 0.0};
  std::vector<double> a = b;
  CHECK(max_relative_difference(a, b, 2).value == 0.0);
  a[1] += 1e-3;   // row 0: scale 1
  a[3] += 0.05;   // row 1: scale 100 -> 5e-4
  auto d = max_relative_difference(a, b, 2);
  CHECK(d.value == Approx(1e-3));
  CHECK(d.row == 0);
  CHECK(d.column == 1);
  a[3] += 1.0;    // row 1: 1.05 / 100
  d = max_relative_difference(a, b, 2);
  CHECK(d.value == Approx(1.05e-2));
  CHECK(d.row == 1);
  a[4] = std::nan("");
  d = max_relative_difference(a, b, 2);
  CHECK(std::isinf(d.value));
  CHECK(d.row == 2);
  CHECK(std::isinf(max_relative_difference(a, {1.0}, 2).value));
}

TEST_CASE("algorithm study: representations agree, a skewed one is a failed row, --jobs 1 and 2 agree",
          "[study][algorithms][cli]") {
  const fs::path dir = scratch("skewed");
  const fs::path file = skewed_study(dir);
  const auto one = run_liembs("study '" + file.string() + "'" + with_skewed_plugin() + " --output '" +
                          (dir / "one").string() + "'");
  INFO(one.out << one.err);
  REQUIRE(one.status == 0);
  CHECK_THAT(one.out, Contains("6 cases (6 run, 0 cached, 2 failed)"));
  const std::string csv = read_file(dir / "one" / "results.csv");
  const auto rows = csv_rows(csv);
  REQUIRE(rows.size() == 6);
  for (const auto& row : rows) {
    INFO(row.at("case"));
    CHECK(row.at("states") == "7");
    CHECK(row.at("repetitions") == "3");
    CHECK(row.at("bodies") == "7");
    // Timed as a simulation case: the fastest of three repetitions, each passing over the 7
    // states until the passes have used min_cpu_seconds; per call, a pass over the states.
    const double pass_seconds = std::stod(row.at("cpu_seconds")), ns_per_call = std::stod(row.at("ns_per_call"));
    CHECK(ns_per_call > 0.0);
    CHECK(ns_per_call == Approx(pass_seconds * 1e9 / 7).epsilon(1e-8));
    CHECK(std::stod(row.at("timed_runs")) * pass_seconds >= 0.004 * (1 - 1e-8));
    CHECK(std::stod(row.at("cpu_seconds_spread")) >= 0.0);
    const std::string representation = row.at("representation.name");
    CHECK(row.at("representation") == representation);
    if (representation == "body-fixed") {
      CHECK(row.at("status") == "ok");
      CHECK(row.at("compared_with").empty());
      CHECK(row.at("max_relative_difference") == "0");
      CHECK(std::stod(row.at("ratio_to_best")) >= 1.0);
    } else if (representation == "spatial") {
      CHECK(row.at("status") == "ok");
      CHECK(row.at("compared_with") == "body-fixed");
      CHECK(std::stod(row.at("max_relative_difference")) < 1e-11);
      CHECK(std::stod(row.at("ratio_to_best")) >= 1.0);
    } else {
      CHECK(row.at("status") == "failed");
      CHECK(row.at("failure_kind") == "disagreement");
      CHECK(std::stod(row.at("max_relative_difference")) > 1e-5);
      CHECK_THAT(row.at("error_message"), Contains("representation 'skewed' disagrees with 'body-fixed'") &&
                                              Contains("(tolerance 1e-09) at state"));
    }
  }
  CHECK(rows[0].at("inputs") == "18");   // rnea: q, qd, qdd of 6 joints
  CHECK(rows[0].at("outputs") == "6");
  CHECK(rows[3].at("inputs") == "6");    // crba: q
  CHECK(rows[3].at("outputs") == "36");
  // In each algorithm, the fastest of the two representations that agree has ratio 1, and every
  // ratio (the skewed one's too) is the time per call over that one's.
  for (const std::size_t first : {0u, 3u}) {
    double smallest = 1e300, fastest = 1e300;
    for (std::size_t i = first; i < first + 2; ++i) {
      smallest = std::min(smallest, std::stod(rows[i].at("ratio_to_best")));
      fastest = std::min(fastest, std::stod(rows[i].at("ns_per_call")));
    }
    CHECK(smallest == 1.0);
    for (std::size_t i = first; i < first + 3; ++i)
      CHECK(std::stod(rows[i].at("ratio_to_best")) ==
            Approx(std::stod(rows[i].at("ns_per_call")) / fastest).epsilon(1e-8));
  }
  CHECK_FALSE(fs::exists(dir / "one" / "series.csv"));
  CHECK_THAT(read_file(dir / "one" / "study.json"), Contains("\"kind\": \"algorithms\""));

  const auto two = run_liembs("study '" + file.string() + "'" + with_skewed_plugin() + " --jobs 2 --no-report --output '" +
                          (dir / "two").string() + "'");
  REQUIRE(two.status == 0);
  CHECK(csv_without(csv, liembs::study::timing_columns()) ==
        csv_without(read_file(dir / "two" / "results.csv"), liembs::study::timing_columns()));
  // Cached: nothing runs again.
  const auto again = run_liembs("study '" + file.string() + "'" + with_skewed_plugin() + " --no-report --output '" +
                            (dir / "two").string() + "'");
  CHECK_THAT(again.out, Contains("6 cases (0 run, 6 cached, 2 failed)"));

  if (fs::exists(dir / "one" / "report.html")) {
    const std::string html = read_file(dir / "one" / "report.html");
    std::smatch match;
    REQUIRE(std::regex_search(html, match, std::regex("data-figures=\"([0-9]+)\"")));
    CHECK(std::stoi(match[1]) == 1);  // one model: ns per call by representation
    CHECK(count(html, "<figure ") == 1);
    CHECK_THAT(html, Contains("Cost per call") && Contains("disagrees with 'body-fixed'"));
  }
}

TEST_CASE("algorithm study: schema errors name the file and key", "[study][algorithms][errors]") {
  const fs::path dir = scratch("errors");
  const fs::path file = dir / "bad.toml";
  const std::string model = "[[models]]\nname = \"arm\"\nfile = '" LIEMBS_SOURCE_DIR "/configs/examples/iiwa-arm.toml'\n";
  auto expect_error = [&](const std::string& text, const std::string& message) {
    std::ofstream(file) << text;
    const auto r = run_liembs("study '" + file.string() + "' --output '" + (dir / "out").string() + "'");
    INFO(text);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("bad.toml:") && Contains(message));
    CHECK_FALSE(fs::exists(dir / "out" / "results.csv"));
  };
  expect_error("kind = \"algorithm\"\n" + model, "kind");
  expect_error(model + "[timing]\nstates = 5\n", "[timing] is for algorithm studies");
  expect_error("kind = \"algorithms\"\n" + model + "[timing]\nstates = 0\n", "states");
  expect_error("kind = \"algorithms\"\n" + model + "[timing]\nrepetition = 3\n",
               "unknown key 'timing.repetition' (did you mean 'repetitions'?)");
  expect_error("kind = \"algorithms\"\n" + model + "[timing]\nmin_cpu_seconds = 11\n",
               "timing.min_cpu_seconds: value 11 is out of range: expected in [0, 10]");
  expect_error("kind = \"algorithms\"\n" + model + "[reference]\nset = { simulation.step_size = 1e-4 }\n",
               "'reference' is for simulation studies");
  expect_error("kind = \"algorithms\"\n" + model + "[[axes]]\nkey = \"algorithm.name\"\nvalues = [\"rnea\"]\nladder = true\n",
               "'ladder' is for simulation studies");
  expect_error("kind = \"algorithms\"\n" + model + "[[axes]]\nkeys = [\"representation.name\", \"algorithm.name\"]\n"
                                                   "values = [[\"spatial\", \"rnea\"]]\n",
               "'representation.name' must be an axis of its own");
  // A key the evaluation does not read is an error of the study, naming the case.
  expect_error("kind = \"algorithms\"\n" + model + "[[axes]]\nkey = \"algorithm.ordre\"\nvalues = [3]\n",
               "case 'arm algorithm.ordre=3'");
}
