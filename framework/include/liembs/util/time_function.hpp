#pragma once
// Prescribed functions of time f(t) written as expressions in a model file (driving
// constraints of paper 004, prescribed motions), with f' and f'' obtained exactly by
// symbolic differentiation (GiNaC). The expression is parsed and differentiated once, then
// each of f, f', f'' is compiled into a small stack program evaluated in double precision
// (no allocation, no symbolic work per call). GiNaC stays out of this header.
//
// Syntax: numbers, t, pi (or Pi), e.g. "cos(pi/2 + pi/4*cos(2*t))"; + - * / and powers
// written ^ or ** (the authors' Python files use **); functions sin cos tan asin acos atan
// sinh cosh tanh exp log sqrt abs.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

// A malformed expression: what went wrong and the 1-based character position in the text
// (0 when the parser gives none).
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
  // f(t) = value.
  explicit TimeFunction(double value = 0.0);
  // Parses `text` (variable t); throws ExpressionError.
  static TimeFunction parse(std::string_view text);

  // f, f', f'' at t.
  double value(double t) const { return programs_[0].run(t); }
  double rate(double t) const { return programs_[1].run(t); }
  double acceleration(double t) const { return programs_[2].run(t); }

  const std::string& text() const { return text_; }
  // The derivative of order 0, 1 or 2 as GiNaC prints it (for messages and tests).
  const std::string& derivative_text(int order) const { return printed_[order]; }
  bool is_constant() const { return constant_; }

  // One compiled expression: a postfix program on a value stack.
  struct Program {
    enum class Op : unsigned char {
      constant, time, add, multiply, power, integer_power, reciprocal, square_root, sin, cos, tan, asin, acos,
      atan, sinh, cosh, tanh, exp, log, abs
    };
    struct Instruction {
      Op op;
      int count = 0;       // operands of add/multiply, exponent of integer_power
      double value = 0.0;  // constant
    };
    std::vector<Instruction> code;
    int stack_depth = 0;
    double run(double t) const;
  };

 private:
  std::string text_;
  std::string printed_[3];
  Program programs_[3];
  bool constant_ = true;
};

}  // namespace liembs
