#include <liembs/config/config_table.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/error.hpp>
#include <liembs/util/nearest_name.hpp>
#include <liembs/util/warning.hpp>
#include <liembs/util/format.hpp>

#include <toml++/toml.h>

#include <charconv>
#include <cstdio>
#include <cmath>
#include <functional>
#include <sstream>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace liembs {

struct ConfigDocument::Impl {
  toml::table root;
  mutable std::unordered_set<const toml::node*> used;
  // Keys each table was asked for, present or not: the candidates for "did you mean".
  mutable std::unordered_map<const toml::node*, std::set<std::string>> asked;
  // Values given with --set (and their elements), with the assignment, for locations.
  std::unordered_map<const toml::node*, std::string> overrides;
  // Tables whose `name` (a plugin) an override changed: the name the file gave and the
  // assignment. Keys of the file in such a table that the new plugin does not read belonged
  // to the old one: reject_unused_keys() drops them with a warning instead of failing.
  struct Switch {
    std::string previous, assignment;
  };
  std::unordered_map<const toml::node*, Switch> switched;
  // Tables a declared reader owns (ConfigTable::declare_owner).
  struct Owner {
    std::string name;
    std::vector<std::string> keys;
    std::string help;
  };
  mutable std::unordered_map<const toml::node*, Owner> owners;
};

namespace {

const toml::table& as_table(const void* node) { return *static_cast<const toml::table*>(node); }

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}

