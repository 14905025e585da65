// Paper 004's mechanisms from the authors' JSON schema (configs/paper-004): the single
// pendulum driven in dynamics against its closed form (reference note section 4.2, the
// driver's multiplier -284.198 at T = 3 s), the double pendulum against a planar
// compound-pendulum ODE, the four link and slider crank with their driver swaps, each on
// SO3xR3 (rA's configuration space) and SE3 with several integrators; and the error paths of
// the TOML and JSON readers.
#include "../test_support.hpp"

#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/sim/constrained_system.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

std::string config(const std::string& name) { return "../../configs/paper-004/" + name; }

// Runs a paper-004 file with overrides and returns the summary; `loaded` keeps the run.
RunSummary run_config(testing::LoadedRun& loaded) { return execute_run(loaded.run, RunOutput{}); }

// World position and velocity of body `body`, and the multipliers, at the run's final state.
struct EndState {
  Vec3 position, velocity, acceleration;
  Eigen::VectorXd multipliers;
};
EndState end_state(testing::LoadedRun& loaded, const State& state, std::size_t body) {
  ForwardDynamics& dynamics = *loaded.run.dynamics;
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  dynamics.body_motion(state, poses, twists);
  EndState end;
  end.position = poses[body].r;
  end.velocity = poses[body].R * twists[body].tail<3>();
  DaeTerms terms;
  dynamics.constraints()->evaluate(state, terms, dae::all);
  Eigen::VectorXd rates;
  solve_index1(terms, rates, &end.multipliers);
  // r'' from the velocity rates: on SO3xR3 the linear rates are r''; on SE3 (v = R^T r'),
  // r'' = R (v' + omega x v).
  const auto o = static_cast<Eigen::Index>(6 * body);
  if (loaded.run.group_name == "SE3")
    end.acceleration = poses[body].R * (rates.segment<3>(o + 3) + twists[body].head<3>().cross(twists[body].tail<3>()));
  else
    end.acceleration = rates.segment<3>(o + 3);
  return end;
}

Eigen::Index block_row(ConstrainedSystem& system, const std::string& name) {
  for (const auto& block : system.blocks())
    if (block.name == name) return block.first;
  FAIL("no block " << name);
  return -1;
}

double largest(const std::vector<double>& values) {
  double m = 0.0;
  for (double v : values) m = std::max(m, v);
  return m;
}

}  // namespace

TEST_CASE("single pendulum driven in dynamics against its closed form (lambda -> -284.198 at T = 3 s)",
          "[paper-004][gcon]") {
  for (const char* group : {"SO3xR3", "SE3"}) {
    for (const char* integrator : {"ida", "generalized-alpha"}) {
      std::vector<std::string> overrides{std::string("group.name=") + group, std::string("integrator.name=") + integrator};
      if (std::string(integrator) == "generalized-alpha")
        overrides.insert(overrides.end(), {"simulation.step_size=1e-3", "integrator.newton_tolerance=1e-11"});
      else
        overrides.insert(overrides.end(), {"simulation.step_size=0.01", "integrator.relative_tolerance=1e-10",
                                           "integrator.absolute_tolerance=1e-12"});
      auto loaded = testing::load_test_run(config("single-pendulum.toml"), overrides);
      const RunSummary summary = run_config(loaded);
      const EndState end = end_state(loaded, summary.final_state, 0);
      ConstrainedSystem& system = *loaded.run.dynamics->constraints();
      const double lambda = end.multipliers(block_row(system, "driver"));
      INFO(group << " " << integrator << ": r = " << end.position.transpose() << ", r' = " << end.velocity.transpose()
                 << ", r'' = " << end.acceleration.transpose() << ", lambda = " << lambda);
      CHECK(summary.simulated_seconds == Approx(3.0));
      const double tolerance = std::string(integrator) == "ida" ? 1e-6 : 1e-4;
      CHECK(end.position.z() == Approx(-1.457754).margin(2e-6));
      CHECK(end.position.y() == Approx(1.369289).margin(2e-6));
      CHECK(std::abs(end.position.x()) < 1e-9);
      CHECK(end.velocity.z() == Approx(0.600988).margin(tolerance + 1e-6));
      CHECK(end.velocity.y() == Approx(0.639815).margin(tolerance + 1e-6));
      CHECK(end.acceleration.z() == Approx(-3.849593).margin(1e-4));
      CHECK(end.acceleration.y() == Approx(-4.661039).margin(1e-4));
      CHECK(lambda == Approx(-284.198).margin(0.01));
      CHECK(largest(summary.constraint_violation_max) < 1e-7);
      CHECK(summary.driver_swaps == 0);  // |f| <= 0.71: never near its singular points
    }
  }
}

