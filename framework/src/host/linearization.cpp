// Linearization of a tree's equations of motion about a state (linearization.hpp,
// docs/derivatives.md "Linearization").
#include <liembs/host/linearization.hpp>

#include "run_json.hpp"

#include <liembs/error.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/lie/se3.hpp>
#include <liembs/plugin/algorithm.hpp>
#include <liembs/plugin/group.hpp>
#include <liembs/plugin/representation.hpp>
#include <liembs/sim/prescribed_motion.hpp>
#include <liembs/host/run.hpp>
#include <liembs/util/format.hpp>

#include <nlohmann/json.hpp>

#include <Eigen/Geometry>
#include <Eigen/LU>

#include <cmath>
#include <iomanip>
#include <span>

namespace liembs {

namespace {

// The central-difference step of the fallback (in every state and input direction).
constexpr double difference_step = 1e-5;

std::vector<double> to_vector(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

void write_matrix(std::ostream& out, const Eigen::MatrixXd& matrix, const std::vector<std::string>& rows,
                  const std::vector<std::string>& columns) {
  out << std::setprecision(17) << "state";
  for (const auto& name : columns) out << ',' << name;
  out << '\n';
  for (Eigen::Index i = 0; i < matrix.rows(); ++i) {
    out << rows[static_cast<std::size_t>(i)];
    for (Eigen::Index j = 0; j < matrix.cols(); ++j) out << ',' << matrix(i, j) + 0.0;  // no "-0"
    out << '\n';
  }
}

}  // namespace

Eigen::VectorXd tree_state_rates(TreeDynamics& dynamics, const TreeState& at, const Eigen::VectorXd& dx,
                                 const Eigen::VectorXd& force) {
  const KinematicTree& tree = dynamics.tree();
  const int n = tree.dof(), nv = tree.velocity_dimension(), offset = tree.floating_base ? 6 : 0;
  TreeState state = at;
  state.q += dx.segment(offset, n);
  state.qd += dx.segment(nv + offset, n);
  Eigen::VectorXd rates(2 * nv), acceleration;
  if (tree.floating_base) {
    const Vec6 delta = dx.head<6>();
    state.base = se3::compose(at.base, se3::exp(delta));
    state.base_twist += dx.segment<6>(nv);
    // C^-1 C' = dexp_left(delta) delta' = u_base (se3.hpp).
    rates.head<6>() = se3::dexp_left(delta).partialPivLu().solve(state.base_twist);
  }
  rates.segment(offset, n) = state.qd;
  dynamics.forward_dynamics(state, force, acceleration);
  rates.tail(nv) = acceleration;
  return rates;
}

Linearization linearize_tree(TreeDynamics& dynamics, TreeDerivatives* derivatives, const TreeState& state,
                             const Eigen::VectorXd& force, const std::string& fallback_reason) {
  const KinematicTree& tree = dynamics.tree();
  const int nv = tree.velocity_dimension();
  Linearization out;
  out.state = state;
  out.floating_base = tree.floating_base;
  out.force = force;
  name_linearization(tree, out);
  out.rates = tree_state_rates(dynamics, state, Eigen::VectorXd::Zero(2 * nv), force);
  if (derivatives) {
    ForwardDynamicsDerivatives forward;
    derivatives->forward_dynamics_derivatives(state, force, forward);
    out.A.setZero(2 * nv, 2 * nv);
    out.A.topRightCorner(nv, nv).setIdentity();  // dq'/du (delta' = u_base at delta = 0)
    if (tree.floating_base) out.A.topLeftCorner<6, 6>() = -0.5 * se3::ad(state.base_twist);
    out.A.bottomLeftCorner(nv, nv) = forward.acceleration_by_q;
    out.A.bottomRightCorner(nv, nv) = forward.acceleration_by_u;
    out.B.setZero(2 * nv, nv);
    out.B.bottomRows(nv) = forward.acceleration_by_force;  // M^-1
    return out;
  }
  out.method = "central-differences";
  out.fallback_reason = fallback_reason;
  out.A.resize(2 * nv, 2 * nv);
  out.B.resize(2 * nv, nv);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(2 * nv);
  for (int c = 0; c < 2 * nv; ++c) {
    const Eigen::VectorXd step = difference_step * Eigen::VectorXd::Unit(2 * nv, c);
    out.A.col(c) = (tree_state_rates(dynamics, state, step, force) - tree_state_rates(dynamics, state, -step, force)) /
                   (2.0 * difference_step);
  }
  for (int c = 0; c < nv; ++c) {
    const Eigen::VectorXd step = difference_step * Eigen::VectorXd::Unit(nv, c);
    out.B.col(c) = (tree_state_rates(dynamics, state, zero, force + step) -
                    tree_state_rates(dynamics, state, zero, force - step)) /
                   (2.0 * difference_step);
  }
  return out;
}

void name_linearization(const KinematicTree& tree, Linearization& linearization) {
  auto& states = linearization.state_names;
  auto& inputs = linearization.input_names;
  states.clear();
  inputs.clear();
  const auto add = [&](std::vector<std::string>& list, const char* base, const char* prefix,
                       std::initializer_list<const char*> components) {
    if (tree.floating_base)
      for (const char* c : components) list.push_back(std::string(base) + c);
    for (const auto& name : tree.dof_names) list.push_back(prefix + name);
  };
  add(states, "base.delta.", "q.", {"wx", "wy", "wz", "vx", "vy", "vz"});
  add(states, "base.", "qd.", {"wx", "wy", "wz", "vx", "vy", "vz"});
  add(inputs, "base.", "tau.", {"mx", "my", "mz", "fx", "fy", "fz"});
}

Linearization linearize_run(Run& run, std::optional<double> at) {
  const std::string where = run.config_file.string() + ": ";
  const std::string supported = "linearize supports trees in relative coordinates (no loop closures, no absolute "
                                "coordinates, no prescribed motion)";
  if (!run.representation || !run.dynamics)
    throw ModelError(where + "algorithm '" + run.algorithm_name + "' does not work on a tree in relative coordinates; " +
                     supported);
  auto tree = std::make_shared<const KinematicTree>(compile_tree(*run.model, true));
  if (!tree->cut_joints.empty())
    throw ModelError(where + "joint '" + run.model->joints[tree->cut_joints.front()].name + "' closes a loop; " +
                     supported);
  if (const PrescribedMotion* prescribed = run.dynamics->capabilities().prescribed_motion;
      prescribed && !prescribed->prescribed_coordinates().empty())
    throw ModelError(where + "coordinate '" + prescribed->prescribed_coordinates().front() + "' has a prescribed motion; " +
                     supported);

  State state;
  if (at) {
    if (!std::isfinite(*at) || *at < 0.0 || *at > run.settings.end_time)
      throw ConfigError(where + "the linearization time " + format_number(*at, 10) + " s is outside the run's [0, " +
                        format_number(run.settings.end_time, 10) + "] s");
    const double end_time = run.settings.end_time;
    run.settings.end_time = *at;
    try {
      state = execute_run(run, RunOutput{}).final_state;
    } catch (...) {
      run.settings.end_time = end_time;
      throw;
    }
    run.settings.end_time = end_time;
  } else {
    state = run.dynamics->initial_state();
  }

  TreeState tree_state;
  tree_state.q = state.coordinates;
  tree_state.qd = state.velocities.tail(tree->dof());
  if (tree->floating_base) {
    tree_state.base = state.poses.front();
    run.group->to_body_twists(std::span<const Pose>(state.poses.data(), 1), state.chart.data(), state.velocities.data(),
                              tree_state.base_twist.data());
  }
  auto dynamics = run.representation->bind_tree(tree);
  std::unique_ptr<TreeDerivatives> derivatives;
  std::string reason;
  if (run.representation->capabilities().derivatives)
    derivatives = run.representation->bind_derivatives(tree);
  else
    reason = "representation '" + run.representation_name +
             "' gives no analytic derivatives (its plugin declares no RepresentationCapabilities::derivatives)";
  Linearization out = linearize_tree(*dynamics, derivatives.get(), tree_state,
                                     Eigen::VectorXd::Zero(tree->velocity_dimension()), reason);
  out.time = state.time;
  return out;
}

void write_linearization(const Run& run, const Linearization& linearization, const std::filesystem::path& directory) {
  prepare_output_folder(directory);
  AtomicFile a(directory / "A.csv"), b(directory / "B.csv"), summary(directory / "linearization.json");
  write_matrix(a.stream(), linearization.A, linearization.state_names, linearization.state_names);
  write_matrix(b.stream(), linearization.B, linearization.state_names, linearization.input_names);

  const TreeState& x0 = linearization.state;
  const bool floating = linearization.floating_base;
  Eigen::VectorXd x(linearization.A.rows());
  const Eigen::Index nv = x.size() / 2, offset = floating ? 6 : 0;
  x.setZero();
  x.segment(offset, x0.q.size()) = x0.q;
  if (floating) x.segment<6>(nv) = x0.base_twist;
  x.tail(x0.qd.size()) = x0.qd;

  nlohmann::ordered_json json;
  json["config"] = run.config_file.string();
  json["title"] = run.title;
  json["choices"] = run_choices(run);
  json["time"] = linearization.time;
  json["method"] = linearization.method;
  if (!linearization.fallback_reason.empty()) {
    json["fallback_reason"] = linearization.fallback_reason;
    json["difference_step"] = difference_step;
  }
  json["convention"] =
      "x' = f(x, tau) ~ A dx + B dtau; x = (configuration, velocity); a floating base's configuration is the "
      "increment delta of C = C0 exp(delta) (body-fixed right perturbation) about base_pose, its velocity the body "
      "twist (omega, R^T r')";
  json["state_names"] = linearization.state_names;
  json["input_names"] = linearization.input_names;
  json["x0"] = to_vector(x);
  json["tau0"] = to_vector(linearization.force);
  json["rates"] = to_vector(linearization.rates);
  if (floating) {
    const Eigen::Quaterniond rotation(x0.base.R);
    json["base_pose"] = {{"position", {x0.base.r.x(), x0.base.r.y(), x0.base.r.z()}},
                         {"quaternion_wxyz", {rotation.w(), rotation.x(), rotation.y(), rotation.z()}}};
  }
  summary.stream() << json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  a.check();
  b.check();
  summary.check();
  a.commit();
  b.commit();
  summary.commit();
}

}  // namespace liembs
