#pragma once
// Twist representation plugins: the frame in which twists, accelerations, wrenches and
// inertias live inside the recursive algorithms (paper 000 / 001: body-fixed, spatial,
// hybrid, mixed). The tree algorithms that take a representation policy as a template
// argument arrive with the tree-dynamics work; this interface carries what a run needs
// to know about a representation independently of any algorithm.
#include <liembs/lie/types.hpp>
#include <liembs/plugin/component.hpp>

namespace liembs {

class Representation : public Component {
 public:
  static constexpr Kind kind = Kind::representation;

  // The twist of a body in this representation, from its pose and body-fixed twist
  // (the conversions of paper 001, section 3).
  virtual Vec6 twist_from_body(const Pose& pose, const Vec6& body_twist) const = 0;
  // Inverse of twist_from_body.
  virtual Vec6 body_from_twist(const Pose& pose, const Vec6& twist) const = 0;
};

}  // namespace liembs
