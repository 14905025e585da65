#pragma once
// Where the package:// (ROS) and model:// (Gazebo) URIs of a model file lead
// (docs/viewer.md, "Meshes"): a file inside the folder of the package or model NAME.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace liembs {

// True for "package://..." and "model://...".
bool is_resource_uri(const std::string& uri);

// Finds package and model folders, each name once per search (a model file names many meshes
// of one package). The search path is the environment's when the search is made:
// - package://NAME: a package is a folder whose package.xml says <name>NAME</name>, or a
//   folder named NAME without a package.xml. Looked for in each folder of ROS_PACKAGE_PATH
//   (the folder itself, then its subfolders breadth first, by name, down to
//   max_package_depth levels, not inside a package or a hidden folder: ROS 1's crawl, bounded),
//   then under each prefix of AMENT_PREFIX_PATH (ROS 2: PREFIX/share/NAME when
//   PREFIX/share/ament_index/resource_index/packages/NAME exists), then among the folders
//   holding the model file, nearest first.
// - model://NAME: the folder NAME in each folder of GZ_SIM_RESOURCE_PATH,
//   IGN_GAZEBO_RESOURCE_PATH, SDF_PATH and GAZEBO_MODEL_PATH (in that order), then the nearest
//   folder holding the model file that is named NAME.
// The first folder found is the package (or model), as ROS and Gazebo take it: another one
// of the same name further on is not looked at, even when the file is missing in the first.
class ResourceSearch {
 public:
  static constexpr int max_package_depth = 4;

  ResourceSearch();

  // The file `uri` (scheme://NAME/path) names, the model file `model_file` naming it, and
  // `note`: which folder the package or model is and how it was found. Or no file and why
  // (`note`): the package or model is not found (the note says where it looked), or the path
  // is empty, absolute or leaves the package's folder by "..". The file itself is not checked.
  struct Found {
    std::optional<std::filesystem::path> file;
    std::string note;
  };
  Found resolve(const std::string& uri, const std::filesystem::path& model_file);

 private:
  struct Place {
    std::string variable;                            // "ROS_PACKAGE_PATH"
    std::vector<std::filesystem::path> folders;      // its folders; none when it is not set
    bool set = false;
  };
  // The package or model folder and how it was found ("from ROS_PACKAGE_PATH"), or nothing.
  using Lookup = std::optional<std::pair<std::filesystem::path, std::string>>;

  Lookup find_package(const std::string& name, const std::filesystem::path& model_folder);
  Lookup find_model(const std::string& name, const std::filesystem::path& model_folder);
  std::string where_looked(bool package, const std::filesystem::path& model_folder) const;

  std::vector<Place> package_places_, model_places_;
  std::map<std::string, Lookup> found_;  // by scheme, name and model folder
};

}  // namespace liembs
