#include "adolc_taylor.hpp"

#include "time_series.hpp"

#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>

#include <adolc/adalloc.h>
#include <adolc/adouble.h>
#include <adolc/interfaces.h>
#include <adolc/taping.h>

#include <algorithm>
#include <string>
#include <vector>

namespace liembs::ad_baseline {

TaylorBuffer::~TaylorBuffer() {
  if (rows_) myfree2(rows_);
}

double** TaylorBuffer::resize(int rows, int columns) {
  if (rows > row_count_ || columns > column_count_) {
    if (rows_) myfree2(rows_);
    row_count_ = std::max(rows, row_count_);
    column_count_ = std::max(columns, column_count_);
    rows_ = myalloc2(static_cast<std::size_t>(row_count_), static_cast<std::size_t>(column_count_));
  }
  return rows_;
}

namespace {

// Number of operations on the tape; the tape must have stayed in memory (a tape written
// to files would time the disk, and leave files in the working directory).
std::size_t check_tape(short tag, const char* what) {
  std::size_t stats[STAT_SIZE];
  tapestats(tag, stats);
  if (stats[OP_FILE_ACCESS] || stats[LOC_FILE_ACCESS] || stats[VAL_FILE_ACCESS])
    throw Error(std::string("AD baseline: the ADOL-C tape of ") + what + " (" + std::to_string(stats[NUM_OPERATIONS]) +
                " operations) does not fit ADOL-C's memory buffers; use a smaller model");
  return stats[NUM_OPERATIONS];
}

// Starts a tape with buffers large enough to keep the tape of a tree of `dof` degrees of
// freedom in memory (ADOL-C's defaults hold about 50 DoF; a tape that overflows them goes to
// files).
void start_tape(short tag, int dof) {
  const auto size = static_cast<uint>(std::max(524288, 16384 * (dof + 7)));
  trace_on(tag, 0, size, size, size, 524288);
}

// Declares x (a sample value) an independent.
// The floating base's inputs at `offset` of the independents; null for a fixed base, which has
// none (its independents may even be empty: a tree that does not move).
const adouble* base_input(const ScalarTree& tree, const std::vector<adouble>& x, int offset) {
  return tree.floating ? x.data() + offset : nullptr;
}

std::vector<adouble> independents(int count) {
  std::vector<adouble> x(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) x[static_cast<std::size_t>(i)] <<= 0.1 + 0.01 * i;
  return x;
}

// Seeds the 3 nv directions of a first-derivative sweep into X (independents x 3 nv): the
// configuration directions (the base's along C exp(xi): d gamma = gamma x omega, through the
// gamma rows at `gamma_row`; joint q rows from `q_row`), the velocity directions (base twist
// rows from `twist_row`, q' rows from q_row + n) and the third set of rows, `third_rows` (one
// per generalized velocity, consecutive or split into base and joints).
void seed_directions(double** X, int independents, const ScalarTree& tree, const Vec3& gamma, int q_row,
                     const std::vector<int>& third_rows) {
  const int n = tree.dof(), nv = tree.velocity_dimension(), offset = tree.floating ? 6 : 0;
  for (int i = 0; i < independents; ++i) std::fill(X[i], X[i] + 3 * nv, 0.0);
  if (tree.floating) {
    const Mat3 turn = so3::hat(gamma);  // d gamma / d omega
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) X[r][c] = turn(r, c);
    for (int c = 0; c < 6; ++c) X[3 + c][nv + c] = 1.0;  // base twist V
  }
  for (int i = 0; i < n; ++i) {
    X[q_row + i][offset + i] = 1.0;
    X[q_row + n + i][nv + offset + i] = 1.0;
  }
  for (int c = 0; c < nv; ++c) X[third_rows[static_cast<std::size_t>(c)]][2 * nv + c] = 1.0;
}

// The three nv x nv blocks of Y (dependents x 3 nv).
void read_directions(double** Y, int nv, Eigen::MatrixXd& first, Eigen::MatrixXd& second, Eigen::MatrixXd& third) {
  first.resize(nv, nv);
  second.resize(nv, nv);
  third.resize(nv, nv);
  for (int i = 0; i < nv; ++i)
    for (int c = 0; c < nv; ++c) {
      first(i, c) = Y[i][c];
      second(i, c) = Y[i][nv + c];
      third(i, c) = Y[i][2 * nv + c];
    }
}

}  // namespace

