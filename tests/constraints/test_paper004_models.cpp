// Paper 004's mechanisms from the authors' JSON schema (configs/paper-004): the single
// pendulum driven in dynamics against its closed form (reference note section 4.2, the
// driver's multiplier -284.198 at T = 3 s), the double pendulum against a planar
// compound-pendulum ODE, the four link and slider crank with their driver swaps, each on
// SO3xR3 (rA's configuration space) and SE3 with several integrators; and the error paths of
// the TOML and JSON readers.
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/loaders/model_file.hpp>
#include <liembs/model/model.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/util/warning.hpp>

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
          "[paper-004][gcon][heavy]") {
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

namespace {

// A folder of scratch run files next to copies of the paper-004 JSON models.
std::filesystem::path scratch(const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() / ("liembs-test-paper004-" + name);
  std::filesystem::create_directories(folder);
  for (const char* json : {"four-link.json", "single-pendulum.json"})
    std::filesystem::copy_file(std::string(LIEMBS_SOURCE_DIR) + "/configs/paper-004/" + json, folder / json,
                               std::filesystem::copy_options::overwrite_existing);
  return folder;
}

std::string simulation_error(testing::LoadedRun& loaded) {
  try {
    run_config(loaded);
  } catch (const std::exception& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

// Issue 33 item 4: the authors' files carry placeholder drivers; projecting such a state onto
// the constraints without a word gave a pendulum that jumped 45 degrees and stayed still.
TEST_CASE("an initial state the projection moves is an error naming the bodies, unless the file allows it",
          "[paper-004][gcon][errors]") {
  const auto folder = scratch("projection");
  // The single pendulum with its driver replaced by f = 0: the rod must turn to the driver.
  const std::string body = "[[model.bodies]]\nname = \"pendulum\"\nmass = 78.0\ninertia_diagonal = [0.0325, 104.01625, 104.01625]\n";
  const std::string run = "[group]\nname = \"SO3xR3\"\n[algorithm]\nname = \"newton-euler\"\n[integrator]\nname = \"bdf\"\n"
                          "[simulation]\nend_time = 0.01\nstep_size = 1e-3\n";
  auto write = [&](const std::string& model_keys) {
    std::ofstream(folder / "run.toml") << "[model]\njson = \"single-pendulum.json\"\ngravity = [0.0, 0.0, -9.81]\n" << model_keys
                                       << "\n" << body << run;
    return (folder / "run.toml").string();
  };
  SECTION("the file's own state is consistent: no error") {
    auto loaded = testing::load_test_run(write(""));
    CHECK_NOTHROW(run_config(loaded));
  }
  SECTION("a placeholder driver moves the pendulum: an error with the body and how far") {
    auto loaded = testing::load_test_run(write("[model.drivers.driver]\nf = \"0\""));
    const std::string message = simulation_error(loaded);
    CHECK_THAT(message, Contains("run.toml") && Contains("does not satisfy the constraints") && Contains("'pendulum'") &&
                            Contains("rad in orientation") && Contains("allow_initial_projection = true"));
  }
  SECTION("allowed, the run starts from the projected state") {
    auto loaded = testing::load_test_run(write("allow_initial_projection = true\n[model.drivers.driver]\nf = \"0\""));
    CHECK_NOTHROW(run_config(loaded));
  }
}

// Issue 33 item 6: the authors' codes test the swap rule at the time a step solves for.
TEST_CASE("driver swap time: step-end swaps one step before step-start, on the same motion",
          "[paper-004][gcon]") {
  // The four link's driver f = cos(pi t + pi/2) reaches | |f| - 1 | < 0.1 at t = 0.35644 s: the
  // step to t = 0.357 s swaps with step-end (f at 0.357) and not with step-start (f at 0.356).
  auto run_until = [](const std::string& time, const char* end_time) {
    auto loaded = testing::load_test_run(config("four-link.toml"),
                                         {"integrator.name=bdf", std::string("simulation.end_time=") + end_time,
                                          "model.driver_swap_time=" + time, "model.allow_initial_projection=true"});
    const RunSummary summary = run_config(loaded);
    return std::pair{summary, end_state(loaded, summary.final_state, 1)};
  };
  CHECK(run_until("step-end", "0.357").first.driver_swaps == 1);
  CHECK(run_until("step-start", "0.357").first.driver_swaps == 0);
  CHECK(run_until("step-start", "0.358").first.driver_swaps == 1);
  const auto [end_summary, end] = run_until("step-end", "1.0");
  const auto [start_summary, start] = run_until("step-start", "1.0");
  CHECK(end_summary.driver_swaps == start_summary.driver_swaps);
  CHECK((end.position - start.position).norm() < 1e-8);  // both drivers hold on the same motion
}

// Issue 33 item 6: rε's chart threshold decides the discrete trajectory; 0.3 keeps every body
// in the chart it starts in, as the authors' code (which flips a frame only within 0.1 of
// theta = 0 or pi) does over the paper's 3 s; the default 0.5 starts link 2 in another chart.
TEST_CASE("rε chart threshold: 0.3 keeps the authors' charts on the four link, the default does not",
          "[paper-004][gcon][euler-angles]") {
  auto loaded = [](const char* threshold, const char* end_time) {
    return testing::load_test_run(config("four-link.toml"),
                                  {"group.name=euler-angles", std::string("group.switch_threshold=") + threshold,
                                   "integrator.name=bdf", std::string("simulation.end_time=") + end_time,
                                   "model.allow_initial_projection=true"});
  };
  // Euler angles keep per body (phi, theta, psi, k), k the chart offset (configuration-spaces.md).
  auto offsets = [](const State& state) {
    std::vector<int> k;
    for (Eigen::Index i = 3; i < state.chart.size(); i += 4) k.push_back(static_cast<int>(state.chart(i)));
    return k;
  };
  auto paper = loaded("0.3", "3.0");
  CHECK(offsets(paper.run.dynamics->initial_state()) == std::vector<int>{0, 0, 0});
  const RunSummary summary = run_config(paper);
  CHECK(summary.chart_switches == 0);
  CHECK(offsets(summary.final_state) == std::vector<int>{0, 0, 0});
  auto default_threshold = loaded("0.5", "0.01");
  CHECK(offsets(default_threshold.run.dynamics->initial_state()) != std::vector<int>{0, 0, 0});
}

// Issue 33 item 8: at a driver singularity without an alternate the error named an unrelated
// constraint and said "reduce step size"; it names the driver, the time and the remedy.
TEST_CASE("a driver reaching a singular point without an alternate is named, with the time and the remedy",
          "[paper-004][gcon][errors]") {
  const auto folder = scratch("singular-driver");
  std::ofstream(folder / "run.toml") << R"([model]
json = "four-link.json"
gravity = [0.0, 0.0, -9.81]
allow_initial_projection = true
[[model.bodies]]
name = "rotor"
mass = 2.0
inertia_diagonal = [4.0, 2.0, 2.5]
[[model.bodies]]
name = "link2"
mass = 1.0
inertia_diagonal = [12.4, 0.01, 12.4]
[[model.bodies]]
name = "link3"
mass = 1.0
inertia_diagonal = [4.54, 0.01, 4.54]
[group]
name = "SO3xR3"
[algorithm]
name = "newton-euler"
[integrator]
name = "bdf"
[simulation]
end_time = 0.6
step_size = 1e-3
)";
  auto loaded = testing::load_test_run((folder / "run.toml").string());
  const std::string message = simulation_error(loaded);
  CHECK_THAT(message, Contains("the driver 'driver'") && Contains("singular point at t = 0.49") && Contains("alternate driver") &&
                          Contains("[model.drivers.driver.alternate]"));
}

// Issue 33 item 7: C1's double_pendulum.mdl gives "omega_dot"; a known key without meaning
// for a run loads with a warning naming it, an unknown key stays an error.
TEST_CASE("the authors' JSON: a known but unused key is a warning naming it, an unknown key an error",
          "[paper-004][json][errors]") {
  const auto folder = scratch("json-keys");
  auto load = [&](const std::string& extra) {
    std::ofstream(folder / "model.json")
        << R"({"bodies": [{"name": "ground", "id": 0}, {"name": "rod", "id": 1, "r": [0, 0, 0], "A": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], )"
        << extra << R"(}], "constraints": []})";
    std::ofstream(folder / "model.toml") << "[model]\njson = \"model.json\"\n[[model.bodies]]\nname = \"rod\"\nmass = 1\n"
                                            "inertia_diagonal = [1, 2, 2]\n";
    auto document = ConfigDocument::load(folder / "model.toml");
    return load_model(document->root().table("model"));
  };
  {
    CapturedWarnings warnings;
    CHECK_NOTHROW(load(R"("omega": [0, 0, 0], "omega_dot": [0.0, 0.0, 0.0])"));
    REQUIRE(warnings.messages().size() == 1);
    CHECK_THAT(warnings.messages()[0], Contains("model.json") && Contains("body 'rod'") && Contains("'omega_dot' ignored"));
  }
  {
    CapturedWarnings warnings;
    load(R"("omega": [0, 0, 0])");
    CHECK(warnings.messages().empty());
  }
  CHECK_THROWS_WITH(load(R"("omega": [0, 0, 0], "omega_dto": [0, 0, 0])"),
                    Contains("body 'rod'") && Contains("unknown key 'omega_dto'"));
}

// Issue 33 item 5: the authors' four link has singular, rod-like inertias (Haug p. 459:
// J = diag(4, 2, 0), diag(12.4, 0.01, 0), diag(4.54, 0.01, 0)); the constraints hold every
// body about its zero axis, so the constrained mass matrix is regular and the model runs as
// published. Its motion is prescribed (the positions are those of any inertias); the
// reaction forces are the published model's, not the project's substitutes'.
TEST_CASE("the paper's four link runs with its published singular inertias, and a body the constraints do not hold is an error",
          "[paper-004][gcon]") {
  const auto folder = scratch("singular-inertia");
  const std::string run = R"toml(
[model.drivers.driver.alternate]
a_bar_i = [-1.0, 0.0, 0.0]
a_bar_j = [0.0, 0.0, 1.0]
f = "cos(pi*t)"
[group]
name = "SO3xR3"
[algorithm]
name = "newton-euler"
[integrator]
name = "bdf"
[simulation]
end_time = 1.0
step_size = 1e-3
)toml";
  std::ofstream(folder / "published.toml") << R"([model]
json = "four-link.json"
gravity = [0.0, 0.0, -9.81]
allow_initial_projection = true
[[model.bodies]]
name = "rotor"
mass = 2.0
inertia_diagonal = [4.0, 2.0, 0.0]
[[model.bodies]]
name = "link2"
mass = 1.0
inertia_diagonal = [12.4, 0.01, 0.0]
[[model.bodies]]
name = "link3"
mass = 1.0
inertia_diagonal = [4.54, 0.01, 0.0]
)" << run;
  auto published = testing::load_test_run((folder / "published.toml").string());
  const RunSummary summary = run_config(published);
  CHECK(summary.driver_swaps >= 2);
  CHECK(largest(summary.constraint_violation_max) < 1e-6);
  auto substitutes = testing::load_test_run(config("four-link.toml"),
                                            {"integrator.name=bdf", "simulation.end_time=1.0", "model.allow_initial_projection=true"});
  const RunSummary substitute_summary = run_config(substitutes);
  for (std::size_t body = 0; body < 3; ++body) {
    const EndState a = end_state(published, summary.final_state, body), b = end_state(substitutes, substitute_summary.final_state, body);
    CHECK((a.position - b.position).norm() < 1e-8);
    if (body == 0) {
      INFO("multipliers published " << a.multipliers.transpose() << "\nsubstitutes " << b.multipliers.transpose());
      CHECK((a.multipliers - b.multipliers).norm() > 1e-3 * b.multipliers.norm());  // the inertias are in the forces
    }
  }

  // A wheel spinning freely on a revolute through its centre, with no inertia about the axle.
  std::ofstream(folder / "wheel.json") << R"({"bodies": [{"name": "ground", "id": 0},
    {"name": "wheel", "id": 1, "r": [0, 0, 0], "A": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "omega": [0, 0, 1]}],
    "constraints": [
    {"name": "axle", "type": "DP1", "body_i": 1, "body_j": 0, "a_bar_i": [1, 0, 0], "a_bar_j": [0, 0, 1]},
    {"name": "axle", "type": "DP1", "body_i": 1, "body_j": 0, "a_bar_i": [0, 1, 0], "a_bar_j": [0, 0, 1]},
    {"name": "axle", "type": "CD", "body_i": 1, "body_j": 0, "c": [1, 0, 0], "s_bar_p_i": [0, 0, 0], "s_bar_q_j": [0, 0, 0]},
    {"name": "axle", "type": "CD", "body_i": 1, "body_j": 0, "c": [0, 1, 0], "s_bar_p_i": [0, 0, 0], "s_bar_q_j": [0, 0, 0]},
    {"name": "axle", "type": "CD", "body_i": 1, "body_j": 0, "c": [0, 0, 1], "s_bar_p_i": [0, 0, 0], "s_bar_q_j": [0, 0, 0]}]})";
  std::ofstream(folder / "wheel.toml") << "[model]\njson = \"wheel.json\"\n[[model.bodies]]\nname = \"wheel\"\nmass = 1.0\n"
                                          "inertia_diagonal = [1.0, 1.0, 0.0]\n[group]\nname = \"SO3xR3\"\n[algorithm]\n"
                                          "name = \"newton-euler\"\n[integrator]\nname = \"bdf\"\n[simulation]\nend_time = 0.01\n"
                                          "step_size = 1e-3\n";
  auto wheel = testing::load_test_run((folder / "wheel.toml").string());
  CHECK_THAT(simulation_error(wheel), Contains("singular") && Contains("'wheel' (principal moments"));
}