// TOML text of a value, with floats in their shortest round-trip form (so that equal
// values give equal texts).
std::string toml_text(const toml::node& node) {
  if (const auto* text = node.as_string()) {
    std::string quoted = "\"";
    for (const char c : text->get()) {
      if (c == '"' || c == '\\') quoted += '\\', quoted += c;
      else if (c == '\n') quoted += "\\n";
      else if (c == '\t') quoted += "\\t";
      else if (static_cast<unsigned char>(c) < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
        quoted += buffer;
      } else quoted += c;
    }
    return quoted + "\"";
  }
  if (const auto* integer = node.as_integer()) return std::to_string(integer->get());
  if (const auto* floating = node.as_floating_point()) {
    const double x = floating->get();
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buffer[64];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
    std::string result(buffer, end);
    if (result.find_first_of(".eE") == std::string::npos) result += ".0";
    return result;
  }
  if (const auto* flag = node.as_boolean()) return flag->get() ? "true" : "false";
  if (const auto* array = node.as_array()) {
    std::string result = "[";
    for (std::size_t i = 0; i < array->size(); ++i) result += (i ? ", " : "") + toml_text(*array->get(i));
    return result + "]";
  }
  if (const auto* table = node.as_table()) {
    std::string result = "{";
    bool first = true;
    for (auto&& [key, value] : *table) {
      result += (first ? " " : ", ") + toml_text(toml::value<std::string>(std::string(key.str()))) + " = " +
                toml_text(value);
      first = false;
    }
    return result + (first ? "}" : " }");
  }
  std::ostringstream out;  // dates and times
  node.visit([&](auto&& value) { out << value; });
  return out.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// ConfigDocument

ConfigDocument::ConfigDocument(std::filesystem::path file)
    : file_(std::move(file)), impl_(std::make_unique<Impl>()) {}
ConfigDocument::~ConfigDocument() = default;

std::shared_ptr<ConfigDocument> ConfigDocument::load(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw ConfigError(file.string() + ": cannot read the file (it does not exist or is not a regular file)");
  note_input(file);
  std::shared_ptr<ConfigDocument> document(new ConfigDocument(file));
  try {
    document->impl_->root = toml::parse_file(file.string());
  } catch (const toml::parse_error& error) {
    throw ConfigError(file.string() + ":" + std::to_string(error.source().begin.line) + ":" +
                      std::to_string(error.source().begin.column) +
                      ": TOML syntax error: " + std::string(error.description()));
  }
  return document;
}

std::shared_ptr<ConfigDocument> ConfigDocument::from_string(std::string_view text,
                                                            const std::filesystem::path& name) {
  std::shared_ptr<ConfigDocument> document(new ConfigDocument(name));
  try {
    document->impl_->root = toml::parse(text, name.string());
  } catch (const toml::parse_error& error) {
    throw ConfigError(name.string() + ":" + std::to_string(error.source().begin.line) + ":" +
                      std::to_string(error.source().begin.column) +
                      ": TOML syntax error: " + std::string(error.description()));
  }
  return document;
}

std::shared_ptr<ConfigDocument> ConfigDocument::load_table(const std::filesystem::path& file,
                                                          std::string_view key_path) {
  auto whole = load(file);
  toml::node* current = &whole->impl_->root;
  std::stringstream stream{std::string(key_path)};
  for (std::string segment; std::getline(stream, segment, '.');) {
    if (auto* table = current->as_table()) {
      current = table->get(segment);
    } else if (auto* array = current->as_array()) {
      const auto index = std::stoul(segment);
      current = index < array->size() ? array->get(index) : nullptr;
    } else {
      current = nullptr;
    }
    if (!current) throw ConfigError(file.string() + ": no table '" + std::string(key_path) + "'");
  }
  auto* table = current->as_table();
  if (!table) throw ConfigError(file.string() + ": '" + std::string(key_path) + "' is not a table");
  std::shared_ptr<ConfigDocument> document(new ConfigDocument(file));
  document->impl_->root = std::move(*table);  // moved nodes keep their source positions
  return document;
}

std::string ConfigDocument::to_toml() const {
  std::ostringstream out;
  out << toml::toml_formatter(impl_->root, toml::format_flags::none);
  return out.str();
}

ConfigTable ConfigDocument::root() { return ConfigTable(shared_from_this(), &impl_->root, ""); }

void ConfigDocument::mark_used(const void* node) const {
  impl_->used.insert(static_cast<const toml::node*>(node));
}
void ConfigDocument::note_asked(const void* table, std::string_view key) const {
  impl_->asked[static_cast<const toml::node*>(table)].emplace(key);
}

void ConfigDocument::set_owner(const void* table, std::string owner, std::vector<std::string> keys,
                               std::string help) const {
  auto& asked = impl_->asked[static_cast<const toml::node*>(table)];
  asked.insert(keys.begin(), keys.end());
  impl_->owners[static_cast<const toml::node*>(table)] = {std::move(owner), std::move(keys), std::move(help)};
}
bool ConfigDocument::is_used(const void* node) const {
  return impl_->used.count(static_cast<const toml::node*>(node)) > 0;
}

std::string ConfigDocument::location_of(const void* node) const {
  const auto& source = static_cast<const toml::node*>(node)->source();
  if (const auto found = impl_->overrides.find(static_cast<const toml::node*>(node)); found != impl_->overrides.end())
    return file_.string() + ": (--set " + found->second + ")";
  if (source.begin.line == 0) return file_.string() + ": (--set)";
  return file_.string() + ":" + std::to_string(source.begin.line) + ":" +
         std::to_string(source.begin.column);
}

void ConfigDocument::set_override(std::string_view assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string_view::npos || equals == 0)
    throw ConfigError("--set " + std::string(assignment) + ": expected key.path=value");
  const std::string path(assignment.substr(0, equals));
  const std::string text(assignment.substr(equals + 1));

  // The value in TOML syntax; a bare word that is not valid TOML is taken as a string.
  toml::table parsed;
  try {
    parsed = toml::parse("value = " + text);
  } catch (const toml::parse_error&) {
    parsed = toml::table{};
    parsed.insert("value", text);
  }
  std::vector<std::string> segments;
  std::stringstream stream(path);
  for (std::string segment; std::getline(stream, segment, '.');) {
    if (segment.empty()) throw ConfigError("--set " + std::string(assignment) + ": empty key in '" + path + "'");
    segments.push_back(segment);
  }

  toml::node* current = &impl_->root;
  std::string walked;
  for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
    const std::string& segment = segments[i];
    walked += (walked.empty() ? "" : ".") + segment;
    if (auto* table = current->as_table()) {
      toml::node* next = table->get(segment);
      if (!next) next = &table->insert_or_assign(segment, toml::table{}).first->second;
      current = next;
    } else if (auto* array = current->as_array()) {
      char* end = nullptr;
      const long index = std::strtol(segment.c_str(), &end, 10);
      if (*end != '\0' || index < 0 || static_cast<std::size_t>(index) >= array->size())
        throw ConfigError("--set " + std::string(assignment) + ": '" + walked +
                          "' is not an index of the array (size " + std::to_string(array->size()) + ")");
      current = array->get(static_cast<std::size_t>(index));
    } else {
      throw ConfigError("--set " + std::string(assignment) + ": '" + walked +
                        "' is " + type_name(*current) + ", not a table");
    }
  }
  auto* table = current->as_table();
  if (!table)
    throw ConfigError("--set " + std::string(assignment) + ": the parent of '" + segments.back() +
                      "' is not a table");
  if (segments.back() == "name")
    if (const auto* old = table->get("name"); old && old->is_string() && !impl_->overrides.count(old) &&
                                              !impl_->switched.count(table)) {
      const std::string previous = old->value_or(std::string());
      const toml::node* replacement = parsed.get("value");
      if (!replacement->is_string() || replacement->value_or(std::string()) != previous)
        impl_->switched[table] = {previous, std::string(assignment)};
    }
  const toml::node& value = table->insert_or_assign(segments.back(), std::move(*parsed.get("value"))).first->second;
  // Its source position is in the text "value = ...": errors name the assignment instead.
  std::function<void(const toml::node&)> record = [&](const toml::node& node) {
    impl_->overrides[&node] = std::string(assignment);
    if (const auto* array = node.as_array())
      for (const auto& element : *array) record(element);
    if (const auto* sub = node.as_table())
      for (const auto& [key, element] : *sub) record(element);
  };
  record(value);
}

