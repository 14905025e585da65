#pragma once
// Joints as holonomic constraints between two bodies: every joint of a model in absolute
// coordinates (paper 002 section 3, paper 004 section 2), and the cut joints that close the
// loops of a tree in relative coordinates. Each joint is assembled from three primitives on
// points p and directions s fixed in the bodies a (parent, or the world) and b (child)
// (the geometric constraints CD, DP1 and D of paper 004):
//   point:     x_b(p_b) - x_a(p_a) = 0                       (3 rows)   x(p) = r + R p
//   dot:       (R_a s_a) . (R_b s_b) - c = 0                 (1 row)    DP1
//   distance:  (x_b(p_b) - x_a(p_a)) . (R_a s_a) = 0         (1 row)    D
// spherical = point; revolute = point + 2 dot (axis kept aligned); universal = point + 1 dot;
// cylindrical = 2 dot + 2 distance; prismatic = 3 dot (orientation kept) + 2 distance;
// planar = 2 dot (normal kept) + 1 distance; fixed = point + 3 dot. The data come from the
// joint's world screws and the bodies' reference poses at q = 0, so the rows vanish in the
// reference configuration and along every motion of the joint. Helical joints have no
// holonomic form in these primitives and are refused.
//
// The set also holds the model's geometric constraints (GCONs, model.hpp) when asked: DP1 is
// a dot row and DP2 a distance row with a prescribed f(t), D and CD have rows of their own;
// they follow the joints' rows, a block per constraint name. With f(t) the rows are
// rheonomic: J V = nu = f'(t) and eta gets + f''(t) (constrained_system.hpp).
//
// Rows are functions of the bodies' poses; the Jacobian is taken with respect to their
// body-fixed twists (omega, R^T r'), with 6 columns per model body (body k at 6k), and the
// acceleration-level constraint is J V' = eta. J and eta come from the same attachment data
// (the pitfall of 002's note, check H6).
#include <liembs/lie/types.hpp>
#include <liembs/model/model.hpp>
#include <liembs/sim/constrained_system.hpp>

#include <string>
#include <vector>

namespace liembs {

class JointConstraintSet {
 public:
  // Constraints of the given model joints; throws ModelError naming a joint that cannot be
  // written as a constraint.
  // With geometric = true, the model's geometric constraints follow the joints' rows.
  JointConstraintSet(const Model& model, const std::vector<std::size_t>& joints, bool geometric = false);

  // Rows in use (all, or those kept by select_rows) and their blocks, one per joint.
  Eigen::Index rows() const { return selected_.empty() ? rows_ : static_cast<Eigen::Index>(selected_.size()); }
  const std::vector<ConstraintBlock>& blocks() const { return selected_.empty() ? blocks_ : selected_blocks_; }
  Eigen::Index full_rows() const { return rows_; }

  // Keeps only the given rows (ascending indices into the full set), e.g. those of
  // independent_rows(): the structurally redundant rows of a closed planar loop are dropped.
  // Throws ModelError naming a geometric constraint whose row would be dropped (those are
  // the user's own rows, often drivers: a redundant one is a modelling error).
  void select_rows(std::vector<Eigen::Index> rows);
  // True when some row depends on time (a geometric constraint with a non-constant f).
  bool rheonomic() const { return rheonomic_; }
  // Swaps DP1 drivers near their singular points for their alternates (and back):
  // | |f(t)| - 1 | < 0.1 (paper 004 section 4.2). Returns the number of swaps.
  int switch_drivers(double time);
  // "joint 'D': 2 of 5 rows redundant" for each joint that lost rows; empty if none.
  std::vector<std::string> dropped_rows() const;

