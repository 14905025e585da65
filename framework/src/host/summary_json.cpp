// summary.json: every key through summary_key() (host/output_schema.cpp), so a key written
// here is declared, with its unit and meaning, in the one schema the docs are generated from.
#include "../host/run_json.hpp"

#include <liembs/host/output_schema.hpp>
#include <liembs/host/run.hpp>
#include <liembs/version.hpp>

#include <liembs_build_info.hpp>

#include <nlohmann/json.hpp>

namespace liembs {

nlohmann::ordered_json provenance_json(const std::vector<PluginProvenance>& plugins) {
  nlohmann::ordered_json json;
  json["liembs_version"] = LIEMBS_VERSION;
  json["git_commit"] = LIEMBS_GIT_COMMIT;
  json["compiler"] = LIEMBS_COMPILER;
  json["build_type"] = LIEMBS_BUILD_TYPE;
  json["flavour"] = LIEMBS_BUILD_FLAVOUR;
  auto list = nlohmann::ordered_json::array();
  for (const PluginProvenance& plugin : plugins)
    list.push_back({{"kind", plugin.kind},
                    {"name", plugin.name},
                    {"version", plugin.version},
                    {"file", plugin.file},
                    {"abi_fingerprint", plugin.abi_fingerprint}});
  json["plugins"] = std::move(list);
  return json;
}

std::string provenance_json_text(const std::vector<PluginProvenance>& plugins) {
  return provenance_json(plugins).dump();
}

std::string summary_json(const Run& run, const RunSummary& summary) {
  nlohmann::ordered_json json;  // keys in the order written; non-finite numbers become null
  const auto set = [&json](std::string_view key, nlohmann::ordered_json value) {
    json[std::string(summary_key(key).key)] = std::move(value);
  };
  const Model& model = *run.model;
  // Absolute, so that `liembs view` finds the model from any folder.
  set("config", std::filesystem::absolute(run.config_file).lexically_normal().string());
  set("title", run.title);
  set("choices", run_choices(run));
  set("step_size", run.settings.step_size);
  set("end_time", run.settings.end_time);
  set("steps", summary.steps);
  set("simulated_seconds", summary.simulated_seconds);
  set("wall_time_seconds", summary.wall_seconds);
  set("steps_per_second", static_cast<double>(summary.steps) / std::max(summary.wall_seconds, 1e-12));
  set("conservative", model.is_conservative());
  set("force_free", model.is_force_free());
  set("energy_initial", summary.energy_initial);
  set("energy_final", summary.energy_final);
  set("energy_drift_max_relative", summary.energy_drift_max);
  set("angular_momentum_drift_max_relative", summary.angular_momentum_drift_max);
  set("orthogonality_error_max", summary.orthogonality_error_max);
  if (summary.normalization) set("normalization_error_max", summary.normalization_error_max);
  if (summary.charts) set("chart_switches", summary.chart_switches);
  if (!summary.prescribed_coordinates.empty()) {
    std::vector<std::string> joints;  // each prescribed joint once
    for (const auto& joint : model.joints)
      if (!joint.prescribed.empty()) joints.push_back(joint.name);
    set("prescribed_joints", joints);
    set("prescribed_coordinates", summary.prescribed_coordinates);
    set("prescribed_work", summary.prescribed_work);
    // E(t) - E(0) - W(t): the balance holds when the prescribed forces are all that does work
    if (model.loads.empty()) set("energy_balance_error_max_relative", summary.energy_balance_error_max);
  }
  if (summary.constrained) {
    set("initial_projection_iterations", summary.initial_projection_iterations);
    set("driver_swaps", summary.driver_swaps);
    set("redundant_constraints", summary.redundant_constraints);
    auto per_joint = [&](const std::vector<double>& values) {
      auto object = nlohmann::ordered_json::object();
      for (std::size_t i = 0; i < values.size(); ++i) object[summary.constraint_names[i]] = values[i];
      return object;
    };
    set("constraint_violation_max", per_joint(summary.constraint_violation_max));
    set("velocity_violation_max", per_joint(summary.velocity_violation_max));
  }
  auto statistics = nlohmann::ordered_json::object();
  for (const auto& [name, value] : summary.integrator_statistics) statistics[name] = value;
  set("integrator_statistics", std::move(statistics));
  auto choices = nlohmann::ordered_json::object();
  for (const auto& choice : summary.method_choices)
    choices[choice.topic] = {{"choice", choice.choice}, {"reason", choice.reason}};
  set("method_choices", std::move(choices));
  set("provenance", provenance_json(run.plugins));
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace liembs
