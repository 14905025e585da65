// The Python module `liembs` (docs/python.md): models from run files or URDF, every
// algorithm that `liembs eval` can evaluate on one state or a 2-D array of states (split
// over threads by BatchEvaluation, the GIL released), simulations with their trajectory
// and summary, and validation. Everything goes through the same TOML reading, plugin
// loading and errors as the liembs program; LieMBS errors become liembs.Error subclasses
// with the same messages.
#include <liembs/batch/batch_evaluation.hpp>
#include <liembs/config/config_table.hpp>
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_geometric_derivatives.hpp>
#include <liembs/error.hpp>
#include <liembs/host/output_schema.hpp>
#include <liembs/io/atomic_file.hpp>
#include <liembs/io/csv.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/sim/column_names.hpp>
#include <liembs/host/linearization.hpp>
#include <liembs/host/run.hpp>
#include <liembs/study/study_run.hpp>
#include <liembs/util/interrupt.hpp>
#include <liembs/version.hpp>

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Eigen/Geometry>
#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <iterator>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;
using namespace liembs;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// Arrays of the wrong shape: liembs.ShapeError, both a liembs.ConfigError and a ValueError
// (NumPy's convention for shapes), registered in PYBIND11_MODULE.
class ShapeError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// While a long call runs without the GIL, SIGINT (Ctrl-C) only notes an interrupt
// (liembs/util/interrupt.hpp): the loops see it at their next step, row or block, stop, and
// throw Interrupted, raised in Python as KeyboardInterrupt. Python's own handler is put back
// afterwards; a SIGINT that came too late to stop the call is passed on to it (raised again).
// Calls on several threads share one installation (the first installs, the last restores).
class SigintCatcher {
 public:
  SigintCatcher() {
    const std::lock_guard lock(mutex());
    if (depth()++ > 0) return;
    struct sigaction action {};
    action.sa_handler = [](int signal) { note_interrupt(signal); };
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &saved());
  }
  ~SigintCatcher() {
    const std::lock_guard lock(mutex());
    if (--depth() > 0) return;
    sigaction(SIGINT, &saved(), nullptr);
    if (const int signal = pending_interrupt()) {
      clear_pending_interrupt();
      if (std::uncaught_exceptions() == 0) ::raise(signal);  // the call ended first: Python's turn
    }
  }
  SigintCatcher(const SigintCatcher&) = delete;
  SigintCatcher& operator=(const SigintCatcher&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex instance;
    return instance;
  }
  static int& depth() {
    static int instance = 0;
    return instance;
  }
  static struct sigaction& saved() {
    static struct sigaction instance {};
    return instance;
  }
};

// The GIL released for a long call that Ctrl-C stops (SigintCatcher).
class Unlocked {
  SigintCatcher catcher_;
  py::gil_scoped_release released_;
};

// The plugin folder of this module's own build or install: the build tree's when the module
// file lies in its build tree, else the install tree's, found relative to the module file
// (the install prefix given to `cmake --install` need not be the configured one).
SearchPathEntry module_plugin_folder() {
  namespace fs = std::filesystem;
  boost::system::error_code ec;
  const fs::path module_folder = fs::path(boost::dll::this_line_location(ec).string()).parent_path();
  const fs::path build_plugins = LIEMBS_MODULE_PLUGIN_DIR;
  std::error_code same_error;
  if (ec || fs::equivalent(module_folder, build_plugins.parent_path().parent_path().parent_path() / "python", same_error))
    return {build_plugins, "the build of this module", false, SearchTier::program};
  return {(module_folder / LIEMBS_MODULE_INSTALLED_PLUGIN_DIR).lexically_normal(), "the install of this module",
          false, SearchTier::program};
}

// The search path after plugin_path's entries: LIEMBS_PLUGIN_PATH, the plugin folder of the
// build or install this module belongs to, and the install prefix (search_order_text()).
std::vector<SearchPathEntry> module_search_path() {
  std::vector<SearchPathEntry> path = Registry::environment_search_path();
  path.push_back(module_plugin_folder());
  for (const auto& entry : Registry::default_search_path())  // the configured install prefix
    if (entry.tier == SearchTier::install) path.push_back(entry);
  return path;
}

// Plugins: plugin_path entries first, then module_search_path().
std::unique_ptr<Registry> make_registry(const std::vector<std::string>& plugin_path) {
  auto registry = std::make_unique<Registry>();
  std::vector<SearchPathEntry> path;
  for (const auto& entry : plugin_path) path.push_back({entry, "plugin_path", true});
  const auto rest = module_search_path();
  path.insert(path.end(), rest.begin(), rest.end());
  registry->append_search_path(std::move(path));
  return registry;
}

// A run file (or generated TOML) with its overrides, loaded on demand for each purpose.
struct Source {
  std::optional<std::filesystem::path> file;
  std::string text;  // when there is no file
  std::string name;  // for messages
  std::string model_key;  // the generated text's model file key ("model.urdf", ...), when there is no file
  std::vector<std::string> overrides;
  std::vector<std::string> plugin_path;

  std::shared_ptr<ConfigDocument> document(const std::vector<std::string>& more) const {
    auto document = file ? ConfigDocument::load(*file) : ConfigDocument::from_string(text, name);
    for (const auto& assignment : overrides) document->set_override(assignment);
    for (const auto& assignment : more) document->set_override(assignment);
    return document;
  }
};

// A run loaded with its registry (which outlives the components created from its plugins).
struct LoadedRun {
  std::unique_ptr<Registry> registry;
  Run run;
};

// Each call judges its outputs by the files it read itself (liembs/io/file_guard.hpp): the
// calls that load open an InputScope, and the calls that write hold theirs until they have written.
// A message about the TOML text the module generated for a model file (from_urdf, from_mjcf,
// from_sdf) speaks of the model file and the call instead: the text's location
// ("NAME:line:column: key: " or "NAME: (--set a=b): key: ") points into a file the user never
// wrote. A problem of the model file is the loader's own message (it names the file, the line
// and the link or joint); any other keeps NAME ("arm.urdf (liembs.Model.from_urdf)").
std::string speak_of_model_file(const Source& source, const std::string& message) {
  if (source.file || message.rfind(source.name, 0) != 0) return message;
  static const std::regex location(R"(^(:\d+:\d+|: \(--set[^)]*\)): ([^ :]+|\(top level\)): )");
  std::smatch match;
  const std::string rest = message.substr(source.name.size());
  if (!std::regex_search(rest, match, location)) return message;
  const std::string key = match[2], problem = match.suffix();
  if (key == source.model_key) return problem;
  std::string hint;
  if (problem.find("missing required key") != std::string::npos)
    hint = " (a model from a model file has only [model] and [representation]: give the rest with set=[\"key=value\", ...])";
  // A key of `set=` is named; the plugin choices' messages name the plugin themselves.
  const bool named = key == "(top level)" || key == "representation.name" || key == "algorithm.name";
  return source.name + ": " + (named ? "" : key + ": ") + problem + hint;
}

