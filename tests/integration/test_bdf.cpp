// The bdf integrator plugin (index-3 BDF of paper 004 §3): observed orders 1 and 2 on the
// Cartesian pendulum against its angle ODE and on the free body (SE3, SO3xR3); constraints
// held to the Newton tolerance; backward Euler's first-order energy dissipation; agreement
// with generalized-alpha on the spatial four-bar in absolute coordinates; quasi-Newton and
// full Newton agreeing within the tolerance; consistent initial accelerations and
// multipliers; the time grid t_n = n h; failures and options.
#include "../support/cartesian_pendulum.hpp"
#include "../support/integrator_harness.hpp"

#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/invariants.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

using namespace liembs;
using Catch::Matchers::Contains;
using liembs::testing::CartesianPendulum;
using liembs::testing::integrate;
using liembs::testing::load_test_run;
using liembs::testing::Plugins;
using liembs::testing::state_distance;

namespace {

std::string number(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

double statistic(const Integrator& integrator, const std::string& name) {
  for (const auto& [key, value] : integrator.statistics())
    if (key == name) return value;
  FAIL("no statistic " << name);
  return 0.0;
}

// Largest difference of poses and velocities between two final states of the same model.
double pose_distance(const State& a, const State& b) {
  double distance = (a.velocities - b.velocities).lpNorm<Eigen::Infinity>();
  for (std::size_t i = 0; i < a.poses.size(); ++i)
    distance = std::max({distance, (a.poses[i].R - b.poses[i].R).norm(), (a.poses[i].r - b.poses[i].r).norm()});
  return distance;
}

}  // namespace

TEST_CASE("bdf converges at orders 1 and 2 on the Cartesian pendulum (quasi-Newton and full Newton)",
          "[bdf][order][constraints]") {
  const Plugins plugins;
  const double end_time = 1.0;
  CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
  const State reference = pendulum.reference_state(end_time);
  for (const int order : {1, 2}) {
    for (const char* matrix : {"quasi-newton", "full"}) {
      auto error_at = [&](double h) {
        auto bdf = plugins.integrator("bdf", "order = " + std::to_string(order) + "\nnewton_matrix = \"" + matrix +
                                                 "\"\nnewton_tolerance_h2 = 1e-13");
        return state_distance(integrate(plugins, pendulum, *bdf, h, end_time), reference);
      };
      const double coarse = error_at(0.01), fine = error_at(0.005), finest = error_at(0.0025);
      const double observed = std::log2(coarse / fine), observed_fine = std::log2(fine / finest);
      INFO("order " << order << ", " << matrix << ": errors " << coarse << " -> " << fine << " -> " << finest
                    << ", observed orders " << observed << ", " << observed_fine);
      CHECK(std::abs(observed - order) < 0.2);
      CHECK(std::abs(observed_fine - order) < 0.1);
    }
  }
}

TEST_CASE("bdf converges at orders 1 and 2 on the free body on SE3 and SO3xR3", "[bdf][order]") {
  auto reference_run = load_test_run("free-body.toml", {"simulation.step_size=" + number(1.0 / 4096)});
  const State reference = execute_run(reference_run.run, RunOutput{}).final_state;  // rkmk rk4
  const Group& reference_group = *reference_run.run.group;
  for (const char* group : {"SE3", "SO3xR3"}) {
    for (const int order : {1, 2}) {
      auto error_at = [&](double h) {
        auto loaded = load_test_run("free-body.toml", {std::string("group.name=") + group, "integrator.name=bdf",
                                                       "integrator.order=" + std::to_string(order),
                                                       "integrator.newton_tolerance=1e-12",
                                                       "simulation.step_size=" + number(h)});
        const State end = execute_run(loaded.run, RunOutput{}).final_state;
        return (end.poses[0].R - reference.poses[0].R).norm() + (end.poses[0].r - reference.poses[0].r).norm() +
               (body_twists(*loaded.run.group, end) - body_twists(reference_group, reference)).norm();
      };
      const double coarse = error_at(0.01), fine = error_at(0.005);
      const double observed = std::log2(coarse / fine);
      INFO(group << ", order " << order << ": errors " << coarse << " -> " << fine << ", observed " << observed);
      CHECK(std::abs(observed - order) < 0.2);
    }
  }
}

TEST_CASE("bdf holds the position constraints to the Newton tolerance, the hidden velocity constraint drifts",
          "[bdf][constraints]") {
  const Plugins plugins;
  CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
  DaeTerms terms;
  const double h = 0.01;
  for (const int order : {1, 2}) {
    for (const double tolerance : {1e-4, 1e-8}) {
      auto bdf = plugins.integrator("bdf", "order = " + std::to_string(order) +
                                               "\nnewton_tolerance = " + number(tolerance));
      double worst_position = 0.0, worst_velocity = 0.0;
      integrate(plugins, pendulum, *bdf, h, 5.0, [&](const State& state) {
        pendulum.evaluate(state, terms, dae::position_terms);
        worst_position = std::max(worst_position, std::abs(terms.residual(0)));
        worst_velocity = std::max(worst_velocity, std::abs((terms.jacobian * state.velocities)(0)));
      });
      // A correction below Theta moves the positions by at most h^2 Theta (eq. 46); |J| = 2 L.
      const double bound = 2.0 * pendulum.length * h * h * tolerance;
      INFO("order " << order << ", Theta " << tolerance << ": max |g| " << worst_position << " (bound " << bound
                    << "), max |J V| " << worst_velocity);
      CHECK(worst_position <= bound);
      CHECK(worst_velocity > 1e3 * worst_position);
    }
  }
}

TEST_CASE("backward Euler dissipates the pendulum's energy at first order, BDF2 far less",
          "[bdf][energy][constraints]") {
  const Plugins plugins;
  CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
  const double initial_energy = pendulum.energy(pendulum.initial_state());
  auto energy_loss = [&](int order, double h, bool* monotone = nullptr) {
    auto bdf = plugins.integrator("bdf", "order = " + std::to_string(order) + "\nnewton_tolerance_h2 = 1e-13");
    double previous = initial_energy;
    bool decreasing = true;
    const State end = integrate(plugins, pendulum, *bdf, h, 5.0, [&](const State& state) {
      const double energy = pendulum.energy(state);
      decreasing = decreasing && energy <= previous + 1e-10 * initial_energy;
      previous = energy;
    });
    if (monotone) *monotone = decreasing;
    return (initial_energy - pendulum.energy(end)) / initial_energy;
  };
  bool monotone = false;
  const double coarse = energy_loss(1, 0.01, &monotone), fine = energy_loss(1, 0.005);
  const double bdf2_coarse = energy_loss(2, 0.01), bdf2_fine = energy_loss(2, 0.005);
  INFO("relative energy loss over 5 s: BDF1 " << coarse << " (h = 0.01), " << fine << " (h = 0.005); BDF2 "
                                              << bdf2_coarse << ", " << bdf2_fine);
  CHECK(monotone);
  CHECK(coarse > 0.05);
  // The energy decays like exp(-c h t): the exponent halves with h.
  CHECK(std::abs(std::log(1.0 - coarse) / std::log(1.0 - fine) - 2.0) < 0.15);
  CHECK(bdf2_coarse > 0.0);
  CHECK(bdf2_coarse < 0.01 * coarse);
  // BDF2 damps at O(h^3) per unit time; its BDF1 start-up step adds an O(h^2) loss.
  CHECK(bdf2_coarse / bdf2_fine > 3.5);
}

TEST_CASE("bdf agrees with generalized-alpha on the spatial four-bar in absolute coordinates",
          "[bdf][constraints]") {
  auto run_with = [](std::vector<std::string> settings) {
    settings.insert(settings.end(), {"algorithm.name=newton-euler", "simulation.end_time=0.2"});
    auto loaded = load_test_run("../../configs/four-bar/spatial.toml", settings);
    return execute_run(loaded.run, RunOutput{}).final_state;
  };
  for (const char* group : {"SE3", "SO3xR3"}) {
    const std::string group_setting = std::string("group.name=") + group;
    const State alpha = run_with({group_setting, "integrator.name=generalized-alpha", "simulation.step_size=1e-4"});
    const State bdf2 = run_with({group_setting, "integrator.name=bdf", "integrator.order=2",
                                 "integrator.newton_tolerance_h2=1e-14", "simulation.step_size=1e-4"});
    const State bdf2_coarse = run_with({group_setting, "integrator.name=bdf", "integrator.order=2",
                                        "integrator.newton_tolerance_h2=1e-14", "simulation.step_size=2e-4"});
    const double distance = pose_distance(alpha, bdf2), coarse_distance = pose_distance(alpha, bdf2_coarse);
    INFO(group << ": generalized-alpha vs BDF2 at h = 1e-4: " << distance << ", at h = 2e-4: " << coarse_distance);
    // The difference is BDF2's error (the crank reaches 18 rad/s), falling as h^2.
    CHECK(distance < 1e-3);
    CHECK(std::abs(coarse_distance / distance - 4.0) < 0.5);
  }
}

TEST_CASE("quasi-Newton and full Newton give the same steps within the Newton tolerance", "[bdf][constraints]") {
  auto run_with = [](const char* matrix, const char* order) {
    auto loaded = load_test_run("../../configs/four-bar/spatial.toml",
                                {"algorithm.name=newton-euler", "group.name=SO3xR3", "integrator.name=bdf",
                                 std::string("integrator.newton_matrix=") + matrix,
                                 std::string("integrator.order=") + order, "integrator.newton_tolerance=1e-6",
                                 "simulation.step_size=1e-3", "simulation.end_time=0.2"});
    RunSummary summary = execute_run(loaded.run, RunOutput{});
    // newton-euler gives C = -dQ/dV (and K) analytically: no differenced evaluations
    // (tests/integration/test_newton_derivatives.cpp compares both).
    CHECK(statistic(*loaded.run.integrator, "analytic_derivatives") == 1.0);
    CHECK(statistic(*loaded.run.integrator, "damping_evaluations") == 0.0);
    return std::tuple{summary.final_state, statistic(*loaded.run.integrator, "newton_iterations"),
                      statistic(*loaded.run.integrator, "matrix_factorizations"), summary.steps};
  };
  for (const char* order : {"1", "2"}) {
    // Kept across steps: the same steps within the tolerance, with far fewer factorizations.
    const auto [reused, reused_iterations, reused_factorizations, reused_steps] = run_with("quasi-newton-reused", order);
    const auto [quasi, quasi_iterations, quasi_factorizations, steps] = run_with("quasi-newton", order);
    INFO("reused: distance " << pose_distance(quasi, reused) << ", iterations " << reused_iterations
                             << ", factorizations " << reused_factorizations);
    CHECK(pose_distance(quasi, reused) < 1e-6);
    CHECK(reused_factorizations < 0.2 * quasi_factorizations);
    CHECK(reused_iterations < 2.0 * quasi_iterations);
    const auto [full, full_iterations, full_factorizations, full_steps] = run_with("full", order);
    const double distance = pose_distance(quasi, full);
    INFO("order " << order << ": distance " << distance << "; iterations quasi " << quasi_iterations << ", full "
                  << full_iterations << "; factorizations " << quasi_factorizations << ", " << full_factorizations);
    // Both stop within Theta = 1e-6 of the same accelerations: poses within h^2 Theta per step,
    // velocities within h Theta, accumulated over 200 steps.
    CHECK(distance < 1e-6);
    CHECK(quasi_factorizations == steps);
    CHECK(full_factorizations == full_iterations);
    CHECK(full_iterations <= quasi_iterations);
  }
}

TEST_CASE("the first step starts from the index-1 accelerations and multipliers", "[bdf][constraints]") {
  // A pendulum hanging at rest is in equilibrium: a = 0 and lambda = m g / (2 L) from the
  // index-1 solve are the exact solution of every step, so each step needs one Newton
  // correction (of round-off size). A predictor lambda = 0 would need several.
  const Plugins plugins;
  CartesianPendulum pendulum(1.3, 1.2, 0.0, 0.0);
  for (const int order : {1, 2}) {
    // The tolerance sits well above round-off: the constraint rows are scaled by 1/(beta h)^2,
    // so their round-off alone is about 1e-12 at h = 0.01 (and FMA builds round differently).
    auto bdf = plugins.integrator("bdf", "order = " + std::to_string(order) + "\nnewton_tolerance = 1e-10");
    const State end = integrate(plugins, pendulum, *bdf, 0.01, 0.5);
    CHECK(statistic(*bdf, "newton_iterations") == statistic(*bdf, "steps"));
    CHECK(std::abs(end.coordinates.y() + pendulum.length) < 1e-14);
  }
}

TEST_CASE("bdf steps land on t_n = t_0 + n h exactly and report their statistics", "[bdf]") {
  const Plugins plugins;
  CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
  auto bdf = plugins.integrator("bdf", "order = 2\nnewton_matrix = \"full\"\nnewton_tolerance_h2 = 1e-11");
  long long n = 0;
  bool on_grid = true;
  integrate(plugins, pendulum, *bdf, 0.001, 0.3, [&](const State& state) {
    ++n;
    on_grid = on_grid && state.time == static_cast<double>(n) * 0.001;
  });
  CHECK(on_grid);
  CHECK(statistic(*bdf, "steps") == 300);
  CHECK(statistic(*bdf, "newton_iterations") >= 300);
  CHECK(statistic(*bdf, "matrix_factorizations") == statistic(*bdf, "newton_iterations"));
  CHECK(bdf->order() == 2);
  CHECK_THAT(bdf->description(), Contains("BDF2") && Contains("full Newton") && Contains("Theta h^2 = 1e-11"));
}

TEST_CASE("a run with bdf writes the multipliers to trajectory.csv, one column per constraint row", "[bdf][output]") {
  const auto folder = std::filesystem::temp_directory_path() / "liembs-test-bdf-multipliers";
  std::filesystem::remove_all(folder);
  auto loaded = load_test_run("four-bar-loop.toml", {"algorithm.name=newton-euler", "integrator.name=bdf",
                                                      "simulation.end_time=0.05", "simulation.step_size=0.01"});
  execute_run(loaded.run, RunOutput::into(folder));
  std::ifstream file(folder / "trajectory.csv");
  std::string header, line, first_row, last_row;
  std::getline(file, header);
  std::getline(file, first_row);
  while (std::getline(file, line)) last_row = line;
  auto fields = [](const std::string& text) {
    std::vector<std::string> out;
    std::stringstream stream(text);
    for (std::string field; std::getline(stream, field, ',');) out.push_back(field);
    return out;
  };
  const auto names = fields(header), first = fields(first_row), last = fields(last_row);
  const Eigen::VectorXd& multipliers = *loaded.run.integrator->multipliers();
  REQUIRE(multipliers.size() > 0);
  REQUIRE(names.size() == last.size());
  const std::size_t offset = names.size() - static_cast<std::size_t>(multipliers.size());
  CHECK(names[offset].rfind("multiplier.", 0) == 0);
  CHECK(names.back().rfind("multiplier.", 0) == 0);
  CHECK(names[offset - 1].rfind("velocity_violation.", 0) == 0);
  CHECK(first[offset] == "nan");  // the initial row: no multipliers solved yet
  for (Eigen::Index k = 0; k < multipliers.size(); ++k)
    CHECK(std::stod(last[offset + static_cast<std::size_t>(k)]) == Approx(multipliers(k)).epsilon(1e-15));
  std::filesystem::remove_all(folder);
}

TEST_CASE("a bdf step that fails throws SimulationError naming time, step size and constraint, state unchanged",
          "[bdf][failure]") {
  const Plugins plugins;
  const StateSpace space(*plugins.group, 0, 2);

  SECTION("forces that become NaN") {
    CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
    pendulum.forces_fail_after = 0.55;
    auto bdf = plugins.integrator("bdf", "");
    State state = pendulum.initial_state();
    bdf->start(space, state);
    for (int k = 0; k < 5; ++k) bdf->step(space, pendulum, state, 0.1);
    const State before = state;
    try {
      bdf->step(space, pendulum, state, 0.1);
      FAIL("a NaN residual must fail the step");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("bdf: ") && Contains("t = 0.5 s") && Contains("step size 0.1 s") &&
                              Contains("not finite") && Contains("joint 'rod'"));
    }
    CHECK(state.time == before.time);
    CHECK(state.coordinates == before.coordinates);
    CHECK(state.velocities == before.velocities);
  }

