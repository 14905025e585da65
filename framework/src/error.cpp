#include <liembs/error.hpp>

namespace liembs {
// Out-of-line destructors anchor the type information in the core library, so an
// exception thrown in a plugin is caught by type in the host.
Error::~Error() = default;
const char* Error::kind() const { return "other"; }
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;
ModelError::~ModelError() = default;
SimulationError::~SimulationError() = default;
}  // namespace liembs
