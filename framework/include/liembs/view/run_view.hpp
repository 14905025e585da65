#pragma once
// The page of `liembs view` (docs/viewer.md): one self-contained HTML file that animates a
// run's trajectory in 3-D with three.js (Debian's libjs-three, inlined at build time) and
// plots any column of the trajectory against time, synchronized with the animation.
//
// The bodies move by the pose columns of trajectory.csv (<body>.x, .y, .z, .qw, .qx, .qy,
// .qz). Their shapes come from the run's model (summary.json "config", the TOML file the run
// was made from): a body's visual shapes where the model file has them (URDF <visual>,
// liembs/model/visual_shapes.hpp), else the box of its mass and inertia; massless bodies
// without shapes are small spheres. Each body shows its frame, each joint of a tree its
// axes, each geometric constraint of an absolute-coordinate model its points and directions.
#include <liembs/model/model.hpp>
#include <liembs/model/visual_shapes.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace liembs {

struct ViewOptions {
  // The run's TOML file; when empty, summary.json's "config".
  std::optional<std::filesystem::path> config;
  // At most this many trajectory rows go into the page (every k-th row, and the last).
  std::size_t max_frames = 2000;
  // The column plotted when the page opens; when empty, total_energy.
  std::string column;
};

// What a page animates and plots: named columns of numbers, "time" first, among them the
// seven pose columns of every body of the model (trajectory.csv's layout). NaN: no value.
struct ViewTable {
  std::string title;
  std::vector<std::pair<std::string, std::string>> notes;  // shown after the title: ("group", "SE3"), ...
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;  // columns[c][row]
  std::string source;                        // where the table came from, for messages
};

// The page for `model`, drawn with `visuals`, moving as `table` says. Throws ConfigError
// (naming table.source) when a body's pose columns are missing or options.column is not a column.
std::string view_page(const Model& model, const ModelVisuals& visuals, const ViewTable& table,
                      const ViewOptions& options = {});

// The page for the run written into `run_directory` (by `liembs run --output`). Throws
// ConfigError naming the folder or file when the folder is not a run (no summary.json), has
// no trajectory.csv, or its model cannot be loaded or does not match the trajectory.
std::string view_page(const std::filesystem::path& run_directory, const ViewOptions& options = {});

// Writes view_page(run_directory, options) to `output` (an AtomicFile: nothing is left
// behind when it fails).
void write_view(const std::filesystem::path& run_directory, const std::filesystem::path& output,
                const ViewOptions& options = {});

// base64 (RFC 4648, with '=' padding) of `bytes`: how a page embeds a mesh file.
std::string base64(std::string_view bytes);

}  // namespace liembs
