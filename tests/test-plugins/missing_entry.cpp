// Exports the ABI fingerprint but not liembs_plugin_register.
#include <liembs/plugin/abi.hpp>

extern "C" __attribute__((visibility("default"))) const char* liembs_plugin_abi() {
  return liembs::abi::fingerprint;
}
