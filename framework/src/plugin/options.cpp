#include <liembs/plugin/options.hpp>
#include <liembs/util/format.hpp>

#include <cmath>
#include <stdexcept>

namespace liembs {

std::string_view to_string(OptionType type) {
  switch (type) {
    case OptionType::number: return "number";
    case OptionType::integer: return "integer";
    case OptionType::boolean: return "boolean";
    case OptionType::string: return "string";
    case OptionType::choice: return "choice";
    case OptionType::numbers: return "array of numbers";
    case OptionType::strings: return "array of strings";
    case OptionType::number_rows: return "array of arrays of numbers";
  }
  return "?";
}

namespace {

std::string in_quotes(const std::string& text) { return "\"" + text + "\""; }

OptionSpec make(std::string key, OptionType type, std::string description) {
  OptionSpec spec;
  spec.key = std::move(key);
  spec.type = type;
  spec.description = std::move(description);
  return spec;
}

}  // namespace

std::string OptionSpec::default_value() const {
  if (!has_default) return "";
  switch (type) {
    case OptionType::number: return shortest_number(number_default);
    case OptionType::integer: return std::to_string(integer_default);
    case OptionType::boolean: return boolean_default ? "true" : "false";
    case OptionType::choice:
    case OptionType::string: return in_quotes(text_default);
    default: throw std::logic_error("option " + key + ": a list type has no default value");
  }
}

std::string OptionSpec::default_text() const {
  if (has_default) return default_value();
  if (!absent.empty()) return "absent: " + absent;
  return "required";
}

std::string OptionSpec::range_text() const {
  switch (type) {
    case OptionType::number:
    case OptionType::numbers: return std::isfinite(range.min) || std::isfinite(range.max) ? range.describe() : "";
    case OptionType::integer: {
      const bool has_min = min != std::numeric_limits<long long>::min(), has_max = max != std::numeric_limits<long long>::max();
      if (has_min && has_max) return std::to_string(min) + " to " + std::to_string(max);
      if (has_min) return ">= " + std::to_string(min);
      if (has_max) return "<= " + std::to_string(max);
      return "";
    }
    case OptionType::choice: {
      std::string text;
      for (std::size_t i = 0; i < choices.size(); ++i)
        text += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + in_quotes(choices[i]);
      return text;
    }
    default: return "";
  }
}

OptionSpec OptionSpec::number(std::string key, double fallback, Range range, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::number, std::move(description));
  spec.range = range;
  spec.has_default = true;
  spec.number_default = fallback;
  if (!range.contains(fallback)) throw std::logic_error("option " + spec.key + ": the default is outside the range");
  return spec;
}

OptionSpec OptionSpec::integer(std::string key, long long fallback, long long min, long long max,
                               std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::integer, std::move(description));
  spec.min = min;
  spec.max = max;
  spec.has_default = true;
  spec.integer_default = fallback;
  if (fallback < min || fallback > max) throw std::logic_error("option " + spec.key + ": the default is outside the range");
  return spec;
}

OptionSpec OptionSpec::boolean(std::string key, bool fallback, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::boolean, std::move(description));
  spec.has_default = true;
  spec.boolean_default = fallback;
  return spec;
}

OptionSpec OptionSpec::choice(std::string key, std::vector<std::string> allowed, std::string fallback,
                              std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::choice, std::move(description));
  spec.choices = std::move(allowed);
  if (!fallback.empty()) {
    bool known = false;
    for (const auto& choice : spec.choices) known = known || choice == fallback;
    if (!known) throw std::logic_error("option " + spec.key + ": the default is not one of the choices");
    spec.has_default = true;
    spec.text_default = fallback;
  }
  return spec;
}

OptionSpec OptionSpec::string(std::string key, std::string fallback, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::string, std::move(description));
  spec.has_default = true;
  spec.text_default = fallback;
  return spec;
}

OptionSpec OptionSpec::optional_boolean(std::string key, std::string absent, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::boolean, std::move(description));
  spec.absent = std::move(absent);
  return spec;
}

OptionSpec OptionSpec::optional(OptionSpec spec, std::string absent) {
  spec.has_default = false;
  spec.absent = std::move(absent);
  return spec;
}

OptionSpec OptionSpec::required_number(std::string key, Range range, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::number, std::move(description));
  spec.range = range;
  return spec;
}

OptionSpec OptionSpec::required_integer(std::string key, long long min, long long max, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::integer, std::move(description));
  spec.min = min;
  spec.max = max;
  return spec;
}

OptionSpec OptionSpec::numbers(std::string key, Range range, std::string absent, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::numbers, std::move(description));
  spec.range = range;
  spec.absent = std::move(absent);
  return spec;
}

OptionSpec OptionSpec::strings(std::string key, std::string absent, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::strings, std::move(description));
  spec.absent = std::move(absent);
  return spec;
}

OptionSpec OptionSpec::number_rows(std::string key, std::string absent, std::string description) {
  OptionSpec spec = make(std::move(key), OptionType::number_rows, std::move(description));
  spec.absent = std::move(absent);
  return spec;
}

OptionDeclaration::OptionDeclaration(std::initializer_list<OptionSpec> specs) : specs_(specs) {}
OptionDeclaration::OptionDeclaration(std::vector<OptionSpec> specs) : specs_(std::move(specs)) {}

OptionDeclaration& OptionDeclaration::add(const std::vector<OptionSpec>& specs) {
  specs_.insert(specs_.end(), specs.begin(), specs.end());
  return *this;
}

const OptionSpec& OptionDeclaration::spec(std::string_view key, OptionType type) const {
  for (const auto& spec : specs_)
    if (spec.key == key) {
      if (spec.type != type)
        throw std::logic_error("option '" + std::string(key) + "' is declared as " + std::string(to_string(spec.type)) +
                               " and read as " + std::string(to_string(type)));
      return spec;
    }
  throw std::logic_error("option '" + std::string(key) + "' is read but not declared");
}

}  // namespace liembs
