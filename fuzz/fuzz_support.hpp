#pragma once
// What the fuzz targets share (docs/reliability.md, "Fuzzing"): the oracle and the scratch
// files. A loader may reject any input, but only with one of LieMBS's error types
// (liembs::Error: a message naming the file, key, body or joint); any other exception, a
// crash, a sanitizer report, a hang or runaway memory is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace liembs {
class Registry;
}

namespace liembs::fuzz {

// The bytes as text.
std::string_view as_text(const std::uint8_t* data, std::size_t size);

// Runs `load`, returns normally when it succeeds or throws a liembs::Error, and aborts with
// the exception's type and message otherwise (libFuzzer then saves the input).
void expect_clean(const std::function<void()>& load);

// A registry on the build tree's plugin folder, loaded once; it lives as long as the process.
Registry& build_tree_registry();

// Loads TOML text as `liembs validate` does (ConfigDocument, model build, every component
// created, unused keys rejected), with the build tree's plugins loaded once per process.
// `document_path` is the name the text is given: relative file names resolve beside it.
void validate_toml(std::string_view text, const std::filesystem::path& document_path);

// A scratch folder of this process (created once, removed at exit) and a file in it.
const std::filesystem::path& scratch_folder();
std::filesystem::path write_scratch_file(const std::string& name, std::string_view contents);

// Inputs that reach outside the loaders (a [plugins] path would dlopen arbitrary files,
// device files never end): the targets skip them.
bool reaches_outside(std::string_view text);

}  // namespace liembs::fuzz
