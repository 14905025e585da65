// liembs eval on files (liembs/batch/evaluate_file.hpp): CSV per RFC 4180 (quoted header and
// copied fields), numbers that read back to the same bits, .npy in and out (C and Fortran
// order), outputs identical for every thread count, and errors naming file, line or row,
// and column, with nothing written.
#include <liembs/batch/evaluate_file.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/io/csv.hpp>
#include <liembs/io/npy.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/interrupt.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <thread>

using namespace liembs;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

struct LoadedRun {
  Registry registry;
  Run run;
};

std::unique_ptr<LoadedRun> load(const std::string& file, const std::string& algorithm) {
  auto loaded = std::make_unique<LoadedRun>();
  loaded->registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  auto document = ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR "/configs/examples/") + file);
  document->set_override("algorithm.name=" + algorithm);
  loaded->run = load_run(document, loaded->registry, RunPurpose::evaluate);
  return loaded;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("liembs-eval-files-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_npy(const fs::path& path, const std::vector<double>& values, std::size_t rows, std::size_t columns,
               bool fortran_order = false) {
  std::string header = npy::header_bytes(rows, columns);
  if (fortran_order) header.replace(header.find("False"), 5, "True ");
  std::ofstream out(path, std::ios::binary);
  out << header;
  if (!fortran_order) {
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 8));
  } else {
    for (std::size_t c = 0; c < columns; ++c)
      for (std::size_t r = 0; r < rows; ++r) out.write(reinterpret_cast<const char*>(&values[r * columns + c]), 8);
  }
}

std::vector<double> read_npy(const fs::path& path, std::size_t& rows, std::size_t& columns) {
  std::ifstream in(path, std::ios::binary);
  const npy::Header header = npy::read_header(in, path.string(), fs::file_size(path));
  REQUIRE_FALSE(header.fortran_order);
  rows = header.rows;
  columns = header.columns;
  std::vector<double> values(rows * columns);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * 8));
  return values;
}

// Random states of the iiwa arm's RNEA as CSV (with a time column first) and as an array.
std::vector<double> random_states(const BatchEvaluation& batch, std::size_t rows, const fs::path& csv_file) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::vector<double> values(rows * batch.input_count());
  for (double& value : values) value = uniform(random);
  std::ofstream out(csv_file);
  out << "time";
  for (const auto& name : batch.input_columns()) out << ',' << name;
  out << '\n' << std::setprecision(17);
  for (std::size_t r = 0; r < rows; ++r) {
    out << 0.01 * static_cast<double>(r);
    for (std::size_t c = 0; c < batch.input_count(); ++c) out << ',' << values[r * batch.input_count() + c];
    out << '\n';
  }
  return values;
}

}  // namespace

