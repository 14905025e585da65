// Reading a plugin's TOML table through its option declaration (liembs/plugin/options.hpp):
// the declared default when a key is absent, the declared range or choices checked.
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/options.hpp>

#include <stdexcept>

namespace liembs {

double OptionDeclaration::number(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::number);
  if (!s.has_default) return table.number(key, s.range);
  return table.number_or(key, s.number_default, s.range);
}

long long OptionDeclaration::integer(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::integer);
  if (!s.has_default) return table.integer(key, s.min, s.max);
  return table.integer_or(key, s.integer_default, s.min, s.max);
}

bool OptionDeclaration::boolean(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::boolean);
  if (!s.has_default) throw std::logic_error("option '" + s.key + "' has no default; read it with contains()");
  return table.boolean_or(key, s.boolean_default);
}

std::string OptionDeclaration::choice(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::choice);
  if (!s.has_default) return table.choice(key, s.choices);
  return table.choice_or(key, s.choices, s.text_default);
}

std::string OptionDeclaration::string(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::string);
  if (!s.has_default) return table.string(key);
  return table.string_or(key, s.text_default);
}

std::optional<double> OptionDeclaration::optional_number(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::number);
  if (!table.contains(key)) return std::nullopt;
  return table.number(key, s.range);
}

std::optional<std::string> OptionDeclaration::optional_choice(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::choice);
  if (!table.contains(key)) return std::nullopt;
  return table.choice(key, s.choices);
}

std::optional<bool> OptionDeclaration::optional_boolean(const ConfigTable& table, std::string_view key) const {
  spec(key, OptionType::boolean);
  if (!table.contains(key)) return std::nullopt;
  return table.boolean_or(key, false);
}

std::vector<double> OptionDeclaration::numbers(const ConfigTable& table, std::string_view key) const {
  const OptionSpec& s = spec(key, OptionType::numbers);
  return table.numbers(key, s.range);
}

std::vector<std::string> OptionDeclaration::strings(const ConfigTable& table, std::string_view key) const {
  spec(key, OptionType::strings);
  return table.strings_or(key, {});
}

std::vector<std::vector<double>> OptionDeclaration::number_rows(const ConfigTable& table, std::string_view key) const {
  spec(key, OptionType::number_rows);
  return table.number_rows(key);
}

}  // namespace liembs
