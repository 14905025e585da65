#pragma once
// The pieces of execute_run (run.cpp): the sampler that turns a state into a complete
// RunSample (measures and the trajectory row, in the order of host/output_schema.hpp), and
// the recorders over it: the summary's measures, the output files, the progress line.
#include <liembs/host/output_schema.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/sim/constrained_system.hpp>
#include <liembs/sim/prescribed_motion.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/progress_line.hpp>

#include <memory>

namespace liembs {

class RunSampler {
 public:
  // `space` and the run's dynamics and integrator outlive the sampler.
  RunSampler(Run& run, const StateSpace& space);

  const RunLayout& layout() const { return layout_; }
  ConstrainedSystem* constraints() const { return constraints_; }
  PrescribedMotion* prescribed() const { return prescribed_; }

  // Measures `state` (step 0: the initial state); with `row`, fills the trajectory row too.
  RunSample sample(const State& state, long long step, bool row);
  // Takes the integrator's V' after `step` for that step's row, as body twist rates: called
  // before a chart switch changes the coordinates V' is in (sample() takes it otherwise).
  void take_rates(const State& state, long long step);

 private:
  void fill_row(const State& state, long long step);

  Run& run_;
  const Model& model_;
  const StateSpace& space_;
  ForwardDynamics& dynamics_;
  ConstrainedSystem* constraints_;
  PrescribedMotion* prescribed_;
  RunLayout layout_;
  std::size_t base_body_ = 0;  // the floating base's body (tree runs)
  Eigen::Index multiplier_count_ = 0;
  // Workspaces, sized once (no allocation per step).
  std::vector<Pose> poses_;
  std::vector<Vec6> twists_;
  Invariants invariants_;
  DaeTerms constraint_terms_;
  Eigen::VectorXd velocity_residual_, prescribed_forces_, prescribed_rates_, rates_, velocity_maps_, map_rates_;
  std::vector<Vec6> twist_rates_;  // per free body, T v' + T' v (take_rates)
  long long rates_step_ = -1;      // the step rates_ and twist_rates_ belong to
  std::vector<double> violations_, row_;
};

// The measures of summary.json (drifts relative to the run's largest magnitudes, maxima of
// the errors and violations, the prescribed forces' work), updated at every sample.
class RunMeasures final : public RunRecorder {
 public:
  explicit RunMeasures(RunSummary& summary) : summary_(summary) {}
  void record(const RunSample& sample) override;

 private:
  RunSummary& summary_;
  Invariants initial_;
  double energy_scale_ = 0.0, energy_change_max_ = 0.0, balance_change_max_ = 0.0;
  double momentum_scale_ = 0.0, momentum_change_max_ = 0.0;
  double previous_time_ = 0.0, previous_power_ = 0.0;
};

// trajectory.csv (one line per row) and summary.json in `folder`, renamed into place at end().
class RunFiles final : public RunRecorder {
 public:
  RunFiles(const Run& run, const std::filesystem::path& folder);
  void begin(const std::vector<std::string>& columns) override;
  void record(const RunSample& sample) override;
  void end(const RunSummary& summary) override;

 private:
  const Run& run_;
  std::unique_ptr<AtomicFile> trajectory_, summary_;
};

// "t = ... / ... s (.. %)" on the progress line (util/progress_line.hpp): on a terminal, for
// runs longer than a second.
class RunProgress final : public RunRecorder {
 public:
  explicit RunProgress(double end_time) : end_time_(end_time) {}
  void record(const RunSample& sample) override;
  void end(const RunSummary&) override { line_.clear(); }

 private:
  double end_time_;
  ProgressLine line_;
};

}  // namespace liembs
