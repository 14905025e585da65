#include "resource_uri.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <sstream>

#include <tinyxml2.h>

namespace liembs {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view package_scheme = "package://", model_scheme = "model://";

bool starts_with(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

bool is_folder(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// The folders of a search-path variable ("a:b:c"), in order; nothing when it is not set.
std::vector<fs::path> path_list(const char* value) {
  std::vector<fs::path> folders;
  if (value == nullptr) return folders;
  std::istringstream stream(value);
  for (std::string folder; std::getline(stream, folder, ':');)
    if (!folder.empty()) folders.emplace_back(folder);
  return folders;
}

// The <name> a package.xml declares (ROS REP 149: <package><name>...</name>); "" when the file
// is not XML or has none.
std::string package_xml_name(const fs::path& file) {
  tinyxml2::XMLDocument document;
  if (document.LoadFile(file.c_str()) != tinyxml2::XML_SUCCESS) return "";
  const tinyxml2::XMLElement* package = document.FirstChildElement("package");
  const tinyxml2::XMLElement* name = package ? package->FirstChildElement("name") : nullptr;
  const char* text = name ? name->GetText() : nullptr;
  if (text == nullptr) return "";
  std::string value = text;
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  value.erase(value.begin(), std::find_if_not(value.begin(), value.end(), space));
  value.erase(std::find_if_not(value.rbegin(), value.rend(), space).base(), value.end());
  return value;
}

enum class PackageMatch { no, yes, other_package };

// Whether `folder` is ROS package `name`: its package.xml declares it, or it has no
// package.xml and is named `name`. other_package: a package of another name.
PackageMatch package_match(const fs::path& folder, const std::string& name) {
  const fs::path manifest = folder / "package.xml";
  if (is_file(manifest)) return package_xml_name(manifest) == name ? PackageMatch::yes : PackageMatch::other_package;
  return folder.filename() == name ? PackageMatch::yes : PackageMatch::no;
}

// Package `name` in `root` or below it, breadth first, subfolders by name (ROS 1's crawl,
// bounded): not inside another package or a hidden folder.
std::optional<fs::path> crawl_for_package(const fs::path& root, const std::string& name, int max_depth) {
  std::deque<std::pair<fs::path, int>> queue{{root, 0}};
  while (!queue.empty()) {
    const auto [folder, depth] = queue.front();
    queue.pop_front();
    const PackageMatch match = package_match(folder, name);
    if (match == PackageMatch::yes) return folder;
    if (match == PackageMatch::other_package || depth == max_depth) continue;
    std::vector<fs::path> subfolders;
    std::error_code error;
    for (fs::directory_iterator entry(folder, error), end; !error && entry != end; entry.increment(error)) {
      const fs::path& path = entry->path();
      if (path.filename().string().front() != '.' && is_folder(path)) subfolders.push_back(path);
    }
    std::sort(subfolders.begin(), subfolders.end());
    for (auto& subfolder : subfolders) queue.emplace_back(std::move(subfolder), depth + 1);
  }
  return std::nullopt;
}

std::string joined(const std::vector<fs::path>& folders) {
  std::string text;
  for (std::size_t i = 0; i < folders.size(); ++i) text += (i ? ", " : "") + folders[i].string();
  return text;
}

}  // namespace

bool is_resource_uri(const std::string& uri) { return starts_with(uri, package_scheme) || starts_with(uri, model_scheme); }

ResourceSearch::ResourceSearch() {
  for (const char* variable : {"ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH"}) {
    const char* value = std::getenv(variable);
    package_places_.push_back({variable, path_list(value), value != nullptr});
  }
  for (const char* variable : {"GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH", "GAZEBO_MODEL_PATH"}) {
    const char* value = std::getenv(variable);
    model_places_.push_back({variable, path_list(value), value != nullptr});
  }
}

ResourceSearch::Lookup ResourceSearch::find_package(const std::string& name, const fs::path& model_folder) {
  for (const fs::path& folder : package_places_[0].folders)
    if (const auto found = crawl_for_package(folder, name, max_package_depth))
      return std::make_pair(*found, "found in ROS_PACKAGE_PATH");
  for (const fs::path& prefix : package_places_[1].folders)
    if (is_file(prefix / "share/ament_index/resource_index/packages" / name) && is_folder(prefix / "share" / name))
      return std::make_pair(prefix / "share" / name, "found in AMENT_PREFIX_PATH");
  for (fs::path folder = model_folder;; folder = folder.parent_path()) {
    if (package_match(folder, name) == PackageMatch::yes)
      return std::make_pair(folder, "a folder holding the model file");
    if (folder == folder.parent_path()) return std::nullopt;
  }
}

ResourceSearch::Lookup ResourceSearch::find_model(const std::string& name, const fs::path& model_folder) {
  for (const Place& place : model_places_)
    for (const fs::path& folder : place.folders)
      if (is_folder(folder / name)) return std::make_pair(folder / name, "found in " + place.variable);
  for (fs::path folder = model_folder;; folder = folder.parent_path()) {
    if (folder.filename() == name) return std::make_pair(folder, "a folder holding the model file");
    if (folder == folder.parent_path()) return std::nullopt;
  }
}

std::string ResourceSearch::where_looked(bool package, const fs::path& model_folder) const {
  std::string text;
  for (const Place& place : package ? package_places_ : model_places_) {
    text += place.variable + " (";
    if (!place.set) text += "not set";
    else if (place.folders.empty()) text += "empty";
    else text += joined(place.folders);
    if (place.variable == "ROS_PACKAGE_PATH" && !place.folders.empty())
      text += "; each with its subfolders " + std::to_string(max_package_depth) + " levels down";
    text += "), ";
  }
  return text + "then " + model_folder.string() + " and the folders above it";
}

ResourceSearch::Found ResourceSearch::resolve(const std::string& uri, const fs::path& model_file) {
  const bool package = starts_with(uri, package_scheme);
  const std::string rest = uri.substr((package ? package_scheme : model_scheme).size());
  const std::string kind = package ? "package" : "model";
  const std::size_t slash = rest.find('/');
  const std::string name = rest.substr(0, slash);
  if (name.empty() || name == "." || name == "..") return {std::nullopt, "no " + kind + " name after " + uri.substr(0, uri.size() - rest.size())};
  const fs::path relative = fs::path(slash == std::string::npos ? "" : rest.substr(slash + 1)).lexically_normal();
  if (relative.empty() || relative == ".")
    return {std::nullopt, "no file after the " + kind + " name '" + name + "'"};
  if (relative.is_absolute() || *relative.begin() == "..")
    return {std::nullopt, "the path leaves the folder of " + kind + " '" + name + "' (only files inside it are read)"};
  const fs::path model_folder = fs::absolute(model_file).lexically_normal().parent_path();
  const std::string key = kind + "://" + name + "\n" + model_folder.string();
  auto cached = found_.find(key);
  if (cached == found_.end())
    cached = found_.emplace(key, package ? find_package(name, model_folder) : find_model(name, model_folder)).first;
  const Lookup& lookup = cached->second;
  if (!lookup) return {std::nullopt, "no " + kind + " '" + name + "': looked in " + where_looked(package, model_folder)};
  return {lookup->first / relative, kind + " '" + name + "' is " + lookup->first.string() + ", " + lookup->second};
}

}  // namespace liembs
