// Analytic derivatives of the equations of motion (derivative_algorithms.hpp) against the
// same model's RNEA and ABA, against central finite differences of LieMBS's own RNEA and
// ABA (4 n kernel calls per pair of matrices), in every twist representation, and, when
// ADOL-C is found, against its vector forward mode (fov_forward, 3 nv directions: the same
// three matrices) on a taped scalar RNEA/ABA (benchmarks/ad-baseline), in one run; a ratio
// table at the end (docs/derivatives.md, "Benchmark"). The ADOL-C Jacobians are checked
// against the analytic ones before anything is timed (and in test-ad-baseline).
//
//   bench-derivatives [Google Benchmark options]
//
// Models: the iiwa-like arm, a chain of 24 revolute joints and the floating torso with four
// limbs of six joints.
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_derivatives.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/dynamics/tree_geometric_derivatives.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/plugin/representation.hpp>

#include <support/model_generators.hpp>

#include "bench_support.hpp"

#ifdef LIEMBS_HAVE_ADOLC
#include <adolc_taylor.hpp>
#endif

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>

using namespace liembs;
using liembs::bench::random_sample;
using liembs::bench::RecordingReporter;
using liembs::bench::Sample;

namespace {

constexpr const char* representation_names[] = {"body-fixed", "spatial", "hybrid", "mixed"};

// Central differences of a kernel y = f(state) along every coordinate and every velocity,
// the base along C exp(xi), into by_q and by_u: what the analytic derivatives replace.
template <class Kernel>
void central_differences(const KinematicTree& tree, const TreeState& state, Kernel&& f, Eigen::MatrixXd& by_q,
                         Eigen::MatrixXd& by_u) {
  constexpr double h = 1e-6;
  const int nv = tree.velocity_dimension(), offset = tree.floating_base ? 6 : 0;
  by_q.resize(nv, nv);
  by_u.resize(nv, nv);
  TreeState moved = state;
  Eigen::VectorXd plus, minus;
  for (int c = 0; c < nv; ++c) {
    for (const double sign : {1.0, -1.0}) {
      moved = state;
      if (c < offset) moved.base = se3::compose(state.base, se3::exp(Vec6(sign * h * Vec6::Unit(c))));
      else moved.q(c - offset) += sign * h;
      f(moved, sign > 0 ? plus : minus);
    }
    by_q.col(c) = (plus - minus) / (2 * h);
    for (const double sign : {1.0, -1.0}) {
      moved = state;
      if (c < offset) moved.base_twist(c) += sign * h;
      else moved.qd(c - offset) += sign * h;
      f(moved, sign > 0 ? plus : minus);
    }
    by_u.col(c) = (plus - minus) / (2 * h);
  }
}

// Every benchmark alternates between two states.
using Samples = std::array<Sample, 2>;

// "model/KERNEL/representation" for RNEA, ABA, dID, dFD, FD-dID, FD-dFD and dGeom (the
// derivatives by the joints' references and screws, geometric_derivative_algorithms.hpp).
void register_model(const std::string& model, const std::string& who, std::shared_ptr<TreeDynamics> dynamics,
                    std::shared_ptr<TreeDerivatives> derivatives, std::shared_ptr<TreeGeometricDerivatives> geometric,
                    std::shared_ptr<Samples> samples) {
  const auto add = [&](const char* kernel, auto body) {
    benchmark::RegisterBenchmark((model + "/" + kernel + "/" + who).c_str(), [body, samples](benchmark::State& bench) mutable {
      std::size_t k = 0;
      for (auto _ : bench) body((*samples)[k++ & 1]);
    });
  };
  add("RNEA", [dynamics, out = Eigen::VectorXd()](const Sample& s) mutable {
    dynamics->inverse_dynamics(s.state, s.acceleration, out);
    benchmark::DoNotOptimize(out.data());
  });
  add("ABA", [dynamics, out = Eigen::VectorXd()](const Sample& s) mutable {
    dynamics->forward_dynamics(s.state, s.force, out);
    benchmark::DoNotOptimize(out.data());
  });
  add("dID", [derivatives, out = InverseDynamicsDerivatives()](const Sample& s) mutable {
    derivatives->inverse_dynamics_derivatives(s.state, s.acceleration, out);
    benchmark::DoNotOptimize(out.force_by_q.data());
  });
  add("dFD", [derivatives, out = ForwardDynamicsDerivatives()](const Sample& s) mutable {
    derivatives->forward_dynamics_derivatives(s.state, s.force, out);
    benchmark::DoNotOptimize(out.acceleration_by_q.data());
  });
  add("dGeom", [geometric, out = GeometricDerivatives()](const Sample& s) mutable {
    geometric->inverse_dynamics_geometric_derivatives(s.state, s.acceleration, out);
    benchmark::DoNotOptimize(out.force_by_screw.data());
  });
  const KinematicTree* tree = &dynamics->tree();
  add("FD-dID", [dynamics, tree, by_q = Eigen::MatrixXd(), by_u = Eigen::MatrixXd()](const Sample& s) mutable {
    central_differences(*tree, s.state, [&](const TreeState& x, Eigen::VectorXd& y) { dynamics->inverse_dynamics(x, s.acceleration, y); },
                        by_q, by_u);
    benchmark::DoNotOptimize(by_q.data());
  });
  add("FD-dFD", [dynamics, tree, by_q = Eigen::MatrixXd(), by_u = Eigen::MatrixXd()](const Sample& s) mutable {
    central_differences(*tree, s.state, [&](const TreeState& x, Eigen::VectorXd& y) { dynamics->forward_dynamics(x, s.force, y); },
                        by_q, by_u);
    benchmark::DoNotOptimize(by_q.data());
  });
}

struct BenchModel {
  std::string name, urdf;
  bool floating = false;
};

#ifdef LIEMBS_HAVE_ADOLC
// "model/ADOLC-dID/adolc" and "model/ADOLC-dFD/adolc", after checking them against the
// analytic derivatives on both samples (a disagreement stops the benchmark).
void register_adolc(const std::string& model, const std::shared_ptr<const KinematicTree>& tree, TreeDerivatives& analytic,
                    std::shared_ptr<Samples> samples, short tag) {
  auto scalar = std::make_shared<const ad_baseline::ScalarTree>(*tree);
  auto rnea = std::make_shared<ad_baseline::AdolcInverseDynamics>(scalar, tag);
  auto aba = std::make_shared<ad_baseline::AdolcForwardDynamics>(scalar, static_cast<short>(tag + 1));
  const auto error = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
  };
  for (const Sample& s : *samples) {
    InverseDynamicsDerivatives ad_id, id;
    ForwardDynamicsDerivatives ad_fd, fd;
    rnea->derivatives(s.state, s.acceleration, ad_id);
    aba->derivatives(s.state, s.force, ad_fd);
    analytic.inverse_dynamics_derivatives(s.state, s.acceleration, id);
    analytic.forward_dynamics_derivatives(s.state, s.force, fd);
    const double worst = std::max({error(ad_id.force_by_q, id.force_by_q), error(ad_id.force_by_u, id.force_by_u),
                                   error(ad_id.mass, id.mass), error(ad_fd.acceleration_by_q, fd.acceleration_by_q),
                                   error(ad_fd.acceleration_by_u, fd.acceleration_by_u),
                                   error(ad_fd.acceleration_by_force, fd.acceleration_by_force)});
    if (!(worst < 1e-8))
      throw Error("ADOL-C's Jacobians differ from the analytic derivatives on " + model + " by " + std::to_string(worst));
  }
  const auto add = [&](const char* kernel, auto body) {
    benchmark::RegisterBenchmark((model + "/" + kernel + "/adolc").c_str(), [body, samples](benchmark::State& bench) mutable {
      std::size_t k = 0;
      for (auto _ : bench) body((*samples)[k++ & 1]);
    });
  };
  add("ADOLC-dID", [rnea, out = InverseDynamicsDerivatives()](const Sample& s) mutable {
    rnea->derivatives(s.state, s.acceleration, out);
    benchmark::DoNotOptimize(out.force_by_q.data());
  });
  add("ADOLC-dFD", [aba, out = ForwardDynamicsDerivatives()](const Sample& s) mutable {
    aba->derivatives(s.state, s.force, out);
    benchmark::DoNotOptimize(out.acceleration_by_q.data());
  });
}
#endif

}  // namespace

