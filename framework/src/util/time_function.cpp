#include <liembs/util/time_function.hpp>

#include <ginac/ginac.h>

#include <cctype>
#include <cmath>
#include <sstream>

namespace liembs {

namespace {

using Program = TimeFunction::Program;
using Op = Program::Op;

std::string printed(const GiNaC::ex& e) {
  std::ostringstream out;
  out << e;
  return out.str();
}

struct Compiler {
  Program& program;
  int depth = 0;

  void push(Op op, int count = 0, double value = 0.0) { program.code.push_back({op, count, value}); }
  void grow(int by) {
    depth += by;
    program.stack_depth = std::max(program.stack_depth, depth);
  }

  void compile(const GiNaC::ex& e) {
    if (GiNaC::is_a<GiNaC::numeric>(e)) {
      const auto& n = GiNaC::ex_to<GiNaC::numeric>(e);
      if (!n.is_real()) throw ExpressionError("the expression is complex (" + printed(e) + ")", 0);
      push(Op::constant, 0, n.to_double());
      grow(1);
    } else if (GiNaC::is_a<GiNaC::symbol>(e)) {
      push(Op::time);
      grow(1);
    } else if (GiNaC::is_a<GiNaC::constant>(e)) {
      const GiNaC::ex value = e.evalf();
      if (!GiNaC::is_a<GiNaC::numeric>(value)) throw ExpressionError("constant " + printed(e) + " has no value", 0);
      push(Op::constant, 0, GiNaC::ex_to<GiNaC::numeric>(value).to_double());
      grow(1);
    } else if (GiNaC::is_a<GiNaC::add>(e) || GiNaC::is_a<GiNaC::mul>(e)) {
      const int operands = static_cast<int>(e.nops());
      for (const auto& operand : e) compile(operand);
      push(GiNaC::is_a<GiNaC::add>(e) ? Op::add : Op::multiply, operands);
      grow(1 - operands);
    } else if (GiNaC::is_a<GiNaC::power>(e)) {
      const GiNaC::ex base = e.op(0), exponent = e.op(1);
      compile(base);
      if (GiNaC::is_a<GiNaC::numeric>(exponent)) {
        const auto& n = GiNaC::ex_to<GiNaC::numeric>(exponent);
        if (n.is_integer() && abs(n) <= 64) {
          const int k = n.to_int();
          if (k == -1)
            push(Op::reciprocal);
          else
            push(Op::integer_power, k);
          return;
        }
        if (n == GiNaC::numeric(1, 2)) return push(Op::square_root);
        if (n == GiNaC::numeric(-1, 2)) {
          push(Op::square_root);
          return push(Op::reciprocal);
        }
      }
      compile(exponent);
      push(Op::power);
      grow(-1);
    } else if (GiNaC::is_a<GiNaC::function>(e)) {
      static const std::pair<const char*, Op> functions[] = {
          {"sin", Op::sin},   {"cos", Op::cos},   {"tan", Op::tan},   {"asin", Op::asin}, {"acos", Op::acos},
          {"atan", Op::atan}, {"sinh", Op::sinh}, {"cosh", Op::cosh}, {"tanh", Op::tanh}, {"exp", Op::exp},
          {"log", Op::log},   {"abs", Op::abs}};
      const std::string name = GiNaC::ex_to<GiNaC::function>(e).get_name();
      for (const auto& [known, op] : functions)
        if (name == known && e.nops() == 1) {
          compile(e.op(0));
          return push(op);
        }
      throw ExpressionError("function '" + name + "' (in " + printed(e) +
                                ") is not supported; use sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, exp, log, "
                                "sqrt, abs",
                            0);
    } else {
      throw ExpressionError("cannot evaluate '" + printed(e) + "'", 0);
    }
  }
};

double integer_power(double x, int k) {
  if (k < 0) return 1.0 / integer_power(x, -k);
  double result = 1.0;
  while (k > 0) {
    if (k & 1) result *= x;
    x *= x;
    k >>= 1;
  }
  return result;
}

}  // namespace

double Program::run(double t) const {
  constexpr int fixed = 64;
  double fixed_stack[fixed];
  fixed_stack[0] = 0.0;  // (a valid program leaves its value there; GCC cannot see that)
  std::vector<double> large;
  double* stack = fixed_stack;
  if (stack_depth > fixed) {
    large.resize(static_cast<std::size_t>(stack_depth));
    stack = large.data();
  }
  int top = 0;  // number of values on the stack
  for (const Instruction& in : code) {
    switch (in.op) {
      case Op::constant: stack[top++] = in.value; break;
      case Op::time: stack[top++] = t; break;
      case Op::add: {
        double sum = 0.0;
        for (int k = top - in.count; k < top; ++k) sum += stack[k];
        top -= in.count;
        stack[top++] = sum;
        break;
      }
      case Op::multiply: {
        double product = 1.0;
        for (int k = top - in.count; k < top; ++k) product *= stack[k];
        top -= in.count;
        stack[top++] = product;
        break;
      }
      case Op::power:
        stack[top - 2] = std::pow(stack[top - 2], stack[top - 1]);
        --top;
        break;
      case Op::integer_power: stack[top - 1] = integer_power(stack[top - 1], in.count); break;
      case Op::reciprocal: stack[top - 1] = 1.0 / stack[top - 1]; break;
      case Op::square_root: stack[top - 1] = std::sqrt(stack[top - 1]); break;
      case Op::sin: stack[top - 1] = std::sin(stack[top - 1]); break;
      case Op::cos: stack[top - 1] = std::cos(stack[top - 1]); break;
      case Op::tan: stack[top - 1] = std::tan(stack[top - 1]); break;
      case Op::asin: stack[top - 1] = std::asin(stack[top - 1]); break;
      case Op::acos: stack[top - 1] = std::acos(stack[top - 1]); break;
      case Op::atan: stack[top - 1] = std::atan(stack[top - 1]); break;
      case Op::sinh: stack[top - 1] = std::sinh(stack[top - 1]); break;
      case Op::cosh: stack[top - 1] = std::cosh(stack[top - 1]); break;
      case Op::tanh: stack[top - 1] = std::tanh(stack[top - 1]); break;
      case Op::exp: stack[top - 1] = std::exp(stack[top - 1]); break;
      case Op::log: stack[top - 1] = std::log(stack[top - 1]); break;
      case Op::abs: stack[top - 1] = std::abs(stack[top - 1]); break;
    }
  }
  return stack[0];
}

TimeFunction::TimeFunction(double value) : text_(std::to_string(value)) {
  for (int order = 0; order < 3; ++order) {
    programs_[order].code = {{Program::Op::constant, 0, order == 0 ? value : 0.0}};
    programs_[order].stack_depth = 1;
    printed_[order] = order == 0 ? text_ : "0";
  }
}

namespace {

// GiNaC's parser says "GiNaC: parse error at line L, column C: <what>\n[<its source location>]"
// or "find_or_insert_symbol: symbol \"s\" not found": keep <what> (the position is reported
// separately) and say which symbols there are.
std::string readable_parse_message(std::string message) {
  if (const auto newline = message.find('\n'); newline != std::string::npos) message.erase(newline);
  if (message.rfind("GiNaC: parse error", 0) == 0)
    if (const auto column_at = message.find("column"); column_at != std::string::npos)
      if (const auto colon = message.find(": ", column_at); colon != std::string::npos) message.erase(0, colon + 2);
  const std::string symbol_lookup = "find_or_insert_symbol: ";
  if (message.rfind(symbol_lookup, 0) == 0) message.erase(0, symbol_lookup.size());
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.pop_back();
  if (message.find("unknown symbol") != std::string::npos || message.find("undefined symbol") != std::string::npos ||
      message.find("not found") != std::string::npos)
    message += " (the only variable is t; constants: pi)";
  return message;
}

}  // namespace

TimeFunction TimeFunction::parse(std::string_view text) {
  // Python's ** becomes ^; positions in the rewritten text map back to the original.
  std::string rewritten;
  std::vector<std::size_t> original_position;
  for (std::size_t k = 0; k < text.size(); ++k) {
    original_position.push_back(k);
    if (text[k] == '*' && k + 1 < text.size() && text[k + 1] == '*') {
      rewritten += '^';
      ++k;
    } else {
      rewritten += text[k];
    }
  }
  original_position.push_back(text.size());
  if (rewritten.find_first_not_of(" \t\n") == std::string::npos) throw ExpressionError("the expression is empty", 0);

  const GiNaC::realsymbol t("t");
  GiNaC::symtab symbols;
  symbols["t"] = t;
  symbols["pi"] = GiNaC::Pi;
  symbols["Pi"] = GiNaC::Pi;
  GiNaC::parser reader(symbols, /*strict=*/true);
  GiNaC::ex f;
  try {
    f = reader(rewritten);
  } catch (const GiNaC::parse_error& error) {
    const std::size_t column = error.column;  // 1-based column in the rewritten text, 0 if none
    const std::size_t position =
        column == 0 ? 0 : original_position[std::min(column - 1, original_position.size() - 1)] + 1;
    throw ExpressionError(readable_parse_message(error.what()), position);
  } catch (const std::exception& error) {
    throw ExpressionError(readable_parse_message(error.what()), 0);
  }

  TimeFunction function;
  function.text_ = std::string(text);
  function.constant_ = !f.has(t);
  GiNaC::ex derivative = f;
  for (int order = 0; order < 3; ++order) {
    if (order > 0) derivative = derivative.diff(t);
    function.printed_[order] = printed(derivative);
    function.programs_[order] = Program{};
    Compiler compiler{function.programs_[order]};
    compiler.compile(derivative.evalf());  // constants folded to floating point (pi/2 -> 1.5707...)
  }
  return function;
}

}  // namespace liembs
