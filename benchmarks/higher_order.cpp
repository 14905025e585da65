// Higher-order time derivatives of the dynamics (paper 003: H-GRNE, H-GABI, H-GHYB;
// docs/higher-order.md "Benchmark") against the same model's RNEA and ABA and against
// automatic differentiation, in one run, with the tables and fits at the end:
//
//   bench-higher-order [--benchmark_repetitions=3] [Google Benchmark options]
//
// 1. The aerial manipulator (models/urdf/aerial-manipulator.urdf, N = 7, 12 DoF), orders
//    r = 0..10, every representation: RNEA, ABA, H-GRNE, H-GABI, H-GHYB (arm A's joints
//    motion-prescribed, the base and arm B force-prescribed).
// 2. Paper 003's Table 4 sweep: N = 1 + 5 N_BOD bodies (branched_manipulator.hpp) up to 996
//    at r = 0, 2, 5, and r = 0..10 at N = 101.
// 3. Automatic differentiation on the scalar RNEA/ABA (benchmarks/ad-baseline): ADOL-C's
//    univariate Taylor propagation (if ADOL-C was found) and nested first-order forward mode
//    (paper 003's CasADi-style baseline, exponential in r; up to r = 8 on N = 7 and r = 5 on
//    N = 101). Before timing, every baseline is checked against H-GRNE/H-GABI at every order
//    it is timed at; a mismatch aborts the run.
// Inputs as the paper's Table 4: a random state and random u^(1..r+1); the forces of H-GABI
// are H-GRNE's of those (so H-GABI returns the rates).
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/higher_order_dynamics.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/plugin/representation.hpp>

#include "ad-baseline/nested_derivatives.hpp"
#include "ad-baseline/scalar_tree_dynamics.hpp"
#include "bench_support.hpp"
#include "branched_manipulator.hpp"
#ifdef LIEMBS_HAVE_ADOLC
#include "ad-baseline/adolc_taylor.hpp"
#endif

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace liembs;
namespace ad = liembs::ad_baseline;

namespace {

constexpr const char* representation_names[] = {"body-fixed", "spatial", "hybrid", "mixed"};
constexpr int max_order = 10;
// The representation of the orders' tables and the Table 4 sweep: the fastest one (H-GRNE
// runs in body frames and Taylor coefficients there; H-GABI and H-GHYB run the same
// spatial recursion in all four, as the aerial manipulator's order-0 table shows).
constexpr const char* table_representation = "body-fixed";

// A model with its random inputs for every order up to max_order.
struct Problem {
  std::string name;
  std::shared_ptr<const KinematicTree> tree;
  std::shared_ptr<const ad::ScalarTree> scalar;
  TreeState state;
  Eigen::MatrixXd rates, forces;  // u^(1..max_order+1), tau^(0..max_order) = H-GRNE(rates)
  Eigen::MatrixXd forward_rates;  // H-GABI(forces): the rates again, to round-off
  Eigen::VectorXd acceleration, force;  // order 0, for RNEA and ABA
  HybridSplit split;
  Eigen::MatrixXd given;  // the hybrid split's inputs
};

Problem make_problem(const std::string& name, const std::string& urdf, Registry& registry) {
  Problem problem;
  problem.name = name;
  Model model = import_urdf_string(urdf, name, true);
  model.gravity = Vec3(0, 0, -9.81);
  problem.tree = std::make_shared<const KinematicTree>(compile_tree(model));
  problem.scalar = std::make_shared<const ad::ScalarTree>(*problem.tree);
  const bench::Sample sample = bench::random_sample(*problem.tree, 3);
  problem.state = sample.state;
  const int nv = problem.tree->velocity_dimension();
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  problem.rates = Eigen::MatrixXd::NullaryExpr(nv, max_order + 1, [&] { return uniform(random); });
  const auto options = ConfigDocument::from_string("", "options");
  auto higher = registry.create<Representation>("spatial", options->root())->bind_higher_order(problem.tree, max_order);
  higher->inverse_dynamics(problem.state, problem.rates, problem.forces);
  higher->forward_dynamics(problem.state, problem.forces, problem.forward_rates);
  problem.acceleration = problem.rates.col(0);
  problem.force = problem.forces.col(0);
  // Hybrid: the first branch's joints (the first three DoF) motion-prescribed.
  problem.split.joint_motion.assign(static_cast<std::size_t>(problem.tree->dof()), false);
  for (int i = 0; i < 3 && i < problem.tree->dof(); ++i) problem.split.joint_motion[static_cast<std::size_t>(i)] = true;
  problem.given = problem.forces;
  for (int i = 0; i < 3 && i < problem.tree->dof(); ++i) problem.given.row(6 + i) = problem.rates.row(6 + i);
  return problem;
}

std::string key(const std::string& model, const std::string& kernel, const std::string& who, int r = -1) {
  std::string name = model + "/" + kernel + "/" + who;
  if (r >= 0) name.append("/").append(std::to_string(r));
  return name;
}

void add(const std::string& name, std::function<void()> body, double min_time = 0.05) {
  benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& bench) {
    for (auto _ : bench) body();
  })->MinTime(min_time);
}

