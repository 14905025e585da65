// Fuzz target 'eval-file': a states file of `liembs eval` through evaluate_file, as CSV (RFC
// 4180 quoting, a header naming columns in any order, numbers by from_chars, copied columns)
// or, when it starts with NumPy's magic, as .npy (the header dict, shape, order, length);
// evaluated by RNEA on the double pendulum on 2 threads into a scratch output.
#include "../fuzz_support.hpp"

#include <liembs/batch/batch_evaluation.hpp>
#include <liembs/batch/evaluate_file.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/sim/run.hpp>

#include <memory>

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = liembs::fuzz::as_text(data, size);
  const bool npy = text.substr(0, 6) == "\x93NUMPY";
  const auto states = liembs::fuzz::write_scratch_file(npy ? "states.npy" : "states.csv", text);
  // The output format follows the input's length, so both writers see both readers.
  const auto output = liembs::fuzz::scratch_folder() / (size % 2 ? "out.npy" : "out.csv");
  liembs::BatchEvaluation& batch = double_pendulum_rnea();
  liembs::fuzz::expect_clean([&] { liembs::evaluate_file(batch, states, output, "rnea"); });
  return 0;
}