// Rethrows the LieMBS error `thrown` with the message speak_of_model_file gives, of the same class.
[[noreturn]] void rethrow_speaking_of_model_file(const Source& source, const std::exception_ptr& thrown) {
  try {
    std::rethrow_exception(thrown);
  } catch (const ConfigError& e) {
    throw ConfigError(speak_of_model_file(source, e.what()));
  } catch (const PluginError& e) {
    throw PluginError(speak_of_model_file(source, e.what()));
  } catch (const ModelError& e) {
    throw ModelError(speak_of_model_file(source, e.what()));
  } catch (const SimulationError& e) {
    throw SimulationError(speak_of_model_file(source, e.what()));
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    throw Error(speak_of_model_file(source, e.what()));
  }
}

std::shared_ptr<LoadedRun> load(const Source& source, const std::vector<std::string>& more, RunPurpose purpose) {
  const InputScope inputs;
  auto loaded = std::make_shared<LoadedRun>();
  loaded->registry = make_registry(source.plugin_path);
  try {
    loaded->run = load_run(source.document(more), *loaded->registry, purpose);
  } catch (const Error&) {
    if (source.file) throw;
    rethrow_speaking_of_model_file(source, std::current_exception());
  }
  return loaded;
}

// An algorithm bound for evaluation, on threads.
class Evaluator {
 public:
  Evaluator(std::shared_ptr<LoadedRun> loaded, unsigned threads)
      : loaded_(std::move(loaded)), batch_(loaded_->run, capped_threads(threads)), requested_threads_(threads) {}

  const std::vector<std::string>& inputs() const { return batch_.input_columns(); }
  const std::vector<std::string>& outputs() const { return batch_.output_columns(); }
  unsigned threads() const { return batch_.threads(); }
  void set_threads(unsigned threads) {
    requested_threads_ = threads;
    batch_.set_threads(capped_threads(threads));  // at most the machine's hardware threads
  }
  // As set_threads, skipped when unchanged (0 reads the CPU affinity, a system call).
  void request_threads(unsigned threads) {
    if (threads != requested_threads_) set_threads(threads);
  }
  const std::string& algorithm() const { return loaded_->run.algorithm_name; }
  const std::string& representation() const { return loaded_->run.representation_name; }

  // Rows of states (row-major, the inputs in order) into a new array, (rows, outputs) or
  // (outputs,).
  py::array_t<double> evaluate_rows(const double* in, std::size_t rows, bool two_dimensional) {
    const std::size_t width = batch_.input_count(), out_width = batch_.output_count();
    py::array_t<double> result = two_dimensional ? py::array_t<double>({rows, out_width}) : py::array_t<double>(out_width);
    double* out = result.mutable_data();
    if (rows < min_rows_per_thread) {  // one thread, about a microsecond a state: keep the GIL
      batch_.evaluate({in, rows * width}, {out, rows * out_width});
    } else {
      const Unlocked unlocked;
      batch_.evaluate({in, rows * width}, {out, rows * out_width});
    }
    return result;
  }

  // Rows whose inputs come in pieces, piece p (row-major, widths[p] values a row) holding the
  // next widths[p] inputs of every row (the tree algorithms' q, q' and a third argument): each
  // thread gathers its rows' pieces into a row of its own and evaluates it, so no serial pass
  // packs the states first. Outputs (rows, output_count()); the same numbers, bit for bit, as
  // evaluate_rows on the packed rows.
  py::array_t<double> evaluate_pieces(const std::vector<const double*>& pieces, const std::vector<std::size_t>& widths,
                                      std::size_t rows) {
    const std::size_t width = batch_.input_count(), out_width = batch_.output_count();
    py::array_t<double> result({rows, out_width});
    double* out = result.mutable_data();
    // A row per thread, each on cache lines of its own (no false sharing between the threads).
    constexpr std::size_t line = 64 / sizeof(double);
    const std::size_t stride = (width + line - 1) / line * line + line;
    std::vector<double> gathered(batch_.threads() * stride + line);
    double* const first = gathered.data() + (line - reinterpret_cast<std::uintptr_t>(gathered.data()) / sizeof(double) % line) % line;
    {
      const Unlocked unlocked;
      batch_.for_each_row(rows, [&](BatchEvaluator& evaluator, unsigned worker, std::size_t row) {
        double* const own = first + worker * stride;
        double* in = own;
        for (std::size_t p = 0; p < pieces.size(); ++p) in = std::copy_n(pieces[p] + row * widths[p], widths[p], in);
        evaluate_row(evaluator, own, out + row * out_width);
      });
    }
    return result;
  }

  // One state already gathered into a row of the inputs, into `out` (output_count() values).
  void evaluate_one(const double* in, double* out) { batch_.evaluate({in, batch_.input_count()}, {out, batch_.output_count()}); }
  std::size_t output_count() const { return batch_.output_count(); }

  // One state (1-D, the inputs in order) or rows of states (2-D): outputs of the same rank.
  py::array_t<double> evaluate(const Array& states) {
    const std::size_t width = batch_.input_count();
    if (states.ndim() == 1 || states.ndim() == 2) {
      const auto columns = static_cast<std::size_t>(states.shape(states.ndim() - 1));
      if (columns == width) {
        const auto rows = static_cast<std::size_t>(states.ndim() == 2 ? states.shape(0) : 1);
        return evaluate_rows(states.data(), rows, states.ndim() == 2);
      }
    }
    std::string shape;
    for (py::ssize_t d = 0; d < states.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(states.shape(d));
    std::string names;
    for (const auto& name : inputs()) names += (names.empty() ? "" : ",") + name;
    throw ShapeError("algorithm '" + algorithm() + "': states of shape (" + shape + "); expected (" +
                      std::to_string(width) + ",) or (rows, " + std::to_string(width) + "), the inputs in this order: " + names);
  }

 private:
  std::shared_ptr<LoadedRun> loaded_;
  BatchEvaluation batch_;
  unsigned requested_threads_ = 0;
};

class ModelHandle {
 public:
  explicit ModelHandle(Source source) : source_(std::move(source)) {
    auto loaded = load(source_, {}, RunPurpose::evaluate);  // checks the file and the model now
    tree_ = std::make_shared<const KinematicTree>(compile_tree(*loaded->run.model));
    model_ = loaded->run.model;
    representation_ = loaded->run.representation_name;
  }

  std::shared_ptr<Evaluator> evaluator(const std::string& algorithm, const std::optional<std::string>& representation,
                                       unsigned threads) {
    auto& cached = representation ? evaluators_[std::make_tuple(algorithm, *representation)] : default_evaluators_[algorithm];
    if (!cached) {
      const std::string chosen = representation.value_or(representation_.empty() ? "body-fixed" : representation_);
      cached = std::make_shared<Evaluator>(
          load(source_, {"algorithm.name=" + algorithm, "representation.name=" + chosen}, RunPurpose::evaluate), threads);
    }
    cached->request_threads(threads);
    return cached;
  }