// RNEA, ABA and the higher-order kernels of one representation for the orders given.
void register_representation(const std::shared_ptr<Problem>& problem, const Representation& representation,
                             const std::string& who, const std::vector<int>& orders, bool hybrid, bool order0_kernels) {
  std::shared_ptr<TreeDynamics> dynamics = representation.bind_tree(problem->tree);
  std::shared_ptr<HigherOrderDynamics> higher = representation.bind_higher_order(problem->tree, max_order);
  const std::string& m = problem->name;
  if (order0_kernels) {
    add(key(m, "RNEA", who), [=, out = std::make_shared<Eigen::VectorXd>()] {
      dynamics->inverse_dynamics(problem->state, problem->acceleration, *out);
      benchmark::DoNotOptimize(out->data());
    });
    add(key(m, "ABA", who), [=, out = std::make_shared<Eigen::VectorXd>()] {
      dynamics->forward_dynamics(problem->state, problem->force, *out);
      benchmark::DoNotOptimize(out->data());
    });
  }
  for (const int r : orders) {
    auto rates = std::make_shared<Eigen::MatrixXd>(problem->rates.leftCols(r + 1));
    auto forces = std::make_shared<Eigen::MatrixXd>(problem->forces.leftCols(r + 1));
    auto given = std::make_shared<Eigen::MatrixXd>(problem->given.leftCols(r + 1));
    auto out = std::make_shared<Eigen::MatrixXd>(), out2 = std::make_shared<Eigen::MatrixXd>();
    add(key(m, "H-GRNE", who, r), [=] {
      higher->inverse_dynamics(problem->state, *rates, *out);
      benchmark::DoNotOptimize(out->data());
    });
    add(key(m, "H-GABI", who, r), [=] {
      higher->forward_dynamics(problem->state, *forces, *out);
      benchmark::DoNotOptimize(out->data());
    });
    if (hybrid)
      add(key(m, "H-GHYB", who, r), [=] {
        higher->hybrid_dynamics(problem->state, problem->split, *given, *out, *out2);
        benchmark::DoNotOptimize(out->data());
      });
  }
}

// Per order k (column), the largest difference of a to b relative to b's magnitude.
Eigen::VectorXd order_errors(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  Eigen::VectorXd errors(b.cols());
  for (int k = 0; k < b.cols(); ++k)
    errors(k) = (a.col(k) - b.col(k)).cwiseAbs().maxCoeff() / std::max(1.0, b.col(k).cwiseAbs().maxCoeff());
  return errors;
}

// Prints a baseline's differences by order and stops the run where one exceeds its tolerance.
void check_agreement(const std::string& what, const Eigen::VectorXd& errors, const Eigen::VectorXd& tolerances) {
  std::printf("%s, relative difference by order:", what.c_str());
  for (int k = 0; k < errors.size(); ++k) std::printf(" %.0e", errors(k));
  std::printf("\n");
  for (int k = 0; k < errors.size(); ++k)
    if (!(errors(k) < tolerances(k))) {
      std::fprintf(stderr, "bench-higher-order: %s disagrees at order %d (relative error %.3g, tolerance %.3g)\n",
                   what.c_str(), k, errors(k), tolerances(k));
      std::exit(1);
    }
}

