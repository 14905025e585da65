#include <liembs/sim/joint_constraints.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/topology.hpp>

#include <Eigen/Cholesky>

namespace liembs {

namespace {

double f_value(double value, const std::shared_ptr<const TimeFunction>& f, double t) { return f ? f->value(t) : value; }

// Two unit vectors completing the unit vector e to a right-handed orthonormal frame.
std::pair<Vec3, Vec3> perpendicular_pair(const Vec3& e) {
  Eigen::Index smallest;
  e.cwiseAbs().minCoeff(&smallest);
  const Vec3 first = e.cross(Vec3::Unit(smallest)).normalized();
  return {first, e.cross(first)};
}

// The point of a joint's rotation axes: for one axis, the child origin's foot on it; for
// several (universal, spherical), their least-squares intersection.
Vec3 rotation_centre(const Joint& joint, const Vec3& child_origin) {
  Mat3 normal_sum = Mat3::Zero();
  Vec3 rhs = Vec3::Zero();
  int axes = 0;
  Vec3 single_foot = child_origin;
  for (const Vec6& screw : joint.screws) {
    const double norm = screw.head<3>().norm();
    if (norm == 0.0) continue;
    const Vec3 e = screw.head<3>() / norm;
    const Vec3 foot = e.cross(screw.tail<3>()) / norm;  // point of the axis closest to the origin
    const Mat3 projector = Mat3::Identity() - e * e.transpose();
    normal_sum += projector;
    rhs += projector * foot;
    single_foot = foot + e * e.dot(child_origin - foot);
    ++axes;
  }
  if (axes <= 1) return single_foot;
  return normal_sum.ldlt().solve(rhs);
}

// A body's pose and body-fixed twist, viewed in place (the ground: identity, at rest).
struct BodyMotion {
  const Mat3& R;
  const Vec3& r;
  Eigen::Map<const Vec3> omega, v;  // v = R^T r'
  bool moves;                       // false for the ground
};

const Pose ground_pose{};
const Vec6 ground_twist = Vec6::Zero();

BodyMotion motion_of(std::size_t body, const std::vector<Pose>& poses, const std::vector<Vec6>& twists) {
  if (body == Joint::world)
    return {ground_pose.R, ground_pose.r, Eigen::Map<const Vec3>(ground_twist.data()),
            Eigen::Map<const Vec3>(ground_twist.data() + 3), false};
  return {poses[body].R, poses[body].r, Eigen::Map<const Vec3>(twists[body].data()),
          Eigen::Map<const Vec3>(twists[body].data() + 3), true};
}

// Quantities of a point p and a direction s fixed in a body (world frame):
//   x = r + R p,  x' = R (v + omega x p),  x'' = R (v' + omega' x p) + R (omega x v + omega x (omega x p))
//   w = R s,      w' = R (omega x s),      w'' = R (omega' x s) + R (omega x (omega x s))
// "bias" is the part of the second derivative without body accelerations.
Vec3 point_position(const BodyMotion& m, const Vec3& p) { return m.r + m.R * p; }
Vec3 point_velocity(const BodyMotion& m, const Vec3& p) { return m.R * (m.v + m.omega.cross(p)); }
Vec3 point_bias(const BodyMotion& m, const Vec3& p) {
  return m.R * (m.omega.cross(m.v) + m.omega.cross(m.omega.cross(p)));
}
Vec3 direction_rate(const BodyMotion& m, const Vec3& s) { return m.R * m.omega.cross(s); }
Vec3 direction_bias(const BodyMotion& m, const Vec3& s) { return m.R * m.omega.cross(m.omega.cross(s)); }

}  // namespace

JointConstraintSet::JointConstraintSet(const Model& model, const std::vector<std::size_t>& joints, bool geometric)
    : bodies_(model.bodies.size()) {
  for (const std::size_t j : joints) {
    const Joint& joint = model.joints[j];
    const Pose parent_reference = joint.parent == Joint::world ? Pose{} : model.bodies[joint.parent].reference_pose;
    const Pose& child_reference = model.bodies[joint.child].reference_pose;
    auto in_a = [&](const Vec3& world_point) { return Vec3(parent_reference.R.transpose() * (world_point - parent_reference.r)); };
    auto in_b = [&](const Vec3& world_point) { return Vec3(child_reference.R.transpose() * (world_point - child_reference.r)); };
    auto dir_a = [&](const Vec3& world_direction) { return Vec3(parent_reference.R.transpose() * world_direction); };
    auto dir_b = [&](const Vec3& world_direction) { return Vec3(child_reference.R.transpose() * world_direction); };

    const std::size_t first = rows_of_.size();
    auto point = [&](const Vec3& y) {
      rows_of_.push_back({Kind::point, joint.parent, joint.child, in_a(y), in_b(y), {}, {}, 0.0, nullptr, -1});
    };
    auto dot = [&](const Vec3& e_a, const Vec3& e_b) {  // keep the angle between two world directions
      rows_of_.push_back({Kind::dot, joint.parent, joint.child, {}, {}, dir_a(e_a), dir_b(e_b), e_a.dot(e_b), nullptr, -1});
    };
    auto distance = [&](const Vec3& y, const Vec3& e_a) {  // no relative translation along e_a
      rows_of_.push_back({Kind::distance, joint.parent, joint.child, in_a(y), in_b(y), dir_a(e_a), {}, 0.0, nullptr, -1});
    };
    auto keep_axis = [&](const Vec3& e) {  // the axis fixed in a stays parallel to the axis fixed in b
      const auto [u1, u2] = perpendicular_pair(e);
      dot(e, u1);
      dot(e, u2);
    };
    auto keep_orientation = [&] {
      const Vec3 x = Vec3::UnitX(), y = Vec3::UnitY(), z = Vec3::UnitZ();
      dot(x, y);
      dot(y, z);
      dot(z, x);
    };
    auto axis = [&](std::size_t k, bool angular) {
      const Vec3 part = angular ? Vec3(joint.screws[k].head<3>()) : Vec3(joint.screws[k].tail<3>());
      return Vec3(part.normalized());
    };
    const Vec3 child_origin = child_reference.r;

    switch (joint.type) {
      case JointType::spherical: point(rotation_centre(joint, child_origin)); break;
      case JointType::revolute:
        point(rotation_centre(joint, child_origin));
        keep_axis(axis(0, true));
        break;
      case JointType::universal:
        point(rotation_centre(joint, child_origin));
        dot(axis(0, true), axis(1, true));
        break;
      case JointType::cylindrical: {
        const Vec3 e = axis(0, true);
        const Vec3 y = rotation_centre(joint, child_origin);
        keep_axis(e);
        const auto [u1, u2] = perpendicular_pair(e);
        distance(y, u1);
        distance(y, u2);
        break;
      }
      case JointType::prismatic: {
        keep_orientation();
        const auto [u1, u2] = perpendicular_pair(axis(0, false));
        distance(child_origin, u1);
        distance(child_origin, u2);
        break;
      }
      case JointType::planar: {
        const Vec3 n = axis(2, true);  // the revolute about the normal
        keep_axis(n);
        distance(child_origin, n);
        break;
      }
      case JointType::fixed:
        point(child_origin);
        keep_orientation();
        break;
      case JointType::helical:
        throw ModelError("joint '" + joint.name +
                         "' is helical, which cannot be written as a holonomic constraint of points and "
                         "directions; make it a tree joint (relative coordinates) or split it");
    }
    Eigen::Index rows = 0;
    for (std::size_t k = first; k < rows_of_.size(); ++k) rows += rows_of_[k].kind == Kind::point ? 3 : 1;
    blocks_.push_back({joint.name, rows_, rows});
    rows_ += rows;
  }
  first_geometric_row_ = rows_;
  if (geometric) add_geometric_constraints(model);
}

JointConstraintSet::Row JointConstraintSet::geometric_row(const GeometricConstraint& g) {
  Row row{Kind::dot, g.body_i, g.body_j, g.s_bar_p_i, g.s_bar_q_j, {}, {}, 0.0, nullptr, -1};
  switch (g.type) {
    case GeometricConstraint::Type::dp1:  // (A_i a_i) . (A_j a_j) - f   (004 eq. 1)
      row.kind = Kind::dot;
      row.direction_a = g.a_bar_i;
      row.direction_b = g.a_bar_j;
      break;
    case GeometricConstraint::Type::dp2:  // (A_i a_i) . d_ij - f   (eq. 2)
      row.kind = Kind::distance;
      row.direction_a = g.a_bar_i;
      break;
    case GeometricConstraint::Type::distance:  // d_ij . d_ij - f   (eq. 3)
      row.kind = Kind::squared_distance;
      break;
    case GeometricConstraint::Type::coordinate_difference:  // c . d_ij - f   (eq. 4)
      row.kind = Kind::coordinate;
      row.direction_a = g.c;
      break;
  }
  if (g.f) {
    if (g.f->is_constant())
      row.value = g.f->value(0.0);
    else
      row.f = g.f;
  }
  return row;
}

void JointConstraintSet::add_geometric_constraints(const Model& model) {
  for (std::size_t k = 0; k < model.constraints.size(); ++k) {
    const GeometricConstraint& constraint = model.constraints[k];
    Row row = geometric_row(constraint);
    if (constraint.alternate) {
      row.alternate = static_cast<int>(alternates_.size());
      alternates_.push_back(geometric_row(*constraint.alternate));
    }
    rheonomic_ = rheonomic_ || row.f || row.alternate >= 0;
    rows_of_.push_back(std::move(row));
    if (!blocks_.empty() && rows_ > first_geometric_row_ && blocks_.back().name == constraint.name)
      ++blocks_.back().rows;
    else
      blocks_.push_back({constraint.name, rows_, 1});
    blocks_.back().driver = blocks_.back().driver || rows_of_.back().f || rows_of_.back().alternate >= 0;
    blocks_.back().has_alternate = blocks_.back().has_alternate || rows_of_.back().alternate >= 0;
    ++rows_;
  }
}

int JointConstraintSet::switch_drivers(double time) {
  int swaps = 0;
  for (Row& row : rows_of_) {
    if (row.alternate < 0) continue;
    if (std::abs(std::abs(f_value(row.value, row.f, time)) - 1.0) >= 0.1) continue;
    Row& alternate = alternates_[static_cast<std::size_t>(row.alternate)];
    const int index = row.alternate;
    std::swap(row, alternate);
    row.alternate = index;  // the swapped-out row is now the alternate, at the same index
    alternate.alternate = -1;
    ++swaps;
  }
  return swaps;
}

void JointConstraintSet::select_rows(std::vector<Eigen::Index> rows) {
  // Every geometric row must be kept.
  for (Eigen::Index row = first_geometric_row_, k = 0; row < rows_; ++row) {
    while (k < static_cast<Eigen::Index>(rows.size()) && rows[static_cast<std::size_t>(k)] < row) ++k;
    if (k < static_cast<Eigen::Index>(rows.size()) && rows[static_cast<std::size_t>(k)] == row) continue;
    std::string name;
    for (const auto& block : blocks_)
      if (row >= block.first && row < block.first + block.rows) name = block.name;
    throw ModelError("constraint '" + name + "': a row is redundant with the joints and the constraints before it "
                     "at the initial state (its Jacobian row is a combination of theirs); remove it or the "
                     "constraint it repeats");
  }
  selected_ = std::move(rows);
  selected_blocks_.clear();
  Eigen::Index next = 0;
  for (const auto& block : blocks_) {
    ConstraintBlock kept = block;
    kept.first = next;
    kept.rows = 0;
    for (const Eigen::Index row : selected_)
      if (row >= block.first && row < block.first + block.rows) ++kept.rows;
    next += kept.rows;
    selected_blocks_.push_back(kept);
  }
  if (static_cast<Eigen::Index>(selected_.size()) == rows_) selected_.clear();  // all kept
}

std::vector<std::string> JointConstraintSet::dropped_rows() const {
  std::vector<std::string> notes;
  if (selected_.empty()) return notes;
  for (std::size_t k = 0; k < blocks_.size(); ++k)
    if (selected_blocks_[k].rows < blocks_[k].rows)
      notes.push_back("joint '" + blocks_[k].name + "': " + std::to_string(blocks_[k].rows - selected_blocks_[k].rows) +
                      " of " + std::to_string(blocks_[k].rows) + " rows redundant");
  return notes;
}

void JointConstraintSet::evaluate(const std::vector<Pose>& poses, const std::vector<Vec6>& twists, double time,
                                  Eigen::VectorXd* residual, Eigen::MatrixXd* jacobian,
                                  Eigen::VectorXd* acceleration_rhs, Eigen::VectorXd* velocity_rhs) const {
  if (!selected_.empty()) {
    evaluate_all(poses, twists, time, residual ? &full_residual_ : nullptr, jacobian ? &full_jacobian_ : nullptr,
                 acceleration_rhs ? &full_rhs_ : nullptr, velocity_rhs ? &full_velocity_rhs_ : nullptr);
    const auto n = static_cast<Eigen::Index>(selected_.size());
    if (residual) residual->resize(n);
    if (jacobian) jacobian->resize(n, full_jacobian_.cols());
    if (acceleration_rhs) acceleration_rhs->resize(n);
    if (velocity_rhs) velocity_rhs->resize(n);
    for (Eigen::Index k = 0; k < n; ++k) {
      const Eigen::Index row = selected_[static_cast<std::size_t>(k)];
      if (residual) (*residual)(k) = full_residual_(row);
      if (jacobian) jacobian->row(k) = full_jacobian_.row(row);
      if (acceleration_rhs) (*acceleration_rhs)(k) = full_rhs_(row);
      if (velocity_rhs) (*velocity_rhs)(k) = full_velocity_rhs_(row);
    }
    return;
  }
  evaluate_all(poses, twists, time, residual, jacobian, acceleration_rhs, velocity_rhs);
}

void JointConstraintSet::evaluate_all(const std::vector<Pose>& poses, const std::vector<Vec6>& twists, double time,
                                      Eigen::VectorXd* residual, Eigen::MatrixXd* jacobian,
                                      Eigen::VectorXd* acceleration_rhs, Eigen::VectorXd* velocity_rhs) const {
  if (residual) residual->resize(rows_);
  if (jacobian) jacobian->setZero(rows_, static_cast<Eigen::Index>(6 * bodies_));
  if (acceleration_rhs) acceleration_rhs->resize(rows_);
  if (velocity_rhs) velocity_rhs->setZero(rows_);

  // Jacobian entries of one row from the gradient c (world frame) of the row's function with
  // respect to an argument of a body: a point x = r + R p (x' = R v - R p~ omega) gives
  // (angular, linear) = (p x R^T c, R^T c); a direction w = R s gives (s x R^T c, 0).
  auto add_point = [&](std::size_t body, const Mat3& R, Eigen::Index row, const Vec3& p, const Vec3& c) {
    if (body == Joint::world) return;
    const Vec3 u = R.transpose() * c;
    const auto column = static_cast<Eigen::Index>(6 * body);
    jacobian->row(row).segment<3>(column) += p.cross(u).transpose();
    jacobian->row(row).segment<3>(column + 3) += u.transpose();
  };
  auto add_direction = [&](std::size_t body, const Mat3& R, Eigen::Index row, const Vec3& s, const Vec3& c) {
    if (body == Joint::world) return;
    jacobian->row(row).segment<3>(static_cast<Eigen::Index>(6 * body)) += s.cross(R.transpose() * c).transpose();
  };

  Eigen::Index row = 0;
  for (const Row& c : rows_of_) {
    const BodyMotion a = motion_of(c.a, poses, twists), b = motion_of(c.b, poses, twists);
    switch (c.kind) {
      case Kind::point: {
        if (residual) residual->segment<3>(row) = point_position(b, c.point_b) - point_position(a, c.point_a);
        if (jacobian)
          for (int k = 0; k < 3; ++k) {  // row k: the gradient e_k of x_b - x_a
            add_point(c.b, b.R, row + k, c.point_b, Vec3::Unit(k));
            add_point(c.a, a.R, row + k, c.point_a, -Vec3::Unit(k));
          }
        if (acceleration_rhs)
          acceleration_rhs->segment<3>(row) = -(point_bias(b, c.point_b) - point_bias(a, c.point_a));
        row += 3;
        break;
      }
      case Kind::dot: {
        const Vec3 wa = a.R * c.direction_a, wb = b.R * c.direction_b;
        if (residual) (*residual)(row) = wa.dot(wb) - f_value(c.value, c.f, time);
        // d/dt (wa . wb) = omega_a . (s_a x R_a^T wb) + omega_b . (s_b x R_b^T wa)
        if (jacobian) {
          add_direction(c.a, a.R, row, c.direction_a, wb);
          add_direction(c.b, b.R, row, c.direction_b, wa);
        }
        if (acceleration_rhs)
          (*acceleration_rhs)(row) = -(wb.dot(direction_bias(a, c.direction_a)) + wa.dot(direction_bias(b, c.direction_b)) +
                                       2.0 * direction_rate(a, c.direction_a).dot(direction_rate(b, c.direction_b)));
        row += 1;
        break;
      }
      case Kind::distance: {
        const Vec3 d = point_position(b, c.point_b) - point_position(a, c.point_a);
        const Vec3 wa = a.R * c.direction_a;
        if (residual) (*residual)(row) = d.dot(wa) - f_value(c.value, c.f, time);
        // d/dt (d . wa) = wa . (x_b' - x_a') + omega_a . (s_a x R_a^T d)
        if (jacobian) {
          add_point(c.b, b.R, row, c.point_b, wa);
          add_point(c.a, a.R, row, c.point_a, -wa);
          add_direction(c.a, a.R, row, c.direction_a, d);
        }
        if (acceleration_rhs) {
          const Vec3 d_rate = point_velocity(b, c.point_b) - point_velocity(a, c.point_a);
          (*acceleration_rhs)(row) = -((point_bias(b, c.point_b) - point_bias(a, c.point_a)).dot(wa) +
                                       2.0 * d_rate.dot(direction_rate(a, c.direction_a)) +
                                       d.dot(direction_bias(a, c.direction_a)));
        }
        row += 1;
        break;
      }
      case Kind::squared_distance: {  // D (004 eq. 3): d . d - f;  (d . d)' = 2 d . d'
        const Vec3 d = point_position(b, c.point_b) - point_position(a, c.point_a);
        if (residual) (*residual)(row) = d.squaredNorm() - f_value(c.value, c.f, time);
        if (jacobian) {
          add_point(c.b, b.R, row, c.point_b, 2.0 * d);
          add_point(c.a, a.R, row, c.point_a, -2.0 * d);
        }
        if (acceleration_rhs) {
          const Vec3 d_rate = point_velocity(b, c.point_b) - point_velocity(a, c.point_a);
          (*acceleration_rhs)(row) =
              -(2.0 * d_rate.squaredNorm() + 2.0 * d.dot(point_bias(b, c.point_b) - point_bias(a, c.point_a)));
        }
        row += 1;
        break;
      }
      case Kind::coordinate: {  // CD (004 eq. 4): c . d - f, c = direction_a in the world frame
        const Vec3& w = c.direction_a;
        if (residual) (*residual)(row) = w.dot(point_position(b, c.point_b) - point_position(a, c.point_a)) - f_value(c.value, c.f, time);
        if (jacobian) {
          add_point(c.b, b.R, row, c.point_b, w);
          add_point(c.a, a.R, row, c.point_a, -w);
        }
        if (acceleration_rhs) (*acceleration_rhs)(row) = -w.dot(point_bias(b, c.point_b) - point_bias(a, c.point_a));
        row += 1;
        break;
      }
    }
    // Rheonomic rows: J V = f'(t), J V' = eta + f''(t).
    if (c.f) {
      if (velocity_rhs) (*velocity_rhs)(row - 1) = c.f->rate(time);
      if (acceleration_rhs) (*acceleration_rhs)(row - 1) += c.f->acceleration(time);
    }
  }
}

namespace {

// One argument y of a constraint row: a point x = r + R p or a direction w = R s of a body.
struct RowArgument {
  std::size_t body;
  bool point;
  Vec3 local;  // p or s
};

// dy/d zeta (3 x 6) and d(y')/d zeta at fixed twist (3 x 6) of an argument of a moving body.
Eigen::Matrix<double, 3, 6> argument_derivative(const BodyMotion& m, const RowArgument& y) {
  Eigen::Matrix<double, 3, 6> D = Eigen::Matrix<double, 3, 6>::Zero();
  D.leftCols<3>() = -m.R * so3::hat(y.local);
  if (y.point) D.rightCols<3>() = m.R;
  return D;
}
Mat3 argument_rate_derivative(const BodyMotion& m, const RowArgument& y) {
  const Vec3 u = y.point ? Vec3(m.v + m.omega.cross(y.local)) : Vec3(m.omega.cross(y.local));
  return -m.R * so3::hat(u);  // y' = R u, u fixed: d(y')/d theta = -R u~
}
Vec3 argument_rate(const BodyMotion& m, const RowArgument& y) {
  return y.point ? point_velocity(m, y.local) : direction_rate(m, y.local);
}

}  // namespace

void JointConstraintSet::second_derivatives(const std::vector<Pose>& poses, const std::vector<Vec6>& twists,
                                            const Eigen::VectorXd* multipliers, Eigen::MatrixXd* reaction_stiffness,
                                            Eigen::MatrixXd* velocity_derivative) const {
  const auto columns = static_cast<Eigen::Index>(6 * bodies_);
  // Multipliers of the full set of rows (dropped rows: 0).
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(rows_);
  if (multipliers) {
    if (selected_.empty())
      lambda = *multipliers;
    else
      for (std::size_t k = 0; k < selected_.size(); ++k) lambda(selected_[k]) = (*multipliers)(static_cast<Eigen::Index>(k));
  }
  if (reaction_stiffness) reaction_stiffness->setZero(columns, columns);
  if (velocity_derivative) full_jacobian_.setZero(rows_, columns);  // d(J V)/d zeta of all rows

  // Per row: arguments with gradients c_y (world), Hessian entries (y, z, h) over ordered pairs.
  std::vector<RowArgument> arguments;
  std::vector<Vec3> gradients;
  struct HessianEntry { int y, z; double h; };
  std::vector<HessianEntry> hessian;
  Eigen::Index row = 0;
  for (const Row& c : rows_of_) {
    const BodyMotion a = motion_of(c.a, poses, twists), b = motion_of(c.b, poses, twists);
    const int row_count = c.kind == Kind::point ? 3 : 1;
    for (int k = 0; k < row_count; ++k, ++row) {
      arguments.clear();
      gradients.clear();
      hessian.clear();
      switch (c.kind) {
        case Kind::point: {  // e_k . (x_b - x_a)
          const Vec3 e = Vec3::Unit(k);
          arguments = {{c.b, true, c.point_b}, {c.a, true, c.point_a}};
          gradients = {e, -e};
          break;
        }
        case Kind::dot: {  // w_a . w_b
          arguments = {{c.a, false, c.direction_a}, {c.b, false, c.direction_b}};
          gradients = {b.R * c.direction_b, a.R * c.direction_a};
          hessian = {{0, 1, 1.0}, {1, 0, 1.0}};
          break;
        }
        case Kind::distance: {  // (x_b - x_a) . w_a
          const Vec3 wa = a.R * c.direction_a;
          const Vec3 d = point_position(b, c.point_b) - point_position(a, c.point_a);
          arguments = {{c.b, true, c.point_b}, {c.a, true, c.point_a}, {c.a, false, c.direction_a}};
          gradients = {wa, -wa, d};
          hessian = {{0, 2, 1.0}, {2, 0, 1.0}, {1, 2, -1.0}, {2, 1, -1.0}};
          break;
        }
        case Kind::squared_distance: {  // d . d
          const Vec3 d = point_position(b, c.point_b) - point_position(a, c.point_a);
          arguments = {{c.b, true, c.point_b}, {c.a, true, c.point_a}};
          gradients = {2.0 * d, -2.0 * d};
          hessian = {{0, 0, 2.0}, {1, 1, 2.0}, {0, 1, -2.0}, {1, 0, -2.0}};
          break;
        }
        case Kind::coordinate: {  // c . (x_b - x_a)
          arguments = {{c.b, true, c.point_b}, {c.a, true, c.point_a}};
          gradients = {c.direction_a, -c.direction_a};
          break;
        }
      }
      auto motion = [&](std::size_t body) -> const BodyMotion& { return body == c.a ? a : b; };
      const double l = lambda(row);
      if (reaction_stiffness && l != 0.0) {
        for (std::size_t y = 0; y < arguments.size(); ++y) {
          const RowArgument& arg = arguments[y];
          if (arg.body == Joint::world) continue;
          const Mat3 mu_hat = so3::hat(motion(arg.body).R.transpose() * gradients[y]);
          const auto o = static_cast<Eigen::Index>(6 * arg.body);
          reaction_stiffness->block<3, 3>(o, o) += l * so3::hat(arg.local) * mu_hat;
          if (arg.point) reaction_stiffness->block<3, 3>(o + 3, o) += l * mu_hat;
        }
        for (const HessianEntry& e : hessian) {
          const RowArgument &y = arguments[static_cast<std::size_t>(e.y)], &z = arguments[static_cast<std::size_t>(e.z)];
          if (y.body == Joint::world || z.body == Joint::world) continue;
          reaction_stiffness->block<6, 6>(static_cast<Eigen::Index>(6 * y.body), static_cast<Eigen::Index>(6 * z.body)) +=
              (l * e.h) * argument_derivative(motion(y.body), y).transpose() * argument_derivative(motion(z.body), z);
        }
      }
      if (velocity_derivative) {
        // d/d zeta of sum_y c_y . y' = sum_y c_y . d(y')/d zeta + sum_yz h y'^T dz/d zeta
        for (std::size_t y = 0; y < arguments.size(); ++y) {
          const RowArgument& arg = arguments[y];
          if (arg.body == Joint::world) continue;
          full_jacobian_.block<1, 3>(row, static_cast<Eigen::Index>(6 * arg.body)) +=
              gradients[y].transpose() * argument_rate_derivative(motion(arg.body), arg);
        }
        for (const HessianEntry& e : hessian) {
          const RowArgument &y = arguments[static_cast<std::size_t>(e.y)], &z = arguments[static_cast<std::size_t>(e.z)];
          if (y.body == Joint::world || z.body == Joint::world) continue;
          full_jacobian_.block<1, 6>(row, static_cast<Eigen::Index>(6 * z.body)) +=
              e.h * argument_rate(motion(y.body), y).transpose() * argument_derivative(motion(z.body), z);
        }
      }
    }
  }
  if (!velocity_derivative) return;
  if (selected_.empty()) {
    *velocity_derivative = full_jacobian_;
    return;
  }
  velocity_derivative->resize(static_cast<Eigen::Index>(selected_.size()), columns);
  for (std::size_t k = 0; k < selected_.size(); ++k)
    velocity_derivative->row(static_cast<Eigen::Index>(k)) = full_jacobian_.row(selected_[k]);
}

GivenRates given_joint_rates(const Model& model, const std::vector<Pose>& poses) {
  const Topology topology = analyze_topology(model);
  const auto columns = static_cast<Eigen::Index>(6 * model.bodies.size());
  std::vector<Eigen::RowVectorXd> rows;
  GivenRates given;
  for (const std::size_t j : topology.tree_joints) {
    const Joint& joint = model.joints[j];
    if (!joint.initial_velocity_given || joint.dof() == 0) continue;
    // Screws in the child frame at the initial positions (P = exp(Y_1 q_1) ... exp(Y_d q_d)).
    Eigen::Matrix<double, 6, Eigen::Dynamic> screws(6, static_cast<Eigen::Index>(joint.dof()));
    Pose P;
    for (std::size_t k = 0; k < joint.dof(); ++k) {
      const auto index = static_cast<Eigen::Index>(k);
      screws.col(index) = se3::Ad(P) * joint.screws[k];
      P = se3::compose(P, se3::exp(joint.screws[k] * joint.initial_position(index)));
    }
    screws = se3::Ad_inverse(se3::compose(P, model.bodies[joint.child].reference_pose)) * screws;
    const Eigen::MatrixXd left_inverse = (screws.transpose() * screws).ldlt().solve(screws.transpose());
    const std::size_t c = joint.child;
    Mat6 parent_to_child = Mat6::Zero();
    if (joint.parent != Joint::world)
      parent_to_child = se3::Ad(se3::compose(se3::inverse(poses[c]), poses[joint.parent]));
    for (std::size_t k = 0; k < joint.dof(); ++k) {
      Eigen::RowVectorXd row = Eigen::RowVectorXd::Zero(columns);
      const auto index = static_cast<Eigen::Index>(k);
      row.segment<6>(static_cast<Eigen::Index>(6 * c)) = left_inverse.row(index);
      if (joint.parent != Joint::world)
        row.segment<6>(static_cast<Eigen::Index>(6 * joint.parent)) = -left_inverse.row(index) * parent_to_child;
      rows.push_back(std::move(row));
      given.names.push_back(joint.dof() == 1 ? joint.name : joint.name + "[" + std::to_string(k) + "]");
    }
  }
  given.rows.resize(static_cast<Eigen::Index>(rows.size()), columns);
  for (std::size_t k = 0; k < rows.size(); ++k) given.rows.row(static_cast<Eigen::Index>(k)) = rows[k];
  return given;
}

void initial_body_motion(const Model& model, std::vector<Pose>& poses, std::vector<Vec6>& twists) {
  const Topology topology = analyze_topology(model);
  const std::size_t n = model.bodies.size();
  poses.assign(n, Pose{});
  twists.assign(n, Vec6::Zero());
  std::vector<Vec6> spatial_twists(n, Vec6::Zero());
  for (const std::size_t b : topology.free_bodies) {
    const RigidBody& body = model.bodies[b];
    poses[b] = body.reference_pose;
    twists[b] << body.initial_angular_velocity, body.reference_pose.R.transpose() * body.initial_linear_velocity;
    spatial_twists[b] = se3::Ad(poses[b]) * twists[b];
  }
  for (const std::size_t j : topology.tree_joints) {
    const Joint& joint = model.joints[j];
    // G = C_parent A_parent^-1 maps the reference configuration of the parent to its pose.
    Pose G;
    Vec6 parent_twist = Vec6::Zero();
    if (joint.parent != Joint::world) {
      G = se3::compose(poses[joint.parent], se3::inverse(model.bodies[joint.parent].reference_pose));
      parent_twist = spatial_twists[joint.parent];
    }
    // P = exp(Y_1 q_1) ... exp(Y_k q_k);  P' P^-1 = sum_k Ad_{P_<k} Y_k q'_k
    Pose P;
    Vec6 joint_twist = Vec6::Zero();
    for (std::size_t k = 0; k < joint.dof(); ++k) {
      const auto index = static_cast<Eigen::Index>(k);
      joint_twist += se3::Ad(P) * joint.screws[k] * joint.initial_velocity(index);
      P = se3::compose(P, se3::exp(joint.screws[k] * joint.initial_position(index)));
    }
    const std::size_t c = joint.child;
    poses[c] = se3::compose(G, se3::compose(P, model.bodies[c].reference_pose));
    spatial_twists[c] = parent_twist + se3::Ad(G) * joint_twist;
    twists[c] = se3::Ad_inverse(poses[c]) * spatial_twists[c];
  }
}

}  // namespace liembs
