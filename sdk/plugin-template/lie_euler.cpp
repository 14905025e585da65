// Template plugin: the Lie-Euler integrator, X_{n+1} = X_n exp(h F(t_n, X_n)), the
// first-order Munthe-Kaas method (paper 002, eq. 37 with one stage). It shows every
// piece an integrator plugin needs: the interface, options read strictly from its TOML
// section, and the LIEMBS_PLUGIN registration block.
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/state_space.hpp>

namespace {

class LieEuler final : public liembs::Integrator {
 public:
  // Options come from the [integrator] section of the run file; keys this factory does not
  // read are reported as unknown by the host.
  explicit LieEuler(const liembs::ConfigTable& options)
      : substeps_(options.integer_or("substeps", 1, 1, 1000)) {}

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
      "lie-euler", "1.0.0", "Lie-Euler method (template plugin); option substeps",
      [](const liembs::ConfigTable& options) { return std::make_unique<LieEuler>(options); });
}