// Inverse dynamics agrees to round-off at every order.
Eigen::VectorXd roundoff(int orders) { return Eigen::VectorXd::Constant(orders, 1e-10); }
// Forward dynamics solves with the articulated inertias at every order and feeds each
// order's round-off into the next, in the baselines as in H-GABI: the agreement loosens
// geometrically with the order (by about 10 per order on these models).
Eigen::VectorXd geometric(int orders) {
  Eigen::VectorXd tolerances(orders);
  for (int k = 0; k < orders; ++k) tolerances(k) = 1e-10 * std::pow(10.0, k);
  return tolerances;
}

// The nested baselines at compile-time depth r, checked then registered.
template <int r>
void register_nested(const std::shared_ptr<Problem>& problem, int max_depth) {
  if constexpr (r > 0) register_nested<r - 1>(problem, max_depth);
  if (r > max_depth) return;
  const std::string& m = problem->name;
  auto motion = std::make_shared<ad::MotionDerivatives>();
  auto out = std::make_shared<Eigen::MatrixXd>();
  ad::nested_inverse_dynamics<r>(*problem->scalar, problem->state, problem->rates, *motion, *out);
  if (r == max_depth) check_agreement(m + " nested RNEA against H-GRNE", order_errors(*out, problem->forces.leftCols(r + 1)), roundoff(r + 1));
  ad::nested_forward_dynamics<r>(*problem->scalar, problem->state, problem->forces, problem->rates, *motion, *out);
  if (r == max_depth)
    check_agreement(m + " nested ABA of H-GRNE's forces along the motion", order_errors(*out, problem->rates.leftCols(r + 1)),
                    geometric(r + 1));
  add(key(m, "nested-RNEA", "AD", r), [=] {
    ad::nested_inverse_dynamics<r>(*problem->scalar, problem->state, problem->rates, *motion, *out);
    benchmark::DoNotOptimize(out->data());
  }, 0.02);
  add(key(m, "nested-ABA", "AD", r), [=] {
    ad::nested_forward_dynamics<r>(*problem->scalar, problem->state, problem->forces, problem->rates, *motion, *out);
    benchmark::DoNotOptimize(out->data());
  }, 0.02);
}

#ifdef LIEMBS_HAVE_ADOLC
void register_adolc(const std::shared_ptr<Problem>& problem, short tag) {
  auto rnea = std::make_shared<ad::AdolcInverseDynamics>(problem->scalar, tag);
  auto aba = std::make_shared<ad::AdolcForwardDynamics>(problem->scalar, static_cast<short>(tag + 1));
  const std::string& m = problem->name;
  std::printf("%s: ADOL-C tapes of %zu (RNEA) and %zu (ABA) operations\n", m.c_str(), rnea->tape_operations(),
              aba->tape_operations());
  for (int r = 0; r <= max_order; ++r) {
    auto rates = std::make_shared<Eigen::MatrixXd>(problem->rates.leftCols(r + 1));
    auto forces = std::make_shared<Eigen::MatrixXd>(problem->forces.leftCols(r + 1));
    auto out = std::make_shared<Eigen::MatrixXd>();
    if (r == max_order) {
      rnea->inverse_dynamics(problem->state, *rates, *out);
      check_agreement(m + " ADOL-C RNEA against H-GRNE", order_errors(*out, *forces), roundoff(r + 1));
      // Forward dynamics of H-GRNE's forces against the rates they came from: ADOL-C must be
      // as accurate as H-GABI (within 100 times) at every order.
      aba->forward_dynamics(problem->state, *forces, *out);
      const Eigen::VectorXd gabi = order_errors(problem->forward_rates, *rates);
      check_agreement(m + " H-GABI round trip", gabi, Eigen::VectorXd::Constant(r + 1, 1e300));
      check_agreement(m + " ADOL-C ABA round trip", order_errors(*out, *rates),
                      (100.0 * gabi).cwiseMax(1e-10));
      check_agreement(m + " ADOL-C ABA against H-GABI", order_errors(*out, problem->forward_rates),
                      Eigen::VectorXd::Constant(r + 1, 1e300));
    }
    add(key(m, "ADOL-C-RNEA", "AD", r), [=] {
      rnea->inverse_dynamics(problem->state, *rates, *out);
      benchmark::DoNotOptimize(out->data());
    });
    add(key(m, "ADOL-C-ABA", "AD", r), [=] {
      aba->forward_dynamics(problem->state, *forces, *out);
      benchmark::DoNotOptimize(out->data());
    });
  }
}
#endif