bool ConfigDocument::remove_key(std::string_view path) {
  toml::node* current = &impl_->root;
  std::stringstream stream{std::string(path)};
  std::vector<std::string> segments;
  for (std::string segment; std::getline(stream, segment, '.');) segments.push_back(segment);
  for (std::size_t i = 0; i + 1 < segments.size() && current; ++i) {
    if (auto* table = current->as_table()) current = table->get(segments[i]);
    else current = nullptr;
  }
  if (current && current->is_table() && !segments.empty()) return current->as_table()->erase(segments.back()) > 0;
  return false;
}

void ConfigDocument::reject_unused_keys() const {
  std::vector<std::string> problems;
  std::function<void(const toml::table&, const std::string&)> walk =
      [&](const toml::table& table, const std::string& prefix) {
        std::vector<std::string> known;
        if (const auto found = impl_->asked.find(&table); found != impl_->asked.end())
          known.assign(found->second.begin(), found->second.end());
        for (auto&& [key, value] : table) {
          const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
          if (!is_used(&value)) {
            if (const auto found = impl_->switched.find(&table);
                found != impl_->switched.end() && !impl_->overrides.count(&value)) {
              warn(location_of(&value) + ": '" + path + "' is dropped: it is an option of '" + found->second.previous +
                   "', the plugin the file names, and '" + found->second.assignment +
                   "' chose one that does not read it");
              continue;
            }
            std::string message = location_of(&value) + ": unknown key '" + path + "'";
            const std::string suggestion = nearest_name(key.str(), known);
            if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
            if (const auto owner = impl_->owners.find(&table); owner != impl_->owners.end()) {
              const auto& [name, keys, help] = owner->second;
              message += "; " + name + " has no option '" + std::string(key.str()) + "'" +
                         (keys.empty() ? ", it has no options" : "; its options: " + join_names(keys)) +
                         (help.empty() ? "" : " (" + help + ")");
            }
            problems.push_back(message);
            continue;
          }
          if (const auto* sub = value.as_table()) walk(*sub, path);
          if (const auto* array = value.as_array()) {
            for (std::size_t i = 0; i < array->size(); ++i)
              if (const auto* element = array->get(i)->as_table())
                if (is_used(element)) walk(*element, path + "." + std::to_string(i));
          }
        }
      };
  walk(impl_->root, "");
  if (problems.empty()) return;
  std::string message;
  for (std::size_t i = 0; i < problems.size(); ++i) message += (i ? "\n" : "") + problems[i];
  throw ConfigError(message);
}

// ---------------------------------------------------------------------------------------
// ConfigTable

ConfigTable::ConfigTable(std::shared_ptr<ConfigDocument> document, const void* node,
                         std::string key_path)
    : document_(std::move(document)), node_(node), key_path_(std::move(key_path)) {
  document_->mark_used(node_);
}

const std::filesystem::path& ConfigTable::file() const { return document_->file(); }

std::string ConfigTable::path_of(std::string_view key) const {
  if (key.empty()) return key_path_;
  return key_path_.empty() ? std::string(key) : key_path_ + "." + std::string(key);
}

std::string ConfigTable::location(std::string_view key) const {
  if (!key.empty())
    if (const void* node = find(key)) return document_->location_of(node);
  return document_->location_of(node_);
}

void ConfigTable::declare_owner(std::string owner, std::vector<std::string> keys, std::string help) const {
  document_->set_owner(node_, std::move(owner), std::move(keys), std::move(help));
}

void ConfigTable::fail(std::string_view key, std::string_view message) const {
  const std::string where = location(key);
  const std::string path = path_of(key);
  throw ConfigError(where + ": " + (path.empty() ? std::string("(top level)") : path) + ": " +
                    std::string(message));
}

