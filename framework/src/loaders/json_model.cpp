// [model] json = "file": the model files of paper 004's authors (reference note section 5):
//   {"name": ..., "bodies": [{"name": "ground", "id": 0},
//                            {"name": ..., "id": 1, "r": [3], "r_dot": [3], "A": [[3] x 3], "omega": [3]}],
//    "constraints": [{"name": ..., "type": "DP1" | "DP2" | "D" | "CD", "body_i": id, "body_j": id,
//                     "a_bar_i", "a_bar_j", "s_bar_p_i", "s_bar_q_j", "c": [3], "f": "expr(t)"}]}
// rp-era files give "p", "p_dot" (Euler parameters) instead of "A", "omega". The ground is
// the body named "ground" (any id). Mass, inertia and gravity come from the TOML file; f_dot
// and f_ddot are accepted and ignored (f' and f'' are derived from f symbolically; one of
// the authors' files has a wrong f_ddot). Keys the authors' files carry that have no meaning
// for a run (ignored_body_keys: initial accelerations, which follow from the dynamics) are
// ignored with a warning naming them (liembs::warn); any other key is an error. Inertias
// may be singular (the authors' four link: rod-like bodies with a zero principal moment,
// violating the triangle inequality): in absolute coordinates the constraints may remove the
// rotation such a body cannot resist, and the run checks that the constrained mass matrix is
// regular at every Newton matrix factorization (NewtonSystem).
#include "model_readers.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/io/file_guard.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/util/nearest_name.hpp>
#include <liembs/util/warning.hpp>

