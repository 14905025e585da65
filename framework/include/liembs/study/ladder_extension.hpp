#pragma once
// Ladders that bracket their targets (docs/studies.md "Cost at matched accuracy"): where
// every error of a series is better than a target, or every error worse, the study adds a
// rung beyond the ladder's end on that side and runs it, round after round, until the
// target is bracketed or [measure] ladder_extensions rungs were added on that side.
#include <liembs/study/results.hpp>

#include <vector>

namespace liembs::study {

// One round: for each series with a target it does not bracket (analyse() set the status),
// a rung beyond its coarsest rung (every error better) or its finest (every error worse),
// at the ratio of the two rungs at that end of the series. Not on a side that has gained
// measure.ladder_extensions rungs already, not beyond a rung that failed, not to a step
// larger than half the end time or a tolerance above 0.1, and not finer for a target below
// the reference's own error estimate. Adds the new values to the ladder axes of
// `definition` (so that later analyses know them) and returns the new cases, none when no
// series can be extended.
std::vector<Case> extend_ladders(Definition& definition, const StudyResults& results);

}  // namespace liembs::study
