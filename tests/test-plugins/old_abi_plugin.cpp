// A plugin as built against the previous minor version of LieMBS: its ABI fingerprint is this
// host's with the 'liembs' item one minor version back (the plugin contract changed since,
// docs/plugins.md "ABI stability"). The host must refuse it before registering anything.
#include <liembs/plugin/plugin.hpp>

#include <string>

namespace {

std::string previous_minor_fingerprint() {
  std::string fingerprint = liembs::abi::fingerprint;
  const std::string current = std::string("liembs=") + LIEMBS_VERSION_ABI;
  const std::string previous = "liembs=" + std::to_string(LIEMBS_VERSION_MAJOR) + "." +
                               std::to_string(LIEMBS_VERSION_MINOR > 0 ? LIEMBS_VERSION_MINOR - 1 : 99);
  fingerprint.replace(fingerprint.find(current), current.size(), previous);
  return fingerprint;
}

}  // namespace

LIEMBS_PLUGIN_EXPORT const char* liembs_plugin_abi() {
  static const std::string fingerprint = previous_minor_fingerprint();
  return fingerprint.c_str();
}

LIEMBS_PLUGIN_EXPORT void liembs_plugin_register(liembs::Registrar&) {}