const void* ConfigTable::find(std::string_view key) const {
  document_->note_asked(node_, key);
  return as_table(node_).get(key);
}

const void* ConfigTable::require(std::string_view key) const {
  const void* node = find(key);
  if (!node) {
    // A misspelt key is reported here, before the unknown-key check: name it.
    std::vector<std::string> present;
    for (const auto& [name, value] : as_table(node_)) present.emplace_back(name.str());
    const std::string typo = nearest_name(key, present);
    fail({}, "missing required key '" + path_of(key) + "'" +
                 (typo.empty() ? std::string() : " (is '" + path_of(typo) + "' a misspelling of it?)"));
  }
  document_->mark_used(node);
  return node;
}

bool ConfigTable::contains(std::string_view key) const { return find(key) != nullptr; }

std::vector<std::string> ConfigTable::keys() const {
  std::vector<std::string> result;
  for (auto&& [key, value] : as_table(node_)) result.emplace_back(key.str());
  return result;
}

void ConfigTable::accept(std::string_view key) const {
  if (const void* node = find(key)) document_->mark_used(node);
}

namespace {
// Reads a number (integer or float) from a node; nullopt if it is not a number.
std::optional<double> read_number(const toml::node& node) {
  if (node.is_integer()) return static_cast<double>(*node.value<int64_t>());
  if (node.is_floating_point()) return *node.value<double>();
  return std::nullopt;
}
}  // namespace

double ConfigTable::number(std::string_view key, Range range) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  const auto value = read_number(node);
  if (!value) fail(key, "expected a number, found " + type_name(node));
  if (!range.contains(*value)) fail(key, "value " + format_number(*value, 17) + " is out of range: expected " + range.describe());
  return *value;
}

double ConfigTable::number_or(std::string_view key, double fallback, Range range) const {
  return contains(key) ? number(key, range) : fallback;
}

long long ConfigTable::integer(std::string_view key, long long min, long long max) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  if (!node.is_integer()) fail(key, "expected an integer, found " + type_name(node));
  const long long value = *node.value<int64_t>();
  if (value < min || value > max)
    fail(key, "value " + std::to_string(value) + " is out of range: expected in [" +
                  std::to_string(min) + ", " + std::to_string(max) + "]");
  return value;
}

long long ConfigTable::integer_or(std::string_view key, long long fallback, long long min, long long max) const {
  return contains(key) ? integer(key, min, max) : fallback;
}

bool ConfigTable::boolean_or(std::string_view key, bool fallback) const {
  if (!contains(key)) return fallback;
  const auto& node = *static_cast<const toml::node*>(require(key));
  if (!node.is_boolean()) fail(key, "expected true or false, found " + type_name(node));
  return *node.value<bool>();
}

std::string ConfigTable::string(std::string_view key) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  if (!node.is_string()) fail(key, "expected a string, found " + type_name(node));
  return *node.value<std::string>();
}

std::string ConfigTable::string_or(std::string_view key, std::string_view fallback) const {
  return contains(key) ? string(key) : std::string(fallback);
}

std::string ConfigTable::choice(std::string_view key, const std::vector<std::string>& allowed) const {
  std::string value = string(key);
  for (const auto& option : allowed)
    if (option == value) return value;
  std::string message = "'" + value + "' is not one of: " + join_names(allowed);
  const std::string suggestion = nearest_name(value, allowed);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  fail(key, message);
}

std::string ConfigTable::choice_or(std::string_view key, const std::vector<std::string>& allowed,
                                   std::string_view fallback) const {
  return contains(key) ? choice(key, allowed) : std::string(fallback);
}

std::vector<std::string> ConfigTable::strings_or(std::string_view key, std::vector<std::string> fallback) const {
  if (!contains(key)) return fallback;
  const auto& node = *static_cast<const toml::node*>(require(key));
  const auto* array = node.as_array();
  if (!array) fail(key, "expected an array of strings, found " + type_name(node));
  std::vector<std::string> result;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto* element = array->get(i);
    if (!element->is_string())
      fail(key, "element " + std::to_string(i) + " is " + type_name(*element) + ", expected a string");
    result.push_back(*element->value<std::string>());
  }
  return result;
}

std::vector<double> ConfigTable::numbers(std::string_view key, Range range) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  const auto* array = node.as_array();
  if (!array) fail(key, "expected an array of numbers, found " + type_name(node));
  std::vector<double> result;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto value = read_number(*array->get(i));
    if (!value) fail(key, "element " + std::to_string(i) + " is " + type_name(*array->get(i)) + ", expected a number");
    if (!range.contains(*value))
      fail(key, "element " + std::to_string(i) + " = " + format_number(*value, 17) + " is out of range: expected " + range.describe());
    result.push_back(*value);
  }
  return result;
}

