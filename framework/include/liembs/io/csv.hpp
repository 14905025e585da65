#pragma once
// CSV text as `liembs eval` reads and writes it (RFC 4180): records end at a line break
// outside quotes; a field may be quoted ("a,b", "say ""hi"""), and then holds commas,
// quotes (doubled) and line breaks. Numbers are read and written in the C locale with
// std::from_chars / std::to_chars: shortest text that reads back to the same double.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace liembs::csv {

// The end of the record starting at `text[0]`: the index of the line break that ends it, or
// std::string_view::npos if the text ends first (inside quotes or without a final line
// break). `line_breaks` counts the line breaks inside quoted fields of the record.
std::size_t record_end(std::string_view text, std::size_t& line_breaks);

// Splits a record into its fields, raw (quotes kept) and trimmed of blanks (space, tab,
// carriage return) outside quotes. Clears `fields` first; keeps its capacity.
void split_record(std::string_view record, std::vector<std::string_view>& fields);

// The text of a raw field: outer quotes removed and doubled quotes undone.
std::string unquote(std::string_view field);

// Quotes `text` if it holds a comma, quote or line break (for writing a header).
std::string quote_if_needed(std::string_view text);

// Reads a finite double from a raw field (a leading '+' and enclosing quotes allowed);
// false for anything else: empty, trailing characters, nan, inf, out of double range.
bool parse_finite(std::string_view field, double& value);

// Longest text append_number writes: "-2.2250738585072014e-308".
inline constexpr std::size_t max_number_chars = 24;

// Writes the shortest text that reads back to `value` at `out`; returns the end.
char* append_number(char* out, double value);

// Whether a line holds only blanks.
bool is_blank(std::string_view line);

}  // namespace liembs::csv