  SECTION("a Newton iteration that does not converge in the allowed iterations") {
    CartesianPendulum pendulum(1.3, 1.2, 1.0, 0.5);
    auto bdf = plugins.integrator("bdf", "max_newton_iterations = 2\nnewton_tolerance = 1e-12");
    State state = pendulum.initial_state();
    const State before = state;
    bdf->start(space, state);
    try {
      bdf->step(space, pendulum, state, 0.5);
      FAIL("two quasi-Newton iterations cannot converge to 1e-12 for a step of 0.5 s");
    } catch (const SimulationError& error) {
      const std::string message = error.what();
      INFO(message);
      CHECK_THAT(message, Contains("did not converge") && Contains("t = 0 s") && Contains("step size 0.5 s") &&
                              Contains("after 2 Newton iterations") && Contains("residual") &&
                              Contains("joint 'rod' (|g| = ") && Contains("reduce simulation.step_size"));
    }
    CHECK(state.time == before.time);
    CHECK(state.coordinates == before.coordinates);
    CHECK(state.velocities == before.velocities);
  }

  SECTION("through a run: exit-status class SimulationError, no output written") {
    const auto folder = std::filesystem::temp_directory_path() / "liembs-test-bdf-failure";
    std::filesystem::remove_all(folder);
    auto loaded = load_test_run("../../configs/four-bar/spatial.toml",
                                {"algorithm.name=newton-euler", "integrator.name=bdf", "integrator.max_newton_iterations=1",
                                 "integrator.newton_tolerance=1e-14", "simulation.step_size=0.05",
                                 "simulation.end_time=0.2"});
    CHECK_THROWS_WITH(execute_run(loaded.run, RunOutput::into(folder)),
                      Contains("bdf: the Newton iteration did not converge") && Contains("worst constraint joint '"));
    CHECK(!std::filesystem::exists(folder / "trajectory.csv"));
    CHECK(!std::filesystem::exists(folder / "summary.json"));
    std::filesystem::remove_all(folder);
  }
}

