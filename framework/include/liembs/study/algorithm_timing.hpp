#pragma once
// Algorithm studies (docs/studies.md, "Algorithm studies"): an algorithm's row function
// (the BatchEvaluator that `liembs eval` uses) timed on random states as a simulation case is
// timed (time_repetitions, a run being one pass over the states), and the agreement of two
// evaluations of the same states.
#include <liembs/plugin/algorithm.hpp>
#include <liembs/study/cpu_time.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace liembs::study {

// `states` rows of random inputs for `columns` (row-major), the same for the same columns
// and seed: joint coordinates q.<dof> in [-3, 3], a floating base's orientation
// base.qw..qz a uniformly random unit quaternion, everything else (positions, rates,
// accelerations, forces, their derivatives) in [-1, 1].
std::vector<double> random_states(const std::vector<std::string>& columns, std::size_t states, unsigned long long seed);

// Evaluates every state `warmup` times untimed, then times passes over all of them with
// time_repetitions(settings, rotate_cpus, ...): a pass is one run, timed by this thread's CPU
// clock (per call: the pass's time divided by `states`). `outputs` receives the results
// (states x output columns).
TimedRepetitions time_calls(BatchEvaluator& evaluator, const std::vector<double>& inputs, std::size_t states,
                            long long warmup, const CpuTimeSettings& settings, bool rotate_cpus,
                            std::vector<double>& outputs);

// The largest relative difference between two results of the same states (row-major,
// `width` values a row): max over rows of |a - b|_inf / max(1, |b|_inf), with the row and
// column where it is reached. A non-finite value in either counts as an infinite difference.
struct Difference {
  double value = 0.0;
  std::size_t row = 0, column = 0;
};
Difference max_relative_difference(const std::vector<double>& a, const std::vector<double>& b, std::size_t width);

}  // namespace liembs::study
