#pragma once
// A whole study as `liembs study` and the Python module's liembs.study run it: the cases, then
// rounds of ladder extensions (docs/studies.md, "Cost at matched accuracy"), analysed.
#include <liembs/study/execution.hpp>
#include <liembs/study/results.hpp>

#include <filesystem>
#include <optional>
#include <vector>

namespace liembs::study {

// Runs `cases` of `definition` (each cached in <output>/cases), analyses them, and extends the
// ladders that do not bracket a target for up to measure.ladder_extensions rounds. Under MPI,
// a rank other than 0 runs the cases it is sent and returns nothing; rank 0 runs the
// extensions itself, on every core, after the other ranks have stopped.
std::optional<StudyResults> run_study(Definition definition, std::vector<Case> cases, const std::filesystem::path& output,
                                      ExecutionOptions execution, ExecutionSummary& summary);

}  // namespace liembs::study
