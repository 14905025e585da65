#include <liembs/error.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/state_space.hpp>
#include <liembs/util/format.hpp>

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <limits>

namespace liembs {

ConstrainedSystem::~ConstrainedSystem() = default;

namespace {

}  // namespace

std::string describe(const ConstraintBlock& block) {
  return block.description.empty() ? "joint '" + block.name + "'" : block.description;
}

SaddlePointSolver::SaddlePointSolver(const DaeTerms& terms)
    : n_(terms.mass.rows()), m_(terms.jacobian.rows()), mass_(terms.mass) {
  // M is taken as positive definite when the pivots of its pivoted LDL^T factorization are
  // positive and above round-off of the largest; Euler parameters' M has an exact null
  // direction (G p = 0), which the pivoting leaves for last.
  const auto pivots = mass_.vectorD();
  schur_ = mass_.info() == Eigen::Success &&
           (n_ == 0 || (pivots.minCoeff() > 0.0 && (m_ == 0 || pivots.minCoeff() > 1e-10 * pivots.maxCoeff())));
  if (schur_) {
    if (m_ == 0) return;
    mass_inverse_jacobian_t_ = mass_.solve(terms.jacobian.transpose());
    const Eigen::MatrixXd S = terms.jacobian * mass_inverse_jacobian_t_;
    schur_complement_.compute(S);
    jacobian_ = terms.jacobian;
    // Redundant constraints make S singular: its smallest pivot falls to round-off.
    const double schur_largest = S.diagonal().cwiseAbs().maxCoeff();
    const double smallest = schur_complement_.vectorD().cwiseAbs().minCoeff();
    if (schur_complement_.info() != Eigen::Success || !(smallest > 1e-12 * schur_largest))
      throw SimulationError("the constraint Jacobian is rank deficient (redundant or singular constraints; "
                            "smallest pivot of J M^-1 J^T " + format_number(smallest, 3) + ")");
    return;
  }
  if (m_ == 0) throw SimulationError("the mass matrix is not positive definite");
  Eigen::MatrixXd matrix = Eigen::MatrixXd::Zero(n_ + m_, n_ + m_);
  matrix.topLeftCorner(n_, n_) = terms.mass;
  matrix.topRightCorner(n_, m_) = terms.jacobian.transpose();
  matrix.bottomLeftCorner(m_, n_) = terms.jacobian;
  saddle_point_.compute(matrix);
  saddle_point_.setThreshold(1e-12);
  if (!saddle_point_.isInvertible())
    throw SimulationError("the matrix [[M, J^T], [J, 0]] is singular (redundant constraints, or a mass matrix that is "
                          "singular on the constraints' null space; rank " + std::to_string(saddle_point_.rank()) +
                          " of " + std::to_string(n_ + m_) + ")");
}

void SaddlePointSolver::solve(const Eigen::VectorXd* a, const Eigen::VectorXd& b, Eigen::VectorXd& x,
                              Eigen::VectorXd* lambda) const {
  if (schur_) {
    // lambda = S^-1 (J M^-1 a - b),  x = M^-1 (a - J^T lambda)
    if (m_ == 0) {
      x = a ? Eigen::VectorXd(mass_.solve(*a)) : Eigen::VectorXd::Zero(n_);
      if (lambda) lambda->resize(0);
      return;
    }
    Eigen::VectorXd multipliers;
    if (a) {
      const Eigen::VectorXd free = mass_.solve(*a);
      multipliers = schur_complement_.solve(jacobian_ * free - b);
      x = free - mass_inverse_jacobian_t_ * multipliers;
    } else {
      multipliers = schur_complement_.solve(-b);
      x = -mass_inverse_jacobian_t_ * multipliers;
    }
    if (lambda) *lambda = std::move(multipliers);
    return;
  }
  Eigen::VectorXd rhs(n_ + m_);
  if (a) rhs.head(n_) = *a;
  else rhs.head(n_).setZero();
  rhs.tail(m_) = b;
  const Eigen::VectorXd solution = saddle_point_.solve(rhs);
  x = solution.head(n_);
  if (lambda) *lambda = solution.tail(m_);
}

void solve_index1(const DaeTerms& terms, Eigen::VectorXd& rates, Eigen::VectorXd* multipliers) {
  const SaddlePointSolver solver(terms);
  solver.solve(&terms.forces, terms.acceleration_rhs, rates, multipliers);
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

void BodyVelocityMaps::update(const Group& group, const State& state, std::size_t bodies) {
  velocity = group.body_coordinates().velocity;
  maps.resize(6, static_cast<Eigen::Index>(bodies) * velocity);
  map_rates.resize(6 * static_cast<Eigen::Index>(bodies));
  group.velocity_maps(std::span<const Pose>(state.poses.data(), bodies), state.chart.data(), state.velocities.data(),
                      maps.data(), map_rates.data());
}

std::vector<ConstraintBlock> internal_constraint_blocks(const Group& group, const std::vector<std::string>& body_names,
                                                        Eigen::Index first_row) {
  const BodyCoordinates body = group.body_coordinates();
  std::vector<ConstraintBlock> blocks;
  if (body.internal_constraints == 0) return blocks;
  for (const auto& name : body_names) {
    const std::string what = body.internal_constraint_name ? body.internal_constraint_name : "internal constraint";
    blocks.push_back({name + "." + what, first_row, body.internal_constraints, "body '" + name + "' " + what});
    first_row += body.internal_constraints;
  }
  return blocks;
}

void write_internal_constraints(const Group& group, const State& state, std::size_t bodies, Eigen::Index first_row,
                                DaeTerms& terms, unsigned what) {
  const BodyCoordinates body = group.body_coordinates();
  const Eigen::Index k = body.internal_constraints, nv = body.velocity;
  if (k == 0 || bodies == 0) return;
  const auto rows = k * static_cast<Eigen::Index>(bodies);
  Eigen::VectorXd residual(rows), rhs(rows);
  Eigen::MatrixXd jacobian(k, nv * static_cast<Eigen::Index>(bodies));  // the blocks side by side
  const bool needs_jacobian = (what & dae::jacobian) != 0;
  group.internal_constraints(bodies, state.chart.data(), state.velocities.data(),
                             (what & dae::residual) ? residual.data() : nullptr,
                             needs_jacobian ? jacobian.data() : nullptr,
                             (what & dae::acceleration_rhs) ? rhs.data() : nullptr);
  if (what & dae::residual) terms.residual.segment(first_row, rows) = residual;
  // nu = 0 for the internal rows; an empty nu already means 0 everywhere.
  if ((what & dae::velocity_rhs) && terms.velocity_rhs.size() > 0) {
    terms.velocity_rhs.conservativeResize(first_row + rows);
    terms.velocity_rhs.segment(first_row, rows).setZero();
  }
  if (what & dae::acceleration_rhs) terms.acceleration_rhs.segment(first_row, rows) = rhs;
  if (needs_jacobian)
    for (std::size_t i = 0; i < bodies; ++i) {
      const auto b = static_cast<Eigen::Index>(i);
      terms.jacobian.block(first_row + k * b, nv * b, k, nv) = jacobian.middleCols(nv * b, nv);
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
  return describe(blocks[worst]) + " (" + symbol + " = " + format_number(norms[worst], 3) + ")";
}

std::string singular_driver(ConstrainedSystem& system, const State& state) {
  const std::vector<ConstraintBlock>& blocks = system.blocks();
  if (std::none_of(blocks.begin(), blocks.end(), [](const ConstraintBlock& block) { return block.driver; })) return {};
  DaeTerms terms;
  system.evaluate(state, terms, dae::jacobian);
  const Eigen::MatrixXd& J = terms.jacobian;
  const ConstraintBlock* found = nullptr;
  double least = std::numeric_limits<double>::infinity();
  for (const ConstraintBlock& block : blocks) {
    if (!block.driver) continue;
    // The part of each driver row outside the span of the other rows, relative to the row.
    Eigen::MatrixXd others(J.rows() - block.rows, J.cols());
    others << J.topRows(block.first), J.bottomRows(J.rows() - block.first - block.rows);
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(others.transpose());
    qr.setThreshold(1e-10);
    const Eigen::MatrixXd basis = Eigen::MatrixXd(qr.householderQ()).leftCols(qr.rank());
    // Relative to the largest row of J: a DP1 driver's row also vanishes at its singular
    // point (d/dt cos(theta) = -sin(theta) theta'), not only turns into the others' span.
    const double scale = J.rowwise().norm().maxCoeff();
    for (Eigen::Index r = block.first; r < block.first + block.rows; ++r) {
      const Eigen::VectorXd row = J.row(r).transpose();
      const double independent = scale > 0.0 ? (row - basis * (basis.transpose() * row)).norm() / scale : 0.0;
      if (independent < least) {
        least = independent;
        found = &block;
      }
    }
  }
  if (!found || !(least < 0.1)) return {};
  std::string message = "the driver '" + found->name + "' is at or near a singular point at t = " +
                        format_number(state.time, 6) + " s: its constraint row vanishes or is nearly a combination of the other "
                        "constraints' rows there (independent part " + format_number(least, 2) +
                        " of the largest constraint row; a DP1 driver f = cos(theta(t)) is singular where |f| = 1), so it no longer "
                        "drives the mechanism";
  if (found->has_alternate)
    message += "; its alternate did not take over (drivers swap where | |f| - 1 | < 0.1, [model] driver_swap_time)";
  else
    message += "; give it an alternate driver that holds on the same motion and is regular there "
               "([model.drivers." + found->name + ".alternate] for a JSON model, [model.constraints.alternate] "
               "in TOML; docs/geometric-constraints.md), which the run swaps in near such points";
  return message;
}

void velocity_violation(const DaeTerms& terms, const Eigen::VectorXd& velocities, Eigen::VectorXd& out) {
  out.noalias() = terms.jacobian * velocities;
  if (terms.velocity_rhs.size() != 0) out -= terms.velocity_rhs;
}

void project_velocities(ConstrainedSystem& system, State& state) {
  if (system.constraint_count() == 0) return;
  DaeTerms terms;
  system.evaluate(state, terms, dae::mass | dae::jacobian | dae::velocity_rhs);
  Eigen::VectorXd violation, correction;
  velocity_violation(terms, state.velocities, violation);
  SaddlePointSolver(terms).solve(nullptr, -violation, correction);
  state.velocities += correction;
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
                            format_number(state.time, 3) + " s, " + worst_constraint(system.blocks(), terms.residual));
    if (violation <= settings.tolerance) break;
    if (iteration == settings.max_iterations)
      throw SimulationError("constraint projection did not converge in " + std::to_string(settings.max_iterations) +
                            " iterations at t = " + format_number(state.time, 3) + " s; worst " +
                            worst_constraint(system.blocks(), terms.residual));
    Eigen::VectorXd increment;
    SaddlePointSolver(terms).solve(nullptr, -terms.residual, increment);
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
  Eigen::VectorXd violation = Eigen::VectorXd::Zero(kept.rows()), loop_violation, correction;
  velocity_violation(terms, state.velocities, loop_violation);
  violation.head(terms.jacobian.rows()) = loop_violation;
  SaddlePointSolver(augmented).solve(nullptr, -violation, correction);
  state.velocities += correction;
  // The given rates left out of H must have come out as given.
  const Eigen::VectorXd wanted = given.rows * file_velocities, got = given.rows * state.velocities;
  const double scale = std::max(1.0, file_velocities.lpNorm<Eigen::Infinity>());
  std::string contradicted;
  for (Eigen::Index k = 0; k < given.rows.rows(); ++k)
    if (!(std::abs(got(k) - wanted(k)) <= 1e-8 * scale))
      contradicted += std::string(contradicted.empty() ? "" : ", ") + "'" + given.names[static_cast<std::size_t>(k)] + "' (given " +
                      format_number(wanted(k), 3) + ", the loops allow " + format_number(got(k), 3) + ")";
  if (!contradicted.empty()) {
    std::string kept_rates;
    for (const Eigen::Index k : held)
      kept_rates += std::string(kept_rates.empty() ? "" : ", ") + "'" + given.names[static_cast<std::size_t>(k)] +
                    "' = " + format_number(wanted(k), 3);
    throw SimulationError("the initial joint rates given in the file contradict the closed loops: keeping " +
                          kept_rates + ", " + contradicted +
                          "; give fewer rates (the others follow from the loops) or consistent ones");
  }
  return iterations;
}

}  // namespace liembs
