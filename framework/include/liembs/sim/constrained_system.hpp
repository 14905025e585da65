#pragma once
// The DAE view of a formulation with holonomic constraints (paper 002 eq. 1):
//   M(q) V' + J(q)^T lambda = Q(q, V, t),   q' = q V,   g(q, t) = 0,
// in the run's velocity coordinates V (the group's convention for free bodies, then joint
// rates). J is the derivative of g along the state space's retraction,
//   d/de g(q exp(e xi), t) |_{e=0} = J(q, t) xi.
// Rheonomic (driving) constraints depend on t. Sign convention, that of paper 004
// (Phi = Phi(q) - f(t), eqs. 15-17):
//   g' = J V - nu(q, t) = 0       velocity-level constraint J V = nu   (nu = -g_t, e.g. f'(t))
//   g'' = 0  <=>  J V' = eta      eta = -J' V - (nu)' terms, e.g. -J' V + f''(t).
// For scleronomic constraints nu = 0 and eta = -J' V.
//
// A ForwardDynamics with constraints returns this interface from constraints(); its
// velocity_rates() then solve the index-1 system (002 eq. 3). DAE integrators (generalized-
// alpha, IDA) and projections use the terms directly.
#include <liembs/plugin/group.hpp>
#include <liembs/plugin/state.hpp>

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <span>
#include <string>
#include <vector>

