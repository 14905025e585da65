// Fuzz target 'study': a study file as `liembs study` reads it before running anything (TOML
// syntax, models and their run files or inline runs, axes, exclusions, [measure] and
// [timing], the expansion into cases), and the run documents of its first cases loaded as
// `liembs validate` loads a run (execute_cases checks every case so before the first runs).
#include "../fuzz_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/host/run.hpp>
#include <liembs/study/study_file.hpp>

#include <algorithm>
#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = liembs::fuzz::as_text(data, size);
  if (liembs::fuzz::reaches_outside(text)) return 0;
  liembs::Registry& registry = liembs::fuzz::build_tree_registry();
  liembs::fuzz::expect_clean([&] {
    // Named as a file of studies/, so a seed's relative run files resolve.
    const auto document =
        liembs::ConfigDocument::from_string(text, std::filesystem::path(LIEMBS_SOURCE_DIR) / "studies/fuzz-input.toml");
    const liembs::study::Definition definition = liembs::study::load_study(document);
    const std::vector<liembs::study::Case> cases = liembs::study::expand_cases(definition);
    // A few cases: a product of long axes would spend the run on loading models.
    for (std::size_t c = 0; c < std::min<std::size_t>(cases.size(), 8); ++c)
      liembs::load_run(liembs::study::case_document(definition, cases[c]), registry);
  });
  return 0;
}
