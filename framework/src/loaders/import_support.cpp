#include "import_support.hpp"

#include <liembs/error.hpp>
#include <liembs/util/warning.hpp>

#include <numeric>

namespace liembs {

void require_model_file(const std::filesystem::path& file, const std::string& format) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) throw ModelError(file.string() + ": cannot open the " + format + " file");
}

std::optional<std::size_t> massless_moving_body(const Model& model) {
  const std::size_t n = model.bodies.size();
  std::vector<std::size_t> group(n);
  std::iota(group.begin(), group.end(), std::size_t{0});
  const auto find = [&](std::size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  std::vector<bool> welded_to_world(n, false);
  for (const auto& joint : model.joints) {
    if (joint.type != JointType::fixed) continue;
    if (joint.parent == Joint::world)
      welded_to_world[joint.child] = true;
    else
      group[find(joint.child)] = find(joint.parent);
  }
  std::vector<double> group_mass(n, 0.0);
  std::vector<bool> group_welded(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    group_mass[find(i)] += model.bodies[i].mass;
    if (welded_to_world[i]) group_welded[find(i)] = true;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!(model.bodies[i].mass > 0.0) && !group_welded[find(i)] && !(group_mass[find(i)] > 0.0)) return i;
  return std::nullopt;
}

std::string quoted_names(const std::vector<std::string>& names, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) text += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

void warn_not_modelled(const std::string& file, const std::vector<std::string>& items) {
  if (items.empty()) return;
  std::string message = file + ": not modelled by LieMBS, left out of the dynamics: ";
  for (std::size_t i = 0; i < items.size(); ++i) message += (i ? "; " : "") + items[i];
  warn(message);
}

}  // namespace liembs
