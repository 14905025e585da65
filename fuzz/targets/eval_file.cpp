// Fuzz target 'eval-file': a states file of `liembs eval` through evaluate_file, as CSV (RFC
// 4180 quoting, a header naming columns in any order, numbers by from_chars, copied columns)
// or, when it starts with NumPy's magic, as .npy (the header dict, shape, order, length);
// evaluated by RNEA on the double pendulum on 2 threads into a scratch output, twice: in the
// default chunks and in tiny ones, which must give the same bytes or the same error.
#include "../fuzz_support.hpp"

#include <liembs/batch/batch_evaluation.hpp>
#include <liembs/batch/evaluate_file.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/host/run.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

namespace {

liembs::BatchEvaluation& double_pendulum_rnea() {
  static liembs::Run* run = [] {
    auto document = liembs::ConfigDocument::load(std::string(LIEMBS_SOURCE_DIR) +
                                                 "/tests/bad-inputs/inputs/double-pendulum.toml");
    document->set_override("algorithm.name=rnea");
    return new liembs::Run(
        liembs::load_run(document, liembs::fuzz::build_tree_registry(), liembs::RunPurpose::evaluate));
  }();
  static auto* batch = new liembs::BatchEvaluation(*run, 2);  // both live as long as the process
  return *batch;
}

// The output file's bytes, or the error's message (nothing is written then).
std::string outcome(liembs::BatchEvaluation& batch, const std::filesystem::path& states,
                    const std::filesystem::path& output, const liembs::FileChunks& chunks) {
  std::filesystem::remove(output);
  std::string result;
  liembs::fuzz::expect_clean([&] {
    try {
      liembs::evaluate_file(batch, states, output, "rnea", chunks);
      std::ifstream file(output, std::ios::binary);
      result.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    } catch (const liembs::Error& error) {
      result = std::string("error: ") + error.what();
      if (std::filesystem::exists(output)) std::abort();  // an error leaves no output behind
      throw;
    }
  });
  return result;
}

}  // namespace

// Differential: the file in the default chunks and blocks, and again in tiny ones (CSV blocks
// of 1 to 97 bytes, so that records, quoted fields and line breaks cross blocks and threads;
// .npy chunks of 1 to 5 rows) must give the same bytes, or the same error.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = liembs::fuzz::as_text(data, size);
  const bool npy = text.substr(0, 6) == "\x93NUMPY";
  const auto states = liembs::fuzz::write_scratch_file(npy ? "states.npy" : "states.csv", text);
  // The output format follows the input's length, so both writers see both readers.
  const auto output = liembs::fuzz::scratch_folder() / (size % 2 ? "out.npy" : "out.csv");
  liembs::BatchEvaluation& batch = double_pendulum_rnea();
  const std::string whole = outcome(batch, states, output, {});
  liembs::FileChunks tiny;
  tiny.csv_block_bytes = 1 + size % 97;
  tiny.csv_bytes = 1 + size % 13;
  tiny.npy_rows = 1 + size % 5;
  if (outcome(batch, states, output, tiny) != whole) {
    std::fprintf(stderr, "eval-file: the output depends on the chunk sizes (blocks of %zu bytes)\n",
                 tiny.csv_block_bytes);
    std::abort();
  }
  return 0;
}
