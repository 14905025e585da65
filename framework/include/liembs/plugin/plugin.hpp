#pragma once
// What a plugin library includes to register its components:
//
//   #include <liembs/config/config_table.hpp>   // the factory's options (the application layer)
//   #include <liembs/plugin/plugin.hpp>
//   LIEMBS_PLUGIN(registrar) {
//     registrar.add<liembs::Integrator>("my-integrator", "1.0.0", "one-line summary",
//         [](const liembs::ConfigTable& options) { return std::make_unique<MyIntegrator>(options); });
//   }
//
// A component that declares its options (plugin/options.hpp) passes the declaration before the
// factory: `liembs plugins --options NAME` prints it and the host refuses undeclared keys.
//
// The macro defines two C entry points: liembs_plugin_abi(), which the host reads and
// checks before anything else, and liembs_plugin_register(), called only if it matches.
#include <liembs/plugin/abi.hpp>
#include <liembs/plugin/algorithm.hpp>
#include <liembs/plugin/component.hpp>
#include <liembs/plugin/group.hpp>
#include <liembs/plugin/integrator.hpp>
#include <liembs/plugin/options.hpp>
#include <liembs/plugin/representation.hpp>

#include <functional>
#include <memory>
#include <string>

namespace liembs {

class ConfigTable;  // liembs/config/config_table.hpp: defined by the application, which creates plugins

// Creates a component from its TOML section (the section without its `name` key).
// Factories read their options through `options` and throw ConfigError for bad values.
using ComponentFactory = std::function<std::unique_ptr<Component>(const ConfigTable& options)>;

struct ComponentInfo {
  Kind kind;
  std::string name;
  std::string version;
  std::string summary;
  std::string library;  // file the component came from
  // The declared options (OPTIONAL: without a declaration, `liembs plugins --options` says
  // so and only the document's check for unread keys applies).
  bool options_declared = false;
  std::vector<OptionSpec> options;
};

class Registrar {
 public:
  virtual ~Registrar();

  template <class Interface, class Factory>
  void add(std::string name, std::string version, std::string summary, Factory factory) {
    add_component(ComponentInfo{Interface::kind, std::move(name), std::move(version),
                                std::move(summary), {}},
                  [factory = std::move(factory)](const ConfigTable& options)
                      -> std::unique_ptr<Component> { return factory(options); });
  }

  template <class Interface, class Factory>
  void add(std::string name, std::string version, std::string summary, const OptionDeclaration& options,
           Factory factory) {
    add_component(ComponentInfo{Interface::kind, std::move(name), std::move(version), std::move(summary), {}, true,
                                options.specs()},
                  [factory = std::move(factory)](const ConfigTable& table)
                      -> std::unique_ptr<Component> { return factory(table); });
  }

  virtual void add_component(ComponentInfo info, ComponentFactory factory) = 0;
};

}  // namespace liembs

#define LIEMBS_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

#define LIEMBS_PLUGIN(registrar)                                                  \
  LIEMBS_PLUGIN_EXPORT const char* liembs_plugin_abi() { return ::liembs::abi::fingerprint; } \
  LIEMBS_PLUGIN_EXPORT void liembs_plugin_register(::liembs::Registrar& registrar)