TEST_CASE("double pendulum against the planar compound-pendulum ODE", "[paper-004][gcon]") {
  // Absolute angles phi1, phi2 from the downward vertical (reference note section 4.2).
  const double m1 = 78, m2 = 39, I1 = 104.01625, I2 = 13.008125, a1 = 2, L1 = 4, a2 = 1, g = 9.81;
  auto f = [&](const Eigen::Vector4d& x) {
    const double c = std::cos(x(0) - x(1)), s = std::sin(x(0) - x(1));
    Eigen::Matrix2d M;
    M << I1 + m1 * a1 * a1 + m2 * L1 * L1, m2 * L1 * a2 * c, m2 * L1 * a2 * c, I2 + m2 * a2 * a2;
    const Eigen::Vector2d rhs(-m2 * L1 * a2 * s * x(3) * x(3) - (m1 * a1 + m2 * L1) * g * std::sin(x(0)),
                              m2 * L1 * a2 * s * x(2) * x(2) - m2 * a2 * g * std::sin(x(1)));
    const Eigen::Vector2d acc = M.lu().solve(rhs);
    return Eigen::Vector4d(x(2), x(3), acc(0), acc(1));
  };
  const double end_time = 1.0;
  Eigen::Vector4d x(M_PI / 2, 0, 0, 0);
  const int steps = 20000;
  const double h = end_time / steps;
  for (int i = 0; i < steps; ++i) {
    const Eigen::Vector4d k1 = f(x), k2 = f(x + 0.5 * h * k1), k3 = f(x + 0.5 * h * k2), k4 = f(x + h * k3);
    x += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  const double z2 = -L1 * std::cos(x(0)) - a2 * std::cos(x(1)), y2 = L1 * std::sin(x(0)) + a2 * std::sin(x(1));
  for (const char* group : {"SO3xR3", "SE3"}) {
    auto loaded = testing::load_test_run(config("double-pendulum.toml"),
                                         {std::string("group.name=") + group, "simulation.end_time=1.0",
                                          "integrator.relative_tolerance=1e-10", "integrator.absolute_tolerance=1e-12"});
    const RunSummary summary = run_config(loaded);
    const EndState end = end_state(loaded, summary.final_state, 1);
    INFO(group << ": lower rod at " << end.position.transpose() << ", ODE y = " << y2 << ", z = " << z2
               << "; energy drift " << summary.energy_drift_max);
    CHECK(end.position.z() == Approx(z2).margin(1e-6));
    CHECK(end.position.y() == Approx(y2).margin(1e-6));
    CHECK(summary.energy_drift_max < 1e-6);
    CHECK(largest(summary.constraint_violation_max) < 1e-7);
  }
}

TEST_CASE("four link and slider crank run on both groups with every integrator, swapping drivers",
          "[paper-004][gcon]") {
  struct Case {
    const char* file;
    const char* end_time;  // past the second swap (four link 0.36 and 0.86 s, slider crank 0.18 and 0.43 s)
  };
  for (const Case c : {Case{"four-link.toml", "1.0"}, Case{"slider-crank.toml", "0.5"}})
    for (const char* group : {"SO3xR3", "SE3"})
      for (const char* integrator : {"ida", "generalized-alpha", "rkmk"}) {
        std::vector<std::string> overrides{std::string("group.name=") + group, std::string("integrator.name=") + integrator,
                                           std::string("simulation.end_time=") + c.end_time};
        if (std::string(integrator) == "rkmk") overrides.push_back("integrator.projection=true");
        if (std::string(integrator) == "ida") overrides.push_back("integrator.relative_tolerance=1e-9");
        if (std::string(integrator) == "generalized-alpha") overrides.push_back("simulation.step_size=5e-4");
        auto loaded = testing::load_test_run(config(c.file), overrides);
        const RunSummary summary = run_config(loaded);
        INFO(c.file << " " << group << " " << integrator << ": largest |g| " << largest(summary.constraint_violation_max)
                    << ", |J V - nu| " << largest(summary.velocity_violation_max) << ", swaps " << summary.driver_swaps);
        CHECK(summary.driver_swaps >= 2);
        CHECK(largest(summary.constraint_violation_max) < 1e-6);
        CHECK(largest(summary.velocity_violation_max) < 1e-5);
      }
}

TEST_CASE("rp-era JSON files (p, p_dot) give the same model as rA-era files (A, omega)", "[paper-004][json]") {
  const auto folder = std::filesystem::temp_directory_path() / "liembs-test-json";
  std::filesystem::create_directories(folder);
  // The single pendulum's orientation as Euler parameters, turning at omega_bar = (0, 0, 0.5).
  const Mat3 A = (Mat3() << 0, 0, 1, 0.70710678118654752, 0.70710678118654752, 0, -0.70710678118654752,
                  0.70710678118654752, 0).finished();
  const Eigen::Quaterniond q(A);
  const Vec3 omega(0.1, -0.2, 0.5);
  // p' = (1/2) G^T omega_bar.
  const double e0 = q.w();
  const Vec3 e(q.x(), q.y(), q.z());
  Eigen::Matrix<double, 3, 4> G;
  G.col(0) = -e;
  G.rightCols<3>() = -so3::hat(e) + e0 * Mat3::Identity();
  const Eigen::Vector4d p_dot = 0.5 * G.transpose() * omega;
  auto write = [&](const std::string& name, const std::string& orientation) {
    std::ofstream(folder / (name + ".json")) << R"({"bodies": [{"name": "ground", "id": 7}, {"name": "rod", "id": 1, "r": [1, 2, 3], )"
                                            << orientation << R"(}], "constraints": []})";
    std::ofstream(folder / (name + ".toml")) << "[model]\njson = \"" << name
                                            << ".json\"\n[[model.bodies]]\nname = \"rod\"\nmass = 1\ninertia_diagonal = [1, 2, 2]\n";
  };
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, R"("A": [[%.17g, %.17g, %.17g], [%.17g, %.17g, %.17g], [%.17g, %.17g, %.17g]], "omega": [%.17g, %.17g, %.17g])",
                A(0, 0), A(0, 1), A(0, 2), A(1, 0), A(1, 1), A(1, 2), A(2, 0), A(2, 1), A(2, 2), omega(0), omega(1), omega(2));
  write("ra", buffer);
  std::snprintf(buffer, sizeof buffer, R"("p": [%.17g, %.17g, %.17g, %.17g], "p_dot": [%.17g, %.17g, %.17g, %.17g])", q.w(), q.x(),
                q.y(), q.z(), p_dot(0), p_dot(1), p_dot(2), p_dot(3));
  write("rp", buffer);
  auto model_of = [&](const std::string& name) {
    auto document = ConfigDocument::load(folder / (name + ".toml"));
    return load_model(document->root().table("model"));
  };
  const Model ra = model_of("ra"), rp = model_of("rp");
  REQUIRE(ra.bodies.size() == 1);
  REQUIRE(rp.bodies.size() == 1);
  CHECK((ra.bodies[0].reference_pose.R - rp.bodies[0].reference_pose.R).norm() < 1e-12);
  CHECK((ra.bodies[0].initial_angular_velocity - rp.bodies[0].initial_angular_velocity).norm() < 1e-12);
  CHECK((rp.bodies[0].initial_angular_velocity - omega).norm() < 1e-12);
  CHECK(ra.bodies[0].reference_pose.r == Vec3(1, 2, 3));
}

