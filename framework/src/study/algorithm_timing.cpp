#include <liembs/error.hpp>
#include <liembs/study/algorithm_timing.hpp>
#include <liembs/study/cpu_time.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <regex>

namespace liembs::study {

std::vector<double> random_states(const std::vector<std::string>& columns, std::size_t states, unsigned long long seed) {
  // q.<dof> is a coordinate; q.<dof>.d<k> (higher-order inputs) is one of its derivatives.
  static const std::regex derivative(R"(\.d[0-9]+$)");
  enum class Draw { coordinate, quaternion, other };
  std::vector<Draw> draws;
  for (const auto& name : columns) {
    if (name.rfind("q.", 0) == 0 && !std::regex_search(name, derivative)) draws.push_back(Draw::coordinate);
    else if (name == "base.qw" || name == "base.qx" || name == "base.qy" || name == "base.qz") draws.push_back(Draw::quaternion);
    else draws.push_back(Draw::other);
  }
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::normal_distribution<double> normal;
  const std::size_t width = columns.size();
  std::vector<double> values(states * width);
  for (std::size_t s = 0; s < states; ++s) {
    double* row = values.data() + s * width;
    double quaternion[4];
    double norm = 0.0;
    do {  // a normalized 4-D Gaussian is uniform on the unit sphere
      norm = 0.0;
      for (double& x : quaternion) x = normal(random), norm += x * x;
    } while (norm < 1e-12);
    norm = std::sqrt(norm);
    for (std::size_t c = 0; c < width; ++c) {
      switch (draws[c]) {
        case Draw::coordinate: row[c] = 3.0 * uniform(random); break;
        case Draw::other: row[c] = uniform(random); break;
        case Draw::quaternion: {
          const std::size_t k = columns[c] == "base.qw" ? 0 : columns[c] == "base.qx" ? 1 : columns[c] == "base.qy" ? 2 : 3;
          row[c] = quaternion[k] / norm;
          break;
        }
      }
    }
  }
  return values;
}

TimedRepetitions time_calls(BatchEvaluator& evaluator, const std::vector<double>& inputs, std::size_t states,
                            long long warmup, const CpuTimeSettings& settings, bool rotate_cpus,
                            std::vector<double>& outputs) {
  const std::size_t in = evaluator.input_columns().size(), out = evaluator.output_columns().size();
  if (states == 0 || settings.repetitions < 1) throw Error("timing needs at least one state and one repetition");
  if (inputs.size() != states * in) throw Error("timing: the inputs do not match the states and input columns");
  outputs.assign(states * out, 0.0);
  auto pass = [&] {
    for (std::size_t s = 0; s < states; ++s) evaluator.evaluate(inputs.data() + s * in, outputs.data() + s * out);
  };
  for (long long k = 0; k < warmup; ++k) pass();
  return time_repetitions(settings, rotate_cpus, [&] {
    const double start = cpu_seconds_now(CpuClock::thread);
    pass();
    return cpu_seconds_now(CpuClock::thread) - start;
  });
}

Difference max_relative_difference(const std::vector<double>& a, const std::vector<double>& b, std::size_t width) {
  Difference worst;
  if (a.size() != b.size()) {
    worst.value = std::numeric_limits<double>::infinity();
    return worst;
  }
  if (width == 0) return worst;
  for (std::size_t row = 0; row * width < a.size(); ++row) {
    const double* x = a.data() + row * width;
    const double* y = b.data() + row * width;
    double scale = 1.0;
    for (std::size_t c = 0; c < width; ++c) scale = std::max(scale, std::abs(y[c]));
    for (std::size_t c = 0; c < width; ++c) {
      double difference = std::abs(x[c] - y[c]) / scale;
      if (!std::isfinite(x[c]) || !std::isfinite(y[c])) difference = std::numeric_limits<double>::infinity();
      if (difference > worst.value) worst = {difference, row, c};
    }
  }
  return worst;
}

}  // namespace liembs::study
