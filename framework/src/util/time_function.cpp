// Driving functions f(t) read from expressions (liembs/util/time_function.hpp).
#include <liembs/util/time_function.hpp>

#include <charconv>
#include <cmath>
#include <cctype>
#include <memory>
#include <optional>

namespace liembs {

namespace {

using Program = TimeFunction::Program;
using Op = Program::Op;

// ---------------------------------------------------------------------------------------
// Reading: a recursive-descent parser into a tree, with the nesting bounded.

struct Node {
  Node(Op op_, std::size_t position_, std::size_t begin_) : op(op_), position(position_), begin(begin_) {}
  Op op;
  std::size_t position;  // 1-based, of the operator, function name or number
  std::size_t begin;     // 1-based, of the first character of the part
  std::size_t end = 0;   // 1-based, after its last character
  double value = 0.0;    // constant
  std::unique_ptr<Node> left, right;
  bool has_time = false;
  int height = 1;        // of the tree below: every recursion over it is this deep
};
using NodePtr = std::unique_ptr<Node>;

[[noreturn]] void too_deep(std::size_t position) {
  throw ExpressionError("the expression is nested more than " + std::to_string(TimeFunction::max_nesting) +
                            " levels deep (parentheses, signs, powers, function calls or a chain of operators)",
                        position);
}

// A node over `left` (and `right`), its height bounded.
NodePtr make_node(Op op, std::size_t position, std::size_t begin, NodePtr left, NodePtr right = nullptr) {
  auto node = std::make_unique<Node>(op, position, begin);
  node->has_time = left->has_time || (right && right->has_time);
  node->height = 1 + std::max(left->height, right ? right->height : 0);
  node->end = right ? right->end : left->end;
  if (node->height > TimeFunction::max_nesting) too_deep(position);
  node->left = std::move(left);
  node->right = std::move(right);
  return node;
}

const std::pair<const char*, Op> functions[] = {
    {"sin", Op::sin},     {"cos", Op::cos},   {"tan", Op::tan},   {"asin", Op::asin}, {"acos", Op::acos},
    {"atan", Op::atan},   {"sinh", Op::sinh}, {"cosh", Op::cosh}, {"tanh", Op::tanh}, {"exp", Op::exp},
    {"log", Op::log},     {"sqrt", Op::square_root}, {"abs", Op::abs}};
const char* const function_list = "sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, exp, log, sqrt, abs";

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  NodePtr parse() {
    skip_blanks();
    if (at_ == text_.size()) throw ExpressionError("the expression is empty", 0);
    NodePtr root = expression();
    skip_blanks();
    if (at_ < text_.size()) unexpected("after the expression");
    return root;
  }

 private:
  // expression := term { (+|-) term }
  NodePtr expression() {
    NodePtr left = term();
    for (;;) {
      skip_blanks();
      if (at_ >= text_.size() || (text_[at_] != '+' && text_[at_] != '-')) return left;
      const Op op = text_[at_] == '+' ? Op::add : Op::subtract;
      const std::size_t position = ++at_;
      left = binary(op, position, std::move(left), term());
    }
  }

  // term := signed { (*|/) signed }
  NodePtr term() {
    NodePtr left = signed_factor();
    for (;;) {
      skip_blanks();
      if (at_ >= text_.size() || (text_[at_] != '*' && text_[at_] != '/') || is_power_operator()) return left;
      const Op op = text_[at_] == '*' ? Op::multiply : Op::divide;
      const std::size_t position = ++at_;
      left = binary(op, position, std::move(left), signed_factor());
    }
  }

  // signed := (+|-) signed | power
  NodePtr signed_factor() {
    const Nesting nesting(*this);
    skip_blanks();
    if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) {
      const bool minus = text_[at_] == '-';
      const std::size_t position = ++at_;
      NodePtr operand = signed_factor();
      if (!minus) return operand;
      return make_node(Op::negate, position, position, std::move(operand));
    }
    return power();
  }

  // power := primary [ (^|**) signed ]   (right-associative: t^2^3 = t^(2^3))
  NodePtr power() {
    NodePtr base = primary();
    skip_blanks();
    if (!is_power_operator()) return base;
    const std::size_t position = at_ + 1;
    at_ += text_[at_] == '^' ? 1 : 2;
    return binary(Op::power, position, std::move(base), signed_factor());
  }