TEST_CASE("the TOML and JSON readers of geometric constraints name the file, key or constraint", "[gcon][errors]") {
  const auto folder = std::filesystem::temp_directory_path() / "liembs-test-json-errors";
  std::filesystem::create_directories(folder);
  const std::string body = R"({"name": "rod", "id": 1, "r": [0, 0, 0], "A": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]})";
  // error text of loading a [model] table (TOML text) next to a JSON file (if any)
  auto error_of = [&](const std::string& toml, const std::string& json = "") -> std::string {
    if (!json.empty()) std::ofstream(folder / "model.json") << json;
    std::ofstream(folder / "model.toml") << toml;
    try {
      auto document = ConfigDocument::load(folder / "model.toml");
      const Model model = load_model(document->root().table("model"));
      document->reject_unused_keys();
    } catch (const std::exception& error) {
      return error.what();
    }
    return "no error";
  };
  const std::string rod = "[[model.bodies]]\nname = \"rod\"\nmass = 1\ninertia_diagonal = [1, 2, 2]\n";
  const std::string constraint = rod + "[[model.constraints]]\nname = \"c\"\nbody_i = \"rod\"\nbody_j = \"ground\"\n";
  SECTION("TOML") {
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"DP3\"\n"), Contains("'DP3' is not one of") && Contains("DP1"));
    CHECK_THAT(error_of("[model]\n" + rod + "[[model.constraints]]\nname = \"c\"\ntype = \"CD\"\nbody_i = \"rdo\"\nbody_j = \"ground\"\nc = [1, 0, 0]\n"),
               Contains("unknown body 'rdo'") && Contains("did you mean 'rod'"));
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"D\"\n"), Contains("needs f"));
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"DP1\"\na_bar_i = [1, 0, 0]\na_bar_j = [0, 0, 0]\n"),
               Contains("a_bar_j") && Contains("zero"));
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"CD\"\nc = [1, 0, 0]\nf = \"cos(2*t\"\n"),
               Contains("model.toml:") && Contains("cannot read the expression \"cos(2*t\""));
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"CD\"\nc = [1, 0, 0]\nf = \"cos(2*s)\"\n"),
               Contains("cannot read the expression \"cos(2*s)\""));
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"CD\"\nc = [1, 0, 0]\n[model.constraints.alternate]\nc = [0, 1, 0]\n"),
               Contains("only a DP1 driver has an alternate"));
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"revolute\"\na_bar_i = [1, 0, 0]\na_bar_j = [1, 0, 0]\nf = 1\n"),
               Contains("unknown key") && Contains("f"));
    CHECK_THAT(error_of("[model]\n" + constraint + "type = \"CD\"\nc = [1, 0, 0]\n" +
                        "[[model.constraints]]\nname = \"c\"\ntype = \"CD\"\nbody_i = \"rod\"\nbody_j = \"ground\"\nc = [0, 1, 0]\n"),
               Contains("duplicate constraint name 'c'"));
  }
  SECTION("JSON") {
    const std::string toml = "[model]\njson = \"model.json\"\n" + rod;
    CHECK_THAT(error_of(toml, R"({"bodies": [)" + body + R"(]})"), Contains("model.json") && Contains("no body named 'ground'"));
    CHECK_THAT(error_of(toml, R"({"bodies": [{"name": "ground", "id": 0}, )" + body +
                                  R"(], "constraints": [{"name": "k", "type": "DP4", "body_i": 1, "body_j": 0}]})"),
               Contains("constraint 'k'") && Contains("unknown type 'DP4'"));
    CHECK_THAT(error_of(toml, R"({"bodies": [{"name": "ground", "id": 0}, )" + body +
                                  R"(], "constraints": [{"name": "k", "type": "CD", "body_i": 1, "body_j": 5, "c": [1, 0, 0]}]})"),
               Contains("constraint 'k'") && Contains("body id 5 not found"));
    CHECK_THAT(error_of(toml, R"({"bodies": [{"name": "ground", "id": 0}, {"name": "rod", "id": 1, "r": [0, 0, 0], "A": [[1, 0, 0], [0, 1, 0], [0, 0.1, 1]]}]})"),
               Contains("body 'rod'") && Contains("not a rotation matrix"));
    CHECK_THAT(error_of(toml, R"({"bodies": [{"name": "ground", "id": 0}, {"name": "rod", "id": 1, "r": [0, 0, 0], "p": [1, 0.1, 0, 0]}]})"),
               Contains("body 'rod'") && Contains("'p' is not a unit vector"));
    CHECK_THAT(error_of(toml, R"({"bodies": [{"name": "ground", "id": 0}, )" + body +
                                  R"(], "constraints": [{"name": "k", "type": "CD", "body_i": 1, "body_j": 0, "c": [1, 0, 0], "f": "t+"}]})"),
               Contains("constraint 'k'") && Contains("cannot read the expression"));
    CHECK_THAT(error_of(toml, R"({"bodies": [{"name": "ground", "id": 0}, )" + body + R"(], "constraints": [)"),
               Contains("model.json"));  // syntax error
    CHECK_THAT(error_of(toml, R"({"bodies": [{"name": "ground", "id": 0}, {"name": "rod", "id": 1, "r": [0, 0, 0], "A": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "mass": 3}]})"),
               Contains("body 'rod'") && Contains("unknown key 'mass'"));
    CHECK_THAT(error_of("[model]\njson = \"model.json\"\n", R"({"bodies": [{"name": "ground", "id": 0}, )" + body + "]}"),
               Contains("body 'rod'") && Contains("has no mass"));
    CHECK_THAT(error_of("[model]\njson = \"missing.json\"\n" + rod), Contains("JSON model file not found"));
    CHECK_THAT(error_of(toml + "[model.drivers.nothing]\nf = \"t\"\n", R"({"bodies": [{"name": "ground", "id": 0}, )" + body + "]}"),
               Contains("unknown constraint 'nothing'"));
  }
}
