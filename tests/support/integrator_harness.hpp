#pragma once
// Integrator tests drive a plugin directly on a C++ dynamics object: the build tree's
// plugins with a group, integrators created from TOML option text (unknown keys rejected),
// and fixed-step integration from the dynamics' initial state.
#include "../test_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/plugin/algorithm.hpp>
#include <liembs/sim/state_space.hpp>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

namespace liembs::testing {

// The registry outlives every component created from it.
struct Plugins {
  std::unique_ptr<Registry> registry = build_tree_registry();
  std::unique_ptr<Group> group;

  explicit Plugins(const std::string& group_name = "SE3") {
    group = registry->create<Group>(group_name, ConfigDocument::from_string("", "group")->root());
  }

  std::unique_ptr<Integrator> integrator(const std::string& name, const std::string& options) const {
    auto document = ConfigDocument::from_string(options, "integrator");
    auto created = registry->create<Integrator>(name, document->root());
    document->reject_unused_keys();
    return created;
  }
};

// Integrates from `dynamics.initial_state()` to `end_time` with fixed steps; `after_step`
// sees every state.
inline State integrate(const Plugins& plugins, ForwardDynamics& dynamics, Integrator& integrator, double step,
                       double end_time, const std::function<void(const State&)>& after_step = {}) {
  const StateSpace space(*plugins.group, dynamics.free_bodies(), dynamics.joint_coordinates());
  State state = dynamics.initial_state();
  integrator.start(space, state);
  const auto steps = static_cast<long long>(std::llround(end_time / step));
  for (long long k = 0; k < steps; ++k) {
    integrator.step(space, dynamics, state, step);
    if (after_step) after_step(state);
  }
  return state;
}

inline double state_distance(const State& a, const State& b) {
  return (a.coordinates - b.coordinates).norm() + (a.velocities - b.velocities).norm();
}

}  // namespace liembs::testing
