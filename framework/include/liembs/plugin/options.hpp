#pragma once
// A plugin's options, declared once (issue 32 item 4): key, type, default, admissible values
// and a one-line description. The plugin reads its TOML section through the declaration, so
// the default and the range it applies are the ones `liembs plugins --options NAME` prints and
// docs/plugin-options.md shows; the host refuses keys the declaration does not name before the
// plugin sees them (Registry::create_component).
//
//   const liembs::OptionDeclaration options{
//       liembs::OptionSpec::number("rho_infinity", 0.9, liembs::Range::closed(0, 1), "spectral radius at h -> inf"),
//       liembs::OptionSpec::choice("constraint_level", {"index3", "index2-stabilized"}, "index2-stabilized", "...")};
//   registrar.add<Integrator>("name", "1.0", "summary", options, factory);
//   ... in the factory: double rho = options.number(table, "rho_infinity");
#include <liembs/util/range.hpp>

#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

// A view of the plugin's TOML table (liembs/config/config_table.hpp). The contract names it by
// declaration only: the application library defines it and the readers below
// (src/config/option_readers.cpp), since only the application creates plugins from files.
class ConfigTable;

enum class OptionType { number, integer, boolean, string, choice, numbers, strings, number_rows };

std::string_view to_string(OptionType type);

struct OptionSpec {
  std::string key;
  OptionType type = OptionType::number;
  std::string description;
  // Whether an absent key stands for a value: the typed default below for the option's type
  // (number, integer, boolean; choice or string without quotes). Without one, `absent` says
  // what leaving the key out means, or the key is required when `absent` is empty too.
  bool has_default = false;
  std::string absent;
  double number_default = 0.0;
  long long integer_default = 0;
  bool boolean_default = false;
  std::string text_default;
  Range range;  // number, numbers
  long long min = std::numeric_limits<long long>::min(), max = std::numeric_limits<long long>::max();  // integer
  std::vector<std::string> choices;  // choice

  bool required() const { return !has_default && absent.empty(); }
  // The default in TOML syntax ("0.9", "\"rk4\"", "true"), written from the typed default;
  // empty without one.
  std::string default_value() const;
  // For tables: "0.9" / "absent: automatic (...)" / "required".
  std::string default_text() const;
  // "[0, 1]", "> 0", "1 to 5", "\"a\" or \"b\"", "" for any.
  std::string range_text() const;

  static OptionSpec number(std::string key, double fallback, Range range, std::string description);
  static OptionSpec integer(std::string key, long long fallback, long long min, long long max, std::string description);
  static OptionSpec boolean(std::string key, bool fallback, std::string description);
  static OptionSpec choice(std::string key, std::vector<std::string> allowed, std::string fallback,
                           std::string description);
  static OptionSpec string(std::string key, std::string fallback, std::string description);
  static OptionSpec optional_boolean(std::string key, std::string absent, std::string description);
  // A key without a default value: `absent` says what leaving it out does (empty: required).
  static OptionSpec optional(OptionSpec spec, std::string absent);
  static OptionSpec required_number(std::string key, Range range, std::string description);
  static OptionSpec required_integer(std::string key, long long min, long long max, std::string description);
  static OptionSpec numbers(std::string key, Range range, std::string absent, std::string description);
  static OptionSpec strings(std::string key, std::string absent, std::string description);
  static OptionSpec number_rows(std::string key, std::string absent, std::string description);
};

class OptionDeclaration {
 public:
  OptionDeclaration() = default;
  OptionDeclaration(std::initializer_list<OptionSpec> specs);
  OptionDeclaration(std::vector<OptionSpec> specs);
  // Adds specs declared elsewhere (options several plugins share, e.g. newton_derivatives).
  OptionDeclaration& add(const std::vector<OptionSpec>& specs);

  const std::vector<OptionSpec>& specs() const { return specs_; }
  // The declaration of `key`; std::logic_error when it has none (a plugin reading an
  // undeclared key is a bug of the plugin, found by the test that creates every plugin).
  const OptionSpec& spec(std::string_view key, OptionType type) const;

  // Reads through the declaration: the declared default when the key is absent, the declared
  // range or choices checked (ConfigError naming file, line and key). Defined in the
  // application library (src/config/option_readers.cpp).
  double number(const ConfigTable& table, std::string_view key) const;
  long long integer(const ConfigTable& table, std::string_view key) const;
  bool boolean(const ConfigTable& table, std::string_view key) const;
  std::string choice(const ConfigTable& table, std::string_view key) const;
  std::string string(const ConfigTable& table, std::string_view key) const;
  // Keys without a default value: nullopt when absent.
  std::optional<double> optional_number(const ConfigTable& table, std::string_view key) const;
  std::optional<std::string> optional_choice(const ConfigTable& table, std::string_view key) const;
  std::optional<bool> optional_boolean(const ConfigTable& table, std::string_view key) const;
  std::vector<double> numbers(const ConfigTable& table, std::string_view key) const;
  std::vector<std::string> strings(const ConfigTable& table, std::string_view key) const;
  std::vector<std::vector<double>> number_rows(const ConfigTable& table, std::string_view key) const;

 private:
  std::vector<OptionSpec> specs_;
};

}  // namespace liembs
