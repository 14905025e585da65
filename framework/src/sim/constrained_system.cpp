#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include <algorithm>

#include <cmath>
#include <cstdio>

namespace liembs {

ConstrainedSystem::~ConstrainedSystem() = default;

namespace {

std::string format_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", x);
  return buffer;
}

// The Schur complement S = J M^-1 J^T and M^-1 J^T, from the Cholesky factor of M.
struct SchurComplement {
  Eigen::LLT<Eigen::MatrixXd> mass;
  Eigen::MatrixXd mass_inverse_jacobian_t;  // M^-1 J^T
  Eigen::LDLT<Eigen::MatrixXd> schur;

  explicit SchurComplement(const DaeTerms& terms) : mass(terms.mass) {
    if (mass.info() != Eigen::Success)
      throw SimulationError("the mass matrix is not positive definite");
    mass_inverse_jacobian_t = mass.solve(terms.jacobian.transpose());
    const Eigen::MatrixXd S = terms.jacobian * mass_inverse_jacobian_t;
    schur.compute(S);
    // Redundant constraints make S singular: its smallest pivot falls to round-off.
    const double largest = S.diagonal().cwiseAbs().maxCoeff();
    const double smallest = schur.vectorD().cwiseAbs().minCoeff();
    if (schur.info() != Eigen::Success || !(smallest > 1e-12 * largest))
      throw SimulationError("the constraint Jacobian is rank deficient (redundant or singular constraints; "
                            "smallest pivot of J M^-1 J^T " + format_number(smallest) + ")");
  }
};

}  // namespace

void solve_index1(const DaeTerms& terms, Eigen::VectorXd& rates, Eigen::VectorXd* multipliers) {
  if (terms.jacobian.rows() == 0) {
    Eigen::LLT<Eigen::MatrixXd> mass(terms.mass);
    if (mass.info() != Eigen::Success) throw SimulationError("the mass matrix is not positive definite");
    rates = mass.solve(terms.forces);
    if (multipliers) multipliers->resize(0);
    return;
  }
  const SchurComplement schur(terms);
  // lambda = S^-1 (J M^-1 Q - eta),  V' = M^-1 (Q - J^T lambda)
  const Eigen::VectorXd free_rates = schur.mass.solve(terms.forces);
  const Eigen::VectorXd lambda = schur.schur.solve(terms.jacobian * free_rates - terms.acceleration_rhs);
  rates = free_rates - schur.mass_inverse_jacobian_t * lambda;
  if (multipliers) *multipliers = lambda;
}

std::vector<Eigen::Index> independent_rows(const Eigen::MatrixXd& jacobian) {
  std::vector<Eigen::Index> rows;
  if (jacobian.rows() == 0) return rows;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(jacobian.transpose());
  qr.setThreshold(1e-9);
  const Eigen::Index rank = qr.rank();
  for (Eigen::Index k = 0; k < rank; ++k) rows.push_back(qr.colsPermutation().indices()(k));
  std::sort(rows.begin(), rows.end());
  return rows;
}

void group_velocity_map(const Group& group, std::span<const Pose> poses, const Eigen::VectorXd& body_twists,
                        std::vector<Mat6>& maps, Eigen::VectorXd& map_rate_times_velocity) {
  const std::size_t n = poses.size();
  const auto dimension = static_cast<Eigen::Index>(6 * n);
  maps.resize(n);
  Eigen::VectorXd unit = Eigen::VectorXd::Zero(dimension), column(dimension);
  for (int k = 0; k < 6; ++k) {  // column k of every T_i at once
    for (std::size_t i = 0; i < n; ++i) unit(static_cast<Eigen::Index>(6 * i + k)) = 1.0;
    group.to_body_twists(poses, unit.data(), column.data());
    for (std::size_t i = 0; i < n; ++i) {
      maps[i].col(k) = column.segment<6>(static_cast<Eigen::Index>(6 * i));
      unit(static_cast<Eigen::Index>(6 * i + k)) = 0.0;
    }
  }
  // The group's rates at zero body-twist rates are r0 = -T^-1 T' V, so T' V = -T r0.
  group.rates_from_body_twist_rates(poses, body_twists.data(), unit.data(), column.data());
  map_rate_times_velocity.resize(dimension);
  for (std::size_t i = 0; i < n; ++i) {
    const auto o = static_cast<Eigen::Index>(6 * i);
    map_rate_times_velocity.segment<6>(o) = -maps[i] * column.segment<6>(o);
  }
}

std::vector<double> block_norms(const std::vector<ConstraintBlock>& blocks, const Eigen::VectorXd& values) {
  std::vector<double> norms;
  norms.reserve(blocks.size());
  for (const auto& block : blocks) norms.push_back(values.segment(block.first, block.rows).norm());
  return norms;
}

std::string worst_constraint(const std::vector<ConstraintBlock>& blocks, const Eigen::VectorXd& values,
                             const char* symbol) {
  if (blocks.empty()) return "no constraint";
  const auto norms = block_norms(blocks, values);
  std::size_t worst = 0;
  for (std::size_t i = 1; i < norms.size(); ++i)
    if (!(norms[i] <= norms[worst])) worst = i;  // NaN counts as worst
  return "joint '" + blocks[worst].name + "' (" + symbol + " = " + format_number(norms[worst]) + ")";
}

