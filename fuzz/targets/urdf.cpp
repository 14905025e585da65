// Fuzz target 'urdf': a URDF file through the importer (urdfdom's XML reading, then LieMBS's
// links, joints, origins, axes, inertias and the tree checks) with a fixed and a floating
// base, and the imported tree bound to the articulated-body algorithm as a run would.
#include "../fuzz_support.hpp"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto urdf = liembs::fuzz::write_scratch_file("model.urdf", liembs::fuzz::as_text(data, size));
  for (const char* floating_base : {"false", "true"}) {
    const std::string run = "[model]\nurdf = \"" + urdf.string() + "\"\nfloating_base = " + floating_base +
                            "\ngravity = [0.0, 0.0, -9.81]\n"
                            "[representation]\nname = \"spatial\"\n[algorithm]\nname = \"aba\"\n"
                            "[group]\nname = \"SE3\"\n[integrator]\nname = \"rkmk\"\n"
                            "[simulation]\nend_time = 0.01\nstep_size = 0.001\n";
    liembs::fuzz::validate_toml(run, liembs::fuzz::scratch_folder() / "run.toml");
  }
  return 0;
}