#include <nlohmann/json.hpp>

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace liembs {

namespace {

using json = nlohmann::json;

// Errors name the JSON file, the body or constraint and the problem.
class JsonModelReader {
 public:
  explicit JsonModelReader(std::filesystem::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw ModelError(file_.string() + ": " + where + (where.empty() ? "" : ": ") + message);
  }

  // The authors' body keys that a run does not use, and why (C1's double_pendulum.mdl gives
  // "omega_dot").
  static const std::map<std::string, std::string>& ignored_body_keys() {
    static const std::map<std::string, std::string> keys{
        {"r_ddot", "initial accelerations follow from the dynamics"},
        {"omega_dot", "initial accelerations follow from the dynamics"},
        {"p_ddot", "initial accelerations follow from the dynamics"}};
    return keys;
  }

  void check_keys(const json& object, const std::set<std::string>& allowed, const std::string& where,
                  const std::map<std::string, std::string>& ignored = {}) const {
    for (const auto& [key, value] : object.items()) {
      (void)value;
      if (allowed.count(key)) continue;
      if (const auto it = ignored.find(key); it != ignored.end()) {
        warn(file_.string() + ": " + where + ": key '" + key + "' ignored (" + it->second + ")");
        continue;
      }
      std::string message = "unknown key '" + key + "'";
      const std::string suggestion = nearest_name(key, std::vector<std::string>(allowed.begin(), allowed.end()));
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      fail(where, message);
    }
  }

  Eigen::VectorXd vector(const json& object, const std::string& key, int size, const std::string& where) const {
    const json& value = object.at(key);
    if (!value.is_array() || static_cast<int>(value.size()) != size)
      fail(where, "'" + key + "' must be an array of " + std::to_string(size) + " numbers");
    Eigen::VectorXd v(size);
    for (int k = 0; k < size; ++k) {
      if (!value[static_cast<std::size_t>(k)].is_number())
        fail(where, "'" + key + "' must be an array of " + std::to_string(size) + " numbers");
      v(k) = value[static_cast<std::size_t>(k)].get<double>();
    }
    return v;
  }
  Vec3 vec3(const json& object, const std::string& key, const std::string& where) const {
    return vector(object, key, 3, where);
  }
  Vec3 vec3_or_zero(const json& object, const std::string& key, const std::string& where) const {
    return object.contains(key) ? vec3(object, key, where) : Vec3::Zero();
  }

  Mat3 rotation(const json& object, const std::string& where) const {
    const json& rows = object.at("A");
    if (!rows.is_array() || rows.size() != 3) fail(where, "'A' must be 3 rows of 3 numbers");
    Mat3 A;
    for (int i = 0; i < 3; ++i) {
      const json& row = rows[static_cast<std::size_t>(i)];
      if (!row.is_array() || row.size() != 3) fail(where, "'A' must be 3 rows of 3 numbers");
      for (int j = 0; j < 3; ++j) {
        if (!row[static_cast<std::size_t>(j)].is_number()) fail(where, "'A' must be 3 rows of 3 numbers");
        A(i, j) = row[static_cast<std::size_t>(j)].get<double>();
      }
    }
    const double error = (A.transpose() * A - Mat3::Identity()).norm();
    if (!(error <= 1e-5) || A.determinant() < 0.0)
      fail(where, "'A' is not a rotation matrix (|A^T A - I| = " + std::to_string(error) +
                      ", det A = " + std::to_string(A.determinant()) + "; tolerance 1e-5)");
    // The nearest rotation (the files carry 9 digits, orthonormal to about 2e-6).
    const Eigen::JacobiSVD<Mat3> svd(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
    return svd.matrixU() * svd.matrixV().transpose();
  }

  Model read(const json& root) const {
    if (!root.is_object()) fail("", "expected a JSON object with 'bodies' and 'constraints'");
    check_keys(root, {"name", "bodies", "constraints"}, "");
    if (!root.contains("bodies") || !root.at("bodies").is_array()) fail("", "'bodies' must be an array");
    Model model;
    std::map<long long, std::size_t> index_of;  // JSON id -> body index (Joint::world: ground)
    std::set<std::string> names;
    bool ground = false;
    for (const json& body : root.at("bodies")) {
      if (!body.is_object() || !body.contains("name") || !body.at("name").is_string())
        fail("bodies", "every body needs a string 'name'");
      const std::string name = body.at("name").get<std::string>();
      const std::string where = "body '" + name + "'";
      if (!body.contains("id") || !body.at("id").is_number_integer()) fail(where, "needs an integer 'id'");
      const long long id = body.at("id").get<long long>();
      if (!names.insert(name).second) fail(where, "duplicate body name");
      if (index_of.count(id)) fail(where, "duplicate body id " + std::to_string(id));
      if (name == "ground") {
        check_keys(body, {"name", "id"}, where);
        index_of[id] = Joint::world;
        ground = true;
        continue;
      }
      check_keys(body, {"name", "id", "r", "r_dot", "A", "omega", "p", "p_dot"}, where, ignored_body_keys());
      RigidBody rigid;
      rigid.name = name;
      if (!body.contains("r"))
        fail(where, body.size() <= 2 ? "needs 'r' (only the fixed frame, which must be named 'ground', has no pose)"
                                     : "needs 'r'");
      rigid.reference_pose.r = vec3(body, "r", where);
      rigid.initial_linear_velocity = vec3_or_zero(body, "r_dot", where);
      const bool matrix = body.contains("A"), parameters = body.contains("p");
      if (matrix == parameters) fail(where, "give the orientation as 'A' (with 'omega') or as 'p' (with 'p_dot')");
      if (matrix) {
        if (body.contains("p_dot")) fail(where, "'p_dot' goes with 'p', not with 'A'");
        rigid.reference_pose.R = rotation(body, where);
        rigid.initial_angular_velocity = vec3_or_zero(body, "omega", where);
      } else {
        if (body.contains("omega")) fail(where, "'omega' goes with 'A', not with 'p'");
        const Eigen::Vector4d p = vector(body, "p", 4, where);
        if (!(std::abs(p.norm() - 1.0) <= 1e-5))
          fail(where, "'p' is not a unit vector (|p| = " + std::to_string(p.norm()) + "; tolerance 1e-5)");
        const Eigen::Vector4d unit = p.normalized();
        const Eigen::Vector4d p_dot = body.contains("p_dot") ? Eigen::Vector4d(vector(body, "p_dot", 4, where))
                                                             : Eigen::Vector4d::Zero();
        // A(p) (004 eq. 22) and the body angular velocity omega_bar = 2 G(p) p' (eq. 39c).
        rigid.reference_pose.R = Eigen::Quaterniond(unit(0), unit(1), unit(2), unit(3)).toRotationMatrix();
        const double e0 = unit(0);
        const Vec3 e = unit.tail<3>();
        Eigen::Matrix<double, 3, 4> G;
        G.col(0) = -e;
        G.rightCols<3>() = -so3::hat(e) + e0 * Mat3::Identity();
        rigid.initial_angular_velocity = 2.0 * G * p_dot;
      }
      index_of[id] = model.bodies.size();
      model.bodies.push_back(rigid);
    }
    if (!ground) fail("bodies", "no body named 'ground' (the fixed frame is found by its name)");

    if (root.contains("constraints")) {
      if (!root.at("constraints").is_array()) fail("", "'constraints' must be an array");
      std::set<std::string> constraint_names;
      std::string previous_name;
      for (const json& entry : root.at("constraints"))
        read_constraint(entry, index_of, model, constraint_names, previous_name);
    }
    return model;
  }

 private:
  void read_constraint(const json& entry, const std::map<long long, std::size_t>& index_of, Model& model,
                       std::set<std::string>& names, std::string& previous_name) const {
    if (!entry.is_object() || !entry.contains("name") || !entry.at("name").is_string())
      fail("constraints", "every constraint needs a string 'name'");
    const std::string name = entry.at("name").get<std::string>();
    const std::string where = "constraint '" + name + "'";
    // Consecutive GCONs may share a name (the GCONs of one joint: one block in reports).
    if (!names.insert(name).second && previous_name != name)
      fail(where, "duplicate constraint name (GCONs sharing a name, one joint's, must be consecutive)");
    previous_name = name;
    if (!entry.contains("type") || !entry.at("type").is_string()) fail(where, "needs a string 'type'");
    const std::string type = entry.at("type").get<std::string>();
    static const std::vector<std::string> types{"DP1", "DP2", "D", "CD"};
    const auto found = std::find(types.begin(), types.end(), type);
    if (found == types.end()) {
      std::string message = "unknown type '" + type + "'; expected DP1, DP2, D or CD";
      const std::string suggestion = nearest_name(type, types);
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      fail(where, message);
    }
    GeometricConstraint g;
    g.name = name;
    g.type = static_cast<GeometricConstraint::Type>(found - types.begin());
    std::set<std::string> allowed{"name", "type", "body_i", "body_j", "f", "f_dot", "f_ddot"};
    switch (g.type) {
      case GeometricConstraint::Type::dp1: allowed.insert({"a_bar_i", "a_bar_j"}); break;
      case GeometricConstraint::Type::dp2: allowed.insert({"a_bar_i", "s_bar_p_i", "s_bar_q_j"}); break;
      case GeometricConstraint::Type::distance: allowed.insert({"s_bar_p_i", "s_bar_q_j"}); break;
      case GeometricConstraint::Type::coordinate_difference: allowed.insert({"c", "s_bar_p_i", "s_bar_q_j"}); break;
    }
    check_keys(entry, allowed, where);
    auto body = [&](const char* key) {
      if (!entry.contains(key) || !entry.at(key).is_number_integer()) fail(where, std::string("needs an integer '") + key + "'");
      const long long id = entry.at(key).get<long long>();
      const auto it = index_of.find(id);
      if (it == index_of.end()) fail(where, std::string(key) + ": body id " + std::to_string(id) + " not found");
      return it->second;
    };
    g.body_i = body("body_i");
    g.body_j = body("body_j");
    if (g.body_i == g.body_j) fail(where, "body_i and body_j are the same body");
    auto direction = [&](const char* key) {
      if (!entry.contains(key)) fail(where, std::string("needs '") + key + "'");
      const Vec3 v = vec3(entry, key, where);
      if (!(v.norm() > 1e-12)) fail(where, std::string("'") + key + "' is zero");
      return v;
    };
    if (entry.contains("a_bar_i") || g.type == GeometricConstraint::Type::dp1 || g.type == GeometricConstraint::Type::dp2)
      g.a_bar_i = direction("a_bar_i");
    if (g.type == GeometricConstraint::Type::dp1) g.a_bar_j = direction("a_bar_j");
    if (g.type == GeometricConstraint::Type::coordinate_difference) g.c = direction("c");
    g.s_bar_p_i = vec3_or_zero(entry, "s_bar_p_i", where);
    g.s_bar_q_j = vec3_or_zero(entry, "s_bar_q_j", where);
    if (entry.contains("f")) {
      const json& f = entry.at("f");
      if (f.is_number()) {
        g.f = std::make_shared<const TimeFunction>(f.get<double>());
      } else if (f.is_string()) {
        const std::string text = f.get<std::string>();
        try {
          g.f = std::make_shared<const TimeFunction>(TimeFunction::parse(text));
        } catch (const ExpressionError& error) {
          fail(where, "f: cannot read the expression \"" + TimeFunction::excerpt(text) + "\"" +
                          (error.position() ? " at character " + std::to_string(error.position()) : std::string()) +
                          ": " + error.what());
        }
      } else {
        fail(where, "'f' must be a number or an expression string");
      }
    }
    if (g.type == GeometricConstraint::Type::distance && !g.f)
      fail(where, "a D constraint needs f, the squared distance (f = C^2 > 0)");
    model.constraints.push_back(std::move(g));
  }

  std::filesystem::path file_;
};

// [model.drivers.<constraint>]: f overrides the JSON's f; alternate = {a_bar_i, a_bar_j, f}.
void read_drivers(const ConfigTable& table, Model& model) {
  const auto drivers = table.optional_table("drivers");
  if (!drivers) return;
  std::vector<std::string> names;
  for (const auto& g : model.constraints) names.push_back(g.name);
  for (const std::string& name : drivers->keys()) {
    const auto found = std::find_if(model.constraints.begin(), model.constraints.end(),
                                    [&](const GeometricConstraint& g) { return g.name == name; });
    if (found == model.constraints.end()) {
      std::string message = "unknown constraint '" + name + "'; constraints: " + join_names(names);
      const std::string suggestion = nearest_name(name, names);
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      drivers->fail(name, message);
    }
    const ConfigTable driver = drivers->table(name);
    if (driver.contains("f")) found->f = read_time_function(driver, "f");
    if (const auto alternate = driver.optional_table("alternate")) {
      if (found->type != GeometricConstraint::Type::dp1)
        driver.fail("alternate", "constraint '" + name + "': only a DP1 driver has an alternate");
      GeometricConstraint other = *found;
      other.alternate.reset();
      for (const char* key : {"a_bar_i", "a_bar_j"}) {
        const Vec3 v = alternate->vec3(key);
        if (!(v.norm() > 1e-12)) alternate->fail(key, "constraint '" + name + "': alternate: the vector is zero");
        (key[6] == 'i' ? other.a_bar_i : other.a_bar_j) = v;
      }
      other.f = read_time_function(*alternate, "f");
      found->alternate = std::make_shared<const GeometricConstraint>(std::move(other));
    }
  }
}

}  // namespace

Model read_json_model(const ConfigTable& table) {
  if (table.contains("joints"))
    table.fail("joints", "the constraints come from " + table.path_of("json") + "; add geometric constraints as [[" +
                             table.path_of("constraints") + "]] instead");
  std::filesystem::path file(table.string("json"));
  if (file.empty()) table.fail("json", "the JSON file name is empty");
  if (file.is_relative()) file = (table.file().parent_path() / file).lexically_normal();
  std::ifstream in(file);
  if (!in) table.fail("json", "JSON model file not found: " + file.string());
  note_input(file);
  Model model;
  try {
    json root;
    std::string last_key;  // for a number out of range, which nlohmann reports without a position
    try {
      root = json::parse(in, [&](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::key) last_key = parsed.get<std::string>();
        return true;
      });
    } catch (const json::parse_error& error) {
      throw ModelError(file.string() + ": " + error.what());
    } catch (const json::out_of_range& error) {  // 1e400: beyond the range of a double
      std::string what = error.what();
      if (what.rfind("[json.exception", 0) == 0 && what.find("] ") != std::string::npos) what.erase(0, what.find("] ") + 2);
      table.fail("json", file.string() + ": " + what + (last_key.empty() ? "" : " (the value of key '" + last_key + "')") +
                             ": numbers must be finite doubles");
    }
    model = JsonModelReader(file).read(root);
  } catch (const ModelError& error) {
    throw ModelError(table.location("json") + ": " + table.path_of("json") + ": " + error.what());
  }

  // Mass and inertia by body name, from [[model.bodies]].
  std::vector<bool> given(model.bodies.size(), false);
  std::vector<std::string> names;
  for (const auto& body : model.bodies) names.push_back(body.name);
  for (const auto& body_table : table.table_array("bodies")) {
    const std::string name = body_table.string("name");
    const auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end()) {
      std::string message = "no body '" + name + "' in " + file.filename().string() + "; its bodies: " + join_names(names);
      const std::string suggestion = nearest_name(name, names);
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      body_table.fail("name", message);
    }
    const auto index = static_cast<std::size_t>(found - names.begin());
    if (given[index]) body_table.fail("name", "body '" + name + "' is given twice");
    given[index] = true;
    for (const char* key : {"position", "rotation_vector", "quaternion", "rotation_matrix", "angular_velocity",
                            "linear_velocity"})
      if (body_table.contains(key))
        body_table.fail(key, "body '" + name + "': its pose and velocity come from " + file.filename().string());
    RigidBody& body = model.bodies[index];
    body.mass = body_table.number("mass", Range::positive());
    body.center_of_mass = body_table.vec3_or("center_of_mass", Vec3::Zero());
    if (body_table.contains("inertia") == body_table.contains("inertia_diagonal"))
      body_table.fail({}, "body '" + name + "': give exactly one of 'inertia' (3x3, about the centre of mass) or "
                                            "'inertia_diagonal'");
    body.inertia = body_table.contains("inertia") ? body_table.mat3("inertia")
                                                  : Mat3(body_table.vec3("inertia_diagonal").asDiagonal());
    std::string problem = check_inertia(body.inertia);
    // A singular or rod-like inertia (positive semi-definite) is the constraints' to complete.
    if (!problem.empty() && (body.inertia - body.inertia.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * body.inertia.norm() &&
        Eigen::SelfAdjointEigenSolver<Mat3>(body.inertia).eigenvalues().minCoeff() >= -1e-12 * body.inertia.norm() &&
        body.inertia.norm() > 0.0)
      problem.clear();
    if (!problem.empty())
      body_table.fail(body_table.contains("inertia") ? "inertia" : "inertia_diagonal", "body '" + name + "': " + problem);
  }
  for (std::size_t i = 0; i < given.size(); ++i)
    if (!given[i])
      table.fail("json", "body '" + names[i] + "' of " + file.filename().string() +
                             " has no mass: add [[" + table.path_of("bodies") + "]] name = \"" + names[i] +
                             "\" with mass and inertia_diagonal (or inertia)");
  read_drivers(table, model);
  return model;
}

}  // namespace liembs
