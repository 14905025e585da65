#pragma once
// Base of every pluggable component and the kinds a component can be.
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

// The four plugin kinds (docs/architecture.md, docs/plugins.md). A kind is the section name
// used in TOML files; each has one header here listing its REQUIRED and OPTIONAL operations.
enum class Kind { representation, group, algorithm, integrator };

std::string_view to_string(Kind kind);
const std::vector<Kind>& all_kinds();

// Components are created by a plugin's factory and destroyed through this base.
// Virtual calls happen once per algorithm call or integrator step, never per body
// inside a recursion (docs/architecture.md, "How a plugin binds").
class Component {
 public:
  virtual ~Component();
  // One line describing this configured instance (e.g. the chosen tableau), for summaries.
  virtual std::string description() const { return {}; }
};

}  // namespace liembs
