#pragma once
// Algorithm studies (docs/studies.md, "Algorithm studies"): an algorithm's row function
// (the BatchEvaluator that `liembs eval` uses) timed on random states with the method of
// bench-tree-dynamics (warm-up passes, repeated timed passes, the median and the fastest),
// and the agreement of two evaluations of the same states.
#include <liembs/plugin/algorithm.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace liembs::study {

// `states` rows of random inputs for `columns` (row-major), the same for the same columns
// and seed: joint coordinates q.<dof> in [-3, 3], a floating base's orientation
// base.qw..qz a uniformly random unit quaternion, everything else (positions, rates,
// accelerations, forces, their derivatives) in [-1, 1].
std::vector<double> random_states(const std::vector<std::string>& columns, std::size_t states, unsigned long long seed);

struct CallTiming {
  double ns_median = 0.0, ns_min = 0.0;  // CPU time (this thread) per call
};

// Evaluates every state `warmup` times untimed, then `repetitions` timed passes over all of
// them; each pass's CPU time divided by the states is one sample. `outputs` receives the
// results (states x output columns).
CallTiming time_calls(BatchEvaluator& evaluator, const std::vector<double>& inputs, std::size_t states,
                      long long warmup, long long repetitions, std::vector<double>& outputs);

// The largest relative difference between two results of the same states (row-major,
// `width` values a row): max over rows of |a - b|_inf / max(1, |b|_inf), with the row and
// column where it is reached. A non-finite value in either counts as an infinite difference.
struct Difference {
  double value = 0.0;
  std::size_t row = 0, column = 0;
};
Difference max_relative_difference(const std::vector<double>& a, const std::vector<double>& b, std::size_t width);

}  // namespace liembs::study
