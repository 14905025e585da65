// Study measures: the order fit, the cost at matched accuracy, the errors against a
// reference, the order observed on a problem of known order (rkmk rk4 ~ 4, heun ~ 2), and
// the CPU time of a case (simulation and algorithm cases alike): repeated until it has used
// min_cpu_seconds, the fastest of the timed repetitions, each repetition on the next CPU.
#include <catch2/catch.hpp>

#include <liembs/study/cpu_time.hpp>
#include <liembs/study/execution.hpp>
#include <liembs/study/results.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

using namespace liembs::study;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("liembs-study-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("fit_order finds the slope of a power law and its range of validity", "[study]") {
  // error = 3 h^4 down to a floor of 1e-12 (round-off), with a pre-asymptotic coarse rung.
  const std::vector<double> h{0.4, 0.1, 0.05, 0.025, 0.0125, 0.00625, 0.003125};
  std::vector<double> error;
  for (const double x : h) error.push_back(std::max(3.0 * std::pow(x, 4), 1e-12));
  error[0] = 5.0;  // far off the line: the method is unstable there
  const OrderFit fit = fit_order(h, error, 2e-12);
  REQUIRE(fit.valid);
  CHECK(fit.slope == Approx(4.0).margin(1e-9));
  CHECK(fit.x_max == Approx(0.1));
  CHECK(fit.x_min == Approx(0.003125));  // 3 h^4 = 2.9e-10 there, above the floor
  CHECK(fit.points == 6);

  // Below the floor nothing is fitted; two points give a line.
  CHECK_FALSE(fit_order({0.1, 0.05}, {1e-13, 1e-14}, 1e-12).valid);
  const OrderFit two = fit_order({0.1, 0.05}, {1e-4, 2.5e-5}, 0.0);
  REQUIRE(two.valid);
  CHECK(two.slope == Approx(2.0));
  // Not finite errors (failed rungs) are skipped.
  const OrderFit gaps = fit_order({0.1, 0.05, 0.025, 0.0125}, {not_available, 1e-3, 1.25e-4, 1.5625e-5}, 0.0);
  REQUIRE(gaps.valid);
  CHECK(gaps.slope == Approx(3.0));
  CHECK(gaps.points == 3);
}

TEST_CASE("cost_at_error interpolates log-log between the rungs that bracket the target", "[study]") {
  // error = h^2, cost = 1/h: the cost at error e is exactly e^(-1/2) (a line in log-log).
  const std::vector<double> h{0.1, 0.05, 0.02, 0.01};
  std::vector<double> errors, costs;
  for (const double x : h) errors.push_back(x * x), costs.push_back(1.0 / x);
  for (const double target : {9e-3, 1e-3, 3e-4, 1e-4, 1e-2}) {
    const auto cost = cost_at_error(errors, costs, target);
    REQUIRE(cost);
    CHECK(*cost == Approx(1.0 / std::sqrt(target)).epsilon(1e-12));
  }
  // Outside the errors reached: no extrapolation.
  CHECK_FALSE(cost_at_error(errors, costs, 5e-5));
  CHECK_FALSE(cost_at_error(errors, costs, 0.1));
  // A failed rung is skipped; the first (cheapest) bracketing pair is taken.
  const std::vector<double> with_failure{1e-2, not_available, 4e-4, 1e-4};
  CHECK(*cost_at_error(with_failure, costs, 1e-3) ==
        Approx(std::exp(std::log(10.0) + (std::log(1e-3) - std::log(1e-2)) / (std::log(4e-4) - std::log(1e-2)) *
                                             (std::log(50.0) - std::log(10.0)))));
  const std::vector<double> non_monotone{1e-2, 1e-4, 1e-3, 1e-5};
  CHECK(*cost_at_error(non_monotone, {1, 2, 3, 4}, 1e-3) == Approx(std::exp(0.5 * std::log(2.0))));
}

