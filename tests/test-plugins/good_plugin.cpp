// A minimal integrator plugin (explicit Lie-Euler) used by the registry error-path tests;
// compile definitions turn it into a broken variant (see CMakeLists.txt).
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/state_space.hpp>

#include <stdexcept>

namespace {

class LieEuler final : public liembs::Integrator {
 public:
  void start(const liembs::StateSpace&, const liembs::State&) override {}
  void step(const liembs::StateSpace& space, liembs::ForwardDynamics& dynamics, liembs::State& state,
            double h) override {
    dynamics.velocity_rates(state, rates_);
    space.retract(state, h * state.velocities, h * rates_);
    state.time += h;
  }
  int order() const override { return 1; }

 private:
  Eigen::VectorXd rates_;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Integrator>(LIEMBS_TEST_COMPONENT_NAME, "0.0.1", "test plugin",
                                    [](const liembs::ConfigTable&) -> std::unique_ptr<LieEuler> {
#ifdef LIEMBS_TEST_THROW_IN_FACTORY
                                      throw std::runtime_error("deliberate failure in the factory");
#else
                                      return std::make_unique<LieEuler>();
#endif
                                    });
}