  // The tree algorithms by name: positions (base pose x y z qw qx qy qz if floating, then
  // q), velocities (base twist if floating, then q'), and a third argument (accelerations
  // or forces), each 1-D for one state or 2-D for rows of states.
  py::object call(const std::string& algorithm, const std::vector<Array>& arguments, const std::optional<std::string>& representation,
                  unsigned threads) {
    const auto evaluator_ptr = evaluator(algorithm, representation, threads);
    Evaluator& evaluator = *evaluator_ptr;
    // A batch when any argument is 2-D; a 1-D argument is then the same state for every row
    // (broadcast, as NumPy would).
    bool batch = false;
    py::ssize_t rows = 1;
    for (const Array& argument : arguments)
      if (argument.ndim() == 2 && !batch) {
        batch = true;
        rows = argument.shape(0);
      }
    std::size_t width = 0;
    for (std::size_t a = 0; a < arguments.size(); ++a) {
      const Array& argument = arguments[a];
      if ((argument.ndim() != 1 && argument.ndim() != 2) || (argument.ndim() == 2 && argument.shape(0) != rows))
        throw ShapeError(algorithm + ": argument " + std::to_string(a + 1) + " has shape " + shape_of(argument) +
                         "; every argument must be 1-D (one state, used for every row) or 2-D with the same rows (" +
                         std::to_string(rows) + ")");
      const std::size_t expected = a == 0 ? positions() : velocities();
      if (static_cast<std::size_t>(argument.shape(argument.ndim() - 1)) != expected)
        throw ShapeError(algorithm + ": argument " + std::to_string(a + 1) + " has " +
                         std::to_string(argument.shape(argument.ndim() - 1)) + " entries per state, expected " +
                         std::to_string(expected) + (a == 0 && tree_->floating_base ? " (base x y z qw qx qy qz, then q)" : ""));
      width += expected;
    }
    // Large batches are gathered row by row on the threads (the GIL released); small ones are
    // assembled in a buffer of the model (the GIL held throughout).
    if (rows >= static_cast<py::ssize_t>(min_rows_per_thread)) {
      std::vector<const double*> pieces;
      std::vector<std::size_t> widths;
      std::vector<std::vector<double>> repeated;  // broadcast 1-D arguments, one copy per row
      repeated.reserve(arguments.size());
      for (const Array& argument : arguments) {
        const auto count = static_cast<std::size_t>(argument.shape(argument.ndim() - 1));
        if (argument.ndim() == 1) {
          std::vector<double>& copy = repeated.emplace_back(static_cast<std::size_t>(rows) * count);
          for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) std::copy_n(argument.data(), count, copy.data() + r * count);
          pieces.push_back(copy.data());
        } else {
          pieces.push_back(argument.data());
        }
        widths.push_back(count);
      }
      return shape_result(algorithm, evaluator.evaluate_pieces(pieces, widths, static_cast<std::size_t>(rows)), batch);
    }
    std::vector<double>& states = scratch_;
    states.resize(static_cast<std::size_t>(rows) * width);
    double* row = states.data();
    for (py::ssize_t r = 0; r < rows; ++r)
      for (const Array& argument : arguments) {
        const auto count = static_cast<std::size_t>(argument.shape(argument.ndim() - 1));
        const py::ssize_t offset = argument.ndim() == 2 ? r * static_cast<py::ssize_t>(count) : 0;
        std::copy_n(argument.data() + offset, count, row);
        row += count;
      }
    py::array_t<double> result = evaluator.evaluate_rows(states.data(), static_cast<std::size_t>(rows), batch);
    return shape_result(algorithm, result, batch);
  }

  // A tree algorithm by name (named_algorithms[index]) on `count` arguments given as Python
  // objects. The fast path, for one state of 1-D C-contiguous float64 arrays in the model's
  // own representation: the arguments are read in place into one row, and the evaluator is
  // the one bound at the first call (no map lookup, no conversion, no copy of an array).
  // Anything else (2-D batches, lists, other dtypes, strided views, wrong lengths, another
  // representation) takes the general path: converted to float64 arrays, checked, named.
  py::object call_named(std::size_t index, std::initializer_list<py::handle> arguments,
                        const std::optional<std::string>& representation, unsigned threads);

  // The moving joints in the order of dtau_dB's column blocks.
  std::vector<std::string> moving_joint_names() const {
    std::vector<std::string> names;
    for (const int node : joint_first_nodes(*tree_)) names.push_back(model_->joints[tree_->dof_joint[static_cast<std::size_t>(node)]].name);
    return names;
  }
  // u = 0, for one state or broadcast against a batch (1-D).
  py::array_t<double> zero_velocity() const {
    py::array_t<double> zero(static_cast<py::ssize_t>(velocities()));
    std::fill_n(zero.mutable_data(), velocities(), 0.0);
    return zero;
  }
  std::size_t positions() const { return static_cast<std::size_t>(tree_->dof()) + (tree_->floating_base ? 7 : 0); }
  std::size_t velocities() const { return static_cast<std::size_t>(tree_->velocity_dimension()); }
  const KinematicTree& tree() const { return *tree_; }
  const liembs::Model& model() const { return *model_; }
  const Source& source() const { return source_; }

 private:
  static std::string shape_of(const Array& array) {
    std::string text = "(";
    for (py::ssize_t d = 0; d < array.ndim(); ++d) text += (d ? ", " : "") + std::to_string(array.shape(d));
    return text + (array.ndim() == 1 ? ",)" : ")");
  }

