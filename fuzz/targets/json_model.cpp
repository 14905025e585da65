// Fuzz target 'json-model': a model file in the JSON schema of paper 004's authors (bodies
// with r, A or p, velocities; DP1/DP2/D/CD constraints with driving functions f(t) read
// by TimeFunction) through `[model] json = ...`, every body given a mass, on SO3xR3, SE3 or
// euler-parameters with newton-euler and ida (a consistent initial state is computed at load).
#include "../fuzz_support.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace {

// A TOML basic string holding `text` exactly.
std::string toml_string(const std::string& text) {
  std::string quoted = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      quoted += escape;
    } else {
      quoted += static_cast<char>(c);
    }
  }
  return quoted + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = liembs::fuzz::as_text(data, size);
  liembs::fuzz::write_scratch_file("model.json", text);

  // Every named body of the file gets a mass, so that the loader goes past the masses.
  std::string bodies;
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_object() && root.contains("bodies") && root["bodies"].is_array())
    for (const auto& body : root["bodies"])
      if (body.is_object() && body.contains("name") && body["name"].is_string() && body["name"] != "ground")
        bodies += "[[model.bodies]]\nname = " + toml_string(body["name"].get<std::string>()) +
                  "\nmass = 2.0\ninertia_diagonal = [0.1, 0.2, 0.3]\n";

  static constexpr const char* groups[] = {"SO3xR3", "SE3", "euler-parameters"};
  const std::string run = std::string("[model]\njson = \"model.json\"\ngravity = [0.0, 0.0, -9.81]\n") + bodies +
                          "[group]\nname = \"" + groups[size % 3] +
                          "\"\n[algorithm]\nname = \"newton-euler\"\n[integrator]\nname = \"ida\"\n"
                          "[simulation]\nend_time = 0.01\nstep_size = 0.001\n";
  liembs::fuzz::validate_toml(run, liembs::fuzz::scratch_folder() / "run.toml");
  return 0;
}
