// rkmk tableau selection: custom tableaus from TOML, their validation, and their order.
#include "../test_support.hpp"

#include <liembs/error.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace liembs;
using Catch::Matchers::Contains;
using liembs::testing::load_test_run;
using liembs::testing::simulate;

TEST_CASE("a custom tableau with the coefficients of rk4 reproduces rk4 exactly", "[rkmk]") {
  const RunSummary named = simulate("free-body.toml", {"integrator.tableau=rk4"});
  const RunSummary custom = simulate("free-body.toml",
                                     {"integrator.tableau=custom",
                                      "integrator.a=[[0,0,0,0],[0.5,0,0,0],[0,0.5,0,0],[0,0,1,0]]",
                                      "integrator.b=[0.16666666666666666,0.3333333333333333,0.3333333333333333,0.16666666666666666]"});
  CHECK((named.final_state.poses[0].R - custom.final_state.poses[0].R).norm() < 1e-14);
  CHECK((named.final_state.velocities - custom.final_state.velocities).norm() < 1e-12);
}

TEST_CASE("a custom third-order tableau (Ralston) is recognised and converges at order 3", "[rkmk]") {
  const std::vector<std::string> ralston{"integrator.tableau=custom", "integrator.a=[[0,0,0],[0.5,0,0],[0,0.75,0]]",
                                         "integrator.b=[0.2222222222222222,0.3333333333333333,0.4444444444444444]"};
  auto loaded = load_test_run("free-body.toml", ralston);
  CHECK_THAT(loaded.run.integrator->description(), Contains("custom") && Contains("3 stages, order 3"));
  CHECK(loaded.run.integrator->order() == 3);

  auto run_at = [&](double step) {
    auto overrides = ralston;
    overrides.push_back("simulation.step_size=" + std::to_string(step));
    return simulate("free-body.toml", overrides).final_state;
  };
  const State reference = simulate("free-body.toml", {"simulation.step_size=0.000244140625"}).final_state;
  const State coarse = run_at(0.02), fine = run_at(0.01);
  const double e_coarse = (coarse.poses[0].R - reference.poses[0].R).norm() + (coarse.velocities - reference.velocities).norm();
  const double e_fine = (fine.poses[0].R - reference.poses[0].R).norm() + (fine.velocities - reference.velocities).norm();
  INFO("errors " << e_coarse << " -> " << e_fine);
  CHECK(std::abs(std::log2(e_coarse / e_fine) - 3.0) < 0.2);
}

TEST_CASE("named tableaus report their order", "[rkmk]") {
  for (const auto& [name, order] : std::vector<std::pair<std::string, int>>{{"euler", 1}, {"heun", 2}, {"rk3", 3}, {"rk4", 4}}) {
    auto loaded = load_test_run("free-body.toml", {"integrator.tableau=" + name});
    CHECK(loaded.run.integrator->order() == order);
  }
}

TEST_CASE("invalid custom tableaus are rejected with the key and the reason", "[rkmk]") {
  auto error_of = [](std::vector<std::string> overrides) {
    overrides.insert(overrides.begin(), "integrator.tableau=custom");
    try {
      load_test_run("free-body.toml", overrides);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of({"integrator.a=[[0,1],[1,0]]", "integrator.b=[0.5,0.5]"}),
             Contains("integrator.a") && Contains("explicit"));
  CHECK_THAT(error_of({"integrator.a=[[0,0],[1,0]]", "integrator.b=[0.5,0.6]"}),
             Contains("integrator.b") && Contains("not consistent"));
  CHECK_THAT(error_of({"integrator.a=[[0,0],[1,0]]", "integrator.b=[0.5,0.5]", "integrator.c=[0,0.5]"}),
             Contains("integrator.c") && Contains("row sum"));
  CHECK_THAT(error_of({"integrator.a=[[0,0],[1,0]]", "integrator.b=[1]"}), Contains("integrator.a") && Contains("1x1"));
  CHECK_THAT(error_of({"integrator.b=[1]"}), Contains("missing required key 'integrator.a'"));
  try {
    load_test_run("free-body.toml", {"integrator.tableau=rk4", "integrator.b=[1]"});
    FAIL("coefficients with a named tableau must be rejected");
  } catch (const ConfigError& error) {
    CHECK_THAT(std::string(error.what()), Contains("only read for tableau = \"custom\""));
  }
  try {
    load_test_run("free-body.toml", {"integrator.tableau=rk5"});
    FAIL("unknown tableau must be rejected");
  } catch (const ConfigError& error) {
    CHECK_THAT(std::string(error.what()), Contains("euler, heun, rk3, rk4, custom"));
  }
}
