// A whole study: cases, ladder extensions, analysis (liembs/study/study_run.hpp).
#include <liembs/study/study_run.hpp>

#include <liembs/study/ladder_extension.hpp>
#include <liembs/study/message_passing.hpp>

#include <algorithm>
#include <thread>

namespace liembs::study {

std::optional<StudyResults> run_study(Definition definition, std::vector<Case> cases, const std::filesystem::path& output,
                                      ExecutionOptions execution, ExecutionSummary& summary) {
  const bool coordinator = !execution.world || execution.world->rank() == 0;
  auto records = execute_cases(definition, cases, output, execution, summary);
  if (!coordinator) return std::nullopt;  // rank 0 writes the outputs
  StudyResults results = analyse(definition, cases, records);
  // Under MPI the other ranks have stopped: rank 0 runs the extensions itself.
  if (execution.world) {
    execution.world = nullptr;
    execution.jobs = std::max(1u, std::thread::hardware_concurrency());
  }
  for (long long round = 0; round < definition.measure.ladder_extensions; ++round) {
    std::vector<Case> extension = extend_ladders(definition, results);
    if (extension.empty()) break;
    ExecutionSummary extension_summary;
    auto extension_records = execute_cases(definition, extension, output, execution, extension_summary);
    summary.ran += extension_summary.ran;
    summary.cached += extension_summary.cached;
    summary.failed += extension_summary.failed;
    cases.insert(cases.end(), extension.begin(), extension.end());
    records.insert(records.end(), extension_records.begin(), extension_records.end());
    results = analyse(definition, cases, records);
  }
  return results;
}

}  // namespace liembs::study
