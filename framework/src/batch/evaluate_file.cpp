// `liembs eval` on files: CSV and .npy in and out, parsed, evaluated and formatted on the
// batch's threads (liembs/batch/evaluate_file.hpp).
#include <liembs/batch/evaluate_file.hpp>
#include <liembs/io/file_guard.hpp>

#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/csv.hpp>
#include <liembs/io/npy.hpp>
#include <liembs/util/interrupt.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace liembs {

bool is_npy_path(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension == ".npy";
}

namespace {

// Appends `field` to a comma-separated list. Appending the separator and the field one
// after the other (not `(empty ? "" : ",") + field`, a temporary string) also keeps GCC 12
// from a false -Wrestrict about std::operator+(const char*, std::string&&).
void append_field(std::string& list, std::string_view field) {
  if (!list.empty()) list += ',';
  list += field;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) append_field(text, name);
  return text;
}

// Writes a CSV row at `out`: the copied fields, then `width` numbers; returns its end. At
// most the copied fields' bytes + width * (csv::max_number_chars + 1) + 2.
template <class Copied>
char* format_csv_row(char* out, const Copied& copied, const double* values, std::size_t width) {
  bool first = true;
  for (const std::string_view field : copied) {
    if (!first) *out++ = ',';
    std::memcpy(out, field.data(), field.size());
    out += field.size();
    first = false;
  }
  for (std::size_t c = 0; c < width; ++c) {
    if (!first) *out++ = ',';
    out = csv::append_number(out, values[c]);
    first = false;
  }
  *out++ = '\n';
  return out;
}

// One piece of the file in flight. Two alternate: while the threads evaluate chunk k, the
// calling thread writes chunk k-1 and then reads chunk k+1 into the same buffers
// (for_each_round's `alongside`), so reading, splitting records and writing overlap the rows.
struct Chunk {
  std::size_t rows = 0;
  std::size_t first_row = 0;              // .npy: the index of the chunk's first row
  std::vector<double> values;             // .npy: rows x the input columns
  std::string text;                       // CSV: the text holding the records
  std::vector<std::string_view> records;  // CSV: the non-blank records in `text`
  std::vector<std::size_t> lines;         // CSV: the line each record starts on
  std::size_t consumed = 0;               // CSV: bytes of `text` taken; the rest starts the next chunk
  std::vector<double> outputs;            // rows x the output columns
  std::vector<char> formatted;            // CSV output: a slot per row, formatted on the threads
  std::vector<std::size_t> slot_begin, slot_length;
};

// The output file: CSV rows formatted on the threads into the slots of their chunk, or
// .npy values written as they are. Opened before the first row is read, so that an
// unwritable output fails early.
class OutputWriter {
 public:
  OutputWriter(const std::filesystem::path& path, const std::vector<std::string>& copied_header,
               const std::vector<std::string>& outputs)
      : file_(path), npy_(is_npy_path(path)), width_(outputs.size()) {
    std::string header;
    if (npy_) {
      header = npy::header_bytes(0, width_, true);  // the row count is written at the end
    } else {
      for (const auto& name : copied_header) append_field(header, name);
      for (const auto& name : outputs) append_field(header, csv::quote_if_needed(name));
      header += '\n';
    }
    file_.stream() << header;
    data_offset_ = header.size();
  }

  bool csv() const { return !npy_; }
  std::size_t width() const { return width_; }

  // An output written at offsets by the threads (pwrite): where its data starts (after the
  // header), the file to open, and the rows a .npy output will hold when committed.
  std::uint64_t data_offset() const { return data_offset_; }
  const std::filesystem::path& temporary_path() const { return file_.temporary_path(); }
  void add_rows(std::size_t rows) { rows_ += rows; }

  // Sizes a chunk's outputs; for CSV a slot per row of at most `copied_bytes(row)` bytes of
  // copied text.
  template <class CopiedBytes>
  void prepare(Chunk& chunk, CopiedBytes&& copied_bytes) const {
    chunk.outputs.resize(chunk.rows * width_);
    if (npy_) return;
    chunk.slot_begin.resize(chunk.rows + 1);
    chunk.slot_length.assign(chunk.rows, 0);
    std::size_t offset = 0;
    for (std::size_t row = 0; row < chunk.rows; ++row) {
      chunk.slot_begin[row] = offset;
      offset += copied_bytes(row) + width_ * (csv::max_number_chars + 1) + 2;
    }
    chunk.slot_begin[chunk.rows] = offset;
    if (chunk.formatted.size() < offset) chunk.formatted.resize(offset);
  }