TEST_CASE("compare_with_reference takes pose and velocity errors at the common sample times", "[study]") {
  CaseRecord reference, item;
  for (CaseRecord* r : {&reference, &item}) {
    r->ok = true;
    r->bodies = {"a", "b"};
    r->end_time = 1.0;
  }
  reference.sample_interval = 0.25;
  item.sample_interval = 0.5;
  // Reference at 0, 0.25, ..., 1; the case at 0, 0.5, 1. Body b of the case is 1e-3 off in x
  // at t = 0.5 and 2e-3 off in vx at t = 1; body a is rotated by 0.01 rad about z at the end.
  auto at_rest = [] {
    std::vector<double> m(2 * motion_per_body, 0.0);
    m[3] = m[motion_per_body + 3] = 1.0;  // identity quaternions
    return m;
  };
  for (int k = 0; k <= 4; ++k) reference.times.push_back(0.25 * k), reference.motion.push_back(at_rest());
  for (int k = 0; k <= 2; ++k) item.times.push_back(0.5 * k), item.motion.push_back(at_rest());
  item.motion[1][motion_per_body + 0] = 1e-3;
  item.motion[2][motion_per_body + 10] = 2e-3;
  item.motion[2][3] = std::cos(0.005);
  item.motion[2][6] = std::sin(0.005);
  const ErrorMeasures e = compare_with_reference(item, reference, {});
  CHECK(e.common_times == 3);
  // |R - I|_F = 2 sqrt(2) sin(theta / 2) for a rotation by theta = 0.01.
  CHECK(e.per_body[0].pose_end == Approx(std::sqrt(2.0) * 2.0 * std::sin(0.005)).epsilon(1e-9));
  CHECK(e.per_body[1].pose_max == Approx(1e-3));
  CHECK(e.per_body[1].pose_end == Approx(0.0).margin(1e-15));
  CHECK(e.per_body[1].velocity_end == Approx(2e-3));
  CHECK(e.velocity_max == Approx(2e-3));
  CHECK(e.pose_max == Approx(std::max(1e-3, std::sqrt(2.0) * 2.0 * std::sin(0.005))));
  // Only body b.
  const ErrorMeasures b = compare_with_reference(item, reference, {1});
  CHECK(b.pose_end == Approx(0.0).margin(1e-15));
  CHECK(b.pose_max == Approx(1e-3));
}

TEST_CASE("the observed order on a free body: rkmk rk4 about 4, heun about 2", "[study]") {
  const fs::path dir = scratch("order");
  const fs::path file = dir / "order.toml";
  std::ofstream(file) << "[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR "/free-body.toml'\n"
                      << "set = { simulation.end_time = 0.5 }\n"
                      << "[reference]\nset = { integrator.tableau = \"rk4\", simulation.step_size = 1e-4 }\n"
                      << "[[axes]]\nkey = \"integrator.tableau\"\nvalues = [\"heun\", \"rk4\"]\n"
                      << "[[axes]]\nkey = \"simulation.step_size\"\nvalues = [0.05, 0.025, 0.0125, 0.00625]\n"
                      << "ladder = true\n[measure]\nsample_interval = 0.05\ntargets = [1e-6]\n";
  const Definition definition = load_study(file);
  auto cases = expand_cases(definition);
  REQUIRE(cases.size() == 8 + 2);
  ExecutionOptions options;
  options.jobs = 2;
  options.plugins.paths = {LIEMBS_TEST_PLUGIN_DIR};
  ExecutionSummary summary;
  auto records = execute_cases(definition, cases, dir / "out", options, summary);
  CHECK(summary.ran == 10);
  CHECK(summary.failed == 0);
  const StudyResults results = analyse(definition, cases, records);
  REQUIRE(results.series.size() == 2);
  CHECK(results.reference_error[0] < 1e-10);
  for (const auto& series : results.series) {
    INFO(series.label);
    REQUIRE(series.fit.valid);
    const bool rk4 = series.label.find("rk4") != std::string::npos;
    CHECK(series.fit.slope == Approx(rk4 ? 4.0 : 2.0).margin(0.3));
    CHECK(series.fit.points >= 3);
  }
  // heun does not reach 1e-6 on this ladder; rk4 does, between two rungs.
  const auto& heun = results.series[0].label.find("heun") != std::string::npos ? results.series[0] : results.series[1];
  const auto& rk4 = &heun == &results.series[0] ? results.series[1] : results.series[0];
  CHECK_FALSE(heun.matched[0].cpu_seconds);
  REQUIRE(rk4.matched[0].steps);
  CHECK(*rk4.matched[0].steps > 10);
  CHECK(*rk4.matched[0].steps < 80);
  // rkmk counts its right-hand side evaluations: stages x steps.
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (records[i].integrator_description.find("heun") != std::string::npos)
      CHECK(records[i].right_hand_side_evaluations() == 2.0 * static_cast<double>(records[i].steps));
  // The drift histories are on the scale of the run's maxima: sampled every 0.05 s, their
  // largest magnitude is the run's maximum over all steps or a little below it (heun's energy
  // drift grows steadily, so the largest sample is close to the largest step).
  for (const CaseRecord& record : records) {
    INFO(record.integrator_description);
    REQUIRE(record.energy_drift.size() == record.times.size());
    double energy_sampled = 0.0, momentum_sampled = 0.0;
    for (double drift : record.energy_drift) energy_sampled = std::max(energy_sampled, std::abs(drift));
    for (double drift : record.angular_momentum_drift) momentum_sampled = std::max(momentum_sampled, drift);
    CHECK(energy_sampled <= record.energy_drift_max * (1 + 1e-9));
    CHECK(momentum_sampled <= record.angular_momentum_drift_max * (1 + 1e-9));
    if (record.integrator_description.find("heun") != std::string::npos) {
      CHECK(record.energy_drift_max > 1e-9);
      CHECK(energy_sampled >= 0.5 * record.energy_drift_max);
    }
  }
}

