#include <liembs/host/plugin_options.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

namespace liembs {

namespace {

// Markdown table cells: a '|' would end the cell.
std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string code(const std::string& text) { return text.empty() ? "" : "`" + text + "`"; }

}  // namespace

std::string plugin_options_text(const ComponentInfo& info) {
  std::ostringstream out;
  out << to_string(info.kind) << " '" << info.name << "' (" << info.library << ")\n";
  if (!info.options_declared) {
    out << "  declares no options table (a plugin built without one): only its own reads check the keys\n";
    return out.str();
  }
  if (info.options.empty()) {
    out << "  no options\n";
    return out.str();
  }
  std::size_t width = 0;
  for (const auto& spec : info.options) width = std::max(width, spec.key.size());
  for (const auto& spec : info.options) {
    out << "  " << spec.key << std::string(width - spec.key.size() + 2, ' ') << to_string(spec.type);
    const std::string range = spec.range_text();
    if (!range.empty()) out << ", " << range;
    out << "; default " << spec.default_text() << "\n"
        << "  " << std::string(width + 2, ' ') << spec.description << "\n";
  }
  return out.str();
}

std::string plugin_options_json(const ComponentInfo& info) {
  nlohmann::ordered_json json;
  json["kind"] = std::string(to_string(info.kind));
  json["name"] = info.name;
  json["version"] = info.version;
  json["library"] = info.library;
  json["options_declared"] = info.options_declared;
  auto options = nlohmann::ordered_json::array();
  for (const auto& spec : info.options) {
    nlohmann::ordered_json option;
    option["key"] = spec.key;
    option["type"] = std::string(to_string(spec.type));
    option["default"] = spec.has_default ? nlohmann::ordered_json(spec.default_value()) : nlohmann::ordered_json(nullptr);
    option["absent"] = spec.has_default ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(spec.absent.empty() ? "required" : spec.absent);
    option["range"] = spec.range_text();
    if (!spec.choices.empty()) option["choices"] = spec.choices;
    option["description"] = spec.description;
    options.push_back(std::move(option));
  }
  json["options"] = std::move(options);
  return json.dump(2) + "\n";
}

std::string plugin_options_markdown(const Registry& registry) {
  std::ostringstream out;
  for (const Kind kind : all_kinds()) {
    std::vector<const ComponentInfo*> infos;
    for (const auto& info : registry.components())
      if (info.kind == kind) infos.push_back(&info);
    std::sort(infos.begin(), infos.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
    for (const ComponentInfo* info : infos) {
      out << "### " << to_string(kind) << " `" << info->name << "`\n\n";
      if (!info->options_declared) {
        out << "No options table declared.\n\n";
        continue;
      }
      if (info->options.empty()) {
        out << "No options.\n\n";
        continue;
      }
      out << "| option | type | default | admissible values | description |\n|---|---|---|---|---|\n";
      for (const auto& spec : info->options)
        out << "| `" << spec.key << "` | " << to_string(spec.type) << " | "
            << (spec.has_default ? code(cell(spec.default_value())) : cell(spec.default_text())) << " | "
            << cell(spec.range_text()) << " | " << cell(spec.description) << " |\n";
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace liembs