  // Vectors stay (rows, nv); matrices become (rows, nv, nv); derivatives a dict.
  py::object shape_result(const std::string& algorithm, py::array_t<double> flat, bool batch) const {
    const auto nv = static_cast<py::ssize_t>(velocities());
    const py::ssize_t rows = batch ? flat.shape(0) : 1;
    const auto matrix = [&](py::ssize_t offset, py::ssize_t columns) {
      py::array_t<double> out(batch ? std::vector<py::ssize_t>{rows, nv, columns} : std::vector<py::ssize_t>{nv, columns});
      const py::ssize_t width = batch ? flat.shape(1) : flat.shape(0);
      for (py::ssize_t r = 0; r < rows; ++r)
        std::copy_n(flat.data() + r * width + offset, nv * columns, out.mutable_data() + r * nv * columns);
      return out;
    };
    const auto vector = [&](py::ssize_t offset) {
      py::array_t<double> out(batch ? std::vector<py::ssize_t>{rows, nv} : std::vector<py::ssize_t>{nv});
      const py::ssize_t width = batch ? flat.shape(1) : flat.shape(0);
      for (py::ssize_t r = 0; r < rows; ++r) std::copy_n(flat.data() + r * width + offset, nv, out.mutable_data() + r * nv);
      return out;
    };
    if (algorithm == "crba" || algorithm == "coriolis") return matrix(0, nv);
    if (algorithm == "regressor") return matrix(0, static_cast<py::ssize_t>(model_->bodies.size()) * kInertialParameters);
    const auto derivatives = [&](const std::string_view (&keys)[4]) {  // a vector, then three matrices
      py::dict out;
      out[py::str(std::string(keys[0]))] = vector(0);
      for (int k = 1; k < 4; ++k) out[py::str(std::string(keys[k]))] = matrix(nv + (k - 1) * nv * nv, nv);
      return out;
    };
    namespace names = column_names;  // the `liembs eval` column prefixes
    static const std::string_view inverse[4] = {names::force_key, names::force_by_position, names::force_by_velocity,
                                                names::mass_matrix};
    static const std::string_view forward[4] = {names::acceleration_key, names::acceleration_by_position,
                                                names::acceleration_by_velocity, names::acceleration_by_force};
    if (algorithm == "rnea-derivatives") return derivatives(inverse);
    if (algorithm == "aba-derivatives") return derivatives(forward);
    if (algorithm == "centroidal") {  // mass, p_G, h_G, then J_G and A_G row-major (centroidal_algorithms.hpp)
      const py::ssize_t width = batch ? flat.shape(1) : flat.shape(0);
      const auto block = [&](py::ssize_t offset, py::ssize_t height, py::ssize_t columns) {  // (rows,) height x columns
        std::vector<py::ssize_t> shape{height};
        if (columns > 1) shape.push_back(columns);
        if (batch) shape.insert(shape.begin(), rows);
        py::array_t<double> out(shape);
        for (py::ssize_t r = 0; r < rows; ++r)
          std::copy_n(flat.data() + r * width + offset, height * columns, out.mutable_data() + r * height * columns);
        return out;
      };
      py::dict out;
      out["mass"] = batch ? py::object(block(0, 1, 1).attr("reshape")(rows)) : py::object(py::float_(flat.data()[0]));
      out["center_of_mass"] = block(1, 3, 1);
      out["momentum"] = block(4, 6, 1);
      out["center_of_mass_jacobian"] = block(10, 3, nv);
      out["momentum_matrix"] = block(10 + 3 * nv, 6, nv);
      return out;
    }
    const auto bodies = static_cast<py::ssize_t>(model_->bodies.size());
    if (algorithm == "kinematics") {  // body_motion_components per body (host/output_schema.hpp)
      struct Part {
        const char* key;
        py::ssize_t offset, count;
      };
      static constexpr Part parts[] = {{"position", 0, 3}, {"orientation", 3, 4}, {"angular_velocity", 7, 3}, {"velocity", 10, 3}};
      constexpr auto per_body = static_cast<py::ssize_t>(body_motion_components.size());
      static_assert(per_body == 13);
      const py::ssize_t width = batch ? flat.shape(1) : flat.shape(0);
      py::dict out;
      for (const Part& part : parts) {
        py::array_t<double> block(batch ? std::vector<py::ssize_t>{rows, bodies, part.count} : std::vector<py::ssize_t>{bodies, part.count});
        double* to = block.mutable_data();
        for (py::ssize_t r = 0; r < rows; ++r)
          for (py::ssize_t b = 0; b < bodies; ++b, to += part.count)
            std::copy_n(flat.data() + r * width + b * per_body + part.offset, part.count, to);
        out[part.key] = std::move(block);
      }
      return out;
    }
    if (algorithm == "jacobians")  // J.<body>.<component>.<coordinate>, row-major
      return flat.attr("reshape")(batch ? py::make_tuple(rows, bodies, 6, nv) : py::make_tuple(bodies, 6, nv));
    if (algorithm == "energy") {  // energy_columns (host/output_schema.hpp)
      py::dict out;
      for (std::size_t c = 0; c < energy_columns.size(); ++c) {
        const py::str key{std::string(energy_columns[c])};
        if (!batch) {
          out[key] = py::float_(flat.data()[c]);
          continue;
        }
        py::array_t<double> column(rows);
        for (py::ssize_t r = 0; r < rows; ++r) column.mutable_data()[r] = flat.data()[r * flat.shape(1) + static_cast<py::ssize_t>(c)];
        out[key] = std::move(column);
      }
      return out;
    }
    if (algorithm == "rnea-geometric-derivatives") {  // tau, then dtau/dB and dtau/dX row-major
      const auto references = static_cast<py::ssize_t>(6 * joint_first_nodes(*tree_).size()), screws = static_cast<py::ssize_t>(6 * tree_->dof());
      py::dict out;
      out[py::str(std::string(names::force_key))] = vector(0);
      out[py::str(std::string(names::force_by_reference))] = matrix(nv, references);
      out[py::str(std::string(names::force_by_screw))] = matrix(nv + nv * references, screws);
      return out;
    }
    return flat;
  }

  Source source_;
  std::shared_ptr<const KinematicTree> tree_;
  std::shared_ptr<const liembs::Model> model_;
  std::string representation_;
  std::map<std::tuple<std::string, std::string>, std::shared_ptr<Evaluator>> evaluators_;
  std::map<std::string, std::shared_ptr<Evaluator>> default_evaluators_;
  std::vector<double> scratch_;  // in the model's own representation
  std::vector<std::shared_ptr<Evaluator>> bound_;  // per named algorithm: its evaluator in the model's representation
};

Source file_source(const std::string& file, const std::vector<std::string>& set, const std::vector<std::string>& plugin_path) {
  Source source;
  source.file = std::filesystem::path(file);
  source.name = file;
  source.overrides = set;
  source.plugin_path = plugin_path;
  return source;
}

