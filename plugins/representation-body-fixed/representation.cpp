// Representation plugin body-fixed: the recursive algorithms of
// liembs/dynamics/recursive_algorithms.hpp and derivative_algorithms.hpp instantiated with the BodyFixed policy.
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/representation_component.hpp>
#include <liembs/plugin/plugin.hpp>

LIEMBS_PLUGIN(registrar) {
  using Component = liembs::RepresentationComponent<liembs::representations::BodyFixed>;
  registrar.add<liembs::Representation>("body-fixed", "1.0.0", "body-fixed twists (omega, R^T r'), body-frame inertias (000 section 4.1)",
                                        liembs::OptionDeclaration{}, [](const liembs::ConfigTable&) { return std::make_unique<Component>(); });
}
