#include "fuzz_support.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/host/run.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <typeinfo>

namespace liembs::fuzz {

std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

void expect_clean(const std::function<void()>& load) {
  try {
    load();
  } catch (const liembs::Error&) {
    // A clear rejection: what every bad input must get.
  } catch (const std::exception& error) {
    std::fprintf(stderr, "FINDING: a %s escaped the loader: %s\n", typeid(error).name(), error.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "FINDING: a non-standard exception escaped the loader\n");
    std::abort();
  }
}

Registry& build_tree_registry() {
  static Registry* registry = [] {
    auto* created = new Registry();  // lives as long as the process: components' code is in its libraries
    created->append_search_path({{LIEMBS_FUZZ_PLUGIN_DIR, "build tree", true}});
    created->load();
    return created;
  }();
  return *registry;
}

void validate_toml(std::string_view text, const std::filesystem::path& document_path) {
  Registry& registry = build_tree_registry();
  expect_clean([&] {
    const auto document = ConfigDocument::from_string(text, document_path);
    load_run(document, registry);
  });
}

const std::filesystem::path& scratch_folder() {
  static const std::filesystem::path folder = [] {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("liembs-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_folder(), ignored);
    });
    return path;
  }();
  return folder;
}

std::filesystem::path write_scratch_file(const std::string& name, std::string_view contents) {
  const std::filesystem::path path = scratch_folder() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  return path;
}

bool reaches_outside(std::string_view text) {
  for (const std::string_view word : {"plugins", "/dev", "/proc", "/sys", "dev/", "proc/", "sys/"})
    if (text.find(word) != std::string_view::npos) return true;
  return false;
}

}  // namespace liembs::fuzz