Vec3 AdolcTape::load_state(const char* what, const TreeState& state, const Eigen::VectorXd& third, const char* input,
                           int q_row) {
  const ScalarTree& tree = *tree_;
  const int n = tree.dof(), nv = dependents_;
  if (third.size() != nv || state.q.size() != n || state.qd.size() != n)
    throw Error(std::string("AD baseline ") + what + ": expected a state with " + std::to_string(n) + " joints and " +
                input + " of " + std::to_string(nv));
  point_.assign(static_cast<std::size_t>(independents_), 0.0);
  const Vec3 gamma = state.base.R.transpose() * tree.gravity;
  if (tree.floating)
    for (int c = 0; c < 6; ++c) {
      if (c < 3) point_[static_cast<std::size_t>(c)] = gamma(c);
      point_[static_cast<std::size_t>(3 + c)] = state.base_twist(c);
    }
  for (int i = 0; i < n; ++i) {
    point_[static_cast<std::size_t>(q_row + i)] = state.q(i);
    point_[static_cast<std::size_t>(q_row + n + i)] = state.qd(i);
  }
  return gamma;
}

void AdolcTape::first_derivatives(const Vec3& gamma, int q_row, const std::vector<int>& third_rows, Eigen::VectorXd& value,
                                  Eigen::MatrixXd& by_q, Eigen::MatrixXd& by_u, Eigen::MatrixXd& by_third) {
  const int nv = dependents_;
  value_.resize(static_cast<std::size_t>(nv));
  if (nv > 0) {  // (nothing moves: empty matrices, as the analytic derivatives give)
    double** X = X_.resize(independents_, 3 * nv);
    double** Y = Y_.resize(dependents_, 3 * nv);
    seed_directions(X, independents_, *tree_, gamma, q_row, third_rows);
    fov_forward(tag_, dependents_, independents_, 3 * nv, point_.data(), X, value_.data(), Y);
    read_directions(Y, nv, by_q, by_u, by_third);
  } else {
    by_q.resize(0, 0);
    by_u.resize(0, 0);
    by_third.resize(0, 0);
  }
  value = Eigen::Map<const Eigen::VectorXd>(value_.data(), nv);
}

AdolcInverseDynamics::AdolcInverseDynamics(std::shared_ptr<const ScalarTree> tree, short tag)
    : AdolcTape(std::move(tree), tag) {
  const int n = tree_->dof(), base = tree_->floating ? 15 : 0;
  independents_ = base + 3 * n;
  dependents_ = tree_->velocity_dimension();
  start_tape(tag_, tree_->dof());
  {
    std::vector<adouble> x = independents(independents_), force(static_cast<std::size_t>(dependents_));
    const adouble* joints = x.data() + base;
    ad_baseline::inverse_dynamics<adouble>(*tree_, base_input(*tree_, x, 0), base_input(*tree_, x, 3), base_input(*tree_, x, 9), joints, joints + n,
                                           joints + 2 * n, force.data());
    double value;
    for (auto& y : force) y >>= value;
  }
  trace_off();
  operations_ = check_tape(tag_, "RNEA");
}

void AdolcInverseDynamics::inverse_dynamics(const TreeState& state, const Eigen::MatrixXd& rates, Eigen::MatrixXd& forces) {
  const ScalarTree& tree = *tree_;
  const int r = static_cast<int>(rates.cols()) - 1, n = tree.dof(), nv = dependents_;
  if (rates.rows() != nv || r < 0 || state.q.size() != n || state.qd.size() != n)
    throw Error("AD baseline RNEA: expected a state with " + std::to_string(n) + " joints and rates with " +
                std::to_string(nv) + " rows");
  double** X = X_.resize(independents_, r + 1);
  double** Y = Y_.resize(dependents_, r + 1);
  // q, q', q'' (degree r needs q up to q^(r+2)).
  const int offset = tree.floating ? 6 : 0, base = tree.floating ? 15 : 0;
  joint_coefficients(state, rates, offset, r + 2, joints_);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k <= r; ++k) {
      X[base + i][k] = joints_(i, k);
      X[base + n + i][k] = (k + 1) * joints_(i, k + 1);                   // q'^(k)/k!
      X[base + 2 * n + i][k] = (k + 1) * (k + 2) * joints_(i, k + 2);    // q''^(k)/k!
    }
  if (tree.floating) {
    omega_.resize(3, r + 1);
    for (int k = 0; k <= r; ++k) {
      const double scale = 1.0 / factorial(k);
      for (int c = 0; c < 6; ++c) {
        const double twist = k == 0 ? state.base_twist(c) : rates(c, k - 1);
        X[3 + c][k] = twist * scale;              // V^(k)/k!
        X[9 + c][k] = rates(c, k) * scale;        // V'^(k)/k!
        if (c < 3) omega_(c, k) = X[3 + c][k];
      }
    }
    gravity_coefficients(state.base.R, tree.gravity, omega_, r, gamma_);
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k <= r; ++k) X[c][k] = gamma_(c, k);
  }
  forward(tag_, dependents_, independents_, r, 0, X, Y);
  forces.resize(nv, r + 1);
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k <= r; ++k) forces(i, k) = Y[i][k] * factorial(k);
}