// TOML text with a basic string (escapes \ and ").
std::string toml_string(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string toml_number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  std::string text = out.str();
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

Source urdf_source(const std::string& urdf, bool floating_base, const std::vector<double>& gravity,
                   const std::string& representation, const std::vector<std::string>& plugin_path) {
  if (gravity.size() != 3) throw ConfigError("from_urdf: gravity needs 3 components, not " + std::to_string(gravity.size()));
  Source source;
  source.name = urdf + " (liembs.Model.from_urdf)";
  source.model_key = "model.urdf";
  source.text = "[model]\nurdf = " + toml_string(std::filesystem::absolute(urdf).string()) +
                "\nfloating_base = " + (floating_base ? "true" : "false") + "\ngravity = [" + toml_number(gravity[0]) + ", " +
                toml_number(gravity[1]) + ", " + toml_number(gravity[2]) + "]\n[representation]\nname = " +
                toml_string(representation) + "\n";
  source.plugin_path = plugin_path;
  return source;
}

// A model file of another format ("mjcf", "sdf"): its gravity unless `gravity` is given.
Source model_file_source(const std::string& key, const std::string& file, const std::optional<std::vector<double>>& gravity,
                         const std::string& representation, const std::vector<std::string>& plugin_path) {
  const std::string function = "from_" + key;
  if (gravity && gravity->size() != 3)
    throw ConfigError(function + ": gravity needs 3 components, not " + std::to_string(gravity->size()));
  Source source;
  source.name = file + " (liembs.Model." + function + ")";
  source.model_key = "model." + key;
  source.text = "[model]\n" + key + " = " + toml_string(std::filesystem::absolute(file).string()) + "\n";
  if (gravity)
    source.text += "gravity = [" + toml_number((*gravity)[0]) + ", " + toml_number((*gravity)[1]) + ", " +
                   toml_number((*gravity)[2]) + "]\n";
  source.text += "[representation]\nname = " + toml_string(representation) + "\n";
  source.plugin_path = plugin_path;
  return source;
}

// The plugins a run chose, for summaries.
py::dict choices(const Run& run) {
  py::dict result;
  result["group"] = run.group_name;
  result["algorithm"] = run.algorithm_name;
  result["integrator"] = run.integrator_name;
  result["representation"] = run.representation_name;
  return result;
}

// The trajectory rows of a run (RunSample::row), appended as they come.
class TrajectoryRows final : public RunRecorder {
 public:
  void begin(const std::vector<std::string>& columns) override { width = columns.size(); }
  void record(const RunSample& sample) override { values.insert(values.end(), sample.row.begin(), sample.row.end()); }
  std::size_t width = 0;
  std::vector<double> values;  // row-major
};

// A simulation's trajectory (the columns of trajectory.csv: same names, same rows, same
// numbers) and summary (summary.json's object, converted by Python's json module).
py::tuple simulate(const Source& source, const std::vector<std::string>& set, const std::optional<std::string>& output) {
  const InputScope inputs;
  auto loaded = load(source, set, RunPurpose::simulate);
  Run& run = loaded->run;
  TrajectoryRows rows;
  RunOutput run_output;
  if (output) run_output.directory = std::filesystem::path(*output);
  run_output.recorders.push_back(&rows);
  RunSummary summary;
  {
    const Unlocked unlocked;
    summary = execute_run(run, run_output);
  }
  py::dict trajectory;
  const std::size_t width = rows.width, count = width ? rows.values.size() / width : 0;
  for (std::size_t c = 0; c < summary.columns.size(); ++c) {
    py::array_t<double> column(static_cast<py::ssize_t>(count));
    double* out = column.mutable_data();
    for (std::size_t r = 0; r < count; ++r) out[r] = rows.values[r * width + c];
    trajectory[py::str(summary.columns[c])] = std::move(column);
  }
  py::object result = py::module_::import("json").attr("loads")(summary_json(run, summary));
  return py::make_tuple(trajectory, result);
}

py::dict validate(const Source& source, const std::vector<std::string>& set) {
  auto loaded = load(source, set, RunPurpose::simulate);
  const Run& run = loaded->run;
  py::dict result = choices(run);
  result["title"] = run.title;
  result["bodies"] = run.model->bodies.size();
  result["joints"] = run.model->joints.size();
  result["end_time"] = run.settings.end_time;
  result["step_size"] = run.settings.step_size;
  return result;
}

// A and B of x' = f(x, tau) about the run's initial state or the state at time `at`, as
// `liembs linearize` (liembs/host/linearization.hpp): the same numbers as A.csv, B.csv and the
// entries of linearization.json; with `output`, those files are written too.
py::dict linearize(const Source& source, const std::vector<std::string>& set, std::optional<double> at,
                   const std::optional<std::string>& output) {
  const InputScope inputs;
  auto loaded = load(source, set, RunPurpose::simulate);
  Run& run = loaded->run;
  Linearization linearization;
  {
    const Unlocked unlocked;
    linearization = linearize_run(run, at);
    if (output) write_linearization(run, linearization, std::filesystem::path(*output));
  }
  const TreeState& x0 = linearization.state;
  const Eigen::Index nv = linearization.A.rows() / 2, offset = linearization.floating_base ? 6 : 0;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2 * nv);  // a floating base's delta is 0 at x0
  x.segment(offset, x0.q.size()) = x0.q;
  if (linearization.floating_base) x.segment<6>(nv) = x0.base_twist;
  x.tail(x0.qd.size()) = x0.qd;
  py::dict result = choices(run);
  result["time"] = linearization.time;
  result["method"] = linearization.method;
  if (!linearization.fallback_reason.empty()) result["fallback_reason"] = linearization.fallback_reason;
  result["A"] = linearization.A;
  result["B"] = linearization.B;
  result["state_names"] = linearization.state_names;
  result["input_names"] = linearization.input_names;
  result["x0"] = x;
  result["tau0"] = linearization.force;
  result["rates"] = linearization.rates;
  if (linearization.floating_base) {
    const Eigen::Quaterniond rotation(x0.base.R);
    result["base_position"] = Eigen::Vector3d(x0.base.r);
    result["base_quaternion_wxyz"] = Eigen::Vector4d(rotation.w(), rotation.x(), rotation.y(), rotation.z());
  }
  return result;
}

// A folder made for one call and removed after it (the case cache of a study run without `output`).
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "liembs-study-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw Error("cannot create a temporary folder for the study's cases: " + pattern);
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// results.csv's text as a dict of columns (the same names, in order): a column whose fields
// are all numbers or empty is a float64 array (empty: NaN), any other an array of str.
py::dict csv_columns(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string_view> fields;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t line_breaks = 0;
    std::size_t end = csv::record_end(std::string_view(text).substr(start), line_breaks);
    end = end == std::string_view::npos ? text.size() : start + end;
    csv::split_record(std::string_view(text).substr(start, end - start), fields);
    auto& row = rows.emplace_back();
    for (const auto field : fields) row.push_back(csv::unquote(field));
    start = end + 1;
  }
  py::dict columns;
  if (rows.empty()) return columns;
  const auto numpy = py::module_::import("numpy");
  for (std::size_t c = 0; c < rows[0].size(); ++c) {
    std::vector<double> numbers;
    bool numeric = true;
    for (std::size_t r = 1; r < rows.size() && numeric; ++r) {
      const std::string& field = c < rows[r].size() ? rows[r][c] : std::string();
      double value = std::numeric_limits<double>::quiet_NaN();
      numeric = field.empty() || csv::parse_finite(field, value);
      numbers.push_back(value);
    }
    if (numeric) {
      columns[py::str(rows[0][c])] = py::array_t<double>(static_cast<py::ssize_t>(numbers.size()), numbers.data());
      continue;
    }
    py::list texts;
    for (std::size_t r = 1; r < rows.size(); ++r) texts.append(c < rows[r].size() ? rows[r][c] : std::string());
    columns[py::str(rows[0][c])] = numpy.attr("array")(texts, py::arg("dtype") = "str");
  }
  return columns;
}