  // primary := number | t | pi | function '(' expression ')' | '(' expression ')'
  NodePtr primary() {
    const Nesting nesting(*this);
    skip_blanks();
    if (at_ >= text_.size()) throw ExpressionError("the expression ends where a number, t or '(' was expected", text_.size() + 1);
    const char c = text_[at_];
    const std::size_t position = at_ + 1;
    if (c == '(') {
      ++at_;
      NodePtr inner = expression();
      expect(')', "expected ')'");
      inner->begin = position;
      inner->end = at_ + 1;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t begin = at_;
      while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) ++at_;
      const std::string name(text_.substr(begin, at_ - begin));
      skip_blanks();
      if (at_ < text_.size() && text_[at_] == '(') return call(name, position);
      if (name == "t") {
        auto node = std::make_unique<Node>(Op::time, position, position);
        node->has_time = true;
        node->end = begin + 2;
        return node;
      }
      if (name == "pi" || name == "Pi") return constant(M_PI, position, begin + name.size() + 1);
      throw ExpressionError("symbol \"" + name + "\" not found (the only variable is t; constants: pi)", position);
    }
    unexpected("where a number, t or '(' was expected");
  }

  NodePtr call(const std::string& name, std::size_t position) {
    std::optional<Op> op;
    for (const auto& [known, code] : functions)
      if (name == known) op = code;
    if (!op) throw ExpressionError("function '" + name + "' is not supported; use " + function_list, position);
    ++at_;  // '('
    NodePtr argument = expression();
    skip_blanks();
    if (at_ < text_.size() && text_[at_] == ',')
      throw ExpressionError("function '" + name + "' takes one argument", at_ + 1);
    expect(')', "expected ')' or ',' in argument list");
    NodePtr node = make_node(*op, position, position, std::move(argument));
    node->end = at_ + 1;
    return node;
  }

  NodePtr number() {
    const std::size_t begin = at_, position = at_ + 1;
    while (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.')) ++at_;
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      std::size_t exponent = at_ + 1;
      if (exponent < text_.size() && (text_[exponent] == '+' || text_[exponent] == '-')) ++exponent;
      if (exponent < text_.size() && std::isdigit(static_cast<unsigned char>(text_[exponent]))) {
        at_ = exponent;
        while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
      }
    }
    const std::string_view lexeme = text_.substr(begin, at_ - begin);
    double value = 0.0;
    const auto [end, error] = std::from_chars(lexeme.data(), lexeme.data() + lexeme.size(), value);
    if (error == std::errc::result_out_of_range)
      throw ExpressionError("the number " + std::string(lexeme) + " is out of the range of a double", position);
    if (error != std::errc() || end != lexeme.data() + lexeme.size())
      throw ExpressionError("\"" + std::string(lexeme) + "\" is not a number", position);
    return constant(value, position, at_ + 1);
  }

  static NodePtr constant(double value, std::size_t position, std::size_t end) {
    auto node = std::make_unique<Node>(Op::constant, position, position);
    node->value = value;
    node->end = end;
    return node;
  }

  static NodePtr binary(Op op, std::size_t position, NodePtr left, NodePtr right) {
    const std::size_t begin = left->begin;
    return make_node(op, position, begin, std::move(left), std::move(right));
  }

  bool is_power_operator() const {
    return at_ < text_.size() &&
           (text_[at_] == '^' || (text_[at_] == '*' && at_ + 1 < text_.size() && text_[at_ + 1] == '*'));
  }

  void skip_blanks() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  void expect(char c, const char* message) {
    skip_blanks();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return;
    }
    throw ExpressionError(message, at_ + 1);
  }

  [[noreturn]] void unexpected(const char* where) const {
    std::size_t end = at_ + 1;
    if (text_[at_] == '*' && end < text_.size() && text_[end] == '*') ++end;
    throw ExpressionError("unexpected \"" + std::string(text_.substr(at_, end - at_)) + "\" " + where, at_ + 1);
  }

  // One level of nesting while alive: parentheses, signs, powers and calls all pass here, so
  // the recursion (and every recursion over the tree later) is at most max_nesting deep.
  struct Nesting {
    explicit Nesting(Parser& parser) : parser_(parser) {
      if (++parser_.depth_ > 2 * TimeFunction::max_nesting) too_deep(parser_.at_ + 1);
    }
    ~Nesting() { --parser_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& parser_;
  };

  std::string_view text_;
  std::size_t at_ = 0;
  int depth_ = 0;  // two per level: a parenthesized part passes signed_factor and primary
};

// ---------------------------------------------------------------------------------------
// Evaluation: doubles for f; for f' and f'', jets (value, first and second derivative in t).