TEST_CASE("repeat_for_cpu_time runs until the runs have used the minimum, at least once", "[study][timing]") {
  int calls = 0;
  auto run = [&] { return ++calls, 0.003; };  // each run reports 3 ms of CPU time
  const RepeatedRuns repeated = repeat_for_cpu_time(0.05, run);
  CHECK(repeated.runs == 17);  // 16 runs are 0.048 s, short of 0.05
  CHECK(calls == 17);
  CHECK(repeated.cpu_seconds == Approx(0.051));
  CHECK(repeated.per_run() == Approx(0.003));
  calls = 0;
  CHECK(repeat_for_cpu_time(0.0, run).runs == 1);
  CHECK(repeat_for_cpu_time(0.001, run).runs == 1);  // one run is over the minimum already
  CHECK(calls == 2);
}

TEST_CASE("time_repetitions: the fastest repetition's time per run and its runs, the slowest for the spread",
          "[study][timing]") {
  // Each run reports its CPU time: 3 ms in the first repetition, 1.5 ms in the second, 4 ms in
  // the third (the number of runs a repetition needs follows from min_cpu_seconds = 0.05).
  int calls = 0;
  auto run = [&] {
    ++calls;
    return calls <= 17 ? 0.003 : calls <= 17 + 34 ? 0.0015 : 0.004;
  };
  const TimedRepetitions timed = time_repetitions(CpuTimeSettings{3, 0.05}, false, run);
  CHECK(calls == 17 + 34 + 13);  // 16 x 3 ms, 33 x 1.5 ms and 12 x 4 ms fall short of 50 ms
  CHECK(timed.repetitions == 3);
  CHECK(timed.total_runs == calls);
  CHECK(timed.fastest == Approx(0.0015));
  CHECK(timed.fastest_runs == 34);
  CHECK(timed.slowest == Approx(0.004));
  // Without a minimum, one run per repetition.
  calls = 0;
  const TimedRepetitions once = time_repetitions(CpuTimeSettings{5, 0.0}, false, [&] { return ++calls, 0.002; });
  CHECK(calls == 5);
  CHECK(once.total_runs == 5);
  CHECK(once.fastest_runs == 1);
  CHECK(once.fastest == 0.002);
  CHECK(once.slowest == 0.002);
}

namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t mask;
  REQUIRE(::sched_getaffinity(0, sizeof mask, &mask) == 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  return cpus;
}

}  // namespace

TEST_CASE("time_repetitions with rotation: each repetition's runs on one CPU, the next repetition on the next CPU, "
          "and all CPUs allowed again afterwards",
          "[study][timing]") {
  const std::vector<int> before = allowed_cpus();
  // Two runs of 10 ms per repetition (min_cpu_seconds 0.015), one repetition more than CPUs.
  std::vector<std::vector<int>> pinned;  // per run: the CPUs it may run on
  const long long repetitions = static_cast<long long>(before.size()) + 1;
  const TimedRepetitions timed = time_repetitions(CpuTimeSettings{repetitions, 0.015}, true, [&] {
    pinned.push_back(allowed_cpus());
    return 0.01;
  });
  CHECK(timed.total_runs == 2 * repetitions);
  REQUIRE(pinned.size() == static_cast<std::size_t>(2 * repetitions));
  CHECK(allowed_cpus() == before);
  if (before.size() >= 2) {
    std::vector<int> visited;
    for (std::size_t k = 0; k < pinned.size(); k += 2) {
      INFO("repetition " << k / 2);
      REQUIRE(pinned[k].size() == 1);
      CHECK(pinned[k + 1] == pinned[k]);  // a repetition stays on its CPU
      visited.push_back(pinned[k].front());
    }
    // The repetitions follow the allowed CPUs cyclically from the first one: all of them once,
    // then the first again.
    const auto first = std::find(before.begin(), before.end(), visited.front()) - before.begin();
    for (std::size_t k = 0; k < visited.size(); ++k)
      CHECK(visited[k] == before[(static_cast<std::size_t>(first) + k) % before.size()]);
  }
  // Without rotation the runs keep every CPU.
  pinned.clear();
  time_repetitions(CpuTimeSettings{2, 0.0}, false, [&] {
    pinned.push_back(allowed_cpus());
    return 0.01;
  });
  CHECK(pinned == std::vector<std::vector<int>>(2, before));
}