void AdolcInverseDynamics::derivatives(const TreeState& state, const Eigen::VectorXd& acceleration,
                                       InverseDynamicsDerivatives& out) {
  const ScalarTree& tree = *tree_;
  const int n = tree.dof(), base = tree.floating ? 15 : 0;
  const Vec3 gamma = load_state("RNEA", state, acceleration, "an acceleration", base);
  std::vector<int> rate_rows;  // u': V' then q''
  if (tree.floating)
    for (int c = 0; c < 6; ++c) {
      point_[static_cast<std::size_t>(9 + c)] = acceleration(c);
      rate_rows.push_back(9 + c);
    }
  for (int i = 0; i < n; ++i) {
    point_[static_cast<std::size_t>(base + 2 * n + i)] = acceleration((tree.floating ? 6 : 0) + i);
    rate_rows.push_back(base + 2 * n + i);
  }
  first_derivatives(gamma, base, rate_rows, out.force, out.force_by_q, out.force_by_u, out.mass);
}

AdolcForwardDynamics::AdolcForwardDynamics(std::shared_ptr<const ScalarTree> tree, short tag)
    : AdolcTape(std::move(tree), tag) {
  const int n = tree_->dof(), base = tree_->floating ? 9 : 0;
  independents_ = base + 2 * n + tree_->velocity_dimension();
  dependents_ = tree_->velocity_dimension();
  start_tape(tag_, tree_->dof());
  {
    std::vector<adouble> x = independents(independents_), acceleration(static_cast<std::size_t>(dependents_));
    const adouble* joints = x.data() + base;
    ad_baseline::forward_dynamics<adouble>(*tree_, base_input(*tree_, x, 0), base_input(*tree_, x, 3), joints, joints + n, joints + 2 * n,
                                           acceleration.data());
    double value;
    for (auto& y : acceleration) y >>= value;
  }
  trace_off();
  operations_ = check_tape(tag_, "ABA");
}

void AdolcForwardDynamics::forward_dynamics(const TreeState& state, const Eigen::MatrixXd& forces, Eigen::MatrixXd& rates) {
  const ScalarTree& tree = *tree_;
  const int r = static_cast<int>(forces.cols()) - 1, n = tree.dof(), nv = dependents_;
  if (forces.rows() != nv || r < 0 || state.q.size() != n || state.qd.size() != n)
    throw Error("AD baseline ABA: expected a state with " + std::to_string(n) + " joints and forces with " +
                std::to_string(nv) + " rows");
  double** X = X_.resize(independents_, r + 1);
  double** Y = Y_.resize(dependents_, r + 1);
  const int base = tree.floating ? 9 : 0, tau = base + 2 * n;
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k <= r; ++k) X[tau + i][k] = forces(i, k) / factorial(k);
  for (int i = 0; i < n; ++i) X[base + i][0] = state.q(i), X[base + n + i][0] = state.qd(i);
  if (tree.floating) {
    const Vec3 gamma = state.base.R.transpose() * tree.gravity;
    for (int c = 0; c < 3; ++c) X[c][0] = gamma(c);
    for (int c = 0; c < 6; ++c) X[3 + c][0] = state.base_twist(c);
  }
  for (int d = 0; d <= r; ++d) {
    if (d > 0) {  // the inputs' coefficients of degree d from the outputs' of degree d - 1
      for (int i = 0; i < n; ++i) {
        X[base + i][d] = X[base + n + i][d - 1] / d;        // q_d = q'_{d-1} / d
        X[base + n + i][d] = Y[6 * tree.floating + i][d - 1] / d;  // q'_d = q''_{d-1} / d
      }
      if (tree.floating) {
        for (int c = 0; c < 6; ++c) X[3 + c][d] = Y[c][d - 1] / d;  // V_d = V'_{d-1} / d
        for (int c = 0; c < 3; ++c) {                               // d gamma_d = sum gamma_j x w_{d-1-j}
          double sum = 0.0;
          const int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
          for (int j = 0; j < d; ++j) sum += X[c1][j] * X[3 + c2][d - 1 - j] - X[c2][j] * X[3 + c1][d - 1 - j];
          X[c][d] = sum / d;
        }
      }
    }
    forward(tag_, dependents_, independents_, d, 0, X, Y);
  }
  rates.resize(nv, r + 1);
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k <= r; ++k) rates(i, k) = Y[i][k] * factorial(k);
}

void AdolcForwardDynamics::derivatives(const TreeState& state, const Eigen::VectorXd& force,
                                       ForwardDynamicsDerivatives& out) {
  const int n = tree_->dof(), nv = dependents_, base = tree_->floating ? 9 : 0, tau = base + 2 * n;
  const Vec3 gamma = load_state("ABA", state, force, "a force", base);
  std::vector<int> force_rows;
  for (int i = 0; i < nv; ++i) {
    point_[static_cast<std::size_t>(tau + i)] = force(i);
    force_rows.push_back(tau + i);
  }
  first_derivatives(gamma, base, force_rows, out.acceleration, out.acceleration_by_q, out.acceleration_by_u,
                    out.acceleration_by_force);
}

}  // namespace liembs::ad_baseline
