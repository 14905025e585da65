// Template plugin: the Lie-Euler integrator, X_{n+1} = X_n exp(h F(t_n, X_n)), the
// first-order Munthe-Kaas method (paper 002, eq. 37 with one stage). It shows every
// piece an integrator plugin needs: the interface, options read strictly from its TOML
// section, and the LIEMBS_PLUGIN registration block.
//
// The contract (liembs/plugin/integrator.hpp, docs/plugins.md): an integrator MUST implement
// start, step and order (below). It MAY implement the OPTIONAL operations; this one does not,
// so the host uses their stated fallbacks:
//   capabilities()    none declared: no accelerations or multipliers are recorded (a
//                     constrained run says "multipliers: not-recorded" in summary.json)
//   charts_switched   nothing to restart (Lie-Euler keeps no history)
//   statistics        no integrator_statistics in summary.json
//   method_choices    nothing stated (an explicit method has no Newton matrix to choose)
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/state_space.hpp>

namespace {

// The options, declared once (docs/plugins.md, "Options"): `liembs plugins --options lie-euler`
// prints them, and the host refuses any other key of the [integrator] section.
const liembs::OptionDeclaration& lie_euler_options() {
  static const liembs::OptionDeclaration declaration{
      liembs::OptionSpec::integer("substeps", 1, 1, 1000, "Lie-Euler steps per output step")};
  return declaration;
}

class LieEuler final : public liembs::Integrator {
 public:
  // Read through the declaration: its default and range apply.
  explicit LieEuler(const liembs::ConfigTable& options)
      : substeps_(lie_euler_options().integer(options, "substeps")) {}

  std::string description() const override {
    return "Lie-Euler, " + std::to_string(substeps_) + " substep(s) per step";
  }
  int order() const override { return 1; }

  void start(const liembs::StateSpace& space, const liembs::State&) override {
    rates_.resize(static_cast<Eigen::Index>(space.velocity_dimension()));
  }

  void step(const liembs::StateSpace& space, liembs::ForwardDynamics& dynamics, liembs::State& state,
            double step_size) override {
    const double h = step_size / static_cast<double>(substeps_);
    for (long long i = 0; i < substeps_; ++i) {
      dynamics.velocity_rates(state, rates_);             // V' at the current state
      space.retract(state, h * state.velocities, h * rates_);  // X <- X exp(h (V, V'))
      state.time += h;
    }
  }

 private:
  long long substeps_;
  Eigen::VectorXd rates_;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Integrator>(
      "lie-euler", "1.0.0", "Lie-Euler method (template plugin); option substeps", lie_euler_options(),
      [](const liembs::ConfigTable& options) { return std::make_unique<LieEuler>(options); });
}
