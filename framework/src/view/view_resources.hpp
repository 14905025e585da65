#pragma once
// The files the viewer's page is made of, embedded at build time by cmake/EmbedFiles.cmake
// (framework/CMakeLists.txt): three.js, its OrbitControls and its STL and OBJ loaders from Debian's libjs-three, and
// the page's template and script from this folder.
#include <string_view>

namespace liembs::view_resources {

extern const std::string_view three_js;           // build/three.min.js (global THREE)
extern const std::string_view orbit_controls_js;  // examples/js/controls/OrbitControls.js
extern const std::string_view stl_loader_js;      // examples/js/loaders/STLLoader.js
extern const std::string_view obj_loader_js;      // examples/js/loaders/OBJLoader.js
extern const std::string_view viewer_html;        // viewer.html: {{THREE_JS}}, {{ORBIT_CONTROLS_JS}}, {{STL_LOADER_JS}},
                                                  // {{OBJ_LOADER_JS}}, {{VIEWER_JS}}, {{RUN_DATA}}
extern const std::string_view viewer_js;          // viewer.js

}  // namespace liembs::view_resources
