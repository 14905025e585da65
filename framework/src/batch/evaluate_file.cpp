// `liembs eval` on files: CSV and .npy in and out, parsed, evaluated and formatted on the
// batch's threads (liembs/batch/evaluate_file.hpp).
#include <liembs/batch/evaluate_file.hpp>

#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/csv.hpp>
#include <liembs/io/npy.hpp>
#include <liembs/util/interrupt.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

namespace liembs {

bool is_npy_path(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension == ".npy";
}

namespace {

constexpr std::size_t read_size = std::size_t{4} << 20;  // bytes of CSV read at a time
constexpr std::size_t npy_chunk_rows = 32768;

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

// The output file: CSV rows formatted on the threads into slots of a shared buffer, or
// .npy values written as they are. Opened before the first row is read, so that an
// unwritable output fails early.
class OutputWriter {
 public:
  OutputWriter(const std::filesystem::path& path, const std::vector<std::string>& copied_header,
               const std::vector<std::string>& outputs)
      : file_(path), npy_(is_npy_path(path)), width_(outputs.size()) {
    auto& out = file_.stream();
    if (npy_) {
      out << npy::header_bytes(0, width_, true);  // the row count is written at the end
    } else {
      std::string header;
      for (const auto& name : copied_header) header += (header.empty() ? "" : ",") + name;
      for (const auto& name : outputs) header += (header.empty() ? "" : ",") + csv::quote_if_needed(name);
      out << header << '\n';
    }
  }

  bool csv() const { return !npy_; }

  // CSV: reserve a slot per row of at most `copied_bytes[row]` bytes of copied text.
  template <class CopiedBytes>
  void prepare_slots(std::size_t rows, CopiedBytes&& copied_bytes) {
    slot_begin_.resize(rows + 1);
    slot_length_.assign(rows, 0);
    std::size_t offset = 0;
    for (std::size_t row = 0; row < rows; ++row) {
      slot_begin_[row] = offset;
      offset += copied_bytes(row) + width_ * (csv::max_number_chars + 1) + 2;
    }
    slot_begin_[rows] = offset;
    if (text_.size() < offset) text_.resize(offset);
  }

  // Formats one CSV row (copied fields first) into its slot; called on the threads.
  template <class Copied>
  void format_row(std::size_t row, const Copied& copied, const double* values) {
    char* const begin = text_.data() + slot_begin_[row];
    char* out = begin;
    bool first = true;
    for (const std::string_view field : copied) {
      if (!first) *out++ = ',';
      std::memcpy(out, field.data(), field.size());
      out += field.size();
      first = false;
    }
    for (std::size_t c = 0; c < width_; ++c) {
      if (!first) *out++ = ',';
      out = csv::append_number(out, values[c]);
      first = false;
    }
    *out++ = '\n';
    slot_length_[row] = static_cast<std::size_t>(out - begin);
  }

  void write_chunk(std::size_t rows, const double* values) {
    auto& out = file_.stream();
    if (npy_) {
      out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(rows * width_ * sizeof(double)));
    } else {
      std::size_t end = 0;  // compacts the slots in place, then writes once
      for (std::size_t row = 0; row < rows; ++row) {
        std::memmove(text_.data() + end, text_.data() + slot_begin_[row], slot_length_[row]);
        end += slot_length_[row];
      }
      out.write(text_.data(), static_cast<std::streamsize>(end));
    }
    rows_ += rows;
    file_.check();
  }

  void commit() {
    if (npy_) {
      auto& out = file_.stream();
      out.seekp(0);
      out << npy::header_bytes(rows_, width_, true);
    }
    file_.commit();
  }

