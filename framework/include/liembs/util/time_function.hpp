#pragma once
// Prescribed functions of time f(t) written as expressions in a model file (driving
// constraints of paper 004, prescribed motions), with f' and f'' exact to rounding. The text
// is read once into a small postfix program (constant parts folded), which is evaluated in
// double precision without allocating: f alone on doubles, f' and f'' by second-order
// forward differentiation (each value carries its first and second derivative in t through
// the chain, product and quotient rules). Reading and evaluating cost time linear in the
// length of the text: symbolic derivatives of nested functions grew without bound (200
// nested sin took 15 s to read).
//
// Syntax: numbers, t, pi (or Pi), e.g. "cos(pi/2 + pi/4*cos(2*t))"; + - * / and powers
// written ^ or ** (the authors' Python files use **), right-associative, binding tighter than
// a sign (-t^2 is -(t^2)); functions sin cos tan asin acos atan sinh cosh tanh exp log sqrt
// abs.
//
// Bounds (docs/reliability.md, "Bounded resources"): at most max_text_length characters and
// max_nesting levels of nesting (parentheses, signs, powers, function calls); a number, or a
// part without t, whose value is not a finite double (1e400, 10^(10^10), 1/0) is an error.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

// A malformed expression: what went wrong and the 1-based character position in the text
// (0 when there is none).
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(const std::string& message, std::size_t position)
      : std::runtime_error(message), position_(position) {}
  std::size_t position() const { return position_; }

 private:
  std::size_t position_;
};

class TimeFunction {
 public:
  static constexpr std::size_t max_text_length = 100'000;
  static constexpr int max_nesting = 256;

  // f(t) = value.
  explicit TimeFunction(double value = 0.0);
  // Parses `text` (variable t); throws ExpressionError.
  static TimeFunction parse(std::string_view text);

  // f, f', f'' at t.
  double value(double t) const;
  double rate(double t) const;
  double acceleration(double t) const;

  // `text` for a message: whole up to 80 characters, else its start and its length.
  static std::string excerpt(std::string_view text);

  const std::string& text() const { return text_; }
  bool is_constant() const { return constant_; }

  // One compiled expression: a postfix program on a value stack.
  struct Program {
    enum class Op : unsigned char {
      constant, time, add, subtract, multiply, divide, negate, power, integer_power, square_root, sin, cos, tan,
      asin, acos, atan, sinh, cosh, tanh, exp, log, abs
    };
    struct Instruction {
      Op op;
      int exponent = 0;    // integer_power
      double value = 0.0;  // constant
    };
    std::vector<Instruction> code;
    int stack_depth = 0;
  };

 private:
  std::string text_;
  Program program_;
  bool constant_ = true;
};

}  // namespace liembs
