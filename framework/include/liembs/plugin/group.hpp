#pragma once
// The contract of the GROUP kind (docs/plugins.md, "Group"). Every operation is marked
// REQUIRED or OPTIONAL; an OPTIONAL one has a default here (or in framework/src/plugin/
// group.cpp) that the host uses when the plugin does not replace it, and capabilities()
// declares which defaults the plugin replaced, so that a run can state which it used.
//
// Group plugins: the configuration parameterization of a free rigid body (floating base or
// absolute coordinates) and the operations integrators and formulations need on it. Lie
// groups (SE3, SO3xR3 = paper 004's rA, paper 002 sections 2-4) and vector-space charts
// (Euler parameters rp, Euler angles re of paper 004) fit the same interface
// (docs/configuration-spaces.md):
//   - per body, `velocity` velocity coordinates v (the size of a configuration increment),
//     the first `rotation` of them move the orientation, the last 3 the position;
//   - the configuration is the pose C = (R, r) in State::poses plus, for a chart, `chart`
//     numbers per body in State::chart (p, or the Euler angles); the pose then follows from
//     the chart and is what every consumer (dynamics, outputs, invariants) reads;
//   - body twists V_b = (omega, R^T r') relate linearly to v: V_b = T(q) v (T is 6 x velocity);
//   - `internal_constraints` rows per body (rp: p^T p = 1) join the system's constraints.
#include <liembs/lie/types.hpp>
#include <liembs/plugin/component.hpp>

#include <cstddef>
#include <span>

namespace liembs {

// Per-body sizes of a parameterization.
struct BodyCoordinates {
  int chart = 0;                 // numbers per body in State::chart (0: the pose is the configuration)
  int velocity = 6;              // velocity coordinates per body = numbers of a configuration increment
  int rotation = 3;              // the first `rotation` velocity coordinates move R, the last 3 move r
  int internal_constraints = 0;  // constraint rows per body (e.g. the normalization of p)
  const char* internal_constraint_name = nullptr;  // names their blocks: "body 'crank' normalization"
  bool vector_chart = false;     // retraction adds the increment to coordinates; dexp^-1 = identity
};

// What a group declares about itself: which OPTIONAL operations it gives in closed form.
struct GroupCapabilities {
  // velocity_map_derivatives is the plugin's own. Without it: the default (polarization of
  // velocity_maps and central differences along retract, about 1e-10 relative), stated in
  // the run's method_choices as "group_derivatives" when a Newton matrix uses it.
  bool velocity_map_derivatives = false;
  // internal_constraint_derivatives is the plugin's own (only meaningful with internal
  // constraints). Without it: central differences of internal_constraints along retract.
  bool internal_constraint_derivatives = false;
};

// All operations act on `n` bodies at once (per-body blocks stored one after the other), so
// there is one virtual call per integrator stage or formulation evaluation, never one per body.
// `chart` points at State::chart (may be null when body_coordinates().chart == 0).
class Group : public Component {
 public:
  static constexpr Kind kind = Kind::group;

  // REQUIRED.
  virtual BodyCoordinates body_coordinates() const = 0;
  // OPTIONAL (default: none declared).
  virtual GroupCapabilities capabilities() const { return {}; }

  // OPTIONAL (default: nothing; required with chart > 0). The chart coordinates of bodies at
  // the given poses (initial states), and the poses set to
  // the chart's (equal up to round-off: A(p) is orthogonal to the round-off of p).
  virtual void chart_from_poses(std::span<Pose> poses, double* chart) const {
    (void)poses;
    (void)chart;
  }

  // REQUIRED. The retraction: C_i <- C_i exp(xi_i) on a Lie group; q_i <- q_i + xi_i on a chart, with the
  // pose recomputed from the chart.
  virtual void retract(std::span<Pose> poses, double* chart, const double* increments) const = 0;

  // REQUIRED. out_i = dexp^-1_{-xi_i}(v_i): the left-trivialized inverse differential of exp that turns
  // a velocity into the rate of the local coordinates xi (002 eq. 36-37); the identity on a chart.
  virtual void dexpinv_left(std::size_t n, const double* increments, const double* velocities,
                            double* out) const = 0;