// Median CPU time per benchmark name (the aggregate of --benchmark_repetitions; a single
// run's time without repetitions).
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") times[run.run_name.function_name] = run.GetAdjustedCPUTime();
      else if (run.run_type == Run::RT_Iteration) times.emplace(run.run_name.function_name, run.GetAdjustedCPUTime());
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double get(const std::string& name) const {
    const auto found = times.find(name);
    return found == times.end() ? std::nan("") : found->second;
  }
  std::map<std::string, double> times;  // nanoseconds
};

// Least squares fit of y on the columns of A; returns the coefficients and R^2.
std::pair<Eigen::VectorXd, double> fit(const Eigen::MatrixXd& A, const Eigen::VectorXd& y) {
  const Eigen::VectorXd c = A.colPivHouseholderQr().solve(y);
  const double residual = (A * c - y).squaredNorm(), total = (y.array() - y.mean()).square().sum();
  return {c, 1.0 - residual / total};
}

// A table cell: "-" for a benchmark that did not run (filtered out, no ADOL-C).
std::string cell(double value, const char* format) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Whether every value is a number: a fit over benchmarks that did not all run is left out.
bool complete(const Eigen::VectorXd& values) { return values.allFinite(); }

const double paper_grne[] = {2.326, 3.078, 2.867, 4.355, 5.960, 8.171};  // us, Fig. 3, r = 0..5
const double paper_gabi[] = {4.106, 4.802, 6.486, 6.461, 8.589, 11.085};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> sweep_bodies{1, 4, 20, 50, 100, 199};  // N = 6, 21, 101, 251, 501, 996
  const std::vector<int> sweep_orders{0, 2, 5};
  std::vector<int> all_orders;
  for (int r = 0; r <= max_order; ++r) all_orders.push_back(r);
  std::vector<std::shared_ptr<Problem>> sweep;
  try {
    Registry& registry = bench::plugin_registry();
    const auto options = ConfigDocument::from_string("", "options");
    std::string aerial_urdf;
    {
      std::ifstream file(LIEMBS_BENCH_MODEL_DIR "/urdf/aerial-manipulator.urdf");
      aerial_urdf.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
      if (aerial_urdf.empty()) throw Error("cannot read " LIEMBS_BENCH_MODEL_DIR "/urdf/aerial-manipulator.urdf");
    }
    auto aerial = std::make_shared<Problem>(make_problem("aerial", aerial_urdf, registry));
    for (const int bodies : sweep_bodies)
      sweep.push_back(std::make_shared<Problem>(
          make_problem("N" + std::to_string(1 + 5 * bodies), bench::branched_manipulator_urdf(bodies), registry)));
    for (const char* name : representation_names) {
      auto representation = registry.create<Representation>(name, options->root());
      register_representation(aerial, *representation, name, all_orders, true, true);
      if (std::string(name) == table_representation)
        for (const auto& problem : sweep)
          register_representation(problem, *representation, name, problem->name == "N101" ? all_orders : sweep_orders, false,
                                  problem->name == "N101");
    }
    register_nested<8>(aerial, 8);
    for (const auto& problem : sweep)
      if (problem->name == "N101") register_nested<8>(problem, 5);
#ifdef LIEMBS_HAVE_ADOLC
    register_adolc(aerial, 1);
    for (const auto& problem : sweep)
      if (problem->name == "N101") register_adolc(problem, 3);
#endif
  } catch (const std::exception& error) {
    std::cerr << "bench-higher-order: " << error.what() << "\n";
    benchmark::ClearRegisteredBenchmarks();
    return 1;
  }
  int count = argc;
  benchmark::Initialize(&count, argv);
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto t = [&](const std::string& name) { return reporter.get(name) / 1000.0; };  // us
  if (reporter.times.empty()) {  // nothing ran (--benchmark_list_tests, a filter that matches nothing)
    benchmark::ClearRegisteredBenchmarks();
    return 0;
  }

  std::printf("\nOrder 0 against RNEA and ABA (aerial manipulator, us):\n\n"
              "| representation | RNEA | H-GRNE r=0 | ratio | ABA | H-GABI r=0 | ratio |\n|---|---|---|---|---|---|---|\n");
  for (const char* who : representation_names) {
    const double rnea = t(key("aerial", "RNEA", who)), aba = t(key("aerial", "ABA", who));
    const double grne = t(key("aerial", "H-GRNE", who, 0)), gabi = t(key("aerial", "H-GABI", who, 0));
    if (std::isnan(rnea) && std::isnan(grne) && std::isnan(aba) && std::isnan(gabi)) continue;
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", who, cell(rnea, "%.3f").c_str(), cell(grne, "%.3f").c_str(),
                cell(grne / rnea, "%.2f").c_str(), cell(aba, "%.3f").c_str(), cell(gabi, "%.3f").c_str(), cell(gabi / aba, "%.2f").c_str());
  }

  std::printf("\nAerial manipulator (N = 7, 12 DoF), us per call, body-fixed representation; paper: Fig. 3 (4.7 GHz):\n\n"
              "| r | H-GRNE | /r=0 | H-GABI | /r=0 | H-GHYB | ADOL-C RNEA | /H-GRNE | ADOL-C ABA | /H-GABI | nested RNEA "
              "| nested ABA | paper H-GRNE | paper H-GABI |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const double grne0 = t(key("aerial", "H-GRNE", table_representation, 0)), gabi0 = t(key("aerial", "H-GABI", table_representation, 0));
  for (int r = 0; r <= max_order; ++r) {
    const double grne = t(key("aerial", "H-GRNE", table_representation, r)), gabi = t(key("aerial", "H-GABI", table_representation, r));
    const double ad_rnea = t(key("aerial", "ADOL-C-RNEA", "AD", r)), ad_aba = t(key("aerial", "ADOL-C-ABA", "AD", r));
    char paper[64] = "- | -";
    if (r <= 5) std::snprintf(paper, sizeof paper, "%.3f | %.3f", paper_grne[r], paper_gabi[r]);
    const double hybrid = t(key("aerial", "H-GHYB", table_representation, r));
    if (std::isnan(grne) && std::isnan(gabi) && std::isnan(hybrid) && std::isnan(ad_rnea) && std::isnan(ad_aba)) continue;
    std::printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r, cell(grne, "%.3f").c_str(),
                cell(grne / grne0, "%.2f").c_str(), cell(gabi, "%.3f").c_str(), cell(gabi / gabi0, "%.2f").c_str(),
                cell(hybrid, "%.3f").c_str(), cell(ad_rnea, "%.2f").c_str(), cell(ad_rnea / grne, "%.1f").c_str(),
                cell(ad_aba, "%.2f").c_str(), cell(ad_aba / gabi, "%.1f").c_str(),
                cell(t(key("aerial", "nested-RNEA", "AD", r)), "%.2f").c_str(), cell(t(key("aerial", "nested-ABA", "AD", r)), "%.2f").c_str(),
                paper);
  }

  std::printf("\nTable 4 sweep, N = 1 + 5 N_BOD, us per call (body-fixed):\n\n"
              "| N | H-GRNE r=0 | r=2 | r=5 | H-GABI r=0 | r=2 | r=5 |\n|---|---|---|---|---|---|---|\n");
  for (const auto& problem : sweep) {
    std::string row;
    bool ran = false;
    for (const char* kernel : {"H-GRNE", "H-GABI"})
      for (const int r : sweep_orders) {
        const double time = t(key(problem->name, kernel, table_representation, r));
        ran = ran || !std::isnan(time);
        row.append(" ").append(cell(time, "%.2f")).append(" |");
      }
    if (ran) std::printf("| %d |%s\n", problem->tree->dof() + 1, row.c_str());
  }
  std::printf("\nLinear fit in N at fixed r, t = a + b N (body-fixed): a in us, b in ns per body, and R^2:\n\n"
              "| kernel | r | a (us) | b (ns/body) | R^2 |\n|---|---|---|---|---|\n");
  for (const char* kernel : {"H-GRNE", "H-GABI"})
    for (const int r : sweep_orders) {
      Eigen::MatrixXd A(static_cast<int>(sweep.size()), 2);
      Eigen::VectorXd y(A.rows());
      for (int i = 0; i < A.rows(); ++i) {
        A(i, 0) = 1.0, A(i, 1) = sweep[static_cast<std::size_t>(i)]->tree->dof() + 1.0;
        y(i) = t(key(sweep[static_cast<std::size_t>(i)]->name, kernel, table_representation, r));
      }
      if (!complete(y)) continue;
      const auto [c, r2] = fit(A, y);
      std::printf("| %s | %d | %.2f | %.1f | %.5f |\n", kernel, r, c(0), 1000.0 * c(1), r2);
    }
  std::printf("\nOrders at N = 101, us per call (body-fixed), quadratic fit t = c0 + c1 r + c2 r^2 over r = 0..10:\n\n"
              "| r | H-GRNE | H-GABI | ADOL-C RNEA | /H-GRNE | ADOL-C ABA | /H-GABI | nested RNEA | nested ABA |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  for (int r = 0; r <= max_order; ++r) {
    const double grne = t(key("N101", "H-GRNE", table_representation, r)), gabi = t(key("N101", "H-GABI", table_representation, r));
    const double ad_rnea = t(key("N101", "ADOL-C-RNEA", "AD", r)), ad_aba = t(key("N101", "ADOL-C-ABA", "AD", r));
    if (std::isnan(grne) && std::isnan(gabi) && std::isnan(ad_rnea) && std::isnan(ad_aba)) continue;
    std::printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", r, cell(grne, "%.2f").c_str(), cell(gabi, "%.2f").c_str(),
                cell(ad_rnea, "%.1f").c_str(), cell(ad_rnea / grne, "%.1f").c_str(), cell(ad_aba, "%.1f").c_str(),
                cell(ad_aba / gabi, "%.1f").c_str(), cell(t(key("N101", "nested-RNEA", "AD", r)), "%.1f").c_str(),
                cell(t(key("N101", "nested-ABA", "AD", r)), "%.1f").c_str());
  }
  std::printf("\n| kernel | c0 (us) | c1 (us) | c2 (us) | R^2 quadratic | R^2 linear |\n|---|---|---|---|---|---|\n");
  for (const std::string model : {"N101", "aerial"})
    for (const char* kernel : {"H-GRNE", "H-GABI"}) {
      Eigen::MatrixXd A(max_order + 1, 3);
      Eigen::VectorXd y(max_order + 1);
      for (int r = 0; r <= max_order; ++r) A(r, 0) = 1.0, A(r, 1) = r, A(r, 2) = r * r, y(r) = t(key(model, kernel, table_representation, r));
      if (!complete(y)) continue;
      const auto [c, r2] = fit(A, y);
      const auto [c_linear, r2_linear] = fit(A.leftCols(2), y);
      std::printf("| %s %s | %.3f | %.3f | %.4f | %.5f | %.5f |\n", model.c_str(), kernel, c(0), c(1), c(2), r2, r2_linear);
    }
  // The benchmarks hold objects of the plugins (the bound algorithms in their lambdas):
  // release them here, explicitly, before the plugin registry (a static) unloads the plugins.
  benchmark::ClearRegisteredBenchmarks();
  return 0;
}
