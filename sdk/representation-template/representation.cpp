// Template of a third-party twist representation: a policy (liembs/dynamics/representations.hpp
// says what a policy provides) and one line that instantiates every algorithm family for it
// (RepresentationComponent: kinematics, RNEA/ABA/CRBA, derivatives, geometric derivatives,
// higher order), registered under its name. Selected in a run file with
//   [representation]
//   name = "spatial-formed"
//
// This policy is the spatial representation of paper 000 section 4.2 (twists and wrenches in
// the world frame at the world origin) with one choice made differently: the built-in policy
// applies a node's world-frame inertia Ad_C^-T M Ad_C^-1 in factors about the centre of mass
// (representations::SpatialInertia), this one forms its 10 world parameters once per node
// and call (000 eq. 72a). Every result equals the built-in representations' to round-off;
// the cost differs. Change any operation of the policy (or write one from scratch against
// the same operations) and the algorithms follow.
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/representation_component.hpp>
#include <liembs/plugin/plugin.hpp>

namespace {

struct SpatialFormed : liembs::representations::Spatial {
  static constexpr const char* name = "spatial-formed";
  // The node inertia in world coordinates, as 10 parameters (000 eq. 72a).
  static liembs::RigidInertia node_inertia(const liembs::Pose& C, const liembs::RigidInertia& M_body,
                                           const liembs::CentroidalInertia&) {
    return inertia(C, M_body);
  }
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Representation>(
      SpatialFormed::name, "1.0.0", "spatial twists, world-frame inertias formed as 10 parameters (SDK template)",
      [](const liembs::ConfigTable&) { return std::make_unique<liembs::RepresentationComponent<SpatialFormed>>(); });
}