void velocity_violation(const DaeTerms& terms, const Eigen::VectorXd& velocities, Eigen::VectorXd& out) {
  out.noalias() = terms.jacobian * velocities;
  if (terms.velocity_rhs.size() != 0) out -= terms.velocity_rhs;
}

void project_velocities(ConstrainedSystem& system, State& state) {
  if (system.constraint_count() == 0) return;
  DaeTerms terms;
  system.evaluate(state, terms, dae::mass | dae::jacobian | dae::velocity_rhs);
  const SchurComplement schur(terms);
  Eigen::VectorXd violation;
  velocity_violation(terms, state.velocities, violation);
  state.velocities -= schur.mass_inverse_jacobian_t * schur.schur.solve(violation);
}

namespace {

// The configuration part of project_onto_constraints: Gauss-Newton steps onto g = 0.
int project_positions(const StateSpace& space, ConstrainedSystem& system, State& state,
                      const ProjectionSettings& settings) {
  DaeTerms terms;
  int iteration = 0;
  for (;; ++iteration) {
    system.evaluate(state, terms, dae::mass | dae::position_terms);
    const double violation = terms.residual.norm();
    if (!std::isfinite(violation))
      throw SimulationError("constraint projection: the constraints are not finite at t = " +
                            format_number(state.time) + " s, " + worst_constraint(system.blocks(), terms.residual));
    if (violation <= settings.tolerance) break;
    if (iteration == settings.max_iterations)
      throw SimulationError("constraint projection did not converge in " + std::to_string(settings.max_iterations) +
                            " iterations at t = " + format_number(state.time) + " s; worst " +
                            worst_constraint(system.blocks(), terms.residual));
    const SchurComplement schur(terms);
    const Eigen::VectorXd increment = -schur.mass_inverse_jacobian_t * schur.schur.solve(terms.residual);
    space.retract_configuration(state, increment);
  }
  return iteration;
}

}  // namespace

int project_onto_constraints(const StateSpace& space, ConstrainedSystem& system, State& state,
                             const ProjectionSettings& settings) {
  if (system.constraint_count() == 0) return 0;
  const int iterations = project_positions(space, system, state, settings);
  project_velocities(system, state);
  return iterations;
}

int make_initial_state_consistent(const StateSpace& space, ConstrainedSystem& system, State& state) {
  if (system.constraint_count() == 0) return 0;
  const int iterations = project_positions(space, system, state, ProjectionSettings{});
  const GivenRates given = system.given_rates(state);
  if (given.rows.rows() == 0) {
    project_velocities(system, state);
    return iterations;
  }
  const Eigen::VectorXd file_velocities = state.velocities;
  DaeTerms terms;
  system.evaluate(state, terms, dae::mass | dae::jacobian | dae::velocity_rhs);
  // H: the given rates not already fixed by the loops and the given rates before them.
  const Eigen::Index n = state.velocities.size();
  Eigen::MatrixXd kept = terms.jacobian;
  Eigen::Index rank = Eigen::ColPivHouseholderQR<Eigen::MatrixXd>(kept.transpose()).setThreshold(1e-9).rank();
  std::vector<Eigen::Index> held;
  for (Eigen::Index k = 0; k < given.rows.rows(); ++k) {
    Eigen::MatrixXd candidate(kept.rows() + 1, n);
    candidate << kept, given.rows.row(k);
    const Eigen::Index candidate_rank =
        Eigen::ColPivHouseholderQR<Eigen::MatrixXd>(candidate.transpose()).setThreshold(1e-9).rank();
    if (candidate_rank == rank) continue;
    kept = std::move(candidate);
    rank = candidate_rank;
    held.push_back(k);
  }
  // V = V0 - M^-1 A^T (A M^-1 A^T)^-1 (A V0 - b), A = [J; H], A V0 - b = [J V0 - nu; 0].
  DaeTerms augmented;
  augmented.mass = terms.mass;
  augmented.jacobian = kept;
  const SchurComplement schur(augmented);
  Eigen::VectorXd violation = Eigen::VectorXd::Zero(kept.rows()), loop_violation;
  velocity_violation(terms, state.velocities, loop_violation);
  violation.head(terms.jacobian.rows()) = loop_violation;
  state.velocities -= schur.mass_inverse_jacobian_t * schur.schur.solve(violation);
  // The given rates left out of H must have come out as given.
  const Eigen::VectorXd wanted = given.rows * file_velocities, got = given.rows * state.velocities;
  const double scale = std::max(1.0, file_velocities.lpNorm<Eigen::Infinity>());
  std::string contradicted;
  for (Eigen::Index k = 0; k < given.rows.rows(); ++k)
    if (!(std::abs(got(k) - wanted(k)) <= 1e-8 * scale))
      contradicted += std::string(contradicted.empty() ? "" : ", ") + "'" + given.names[static_cast<std::size_t>(k)] + "' (given " +
                      format_number(wanted(k)) + ", the loops allow " + format_number(got(k)) + ")";
  if (!contradicted.empty()) {
    std::string kept_rates;
    for (const Eigen::Index k : held)
      kept_rates += std::string(kept_rates.empty() ? "" : ", ") + "'" + given.names[static_cast<std::size_t>(k)] +
                    "' = " + format_number(wanted(k));
    throw SimulationError("the initial joint rates given in the file contradict the closed loops: keeping " +
                          kept_rates + ", " + contradicted +
                          "; give fewer rates (the others follow from the loops) or consistent ones");
  }
  return iterations;
}

}  // namespace liembs
