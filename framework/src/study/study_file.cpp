#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/study/study_file.hpp>
#include <liembs/util/nearest_name.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

namespace liembs::study {

const char* to_string(Role role) {
  switch (role) {
    case Role::measured: return "case";
    case Role::reference: return "reference";
    case Role::reference_check: return "reference-check";
  }
  return "case";
}

std::string value_label(const std::string& toml_text) {
  if (toml_text.size() >= 2 && toml_text.front() == '"' && toml_text.back() == '"' &&
      toml_text.find('\\') == std::string::npos)
    return toml_text.substr(1, toml_text.size() - 2);
  return toml_text;
}

namespace {

// Key paths and TOML values of a table, nested tables flattened: { integrator.name = "ida" }
// and { "integrator.name" = "ida" } both give ("integrator.name", "\"ida\"").
void flatten(const ConfigTable& table, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& key : table.keys()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (table.is_table(key)) flatten(table.table(key), path, out);
    else out.emplace_back(path, table.value_text(key));
  }
}

std::vector<std::string> assignments(const ConfigTable& table, std::string_view key) {
  std::vector<std::string> result;
  if (!table.contains(key)) return result;
  std::vector<std::pair<std::string, std::string>> pairs;
  flatten(table.table(key), "", pairs);
  for (const auto& [path, value] : pairs) result.push_back(path + "=" + value);
  return result;
}

// Terms of a condition table, nested tables flattened ({ integrator.name = "ida" }): a key
// with a value, or with an array of alternatives.
void read_terms(const ConfigTable& table, const std::string& prefix, const std::set<std::string>& known_keys,
                const std::string& known_description, Condition& condition) {
  for (const auto& key : table.keys()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (table.is_table(key)) {
      read_terms(table.table(key), path, known_keys, known_description, condition);
      continue;
    }
    if (!known_keys.count(path)) {
      const std::vector<std::string> names(known_keys.begin(), known_keys.end());
      std::string message = "'" + path + "' is not " + known_description + " (" + join_names(names) + ")";
      const std::string suggestion = nearest_name(path, names);
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      table.fail(key, message);
    }
    condition.terms.push_back({path, table.is_array(key) ? table.value_texts(key)
                                                         : std::vector<std::string>{table.value_text(key)}});
  }
}

Condition read_condition(const ConfigTable& table, const std::set<std::string>& known_keys,
                         const std::string& known_description) {
  Condition condition;
  condition.location = table.location();
  read_terms(table, "", known_keys, known_description, condition);
  if (condition.terms.empty()) table.fail({}, "an empty condition matches every case");
  return condition;
}

RunSource read_source(const ConfigTable& table, const std::filesystem::path& study_file, bool required) {
  RunSource source;
  source.location = table.location();
  const bool has_file = table.contains("file"), has_inline = table.contains("run");
  if (has_file && has_inline) table.fail("run", "give either 'file' or an inline [" + table.path_of("run") + "], not both");
  if (has_file) {
    std::filesystem::path path = table.string("file");
    if (path.is_relative()) path = study_file.parent_path() / path;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) table.fail("file", "run file not found: " + path.string());
    source.file = path;
    note_input(path);
  } else if (has_inline) {
    const ConfigTable run = table.table("run");
    source.file = study_file;
    source.inline_table = run.key_path();
    // Its keys are read by load_run on a document of its own.
    std::vector<std::pair<std::string, std::string>> ignored;
    flatten(run, "", ignored);
  } else if (required) {
    table.fail({}, "missing 'file' (a run file) or an inline run table [" + table.path_of("run") + "]");
  }
  source.removals = table.strings_or("unset", {});
  source.overrides = assignments(table, "set");
  return source;
}

// The reference of a model: its own run file or the model's run, with overrides; the check
// run repeats it with `check` overrides (default: twice the step size).
void read_reference(const ConfigTable& table, const std::filesystem::path& study_file, Model& model) {
  model.has_reference = true;
  RunSource reference = read_source(table, study_file, false);
  if (reference.file.empty()) {
    std::vector<std::string> overrides = model.run.overrides;
    overrides.insert(overrides.end(), reference.overrides.begin(), reference.overrides.end());
    std::vector<std::string> removals = model.run.removals;
    removals.insert(removals.end(), reference.removals.begin(), reference.removals.end());
    reference.removals = std::move(removals);
    reference.file = model.run.file;
    reference.inline_table = model.run.inline_table;
    reference.overrides = std::move(overrides);
  }
  model.reference = reference;
  model.reference_check = reference;
  model.reference_check.location = table.location("check");
  for (const auto& assignment : assignments(table, "check")) model.reference_check.overrides.push_back(assignment);
  if (!table.contains("check")) model.reference_check.overrides.push_back("simulation.step_size=@double");
}