namespace liembs {

class StateSpace;

// Rows of g that belong to one joint (or one body's internal constraint), for per-block
// violation reports.
struct ConstraintBlock {
  std::string name;      // the joint's name; trajectory columns and summary keys use it
  Eigen::Index first = 0;
  Eigen::Index rows = 0;
  std::string description = {};  // for messages; empty: "joint '<name>'"
  bool driver = false;           // a driving constraint (a geometric constraint with f(t))
  bool has_alternate = false;    // a DP1 driver with an alternate (switch_drivers)
};

// "joint 'A'", or the block's own description ("body 'crank' normalization").
std::string describe(const ConstraintBlock& block);

struct DaeTerms {
  Eigen::MatrixXd mass;              // M(q), velocity_dimension^2, symmetric positive semidefinite and
                                     // positive definite on the null space of J (rp: rank 6 of 7 per body)
  Eigen::VectorXd forces;            // Q(q, V, t): applied, gravity and velocity terms
  Eigen::VectorXd residual;          // g(q)
  Eigen::MatrixXd jacobian;          // J(q), constraint_count x velocity_dimension
  Eigen::VectorXd acceleration_rhs;  // eta(q, V, t): J V' = eta
  // nu(q, t): J V = nu. A system without rheonomic constraints may leave it empty, which
  // means nu = 0 (velocity_violation reads it so).
  Eigen::VectorXd velocity_rhs;
};

// Partial derivatives of the DAE residual for the Newton matrices of implicit integrators,
// at a state and given a = V', lambda (configuration derivatives along the retraction
// q exp(delta), velocities held fixed):
struct DaeDerivatives {
  Eigen::MatrixXd damping;              // C = -dQ/dV                              (n x n)
  Eigen::MatrixXd stiffness;            // K = d(M a + J^T lambda - Q)/d delta      (n x n)
  Eigen::MatrixXd velocity_constraint;  // P = d(J V - nu)/d delta                  (m x n)
};

// Which terms evaluate() must fill (the others may be left untouched), and which derivatives
// evaluate_derivatives() must fill.
namespace dae {
inline constexpr unsigned mass = 1u, forces = 2u, residual = 4u, jacobian = 8u, acceleration_rhs = 16u,
                          velocity_rhs = 32u;
inline constexpr unsigned damping = 64u, stiffness = 128u, velocity_constraint = 256u;
// g, J and nu: what the constraint-violation reports need.
inline constexpr unsigned position_terms = residual | jacobian | velocity_rhs;
inline constexpr unsigned all = mass | forces | residual | jacobian | acceleration_rhs | velocity_rhs;
}  // namespace dae

// Joint rates given in the model's file (initial_velocity), as linear functionals of the
// velocities: rows * V = the given rates. The initial velocity projection keeps them.
struct GivenRates {
  Eigen::MatrixXd rows;            // one row per given rate, velocity_dimension columns
  std::vector<std::string> names;  // per row: "joint 'A'" or "joint 'C' rate 2"
};

// The DAE view of a formulation, part of the ALGORITHM kind's contract (liembs/plugin/
// algorithm.hpp): a ForwardDynamics returns it from constraints() (with constraint rows) or
// declares it as DynamicsCapabilities::dae_form (without). REQUIRED of the view: constraint_count,
// blocks, evaluate. OPTIONAL, with the default stated at each: analytic_derivatives and
// evaluate_derivatives, redundant_constraints, given_rates, switch_drivers.
class ConstrainedSystem {
 public:
  virtual ~ConstrainedSystem();
  virtual Eigen::Index constraint_count() const = 0;
  virtual const std::vector<ConstraintBlock>& blocks() const = 0;
  virtual void evaluate(const State& state, DaeTerms& terms, unsigned what = dae::all) = 0;
  // The derivatives (dae::damping | dae::stiffness | dae::velocity_constraint) this system
  // computes analytically in evaluate_derivatives; none by default, and the integrators then
  // difference evaluate() (NewtonDerivatives, sim/newton_derivatives.hpp).
  virtual unsigned analytic_derivatives() const { return 0; }
  // Fills the asked derivatives (a subset of analytic_derivatives()) at `state` for the given
  // a = V' and lambda (stiffness only). One call for the whole system.
  virtual void evaluate_derivatives(const State& state, const Eigen::VectorXd& acceleration,
                                    const Eigen::VectorXd& multipliers, DaeDerivatives& derivatives, unsigned what) {
    (void)state, (void)acceleration, (void)multipliers, (void)derivatives, (void)what;
  }
  // Rows left out as structurally redundant, for the run summary ("joint 'D': 2 of 5 rows").
  virtual std::vector<std::string> redundant_constraints() const { return {}; }
  // The rates the file gives, at `state` (the initial state after its position projection);
  // none by default.
  virtual GivenRates given_rates(const State& state) {
    (void)state;
    return {};
  }
  // Called before every step (execute_run, and any solver marching in time): a driving
  // constraint near its singular points is swapped for its alternate (paper 004 section 4.2:
  // a DP1 driver f = cos theta(t) with | |f(t)| - 1 | < 0.1 switches to its alternate, and
  // back). Both describe the same motion, so the state stays consistent; the rows (and
  // hence lambda) of that block change. `time` is where the rule is tested
  // (RunSettings::DriverSwapTime: the step's start or the time it solves for). Returns the number of swaps
  // made (0 by default).
  virtual int switch_drivers(double time) {
    (void)time;
    return 0;
  }
};

// --- Solvers shared by the integrators (framework/src/sim/constrained_system.cpp) ---

// Solves the saddle-point system [[M, J^T], [J, 0]] (x, lambda) = (a, b) of a DaeTerms' M and J:
// by the Schur complement J M^-1 J^T when M is positive definite, otherwise (Euler
// parameters: M = diag(m 1, 4 G^T J G) is singular along p) by an LU factorization of the
// whole matrix, which is regular when M is positive definite on the null space of J (the
// normalization row p^T covers the null direction of M). Throws SimulationError if the
// constraints are redundant or M is singular on their null space.
class SaddlePointSolver {
 public:
  explicit SaddlePointSolver(const DaeTerms& terms);
  // a == nullptr stands for a = 0.
  void solve(const Eigen::VectorXd* a, const Eigen::VectorXd& b, Eigen::VectorXd& x,
             Eigen::VectorXd* lambda = nullptr) const;
  bool uses_schur_complement() const { return schur_; }

