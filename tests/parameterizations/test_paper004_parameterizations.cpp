// Paper 004's mechanisms (configs/paper-004) in rp (euler-parameters) and re (euler-angles)
// against the same runs in rA (SO3xR3), through bdf (backward Euler and BDF2),
// generalized-alpha, ida and the kinematic analysis: the reference note's check T9 (zero
// degrees of freedom: positions fixed by the drivers, so the formulations agree to the
// solvers' tolerances) and T10 (the double pendulum's motion close in all three); the sizes
// of T12 (kinematic 6nb / 7nb / 6nb, dynamic Newton 6nb + nc / 8nb + nc / 6nb + nc) and rp's
// normalization held by its constraint.
#include "parameterized_motion.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/host/run.hpp>

#include <catch2/catch.hpp>

#include <map>

using namespace liembs;

namespace {

using testing::Motion;

Motion run_paper004(const std::string& file, const std::vector<std::string>& overrides) {
  return testing::run_to_end(ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-004/" + file),
                             overrides);
}

// Largest difference of the bodies' positions and of their world velocities r' = R v.
double position_distance(const Motion& a, const Motion& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.poses.size(); ++i)
    d = std::max({d, (a.poses[i].r - b.poses[i].r).norm(), (a.poses[i].R - b.poses[i].R).norm()});
  return d;
}
double velocity_distance(const Motion& a, const Motion& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.poses.size(); ++i)
    d = std::max(d, (a.poses[i].R * a.twists[i].tail<3>() - b.poses[i].R * b.twists[i].tail<3>()).norm());
  return d;
}

double largest(const std::vector<double>& values) {
  double m = 0.0;
  for (double v : values) m = std::max(m, v);
  return m;
}

std::vector<std::string> with(std::vector<std::string> settings, const std::vector<std::string>& more) {
  settings.insert(settings.end(), more.begin(), more.end());
  return settings;
}

struct Mechanism {
  const char* file;
  const char* end_time;  // the four link and slider crank past their second driver swap
  int bodies;
};
const std::vector<Mechanism> driven{{"single-pendulum.toml", "1.0", 1},
                                     {"four-link.toml", "1.0", 3},
                                     {"slider-crank.toml", "0.5", 3}};

}  // namespace

TEST_CASE("paper 004's driven mechanisms in rp and re agree with rA through bdf, generalized-alpha, ida",
          "[parameterizations][paper-004][T9][heavy]") {
  struct Integrator {
    std::vector<std::string> settings;
    double position_tolerance, velocity_tolerance;
  };
  // Zero degrees of freedom: the positions are the drivers' at every time point, up to the
  // Newton (bdf: h^2 Theta, Theta h^2 = 1e-11) or error-test tolerances; bdf's velocities
  // are then differences of the same positions (r' within h Theta).
  const std::vector<Integrator> integrators{
      {{"integrator.name=bdf"}, 1e-9, 1e-7},
      {{"integrator.name=bdf", "integrator.order=2"}, 1e-9, 1e-7},
      {{"integrator.name=generalized-alpha", "simulation.step_size=5e-4", "integrator.newton_tolerance=1e-10"}, 1e-7, 1e-4},
      {{"integrator.name=ida", "integrator.relative_tolerance=1e-9", "integrator.absolute_tolerance=1e-11"}, 1e-6, 1e-5},
  };
  for (const Mechanism& m : driven)
    for (const Integrator& integrator : integrators) {
      const auto settings = with(integrator.settings, {std::string("simulation.end_time=") + m.end_time});
      const Motion rA = run_paper004(m.file, with(settings, {"group.name=SO3xR3"}));
      for (const char* group : {"euler-parameters", "euler-angles"}) {
        INFO(m.file << " with " << integrator.settings.front() << (integrator.settings.size() > 1 ? " " + integrator.settings[1] : "")
                    << " in " << group);
        const Motion other = run_paper004(m.file, with(settings, {std::string("group.name=") + group}));
        INFO("position difference " << position_distance(other, rA) << ", velocity difference "
                                    << velocity_distance(other, rA) << ", swaps " << other.summary.driver_swaps
                                    << ", chart switches " << other.summary.chart_switches);
        CHECK(other.summary.driver_swaps == rA.summary.driver_swaps);
        CHECK(position_distance(other, rA) < integrator.position_tolerance);
        CHECK(velocity_distance(other, rA) < integrator.velocity_tolerance);
        CHECK(largest(other.summary.constraint_violation_max) < 1e-6);
        if (std::string(group) == "euler-parameters") CHECK(other.summary.normalization_error_max < 1e-9);
        if (integrator.settings.front() == "integrator.name=bdf") {
          // Newton iterations per step: comparable (docs/bdf-and-kinematics.md has the table);
          // a bound that catches a Newton matrix gone wrong for a parameterization.
          const double iterations = other.statistics.at("newton_iterations_per_step");
          INFO("Newton iterations per step " << iterations << ", rA " << rA.statistics.at("newton_iterations_per_step"));
          CHECK(iterations < rA.statistics.at("newton_iterations_per_step") + 1.5);
        }
      }
    }
}

