#pragma once
// The time points of a fixed-step integrator, t_n = t_0 + n h, computed from n rather than by
// adding h to the previous time, so that they carry no accumulated round-off. A change of h
// (the run's shortened last step) starts a new grid at the current time.
namespace liembs {

class TimeGrid {
 public:
  // The time after the next step of size h from `time`.
  double next(double time, double h) {
    if (h != step_) {
      origin_ = time;
      step_ = h;
      count_ = 0;
    }
    return origin_ + static_cast<double>(count_ + 1) * h;
  }
  // That step was taken.
  void advance() { ++count_; }
  void reset() { step_ = 0.0; }

 private:
  double origin_ = 0.0, step_ = 0.0;
  long long count_ = 0;
};

}  // namespace liembs