// repetitions and min_cpu_seconds of [measure] (simulation) or [timing] (algorithms): one way
// of timing for both kinds of case.
void read_cpu_time(const ConfigTable& table, CpuTimeSettings& settings) {
  settings.repetitions = table.integer_or("repetitions", settings.repetitions, 1, CpuTimeSettings::repetitions_max);
  settings.min_cpu_seconds = table.number_or("min_cpu_seconds", settings.min_cpu_seconds,
                                             Range::closed(0.0, CpuTimeSettings::min_cpu_seconds_max));
}

}  // namespace

int representation_axis(const Definition& definition) {
  for (std::size_t a = 0; a < definition.axes.size(); ++a)
    for (const auto& key : definition.axes[a].keys)
      if (key == "representation.name") return static_cast<int>(a);
  return -1;
}

Definition load_study(const std::filesystem::path& file) { return load_study(ConfigDocument::load(file)); }

Definition load_study(const std::shared_ptr<ConfigDocument>& document) {
  const std::filesystem::path file = document->file();
  ConfigTable root = document->root();
  Definition definition;
  definition.file = file;
  definition.title = root.string_or("title", file.stem().string());
  const bool algorithms = root.choice_or("kind", {"simulation", "algorithms"}, "simulation") == "algorithms";
  definition.kind = algorithms ? StudyKind::algorithms : StudyKind::simulation;
  // What only one kind reads is an error in the other, not silently ignored.
  auto simulation_only = [&](const ConfigTable& table, const char* key) {
    if (algorithms && table.contains(key))
      table.fail(key, std::string("'") + key + "' is for simulation studies; an algorithm study (kind = \"algorithms\") "
                                                "times its cases on random states and compares representations");
  };
  simulation_only(root, "reference");
  simulation_only(root, "measure");
  if (auto timing = root.optional_table("timing")) {
    if (!algorithms)
      root.fail("timing", "[timing] is for algorithm studies: add kind = \"algorithms\" at the top of the study file");
    Timing& t = definition.timing;
    t.states = timing->integer_or("states", t.states, 1, 1000000);
    t.warmup = timing->integer_or("warmup", t.warmup, 0, 100000);
    t.seed = timing->integer_or("seed", t.seed, 0);
    t.tolerance = timing->number_or("tolerance", t.tolerance, Range::positive());
    read_cpu_time(*timing, definition.cpu_time);
  }

  const auto model_tables = root.table_array("models");
  if (model_tables.empty()) root.fail({}, "missing [[models]]: a study needs at least one model (a run file or an inline run)");
  std::optional<ConfigTable> default_reference = root.optional_table("reference");
  std::set<std::string> model_names;
  for (const auto& table : model_tables) {
    Model model;
    model.name = table.string("name");
    if (model.name.empty()) table.fail("name", "a model needs a non-empty name");
    if (!model_names.insert(model.name).second) table.fail("name", "model '" + model.name + "' is defined twice");
    model.run = read_source(table, file, true);
    simulation_only(table, "reference");
    if (auto reference = table.optional_table("reference")) read_reference(*reference, file, model);
    else if (default_reference) read_reference(*default_reference, file, model);
    definition.models.push_back(std::move(model));
  }

  std::set<std::string> condition_keys{"model"};
  std::set<std::string> axis_names;
  for (const auto& table : root.table_array("axes")) {
    Axis axis;
    axis.location = table.location();
    const bool single = table.contains("key"), linked = table.contains("keys");
    if (single == linked) table.fail({}, "an axis needs either 'key' (one run-file key) or 'keys' (keys set together)");
    if (single) axis.keys.push_back(table.string("key"));
    else axis.keys = table.strings_or("keys", {});
    if (axis.keys.empty()) table.fail("keys", "an axis needs at least one key");
    for (const auto& key : axis.keys) {
      if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos)
        table.fail(single ? "key" : "keys", "'" + key + "' is not a key path of a run file (like integrator.name)");
      if (condition_keys.count(key)) table.fail(single ? "key" : "keys", "'" + key + "' is swept by another axis already");
    }
    axis.name = table.string_or("name", single ? axis.keys.front() : axis.keys.front() + "+");
    if (!axis_names.insert(axis.name).second) table.fail("name", "two axes are named '" + axis.name + "'");
    const std::vector<std::string> texts = table.value_texts("values");
    if (texts.empty()) table.fail("values", "an axis needs at least one value");
    if (single) {
      for (const auto& text : texts) axis.values.push_back({text});
    } else {
      // Linked keys: every value is an array with one element per key.
      for (std::size_t i = 0; i < texts.size(); ++i) {
        auto element = ConfigDocument::from_string("v = " + texts[i], file);
        if (!element->root().is_array("v"))
          table.fail("values", "value " + std::to_string(i) + " must be an array with one element per key (" +
                                   std::to_string(axis.keys.size()) + ")");
        auto parts = element->root().value_texts("v");
        if (parts.size() != axis.keys.size())
          table.fail("values", "value " + std::to_string(i) + " has " + std::to_string(parts.size()) +
                                   " elements for " + std::to_string(axis.keys.size()) + " keys");
        axis.values.push_back(std::move(parts));
      }
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (!seen.insert(texts[i]).second) table.fail("values", "value " + texts[i] + " is listed twice");
      axis.labels.push_back(value_label(texts[i]));
    }
    simulation_only(table, "ladder");
    axis.ladder = table.boolean_or("ladder", false);
    if (axis.ladder) {
      for (std::size_t i = 0; i < axis.values.size(); ++i) {
        const std::string& text = axis.values[i].front();
        char* end = nullptr;
        const double rung = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(rung > 0) || !std::isfinite(rung))
          table.fail("values", "a ladder's values must be positive numbers (step sizes or tolerances); value " +
                                   std::to_string(i) + " is " + text);
        axis.rungs.push_back(rung);
      }
      if (axis.rungs.size() < 2) table.fail("values", "a ladder needs at least two rungs");
    }
    axis.given_values = axis.values.size();
    const std::string earlier = "an earlier axis's key or 'model'";
    if (auto only = table.optional_table("only")) axis.only.push_back(read_condition(*only, condition_keys, earlier));
    if (auto except = table.optional_table("except"))
      axis.except.push_back(read_condition(*except, condition_keys, earlier));
    for (const auto& key : axis.keys) condition_keys.insert(key);
    definition.axes.push_back(std::move(axis));
  }
  for (const auto& table : root.table_array("exclude"))
    definition.exclusions.push_back(read_condition(table, condition_keys, "an axis key or 'model'"));
  if (algorithms) {
    const int representations = representation_axis(definition);
    if (representations >= 0 && definition.axes[static_cast<std::size_t>(representations)].keys.size() != 1)
      root.fail("axes", "in an algorithm study 'representation.name' must be an axis of its own (key = "
                        "\"representation.name\"): its first value is the one the others are compared with");
    if (representations >= 0 && (!definition.axes[static_cast<std::size_t>(representations)].only.empty() ||
                                 !definition.axes[static_cast<std::size_t>(representations)].except.empty()))
      root.fail("axes", "in an algorithm study the 'representation.name' axis applies to every case (no 'only' or "
                        "'except'): its first value is the one the others are compared with");
  }

  if (auto measure = root.optional_table("measure")) {
    definition.measure.sample_interval = measure->number_or("sample_interval", 0.0, Range::positive());
    definition.measure.bodies = measure->strings_or("bodies", {});
    definition.measure.per_body = measure->boolean_or("per_body", true);
    definition.measure.order_error = measure->choice_or("order_error", {"max", "end"}, "max");
    if (measure->contains("targets")) definition.measure.targets = measure->numbers("targets", Range::positive());
    definition.measure.ladder_extensions =
        measure->integer_or("ladder_extensions", definition.measure.ladder_extensions, 0, 50);
    read_cpu_time(*measure, definition.cpu_time);
  }
  document->reject_unused_keys();
  return definition;
}

