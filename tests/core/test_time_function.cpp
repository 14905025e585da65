// Driving functions f(t) from expressions: f, f', f'' against closed forms (symbolic
// derivatives, evaluated by the compiled programs), the authors' Python syntax, and the
// parse errors with their positions.
#include <liembs/util/time_function.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace liembs;
using Catch::Matchers::Contains;

TEST_CASE("f, f' and f'' of expressions agree with their closed forms", "[time-function]") {
  const double pi = M_PI;
  struct Case {
    const char* text;
    double (*f)(double), (*rate)(double), (*acceleration)(double);
  };
  const Case cases[] = {
      {"3*t^2 - 2*t + 1", [](double t) { return 3 * t * t - 2 * t + 1; }, [](double t) { return 6 * t - 2; },
       [](double) { return 6.0; }},
      {"exp(-t)*sin(2*t)", [](double t) { return std::exp(-t) * std::sin(2 * t); },
       [](double t) { return std::exp(-t) * (2 * std::cos(2 * t) - std::sin(2 * t)); },
       [](double t) { return std::exp(-t) * (-3 * std::sin(2 * t) - 4 * std::cos(2 * t)); }},
      {"sqrt(1 + t**2)", [](double t) { return std::sqrt(1 + t * t); }, [](double t) { return t / std::sqrt(1 + t * t); },
       [](double t) { return std::pow(1 + t * t, -1.5); }},
      {"log(2 + t) / (1 + t^2)", [](double t) { return std::log(2 + t) / (1 + t * t); },
       [](double t) { return 1 / ((2 + t) * (1 + t * t)) - 2 * t * std::log(2 + t) / std::pow(1 + t * t, 2); },
       [](double t) {
         const double u = 1 + t * t, L = std::log(2 + t);
         return -1 / (std::pow(2 + t, 2) * u) - 4 * t / ((2 + t) * u * u) - 2 * L / (u * u) + 8 * t * t * L / (u * u * u);
       }},
      {"atan(t) + tanh(t) + cosh(t/3)", [](double t) { return std::atan(t) + std::tanh(t) + std::cosh(t / 3); },
       [](double t) { return 1 / (1 + t * t) + 1 / std::pow(std::cosh(t), 2) + std::sinh(t / 3) / 3; },
       [](double t) {
         return -2 * t / std::pow(1 + t * t, 2) - 2 * std::tanh(t) / std::pow(std::cosh(t), 2) + std::cosh(t / 3) / 9;
       }},
  };
  for (const Case& c : cases) {
    const TimeFunction f = TimeFunction::parse(c.text);
    CHECK_FALSE(f.is_constant());
    for (double t : {-0.7, 0.0, 0.3, 1.9, 3.0}) {
      INFO(c.text << " at t = " << t << ": f' = " << f.derivative_text(1) << ", f'' = " << f.derivative_text(2));
      CHECK(f.value(t) == Approx(c.f(t)).epsilon(1e-14).margin(1e-14));
      CHECK(f.rate(t) == Approx(c.rate(t)).epsilon(1e-13).margin(1e-14));
      CHECK(f.acceleration(t) == Approx(c.acceleration(t)).epsilon(1e-12).margin(1e-13));
    }
  }
  // Constants and pi.
  const TimeFunction constant = TimeFunction::parse("pi^2/4");
  CHECK(constant.is_constant());
  CHECK(constant.value(5.0) == Approx(pi * pi / 4).epsilon(1e-15));
  CHECK(constant.rate(5.0) == 0.0);
  CHECK(TimeFunction(1.5).value(2.0) == 1.5);
  CHECK(TimeFunction(1.5).acceleration(2.0) == 0.0);
}

TEST_CASE("the pendulum driver's f'' comes out exact, unlike the hand-written one of the authors' file",
          "[time-function]") {
  // Reference note, caveat 1: for f = cos(pi/4 cos 2t + pi/2) the correct second derivative
  // is pi cos 2t cos(pi/4 cos 2t) + (pi^2/4) sin^2(2t) sin(pi/4 cos 2t); C1's revJoint.mdl
  // has pi instead of pi^2/4 as the coefficient of the second term.
  const double pi = M_PI;
  const TimeFunction f = TimeFunction::parse("cos(pi/4*cos(2*t) + pi/2)");
  auto exact = [pi](double t) {
    const double phi = pi / 4 * std::cos(2 * t);
    return pi * std::cos(2 * t) * std::cos(phi) + pi * pi / 4 * std::pow(std::sin(2 * t), 2) * std::sin(phi);
  };
  auto hand_written = [pi](double t) {
    const double phi = pi / 4 * std::cos(2 * t);
    return pi * std::cos(2 * t) * std::cos(phi) + pi * std::pow(std::sin(2 * t), 2) * std::sin(phi);
  };
  auto rate = [pi](double t) { return pi / 2 * std::sin(2 * t) * std::cos(pi / 4 * std::cos(2 * t)); };
  for (double t : {0.1, 0.5, 1.0, 2.2, 3.0}) {
    INFO("t = " << t);
    CHECK(f.value(t) == Approx(-std::sin(pi / 4 * std::cos(2 * t))).epsilon(1e-14).margin(1e-15));
    CHECK(f.rate(t) == Approx(rate(t)).epsilon(1e-13).margin(1e-14));
    CHECK(f.acceleration(t) == Approx(exact(t)).epsilon(1e-13).margin(1e-14));
    // Also against central differences of f', independent of the closed form.
    const double dt = 1e-5;
    CHECK(f.acceleration(t) == Approx((f.rate(t + dt) - f.rate(t - dt)) / (2 * dt)).epsilon(1e-8).margin(1e-8));
  }
  // Where sin(2t) is not small the hand-written value is visibly wrong.
  CHECK(std::abs(f.acceleration(0.5) - hand_written(0.5)) > 0.1);
}

TEST_CASE("malformed expressions are errors with a position", "[time-function]") {
  auto message_of = [](const char* text) -> std::string {
    try {
      TimeFunction::parse(text);
    } catch (const ExpressionError& error) {
      return std::string(error.what()) + " @" + std::to_string(error.position());
    }
    return "no error";
  };
  CHECK_THAT(message_of("cos(2*x)"), Contains("x") && Contains("the only variable is t"));  // unknown symbol
  CHECK_THAT(message_of("cos(2*t"), !Contains("no error"));          // unbalanced
  // GiNaC's own wording is reduced to what is wrong: no parser prefix, no source location.
  for (const char* text : {"cos(2*x)", "cos(2*t", "sin(t) +* 2", "t**2 + )"}) {
    INFO(text << ": " << message_of(text));
    CHECK_THAT(message_of(text), !Contains("GiNaC") && !Contains("find_or_insert_symbol") && !Contains("\n") &&
                                     !Contains("parser.cpp"));
  }
  CHECK_THAT(message_of("sin(t) +* 2"), !Contains("no error"));
  CHECK_THAT(message_of(""), Contains("empty"));
  CHECK_THAT(message_of("zeta(t)"), !Contains("no error"));           // not a supported function
  // GiNaC 1.8's parser reports no column (0): the message then quotes the offending token.
  try {
    TimeFunction::parse("t**2 + )");
    FAIL("no error");
  } catch (const ExpressionError& error) {
    INFO(error.what() << " at " << error.position());
    CHECK_THAT(std::string(error.what()), Contains("\")\""));
    CHECK((error.position() == 0 || (error.position() >= 7 && error.position() <= 9)));
  }
}