TEST_CASE("CSV fields and numbers per RFC 4180 in the C locale", "[eval][csv]") {
  std::vector<std::string_view> fields;
  csv::split_record(R"( a ,"b, c","say ""hi""",, 1.5 )", fields);
  REQUIRE(fields.size() == 5);
  CHECK(fields[0] == "a");
  CHECK(csv::unquote(fields[1]) == "b, c");
  CHECK(csv::unquote(fields[2]) == "say \"hi\"");
  CHECK(fields[3].empty());
  CHECK(fields[4] == "1.5");
  // Without quotes (the records of numbers: split by memchr), the same fields.
  csv::split_record(" a ,\tb\t,,c, \r", fields);
  CHECK(fields == std::vector<std::string_view>{"a", "b", "", "c", ""});
  csv::split_record("", fields);
  CHECK(fields == std::vector<std::string_view>{""});
  csv::split_record(",", fields);
  CHECK(fields == std::vector<std::string_view>{"", ""});
  csv::split_record("1.5,-2", fields);
  CHECK(fields == std::vector<std::string_view>{"1.5", "-2"});
  std::size_t breaks = 0;
  CHECK(csv::record_end("x,\"two\nlines\",y\nnext", breaks) == 15);
  CHECK(breaks == 1);
  CHECK(csv::record_end("plain,row\nnext", breaks) == 9);
  CHECK(csv::record_end("\"open", breaks) == std::string_view::npos);
  CHECK(csv::quote_if_needed("a,b") == "\"a,b\"");
  CHECK(csv::quote_if_needed("q.x") == "q.x");

  double value = 0.0;
  for (const char* good : {"1.5", "+1.5", "-2e-3", ".5", "5.", "\"3\"", "1E+2"}) {
    INFO(good);
    CHECK(csv::parse_finite(good, value));
  }
  for (const char* bad : {"", "nan", "inf", "-inf", "1e400", "1.5x", "0x1p3", "+-1", "++1", "1,5", "--1", "one"}) {
    INFO(bad);
    CHECK_FALSE(csv::parse_finite(bad, value));
  }
  // Shortest text that reads back to the same bits.
  std::mt19937_64 random(3);
  for (int i = 0; i < 10000; ++i) {
    double x;
    const std::uint64_t bits = random();
    std::memcpy(&x, &bits, 8);
    if (!std::isfinite(x)) continue;
    char text[csv::max_number_chars];
    const char* end = csv::append_number(text, x);
    double back = 0.0;
    REQUIRE(csv::parse_finite(std::string_view(text, static_cast<std::size_t>(end - text)), back));
    REQUIRE(std::memcmp(&back, &x, 8) == 0);
  }
  for (const double x : {-std::numeric_limits<double>::denorm_min(), -2.2250738585072014e-308, -1.7976931348623157e308}) {
    char text[csv::max_number_chars];
    CHECK(static_cast<std::size_t>(csv::append_number(text, x) - text) <= csv::max_number_chars);
  }
}

TEST_CASE("CSV and .npy outputs hold the same bits, for every thread count and input format", "[eval][npy]") {
  auto loaded = load("iiwa-arm.toml", "rnea");
  BatchEvaluation batch(loaded->run);
  const fs::path dir = scratch("formats");
  const std::size_t rows = 2500, width = batch.input_count(), out_width = batch.output_count();
  const std::vector<double> states = random_states(batch, rows, dir / "states.csv");
  write_npy(dir / "states.npy", states, rows, width);
  write_npy(dir / "fortran.npy", states, rows, width, true);

  std::vector<double> expected(rows * out_width);
  batch.set_threads(1);
  batch.evaluate(states, expected);

  std::string reference_csv;
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    batch.set_threads(threads);
    for (const char* input : {"states.csv", "states.npy", "fortran.npy"}) {
      INFO(input);
      const FileEvaluation npy = evaluate_file(batch, dir / input, dir / "out.npy", "rnea");
      CHECK(npy.rows == rows);
      std::size_t r = 0, c = 0;
      const std::vector<double> values = read_npy(dir / "out.npy", r, c);
      CHECK(r == rows);
      CHECK(c == out_width);
      CHECK(std::memcmp(values.data(), expected.data(), expected.size() * 8) == 0);
      CHECK(npy.dropped_columns == (input == std::string("states.csv") ? std::vector<std::string>{"time"}
                                                                        : std::vector<std::string>{}));
    }
    evaluate_file(batch, dir / "states.csv", dir / "out.csv", "rnea");
    const std::string csv = read_file(dir / "out.csv");
    if (reference_csv.empty()) reference_csv = csv;
    CHECK(csv == reference_csv);  // the same bytes
  }
  // Nor on the chunks or blocks the file is read in: many boundaries (records split across
  // reads and blocks, one-row chunks run on the calling thread, chunks shared by the
  // threads, blocks of no record, blocks of hundreds).
  for (const FileChunks chunks : {FileChunks{7, 1, 1000}, FileChunks{3000, 300, 3000}, FileChunks{200000, 1000, 200000}}) {
    INFO("chunks of " << chunks.csv_bytes << " bytes, " << chunks.npy_rows << " rows, blocks of " << chunks.csv_block_bytes
                      << " bytes");
    for (unsigned threads : {1u, 2u, 3u}) {
      INFO(threads << " threads");
      batch.set_threads(threads);
      evaluate_file(batch, dir / "states.csv", dir / "out.csv", "rnea", chunks);
      CHECK(read_file(dir / "out.csv") == reference_csv);
      for (const char* input : {"states.csv", "states.npy", "fortran.npy"}) {
        INFO(input);
        CHECK(evaluate_file(batch, dir / input, dir / "out.npy", "rnea", chunks).rows == rows);
        std::size_t r = 0, c = 0;
        const std::vector<double> values = read_npy(dir / "out.npy", r, c);
        REQUIRE(values.size() == expected.size());
        CHECK(std::memcmp(values.data(), expected.data(), expected.size() * 8) == 0);
      }
    }
  }
  // The CSV numbers read back to the bits of the .npy output; the time column is copied.
  std::istringstream lines(reference_csv);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "time,tau.a1,tau.a2,tau.a3,tau.a4,tau.a5,tau.a6,tau.a7");
  std::vector<std::string_view> fields;
  for (std::size_t r = 0; r < rows; ++r) {
    REQUIRE(std::getline(lines, line));
    csv::split_record(line, fields);
    REQUIRE(fields.size() == 1 + out_width);
    for (std::size_t c = 0; c < out_width; ++c) {
      double value;
      REQUIRE(csv::parse_finite(fields[1 + c], value));
      REQUIRE(value == expected[r * out_width + c]);
    }
  }
  // A .npy input gives a CSV output of the outputs alone.
  evaluate_file(batch, dir / "states.npy", dir / "from-npy.csv", "rnea");
  const std::string from_npy = read_file(dir / "from-npy.csv");
  CHECK(from_npy.substr(0, from_npy.find('\n')) == "tau.a1,tau.a2,tau.a3,tau.a4,tau.a5,tau.a6,tau.a7");
}

TEST_CASE("quoted CSV header and fields: found by name, copied as written, lines counted", "[eval][csv]") {
  auto loaded = load("double-pendulum.toml", "rnea");
  BatchEvaluation batch(loaded->run, 2);
  const fs::path dir = scratch("quoted");
  std::ofstream(dir / "states.csv")
      << "\xEF\xBB\xBF\"label, with comma\",\"q.shoulder\",q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,\"qdd.elbow\"\r\n"
      << "\"say \"\"hi\"\"\",0.1,0.2,0.3,0.4,0.5,0.6\r\n"
      << "\"two\nlines\",0.1,0.2,0.3,0.4,0.5,0.6\r\n"
      << "\r\n"
      << "plain,0.1,0.2,0.3,0.4,0.5,0.6";  // no final line break
  evaluate_file(batch, dir / "states.csv", dir / "out.csv", "rnea");
  const std::string out = read_file(dir / "out.csv");
  std::istringstream lines(out);
  std::string header, first, second_a, second_b, third;
  std::getline(lines, header);
  CHECK(header == "\"label, with comma\",tau.shoulder,tau.elbow");
  std::getline(lines, first);
  CHECK(first.rfind("\"say \"\"hi\"\"\",", 0) == 0);
  std::getline(lines, second_a);
  std::getline(lines, second_b);
  CHECK(second_a == "\"two");
  std::getline(lines, third);
  CHECK(third.rfind("plain,", 0) == 0);
  const auto forces = [](const std::string& line) {  // the last two fields
    return line.substr(line.rfind(',', line.rfind(',') - 1));
  };
  CHECK(forces(first) == forces(second_b));  // the same state, the same forces
  CHECK(forces(third) == forces(second_b));
  // Read 3 bytes at a time, in blocks of 3 bytes: quoted fields and line breaks cross every
  // read and every block.
  evaluate_file(batch, dir / "states.csv", dir / "small-reads.csv", "rnea", FileChunks{3, 1, 3});
  CHECK(read_file(dir / "small-reads.csv") == out);

  // After a quoted line break, errors still name the right line.
  std::ofstream(dir / "bad.csv") << "note,q.shoulder,q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,qdd.elbow\n"
                                 << "\"a\nb\",0,0,0,0,0,0\n"
                                 << "ok,0,0,0,0,0,0\n"
                                 << "ok,0,0,zero,0,0,0\n";
  CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.csv", dir / "bad-out.csv", "rnea"),
                    Contains("bad.csv:5: column 'qd.shoulder': 'zero' is not a finite number"));
  CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.csv", dir / "bad-out.csv", "rnea", FileChunks{3, 1, 3}),
                    Contains("bad.csv:5: column 'qd.shoulder': 'zero' is not a finite number"));
  CHECK_FALSE(fs::exists(dir / "bad-out.csv"));
}

TEST_CASE("a CSV file in blocks: quoted line breaks across blocks, the bytes of a pipe, lines counted", "[eval][csv]") {
  auto loaded = load("double-pendulum.toml", "rnea");
  BatchEvaluation batch(loaded->run);
  const fs::path dir = scratch("blocks");
  // 600 records (a few hundred kilobytes with the padding), every fifth with a quoted label
  // holding line breaks, commas and quotes, blank lines and CRLF between some.
  std::ostringstream text;
  text << "label,q.shoulder,q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,qdd.elbow\n";
  std::mt19937 random(3);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  text << std::setprecision(17);
  std::size_t line = 2;
  std::vector<std::size_t> lines;  // the line each record starts on
  for (int r = 0; r < 600; ++r) {
    lines.push_back(line);
    if (r % 5 == 0) {
      text << "\"row " << r << ",\n\"\"quoted\"\"\n" << std::string(static_cast<std::size_t>(r % 97), 'x') << "\"";
      line += 2;
    } else {
      text << "row" << r;
    }
    for (int c = 0; c < 6; ++c) text << ',' << uniform(random);
    text << (r % 7 == 0 ? "\r\n" : "\n");
    ++line;
    if (r % 11 == 0) {
      text << "\n  \n";
      line += 2;
    }
  }
  const std::string states = text.str();
  std::ofstream(dir / "states.csv", std::ios::binary) << states;

  // The reference: through a pipe (chunks read by the calling thread), on 1 thread.
  const fs::path fifo = dir / "states.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto through_pipe = [&](const fs::path& output, const FileChunks& chunks) {
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << states; });  // opens when read
    try {
      evaluate_file(batch, fifo, output, "rnea", chunks);
    } catch (...) {
      writer.join();
      throw;
    }
    writer.join();
  };
  batch.set_threads(1);
  through_pipe(dir / "reference.csv", FileChunks{});
  const std::string reference = read_file(dir / "reference.csv");
  REQUIRE(std::count(reference.begin(), reference.end(), '\n') == 1 + 600 + 2 * 120);  // header, rows, quoted breaks
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    batch.set_threads(threads);
    through_pipe(dir / "pipe.csv", FileChunks{5, 1});
    CHECK(read_file(dir / "pipe.csv") == reference);
    for (const std::size_t block : {3, 64, 1000, 65536}) {
      INFO("blocks of " << block << " bytes");
      CHECK(evaluate_file(batch, dir / "states.csv", dir / "out.csv", "rnea", FileChunks{1 << 20, 8192, block}).rows == 600);
      CHECK(read_file(dir / "out.csv") == reference);
    }
  }

  // A bad field after many quoted line breaks: its line, for every thread count and block
  // size, and a bad field in a later block does not win over it.
  std::string bad = states;
  const auto break_row = [&](std::size_t row, const char* field) {  // replaces the last field of a record
    std::size_t at = 0;  // the record's first byte, after lines[row] - 1 line breaks
    for (std::size_t l = 1; l < lines[row]; ++l) at = bad.find('\n', at) + 1;
    std::size_t end = at;  // the line break that ends it, outside quotes
    for (bool quoted = false; quoted || bad[end] != '\n'; ++end)
      if (bad[end] == '"') quoted = !quoted;
    if (bad[end - 1] == '\r') --end;
    const std::size_t last = bad.rfind(',', end - 1) + 1;
    bad.replace(last, end - last, field);
  };
  break_row(455, "oops");  // a record with a quoted label (455 % 5 == 0)
  break_row(590, "1e999");
  std::ofstream(dir / "bad.csv", std::ios::binary) << bad;
  const std::string expected = "bad.csv:" + std::to_string(lines[455]) + ": column 'qdd.elbow': 'oops' is not a finite number";
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    batch.set_threads(threads);
    for (const std::size_t block : {3, 100, 4096, 65536}) {
      INFO("blocks of " << block << " bytes");
      CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.csv", dir / "bad-out.csv", "rnea", FileChunks{1 << 20, 8192, block}),
                        Contains(expected));
      CHECK_FALSE(fs::exists(dir / "bad-out.csv"));
    }
  }
}

namespace {

// y = a + b, raising SIGINT at its `raise_at`-th state of all threads.
class RaisingSum : public BatchEvaluator {
 public:
  RaisingSum(std::atomic<int>& count, int raise_at) : count_(count), raise_at_(raise_at) {}
  const std::vector<std::string>& input_columns() const override { return inputs_; }
  const std::vector<std::string>& output_columns() const override { return outputs_; }
  void evaluate(const double* inputs, double* outputs) override {
    outputs[0] = inputs[0] + inputs[1];
    if (++count_ == raise_at_) std::raise(SIGINT);
  }

 private:
  std::atomic<int>& count_;
  int raise_at_;
  std::vector<std::string> inputs_{"a", "b"}, outputs_{"y"};
};

}  // namespace

TEST_CASE("SIGINT stops a CSV file's blocks at the next block, and nothing is written", "[eval][csv]") {
  install_interrupt_handlers();  // the first signal is only recorded
  const fs::path dir = scratch("interrupt");
  std::ofstream states(dir / "states.csv");
  states << "a,b\n";
  for (int r = 0; r < 5000; ++r) states << r << ',' << 2 * r << '\n';
  states.close();
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    std::atomic<int> count{0};
    BatchEvaluation batch([&] { return std::make_unique<RaisingSum>(count, 300); }, threads);
    try {
      evaluate_file(batch, dir / "states.csv", dir / "out.csv", "sum", FileChunks{1 << 20, 8192, 1000});
      FAIL("not interrupted");
    } catch (const Interrupted& stopped) {
      CHECK(stopped.signal() == SIGINT);
      CHECK_THAT(stopped.where(), Contains("state(s) of ") && Contains("states.csv"));
    }
    clear_pending_interrupt();
    CHECK(count < 5000);  // the blocks after the signal were not taken
    CHECK_FALSE(fs::exists(dir / "out.csv"));
    std::size_t files = 0;  // nor a temporary
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);
  }
  // Without a signal, the same evaluator writes every row.
  std::atomic<int> count{0};
  BatchEvaluation batch([&] { return std::make_unique<RaisingSum>(count, -1); }, 2);
  CHECK(evaluate_file(batch, dir / "states.csv", dir / "out.csv", "sum", FileChunks{1 << 20, 8192, 1000}).rows == 5000);
  const std::string out = read_file(dir / "out.csv");
  CHECK(out.substr(0, 8) == "y\n0\n3\n6\n");
  CHECK(std::count(out.begin(), out.end(), '\n') == 5001);
}

TEST_CASE("eval errors name the file, the first bad line or row and the column, whatever the threads", "[eval]") {
  auto loaded = load("iiwa-arm.toml", "rnea");
  BatchEvaluation batch(loaded->run);
  const fs::path dir = scratch("errors");
  const std::size_t rows = 4000, width = batch.input_count();
  std::vector<double> states = random_states(batch, rows, dir / "states.csv");
  // Lines 3001 and 3901 (rows 2999 and 3899) get bad fields.
  std::string text = read_file(dir / "states.csv");
  std::vector<std::string> lines;
  std::istringstream split(text);
  for (std::string line; std::getline(split, line);) lines.push_back(line);
  lines[3000] = lines[3000].substr(0, lines[3000].rfind(',')) + ",1e999";
  lines[3900] = lines[3900].substr(0, lines[3900].rfind(','));
  std::ofstream bad(dir / "bad.csv");
  for (const auto& line : lines) bad << line << '\n';
  bad.close();
  states[3899 * width + 4] = std::numeric_limits<double>::infinity();
  states[3950 * width + 1] = std::nan("");
  write_npy(dir / "bad.npy", states, rows, width);
  for (unsigned threads : {1u, 2u, 3u}) {
    INFO(threads << " threads");
    batch.set_threads(threads);
    CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.csv", dir / "out.csv", "rnea"),
                      Contains("bad.csv:3001: column 'qdd.a7': '1e999' is not a finite number"));
    CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.npy", dir / "out.npy", "rnea"),
                      Contains("bad.npy: row 3899: column 'q.a5': 'inf' is not a finite number"));
    CHECK_FALSE(fs::exists(dir / "out.csv"));
    CHECK_FALSE(fs::exists(dir / "out.npy"));
    // The same across chunk boundaries: the bad rows in the chunk being read, or in later ones.
    for (const FileChunks chunks : {FileChunks{5000, 100, 5000}, FileChunks{300000, 1000, 300000}}) {
      INFO("chunks of " << chunks.csv_bytes << " bytes, " << chunks.npy_rows << " rows, blocks of "
                        << chunks.csv_block_bytes << " bytes");
      CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.csv", dir / "out.csv", "rnea", chunks),
                        Contains("bad.csv:3001: column 'qdd.a7': '1e999' is not a finite number"));
      CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.npy", dir / "out.npy", "rnea", chunks),
                        Contains("bad.npy: row 3899: column 'q.a5': 'inf' is not a finite number"));
      CHECK_FALSE(fs::exists(dir / "out.csv"));
      CHECK_FALSE(fs::exists(dir / "out.npy"));
    }
  }
  lines[3000] = lines[2999];
  std::ofstream ragged(dir / "ragged.csv");
  for (const auto& line : lines) ragged << line << '\n';
  ragged.close();
  CHECK_THROWS_WITH(evaluate_file(batch, dir / "ragged.csv", dir / "out.csv", "rnea"),
                    Contains("ragged.csv:3901: 21 fields, the header has 22"));
  CHECK_THROWS_AS(evaluate_file(batch, dir / "ragged.csv", dir / "out.csv", "rnea"), ConfigError);
  CHECK_THROWS_WITH(evaluate_file(batch, dir / "missing.csv", dir / "out.csv", "rnea"),
                    Contains("missing.csv: cannot read the states file"));
  std::ofstream(dir / "empty.csv").close();
  CHECK_THROWS_WITH(evaluate_file(batch, dir / "empty.csv", dir / "out.csv", "rnea"),
                    Contains("empty.csv:1: the file is empty"));
  // An empty .npy array and a header-only CSV give empty outputs.
  write_npy(dir / "none.npy", {}, 0, width);
  CHECK(evaluate_file(batch, dir / "none.npy", dir / "none-out.npy", "rnea").rows == 0);
  std::size_t r = 1, c = 0;
  read_npy(dir / "none-out.npy", r, c);
  CHECK(r == 0);
  CHECK(c == 7);
  std::ofstream(dir / "header-only.csv") << lines[0] << '\n';
  CHECK(evaluate_file(batch, dir / "header-only.csv", dir / "none-out.csv", "rnea").rows == 0);
  CHECK(read_file(dir / "none-out.csv") == "time,tau.a1,tau.a2,tau.a3,tau.a4,tau.a5,tau.a6,tau.a7\n");
}

TEST_CASE("a malformed row anywhere in a large CSV file: the error names its line, every byte read once",
          "[eval][csv][heavy]") {
  // A stray quote runs its record on to the end of the file; before, each read of the rest
  // scanned the record again from its start (quadratic: a 117 MB file with a '"' in row 2 took
  // 72 s). With 1 KiB reads of a 4 MB file, that was 4,000 rescans of up to 4 MB per position
  // below: minutes for this test; it takes about a second now.
  auto loaded = load("double-pendulum.toml", "rnea");
  BatchEvaluation batch(loaded->run, 2);
  const fs::path dir = scratch("malformed-rows");
  const std::size_t rows = 40000;
  std::ostringstream text;
  text << "q.shoulder,q.elbow,qd.shoulder,qd.elbow,qdd.shoulder,qdd.elbow\n" << std::setprecision(17);
  std::mt19937 random(11);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::vector<std::size_t> starts;  // each row's first byte
  for (std::size_t r = 0; r < rows; ++r) {
    starts.push_back(static_cast<std::size_t>(text.tellp()));
    for (int c = 0; c < 6; ++c) text << (c ? "," : "") << uniform(random);
    text << '\n';
  }
  const std::string good = text.str();
  REQUIRE(good.size() > 3'000'000);
  std::vector<std::size_t> positions{0, 1, 2, rows / 2, rows - 2, rows - 1};
  for (std::size_t k = 1; k < 12; ++k) positions.push_back(k * rows / 12 + k);
  const fs::path fifo = dir / "states.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::signal(SIGPIPE, SIG_IGN);  // the writer of the pipe finds it closed after an early error
  for (const std::size_t row : positions) {
    for (const bool stray_quote : {true, false}) {
      std::string bad = good;
      if (stray_quote) bad.insert(starts[row], 1, '"');  // opens a quote never closed
      else bad.replace(starts[row], bad.find(',', starts[row]) - starts[row], "oops");
      std::ofstream(dir / "bad.csv", std::ios::binary) << bad;
      const std::string where = "bad.csv:" + std::to_string(row + 2) + ": ";
      INFO("row " << row << (stray_quote ? ", a stray quote" : ", a field that is not a number"));
      const FileChunks small{1024, 8192, 1024};  // 1 KiB reads (a pipe) and blocks (a file)
      CHECK_THROWS_WITH(evaluate_file(batch, dir / "bad.csv", dir / "out.csv", "rnea", small), Contains(where));
      CHECK_FALSE(fs::exists(dir / "out.csv"));
      if (!stray_quote && row % 2 == 1) continue;  // the pipe for every quote, some of the others
      std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bad; });  // opens when read
      try {
        evaluate_file(batch, fifo, dir / "out.csv", "rnea", small);
        FAIL("no error through the pipe");
      } catch (const ConfigError& error) {
        CHECK_THAT(error.what(), Contains("states.fifo:" + std::to_string(row + 2) + ": "));
        CHECK(std::string(error.what()).size() < 400);  // the field that runs on is cut short
      }
      writer.join();
      CHECK_FALSE(fs::exists(dir / "out.csv"));
    }
  }
}

TEST_CASE("eval reports progress from each way of reading a file, on the calling thread", "[eval][progress]") {
  auto loaded = load("iiwa-arm.toml", "rnea");
  BatchEvaluation batch(loaded->run, 2);
  const fs::path dir = scratch("progress");
  constexpr std::size_t rows = 12000;
  const std::vector<double> values = random_states(batch, rows, dir / "states.csv");
  write_npy(dir / "states.npy", values, rows, batch.input_count());
  write_npy(dir / "fortran.npy", values, rows, batch.input_count(), true);
  const fs::path fifo = dir / "states.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string csv_text = read_file(dir / "states.csv");

  struct Report {
    std::size_t rows;
    double fraction;
  };
  // Small pieces, so that the calling thread finishes many blocks of rows.
  const FileChunks chunks{4096, 64, 8192};
  const auto reports_of = [&](const fs::path& input, const fs::path& output) {
    std::vector<Report> reports;
    const auto caller = std::this_thread::get_id();
    bool other_thread = false;
    const FileProgress progress = [&](std::size_t done, double fraction) {
      other_thread = other_thread || std::this_thread::get_id() != caller;
      reports.push_back({done, fraction});
    };
    std::thread writer;
    if (input == fifo) writer = std::thread([&] { std::ofstream(fifo, std::ios::binary) << csv_text; });
    const FileEvaluation result = evaluate_file(batch, input, output, "rnea", chunks, progress);
    if (writer.joinable()) writer.join();
    CHECK(result.rows == rows);
    CHECK_FALSE(other_thread);
    return reports;
  };
  // .npy to .npy (each thread reads its rows), .npy in chunks (Fortran order; and into CSV),
  // a regular CSV file in blocks, a pipe in chunks.
  const std::vector<std::pair<fs::path, fs::path>> paths{{dir / "states.npy", dir / "out.npy"},
                                                        {dir / "fortran.npy", dir / "fortran-out.npy"},
                                                        {dir / "states.npy", dir / "out-from-npy.csv"},
                                                        {dir / "states.csv", dir / "out.csv"},
                                                        {fifo, dir / "out-from-pipe.csv"}};
  for (const auto& [input, output] : paths) {
    INFO(input.filename() << " to " << output.filename());
    const std::vector<Report> reports = reports_of(input, output);
    REQUIRE(reports.size() >= 3);
    for (std::size_t k = 1; k < reports.size(); ++k) {
      CHECK(reports[k].rows >= reports[k - 1].rows);
      if (input != fifo) CHECK(reports[k].fraction >= reports[k - 1].fraction);
    }
    CHECK(reports.back().rows <= rows);
    CHECK(reports.front().rows > 0);
    for (const Report& report : reports) {
      if (input == fifo) {
        CHECK(std::isnan(report.fraction));  // a pipe's size is unknown
      } else {
        CHECK(report.fraction > 0.0);
        CHECK(report.fraction <= 1.0);
        // The fraction is of the rows (or of a CSV file's bytes, nearly the same here).
        CHECK(std::abs(report.fraction - static_cast<double>(report.rows) / rows) < 0.1);
      }
    }
  }
  // Without a report, nothing is called (the CLI passes none when stderr is not a terminal).
  CHECK(evaluate_file(batch, dir / "states.csv", dir / "quiet.csv", "rnea", chunks).rows == rows);
}