// A study file run as `liembs study` runs it (liembs/study/study_run.hpp: the cases in
// processes of their own, cached in <output>/cases, the ladder extensions): results.csv as a
// dict of columns; with `output`, results.csv, series.csv and study.json are written there too
// (not report.html).
py::dict run_study_file(const std::string& file, const std::vector<std::string>& set, const std::optional<std::string>& output,
                        std::optional<unsigned> jobs, bool force, const std::vector<std::string>& plugin_path) {
  const InputScope inputs;
  auto document = ConfigDocument::load(file);
  for (const auto& assignment : set) document->set_override(assignment);
  study::Definition definition = study::load_study(document);
  std::vector<study::Case> cases = study::expand_cases(definition);
  const bool algorithms = definition.kind == study::StudyKind::algorithms;
  study::ExecutionOptions execution;
  // As `liembs study`: an algorithm study times one case at a time unless asked otherwise.
  execution.jobs = jobs ? capped_threads(*jobs) : algorithms ? 1u : available_cores();
  execution.force = force;
  execution.plugins = {plugin_path, module_search_path()};
  std::optional<TemporaryFolder> temporary;
  const std::filesystem::path folder = output ? std::filesystem::path(*output) : temporary.emplace().path();
  prepare_output_folder(folder);
  study::check_outputs(folder);
  std::optional<study::StudyResults> results;
  study::ExecutionSummary summary;
  {
    const Unlocked unlocked;
    results = study::run_study(definition, cases, folder, execution, summary);
  }
  std::ostringstream text;
  study::write_results_csv(*results, text);
  if (output) {  // the files `liembs study --no-report` writes, replaced together
    AtomicFile results_csv(folder / study::results_file), json(folder / study::json_file);
    std::optional<AtomicFile> series_csv;
    results_csv.stream() << text.str();
    if (!algorithms) study::write_series_csv(*results, series_csv.emplace(folder / study::series_file).stream());
    study::write_study_json(*results, folder, json.stream());
    std::vector<std::filesystem::path> stale{folder / study::report_file};
    if (!series_csv) stale.push_back(folder / study::series_file);
    commit_together({&results_csv, series_csv ? &*series_csv : nullptr, &json}, stale);
  }
  return csv_columns(text.str());
}

// The tree algorithms and their arguments (positions, velocities, third).
struct NamedAlgorithm {
  const char* method;
  const char* name;
  int arguments;
  const char* third;
  bool vector_result;  // the evaluator's row is the result (no reshaping)
  const char* doc;
};
const NamedAlgorithm named_algorithms[] = {
    {"rnea", "rnea", 3, "qdd", true, "Inverse dynamics (RNEA): generalized forces, shape (nv,) or (rows, nv)."},
    {"aba", "aba", 3, "tau", true, "Forward dynamics (ABA): generalized accelerations, shape (nv,) or (rows, nv)."},
    {"crba_cholesky", "crba-cholesky", 3, "tau", true, "Forward dynamics by CRBA and Cholesky."},
    {"crba", "crba", 1, nullptr, false, "Mass matrix (CRBA), shape (nv, nv) or (rows, nv, nv)."},
    {"coriolis", "coriolis", 2, nullptr, false, "Coriolis matrix C (M' - 2C skew), shape (nv, nv) or (rows, nv, nv)."},
    {"gravity", "gravity", 1, nullptr, true, "Gravity and load forces, shape (nv,) or (rows, nv)."},
    {"rnea_derivatives", "rnea-derivatives", 3, "qdd", false,
     "Inverse dynamics and its derivatives: dict tau, dtau_dq, dtau_du, M (the `liembs eval` column prefixes)."},
    {"aba_derivatives", "aba-derivatives", 3, "tau", false,
     "Forward dynamics and its derivatives: dict qdd, dqdd_dq, dqdd_du, dqdd_dtau (the `liembs eval` column prefixes)."},
    {"regressor", "regressor", 3, "qdd", false, "Inverse-dynamics regressor Y, shape (nv, 10 bodies), tau = Y pi."},
    {"centroidal", "centroidal", 2, nullptr, false,
     "Centre of mass, its Jacobian and the centroidal momentum matrix: dict mass, center_of_mass (3,), momentum "
     "(h_G = A_G u: angular about the centre of mass, then linear; (6,)), center_of_mass_jacobian (3, nv), "
     "momentum_matrix (A_G, (6, nv))."},
    {"kinematics", "kinematics", 2, nullptr, false,
     "Forward kinematics: dict position (bodies, 3), orientation (bodies, 4; quaternion w, x, y, z, w >= 0), "
     "angular_velocity (bodies, 3; body frame), velocity (bodies, 3; of the body origin, world), in the order of "
     "body_names, with a leading rows axis for a batch: the body columns of trajectory.csv. qd may be omitted (zero)."},
    {"jacobians", "jacobians", 1, nullptr, false,
     "Body Jacobians in the representation: (bodies, 6, nv) or (rows, bodies, 6, nv), each body's twist "
     "(angular first) = J u in the representation's frame (docs/algorithms.md)."},
    {"energy", "energy", 2, nullptr, false,
     "Energies: dict kinetic_energy, potential_energy (gravity, zero at the world origin), total_energy; floats, or "
     "(rows,) arrays for a batch (trajectory.csv's columns)."},
    {"rnea_geometric_derivatives", "rnea-geometric-derivatives", 3, "qdd", false,
     "Inverse dynamics and its derivatives by the joints' geometry: dict tau, dtau_dB (nv, 6 per moving "
     "joint, see moving_joint_names), dtau_dX (nv, 6 per degree of freedom)."},
};

// The data of a 1-D, C-contiguous, aligned, native float64 array of `length` entries, else
// nullptr.
const double* contiguous_vector(py::handle object, std::size_t length) {
  if (!py::isinstance<py::array>(object)) return nullptr;
  const auto array = py::reinterpret_borrow<py::array>(object);
  constexpr int layout = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
  if (array.ndim() != 1 || static_cast<std::size_t>(array.shape(0)) != length || (array.flags() & layout) != layout)
    return nullptr;
  const py::dtype type = array.dtype();
  if (type.char_() != 'd' || type.byteorder() == '>') return nullptr;
  return static_cast<const double*>(array.data());
}

