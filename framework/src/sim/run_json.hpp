#pragma once
// The run's description shared by its JSON outputs (summary.json, linearization.json).
#include <liembs/sim/run.hpp>

#include <nlohmann/json.hpp>

namespace liembs {

// {"group", "algorithm", "integrator", "integrator_description", "representation" (null without one)}.
nlohmann::ordered_json run_choices(const Run& run);

}  // namespace liembs