 private:
  Eigen::Index n_ = 0, m_ = 0;
  bool schur_ = true;
  Eigen::LDLT<Eigen::MatrixXd> mass_;
  Eigen::MatrixXd mass_inverse_jacobian_t_;  // M^-1 J^T
  Eigen::MatrixXd jacobian_;
  Eigen::LDLT<Eigen::MatrixXd> schur_complement_;
  Eigen::FullPivLU<Eigen::MatrixXd> saddle_point_;
};

// The index-1 system [[M, J^T], [J, 0]] (V', lambda) = (Q, eta) (002 eq. 3), solved with
// SaddlePointSolver. Throws SimulationError if the constraints are redundant or M is
// singular on their null space.
void solve_index1(const DaeTerms& terms, Eigen::VectorXd& rates, Eigen::VectorXd* multipliers = nullptr);

// Indices (ascending) of a maximal set of linearly independent rows of a constraint
// Jacobian, by QR with column pivoting of J^T (relative tolerance 1e-9). Structurally
// redundant rows (the out-of-plane rows of a closed planar loop) are left out.
std::vector<Eigen::Index> independent_rows(const Eigen::MatrixXd& jacobian);

// The velocity-level constraint violation J V - nu (terms must hold J and nu; an empty nu
// is 0).
void velocity_violation(const DaeTerms& terms, const Eigen::VectorXd& velocities, Eigen::VectorXd& out);

// Per-block norms of a constraint vector (g or J V - nu).
std::vector<double> block_norms(const std::vector<ConstraintBlock>& blocks, const Eigen::VectorXd& values);

// "joint 'name' (|g| = ...)" (describe()) for the block with the largest norm of `values`.
std::string worst_constraint(const std::vector<ConstraintBlock>& blocks, const Eigen::VectorXd& values,
                             const char* symbol = "|g|");

// After a failed step from `state`: when a driver's rows are nearly a combination of the
// other constraints' rows there (a driver at a singular point, e.g. a DP1 driver
// f = cos theta(t) where |f| = 1, which then no longer drives the mechanism), a sentence
// naming the driver, the time and the remedy (an alternate driver); "" otherwise.
std::string singular_driver(ConstrainedSystem& system, const State& state);

struct ProjectionSettings {
  double tolerance = 1e-12;  // on ||g|| (absolute)
  int max_iterations = 20;
};

// Moves the configuration onto g = 0 by Gauss-Newton steps along the retraction,
// q <- q exp(-M^-1 J^T (J M^-1 J^T)^-1 g) (the mass-weighted closest point), then the
// velocities onto J V = nu by the M-orthogonal projection. Returns the Newton iterations
// used; throws SimulationError naming the worst joint if it does not converge.
int project_onto_constraints(const StateSpace& space, ConstrainedSystem& system, State& state,
                             const ProjectionSettings& settings = {});
// Only the velocity part: V <- V - M^-1 J^T (J M^-1 J^T)^-1 (J V - nu).
void project_velocities(ConstrainedSystem& system, State& state);

// Consistent initial conditions: the configuration onto g = 0 as project_onto_constraints,
// then the velocities onto J V = nu by the M-orthogonal projection that keeps the rates the
// file gives (system.given_rates): the closest velocities in kinetic energy to the file's
// that close the loops and keep those rates,
//   min (V - V0)^T M (V - V0)  subject to  J V = nu,  H V = H V0.
// Given rates already fixed by the loops and the other given rates are left out of H and
// checked afterwards; if they contradict the loops, a SimulationError names them.
int make_initial_state_consistent(const StateSpace& space, ConstrainedSystem& system, State& state);

// The linear maps between the parameterization's velocity coordinates v of the free bodies
// and their body twists, V_b = T(q) v (T = 1 on SE3, diag(1, R^T) on SO3xR3, 6 x 7 for
// Euler parameters), and T' v, from the group plugin in one call for all bodies. A
// formulation written in body twists turns M_b, Q_b, J_b, eta_b into the velocity
// coordinates with them:
//   M = T^T M_b T,  Q = T^T (Q_b - M_b T' v),  J = J_b T,  eta = eta_b - J_b T' v.
struct BodyVelocityMaps {
  Eigen::Index velocity = 6;                     // columns of each T (velocity coordinates per body)
  Eigen::Matrix<double, 6, Eigen::Dynamic> maps;  // T_1 ... T_n side by side
  Eigen::VectorXd map_rates;                     // T_i' v_i, 6 per body

  // The first poses.size() bodies of `state` (a floating base is body 0).
  void update(const Group& group, const State& state, std::size_t bodies);
  auto map(std::size_t body) const { return maps.middleCols(static_cast<Eigen::Index>(body) * velocity, velocity); }
  auto map_rate(std::size_t body) const { return map_rates.segment<6>(6 * static_cast<Eigen::Index>(body)); }
};

// The blocks of the parameterization's internal constraints of the free bodies, named after
// the bodies ("body 'crank' normalization"), starting at row `first_row`.
std::vector<ConstraintBlock> internal_constraint_blocks(const Group& group, const std::vector<std::string>& body_names,
                                                        Eigen::Index first_row);
// Writes the internal constraints of the first `bodies` free bodies of `state` into rows
// first_row... of terms.residual, terms.jacobian (the bodies' velocity columns start at
// column 0; the caller sized and zeroed the rows) and terms.acceleration_rhs, as `what` asks;
// a non-empty terms.velocity_rhs (nu) is extended by zeros for them.
void write_internal_constraints(const Group& group, const State& state, std::size_t bodies, Eigen::Index first_row,
                                DaeTerms& terms, unsigned what);

}  // namespace liembs