TEST_CASE("bdf options are checked", "[bdf][config]") {
  const Plugins plugins;
  CHECK_THAT(plugins.integrator("bdf", "")->description(),
             Contains("backward Euler") && Contains("quasi-Newton") && Contains("Theta h^2 = 1e-11"));
  CHECK_THAT(plugins.integrator("bdf", "newton_tolerance = 1e-3")->description(), Contains("Theta = 0.001"));
  auto error_of = [&](const std::string& options) {
    try {
      plugins.integrator("bdf", options);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("order = 3"), Contains("order"));
  CHECK_THAT(error_of("newton_matrix = \"exact\""), Contains("newton_matrix") && Contains("quasi-newton"));
  CHECK_THAT(error_of("newton_tolerance = 0"), Contains("newton_tolerance"));
  CHECK_THAT(error_of("newton_tolerance_h2 = -1"), Contains("newton_tolerance_h2"));
  CHECK_THAT(error_of("newton_tolerance = 1e-3\nnewton_tolerance_h2 = 1e-11"),
             Contains("newton_tolerance_h2") && Contains("not both"));
  CHECK_THAT(error_of("max_newton_iterations = 0"), Contains("max_newton_iterations"));
  CHECK_THAT(error_of("tolerance = 1e-3"), Contains("unknown key 'tolerance'"));
}
