// Representation plugin hybrid: the recursive algorithms of
// liembs/dynamics/recursive_algorithms.hpp and derivative_algorithms.hpp instantiated with the Hybrid policy.
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/representation_component.hpp>
#include <liembs/plugin/plugin.hpp>

LIEMBS_PLUGIN(registrar) {
  using Component = liembs::RepresentationComponent<liembs::representations::Hybrid>;
  registrar.add<liembs::Representation>("hybrid", "1.0.0", "hybrid twists (omega^s, r'), world-resolved at the body origin (000 section 4.3)",
                                        liembs::OptionDeclaration{}, [](const liembs::ConfigTable&) { return std::make_unique<Component>(); });
}
