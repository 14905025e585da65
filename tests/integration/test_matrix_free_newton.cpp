// Matrix-free Newton solves for long chains (issue 30 item 7, docs/newton-matrices.md "Long
// chains"): KrylovSolver (restarted GMRES) against a direct solve; generalized-alpha, bdf and
// ida with linear_solver = "gmres" against their dense Newton matrices on small trees (the
// six-joint chain, the arm, the floating torso) within the Newton or IDA tolerance;
// generalized-alpha's and BDF2's order of convergence unchanged with GMRES; the automatic
// choice on a 260-joint chain (GMRES, the same motion as dense); and the option's error paths.
// No test here measures time (bench-long-chains does).
#include "../test_support.hpp"

#include <support/model_generators.hpp>

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/sim/krylov_solver.hpp>

#include <catch2/catch.hpp>

#include <Eigen/LU>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

using namespace liembs;
using Catch::Matchers::Contains;

namespace {

struct Outcome {
  std::vector<Pose> poses;
  std::vector<Vec6> twists;
  std::map<std::string, double> statistics;
  std::string description;
};

Outcome run_file(const std::string& path, const std::vector<std::string>& overrides) {
  auto registry = testing::build_tree_registry();
  auto document = ConfigDocument::load(path);
  for (const auto& assignment : overrides) document->set_override(assignment);
  Run run = load_run(document, *registry);
  const RunSummary summary = execute_run(run, RunOutput{});
  Outcome outcome;
  for (const auto& [key, value] : run.integrator->statistics()) outcome.statistics[key] = value;
  outcome.description = run.integrator->description();
  run.dynamics->body_motion(summary.final_state, outcome.poses, outcome.twists);
  return outcome;
}

std::string source_file(const std::string& name) { return std::string(LIEMBS_SOURCE_DIR) + "/" + name; }

// Largest difference of the final body poses (|R - R'|, |r - r'|) and twists of two runs.
std::pair<double, double> motion_difference(const Outcome& a, const Outcome& b) {
  REQUIRE(a.poses.size() == b.poses.size());
  double pose = 0.0, twist = 0.0;
  for (std::size_t i = 0; i < a.poses.size(); ++i) {
    pose = std::max({pose, (a.poses[i].R - b.poses[i].R).norm(), (a.poses[i].r - b.poses[i].r).norm()});
    twist = std::max(twist, (a.twists[i] - b.twists[i]).norm());
  }
  return {pose, twist};
}

void check_same_motion(const Outcome& a, const Outcome& b, double pose_tolerance, double twist_tolerance) {
  const auto [pose, twist] = motion_difference(a, b);
  INFO("pose difference " << pose << ", twist difference " << twist);
  CHECK(pose < pose_tolerance);
  CHECK(twist < twist_tolerance);
}

// A fixed-base random chain of `joints` revolute joints (tests/support), as a run file in a
// fresh folder that is removed with the object.
struct ChainFile {
  std::filesystem::path folder, toml;
  explicit ChainFile(int joints) {
    folder = std::filesystem::temp_directory_path() /
             ("liembs-test-chain-" + std::to_string(joints) + "-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "chain.urdf") << test_models::random_chain_urdf(joints, 30, false);
    toml = folder / "chain.toml";
    std::ofstream(toml) << "[model]\nurdf = \"chain.urdf\"\nfloating_base = false\ngravity = [0.0, 0.0, -9.81]\n"
                        << "[algorithm]\nname = \"aba\"\n[group]\nname = \"SE3\"\n"
                        << "[integrator]\nname = \"generalized-alpha\"\n"
                        << "[simulation]\nend_time = 0.02\nstep_size = 1e-3\n";
  }
  ~ChainFile() {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
  }
};

}  // namespace

TEST_CASE("KrylovSolver (GMRES) solves a nonsymmetric system as a direct solve does", "[krylov]") {
  std::mt19937 engine(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const Eigen::Index n = 60;
  Eigen::MatrixXd A(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) A(i, j) = 0.3 * uniform(engine);
  A.diagonal().array() += 2.0;
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) b(i) = uniform(engine);
  const Eigen::VectorXd direct = A.partialPivLu().solve(b);
  KrylovSolver solver;
  auto product = [&](const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::VectorXd& out) { out = A * v; };
  for (const int restart : {8, 20, 100}) {
    INFO("restart " << restart);
    Eigen::VectorXd x;
    const KrylovSolver::Result result = solver.solve(product, b, x, 1e-12, 1000, restart);
    CHECK(result.converged);
    CHECK(result.residual <= 1e-12);
    CHECK((A * x - b).norm() <= 1e-10 * b.norm());
    CHECK((x - direct).norm() <= 1e-9 * direct.norm());
    CHECK(result.products <= 1000);
  }
  // A product budget below what the tolerance needs: not converged, but a better x than 0.
  Eigen::VectorXd x;
  const KrylovSolver::Result limited = solver.solve(product, b, x, 1e-14, 3, 40);
  CHECK_FALSE(limited.converged);
  CHECK(limited.products == 3);
  CHECK((A * x - b).norm() < b.norm());
  // b = 0: x = 0 at once.
  const KrylovSolver::Result zero = solver.solve(product, Eigen::VectorXd::Zero(n), x, 1e-12, 100, 10);
  CHECK(zero.converged);
  CHECK(zero.products == 0);
  CHECK(x.isZero(0.0));
}

TEST_CASE("linear_solver = gmres gives the dense Newton matrices' motion on small trees", "[krylov][trees]") {
  struct Case {
    std::string file, group;
  };
  const std::vector<Case> cases{{"configs/benchmarks/chain-6.toml", "SE3"},
                                {"configs/benchmarks/iiwa-arm.toml", "SE3"},
                                {"configs/benchmarks/floating-torso.toml", "SO3xR3"},
                                {"configs/benchmarks/floating-torso.toml", "SE3"}};
  for (const Case& c : cases) {
    INFO(c.file << " on " << c.group);
    auto run_with = [&](std::vector<std::string> overrides, const char* solver) {
      overrides.insert(overrides.end(), {"group.name=" + c.group, "simulation.end_time=0.2",
                                         std::string("integrator.linear_solver=") + solver});
      return run_file(source_file(c.file), overrides);
    };
    {
      const std::vector<std::string> alpha{"integrator.name=generalized-alpha", "integrator.newton_tolerance=1e-10",
                                           "simulation.step_size=1e-3"};
      const Outcome gmres = run_with(alpha, "gmres"), dense = run_with(alpha, "dense");
      CHECK(gmres.statistics.at("krylov_products") > 0);
      CHECK(gmres.statistics.at("jacobian_evaluations") == 0);
      CHECK(dense.statistics.at("krylov_products") == 0);
      CHECK_THAT(gmres.description, Contains("matrix-free"));
      check_same_motion(gmres, dense, 1e-8, 1e-6);
    }
    {
      const std::vector<std::string> bdf{"integrator.name=bdf", "integrator.order=2", "integrator.newton_tolerance=1e-8",
                                         "simulation.step_size=1e-3"};
      const Outcome gmres = run_with(bdf, "gmres"), dense = run_with(bdf, "dense");
      CHECK(gmres.statistics.at("krylov_products") > 0);
      CHECK(gmres.statistics.at("matrix_factorizations") == 0);
      CHECK(dense.statistics.at("krylov_products") == 0);
      CHECK_THAT(gmres.description, Contains("matrix-free"));
      check_same_motion(gmres, dense, 1e-8, 1e-6);
    }
    {
      const std::vector<std::string> ida{"integrator.name=ida", "integrator.relative_tolerance=1e-9",
                                         "integrator.absolute_tolerance=1e-11", "simulation.step_size=1e-2"};
      const Outcome gmres = run_with(ida, "gmres"), dense = run_with(ida, "dense");
      CHECK(gmres.statistics.at("krylov_iterations") > 0);
      CHECK(gmres.statistics.at("jacobian_evaluations") == 0);
      CHECK(dense.statistics.at("krylov_iterations") == 0);
      CHECK_THAT(gmres.description, Contains("matrix-free"));
      // Variable steps: the same motion within the tolerance, not the same steps.
      check_same_motion(gmres, dense, 1e-6, 1e-5);
    }
  }
}

TEST_CASE("generalized-alpha and BDF2 keep their order of convergence with linear_solver = gmres", "[krylov][order]") {
  // The six-joint chain from its bent start over 0.5 s; errors of the final poses against the
  // same integrator (dense) at an eighth of the finest step, halving h from 4 ms.
  const std::string file = source_file("configs/benchmarks/chain-6.toml");
  for (const char* integrator : {"generalized-alpha", "bdf"}) {
    INFO(integrator);
    auto run_at = [&](double h, const char* solver) {
      std::vector<std::string> settings{std::string("integrator.name=") + integrator, "simulation.end_time=0.5",
                                        "simulation.step_size=" + std::to_string(h),
                                        std::string("integrator.linear_solver=") + solver};
      if (std::string(integrator) == "bdf") settings.push_back("integrator.order=2");
      return run_file(file, settings);
    };
    const Outcome reference = run_at(1e-3 / 8, "dense");
    std::vector<double> gmres_errors, dense_errors;
    for (const double h : {4e-3, 2e-3, 1e-3}) {
      gmres_errors.push_back(motion_difference(run_at(h, "gmres"), reference).first);
      dense_errors.push_back(motion_difference(run_at(h, "dense"), reference).first);
    }
    for (std::size_t k = 0; k < gmres_errors.size(); ++k) {
      INFO("h = " << 4e-3 / std::pow(2.0, double(k)) << ": error " << gmres_errors[k] << " (gmres), " << dense_errors[k]
                  << " (dense)");
      CHECK(std::abs(gmres_errors[k] - dense_errors[k]) <= 1e-3 * dense_errors[k] + 1e-9);
      if (k > 0) {
        const double order = std::log2(gmres_errors[k - 1] / gmres_errors[k]);
        INFO("observed order " << order);
        CHECK(order > 1.8);
        CHECK(order < 2.3);
      }
    }
  }
}

TEST_CASE("a 260-joint chain is solved matrix-free by default, with the dense matrices' motion", "[krylov][trees]") {
  // (generalized-alpha goes matrix-free from 256 velocity coordinates on, bdf and ida from 64)
  const ChainFile chain(260);
  const std::string path = chain.toml.string();
  {
    const Outcome automatic = run_file(path, {}), dense = run_file(path, {"integrator.linear_solver=dense"});
    CHECK(automatic.statistics.at("krylov_products") > 0);
    CHECK(automatic.statistics.at("jacobian_evaluations") == 0);
    CHECK_THAT(automatic.description, Contains("matrix-free"));
    CHECK(dense.statistics.at("krylov_products") == 0);
    CHECK_THAT(dense.description, Contains("Newton matrix analytic"));
    check_same_motion(automatic, dense, 1e-8, 1e-6);
  }
  {
    const std::vector<std::string> bdf{"integrator.name=bdf", "integrator.order=2", "integrator.newton_tolerance=1e-8"};
    auto with = [&](std::vector<std::string> settings, const std::string& extra) {
      settings.push_back(extra);
      return settings;
    };
    const Outcome automatic = run_file(path, bdf);
    const Outcome dense = run_file(path, with(bdf, "integrator.linear_solver=dense"));
    const Outcome dae = run_file(path, with(bdf, "integrator.unconstrained_form=dae"));  // the form asked for: dense
    CHECK(automatic.statistics.at("krylov_products") > 0);
    CHECK(dense.statistics.at("krylov_products") == 0);
    CHECK(dae.statistics.at("krylov_products") == 0);
    check_same_motion(automatic, dense, 1e-8, 1e-6);
    check_same_motion(dae, dense, 1e-8, 1e-6);
  }
  {
    const std::vector<std::string> ida{"integrator.name=ida", "integrator.relative_tolerance=1e-9",
                                       "integrator.absolute_tolerance=1e-11"};
    auto dense_settings = ida;
    dense_settings.push_back("integrator.linear_solver=dense");
    const Outcome automatic = run_file(path, ida), dense = run_file(path, dense_settings);
    CHECK(automatic.statistics.at("krylov_iterations") > 0);
    CHECK(dense.statistics.at("krylov_iterations") == 0);
    check_same_motion(automatic, dense, 1e-6, 1e-5);
  }
}

TEST_CASE("linear_solver is checked: a name, gmres only for the ODE form without constraints", "[krylov][config]") {
  const std::string chain = source_file("configs/benchmarks/chain-6.toml");
  auto config_error = [&](const std::vector<std::string>& overrides) {
    try {
      run_file(chain, overrides);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  for (const char* integrator : {"generalized-alpha", "bdf", "ida"}) {
    INFO(integrator);
    const std::string name = std::string("integrator.name=") + integrator;
    CHECK_THAT(config_error({name, "integrator.linear_solver=\"cg\""}),
               Contains("linear_solver") && Contains("gmres") && Contains("dense"));
    CHECK_THAT(config_error({name, "integrator.linear_solver=gmres", "integrator.unconstrained_form=dae"}),
               Contains("linear_solver") && Contains("unconstrained_form"));
  }
  // Constraint rows (the spatial four-bar's loop closure): gmres is refused at the first step
  // with a message naming the option; the default there is the dense matrix.
  const std::string four_bar = source_file("configs/four-bar/spatial.toml");
  for (const char* integrator : {"generalized-alpha", "bdf", "ida"}) {
    INFO(integrator);
    const std::vector<std::string> overrides{std::string("integrator.name=") + integrator, "algorithm.name=aba",
                                             "integrator.linear_solver=gmres", "simulation.end_time=0.01"};
    CHECK_THROWS_WITH(run_file(four_bar, overrides), Contains("linear_solver") && Contains("constraint"));
  }
}
