#pragma once
// A run of a config file to its end, for comparing parameterizations: the bodies' final
// poses and body twists, the summary and the integrator's statistics.
#include <liembs/config/config_table.hpp>
#include <liembs/host/run.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace liembs::testing {

struct Motion {
  RunSummary summary;
  std::vector<Pose> poses;  // every model body at the end
  std::vector<Vec6> twists;
  std::map<std::string, double> statistics;
};

inline Motion run_to_end(const std::shared_ptr<ConfigDocument>& document, const std::vector<std::string>& overrides) {
  Registry registry;  // declared first: the run's components live in its libraries
  registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  for (const auto& assignment : overrides) document->set_override(assignment);
  Run run = load_run(document, registry);
  Motion motion;
  motion.summary = execute_run(run, RunOutput{});
  run.dynamics->body_motion(motion.summary.final_state, motion.poses, motion.twists);
  for (const auto& [name, value] : run.integrator->statistics()) motion.statistics[name] = value;
  return motion;
}

}  // namespace liembs::testing