struct Jet {
  double v = 0.0, d = 0.0, dd = 0.0;
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

double apply(Op op, double u) {
  switch (op) {
    case Op::negate: return -u;
    case Op::square_root: return std::sqrt(u);
    case Op::sin: return std::sin(u);
    case Op::cos: return std::cos(u);
    case Op::tan: return std::tan(u);
    case Op::asin: return std::asin(u);
    case Op::acos: return std::acos(u);
    case Op::atan: return std::atan(u);
    case Op::sinh: return std::sinh(u);
    case Op::cosh: return std::cosh(u);
    case Op::tanh: return std::tanh(u);
    case Op::exp: return std::exp(u);
    case Op::log: return std::log(u);
    case Op::abs: return std::abs(u);
    default: return u;
  }
}

double apply(Op op, double a, double b) {
  switch (op) {
    case Op::add: return a + b;
    case Op::subtract: return a - b;
    case Op::multiply: return a * b;
    case Op::divide: return a / b;
    default: return std::pow(a, b);
  }
}

// g(u) for g with g' = g1 and g'' = g2 at u.v: the chain rule.
Jet chain(const Jet& u, double g0, double g1, double g2) { return {g0, g1 * u.d, g2 * u.d * u.d + g1 * u.dd}; }

Jet apply(Op op, const Jet& u) {
  switch (op) {
    case Op::negate: return {-u.v, -u.d, -u.dd};
    case Op::square_root: {
      const double s = std::sqrt(u.v);
      return chain(u, s, 0.5 / s, -0.25 / (s * s * s));
    }
    case Op::sin: return chain(u, std::sin(u.v), std::cos(u.v), -std::sin(u.v));
    case Op::cos: return chain(u, std::cos(u.v), -std::sin(u.v), -std::cos(u.v));
    case Op::tan: {
      const double t = std::tan(u.v), g1 = 1.0 + t * t;
      return chain(u, t, g1, 2.0 * t * g1);
    }
    case Op::asin: {
      const double g1 = 1.0 / std::sqrt(1.0 - u.v * u.v);
      return chain(u, std::asin(u.v), g1, u.v * g1 * g1 * g1);
    }
    case Op::acos: {
      const double g1 = 1.0 / std::sqrt(1.0 - u.v * u.v);
      return chain(u, std::acos(u.v), -g1, -u.v * g1 * g1 * g1);
    }
    case Op::atan: {
      const double g1 = 1.0 / (1.0 + u.v * u.v);
      return chain(u, std::atan(u.v), g1, -2.0 * u.v * g1 * g1);
    }
    case Op::sinh: return chain(u, std::sinh(u.v), std::cosh(u.v), std::sinh(u.v));
    case Op::cosh: return chain(u, std::cosh(u.v), std::sinh(u.v), std::cosh(u.v));
    case Op::tanh: {
      const double t = std::tanh(u.v), g1 = 1.0 - t * t;
      return chain(u, t, g1, -2.0 * t * g1);
    }
    case Op::exp: {
      const double e = std::exp(u.v);
      return chain(u, e, e, e);
    }
    case Op::log: return chain(u, std::log(u.v), 1.0 / u.v, -1.0 / (u.v * u.v));
    case Op::abs: {
      const double sign = u.v > 0.0 ? 1.0 : u.v < 0.0 ? -1.0 : 0.0;
      return chain(u, std::abs(u.v), sign, 0.0);
    }
    default: return u;
  }
}

// u^k for an integer k.
Jet integer_power(const Jet& u, int k) {
  if (k == 0) return {1.0, 0.0, 0.0};
  if (k == 1) return u;
  const double k1 = k, power2 = integer_power(u.v, k - 2);  // u^(k-2)
  return chain(u, power2 * u.v * u.v, k1 * power2 * u.v, k1 * (k1 - 1.0) * power2);
}

Jet apply(Op op, const Jet& a, const Jet& b) {
  switch (op) {
    case Op::add: return {a.v + b.v, a.d + b.d, a.dd + b.dd};
    case Op::subtract: return {a.v - b.v, a.d - b.d, a.dd - b.dd};
    case Op::multiply: return {a.v * b.v, a.d * b.v + a.v * b.d, a.dd * b.v + 2.0 * a.d * b.d + a.v * b.dd};
    case Op::divide: {  // q = a/b: a = q b, a' = q' b + q b', a'' = q'' b + 2 q' b' + q b''
      const double q = a.v / b.v, q1 = (a.d - q * b.d) / b.v;
      return {q, q1, (a.dd - 2.0 * q1 * b.d - q * b.dd) / b.v};
    }
    default: {  // a^b
      if (b.d == 0.0 && b.dd == 0.0) {  // a constant exponent: b a^(b-1), b (b-1) a^(b-2)
        const double p = b.v;
        return chain(a, std::pow(a.v, p), p * std::pow(a.v, p - 1.0), p * (p - 1.0) * std::pow(a.v, p - 2.0));
      }
      return apply(Op::exp, apply(Op::multiply, b, apply(Op::log, a)));  // exp(b log a)
    }
  }
}

bool is_unary(Op op) {
  return op == Op::negate || op == Op::square_root || (op >= Op::sin && op <= Op::abs);
}

// Runs the program on values of type Value (double or Jet), `time` standing for t.
template <class Value>
Value run(const Program& program, const Value& time) {
  constexpr int fixed = 64;
  Value fixed_stack[fixed];
  std::vector<Value> large;
  Value* stack = fixed_stack;
  if (program.stack_depth > fixed) {
    large.resize(static_cast<std::size_t>(program.stack_depth));
    stack = large.data();
  }
  int top = 0;
  for (const auto& in : program.code) {
    switch (in.op) {
      case Op::constant: stack[top++] = Value{in.value}; break;
      case Op::time: stack[top++] = time; break;
      case Op::integer_power: stack[top - 1] = integer_power(stack[top - 1], in.exponent); break;
      case Op::add: case Op::subtract: case Op::multiply: case Op::divide: case Op::power:
        stack[top - 2] = apply(in.op, stack[top - 2], stack[top - 1]);
        --top;
        break;
      default: stack[top - 1] = apply(in.op, stack[top - 1]); break;
    }
  }
  return top > 0 ? stack[0] : Value{};
}

// The tree into postfix code; the parts without t folded to constants (which must be
// finite: 10^(10^10) or 1/0 is an error at its operator).
struct Compiler {
  Program& program;
  int depth = 0;

