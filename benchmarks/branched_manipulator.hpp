#pragma once
// The scaling model of paper 003's Table 4 (reference note §7): the aerial manipulator's
// TiltHex base (2.5 kg, J = diag(0.03, 0.03, 0.05)) with N_B = 5 branches of N_BOD links
// each, N = 1 + 5 N_BOD bodies, with Table 3's parameters: the branches hang b = 0.10 m below
// the base on a circle of radius c/2 = 0.09 m (the two arms of Fig. 2 at +-x), joint axes
// cycling y, x, z as in the arms, joints 2d = 0.12 m apart, links of 0.25 kg with
// J = diag(0.002, 0.002, 0.001) and their centres of mass d = 0.06 m below their joints.
#include <cmath>
#include <sstream>
#include <string>

namespace liembs::bench {

inline std::string branched_manipulator_urdf(int bodies_per_branch, int branches = 5) {
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n<robot name=\"branched_manipulator\">\n"
      << "  <link name=\"B1\"><inertial><origin xyz=\"0 0 0\"/><mass value=\"2.5\"/>"
      << "<inertia ixx=\"0.03\" ixy=\"0\" ixz=\"0\" iyy=\"0.03\" iyz=\"0\" izz=\"0.05\"/></inertial></link>\n";
  const char* axes[] = {"0 1 0", "1 0 0", "0 0 1"};
  const double pi = std::acos(-1.0);
  for (int branch = 0; branch < branches; ++branch) {
    const double angle = 2.0 * pi * branch / branches;
    std::string parent = "B1";
    for (int body = 0; body < bodies_per_branch; ++body) {
      std::string name(1, 'b');  // (not "b" + ...: GCC 12's -Wrestrict false positive, bug 105329)
      name += std::to_string(branch) + "_" + std::to_string(body);
      xml << "  <joint name=\"q" << name << "\" type=\"revolute\"><parent link=\"" << parent << "\"/><child link=\""
          << name << "\"/>";
      if (body == 0) xml << "<origin xyz=\"" << 0.09 * std::cos(angle) << " " << 0.09 * std::sin(angle) << " -0.1\"/>";
      else xml << "<origin xyz=\"0 0 -0.12\"/>";
      xml << "<axis xyz=\"" << axes[body % 3] << "\"/>"
          << "<limit lower=\"-3.14\" upper=\"3.14\" effort=\"10\" velocity=\"10\"/></joint>\n"
          << "  <link name=\"" << name << "\"><inertial><origin xyz=\"0 0 -0.06\"/><mass value=\"0.25\"/>"
          << "<inertia ixx=\"0.002\" ixy=\"0\" ixz=\"0\" iyy=\"0.002\" iyz=\"0\" izz=\"0.001\"/></inertial></link>\n";
      parent = name;
    }
  }
  xml << "</robot>\n";
  return xml.str();
}

}  // namespace liembs::bench
