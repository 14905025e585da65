// CSV records and numbers (liembs/io/csv.hpp).
#include <liembs/io/csv.hpp>

#include <charconv>
#include <cmath>
#include <cstring>

namespace liembs::csv {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view field) {
  while (!field.empty() && blank(field.front())) field.remove_prefix(1);
  while (!field.empty() && blank(field.back())) field.remove_suffix(1);
  return field;
}

}  // namespace

std::size_t record_end(std::string_view text, std::size_t& line_breaks) {
  RecordScanner scanner;
  const std::size_t end = scanner.find(text);
  line_breaks = scanner.line_breaks();
  return end;
}

std::size_t RecordScanner::find(std::string_view text) {
  std::size_t i = scanned_;
  if (!quoted_ && i < text.size()) {  // the common case: a line break before any quote
    const std::size_t line_end = text.find('\n', i);
    const std::size_t scan_end = line_end == std::string_view::npos ? text.size() : line_end;
    if (std::memchr(text.data() + i, '"', scan_end - i) == nullptr) {
      scanned_ = scan_end;
      return line_end;
    }
  }
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') quoted_ = !quoted_;  // a doubled quote toggles twice
    else if (c == '\n') {
      if (!quoted_) {
        scanned_ = i;
        return i;
      }
      ++line_breaks_;
    }
  }
  scanned_ = text.size();
  return std::string_view::npos;
}

void split_record(std::string_view record, std::vector<std::string_view>& fields) {
  fields.clear();
  if (std::memchr(record.data(), '"', record.size()) == nullptr) {  // the common case: no quotes
    // memchr finds the commas 16 or 32 bytes at a time, where the loop below takes two
    // branches a byte (a 420-byte record of arm states: 21 fields)
    const char* begin = record.data();
    const char* const end = begin + record.size();
    for (const char* comma; (comma = static_cast<const char*>(std::memchr(begin, ',', end - begin))) != nullptr; begin = comma + 1)
      fields.push_back(trim(std::string_view(begin, comma - begin)));
    fields.push_back(trim(std::string_view(begin, end - begin)));
    return;
  }
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < record.size(); ++i) {
    const char c = record[i];
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) {
      fields.push_back(trim(record.substr(start, i - start)));
      start = i + 1;
    }
  }
  fields.push_back(trim(record.substr(start)));
}

std::string unquote(std::string_view field) {
  if (field.size() < 2 || field.front() != '"' || field.back() != '"') return std::string(field);
  std::string text;
  text.reserve(field.size() - 2);
  for (std::size_t i = 1; i + 1 < field.size(); ++i) {
    text += field[i];
    if (field[i] == '"' && field[i + 1] == '"') ++i;
  }
  return text;
}

std::string quote_if_needed(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

bool parse_finite(std::string_view field, double& value) {
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') field = trim(field.substr(1, field.size() - 2));
  if (!field.empty() && field.front() == '+') {  // from_chars takes '-' only
    field.remove_prefix(1);
    if (!field.empty() && (field.front() == '+' || field.front() == '-')) return false;
  }
  if (field.empty()) return false;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value, std::chars_format::general);
  return error == std::errc() && end == field.data() + field.size() && std::isfinite(value);
}

char* append_number(char* out, double value) { return std::to_chars(out, out + max_number_chars, value).ptr; }

bool is_blank(std::string_view line) {
  for (const char c : line)
    if (!blank(c)) return false;
  return true;
}

}  // namespace liembs::csv
