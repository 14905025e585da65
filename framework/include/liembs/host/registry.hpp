#pragma once
// Finds plugin libraries on the search path, checks their ABI fingerprint, loads them
// with Boost.DLL and creates components by kind and name.
#include <liembs/error.hpp>
#include <liembs/plugin/plugin.hpp>

#include <filesystem>
#include <string_view>
#include <memory>
#include <string>
#include <vector>

namespace liembs {

// The plugin search path, first match wins (docs/plugins.md, `liembs --help`): the places in
// order of precedence. Entries are kept sorted by tier whatever order they are added in.
enum class SearchTier {
  command_line,  // --plugin-path (Python: plugin_path=)
  run_file,      // [plugins] paths of the run file
  environment,   // LIEMBS_PLUGIN_PATH
  program,       // lib/liembs/plugins next to the program's bin/ (Python: the module's build or install)
  install,       // the install prefix's lib/liembs/plugins
};
// The search order as one sentence, for --help and the docs (tested to agree).
std::string search_order_text();

struct SearchPathEntry {
  SearchPathEntry(std::filesystem::path path_, std::string origin_, bool required_,
                  SearchTier tier_ = SearchTier::command_line)
      : path(std::move(path_)), origin(std::move(origin_)), required(required_), tier(tier_) {}
  std::filesystem::path path;  // a directory of plugins, or one plugin file
  std::string origin;          // where it came from: "TOML file x.toml", "LIEMBS_PLUGIN_PATH", ...
  bool required;               // a required path that does not exist is an error
  SearchTier tier;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The default path, in order of precedence: LIEMBS_PLUGIN_PATH (':'-separated), the
  // plugin folder next to the running executable (build tree and install tree share the
  // layout bin/ + lib/liembs/plugins), and the compiled-in install folder.
  static std::vector<SearchPathEntry> default_search_path();
  // LIEMBS_PLUGIN_PATH's entries alone (the benchmarks put them before the build tree).
  static std::vector<SearchPathEntry> environment_search_path();

  // Add paths by their tier: an entry goes after the entries of its own and higher-precedence
  // tiers, before those of lower precedence. prepend_search_path puts entries first within
  // their tier, append_search_path last.
  void prepend_search_path(std::vector<SearchPathEntry> entries);
  void append_search_path(std::vector<SearchPathEntry> entries);
  const std::vector<SearchPathEntry>& search_path() const { return search_path_; }

  // Loads every plugin library on the search path. Throws a PluginError naming the file
  // and the reason for the first library that cannot be loaded (missing path, not a
  // shared library, missing entry symbol, ABI mismatch, exception during registration).
  void load();

  // Components in search-path order; a name that appears twice for one kind is taken
  // from the first library and the later one is listed in shadowed(), and load() reports
  // a warning (liembs/util/warning.hpp) naming both files and the one used.
  const std::vector<ComponentInfo>& components() const;
  const std::vector<ComponentInfo>& shadowed() const;
  std::vector<std::string> names(Kind kind) const;
  const ComponentInfo& find(Kind kind, std::string_view name) const;  // throws PluginError
  // The ABI fingerprint (plugin/abi.hpp) a loaded library reported ("" for another file).
  std::string abi_fingerprint(const std::string& library) const;

  // Creates a component; options are checked for unused keys by the caller's document.
  template <class Interface>
  std::unique_ptr<Interface> create(std::string_view name, const ConfigTable& options) const {
    std::unique_ptr<Component> component = create_component(Interface::kind, name, options);
    return std::unique_ptr<Interface>(static_cast<Interface*>(component.release()));
  }
  std::unique_ptr<Component> create_component(Kind kind, std::string_view name,
                                              const ConfigTable& options) const;

  // Compares two fingerprints item by item; returns "" when they agree, else a message
  // naming every item that differs with both values.
  static std::string compare_fingerprints(std::string_view host, std::string_view plugin);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<SearchPathEntry> search_path_;
};

}  // namespace liembs