TEST_CASE("paper 004's kinematic analysis in rp and re: same positions, Table 9's iterations, T12's sizes",
          "[parameterizations][paper-004][kinematics]") {
  for (const Mechanism& m : driven) {
    const std::vector<std::string> settings{"integrator.name=kinematics", std::string("simulation.end_time=") + m.end_time};
    const Motion rA = run_paper004(m.file, with(settings, {"group.name=SO3xR3"}));
    CHECK(rA.statistics.at("coordinates") == 6 * m.bodies);
    for (const char* group : {"euler-parameters", "euler-angles"}) {
      INFO(m.file << " in " << group);
      const Motion other = run_paper004(m.file, with(settings, {std::string("group.name=") + group}));
      CHECK(position_distance(other, rA) < 1e-9);
      CHECK(velocity_distance(other, rA) < 1e-8);
      CHECK(other.summary.driver_swaps == rA.summary.driver_swaps);
      const bool rp = std::string(group) == "euler-parameters";
      CHECK(other.statistics.at("coordinates") == (rp ? 7 : 6) * m.bodies);  // T12: 6nb / 7nb / 6nb
      CHECK(other.statistics.at("constraints") == rA.statistics.at("constraints") + (rp ? m.bodies : 0));
      // Table 9: iteration counts comparable in the three formulations.
      const double iterations = other.statistics.at("newton_iterations_per_step");
      INFO("iterations per step " << iterations << ", rA " << rA.statistics.at("newton_iterations_per_step"));
      CHECK(iterations == Approx(rA.statistics.at("newton_iterations_per_step")).margin(0.6));
      if (rp) CHECK(other.summary.normalization_error_max < 1e-12);
    }
  }
}

TEST_CASE("paper 004's double pendulum in rp and re: the same motion as rA (T10)", "[parameterizations][paper-004][T10]") {
  // Two degrees of freedom: the formulations' discretizations differ (rp and re add to their
  // coordinates, rA multiplies by exp), so they agree to the integrators' error: BDF2 at
  // h = 1e-3 and ida at rtol 1e-10 over 1 s.
  const std::vector<std::string> bdf2{"integrator.name=bdf", "integrator.order=2", "simulation.step_size=1e-3",
                                      "simulation.end_time=1.0"};
  const std::vector<std::string> ida{"integrator.name=ida", "integrator.relative_tolerance=1e-10",
                                     "integrator.absolute_tolerance=1e-12", "simulation.end_time=1.0"};
  const Motion bdf_rA = run_paper004("double-pendulum.toml", with(bdf2, {"group.name=SO3xR3"}));
  const Motion ida_rA = run_paper004("double-pendulum.toml", with(ida, {"group.name=SO3xR3"}));
  const double bdf_error = position_distance(bdf_rA, ida_rA);
  CHECK(bdf_error < 1e-3);
  for (const char* group : {"euler-parameters", "euler-angles"}) {
    INFO(group << ": rA's BDF2 error " << bdf_error);
    const Motion bdf_other = run_paper004("double-pendulum.toml", with(bdf2, {std::string("group.name=") + group}));
    const Motion ida_other = run_paper004("double-pendulum.toml", with(ida, {std::string("group.name=") + group}));
    CHECK(position_distance(ida_other, ida_rA) < 1e-6);
    CHECK(position_distance(bdf_other, ida_rA) < 2.0 * bdf_error);  // the same order of error as rA's
    CHECK(position_distance(bdf_other, bdf_rA) < 2.0 * bdf_error);
    CHECK(bdf_other.summary.energy_drift_max < 1e-3);
  }
}