  // poses/twists: one per model body (twists body-fixed). Null outputs are not computed.
  // jacobian: rows() x 6 * bodies.
  // At time t (the time functions of geometric constraints); velocity_rhs: nu = f'(t).
  void evaluate(const std::vector<Pose>& poses, const std::vector<Vec6>& twists, double time,
                Eigen::VectorXd* residual, Eigen::MatrixXd* jacobian, Eigen::VectorXd* acceleration_rhs,
                Eigen::VectorXd* velocity_rhs = nullptr) const;
  // Second derivatives for analytic Newton matrices, with respect to the bodies' pose
  // increments zeta = (theta, R^T dr) (R <- R exp(theta~), r <- r + dr), 6 columns per body:
  //   reaction_stiffness (6 bodies x 6 bodies)   = d(J^T lambda)/d zeta   (lambda: rows() numbers)
  //   velocity_derivative (rows() x 6 bodies)    = d(J V)/d zeta at fixed body twists V
  // Each row is f(y_1, ...) of world points x = r + R p and directions w = R s; with their
  // gradients c_y = df/dy and Hessian blocks h_yz 1 (paper 004 Tables 3-6 are the rA instances):
  //   d(J^T lambda)_k/d zeta_l = lambda (delta_kl G_y(c_y) + h_yz (dy/d zeta_k)^T dz/d zeta_l),
  //   G_point(c) = [[p~ mu~, 0], [mu~, 0]], G_direction(c) = [[s~ mu~, 0], [0, 0]], mu = R^T c.
  // Null outputs are not computed.
  void second_derivatives(const std::vector<Pose>& poses, const std::vector<Vec6>& twists,
                          const Eigen::VectorXd* multipliers, Eigen::MatrixXd* reaction_stiffness,
                          Eigen::MatrixXd* velocity_derivative) const;
  // Joints only (no time dependence).
  void evaluate(const std::vector<Pose>& poses, const std::vector<Vec6>& twists, Eigen::VectorXd* residual,
                Eigen::MatrixXd* jacobian, Eigen::VectorXd* acceleration_rhs) const {
    evaluate(poses, twists, 0.0, residual, jacobian, acceleration_rhs);
  }

 private:
  void evaluate_all(const std::vector<Pose>& poses, const std::vector<Vec6>& twists, double time,
                    Eigen::VectorXd* residual, Eigen::MatrixXd* jacobian, Eigen::VectorXd* acceleration_rhs,
                    Eigen::VectorXd* velocity_rhs) const;
  void add_geometric_constraints(const Model& model);

  // point: x_b - x_a (3 rows); dot: DP1; distance: DP2; squared_distance: D; coordinate: CD.
  enum class Kind { point, dot, distance, squared_distance, coordinate };
  struct Row {
    Kind kind;
    std::size_t a, b;  // body indices (Joint::world for the ground)
    Vec3 point_a = Vec3::Zero(), point_b = Vec3::Zero();
    Vec3 direction_a = Vec3::Zero(), direction_b = Vec3::Zero();  // coordinate: direction_a = c (world)
    double value = 0.0;                    // constant f (c of a joint's dot row)
    std::shared_ptr<const TimeFunction> f;  // f(t) instead of value when set
    int alternate = -1;                     // index into alternates_ of a driver's alternate
  };
  static Row geometric_row(const GeometricConstraint& constraint);
  std::vector<Row> rows_of_;  // one entry per primitive (a point primitive has 3 rows)
  std::vector<Row> alternates_;  // the rows swapped with drivers' rows by switch_drivers
  std::vector<ConstraintBlock> blocks_, selected_blocks_;
  std::vector<Eigen::Index> selected_;
  Eigen::Index rows_ = 0, first_geometric_row_ = 0;
  bool rheonomic_ = false;
  // Full-size results before the selection.
  mutable Eigen::VectorXd full_residual_, full_rhs_, full_velocity_rhs_;
  mutable Eigen::MatrixXd full_jacobian_;
  std::size_t bodies_ = 0;
};

// Poses and body-fixed twists of every body at t = 0 in absolute coordinates: free bodies
// from their reference pose and initial velocity, bodies moved by a spanning-tree joint
// from the joints' initial positions and rates (product of exponentials of the world screws:
// C_child = C_parent A_parent^-1 exp(Y_1 q_1) ... exp(Y_k q_k) A_child).
void initial_body_motion(const Model& model, std::vector<Pose>& poses, std::vector<Vec6>& twists);

// The joint rates the file gives (Joint::initial_velocity_given) of spanning-tree joints, as
// functionals of the bodies' body-fixed twists (6 columns per body) at `poses`: q' = L (V_c -
// Ad_{C_c^-1 C_p} V_p), L the left inverse of the joint's screws in the child frame,
// W = Ad_{(P A_c)^-1} [Ad_{P_<k} Y_k]_k, at the file's initial positions. Names as the tree's
// degrees of freedom ("A", "C[1]").
GivenRates given_joint_rates(const Model& model, const std::vector<Pose>& poses);

}  // namespace liembs