 private:
  AtomicFile file_;
  bool npy_;
  std::size_t width_;
  std::size_t rows_ = 0;
  std::vector<char> text_;
  std::vector<std::size_t> slot_begin_, slot_length_;
};

[[noreturn]] void not_finite(const std::string& column, std::string_view text) {
  throw ConfigError("column '" + column + "': '" + std::string(text) + "' is not a finite number");
}

FileEvaluation evaluate_npy(BatchEvaluation& batch, const std::filesystem::path& states_path,
                            const std::filesystem::path& output_path, const std::string& algorithm) {
  const std::string states = states_path.string();
  const auto& inputs = batch.input_columns();
  const std::size_t width = inputs.size(), out_width = batch.output_count();
  std::ifstream in(states_path, std::ios::binary);
  std::error_code size_error;
  const auto size = std::filesystem::file_size(states_path, size_error);
  if (!in || size_error) throw Error(states + ": cannot read the states file");
  const npy::Header header = npy::read_header(in, states, size);
  if (header.columns != width)
    throw ConfigError(states + ": the array has " + std::to_string(header.columns) + " columns; the " +
                      std::to_string(width) + " inputs of algorithm '" + algorithm + "' are, in this order: " + joined(inputs));

  OutputWriter output(output_path, {}, batch.output_columns());
  FileEvaluation result;
  std::vector<double> values, outputs, column;
  const auto where = [&] { return "after " + std::to_string(result.rows) + " state(s) of " + states; };
  for (std::size_t start = 0; start < header.rows; start += npy_chunk_rows) {
    throw_if_interrupted(where);
    const std::size_t rows = std::min(npy_chunk_rows, header.rows - start);
    values.resize(rows * width);
    if (!header.fortran_order) {
      in.seekg(static_cast<std::streamoff>(header.data_offset + 8 * start * width));
      in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * 8));
    } else {  // column after column: gather this chunk's part of every column
      column.resize(rows);
      for (std::size_t c = 0; c < width && in; ++c) {
        in.seekg(static_cast<std::streamoff>(header.data_offset + 8 * (c * header.rows + start)));
        in.read(reinterpret_cast<char*>(column.data()), static_cast<std::streamsize>(rows * 8));
        for (std::size_t r = 0; r < rows; ++r) values[r * width + c] = column[r];
      }
    }
    if (!in) throw Error(states + ": read error");
    outputs.resize(rows * out_width);
    if (output.csv()) output.prepare_slots(rows, [](std::size_t) { return 0; });
    BatchMessages messages;
    messages.row_prefix = [&](std::size_t row) { return states + ": row " + std::to_string(start + row) + ": "; };
    messages.interrupted_where = [&](std::size_t) { return where(); };
    batch.for_each_row(
        rows,
        [&](BatchEvaluator& evaluator, unsigned, std::size_t row) {
          const double* state = values.data() + row * width;
          for (std::size_t c = 0; c < width; ++c)
            if (!std::isfinite(state[c])) not_finite(inputs[c], std::isnan(state[c]) ? "nan" : state[c] > 0 ? "inf" : "-inf");
          double* out = outputs.data() + row * out_width;
          evaluator.evaluate(state, out);
          if (output.csv()) output.format_row(row, std::array<std::string_view, 0>{}, out);
        },
        messages);
    output.write_chunk(rows, outputs.data());
    result.rows += rows;
  }
  throw_if_interrupted(where);
  output.commit();
  return result;
}

// Reads a file (or FIFO) in large pieces; returns false at its end.
class FileReader {
 public:
  explicit FileReader(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw Error(path + ": cannot read the states file");
  }
  ~FileReader() { ::close(fd_); }
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  // Appends up to read_size bytes to `buffer`.
  bool append_to(std::string& buffer) {
    const std::size_t old = buffer.size();
    buffer.resize(old + read_size);
    ssize_t count;
    do count = ::read(fd_, buffer.data() + old, read_size);
    while (count < 0 && errno == EINTR && !pending_interrupt());
    if (count < 0) {
      const int error = errno;
      buffer.resize(old);
      if (error == EINTR) return true;  // a signal: the caller checks for it
      throw Error(path_ + ": cannot read the states file: " + std::strerror(error));
    }
    buffer.resize(old + static_cast<std::size_t>(count));
    return count > 0;
  }

 private:
  std::string path_;
  int fd_;
};