// A small study run twice: with min_cpu_seconds and two repetitions, and with one run per
// repetition. The timing honours the minimum; what is measured from the measured run (motion,
// drifts, counters) does not depend on how the case is timed.
TEST_CASE("simulation cases are timed until they have used min_cpu_seconds, the measures come from one run",
          "[study][timing]") {
  const fs::path dir = scratch("min-cpu");
  auto definition_with = [&](const std::string& timing) {
    const fs::path file = dir / "timed.toml";
    std::ofstream(file) << "[[models]]\nname = \"body\"\nfile = '" LIEMBS_TEST_DATA_DIR "/free-body.toml'\n"
                        << "set = { simulation.end_time = 0.2 }\n"
                        << "[reference]\nset = { integrator.tableau = \"rk4\", simulation.step_size = 1e-3 }\n"
                        << "[[axes]]\nkey = \"simulation.step_size\"\nvalues = [0.02, 0.01]\nladder = true\n"
                        << "[measure]\nsample_interval = 0.02\n" << timing;
    return load_study(file);
  };
  const double min_cpu_seconds = 0.03;
  const Definition timed = definition_with("min_cpu_seconds = 0.03\nrepetitions = 2\n");
  const Definition once = definition_with("min_cpu_seconds = 0\nrepetitions = 1\n");
  const auto cases = expand_cases(timed);
  REQUIRE(cases.size() == 2 + 2);
  ExecutionOptions options;
  options.jobs = 2;
  options.plugins.paths = {LIEMBS_TEST_PLUGIN_DIR};
  ExecutionSummary summary;
  const auto records = execute_cases(timed, cases, dir / "timed", options, summary);
  const auto single = execute_cases(once, cases, dir / "once", options, summary);
  CHECK(summary.failed == 0);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseRecord &r = records[i], &s = single[i];
    INFO(cases[i].id);
    REQUIRE(r.ok);
    REQUIRE(s.ok);
    CHECK(r.repetitions == 2);
    REQUIRE(r.timed_runs >= 1);
    // cpu_seconds is the time per run of a repetition that ran timed_runs runs and stopped
    // once they had used the minimum.
    CHECK(static_cast<double>(r.timed_runs) * r.cpu_seconds >= min_cpu_seconds * (1 - 1e-12));
    if (r.cpu_seconds < min_cpu_seconds) CHECK(r.timed_runs >= 2);
    CHECK(r.cpu_seconds_slowest >= r.cpu_seconds);
    CHECK(r.cpu_seconds_spread() >= 0);
    CHECK(s.repetitions == 1);
    CHECK(s.timed_runs == 1);
    CHECK(std::isnan(s.cpu_seconds_spread()));
    // The same measured run, however it is timed.
    CHECK(r.steps == s.steps);
    CHECK(r.statistics == s.statistics);
    CHECK(r.times == s.times);
    CHECK(r.motion == s.motion);
    CHECK(r.energy_drift == s.energy_drift);
    CHECK(r.energy_drift_max == s.energy_drift_max);
  }
  // Timed again, or not: a case's record is cached under its timing settings.
  CHECK(records[0].hash != single[0].hash);
}

TEST_CASE("CpuRotation runs the thread on one allowed CPU after another, then on all of them again", "[study][timing]") {
  cpu_set_t before;
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  std::vector<int> allowed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &before)) allowed.push_back(cpu);
  {
    CpuRotation rotation;
    std::vector<int> visited;
    for (std::size_t k = 0; k < allowed.size() + 1; ++k) {
      rotation.move_to(k);
      visited.push_back(::sched_getcpu());
    }
    if (allowed.size() >= 2) {
      // every allowed CPU once, then the first again
      CHECK(visited.back() == visited.front());
      visited.pop_back();
      std::sort(visited.begin(), visited.end());
      CHECK(visited == allowed);
    }
  }
  cpu_set_t after;
  REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
  CHECK(CPU_EQUAL(&before, &after));
}
