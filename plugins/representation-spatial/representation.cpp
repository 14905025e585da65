// Representation plugin spatial: the recursive algorithms of
// liembs/dynamics/recursive_algorithms.hpp and derivative_algorithms.hpp instantiated with the Spatial policy.
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/representation_component.hpp>
#include <liembs/plugin/plugin.hpp>

LIEMBS_PLUGIN(registrar) {
  using Component = liembs::RepresentationComponent<liembs::representations::Spatial>;
  registrar.add<liembs::Representation>("spatial", "1.0.0", "spatial twists Ad_C V^b, world-frame inertias (000 section 4.2)",
                                        liembs::OptionDeclaration{}, [](const liembs::ConfigTable&) { return std::make_unique<Component>(); });
}