namespace {

// The TOML text of `key` in a (partial) case, or empty when nothing sets it.
std::string case_value(const Definition& definition, const Case& item, const std::string& key) {
  if (key == "model") return "\"" + definition.models[item.model].name + "\"";
  for (std::size_t a = 0; a < item.choice.size(); ++a) {
    if (item.choice[a] < 0) continue;
    const Axis& axis = definition.axes[a];
    for (std::size_t k = 0; k < axis.keys.size(); ++k)
      if (axis.keys[k] == key) return axis.values[static_cast<std::size_t>(item.choice[a])][k];
  }
  return {};
}

bool holds(const Definition& definition, const Case& item, const Condition& condition) {
  for (const auto& term : condition.terms) {
    const std::string value = case_value(definition, item, term.key);
    if (value.empty() || std::find(term.values.begin(), term.values.end(), value) == term.values.end()) return false;
  }
  return true;
}

std::string case_id(const Definition& definition, const Case& item) {
  std::string id = definition.models[item.model].name;
  for (std::size_t a = 0; a < item.choice.size(); ++a)
    if (item.choice[a] >= 0)
      id += " " + definition.axes[a].name + "=" + definition.axes[a].labels[static_cast<std::size_t>(item.choice[a])];
  return id;
}

}  // namespace

