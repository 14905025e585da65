#pragma once
// What the tests of the analytic derivatives share (test_derivatives.cpp,
// test_geometric_derivatives.cpp, test_tree_mass_factorization.cpp): the random models and
// states, the central-difference step and the tolerances, the representation plugins of
// the build tree. `using namespace liembs::testing::derivative_checks;` brings them in.
#include <random_trees.hpp>
#include <representation_plugins.hpp>

namespace liembs::testing::derivative_checks {

// The random models and states (random_trees.hpp) and the plugins (representation_plugins.hpp).
using namespace liembs::testing;

// Central differences with step h have an error of order h^2 (about 1e-12 here) plus
// round-off of order eps / h (about 1e-10), relative to the derivative's size: 1e-6 leaves
// room for the curvature of the trigonometric terms.
inline constexpr double fd_step = 1e-6;
inline constexpr double fd_tolerance = 1e-6;
// Two evaluations of the same quantity by different algorithms or representations.
inline constexpr double roundoff_tolerance = 1e-10;

inline const RepresentationPlugins& plugins() { return build_tree_representations(); }

}  // namespace liembs::testing::derivative_checks
