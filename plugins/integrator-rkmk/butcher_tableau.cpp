#include "butcher_tableau.hpp"

#include <liembs/config/config_table.hpp>

#include <cmath>

namespace liembs::rkmk {

const std::vector<std::string>& named_tableaus() {
  static const std::vector<std::string> names{"euler", "heun", "rk3", "rk4", "custom"};
  return names;
}

ButcherTableau named_tableau(const std::string& name) {
  ButcherTableau t;
  t.name = name;
  if (name == "euler") {  // explicit Euler (Lie-Euler on the group)
    t.a = Eigen::MatrixXd::Zero(1, 1);
    t.b = Eigen::VectorXd::Ones(1);
    t.c = Eigen::VectorXd::Zero(1);
  } else if (name == "heun") {  // Heun's second-order method (explicit trapezoid)
    t.a = Eigen::MatrixXd::Zero(2, 2);
    t.a(1, 0) = 1.0;
    t.b = Eigen::Vector2d(0.5, 0.5);
    t.c = Eigen::Vector2d(0.0, 1.0);
  } else if (name == "rk3") {  // Kutta's third-order method
    t.a = Eigen::MatrixXd::Zero(3, 3);
    t.a(1, 0) = 0.5;
    t.a(2, 0) = -1.0;
    t.a(2, 1) = 2.0;
    t.b = Eigen::Vector3d(1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0);
    t.c = Eigen::Vector3d(0.0, 0.5, 1.0);
  } else if (name == "rk4") {  // classical Runge-Kutta (the natural choice for 002 eq. 37)
    t.a = Eigen::MatrixXd::Zero(4, 4);
    t.a(1, 0) = 0.5;
    t.a(2, 1) = 0.5;
    t.a(3, 2) = 1.0;
    t.b = Eigen::Vector4d(1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0);
    t.c = Eigen::Vector4d(0.0, 0.5, 0.5, 1.0);
  }
  return t;
}

int classical_order(const ButcherTableau& t) {
  const Eigen::VectorXd& b = t.b;
  const Eigen::VectorXd& c = t.c;
  const Eigen::MatrixXd& A = t.a;
  const Eigen::VectorXd Ac = A * c;
  const auto holds = [](double value, double expected) { return std::abs(value - expected) < 1e-12; };
  // Order conditions for rooted trees up to order 4 (Butcher).
  if (!holds(b.sum(), 1.0)) return 0;
  if (!holds(b.dot(c), 1.0 / 2.0)) return 1;
  if (!holds(b.dot(c.cwiseProduct(c)), 1.0 / 3.0) || !holds(b.dot(Ac), 1.0 / 6.0)) return 2;
  const Eigen::VectorXd c2 = c.cwiseProduct(c);
  if (!holds(b.dot(c2.cwiseProduct(c)), 1.0 / 4.0) || !holds(b.dot(c.cwiseProduct(Ac)), 1.0 / 8.0) ||
      !holds(b.dot(A * c2), 1.0 / 12.0) || !holds(b.dot(A * Ac), 1.0 / 24.0))
    return 3;
  return 4;
}

std::vector<OptionSpec> tableau_options() {
  return {OptionSpec::choice("tableau", named_tableaus(), "rk4", "the Butcher tableau (custom: give a, b and c)"),
          OptionSpec::number_rows("a", "required for tableau = \"custom\"",
                                  "custom tableau: the strictly lower triangular s x s matrix"),
          OptionSpec::numbers("b", Range::any(), "required for tableau = \"custom\"", "custom tableau: the s weights"),
          OptionSpec::numbers("c", Range::any(), "the row sums of a", "custom tableau: the s nodes (c_i = sum_j a_ij)")};
}

ButcherTableau read_tableau(const ConfigTable& options) {
  static const OptionDeclaration declared(tableau_options());
  const std::string name = declared.choice(options, "tableau");
  if (name != "custom") {
    for (const char* key : {"a", "b", "c"})
      if (options.contains(key))
        options.fail(key, "coefficients are only read for tableau = \"custom\" (tableau is \"" + name + "\")");
    return named_tableau(name);
  }

  ButcherTableau t;
  t.name = "custom";
  const auto rows = declared.number_rows(options, "a");
  const auto b = declared.numbers(options, "b");
  const auto s = b.size();
  if (s == 0) options.fail("b", "a custom tableau needs at least one stage");
  if (rows.size() != s || rows.front().size() != s)
    options.fail("a", "expected a " + std::to_string(s) + "x" + std::to_string(s) +
                          " matrix to match the " + std::to_string(s) + " weights in b");
  t.a.resize(static_cast<Eigen::Index>(s), static_cast<Eigen::Index>(s));
  t.b.resize(static_cast<Eigen::Index>(s));
  for (std::size_t i = 0; i < s; ++i) {
    t.b(static_cast<Eigen::Index>(i)) = b[i];
    for (std::size_t j = 0; j < s; ++j) {
      t.a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = rows[i][j];
      if (j >= i && rows[i][j] != 0.0)
        options.fail("a", "a[" + std::to_string(i) + "][" + std::to_string(j) +
                              "] is not zero: the tableau must be explicit (strictly lower triangular)");
    }
  }
  const Eigen::VectorXd row_sums = t.a.rowwise().sum();
  if (options.contains("c")) {
    const auto c = declared.numbers(options, "c");
    if (c.size() != s) options.fail("c", "expected " + std::to_string(s) + " nodes to match b");
    t.c = Eigen::Map<const Eigen::VectorXd>(c.data(), static_cast<Eigen::Index>(s));
    for (Eigen::Index i = 0; i < t.c.size(); ++i)
      if (std::abs(t.c(i) - row_sums(i)) > 1e-12)
        options.fail("c", "c[" + std::to_string(i) + "] differs from the row sum of a (" +
                              std::to_string(row_sums(i)) + "); RKMK needs c_i = sum_j a_ij");
  } else {
    t.c = row_sums;
  }
  if (std::abs(t.b.sum() - 1.0) > 1e-12)
    options.fail("b", "the weights sum to " + std::to_string(t.b.sum()) + ", not 1: the method is not consistent");
  return t;
}

}  // namespace liembs::rkmk