  void emit(Program::Instruction instruction, int growth) {
    program.code.push_back(instruction);
    depth += growth;
    program.stack_depth = std::max(program.stack_depth, depth);
  }

  static double fold(const Node& node) {
    switch (node.op) {
      case Op::constant: return node.value;
      case Op::time: return 0.0;  // not reached: the parts folded have no t
      default:
        if (!node.right) return apply(node.op, fold(*node.left));
        return apply(node.op, fold(*node.left), fold(*node.right));
    }
  }

  void compile(const Node& node, std::string_view text) {
    if (!node.has_time) {
      const double value = fold(node);
      if (!std::isfinite(value)) {
        const std::size_t begin = node.begin - 1, length = node.end - node.begin, shown = std::min<std::size_t>(40, length);
        throw ExpressionError("\"" + std::string(text.substr(begin, shown)) + (shown < length ? "..." : "") +
                                  "\" has no finite value (" + (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") +
                                  "; too large for a double, or outside the function's domain)",
                              node.begin);
      }
      return emit({Op::constant, 0, value}, 1);
    }
    if (node.op == Op::time) return emit({Op::time}, 1);
    if (node.op == Op::power && !node.right->has_time) {  // t^2: a product chain, not pow
      const double exponent = fold(*node.right);
      if (!std::isfinite(exponent))
        throw ExpressionError("the exponent has no finite value (too large for a double)", node.right->position);
      compile(*node.left, text);
      if (exponent == std::round(exponent) && std::abs(exponent) <= 64)
        return emit({Op::integer_power, static_cast<int>(exponent)}, 0);
      if (exponent == 0.5) return emit({Op::square_root}, 0);
      emit({Op::constant, 0, exponent}, 1);
      return emit({Op::power}, -1);
    }
    compile(*node.left, text);
    if (is_unary(node.op)) return emit({node.op}, 0);
    compile(*node.right, text);
    emit({node.op}, -1);
  }
};

}  // namespace

TimeFunction::TimeFunction(double value) : text_(std::to_string(value)) {
  program_.code = {{Op::constant, 0, value}};
  program_.stack_depth = 1;
}

TimeFunction TimeFunction::parse(std::string_view text) {
  if (text.size() > max_text_length)
    throw ExpressionError("the expression has " + std::to_string(text.size()) + " characters; at most " +
                              std::to_string(max_text_length) + " are read",
                          0);
  const NodePtr root = Parser(text).parse();
  TimeFunction function;
  function.text_ = std::string(text);
  function.constant_ = !root->has_time;
  function.program_ = Program{};
  Compiler{function.program_}.compile(*root, text);
  return function;
}

std::string TimeFunction::excerpt(std::string_view text) {
  if (text.size() <= 80) return std::string(text);
  return std::string(text.substr(0, 60)) + "... (" + std::to_string(text.size()) + " characters)";
}

double TimeFunction::value(double t) const { return run(program_, t); }
double TimeFunction::rate(double t) const { return run(program_, Jet{t, 1.0, 0.0}).d; }
double TimeFunction::acceleration(double t) const { return run(program_, Jet{t, 1.0, 0.0}).dd; }

}  // namespace liembs
