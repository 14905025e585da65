// Representation plugin mixed: the recursive algorithms of
// liembs/dynamics/recursive_algorithms.hpp and derivative_algorithms.hpp instantiated with the Mixed policy.
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/representation_component.hpp>
#include <liembs/plugin/plugin.hpp>

LIEMBS_PLUGIN(registrar) {
  using Component = liembs::RepresentationComponent<liembs::representations::Mixed>;
  registrar.add<liembs::Representation>("mixed", "1.0.0", "mixed twists (omega^b, r') (000 sections 3.4, 5.4)",
                                        liembs::OptionDeclaration{}, [](const liembs::ConfigTable&) { return std::make_unique<Component>(); });
}