std::vector<Case> expand_cases(const Definition& definition) {
  std::vector<Case> cases;
  for (std::size_t m = 0; m < definition.models.size(); ++m) {
    std::vector<Case> partial{Case{{}, m, Role::measured, {}, {}}};
    for (const Axis& axis : definition.axes) {
      std::vector<Case> next;
      for (const Case& item : partial) {
        bool applies = true;
        for (const auto& condition : axis.only) applies = applies && holds(definition, item, condition);
        for (const auto& condition : axis.except) applies = applies && !holds(definition, item, condition);
        if (!applies) {
          Case extended = item;
          extended.choice.push_back(-1);
          next.push_back(std::move(extended));
          continue;
        }
        for (std::size_t v = 0; v < axis.values.size(); ++v) {
          Case extended = item;
          extended.choice.push_back(static_cast<int>(v));
          for (std::size_t k = 0; k < axis.keys.size(); ++k)
            extended.overrides.push_back(axis.keys[k] + "=" + axis.values[v][k]);
          next.push_back(std::move(extended));
        }
      }
      partial = std::move(next);
    }
    for (Case& item : partial) {
      bool excluded = false;
      for (const auto& condition : definition.exclusions) excluded = excluded || holds(definition, item, condition);
      if (excluded) continue;
      item.id = case_id(definition, item);
      cases.push_back(std::move(item));
    }
  }
  const std::vector<int> none(definition.axes.size(), -1);
  for (std::size_t m = 0; m < definition.models.size(); ++m) {
    if (!definition.models[m].has_reference) continue;
    cases.push_back(Case{definition.models[m].name + " [reference]", m, Role::reference, none, {}});
    cases.push_back(Case{definition.models[m].name + " [reference check]", m, Role::reference_check, none, {}});
  }
  return cases;
}

Case measured_case(const Definition& definition, std::size_t model, std::vector<int> choice) {
  Case item{{}, model, Role::measured, std::move(choice), {}};
  for (std::size_t a = 0; a < item.choice.size(); ++a) {
    if (item.choice[a] < 0) continue;
    const Axis& axis = definition.axes[a];
    for (std::size_t k = 0; k < axis.keys.size(); ++k)
      item.overrides.push_back(axis.keys[k] + "=" + axis.values[static_cast<std::size_t>(item.choice[a])][k]);
  }
  item.id = case_id(definition, item);
  return item;
}

std::shared_ptr<ConfigDocument> case_document(const Definition& definition, const Case& item) {
  const Model& model = definition.models[item.model];
  const RunSource& source = item.role == Role::measured    ? model.run
                            : item.role == Role::reference ? model.reference
                                                           : model.reference_check;
  auto document = source.inline_table.empty() ? ConfigDocument::load(source.file)
                                              : ConfigDocument::load_table(source.file, source.inline_table);
  for (const auto& key : source.removals) document->remove_key(key);
  for (const auto& assignment : source.overrides) {
    if (assignment == "simulation.step_size=@double") {
      // The default check of a reference: the same run at twice its step size.
      const double step = document->root().table("simulation").number("step_size", Range::positive());
      char buffer[40];
      std::snprintf(buffer, sizeof buffer, "%.17g", 2.0 * step);
      std::string text = buffer;
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
      document->set_override("simulation.step_size=" + text);
      continue;
    }
    document->set_override(assignment);
  }
  for (const auto& assignment : item.overrides) document->set_override(assignment);
  return document;
}

}  // namespace liembs::study