FileEvaluation evaluate_csv(BatchEvaluation& batch, const std::filesystem::path& states_path,
                            const std::filesystem::path& output_path, const std::string& algorithm) {
  const std::string states = states_path.string();
  const auto& inputs = batch.input_columns();
  const std::size_t width = inputs.size(), out_width = batch.output_count();
  FileReader reader(states);
  FileEvaluation result;
  const auto where = [&] { return "after " + std::to_string(result.rows) + " state(s) of " + states; };

  std::string buffer;
  std::size_t consumed = 0;  // bytes of `buffer` already taken into records
  bool more = true;
  const auto read_more = [&] {
    buffer.erase(0, consumed);
    consumed = 0;
    more = reader.append_to(buffer);
    throw_if_interrupted(where);
  };

  // The header: the first record, its fields unquoted (RFC 4180).
  std::size_t breaks = 0, end;
  while ((end = csv::record_end(buffer, breaks)) == std::string::npos && more) read_more();
  if (buffer.empty()) throw ConfigError(states + ":1: the file is empty; expected a header row");
  if (end == std::string::npos) end = buffer.size();
  const std::size_t bom = buffer.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a UTF-8 byte order mark
  std::vector<std::string_view> raw_header;
  csv::split_record(std::string_view(buffer).substr(bom, end - bom), raw_header);
  std::vector<std::string> header;
  std::map<std::string, std::size_t> column_of;
  for (std::size_t c = 0; c < raw_header.size(); ++c) {
    header.push_back(csv::unquote(raw_header[c]));
    if (header[c].empty()) throw ConfigError(states + ":1: column " + std::to_string(c + 1) + " has no name");
    if (!column_of.emplace(header[c], c).second) throw ConfigError(states + ":1: column '" + header[c] + "' appears twice");
  }
  std::vector<std::size_t> input_index;
  for (const auto& name : inputs) {
    const auto found = column_of.find(name);
    if (found == column_of.end())
      throw ConfigError(states + ":1: missing column '" + name + "'; the inputs of algorithm '" + algorithm +
                        "' are: " + joined(inputs));
    input_index.push_back(found->second);
  }
  std::vector<std::size_t> copied;  // other columns (e.g. time) are copied to a CSV output
  std::vector<std::string> copied_header;
  for (std::size_t c = 0; c < header.size(); ++c)
    if (std::find(input_index.begin(), input_index.end(), c) == input_index.end()) {
      copied.push_back(c);
      copied_header.emplace_back(raw_header[c]);  // as written, quotes and all
    }
  const std::size_t fields = header.size();
  OutputWriter output(output_path, copied_header, batch.output_columns());
  if (!output.csv()) result.dropped_columns.assign(copied_header.begin(), copied_header.end());
  std::size_t line = 2 + breaks;  // the line the next record starts on
  consumed = std::min(buffer.size(), end + 1);

  std::vector<std::string_view> records;
  std::vector<std::size_t> lines;
  std::vector<double> values, outputs;
  std::vector<std::vector<std::string_view>> split(std::max(1u, batch.threads()));
  std::vector<std::vector<std::string_view>> copied_fields(split.size());
  for (auto& list : split) list.reserve(fields + 1);
  for (auto& list : copied_fields) list.reserve(copied.size());
  for (;;) {
    // Every complete record in the buffer (the last one also at the end of the file).
    records.clear();
    lines.clear();
    while (consumed < buffer.size()) {
      const std::string_view rest = std::string_view(buffer).substr(consumed);
      std::size_t record_length = csv::record_end(rest, breaks);
      if (record_length == std::string_view::npos) {
        if (more) break;  // read on for the rest of it
        record_length = rest.size();
      }
      const std::string_view record = rest.substr(0, record_length);
      if (!csv::is_blank(record)) {
        records.push_back(record);
        lines.push_back(line);
      }
      line += 1 + breaks;
      consumed += std::min(rest.size(), record_length + 1);
    }
    const std::size_t rows = records.size();
    if (rows > 0) {
      values.resize(rows * width);
      outputs.resize(rows * out_width);
      if (output.csv()) output.prepare_slots(rows, [&](std::size_t row) { return records[row].size(); });
      BatchMessages messages;
      messages.row_prefix = [&](std::size_t row) { return states + ":" + std::to_string(lines[row]) + ": "; };
      messages.interrupted_where = [&](std::size_t) { return where(); };
      batch.for_each_row(
          rows,
          [&](BatchEvaluator& evaluator, unsigned worker, std::size_t row) {
            auto& field = split[worker];
            csv::split_record(records[row], field);
            if (field.size() != fields)
              throw ConfigError(std::to_string(field.size()) + " fields, the header has " + std::to_string(fields));
            double* state = values.data() + row * width;
            for (std::size_t i = 0; i < width; ++i)
              if (!csv::parse_finite(field[input_index[i]], state[i])) not_finite(inputs[i], field[input_index[i]]);
            double* out = outputs.data() + row * out_width;
            evaluator.evaluate(state, out);
            if (output.csv()) {
              auto& kept = copied_fields[worker];
              kept.clear();
              for (const std::size_t c : copied) kept.push_back(field[c]);
              output.format_row(row, kept, out);
            }
          },
          messages);
      output.write_chunk(rows, outputs.data());
      result.rows += rows;
    }
    if (!more && consumed >= buffer.size()) break;
    read_more();
  }
  throw_if_interrupted(where);
  output.commit();
  return result;
}

}  // namespace

FileEvaluation evaluate_file(BatchEvaluation& batch, const std::filesystem::path& states,
                             const std::filesystem::path& output, const std::string& algorithm) {
  return is_npy_path(states) ? evaluate_npy(batch, states, output, algorithm) : evaluate_csv(batch, states, output, algorithm);
}

}  // namespace liembs
