// A representation that disagrees with the others, for the algorithm-study tests: the
// body-fixed recursions bound to a copy of the tree whose last node's inertia is 1 % too
// large, so every algorithm it computes differs from the true representations by about
// 1e-3 relative. It binds tree dynamics only: it declares no OPTIONAL operation
// (RepresentationCapabilities), so it has no derivatives and no higher orders.
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/recursive_algorithms.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/plugin/representation.hpp>

namespace {

class SkewedRepresentation final : public liembs::Representation {
 public:
  std::unique_ptr<liembs::TreeDynamics> bind_tree(std::shared_ptr<const liembs::KinematicTree> tree) const override {
    auto skewed = std::make_shared<liembs::KinematicTree>(*tree);
    if (!skewed->inertia.empty()) skewed->inertia.back() *= 1.01;
    return std::make_unique<liembs::RecursiveDynamics<liembs::representations::BodyFixed>>(std::move(skewed));
  }
  liembs::Vec6 twist_from_body(const liembs::Pose&, const liembs::Vec6& body_twist) const override { return body_twist; }
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Representation>("skewed", "0.0.1", "body-fixed with a 1 % error in one inertia (tests only)",
                                        [](const liembs::ConfigTable&) { return std::make_unique<SkewedRepresentation>(); });
}