  // REQUIRED. V_b = T(q) v, the body-fixed twists (omega, R^T r') of the bodies.
  virtual void to_body_twists(std::span<const Pose> poses, const double* chart, const double* velocities,
                              double* twists) const = 0;
  // REQUIRED. The velocity coordinates v with T(q) v = V_b that satisfy the velocity level of the
  // internal constraints.
  virtual void from_body_twists(std::span<const Pose> poses, const double* chart, const double* twists,
                                double* velocities) const = 0;
  // REQUIRED. The rates v' with T v' + T' v = V_b' that satisfy the acceleration level of the internal
  // constraints (for a free body this is the exact solution of its constrained equations).
  virtual void rates_from_body_twist_rates(std::span<const Pose> poses, const double* chart,
                                           const double* velocities, const double* twist_rates,
                                           double* rates) const = 0;

  // REQUIRED. T(q) of every body as a column-major 6 x velocity block (6 * velocity numbers per body)
  // and T'(q, v) v (6 per body), the time derivative of T along q' = v applied to v. A
  // formulation written in body twists uses them as
  //   M = T^T M_b T,  Q = T^T (Q_b - M_b T' v),  J = J_b T,  eta = eta_b - J_b T' v.
  virtual void velocity_maps(std::span<const Pose> poses, const double* chart, const double* velocities,
                             double* maps, double* map_rates) const = 0;

  // OPTIONAL (default: none; required with internal_constraints > 0). Internal constraints of
  // n bodies: residual (k per body), Jacobian with respect to the
  // body's velocity coordinates (column-major k x velocity per body) and acceleration
  // right-hand side eta (J v' = eta, k per body). Null outputs are not computed.
  virtual void internal_constraints(std::size_t n, const double* chart, const double* velocities, double* residual,
                                    double* jacobian, double* acceleration_rhs) const {
    (void)n, (void)chart, (void)velocities, (void)residual, (void)jacobian, (void)acceleration_rhs;
  }
  // OPTIONAL (GroupCapabilities::velocity_map_derivatives). Derivatives of the velocity maps
  // for analytic Newton matrices (one call for n bodies; per
  // body, column-major blocks one after the other; a null output is not computed). With the
  // retraction q exp(delta) and velocities v held fixed:
  //   rate_by_velocity           d(T' v)/dv                  6 x velocity
  //   map_velocity_by_position   d(T(q) v)/d delta           6 x velocity
  //   map_x_by_position          d(T(q) x)/d delta           6 x velocity   (x: velocity numbers per body)
  //   map_transpose_y_by_position d(T(q)^T y)/d delta        velocity x velocity   (y: 6 numbers per body)
  //   rate_by_position           d(T'(q, v) v)/d delta       6 x velocity
  // The default (framework/src/plugin/group.cpp) takes rate_by_velocity by polarization of
  // velocity_maps (exact: T' v is quadratic in v) and the position derivatives by central
  // differences of velocity_maps along retract (about 1e-10 relative); SE3 and SO3xR3 give
  // closed forms.
  virtual void velocity_map_derivatives(std::span<const Pose> poses, const double* chart, const double* velocities,
                                        const double* x, const double* y, double* rate_by_velocity,
                                        double* map_velocity_by_position, double* map_x_by_position,
                                        double* map_transpose_y_by_position, double* rate_by_position) const;
  // OPTIONAL (GroupCapabilities::internal_constraint_derivatives). Derivatives of the internal
  // constraints along the retraction, for n bodies (per body,
  // column-major; null outputs not computed): d(J_int^T mu)/d delta (velocity x velocity, mu:
  // internal_constraints multipliers per body) and d(J_int v)/d delta (internal_constraints x
  // velocity). Default: central differences of internal_constraints along retract; nothing to
  // do without internal constraints.
  virtual void internal_constraint_derivatives(std::span<const Pose> poses, const double* chart,
                                               const double* velocities, const double* multipliers,
                                               double* multiplier_stiffness, double* velocity_derivative) const;

  // OPTIONAL (default: 0). The largest error of the chart's invariant over the bodies (|p^T p - 1| for rp); 0 if none.
  virtual double normalization_error(std::size_t n, const double* chart) const {
    (void)n, (void)chart;
    return 0.0;
  }

  // OPTIONAL (default: never switches). Between steps: a chart that comes close to its
  // singularity is replaced by another one
  // (re-extracted from the pose, velocities recomputed from the body twist), keeping the pose
  // and the body twist. Returns true if any body's chart changed.
  virtual bool update_charts(std::span<Pose> poses, double* chart, double* velocities) const {
    (void)poses, (void)chart, (void)velocities;
    return false;
  }
};

}  // namespace liembs
