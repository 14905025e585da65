#include <liembs/config/config_table.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/util/nearest_name.hpp>
#include <liembs/util/warning.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#ifndef LIEMBS_INSTALL_PLUGIN_DIR
#define LIEMBS_INSTALL_PLUGIN_DIR ""
#endif
#ifndef LIEMBS_PLUGIN_SUBDIR
#define LIEMBS_PLUGIN_SUBDIR "lib/liembs/plugins"
#endif

namespace liembs {

Registrar::~Registrar() = default;

namespace fs = std::filesystem;

struct Registry::Impl : Registrar {
  struct Entry {
    ComponentInfo info;
    ComponentFactory factory;
  };
  // Libraries stay loaded for the registry's lifetime: component vtables and factories
  // live in them. Declared first so that they are unloaded after the factories.
  std::vector<boost::dll::shared_library> libraries;
  std::vector<Entry> entries;
  std::vector<ComponentInfo> infos, shadowed;
  std::string current_library;
  std::map<std::string, std::string> fingerprints;  // library file -> its ABI fingerprint
  bool loaded = false;

  void add_component(ComponentInfo info, ComponentFactory factory) override {
    info.library = current_library;
    for (const auto& entry : entries)
      if (entry.info.kind == info.kind && entry.info.name == info.name) {
        warn(std::string(to_string(info.kind)) + " '" + info.name + "' is found in " + entry.info.library +
             " and in " + info.library + "; using " + entry.info.library +
             " (earlier on the plugin search path: " + search_order_text() + ")");
        shadowed.push_back(info);
        return;
      }
    infos.push_back(info);
    entries.push_back({std::move(info), std::move(factory)});
  }
};

Registry::Registry() : impl_(std::make_unique<Impl>()) {}
Registry::~Registry() {
  // Destroy factories (code in the libraries) before unloading the libraries.
  impl_->entries.clear();
}

std::vector<SearchPathEntry> Registry::environment_search_path() {
  std::vector<SearchPathEntry> path;
  if (const char* env = std::getenv("LIEMBS_PLUGIN_PATH")) {
    std::stringstream stream(env);
    for (std::string item; std::getline(stream, item, ':');)
      if (!item.empty()) path.push_back({item, "LIEMBS_PLUGIN_PATH", true, SearchTier::environment});
  }
  return path;
}

std::vector<SearchPathEntry> Registry::default_search_path() {
  std::vector<SearchPathEntry> path = environment_search_path();
  boost::system::error_code ec;
  const auto program = boost::dll::program_location(ec);
  if (!ec) {
    const fs::path beside = fs::path(program.parent_path().parent_path().string()) / LIEMBS_PLUGIN_SUBDIR;
    path.push_back({beside, "next to " + program.string(), false, SearchTier::program});
  }
  const fs::path installed = LIEMBS_INSTALL_PLUGIN_DIR;
  if (!installed.empty()) path.push_back({installed, "install prefix", false, SearchTier::install});
  return path;
}

std::string search_order_text() {
  return "--plugin-path (Python: plugin_path=), [plugins] paths of the run file, LIEMBS_PLUGIN_PATH, "
         "the folder lib/liembs/plugins next to the program's bin/ (Python: the plugins of the "
         "module's own build or install), and the install prefix's lib/liembs/plugins; "
         "the first plugin found with a name is used";
}

namespace {

// The entries of both lists, sorted by tier; within a tier the added ones come first or last.
std::vector<SearchPathEntry> merge_by_tier(std::vector<SearchPathEntry> existing,
                                           std::vector<SearchPathEntry> added, bool added_first) {
  auto& first = added_first ? added : existing;
  auto& second = added_first ? existing : added;
  first.insert(first.end(), std::make_move_iterator(second.begin()), std::make_move_iterator(second.end()));
  std::stable_sort(first.begin(), first.end(),
                   [](const SearchPathEntry& a, const SearchPathEntry& b) { return a.tier < b.tier; });
  return std::move(first);
}

}  // namespace

void Registry::prepend_search_path(std::vector<SearchPathEntry> entries) {
  search_path_ = merge_by_tier(std::move(search_path_), std::move(entries), true);
}

void Registry::append_search_path(std::vector<SearchPathEntry> entries) {
  search_path_ = merge_by_tier(std::move(search_path_), std::move(entries), false);
}

namespace {

bool is_plugin_file(const fs::path& file) {
  const std::string name = file.filename().string();
  return name.rfind("liembs-", 0) == 0 && file.extension() == ".so";
}

std::map<std::string, std::string> parse_fingerprint(std::string_view text) {
  std::map<std::string, std::string> items;
  std::stringstream stream{std::string(text)};
  for (std::string item; std::getline(stream, item, ';');) {
    const auto equals = item.find('=');
    if (equals == std::string::npos) items[item] = "";
    else items[item.substr(0, equals)] = item.substr(equals + 1);
  }
  return items;
}

}  // namespace

std::string Registry::compare_fingerprints(std::string_view host, std::string_view plugin) {
  const auto host_items = parse_fingerprint(host), plugin_items = parse_fingerprint(plugin);
  std::string mismatches;  // every item that differs, so that e.g. an -march mismatch shows both isa and alignment
  const auto add = [&](const std::string& text) { mismatches += (mismatches.empty() ? "" : "; ") + text; };
  for (const auto& [item, value] : host_items) {
    const auto found = plugin_items.find(item);
    const std::string plugin_value = found == plugin_items.end() ? "(absent)" : found->second;
    if (plugin_value == value) continue;
    if (item == "liembs")  // the plugin contract itself (docs/plugins.md, "ABI stability")
      add("ABI mismatch in 'liembs': plugin built for LieMBS " + plugin_value + ", this liembs is " + value +
          " (the plugin contract may change between minor versions: docs/plugins.md, \"ABI stability\")");
    else
      add("ABI mismatch in '" + item + "': plugin built with " + plugin_value + ", this liembs with " + value);
  }
  for (const auto& [item, value] : plugin_items)
    if (!host_items.count(item)) add("ABI mismatch: plugin has item '" + item + "' (" + value + ") unknown to this liembs");
  return mismatches;
}

void Registry::load() {
  if (impl_->loaded) return;
  impl_->loaded = true;
  std::vector<fs::path> files;
  // A file reached twice (the same folder named twice, by another spelling or a symlink) is
  // loaded once, from its first place: it does not shadow itself.
  std::set<fs::path> seen;
  const auto add_file = [&](const fs::path& file) {
    std::error_code ec;
    const fs::path identity = fs::weakly_canonical(file, ec);
    if (seen.insert(ec ? file.lexically_normal() : identity).second) files.push_back(file);
  };
  for (const auto& entry : search_path_) {
    std::error_code ec;
    if (fs::is_directory(entry.path, ec)) {
      std::vector<fs::path> found;
      for (const auto& item : fs::directory_iterator(entry.path, ec))
        if (is_plugin_file(item.path())) found.push_back(item.path());
      std::sort(found.begin(), found.end());
      for (const auto& file : found) add_file(file);
    } else if (fs::is_regular_file(entry.path, ec)) {
      add_file(entry.path);
    } else if (entry.required) {
      throw PluginError("plugin library or folder not found: " + entry.path.string() + " (from " +
                        entry.origin + ")");
    }
  }

  for (const auto& file : files) {
    const std::string name = file.string();
    note_input(file);
    boost::dll::shared_library library;
    try {
      library.load(boost::dll::fs::path(name), boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
    } catch (const std::exception& error) {
      throw PluginError(name + ": cannot load the plugin library: " + error.what());
    }
    if (!library.has("liembs_plugin_abi"))
      throw PluginError(name + ": entry symbol 'liembs_plugin_abi' is missing: not a LieMBS plugin "
                        "(a plugin defines its entry points with LIEMBS_PLUGIN)");
    const char* fingerprint = library.get<const char*()>("liembs_plugin_abi")();
    const std::string mismatch = compare_fingerprints(abi::fingerprint, fingerprint ? fingerprint : "");
    if (!mismatch.empty())
      throw PluginError(name + ": " + mismatch + "; rebuild the plugin against this LieMBS");
    if (!library.has("liembs_plugin_register"))
      throw PluginError(name + ": entry symbol 'liembs_plugin_register' is missing "
                        "(a plugin defines its entry points with LIEMBS_PLUGIN)");
    auto& register_components = library.get<void(Registrar&)>("liembs_plugin_register");
    impl_->current_library = name;
    impl_->fingerprints[name] = fingerprint;
    try {
      register_components(*impl_);
    } catch (const std::exception& error) {
      throw PluginError(name + ": the plugin failed while registering its components: " + error.what());
    }
    impl_->libraries.push_back(std::move(library));
  }
}

const std::vector<ComponentInfo>& Registry::components() const { return impl_->infos; }

std::string Registry::abi_fingerprint(const std::string& library) const {
  const auto found = impl_->fingerprints.find(library);
  return found == impl_->fingerprints.end() ? std::string() : found->second;
}
const std::vector<ComponentInfo>& Registry::shadowed() const { return impl_->shadowed; }

std::vector<std::string> Registry::names(Kind kind) const {
  std::vector<std::string> result;
  for (const auto& info : impl_->infos)
    if (info.kind == kind) result.push_back(info.name);
  return result;
}

const ComponentInfo& Registry::find(Kind kind, std::string_view name) const {
  for (const auto& entry : impl_->entries)
    if (entry.info.kind == kind && entry.info.name == name) return entry.info;
  const auto available = names(kind);
  std::string message = "unknown " + std::string(to_string(kind)) + " '" + std::string(name) +
                        "'; available: " + join_names(available);
  const std::string suggestion = nearest_name(name, available);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  throw PluginError(message);
}

std::unique_ptr<Component> Registry::create_component(Kind kind, std::string_view name,
                                                      const ConfigTable& options) const {
  const ComponentInfo& info = find(kind, name);
  // The table belongs to the component: its declared keys are the candidates for "did you mean",
  // and the document's check for unread keys names the component and its options.
  if (info.options_declared) {
    std::vector<std::string> keys;
    for (const auto& spec : info.options) keys.push_back(spec.key);
    options.declare_owner(std::string(to_string(kind)) + " '" + info.name + "'", std::move(keys),
                          "liembs plugins --options " + info.name);
  }
  for (const auto& entry : impl_->entries) {
    if (&entry.info != &info) continue;
    std::unique_ptr<Component> component;
    try {
      component = entry.factory(options);
    } catch (const ConfigError&) {
      throw;  // already names the file, line and key
    } catch (const std::exception& error) {
      throw PluginError("creating " + std::string(to_string(kind)) + " '" + info.name + "' (" +
                        info.library + ") failed: " + error.what());
    } catch (...) {
      throw PluginError("creating " + std::string(to_string(kind)) + " '" + info.name + "' (" +
                        info.library + ") failed with an unknown exception");
    }
    if (!component)
      throw PluginError("creating " + std::string(to_string(kind)) + " '" + info.name + "' (" +
                        info.library + ") returned no object");
    return component;
  }
  throw PluginError("internal error: component entry lost");  // unreachable
}

}  // namespace liembs
