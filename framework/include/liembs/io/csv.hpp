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

// record_end for a record read piece by piece: find() scans only the bytes it has not seen,
// so a record that is completed by many reads (a stray quote runs to the end of the file) is
// scanned once, not once per read (which made a 117 MB file with a '"' in row 2 take 72 s).
class RecordScanner {
 public:
  // The end of the record that starts at text[0], as record_end. Between calls, `text` must
  // hold the same record's bytes, possibly more of them, until reset().
  std::size_t find(std::string_view text);
  std::size_t line_breaks() const { return line_breaks_; }
  void reset() { *this = RecordScanner(); }

 private:
  std::size_t scanned_ = 0, line_breaks_ = 0;
  bool quoted_ = false;
};

// The longest record (header or row) a states file may have: reading stops there with an
// error, so a file without line breaks (/dev/zero) or a quote never closed does not fill the
// memory. A row of 100,000 columns fits (24 bytes a number).
inline constexpr std::size_t max_record_bytes = std::size_t{16} << 20;

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