  // Formats one CSV row (copied fields first) into its slot; called on the threads.
  template <class Copied>
  void format_row(Chunk& chunk, std::size_t row, const Copied& copied) const {
    char* const begin = chunk.formatted.data() + chunk.slot_begin[row];
    chunk.slot_length[row] = static_cast<std::size_t>(format_csv_row(begin, copied, chunk.outputs.data() + row * width_, width_) - begin);
  }

  void write(Chunk& chunk) {
    auto& out = file_.stream();
    if (npy_) {
      out.write(reinterpret_cast<const char*>(chunk.outputs.data()),
                static_cast<std::streamsize>(chunk.rows * width_ * sizeof(double)));
    } else {
      std::size_t end = 0;  // compacts the slots in place, then writes once
      for (std::size_t row = 0; row < chunk.rows; ++row) {
        std::memmove(chunk.formatted.data() + end, chunk.formatted.data() + chunk.slot_begin[row], chunk.slot_length[row]);
        end += chunk.slot_length[row];
      }
      out.write(chunk.formatted.data(), static_cast<std::streamsize>(end));
    }
    rows_ += chunk.rows;
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
  std::uint64_t data_offset_ = 0;
};

// Runs the chunks through the threads, a round of BatchEvaluation::for_each_round per
// chunk, on threads started once for the file: `fill(next, current)` reads the chunk after
// `current` (nullptr: the first) and returns false when the file has no more rows;
// work(chunk, evaluator, worker, row) evaluates a row of a chunk and row_prefix(chunk, row)
// names it in an error; `rows_done` counts the rows finished, `where` says how far an
// interruption got.
template <class Fill, class Work, class RowPrefix>
void run_chunks(BatchEvaluation& batch, OutputWriter& output, std::size_t& rows_done, const std::function<std::string()>& where,
                const std::function<void(std::size_t rows)>& progress, Fill&& fill, Work&& work, RowPrefix&& row_prefix) {
  std::array<Chunk, 2> chunks;
  if (!fill(chunks[0], nullptr)) return;
  Chunk* current = &chunks[0];  // changed between rounds only, while every thread waits
  bool more = false;
  BatchMessages messages;
  messages.row_prefix = [&](std::size_t row) { return row_prefix(*current, row); };
  messages.interrupted_where = [&](std::size_t) { return where(); };
  messages.progress = progress;
  batch.for_each_round(
      current->rows,
      [&](std::size_t round) -> std::size_t {  // chunk round - 1 evaluated, chunk round read
        rows_done += current->rows;
        if (!more) return 0;
        current = &chunks[round % 2];
        return current->rows;
      },
      [&](BatchEvaluator& evaluator, unsigned worker, std::size_t row) { work(*current, evaluator, worker, row); },
      messages,
      [&](std::size_t round) {  // on the calling thread, while the others start on chunk `round`
        Chunk& other = chunks[(round + 1) % 2];  // chunk round - 1, then chunk round + 1
        more = false;
        if (round > 0) output.write(other);
        more = fill(other, current);
      });
  output.write(*current);
}

[[noreturn]] void not_finite(const std::string& column, std::string_view text) {
  constexpr std::size_t shown = 60;  // a field that runs on (a quote never closed) is cut short
  const std::string quoted = text.size() <= shown ? std::string(text)
                                                  : std::string(text.substr(0, shown)) + "... (" +
                                                        std::to_string(text.size()) + " bytes)";
  throw ConfigError("column '" + column + "': '" + quoted + "' is not a finite number");
}

// Throws for the first value of a .npy row that is not finite.
void check_finite(const std::vector<std::string>& columns, const double* state) {
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (!std::isfinite(state[c])) not_finite(columns[c], std::isnan(state[c]) ? "nan" : state[c] > 0 ? "inf" : "-inf");
}

// A record (the header, or the row starting on `line`) that has no end within
// csv::max_record_bytes: reading stops there.
[[noreturn]] void record_too_long(const std::string& states, std::uint64_t line) {
  throw ConfigError(states + ":" + std::to_string(line) + ": the record starting on this line goes on for more than " +
                    std::to_string(csv::max_record_bytes >> 20) +
                    " MiB without a line break outside quotes (a quote never closed, or not a CSV file)");
}

// A descriptor closed on every path.
class Descriptor {
 public:
  Descriptor(const std::filesystem::path& path, int flags, const std::string& error)
      : fd_(::open(path.c_str(), flags | O_CLOEXEC)) {
    if (fd_ < 0) throw Error(error + ": " + std::strerror(errno));
  }
  ~Descriptor() { ::close(fd_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Rows a thread reads (pread) or writes (pwrite) at a time on the .npy-to-.npy path.
constexpr std::size_t npy_window_rows = 256;

// A thread's window on a .npy input and output, on cache lines of its own: the rows
// [begin, end) of the input, and the outputs of the rows [out_begin, out_begin + out_rows).
struct alignas(64) NpyWindow {
  std::size_t begin = 0, end = 0, out_begin = 0, out_rows = 0;
  std::vector<double> in, out;
};

// pread/pwrite of exactly `bytes`, retried after partial transfers and EINTR.
template <class Transfer>
void transfer_all(Transfer&& transfer, char* data, std::size_t bytes, std::uint64_t offset, const std::string& error) {
  while (bytes > 0) {
    const ssize_t count = transfer(data, bytes, static_cast<off_t>(offset));
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) throw Error(error + (count < 0 ? std::string(": ") + std::strerror(errno) : std::string(": unexpected end")));
    data += count;
    bytes -= static_cast<std::size_t>(count);
    offset += static_cast<std::uint64_t>(count);
  }
}

// A C-order .npy input to a .npy output: every thread reads the rows it takes and writes
// their outputs itself, at their offsets, a window of rows at a time. No rows pass through
// another thread (the chunked path below moves each row's input and output between cores:
// 14 % more CPU a row of arm RNEA on 2 threads than on 1), and nothing runs alone but the
// header. The blocks of for_each_row are consecutive rows, so a window is read once.
void evaluate_npy_rows(BatchEvaluation& batch, const std::string& states, const npy::Header& header,
                       OutputWriter& output, std::size_t window_rows, FileEvaluation& result, const FileProgress& progress) {
  const auto& inputs = batch.input_columns();
  const std::size_t width = inputs.size(), out_width = batch.output_count();
  window_rows = std::max<std::size_t>(1, window_rows);
  const Descriptor input(states, O_RDONLY, states + ": cannot read the states file");
  const std::string output_name = output.temporary_path().string();
  const Descriptor output_file(output.temporary_path(), O_WRONLY, output_name + ": cannot write the output file");
  const std::uint64_t out_offset = output.data_offset();
  std::vector<NpyWindow> windows(std::max(1u, batch.threads()));
  for (NpyWindow& window : windows) {  // 8 more doubles each: the threads' buffers share no cache line
    window.in.resize(window_rows * width + 8);
    window.out.resize(window_rows * out_width + 8);
  }
  const auto flush = [&](NpyWindow& window) {
    if (window.out_rows == 0) return;
    transfer_all([&](char* data, std::size_t bytes, off_t at) { return ::pwrite(output_file.get(), data, bytes, at); },
                 reinterpret_cast<char*>(window.out.data()), window.out_rows * out_width * 8,
                 out_offset + 8ull * window.out_begin * out_width, output_name + ": writing the output file failed");
    window.out_rows = 0;
  };
  BatchMessages messages;
  messages.row_prefix = [&](std::size_t row) { return states + ": row " + std::to_string(row) + ": "; };
  messages.interrupted_where = [&](std::size_t done) { return "after " + std::to_string(done) + " state(s) of " + states; };
  if (progress) messages.progress = [&](std::size_t done) { progress(done, static_cast<double>(done) / header.rows); };
  batch.for_each_row(
      header.rows,
      [&](BatchEvaluator& evaluator, unsigned worker, std::size_t row) {
        NpyWindow& window = windows[worker];
        if (row < window.begin || row >= window.end) {
          window.begin = row;
          window.end = std::min(header.rows, row + window_rows);
          transfer_all([&](char* data, std::size_t bytes, off_t at) { return ::pread(input.get(), data, bytes, at); },
                       reinterpret_cast<char*>(window.in.data()), (window.end - row) * width * 8,
                       header.data_offset + 8ull * row * width, states + ": read error");
        }
        if (window.out_rows > 0 && (row != window.out_begin + window.out_rows || window.out_rows == window_rows)) flush(window);
        if (window.out_rows == 0) window.out_begin = row;
        const double* state = window.in.data() + (row - window.begin) * width;
        check_finite(inputs, state);
        evaluate_row(evaluator, state, window.out.data() + window.out_rows * out_width);
        ++window.out_rows;
      },
      messages);
  for (NpyWindow& window : windows) flush(window);
  output.add_rows(header.rows);
  result.rows = header.rows;
}

FileEvaluation evaluate_npy(BatchEvaluation& batch, const std::filesystem::path& states_path,
                            const std::filesystem::path& output_path, const std::string& algorithm,
                            const FileChunks& sizes, const FileProgress& progress) {
  const std::string states = states_path.string();
  const auto& inputs = batch.input_columns();
  const std::size_t width = inputs.size(), out_width = batch.output_count();
  std::error_code status_error;
  if (const auto status = std::filesystem::status(states_path, status_error);
      std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw ConfigError(states + ": a .npy states file must be a regular file (the array's size is checked against "
                               "the file's; a pipe or device has none): stream states as CSV instead");
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
  const auto where = [&] { return "after " + std::to_string(result.rows) + " state(s) of " + states; };
  if (!header.fortran_order && !output.csv()) {
    in.close();
    evaluate_npy_rows(batch, states, header, output, std::min(sizes.npy_rows, npy_window_rows), result, progress);
    throw_if_interrupted(where);
    output.commit();
    return result;
  }
  const std::size_t chunk_rows = std::max<std::size_t>(1, sizes.npy_rows);
  std::vector<double> column;
  const auto fill = [&](Chunk& chunk, const Chunk* before) {
    throw_if_interrupted(where);
    const std::size_t start = before ? before->first_row + before->rows : 0;
    if (start >= header.rows) return false;
    chunk.first_row = start;
    chunk.rows = std::min(chunk_rows, header.rows - start);
    chunk.values.resize(chunk.rows * width);
    if (!header.fortran_order) {
      in.seekg(static_cast<std::streamoff>(header.data_offset + 8 * start * width));
      in.read(reinterpret_cast<char*>(chunk.values.data()), static_cast<std::streamsize>(chunk.values.size() * 8));
    } else {  // column after column: gather this chunk's part of every column
      column.resize(chunk.rows);
      for (std::size_t c = 0; c < width && in; ++c) {
        in.seekg(static_cast<std::streamoff>(header.data_offset + 8 * (c * header.rows + start)));
        in.read(reinterpret_cast<char*>(column.data()), static_cast<std::streamsize>(chunk.rows * 8));
        for (std::size_t r = 0; r < chunk.rows; ++r) chunk.values[r * width + c] = column[r];
      }
    }
    if (!in) throw Error(states + ": read error");
    output.prepare(chunk, [](std::size_t) { return 0; });
    return true;
  };
  std::function<void(std::size_t)> rows_progress;
  if (progress) rows_progress = [&](std::size_t done) { progress(done, static_cast<double>(done) / header.rows); };
  run_chunks(
      batch, output, result.rows, where, rows_progress, fill,
      [&](Chunk& chunk, BatchEvaluator& evaluator, unsigned, std::size_t row) {
        const double* state = chunk.values.data() + row * width;
        check_finite(inputs, state);
        evaluate_row(evaluator, state, chunk.outputs.data() + row * out_width);
        if (output.csv()) output.format_row(chunk, row, std::array<std::string_view, 0>{});
      },
      [&](const Chunk& chunk, std::size_t row) { return states + ": row " + std::to_string(chunk.first_row + row) + ": "; });
  throw_if_interrupted(where);
  output.commit();
  return result;
}

// Reads a file (or FIFO) in large pieces; returns false at its end.
class FileReader {
 public:
  FileReader(const std::string& path, std::size_t read_size)
      : path_(path), read_size_(std::max<std::size_t>(1, read_size)), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw Error(path + ": cannot read the states file");
    struct stat status {};
    if (::fstat(fd_, &status) == 0 && S_ISREG(status.st_mode)) size_ = static_cast<std::uint64_t>(status.st_size);
  }
  ~FileReader() { ::close(fd_); }
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  // A regular file (read at offsets by the threads) rather than a pipe, and its size.
  bool regular() const { return size_.has_value(); }
  std::uint64_t size() const { return size_.value_or(0); }
  int descriptor() const { return fd_; }
  void set_read_size(std::size_t read_size) { read_size_ = std::max<std::size_t>(1, read_size); }

  // Appends up to read_size bytes to `buffer`.
  bool append_to(std::string& buffer) {
    const std::size_t old = buffer.size();
    buffer.resize(old + read_size_);
    ssize_t count;
    do count = ::read(fd_, buffer.data() + old, read_size_);
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
  std::size_t read_size_;
  int fd_;
  std::optional<std::uint64_t> size_;
};

// A worker's scratch for parsing a CSV row, on cache lines of its own: the vectors change
// with every field, so the objects are aligned and their buffers end in 64 unused bytes
// (two workers writing one cache line would pass it back and forth on every row).
struct alignas(64) CsvScratch {
  std::vector<std::string_view> fields, copied;
  std::vector<double> state;

  CsvScratch(std::size_t field_count, std::size_t copied_count, std::size_t width) {
    constexpr std::size_t pad = 64;
    fields.reserve(field_count + 1 + pad / sizeof(std::string_view));
    copied.reserve(copied_count + pad / sizeof(std::string_view));
    state.reserve(width + pad / sizeof(double));
    state.resize(width);
  }
};

// A regular CSV file is cut into blocks of bytes that the threads take one at a time, in
// order (for_each_block); a block's records are those that start in it. Each thread reads
// (pread), splits, parses, evaluates, formats and writes (pwrite) its blocks itself, so no
// row's text or output passes between cores, and only the header is read alone; with the
// chunks of a pipe, the calling thread read and split every record and wrote every output,
// and the others' rows crossed cores twice (7 to 11 % more CPU a row on 2 threads than on
// 1, idle). Where a block's first record starts, and its line and row, are known once the block
// before is split (a record may hold quoted line breaks, so only a scan from the header
// on finds where records start): the block before passes them on in a link.
constexpr std::uint64_t failed_link = std::numeric_limits<std::uint64_t>::max();

struct alignas(64) BlockLink {
  std::atomic<std::uint64_t> ready_for{0};     // 1 + the block the values are for
  std::uint64_t start = 0, line = 0, row = 0;  // start = failed_link: a block before failed
};

// Waits until `tag` (set with announce) holds `value`: spins for up to 20 µs, about the
// time a block takes to be split (64 KiB of arm states: 16 µs), then sleeps; a longer wait
// means the thread splitting it has lost its core, and spinning would only burn this one.
void await(const std::atomic<std::uint64_t>& tag, std::uint64_t value) {
  if (tag.load(std::memory_order_acquire) == value) return;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
  while (tag.load(std::memory_order_acquire) != value) {
    if (std::chrono::steady_clock::now() > give_up) {
      for (std::uint64_t now; (now = tag.load(std::memory_order_acquire)) != value;) tag.wait(now, std::memory_order_acquire);
      return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

void announce(std::atomic<std::uint64_t>& tag, std::uint64_t value) {
  tag.store(value, std::memory_order_release);
  tag.notify_all();
}

// A block's output (CSV text or .npy doubles), in a buffer of the thread that made it
// (grown on that thread and kept for its later blocks): `lent` while another thread is to
// write it.
struct OutputBuffer {
  std::vector<char> bytes;
  std::atomic<bool> lent{false};
};

// The blocks' outputs, written in file order at offsets known once every block before is
// done. A thread that ends a block before the blocks before it lends the output here and
// goes on with the next block in another buffer (waiting instead idled it while the block
// before was finished, or while that block's thread waited for a core); the thread that
// ends the missing block writes the outputs lent behind it and gives the buffers back.
// Freeing a lent buffer once written and allocating another instead cost 12 ms of kernel
// CPU more on 2 threads than on 1 for 100,000 arm states (6 %): glibc gave the freed pages
// of the threads' malloc arenas back, and they were faulted in again. At most `limit` are
// lent: a thread beyond that waits.
class OrderedOutput {
 public:
  OrderedOutput(int fd, std::string name, std::uint64_t offset, std::size_t limit)
      : fd_(fd), name_(std::move(name)), offset_(offset), limit_(limit) {}

  // Block `block`'s output: the first `size` bytes of `buffer`.
  void write(std::size_t block, OutputBuffer& buffer, std::size_t size) {
    std::vector<std::pair<Lent, std::uint64_t>> behind;  // written by this thread
    std::uint64_t at;
    {
      std::unique_lock lock(mutex_);
      if (block != next_) {
        changed_.wait(lock, [&] { return block == next_ || lent_.size() < limit_ || failed_; });
        if (failed_) return;
        if (block != next_) {
          buffer.lent.store(true, std::memory_order_relaxed);
          lent_.emplace(block, Lent{&buffer, size});
          return;
        }
      }
      at = offset_;
      offset_ += size;
      ++next_;
      for (auto found = lent_.find(next_); found != lent_.end(); found = lent_.find(next_)) {
        behind.emplace_back(found->second, offset_);
        offset_ += found->second.size;
        ++next_;
        lent_.erase(found);
      }
    }
    changed_.notify_all();
    put(buffer.bytes.data(), size, at);
    for (auto& [lent, offset] : behind) {
      put(lent.buffer->bytes.data(), lent.size, offset);
      lent.buffer->lent.store(false, std::memory_order_release);
    }
  }

  // A block failed: the outputs after it are not written, nobody waits.
  void fail() {
    {
      const std::lock_guard lock(mutex_);
      failed_ = true;
    }
    changed_.notify_all();
  }

 private:
  struct Lent {
    OutputBuffer* buffer;
    std::size_t size;
  };

  void put(char* data, std::size_t size, std::uint64_t at) const {
    transfer_all([&](char* from, std::size_t count, off_t offset) { return ::pwrite(fd_, from, count, offset); }, data,
                 size, at, name_ + ": writing the output file failed");
  }

  int fd_;
  std::string name_;
  std::uint64_t offset_;
  std::size_t limit_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0;  // the first block not written
  std::map<std::size_t, Lent> lent_;
  bool failed_ = false;
};

// Bytes read from a file, kept for the next read: unlike std::string::resize, growing it
// does not zero the bytes about to be read over (a memset of the whole file).
class ReadBuffer {
 public:
  std::string_view view() const { return {data_.get(), size_}; }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }

  // Reads up to `bytes` at `offset` of `fd` after the bytes held; false at the end of the file.
  bool read_at(int fd, std::size_t bytes, std::uint64_t offset, const std::string& states) {
    if (size_ + bytes > capacity_) {
      const std::size_t capacity = std::max(size_ + bytes, 2 * capacity_);
      auto data = std::make_unique_for_overwrite<char[]>(capacity);
      if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
      data_ = std::move(data);
      capacity_ = capacity;
    }
    ssize_t count;
    do count = ::pread(fd, data_.get() + size_, bytes, static_cast<off_t>(offset));
    while (count < 0 && errno == EINTR);
    if (count < 0) throw Error(states + ": cannot read the states file: " + std::strerror(errno));
    size_ += static_cast<std::size_t>(count);
    return count > 0;
  }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

// A thread's block: its bytes from the block's start on, its records, and its outputs; on
// cache lines of its own, its buffers grown on its thread.
struct alignas(64) CsvBlock {
  ReadBuffer text;
  std::vector<std::size_t> begins, lengths, lines;  // the non-blank records in `text`, and their lines
  std::vector<double> values;                       // a row's outputs (CSV output)
  std::deque<OutputBuffer> outputs;                 // (a deque: lent buffers do not move)
  std::size_t failed_block = std::numeric_limits<std::size_t>::max(), failed_line = 0;  // for the error's prefix

  // An output buffer not lent, of at least `size` bytes.
  OutputBuffer& free_output(std::size_t size) {
    auto found = std::find_if(outputs.begin(), outputs.end(), [](const OutputBuffer& o) { return !o.lent.load(std::memory_order_acquire); });
    OutputBuffer& buffer = found != outputs.end() ? *found : outputs.emplace_back();
    if (buffer.bytes.size() < size) buffer.bytes.resize(size);
    return buffer;
  }
};

FileEvaluation evaluate_csv(BatchEvaluation& batch, const std::filesystem::path& states_path,
                            const std::filesystem::path& output_path, const std::string& algorithm,
                            const FileChunks& sizes, const FileProgress& progress) {
  const std::string states = states_path.string();
  const auto& inputs = batch.input_columns();
  const std::size_t width = inputs.size(), out_width = batch.output_count();
  FileReader reader(states, sizes.csv_bytes);
  const std::size_t block_bytes = std::max<std::size_t>(1, sizes.csv_block_bytes);
  if (reader.regular()) reader.set_read_size(block_bytes);  // the header; the threads read the rest
  FileEvaluation result;
  const auto where = [&] { return "after " + std::to_string(result.rows) + " state(s) of " + states; };
  bool more = true;  // the file has more to read

  // The header: the first record, its fields unquoted (RFC 4180).
  std::string buffer;
  std::size_t end;
  csv::RecordScanner scanner;  // of the record being read
  while ((end = scanner.find(buffer)) == std::string::npos && more) {
    if (buffer.size() > csv::max_record_bytes) record_too_long(states, 1);
    more = reader.append_to(buffer);
    throw_if_interrupted(where);
  }
  std::size_t breaks = scanner.line_breaks();
  scanner.reset();
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
  const std::uint64_t data_begin = std::min(buffer.size(), end + 1);  // the first record's offset in the file
  // Blocks need the file's size: not for a pipe, nor for a file that holds more than its
  // size says (/proc, /sys).
  const bool in_blocks = reader.regular() && reader.size() >= buffer.size();
  buffer.erase(0, data_begin);

  std::vector<CsvScratch> scratch;
  scratch.reserve(std::max(1u, batch.threads()));
  for (unsigned worker = 0; worker < std::max(1u, batch.threads()); ++worker) scratch.emplace_back(fields, copied.size(), width);
  // Parses a record into own.state and evaluates it into `values`; the fields to copy into
  // a CSV output are left in own.copied. Throws for a bad record.
  const auto evaluate_record = [&](CsvScratch& own, BatchEvaluator& evaluator, std::string_view record, double* values) {
    csv::split_record(record, own.fields);
    if (own.fields.size() != fields)
      throw ConfigError(std::to_string(own.fields.size()) + " fields, the header has " + std::to_string(fields));
    double* state = own.state.data();
    for (std::size_t i = 0; i < width; ++i)
      if (!csv::parse_finite(own.fields[input_index[i]], state[i])) not_finite(inputs[i], own.fields[input_index[i]]);
    evaluate_row(evaluator, state, values);
    if (output.csv()) {
      own.copied.clear();
      for (const std::size_t c : copied) own.copied.push_back(own.fields[c]);
    }
  };

  if (in_blocks) {
    const std::uint64_t data_end = std::max(reader.size(), data_begin);
    const std::size_t blocks = (data_end - data_begin + block_bytes - 1) / block_bytes;
    // A ring of links: block b reads link b and then sets link b + 1, so link b is set again
    // (by block b + ring - 1) only after block b has read it.
    std::vector<BlockLink> links(2);
    std::vector<CsvBlock> own_blocks(std::max(1u, batch.threads()));
    links[0].start = data_begin;
    links[0].line = line;
    links[0].row = 0;
    announce(links[0].ready_for, 1);
    const std::string output_name = output.temporary_path().string();
    const Descriptor output_file(output.temporary_path(), O_WRONLY, output_name + ": cannot write the output file");
    OrderedOutput ordered(output_file.get(), output_name, output.data_offset(), 16 * std::size_t{std::max(1u, batch.threads())});
    std::atomic<std::size_t> rows_done{0};
    const std::size_t slot_bytes = out_width * (csv::max_number_chars + 1) + 2;  // a row's numbers, at most

    const auto run_block = [&](BatchEvaluator& evaluator, unsigned worker, std::size_t block) {
      CsvBlock& own = own_blocks[worker];
      BlockLink& link = links[block % links.size()];
      BlockLink& next = links[(block + 1) % links.size()];
      const std::uint64_t begin = data_begin + std::uint64_t{block} * block_bytes;
      const std::uint64_t block_end = std::min<std::uint64_t>(begin + block_bytes, data_end);
      bool linked = false;  // whether `next` is set
      try {
        own.text.clear();
        own.text.read_at(reader.descriptor(), block_end - begin, begin, states);  // while the block before is split
        await(link.ready_for, block + 1);
        if (link.start == failed_link) {  // the error of a block before is the one thrown
          next.start = failed_link;
          announce(next.ready_for, block + 2);
          return;
        }
        std::uint64_t at = link.start, record_line = link.line;
        const std::uint64_t first_row = link.row;
        own.begins.clear();
        own.lengths.clear();
        own.lines.clear();
        std::size_t bound = 0;  // of the output's bytes
        bool more_text = true;
        csv::RecordScanner record;  // of the record at `at`: each byte is scanned once
        while (at < block_end) {
          const std::size_t offset = at - begin;
          std::size_t length = std::string_view::npos;
          if (offset < own.text.size()) length = record.find(own.text.view().substr(offset));
          if (length == std::string_view::npos) {  // the record goes on past the block: read on
            if (own.text.size() - std::min(offset, own.text.size()) > csv::max_record_bytes) record_too_long(states, record_line);
            if (more_text && (more_text = own.text.read_at(reader.descriptor(), block_bytes, begin + own.text.size(), states)))
              continue;
            if (offset >= own.text.size()) break;  // the file got shorter while read
            length = own.text.size() - offset;     // the last record, without a final line break
          }
          const std::size_t record_breaks = record.line_breaks();
          record.reset();
          if (!csv::is_blank(own.text.view().substr(offset, length))) {
            own.begins.push_back(offset);
            own.lengths.push_back(length);
            own.lines.push_back(record_line);
            bound += output.csv() ? length + slot_bytes : out_width * sizeof(double);
          }
          record_line += 1 + record_breaks;
          at += std::min(own.text.size() - offset, length + 1);
        }
        const std::size_t rows = own.begins.size();
        next.start = at;
        next.line = record_line;
        next.row = first_row + rows;
        announce(next.ready_for, block + 2);
        linked = true;

        OutputBuffer& buffer = own.free_output(bound);
        char* out = buffer.bytes.data();
        own.values.resize(out_width);
        for (std::size_t r = 0; r < rows; ++r) {
          own.failed_line = own.lines[r];
          const std::string_view record = own.text.view().substr(own.begins[r], own.lengths[r]);
          evaluate_record(scratch[worker], evaluator, record, own.values.data());
          if (output.csv()) {
            out = format_csv_row(out, scratch[worker].copied, own.values.data(), out_width);
          } else {  // the .npy row's bytes (a copy of 8 bytes a value, against parsing its text)
            std::memcpy(out, own.values.data(), out_width * sizeof(double));
            out += out_width * sizeof(double);
          }
        }
        own.failed_line = 0;
        ordered.write(block, buffer, static_cast<std::size_t>(out - buffer.bytes.data()));
        rows_done += rows;
      } catch (...) {
        own.failed_block = block;
        if (!linked) {
          next.start = failed_link;
          announce(next.ready_for, block + 2);
        }
        ordered.fail();
        throw;
      }
    };
    BatchMessages messages;
    messages.row_prefix = [&](std::size_t block) {
      for (const CsvBlock& own : own_blocks)
        if (own.failed_block == block && own.failed_line > 0) return states + ":" + std::to_string(own.failed_line) + ": ";
      return std::string();
    };
    messages.interrupted_where = [&](std::size_t) { return "after " + std::to_string(rows_done.load()) + " state(s) of " + states; };
    if (progress)  // the blocks are equal parts of the file's bytes
      messages.progress = [&](std::size_t blocks_done) {
        progress(rows_done.load(), static_cast<double>(blocks_done) / blocks);
      };
    if (blocks > 0) batch.for_each_block(blocks, run_block, messages);
    result.rows = rows_done.load();
    throw_if_interrupted(where);
    output.add_rows(result.rows);
    output.commit();
    return result;
  }

  // A pipe: chunks read by the calling thread. The next chunk: the rest of the one before,
  // then more of the file, until it holds a complete record (or the file ends); every
  // complete record in it is taken.
  const auto fill = [&](Chunk& chunk, const Chunk* before) {
    if (before) chunk.text.assign(before->text, before->consumed);
    else chunk.text.swap(buffer);
    chunk.records.clear();
    chunk.lines.clear();
    std::size_t consumed = 0;
    for (bool first = true;; first = false) {
      if (more && (before || !first)) {  // (the first chunk starts with what the header read left)
        more = reader.append_to(chunk.text);
        throw_if_interrupted(where);
      }
      while (consumed < chunk.text.size()) {
        const std::string_view rest = std::string_view(chunk.text).substr(consumed);
        std::size_t record_length = scanner.find(rest);  // resumes where the last read stopped
        if (record_length == std::string_view::npos) {
          if (rest.size() > csv::max_record_bytes) record_too_long(states, line);
          if (more) break;  // read on for the rest of it
          record_length = rest.size();
        }
        breaks = scanner.line_breaks();
        scanner.reset();
        const std::string_view record = rest.substr(0, record_length);
        if (!csv::is_blank(record)) {
          chunk.records.push_back(record);
          chunk.lines.push_back(line);
        }
        line += 1 + breaks;
        consumed += std::min(rest.size(), record_length + 1);
      }
      if (!chunk.records.empty() || !more) break;
      chunk.text.erase(0, consumed);  // blank lines only, or a record longer than one read
      consumed = 0;
    }
    chunk.consumed = consumed;
    chunk.rows = chunk.records.size();
    output.prepare(chunk, [&](std::size_t row) { return chunk.records[row].size(); });
    return chunk.rows > 0;
  };

  std::function<void(std::size_t)> rows_progress;  // a pipe: how much is left is unknown
  if (progress) rows_progress = [&](std::size_t done) { progress(done, std::numeric_limits<double>::quiet_NaN()); };
  run_chunks(
      batch, output, result.rows, where, rows_progress, fill,
      [&](Chunk& chunk, BatchEvaluator& evaluator, unsigned worker, std::size_t row) {
        CsvScratch& own = scratch[worker];
        evaluate_record(own, evaluator, chunk.records[row], chunk.outputs.data() + row * out_width);
        if (output.csv()) output.format_row(chunk, row, own.copied);
      },
      [&](const Chunk& chunk, std::size_t row) { return states + ":" + std::to_string(chunk.lines[row]) + ": "; });
  throw_if_interrupted(where);
  output.commit();
  return result;
}

}  // namespace

FileEvaluation evaluate_file(BatchEvaluation& batch, const std::filesystem::path& states,
                             const std::filesystem::path& output, const std::string& algorithm,
                             const FileChunks& chunks, const FileProgress& progress) {
  note_input(states);  // the output must not replace it (AtomicFile checks)
  return is_npy_path(states) ? evaluate_npy(batch, states, output, algorithm, chunks, progress)
                             : evaluate_csv(batch, states, output, algorithm, chunks, progress);
}

}  // namespace liembs
