// liembs::sincos (the joint rotations of the recursive kernels) against long-double libm:
// every quadrant, both signs, angles near multiples of pi/2 (the range reduction's hard
// cases), and the libm fallback beyond 1e5 rad and for non-finite angles.
#include <liembs/lie/sincos.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using liembs::sincos;

namespace {

// The largest |error| of sin and cos over the angles, against sinl/cosl.
double max_error(const std::vector<double>& angles) {
  double worst = 0.0;
  for (double x : angles) {
    const auto value = sincos(x);
    const long double s = std::sin(static_cast<long double>(x)), c = std::cos(static_cast<long double>(x));
    worst = std::max({worst, static_cast<double>(std::abs(value.sin - s)), static_cast<double>(std::abs(value.cos - c))});
  }
  return worst;
}

}  // namespace

TEST_CASE("sincos agrees with libm to a few units in the last place", "[lie][sincos]") {
  std::mt19937_64 random(7);
  for (double range : {1.0, 3.2, 10.0, 1000.0, 99999.0}) {
    std::uniform_real_distribution<double> uniform(-range, range);
    std::vector<double> angles(200000);
    for (double& x : angles) x = uniform(random);
    INFO("angles in (-" << range << ", " << range << ")");
    CHECK(max_error(angles) < 3e-16);
  }
}

TEST_CASE("sincos near multiples of pi/2 and at special angles", "[lie][sincos]") {
  std::vector<double> angles{0.0, -0.0, 1e-300, -1e-300, 1e-8, std::acos(-1.0), -std::acos(-1.0)};
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> tiny(-1e-9, 1e-9);
  for (int k = -4000; k <= 4000; ++k) {
    const double multiple = k * 1.5707963267948966;
    angles.push_back(multiple);
    angles.push_back(multiple + tiny(random));
    angles.push_back(multiple + 0.7853981633974483);  // the edges of the reduced range
    angles.push_back(multiple - 0.7853981633974483);
  }
  CHECK(max_error(angles) < 3e-16);
  // Exact where the quadrant logic alone decides.
  CHECK(sincos(0.0).sin == 0.0);
  CHECK(sincos(0.0).cos == 1.0);
  CHECK(std::signbit(sincos(-0.0).sin));
}

TEST_CASE("sincos of two angles in lanes agrees with libm and with the one-angle sincos", "[lie][sincos]") {
  std::mt19937_64 random(13);
  std::uniform_real_distribution<double> uniform(-1000.0, 1000.0);
  std::vector<double> angles{0.0, -0.0, 1e-300, 1.5707963267948966, -0.7853981633974483, 1e5, -123456.789, 1e300};
  for (int i = 0; i < 100000; ++i) angles.push_back(uniform(random));
  double worst = 0.0, worst_against_one = 0.0;
  for (std::size_t i = 0; i + 1 < angles.size(); ++i) {
    const liembs::SinCosLanes both = sincos(liembs::Lanes{angles[i], angles[i + 1]});
    for (int lane = 0; lane < 2; ++lane) {
      const double x = angles[i + static_cast<std::size_t>(lane)];
      const long double s = std::sin(static_cast<long double>(x)), c = std::cos(static_cast<long double>(x));
      worst = std::max({worst, static_cast<double>(std::abs(both.sin[lane] - s)), static_cast<double>(std::abs(both.cos[lane] - c))});
      const auto one = sincos(x);
      worst_against_one = std::max({worst_against_one, std::abs(both.sin[lane] - one.sin), std::abs(both.cos[lane] - one.cos)});
    }
  }
  CHECK(worst < 3e-16);
  CHECK(worst_against_one < 3e-16);
  const liembs::SinCosLanes special = sincos(liembs::Lanes{0.0, std::numeric_limits<double>::quiet_NaN()});
  CHECK(special.sin[0] == 0.0);
  CHECK(special.cos[0] == 1.0);
  CHECK(std::isnan(special.sin[1]));
}

TEST_CASE("sincos beyond 1e5 rad and for non-finite angles is libm's", "[lie][sincos]") {
  for (double x : {1e5, -1e5, 123456.789, -9.87e12, 1e300}) {
    CHECK(sincos(x).sin == std::sin(x));
    CHECK(sincos(x).cos == std::cos(x));
  }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double x : {inf, -inf, nan}) {
    CHECK(std::isnan(sincos(x).sin));
    CHECK(std::isnan(sincos(x).cos));
  }
}
