#pragma once
// Explicit Butcher tableaus for the Munthe-Kaas integrator: the named ones and a custom
// tableau read from TOML, with its classical order found from the order conditions.
#include <liembs/config/config_table.hpp>
#include <liembs/plugin/options.hpp>

#include <Eigen/Core>

#include <string>
#include <vector>

namespace liembs {
class ConfigTable;
}

namespace liembs::rkmk {

struct ButcherTableau {
  std::string name;
  Eigen::MatrixXd a;  // strictly lower triangular (explicit method)
  Eigen::VectorXd b, c;
  int stages() const { return static_cast<int>(b.size()); }
};

const std::vector<std::string>& named_tableaus();
ButcherTableau named_tableau(const std::string& name);

// Classical order (0..4) of an explicit tableau: the highest p for which all order
// conditions up to p hold to 1e-12. RKMK with exact dexp^-1 keeps this order.
int classical_order(const ButcherTableau& tableau);

// Reads [integrator] tableau (and a, b, c for tableau = "custom"), validates it.
ButcherTableau read_tableau(const ConfigTable& options);
// The options read_tableau reads (tableau, a, b, c), for the integrator's declaration.
std::vector<OptionSpec> tableau_options();

}  // namespace liembs::rkmk
