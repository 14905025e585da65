// Tree dynamics benchmarks: RNEA, ABA, CRBA, CRBA + Cholesky and body kinematics in every twist
// representation, the first four side by side with MuJoCo, KDL and DART on the same models in the same
// run, and a summary table of ratios at the end (README.md, "Benchmarks").
//
//   bench-tree-dynamics [--model FILE.urdf [--floating]] [Google Benchmark options]
//
// Without --model: the iiwa-like arm, chains of 6..96 revolute joints with random axes and
// full inertia tensors, and a floating torso with 4 limbs of 6 joints.
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/elemental_mass_matrix.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/recursive_algorithms.hpp>
#include <liembs/loaders/urdf_import.hpp>
#include <liembs/host/registry.hpp>

#include <peers/peer.hpp>
#include "bench_support.hpp"
#include <support/model_generators.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstring>
#include <functional>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <algorithm>
#include <map>
#include <random>
#include <sstream>

using namespace liembs;
using namespace liembs::test_models;
using liembs::bench::random_sample;
using liembs::bench::RecordingReporter;
using liembs::bench::Sample;

namespace {

struct BenchModel {
  std::string name;
  std::string urdf;
  bool floating = false;
  int joint_dof = 0;  // set when the model is compiled
};

const char* algorithms[] = {"RNEA", "ABA", "CRBA", "CRBA+Cholesky", "kinematics"};

// Registers "model/ALGORITHM/who" for the four algorithms.
// Every benchmark alternates between two states, so that no library can return a result
// cached for an unchanged state (DART skips recomputing when its positions did not change).
using Samples = std::array<Sample, 2>;

template <class Dynamics>
void register_liembs(const std::string& model, const std::string& who, std::shared_ptr<Dynamics> dynamics,
                     std::shared_ptr<Samples> samples) {
  const auto name = [&](const char* algorithm) { return model + "/" + algorithm + "/" + who; };
  benchmark::RegisterBenchmark(name("RNEA").c_str(), [dynamics, samples](benchmark::State& bench) {
    Eigen::VectorXd force;
    std::size_t k = 0;
    for (auto _ : bench) {
      const Sample& sample = (*samples)[k++ & 1];
      dynamics->inverse_dynamics(sample.state, sample.acceleration, force);
      benchmark::DoNotOptimize(force.data());
    }
  });
  benchmark::RegisterBenchmark(name("ABA").c_str(), [dynamics, samples](benchmark::State& bench) {
    Eigen::VectorXd acceleration;
    std::size_t k = 0;
    for (auto _ : bench) {
      const Sample& sample = (*samples)[k++ & 1];
      dynamics->forward_dynamics(sample.state, sample.force, acceleration);
      benchmark::DoNotOptimize(acceleration.data());
    }
  });
  benchmark::RegisterBenchmark(name("CRBA").c_str(), [dynamics, samples](benchmark::State& bench) {
    Eigen::MatrixXd mass;
    std::size_t k = 0;
    for (auto _ : bench) {
      dynamics->mass_matrix((*samples)[k++ & 1].state, mass);
      benchmark::DoNotOptimize(mass.data());
    }
  });
  // Every body's pose, twist and acceleration, as runs record them each sample (zero qdd).
  benchmark::RegisterBenchmark(name("kinematics").c_str(), [dynamics, samples](benchmark::State& bench) {
    BodyKinematics kinematics;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero((*samples)[0].acceleration.size());
    std::size_t k = 0;
    for (auto _ : bench) {
      dynamics->body_kinematics((*samples)[k++ & 1].state, zero, kinematics);
      benchmark::DoNotOptimize(kinematics.poses.data());
    }
  });
  benchmark::RegisterBenchmark(name("CRBA+Cholesky").c_str(), [dynamics, samples](benchmark::State& bench) {
    Eigen::VectorXd acceleration;
    std::size_t k = 0;
    for (auto _ : bench) {
      const Sample& sample = (*samples)[k++ & 1];
      dynamics->forward_dynamics_cholesky(sample.state, sample.force, acceleration);
      benchmark::DoNotOptimize(acceleration.data());
    }
  });
}

// One state in a peer's coordinates.
struct PeerSample {
  Eigen::VectorXd q, qd, qdd, tau;
};

PeerSample to_peer(const peers::PeerModel& peer, const KinematicTree& tree, const Sample& sample) {
  Eigen::VectorXd velocities(tree.velocity_dimension());
  if (tree.floating_base) velocities << sample.state.base_twist, sample.state.qd;
  else velocities = sample.state.qd;
  PeerSample out;
  out.q = peers::peer_positions(peer, sample.state.base.R, sample.state.base.r, sample.state.q);
  out.qd = peers::peer_velocities(peer, out.q, velocities);
  out.qdd = peers::peer_accelerations(peer, out.q, velocities, sample.acceleration);
  out.tau = peers::peer_forces(peer, out.q, sample.force);
  return out;
}

void register_peer(const std::string& model, std::shared_ptr<peers::PeerModel> peer, const KinematicTree& tree,
                   const Samples& samples) {
  auto states = std::make_shared<std::array<PeerSample, 2>>(
      std::array<PeerSample, 2>{to_peer(*peer, tree, samples[0]), to_peer(*peer, tree, samples[1])});
  benchmark::RegisterBenchmark((model + "/RNEA/" + peer->name()).c_str(), [peer, states](benchmark::State& bench) {
    Eigen::VectorXd out;
    std::size_t k = 0;
    for (auto _ : bench) {
      const PeerSample& s = (*states)[k++ & 1];
      peer->inverse_dynamics(s.q, s.qd, s.qdd, out);
      benchmark::DoNotOptimize(out.data());
    }
  });
  benchmark::RegisterBenchmark((model + "/ABA/" + peer->name()).c_str(), [peer, states](benchmark::State& bench) {
    Eigen::VectorXd out;
    std::size_t k = 0;
    for (auto _ : bench) {
      const PeerSample& s = (*states)[k++ & 1];
      peer->forward_dynamics(s.q, s.qd, s.tau, out);
      benchmark::DoNotOptimize(out.data());
    }
  });
  benchmark::RegisterBenchmark((model + "/CRBA/" + peer->name()).c_str(), [peer, states](benchmark::State& bench) {
    Eigen::MatrixXd out;
    std::size_t k = 0;
    for (auto _ : bench) {
      peer->mass_matrix((*states)[k++ & 1].q, out);
      benchmark::DoNotOptimize(out.data());
    }
  });
}

template <class Policy>
std::shared_ptr<RecursiveDynamics<Policy>> direct_kernel(std::shared_ptr<const KinematicTree> tree) {
  return std::make_shared<RecursiveDynamics<Policy>>(std::move(tree));
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the model file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<BenchModel> models;
  std::vector<char*> arguments{argv[0]};
  bool floating = false;
  std::string model_file;
  // Outlives every benchmark: the representation objects' code lives in the plugin libraries.
  static Registry registry;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) model_file = argv[++i];
    else if (std::strcmp(argv[i], "--floating") == 0) floating = true;
    else arguments.push_back(argv[i]);
  }
  try {
    if (!model_file.empty()) {
      models.push_back({std::filesystem::path(model_file).stem().string(), read_text(model_file), floating});
    } else {
      models.push_back({"iiwa", urdf_model("iiwa-like-arm.urdf"), false});
      for (int n : {6, 12, 24, 48, 96}) models.push_back({"chain" + std::to_string(n), random_chain_urdf(n, 7, true), false});
      models.push_back({"torso4x6", floating_torso_urdf(3, true), true});
    }

    bench::add_plugin_search_path(registry);  // LIEMBS_PLUGIN_PATH first, then the build tree
    registry.load();
    if (!Registry::environment_search_path().empty())
      for (const auto& info : registry.components())
        if (info.kind == Kind::representation) std::cerr << "note: " << info.name << " from " << info.library << "\n";
    const auto no_options = ConfigDocument::from_string("", "options");
    const Vec3 gravity(0, 0, -9.81);

    for (auto& bench_model : models) {
      Model model = import_urdf_string(bench_model.urdf, bench_model.name, bench_model.floating);
      model.gravity = gravity;
      auto tree = std::make_shared<const KinematicTree>(compile_tree(model));
      bench_model.joint_dof = tree->dof();
      auto samples = std::make_shared<Samples>(Samples{random_sample(*tree, 11), random_sample(*tree, 12)});
      // Through the plugin registry, as runs use them.
      for (const char* name : {"body-fixed", "spatial", "hybrid", "mixed"}) {
        auto representation = registry.create<Representation>(name, no_options->root());
        std::shared_ptr<TreeDynamics> dynamics = representation->bind_tree(tree);
        register_liembs(bench_model.name, name, dynamics, samples);
      }
      // Direct, devirtualized kernel calls (for the plugin-overhead comparison).
      register_liembs(bench_model.name, "direct-body-fixed", direct_kernel<representations::BodyFixed>(tree), samples);
      // The CRBA on elemental frames on every model, whether body-fixed uses it there or not
      // (ElementalMassMatrix::preferred: where its walk gets too long for the world-frame one).
      {
        auto elemental = std::make_shared<ElementalMassMatrix>(align_node_frames(*tree));
        if (elemental->usable())
          benchmark::RegisterBenchmark((bench_model.name + "/CRBA/elemental-frames").c_str(),
                                       [elemental, samples, nv = tree->velocity_dimension()](benchmark::State& bench) {
                                         Eigen::MatrixXd mass = Eigen::MatrixXd::Zero(nv, nv);
                                         std::size_t k = 0;
                                         for (auto _ : bench) {
                                           elemental->compute((*samples)[k++ & 1].state.q, mass);
                                           benchmark::DoNotOptimize(mass.data());
                                         }
                                       });
      }
      // Peers on the same model.
      // A peer that cannot load a model (e.g. MuJoCo's XML nesting limit on deep chains) is
      // reported and left out of that model's rows.
      std::vector<std::function<std::unique_ptr<peers::PeerModel>()>> makers{
          [&] { return peers::make_mujoco(bench_model.urdf, gravity, bench_model.floating); },
          [&] { return peers::make_dart(bench_model.urdf, gravity, bench_model.floating); }};
      if (!bench_model.floating) makers.push_back([&] { return peers::make_kdl(bench_model.urdf, gravity); });
      for (auto& make : makers) {
        try {
          std::shared_ptr<peers::PeerModel> peer = make();
          register_peer(bench_model.name, peer, *tree, *samples);
        } catch (const std::exception& error) {
          std::cerr << "note: " << bench_model.name << ": peer skipped: " << error.what() << "\n";
        }
      }
    }
  } catch (const std::exception& error) {
    std::cerr << "bench-tree-dynamics: " << error.what() << "\n";
    return 1;
  }
  int count = static_cast<int>(arguments.size());
  benchmark::Initialize(&count, arguments.data());
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (reporter.empty()) return 0;  // nothing ran (--benchmark_list_tests, a filter that matches nothing)

  // Ratio table: peer time / best LieMBS representation time (> 1: LieMBS is faster).
  std::cout << "\n| model | algorithm | best representation | ns | ns / joint | slowest / best | registry / direct |";
  for (const char* peer : {"MuJoCo", "DART", "KDL"}) std::cout << ' ' << peer << " / best |";
  std::cout << "\n|---|---|---|---|---|---|---|---|---|---|\n";
  // Best LieMBS time per (model, algorithm), for the linearity table below.
  std::map<std::string, double> best_time;
  for (const auto& bench_model : models) {
    for (const char* algorithm : algorithms) {
      const std::string base = bench_model.name + "/" + algorithm + "/";
      std::string best_name;
      double best = 1e300, slowest = 0;
      for (const char* name : {"body-fixed", "spatial", "hybrid", "mixed"}) {
        const double time = reporter.time(base + name);
        if (std::isnan(time)) continue;
        if (time < best) {
          best = time;
          best_name = name;
        }
        slowest = std::max(slowest, time);
      }
      if (best_name.empty()) continue;
      best_time[base] = best;
      std::cout << "| " << bench_model.name << " | " << algorithm << " | " << best_name << " | " << std::fixed
                << std::setprecision(0) << best << " | " << std::setprecision(1)
                << best / std::max(bench_model.joint_dof, 1) << " | " << std::setprecision(2) << slowest / best
                << " | ";
      if (reporter.has(base + "body-fixed") && reporter.has(base + "direct-body-fixed"))
        std::cout << reporter.time(base + "body-fixed") / reporter.time(base + "direct-body-fixed");
      std::cout << " |";
      for (const char* peer : {"MuJoCo", "DART", "KDL"}) {
        if (reporter.has(base + peer)) std::cout << ' ' << reporter.time(base + peer) / best;
        std::cout << " |";
      }
      std::cout << "\n";
    }
  }

  // Linearity: best time per joint on the chains (constant if the cost is linear).
  std::vector<const BenchModel*> chains;
  for (const auto& bench_model : models)
    if (bench_model.name.rfind("chain", 0) == 0) chains.push_back(&bench_model);
  if (chains.size() > 1) {
    std::cout << "\nns per joint, best representation:\n\n| algorithm |";
    for (const auto* chain : chains) std::cout << ' ' << chain->name << " |";
    std::cout << "\n|---|";
    for (std::size_t i = 0; i < chains.size(); ++i) std::cout << "---|";
    std::cout << "\n";
    for (const char* algorithm : algorithms) {
      std::cout << "| " << algorithm << " |";
      for (const auto* chain : chains) {
        const auto found = best_time.find(chain->name + "/" + algorithm + "/");
        if (found != best_time.end())
          std::cout << ' ' << std::fixed << std::setprecision(1) << found->second / chain->joint_dof;
        std::cout << " |";
      }
      std::cout << "\n";
    }
  }
  return 0;
}
