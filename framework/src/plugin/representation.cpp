// The defaults of the OPTIONAL operations of a representation (plugin/representation.hpp):
// a host asks capabilities() first, so these only answer a call made without asking.
#include <liembs/error.hpp>
#include <liembs/plugin/representation.hpp>

namespace liembs {

namespace {
[[noreturn]] void not_provided(const char* operation, const char* capability) {
  throw ModelError(std::string("this twist representation does not provide ") + operation +
                   " (its plugin declares no RepresentationCapabilities::" + capability + ")");
}
}  // namespace

std::unique_ptr<TreeDerivatives> Representation::bind_derivatives(std::shared_ptr<const KinematicTree>) const {
  not_provided("the analytic derivatives of tree dynamics", "derivatives");
}
std::unique_ptr<TreeGeometricDerivatives> Representation::bind_geometric_derivatives(std::shared_ptr<const KinematicTree>) const {
  not_provided("the derivatives by the joints' geometry", "geometric_derivatives");
}
std::unique_ptr<HigherOrderDynamics> Representation::bind_higher_order(std::shared_ptr<const KinematicTree>, int) const {
  not_provided("the higher-order dynamics", "higher_order");
}

}  // namespace liembs
