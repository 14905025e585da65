#pragma once
// Group plugins: the configuration space of a free rigid body (floating base or absolute
// coordinates) and the operations an integrator needs on it (paper 002, sections 2-4).
#include <liembs/lie/types.hpp>
#include <liembs/plugin/component.hpp>

#include <cstddef>
#include <span>

namespace liembs {

// How a group's velocity coordinates V = (omega, v) of a body relate to its pose C = (R, r):
// both use the body-fixed angular velocity omega (R' = R omega~);
//   body_twist: v = R^T r'  (SE(3): V^ = C^-1 C')
//   hybrid:     v = r'      (SO(3)xR3: the direct product's left-trivialized velocity)
enum class VelocityConvention { body_twist, hybrid };

// All operations act on `n` bodies at once (6 numbers per body, angular part first),
// so there is one virtual call per integrator stage, not one per body.
class Group : public Component {
 public:
  static constexpr Kind kind = Kind::group;

  virtual VelocityConvention velocity_convention() const = 0;

  // C_i <- C_i exp(xi_i): the right translation by the group exponential of xi_i.
  virtual void retract(std::span<Pose> poses, const double* increments) const = 0;

  // out_i = dexp^-1_{-xi_i}(v_i): the left-trivialized inverse differential of exp that
  // turns a velocity into the rate of the local coordinates xi (002 eq. 36-37).
  virtual void dexpinv_left(std::size_t n, const double* increments, const double* velocities,
                            double* out) const = 0;

  // Conversions between the group's velocity coordinates and body-fixed twists
  // (omega, R^T r'), in which the dynamics algorithms are written.
  virtual void to_body_twists(std::span<const Pose> poses, const double* velocities,
                              double* twists) const = 0;
  virtual void from_body_twists(std::span<const Pose> poses, const double* twists,
                                double* velocities) const = 0;
  // Time derivative of the group's velocity coordinates from the body twist and its rate.
  virtual void rates_from_body_twist_rates(std::span<const Pose> poses, const double* twists,
                                           const double* twist_rates, double* rates) const = 0;
};

}  // namespace liembs