py::object ModelHandle::call_named(std::size_t index, std::initializer_list<py::handle> arguments,
                                   const std::optional<std::string>& representation, unsigned threads) {
  const NamedAlgorithm& named = named_algorithms[index];
  if (!representation) {
    const double* data[3] = {nullptr, nullptr, nullptr};
    std::size_t a = 0, width = 0;
    for (const py::handle argument : arguments) {
      const std::size_t length = a == 0 ? positions() : velocities();
      if (!(data[a++] = contiguous_vector(argument, length))) break;
      width += length;
    }
    if (data[arguments.size() - 1]) {
      if (bound_.empty()) bound_.resize(std::size(named_algorithms));
      if (!bound_[index]) bound_[index] = evaluator(named.name, std::nullopt, threads);
      Evaluator& bound = *bound_[index];
      bound.request_threads(threads);
      scratch_.resize(width);
      double* row = scratch_.data();
      for (std::size_t k = 0; k < arguments.size(); ++k) {
        const std::size_t length = k == 0 ? positions() : velocities();
        std::copy_n(data[k], length, row);
        row += length;
      }
      py::array_t<double> result(static_cast<py::ssize_t>(bound.output_count()));
      bound.evaluate_one(scratch_.data(), result.mutable_data());
      return named.vector_result ? py::object(std::move(result)) : shape_result(named.name, result, false);
    }
  }
  std::vector<Array> converted;
  std::size_t a = 0;
  for (const py::handle argument : arguments) {
    auto array = Array::ensure(argument);
    ++a;
    if (!array)
      throw py::type_error(std::string(named.method) + "(): argument " + std::to_string(a) + " is a " +
                           std::string(py::str(py::type::handle_of(argument).attr("__name__"))) +
                           ", not an array of numbers (or a sequence convertible to float64)");
    converted.push_back(std::move(array));
  }
  return call(named.name, converted, representation, threads);
}

}  // namespace

