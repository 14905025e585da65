// Integrator plugin rkmk: Munthe-Kaas Lie group Runge-Kutta methods with any explicit
// Butcher tableau, for the left-invariant ODE X' = X F(t, X) on the state space
// (paper 002, eqs. 35-37):
//   Psi_j = h sum_{l<j} a_jl k_l,   k_j = dexp^-1_{-Psi_j} F(t + c_j h, X exp Psi_j),
//   X_{n+1} = X_n exp(h sum_j b_j k_j).
// Velocities form a vector-space factor, so they get the plain Runge-Kutta update.
// For a constrained system F comes from the index-1 solve at every stage (002 eq. 3); the
// option `projection` moves the state back onto g = 0 and J V = nu after every step
// (off by default, so the paper's unstabilized drifts are reproduced).
#include "butcher_tableau.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/plugin/plugin.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>
#include <liembs/util/format.hpp>

#include <cstdio>
#include <limits>
#include <sstream>

namespace {

using namespace liembs;

// The options, declared once (liembs plugins --options rkmk, docs/plugin-options.md).
const OptionDeclaration& rkmk_options() {
  static const OptionDeclaration declaration = [] {
    OptionDeclaration d(rkmk::tableau_options());
    d.add({OptionSpec::boolean("projection", false, "project onto g = 0 and J V = nu after every step"),
           OptionSpec::number("projection_tolerance", 1e-12, Range::positive(), "Newton tolerance of the projection"),
           OptionSpec::integer("projection_max_iterations", 20, 1, std::numeric_limits<long long>::max(),
                               "Newton iterations of the projection")});
    return d;
  }();
  return declaration;
}

class RkmkIntegrator final : public Integrator {
 public:
  explicit RkmkIntegrator(const ConfigTable& options)
      : tableau_(rkmk::read_tableau(options)),
        order_(rkmk::classical_order(tableau_)),
        projection_(rkmk_options().boolean(options, "projection")) {
    projection_settings_.tolerance = rkmk_options().number(options, "projection_tolerance");
    projection_settings_.max_iterations = static_cast<int>(rkmk_options().integer(options, "projection_max_iterations"));
  }

  std::string description() const override {
    std::ostringstream out;
    out << "Munthe-Kaas RK, tableau " << tableau_.name << " (" << tableau_.stages() << " stages, order "
        << order_ << ")" << (projection_ ? ", projection onto the constraints after each step" : "");
    return out.str();
  }
  int order() const override { return order_; }
  std::vector<std::pair<std::string, double>> statistics() const override {
    std::vector<std::pair<std::string, double>> counters{
        {"steps", static_cast<double>(steps_)},
        {"right_hand_side_evaluations", static_cast<double>(steps_ * tableau_.stages())}};
    if (projection_) counters.emplace_back("projection_newton_iterations", static_cast<double>(projection_iterations_));
    return counters;
  }

  void start(const StateSpace& space, const State& initial) override {
    const auto n = static_cast<Eigen::Index>(space.velocity_dimension());
    const auto s = static_cast<std::size_t>(tableau_.stages());
    configuration_slopes_.assign(s, Eigen::VectorXd::Zero(n));
    velocity_slopes_.assign(s, Eigen::VectorXd::Zero(n));
    configuration_increment_.setZero(n);
    velocity_increment_.setZero(n);
    stage_ = initial;
    steps_ = projection_iterations_ = 0;
  }

  void step(const StateSpace& space, ForwardDynamics& dynamics, State& state, double h) override {
    const double start_time = state.time;
    try {
      advance(space, dynamics, state, h);
      ++steps_;
    } catch (const SimulationError& error) {
      std::string where = "rkmk step from t = " + format_number(start_time) + " s with step size " + format_number(h) + " s";
      if (ConstrainedSystem* constraints = dynamics.constraints()) {
        DaeTerms terms;
        constraints->evaluate(state, terms, dae::residual);
        where += " (worst constraint: " + worst_constraint(constraints->blocks(), terms.residual) + ")";
      }
      throw SimulationError(where + ": " + error.what() + "; reduce simulation.step_size");
    }
  }

 private:
  void advance(const StateSpace& space, ForwardDynamics& dynamics, State& state, double h) {
    const int s = tableau_.stages();
    for (int j = 0; j < s; ++j) {
      // Psi_j = h sum_{l<j} a_jl k_l
      configuration_increment_.setZero();
      velocity_increment_.setZero();
      for (int l = 0; l < j; ++l) {
        const double weight = h * tableau_.a(j, l);
        if (weight == 0.0) continue;
        configuration_increment_.noalias() += weight * configuration_slopes_[static_cast<std::size_t>(l)];
        velocity_increment_.noalias() += weight * velocity_slopes_[static_cast<std::size_t>(l)];
      }
      stage_.poses = state.poses;
      stage_.chart = state.chart;
      stage_.coordinates = state.coordinates;
      stage_.velocities = state.velocities;
      stage_.time = state.time + tableau_.c(j) * h;
      if (j > 0) space.retract(stage_, configuration_increment_, velocity_increment_);
      // k_j = (dexp^-1_{-Psi_j} V_j, V'_j)
      dynamics.velocity_rates(stage_, velocity_slopes_[static_cast<std::size_t>(j)]);
      space.dexpinv_left(configuration_increment_, stage_.velocities,
                         configuration_slopes_[static_cast<std::size_t>(j)]);
    }
    // Phi = h sum_j b_j k_j;  X <- X exp(Phi)
    configuration_increment_.setZero();
    velocity_increment_.setZero();
    for (int j = 0; j < s; ++j) {
      configuration_increment_.noalias() += (h * tableau_.b(j)) * configuration_slopes_[static_cast<std::size_t>(j)];
      velocity_increment_.noalias() += (h * tableau_.b(j)) * velocity_slopes_[static_cast<std::size_t>(j)];
    }
    space.retract(state, configuration_increment_, velocity_increment_);
    state.time += h;
    if (projection_)
      if (ConstrainedSystem* constraints = dynamics.constraints()) {
        try {
          projection_iterations_ += project_onto_constraints(space, *constraints, state, projection_settings_);
        } catch (const SimulationError& error) {
          throw SimulationError(std::string(error.what()) + " (or raise integrator.projection_max_iterations)");
        }
      }
  }

  rkmk::ButcherTableau tableau_;
  int order_;
  bool projection_;
  ProjectionSettings projection_settings_;
  long long projection_iterations_ = 0;
  long long steps_ = 0;
  std::vector<Eigen::VectorXd> configuration_slopes_, velocity_slopes_;
  Eigen::VectorXd configuration_increment_, velocity_increment_;
  State stage_;
};

}  // namespace

LIEMBS_PLUGIN(registrar) {
  registrar.add<liembs::Integrator>(
      "rkmk", "1.0.0",
      "Munthe-Kaas Lie group Runge-Kutta; tableau euler, heun, rk3, rk4 or custom (a, b, c)",
      rkmk_options(), [](const liembs::ConfigTable& options) { return std::make_unique<RkmkIntegrator>(options); });
}