int main(int argc, char** argv) {
  using namespace liembs::test_models;
  Registry registry;
  const std::vector<BenchModel> models{{"iiwa", urdf_model("iiwa-like-arm.urdf"), false},
                                       {"chain24", random_chain_urdf(24, 7, true), false},
                                       {"torso4x6", floating_torso_urdf(3, true), true}};
  try {
    bench::add_plugin_search_path(registry);  // LIEMBS_PLUGIN_PATH first, then the build tree
    registry.load();
    const auto no_options = ConfigDocument::from_string("", "options");
    short tag = 1;
    for (const auto& bench_model : models) {
      Model model = import_urdf_string(bench_model.urdf, bench_model.name, bench_model.floating);
      model.gravity = Vec3(0, 0, -9.81);
      auto tree = std::make_shared<const KinematicTree>(compile_tree(model));
      auto samples = std::make_shared<Samples>(Samples{random_sample(*tree, 11), random_sample(*tree, 12)});
      for (const char* name : representation_names) {
        auto representation = registry.create<Representation>(name, no_options->root());
        register_model(bench_model.name, name, representation->bind_tree(tree), representation->bind_derivatives(tree),
                       representation->bind_geometric_derivatives(tree), samples);
      }
#ifdef LIEMBS_HAVE_ADOLC
      auto spatial = registry.create<Representation>("spatial", no_options->root())->bind_derivatives(tree);
      register_adolc(bench_model.name, tree, *spatial, samples, tag);
      tag = static_cast<short>(tag + 2);
#endif
    }
  } catch (const std::exception& error) {
    std::cerr << "bench-derivatives: " << error.what() << "\n";
    return 1;
  }
  int count = argc;
  benchmark::Initialize(&count, argv);
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // Per model: the best representation of each kernel, and the ratios of the bars;
  // a cell whose benchmarks did not run (filtered out, no ADOL-C) prints as "-", and a model
  // without dID or dFD times is left out (nothing is printed if nothing ran).
  const auto best = [&](const std::string& model, const char* kernel, std::string* who = nullptr) {
    double time = std::nan("");
    for (const char* name : representation_names) {
      const double t = reporter.time(model + "/" + kernel + "/" + name);
      if (!std::isnan(t) && !(t >= time)) {
        time = t;
        if (who) *who = name;
      }
    }
    return time;
  };
  const auto adolc = [&](const std::string& model, const char* kernel) { return reporter.time(model + "/" + kernel + "/adolc"); };
  const auto cell = [](double value, int precision) {
    if (std::isnan(value)) return std::string("-");
    std::ostringstream out;
    out << std::fixed << std::setprecision(precision) << value;
    return out.str();
  };
  bool header = false;
  for (const auto& bench_model : models) {
    const std::string& m = bench_model.name;
    std::string id_who, fd_who;
    const double id = best(m, "dID", &id_who), fd = best(m, "dFD", &fd_who);
    if (std::isnan(id) && std::isnan(fd)) continue;
    if (!header) {
      std::cout << "\n| model | dID ns (best) | dID / RNEA | dFD ns (best) | dFD / ABA | FD of RNEA / dID | FD of ABA / dFD "
                   "| ADOL-C dID / dID | ADOL-C dFD / dFD | dGeom / RNEA |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n";
      header = true;
    }
    std::cout << "| " << m << " | " << cell(id, 0) << (id_who.empty() ? "" : " (" + id_who + ")") << " | "
              << cell(id / best(m, "RNEA"), 2) << " | " << cell(fd, 0) << (fd_who.empty() ? "" : " (" + fd_who + ")")
              << " | " << cell(fd / best(m, "ABA"), 2) << " | " << cell(best(m, "FD-dID") / id, 1) << " | "
              << cell(best(m, "FD-dFD") / fd, 1) << " | " << cell(adolc(m, "ADOLC-dID") / id, 1) << " | "
              << cell(adolc(m, "ADOLC-dFD") / fd, 1) << " | " << cell(best(m, "dGeom") / best(m, "RNEA"), 1) << " |\n";
  }
  // The benchmarks hold objects of the plugins: release them while the registry still has
  // the plugins loaded (they used to be destroyed at exit, after it, and crash).
  benchmark::ClearRegisteredBenchmarks();
  return 0;
}
