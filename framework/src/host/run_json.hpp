#pragma once
// The run's description shared by its JSON outputs (summary.json, linearization.json).
#include <liembs/host/run.hpp>

#include <nlohmann/json.hpp>

namespace liembs {

// {"group", "algorithm", "integrator", "integrator_description", "representation" (null without one)}.
nlohmann::ordered_json run_choices(const Run& run);

// summary.json's "provenance" (also study.json's): this build's version, commit, compiler and
// flavour, and `plugins` (each one's kind, name, version, file and ABI fingerprint).
nlohmann::ordered_json provenance_json(const std::vector<PluginProvenance>& plugins);

}  // namespace liembs
