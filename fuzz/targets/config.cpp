// Fuzz target 'config': a run file as `liembs validate` reads it (TOML syntax, the schema and
// its ranges, the model build from TOML bodies and joints or a URDF/JSON file it names, the
// topology checks, every plugin's options, unused keys).
#include "../fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = liembs::fuzz::as_text(data, size);
  if (liembs::fuzz::reaches_outside(text)) return 0;
  // Named as a file of configs/examples, so a seed's relative model paths resolve.
  liembs::fuzz::validate_toml(text, std::filesystem::path(LIEMBS_SOURCE_DIR) / "configs/examples/fuzz-input.toml");
  return 0;
}
