// Out-of-line members of the plugin interfaces (liembs/plugin/*.hpp): their vtables live in
// the core library, which host and plugins share.
#include <liembs/error.hpp>
#include <liembs/plugin/algorithm.hpp>
#include <liembs/plugin/integrator.hpp>

namespace liembs {

Component::~Component() = default;
ForwardDynamics::~ForwardDynamics() = default;
VelocityRateDerivatives::~VelocityRateDerivatives() = default;
PrescribedMotion::~PrescribedMotion() = default;
BatchEvaluator::~BatchEvaluator() = default;

std::unique_ptr<BatchEvaluator> Algorithm::bind_evaluator(const DynamicsContext&) const {
  throw ModelError("it has no batch evaluation (AlgorithmCapabilities::batch_evaluation is not declared: it only "
                   "provides forward dynamics for runs)");
}

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::representation: return "representation";
    case Kind::group: return "group";
    case Kind::algorithm: return "algorithm";
    case Kind::integrator: return "integrator";
  }
  return "unknown";
}

const std::vector<Kind>& all_kinds() {
  static const std::vector<Kind> kinds{Kind::representation, Kind::group, Kind::algorithm, Kind::integrator};
  return kinds;
}

std::string MethodChoice::statement() const {
  std::string topic_words = topic;
  for (char& c : topic_words)
    if (c == '_') c = ' ';
  return topic_words + ": " + choice + (reason.empty() ? std::string() : " (" + reason + ")");
}

}  // namespace liembs