PYBIND11_MODULE(liembs, module) {
  module.doc() = "LieMBS: rigid multibody dynamics on screw and Lie group theory (docs/python.md)";
  module.attr("__version__") = LIEMBS_VERSION;

  static py::exception<Error> error(module, "Error", PyExc_RuntimeError);
  static py::exception<ConfigError> config_error(module, "ConfigError", error.ptr());
  static py::exception<PluginError> plugin_error(module, "PluginError", error.ptr());
  static py::exception<ModelError> model_error(module, "ModelError", error.ptr());
  static py::exception<SimulationError> simulation_error(module, "SimulationError", error.ptr());
  // liembs.ShapeError(ConfigError, ValueError): two bases, so made by type() itself.
  static const py::handle shape_error = py::module_::import("builtins").attr("type")(
      "ShapeError", py::make_tuple(config_error, py::handle(PyExc_ValueError)),
      py::dict(py::arg("__module__") = "liembs",
               py::arg("__doc__") = "An array of the wrong shape: a ConfigError and a ValueError."))
                                            .release();  // kept for the interpreter's life, as the others
  module.attr("ShapeError") = shape_error;
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Interrupted&) {  // SIGINT during a long call (SigintCatcher)
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const ShapeError& e) {
      PyErr_SetString(shape_error.ptr(), e.what());
    } catch (const ConfigError& e) {
      config_error(e.what());
    } catch (const PluginError& e) {
      plugin_error(e.what());
    } catch (const ModelError& e) {
      model_error(e.what());
    } catch (const SimulationError& e) {
      simulation_error(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });

  module.def("available_cores", &available_cores, "The number of cores this process may run on.");

  py::class_<Evaluator, std::shared_ptr<Evaluator>>(module, "Evaluator",
                                                   "An algorithm bound to a model and a representation, as `liembs eval` uses it.")
      .def_property_readonly("inputs", &Evaluator::inputs, "Input column names, in order.")
      .def_property_readonly("outputs", &Evaluator::outputs, "Output column names, in order.")
      .def_property_readonly("algorithm", &Evaluator::algorithm)
      .def_property_readonly("representation", &Evaluator::representation)
      .def_property("threads", &Evaluator::threads, &Evaluator::set_threads, "Threads a batch is split over (0: every core).")
      .def("__call__", &Evaluator::evaluate, py::arg("states"),
           "Evaluates one state (1-D, the inputs in order) or rows of states (2-D); returns the outputs, same rank.");

  auto model = py::class_<ModelHandle, std::shared_ptr<ModelHandle>>(module, "Model", "A tree model from a run file or a URDF file.");
  model
      .def(py::init([](const std::string& file, const std::vector<std::string>& set, const std::vector<std::string>& plugin_path) {
             return std::make_shared<ModelHandle>(file_source(file, set, plugin_path));
           }),
           py::arg("file"), py::arg("set") = std::vector<std::string>{}, py::arg("plugin_path") = std::vector<std::string>{},
           "Loads a run file (TOML); `set` overrides values as --set does.")
      .def_static(
          "from_urdf",
          [](const std::string& urdf, bool floating_base, const std::vector<double>& gravity, const std::string& representation,
             const std::vector<std::string>& plugin_path) {
            return std::make_shared<ModelHandle>(urdf_source(urdf, floating_base, gravity, representation, plugin_path));
          },
          py::arg("urdf"), py::arg("floating_base") = false, py::arg("gravity") = std::vector<double>{0.0, 0.0, -9.81},
          py::arg("representation") = "body-fixed", py::arg("plugin_path") = std::vector<std::string>{})
      .def_static(
          "from_mjcf",
          [](const std::string& mjcf, const std::optional<std::vector<double>>& gravity, const std::string& representation,
             const std::vector<std::string>& plugin_path) {
            return std::make_shared<ModelHandle>(model_file_source("mjcf", mjcf, gravity, representation, plugin_path));
          },
          py::arg("mjcf"), py::arg("gravity") = py::none(), py::arg("representation") = "body-fixed",
          py::arg("plugin_path") = std::vector<std::string>{},
          "Loads an MJCF file through MuJoCo's parser (docs/mjcf.md); gravity: the file's unless given.")
      .def_static(
          "from_sdf",
          [](const std::string& sdf, const std::optional<std::vector<double>>& gravity, const std::string& representation,
             const std::vector<std::string>& plugin_path) {
            return std::make_shared<ModelHandle>(model_file_source("sdf", sdf, gravity, representation, plugin_path));
          },
          py::arg("sdf"), py::arg("gravity") = py::none(), py::arg("representation") = "body-fixed",
          py::arg("plugin_path") = std::vector<std::string>{},
          "Loads an SDF file through libsdformat (docs/sdf.md); gravity: the world's, zero for a bare model, unless given.")
      .def_property_readonly("dof", [](const ModelHandle& m) { return m.tree().dof(); })
      .def_property_readonly("nq", &ModelHandle::positions, "Entries of a position argument (7 base pose entries if floating, then q).")
      .def_property_readonly("nv", &ModelHandle::velocities, "Generalized velocities (6 base twist entries if floating, then q').")
      .def_property_readonly("floating_base", [](const ModelHandle& m) { return m.tree().floating_base; })
      .def_property_readonly("coordinate_names", [](const ModelHandle& m) { return m.tree().dof_names; })
      .def_property_readonly("moving_joint_names", &ModelHandle::moving_joint_names,
                             "The moving joints, in the order of rnea_geometric_derivatives' dtau_dB blocks.")
      .def_property_readonly("body_names",
                             [](const ModelHandle& m) {
                               std::vector<std::string> names;
                               for (const auto& body : m.model().bodies) names.push_back(body.name);
                               return names;
                             })
      .def_property_readonly("initial_position", [](const ModelHandle& m) { return Eigen::VectorXd(m.tree().initial_position); })
      .def_property_readonly("initial_velocity", [](const ModelHandle& m) { return Eigen::VectorXd(m.tree().initial_velocity); })
      .def("evaluator", &ModelHandle::evaluator, py::arg("algorithm"), py::arg("representation") = py::none(), py::arg("threads") = 0,
           "The algorithm (any name `liembs plugins` lists that `liembs eval` can evaluate) bound for evaluation.")
      .def(
          "simulate",
          [](const ModelHandle& m, const std::vector<std::string>& set, const std::optional<std::string>& output) {
            return simulate(m.source(), set, output);
          },
          py::arg("set") = std::vector<std::string>{}, py::arg("output") = py::none(),
          "Runs the file's simulation; returns (trajectory: dict of arrays, summary: dict).")
      .def(
          "linearize",
          [](const ModelHandle& m, std::optional<double> at, const std::vector<std::string>& set,
             const std::optional<std::string>& output) { return linearize(m.source(), set, at, output); },
          py::kw_only(), py::arg("at") = py::none(), py::arg("set") = std::vector<std::string>{},
          py::arg("output") = py::none(),
          "A and B of x' = f(x, tau) about the file's initial state (or its state at time `at`), as `liembs linearize`.");
  for (std::size_t index = 0; index < std::size(named_algorithms); ++index) {
    const NamedAlgorithm& named = named_algorithms[index];
    if (named.arguments == 1)
      model.def(
          named.method,
          [index](ModelHandle& m, py::handle q, const std::optional<std::string>& representation, unsigned threads) {
            return m.call_named(index, {q}, representation, threads);
          },
          py::arg("q"), py::kw_only(), py::arg("representation") = py::none(), py::arg("threads") = 0, named.doc);
    else if (named.arguments == 2 && named.name == std::string_view("kinematics"))  // poses alone: qd omitted is zero
      model.def(
          named.method,
          [index](ModelHandle& m, py::handle q, py::handle qd, const std::optional<std::string>& representation, unsigned threads) {
            if (qd.is_none()) {
              const py::array_t<double> zero = m.zero_velocity();
              return m.call_named(index, {q, zero}, representation, threads);
            }
            return m.call_named(index, {q, qd}, representation, threads);
          },
          py::arg("q"), py::arg("qd") = py::none(), py::kw_only(), py::arg("representation") = py::none(),
          py::arg("threads") = 0, named.doc);
    else if (named.arguments == 2)
      model.def(
          named.method,
          [index](ModelHandle& m, py::handle q, py::handle qd, const std::optional<std::string>& representation, unsigned threads) {
            return m.call_named(index, {q, qd}, representation, threads);
          },
          py::arg("q"), py::arg("qd"), py::kw_only(), py::arg("representation") = py::none(), py::arg("threads") = 0, named.doc);
    else
      model.def(
          named.method,
          [index](ModelHandle& m, py::handle q, py::handle qd, py::handle third, const std::optional<std::string>& representation,
                  unsigned threads) { return m.call_named(index, {q, qd, third}, representation, threads); },
          py::arg("q"), py::arg("qd"), py::arg(named.third), py::kw_only(), py::arg("representation") = py::none(),
          py::arg("threads") = 0, named.doc);
  }

  module.def(
      "simulate",
      [](const std::string& file, const std::vector<std::string>& set, const std::optional<std::string>& output,
         const std::vector<std::string>& plugin_path) { return simulate(file_source(file, {}, plugin_path), set, output); },
      py::arg("file"), py::arg("set") = std::vector<std::string>{}, py::arg("output") = py::none(),
      py::arg("plugin_path") = std::vector<std::string>{},
      "Runs a run file as `liembs run` does; returns (trajectory: dict of arrays, summary: dict). With `output`, "
      "trajectory.csv and summary.json are written there too.");
  module.def("study", &run_study_file, py::arg("file"), py::kw_only(), py::arg("set") = std::vector<std::string>{},
             py::arg("output") = py::none(), py::arg("jobs") = py::none(), py::arg("force") = false,
             py::arg("plugin_path") = std::vector<std::string>{},
             "Runs a study file as `liembs study` does (each case in a process of its own; `set` as --set, `jobs` as "
             "--jobs, `force` as --force); returns results.csv as a dict of columns (numbers as float64 arrays, empty "
             "cells NaN; text as str arrays). With `output`, results.csv, series.csv and study.json are written there "
             "and the cases cached in output/cases; without, the cases run in a temporary folder.");
  module.def(
      "plugins",
      [](const std::vector<std::string>& plugin_path) {
        const auto registry = make_registry(plugin_path);
        registry->load();
        py::list components;
        for (const Kind kind : all_kinds())
          for (const ComponentInfo& info : registry->components())
            if (info.kind == kind) {
              py::dict entry;
              entry["kind"] = to_string(info.kind);
              entry["name"] = info.name;
              entry["version"] = info.version;
              entry["summary"] = info.summary;
              entry["file"] = info.library;
              components.append(entry);
            }
        return components;
      },
      py::arg("plugin_path") = std::vector<std::string>{},
      "The plugins found, as `liembs plugins` lists them: dicts of kind, name, version, summary and file, "
      "by kind; a plugin that cannot be loaded raises liembs.PluginError.");
  module.def(
      "linearize",
      [](const std::string& file, std::optional<double> at, const std::vector<std::string>& set,
         const std::optional<std::string>& output, const std::vector<std::string>& plugin_path) {
        return linearize(file_source(file, {}, plugin_path), set, at, output);
      },
      py::arg("file"), py::kw_only(), py::arg("at") = py::none(), py::arg("set") = std::vector<std::string>{},
      py::arg("output") = py::none(), py::arg("plugin_path") = std::vector<std::string>{},
      "Linearizes a run file's tree as `liembs linearize` does: a dict with A (2 nv x 2 nv), B (2 nv x nv), "
      "state_names, input_names, x0, tau0, rates, time, method and the run's choices; with `output`, A.csv, "
      "B.csv and linearization.json are written there too.");
  module.def(
      "validate",
      [](const std::string& file, const std::vector<std::string>& set, const std::vector<std::string>& plugin_path) {
        return validate(file_source(file, {}, plugin_path), set);
      },
      py::arg("file"), py::arg("set") = std::vector<std::string>{}, py::arg("plugin_path") = std::vector<std::string>{},
      "Checks a run file as `liembs validate` does; returns its choices, raises liembs.Error subclasses.");
}
