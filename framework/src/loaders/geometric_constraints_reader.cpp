// [[model.constraints]]: the basic geometric constraints of paper 004 (eqs. 1-4) and the
// lower pairs of its Table 1 composed from them.
#include "model_readers.hpp"

#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/util/nearest_name.hpp>

#include <algorithm>
#include <set>

namespace liembs {

namespace {

using Type = GeometricConstraint::Type;

const std::vector<std::string>& primitive_types() {
  static const std::vector<std::string> names{"DP1", "DP2", "D", "CD"};
  return names;
}

// Two unit vectors completing the unit vector e to an orthonormal frame (e, u1, u2).
std::pair<Vec3, Vec3> perpendiculars(const Vec3& e) {
  Eigen::Index smallest;
  e.cwiseAbs().minCoeff(&smallest);
  const Vec3 first = e.cross(Vec3::Unit(smallest)).normalized();
  return {first, e.cross(first)};
}

std::size_t read_body(const ConfigTable& table, std::string_view key, const Model& model, const std::string& who) {
  const std::string name = table.string(key);
  if (name == "ground" || name == "world") return Joint::world;
  std::vector<std::string> candidates{"ground"};
  for (const auto& body : model.bodies) {
    if (body.name == name) return static_cast<std::size_t>(&body - model.bodies.data());
    candidates.push_back(body.name);
  }
  std::string message = who + "unknown body '" + name + "'; expected 'ground' or a body: " + join_names(candidates);
  const std::string suggestion = nearest_name(name, candidates);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  table.fail(key, message);
}

Vec3 read_direction(const ConfigTable& table, std::string_view key, const std::string& who) {
  const Vec3 v = table.vec3(key);
  if (!(v.norm() > 1e-12)) table.fail(key, who + "the vector is zero");
  return v;
}

GeometricConstraint read_primitive(const ConfigTable& table, Type type, const GeometricConstraint& base,
                                   const std::string& who) {
  GeometricConstraint g = base;
  g.type = type;
  switch (type) {
    case Type::dp1:
      g.a_bar_i = read_direction(table, "a_bar_i", who);
      g.a_bar_j = read_direction(table, "a_bar_j", who);
      break;
    case Type::dp2:
      g.a_bar_i = read_direction(table, "a_bar_i", who);
      [[fallthrough]];
    case Type::distance:
    case Type::coordinate_difference:
      g.s_bar_p_i = table.vec3_or("s_bar_p_i", Vec3::Zero());
      g.s_bar_q_j = table.vec3_or("s_bar_q_j", Vec3::Zero());
      if (type == Type::coordinate_difference) g.c = read_direction(table, "c", who);
      break;
  }
  if (type == Type::distance && !table.contains("f"))
    table.fail({}, who + "a D constraint needs f, the squared distance (f = C^2 > 0)");
  if (table.contains("f")) g.f = read_time_function(table, "f");
  return g;
}

}  // namespace

std::shared_ptr<const TimeFunction> read_time_function(const ConfigTable& table, std::string_view key) {
  try {
    return std::make_shared<const TimeFunction>(table.number(key));
  } catch (const ConfigError&) {
  }
  const std::string text = table.string(key);
  try {
    return std::make_shared<const TimeFunction>(TimeFunction::parse(text));
  } catch (const ExpressionError& error) {
    table.fail(key, "cannot read the expression \"" + TimeFunction::excerpt(text) + "\"" +
                        (error.position() ? " at character " + std::to_string(error.position()) : std::string()) +
                        ": " + error.what());
  }
}

const std::vector<std::string>& composite_joint_types() {
  static const std::vector<std::string> names{"spherical",   "universal",     "revolute",
                                              "cylindrical", "translational", "revolute-cylindrical"};
  return names;
}

// Table 1 of paper 004: SJ = 3 CD; UJ = SJ + DP1; RJ = perp1 + SJ; CJ = perp1 + perp2;
// TJ = DP1 + perp1 + perp2; revolute-cylindrical (the slider crank's) = DP1 + perp2. perp1
// keeps a_j perpendicular to the two perpendiculars u1, u2 of a_i (2 DP1: a_j parallel to
// a_i); perp2 keeps d_ij perpendicular to them (2 DP2: Q on the line through P along a_i).
void add_composite_joint(const std::string& name, const std::string& type, const CompositeJointData& data,
                         std::vector<GeometricConstraint>& out) {
  GeometricConstraint base;
  base.name = name;
  base.body_i = data.body_i;
  base.body_j = data.body_j;
  base.s_bar_p_i = data.s_bar_p_i;
  base.s_bar_q_j = data.s_bar_q_j;
  auto dp1 = [&](const Vec3& a_i, const Vec3& a_j) {
    GeometricConstraint g = base;
    g.type = Type::dp1;
    g.a_bar_i = a_i;
    g.a_bar_j = a_j;
    out.push_back(g);
  };
  auto dp2 = [&](const Vec3& a_i) {
    GeometricConstraint g = base;
    g.type = Type::dp2;
    g.a_bar_i = a_i;
    out.push_back(g);
  };
  auto spherical = [&] {
    for (int k = 0; k < 3; ++k) {
      GeometricConstraint g = base;
      g.type = Type::coordinate_difference;
      g.c = Vec3::Unit(k);
      out.push_back(g);
    }
  };
  const Vec3 axis_i = data.a_bar_i.normalized(), axis_j = data.a_bar_j.normalized();
  const std::pair<Vec3, Vec3> perpendicular = perpendiculars(axis_i);
  const Vec3 &u1 = perpendicular.first, &u2 = perpendicular.second;  // clang 14 cannot capture bindings
  auto perpendicular1 = [&] {
    dp1(u1, axis_j);
    dp1(u2, axis_j);
  };
  auto perpendicular2 = [&] {
    dp2(u1);
    dp2(u2);
  };
  if (type == "spherical") {
    spherical();
  } else if (type == "universal") {
    spherical();
    dp1(axis_i, axis_j);
  } else if (type == "revolute") {
    perpendicular1();
    spherical();
  } else if (type == "cylindrical") {
    perpendicular1();
    perpendicular2();
  } else if (type == "translational") {
    dp1(data.b_bar_i.normalized(), data.b_bar_j.normalized());
    perpendicular1();
    perpendicular2();
  } else if (type == "revolute-cylindrical") {
    dp1(data.b_bar_i.normalized(), axis_j);
    perpendicular2();
  }
}

void read_geometric_constraints(const ConfigTable& table, Model& model) {
  std::set<std::string> names;
  std::vector<std::string> types = primitive_types();
  types.insert(types.end(), composite_joint_types().begin(), composite_joint_types().end());
  for (const auto& entry : table.table_array("constraints")) {
    const std::string name = entry.string("name");
    if (name.empty()) entry.fail("name", "constraint name is empty");
    if (!names.insert(name).second) entry.fail("name", "duplicate constraint name '" + name + "'");
    const std::string who = "constraint '" + name + "': ";
    const std::string type = entry.string("type");
    if (std::find(types.begin(), types.end(), type) == types.end()) {
      std::string message = who + "'" + type + "' is not one of: " + join_names(types);
      const std::string suggestion = nearest_name(type, types);
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      entry.fail("type", message);
    }
    GeometricConstraint base;
    base.name = name;
    base.body_i = read_body(entry, "body_i", model, who);
    base.body_j = read_body(entry, "body_j", model, who);
    if (base.body_i == base.body_j)
      entry.fail("body_j", who + "body_i and body_j are the same" +
                               std::string(base.body_i == Joint::world ? " (the ground)" : ""));

    const auto primitive = std::find(primitive_types().begin(), primitive_types().end(), type);
    if (primitive != primitive_types().end()) {
      const auto kind = static_cast<Type>(primitive - primitive_types().begin());
      GeometricConstraint g = read_primitive(entry, kind, base, who);
      if (const auto alternate = entry.optional_table("alternate")) {
        if (kind != Type::dp1) entry.fail("alternate", who + "only a DP1 driver has an alternate");
        GeometricConstraint other = read_primitive(*alternate, Type::dp1, base, who + "alternate: ");
        g.alternate = std::make_shared<const GeometricConstraint>(std::move(other));
      }
      model.constraints.push_back(std::move(g));
      continue;
    }
    CompositeJointData data{base.body_i, base.body_j};
    data.s_bar_p_i = entry.vec3_or("s_bar_p_i", Vec3::Zero());
    data.s_bar_q_j = entry.vec3_or("s_bar_q_j", Vec3::Zero());
    if (type != "spherical") {
      data.a_bar_i = read_direction(entry, "a_bar_i", who);
      data.a_bar_j = read_direction(entry, "a_bar_j", who);
    }
    if (type == "translational" || type == "revolute-cylindrical") {
      data.b_bar_i = read_direction(entry, "b_bar_i", who);
      if (type == "translational") data.b_bar_j = read_direction(entry, "b_bar_j", who);
    }
    add_composite_joint(name, type, data, model.constraints);
  }
}

}  // namespace liembs