std::vector<std::vector<double>> ConfigTable::number_rows(std::string_view key) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  const auto* array = node.as_array();
  if (!array) fail(key, "expected an array of arrays of numbers, found " + type_name(node));
  std::vector<std::vector<double>> rows;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto* row = array->get(i)->as_array();
    if (!row) fail(key, "row " + std::to_string(i) + " is " + type_name(*array->get(i)) + ", expected an array of numbers");
    std::vector<double> values;
    for (std::size_t j = 0; j < row->size(); ++j) {
      const auto value = read_number(*row->get(j));
      if (!value || !std::isfinite(*value))
        fail(key, "element [" + std::to_string(i) + "][" + std::to_string(j) + "] is not a finite number");
      values.push_back(*value);
    }
    if (!rows.empty() && values.size() != rows.front().size())
      fail(key, "row " + std::to_string(i) + " has " + std::to_string(values.size()) +
                    " elements, row 0 has " + std::to_string(rows.front().size()));
    rows.push_back(std::move(values));
  }
  return rows;
}

Vec3 ConfigTable::vec3(std::string_view key) const {
  const auto values = numbers(key);
  if (values.size() != 3) fail(key, "expected 3 numbers, found " + std::to_string(values.size()));
  return Vec3(values[0], values[1], values[2]);
}

Vec3 ConfigTable::vec3_or(std::string_view key, const Vec3& fallback) const {
  return contains(key) ? vec3(key) : fallback;
}

Mat3 ConfigTable::mat3(std::string_view key) const {
  const auto rows = number_rows(key);
  if (rows.size() != 3 || rows.front().size() != 3) fail(key, "expected a 3x3 matrix [[a,b,c],[d,e,f],[g,h,i]]");
  Mat3 result;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) result(i, j) = rows[i][j];
  return result;
}

namespace {
// A value taken whole (an inline table as an axis value) has no unread keys inside.
void mark_tree_used(const ConfigDocument& document, const toml::node& node) {
  document.mark_used(&node);
  if (const auto* table = node.as_table())
    for (auto&& [key, value] : *table) mark_tree_used(document, value);
  if (const auto* array = node.as_array())
    for (std::size_t i = 0; i < array->size(); ++i) mark_tree_used(document, *array->get(i));
}
}  // namespace

std::string ConfigTable::value_text(std::string_view key) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  mark_tree_used(*document_, node);
  return toml_text(node);
}

std::vector<std::string> ConfigTable::value_texts(std::string_view key) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  const auto* array = node.as_array();
  if (!array) fail(key, "expected an array of values, found " + type_name(node));
  mark_tree_used(*document_, node);
  std::vector<std::string> result;
  for (std::size_t i = 0; i < array->size(); ++i) result.push_back(toml_text(*array->get(i)));
  return result;
}

bool ConfigTable::is_array(std::string_view key) const {
  const auto* node = static_cast<const toml::node*>(find(key));
  return node && node->is_array();
}

bool ConfigTable::is_table(std::string_view key) const {
  const auto* node = static_cast<const toml::node*>(find(key));
  return node && node->is_table();
}

bool ConfigTable::is_string(std::string_view key) const {
  const auto* node = static_cast<const toml::node*>(find(key));
  return node && node->is_string();
}

ConfigTable ConfigTable::table(std::string_view key) const {
  const auto& node = *static_cast<const toml::node*>(require(key));
  if (!node.is_table()) fail(key, "expected a table, found " + type_name(node));
  return ConfigTable(document_, &node, path_of(key));
}

std::optional<ConfigTable> ConfigTable::optional_table(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  return table(key);
}

std::vector<ConfigTable> ConfigTable::table_array(std::string_view key) const {
  std::vector<ConfigTable> result;
  if (!contains(key)) return result;
  const auto& node = *static_cast<const toml::node*>(require(key));
  const auto* array = node.as_array();
  if (!array) fail(key, "expected an array of tables ([[" + path_of(key) + "]]), found " + type_name(node));
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto* element = array->get(i);
    if (!element->is_table())
      fail(key, "element " + std::to_string(i) + " is " + type_name(*element) + ", expected a table");
    result.emplace_back(document_, element, path_of(key) + "." + std::to_string(i));
  }
  return result;
}

}  // namespace liembs
