#include <support/model_generators.hpp>

#include <Eigen/Geometry>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace liembs::test_models {

namespace {

constexpr double pi = 3.14159265358979323846;

// Uniform numbers from the raw 32-bit engine output (std::uniform_real_distribution is
// implementation-defined, this is not).
class Random {
 public:
  explicit Random(unsigned seed) : engine_(seed) {}

  double uniform(double lo, double hi) { return lo + (hi - lo) * (static_cast<double>(engine_()) / 4294967296.0); }

  Eigen::Vector3d unit_vector() {
    for (;;) {
      const Eigen::Vector3d v(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
      const double norm = v.norm();
      if (norm > 0.1 && norm <= 1.0) return v / norm;
    }
  }

  Eigen::Vector3d rpy() { return {uniform(-pi, pi), uniform(-0.5 * pi, 0.5 * pi), uniform(-pi, pi)}; }

 private:
  std::mt19937 engine_;
};

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string triple(const Eigen::Vector3d& v) { return number(v.x()) + " " + number(v.y()) + " " + number(v.z()); }

Eigen::Matrix3d rotation_rpy(const Eigen::Vector3d& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

std::string padded(int index, int width) {
  std::string text = std::to_string(index);
  return std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(text.size()))), '0') + text;
}

// <inertial> with random mass in [mass_lo, mass_hi], centre of mass within +-com_range, and
// principal moments I_x = s_y + s_z, ... from random second moments s (triangle inequality
// holds strictly).
std::string random_inertial(Random& random, double mass_lo, double mass_hi, double com_range, double size,
                            bool diagonal_inertia) {
  const double mass = random.uniform(mass_lo, mass_hi);
  const Eigen::Vector3d com(random.uniform(-com_range, com_range), random.uniform(-com_range, com_range),
                            random.uniform(-com_range, com_range));
  const Eigen::Vector3d second_moment = mass * size * size *
                                        Eigen::Vector3d(random.uniform(0.05, 1), random.uniform(0.05, 1),
                                                        random.uniform(0.05, 1));
  const Eigen::Vector3d principal(second_moment.y() + second_moment.z(), second_moment.x() + second_moment.z(),
                                  second_moment.x() + second_moment.y());
  const Eigen::Vector3d frame_rpy = random.rpy();
  Eigen::Matrix3d tensor = principal.asDiagonal();
  if (!diagonal_inertia) {
    const Eigen::Matrix3d R = rotation_rpy(random.rpy());
    tensor = R * tensor * R.transpose();
  }
  return "    <inertial>\n      <origin xyz=\"" + triple(com) + "\" rpy=\"" + triple(frame_rpy) +
         "\"/>\n      <mass value=\"" + number(mass) + "\"/>\n      <inertia ixx=\"" + number(tensor(0, 0)) +
         "\" ixy=\"" + number(tensor(0, 1)) + "\" ixz=\"" + number(tensor(0, 2)) + "\" iyy=\"" +
         number(tensor(1, 1)) + "\" iyz=\"" + number(tensor(1, 2)) + "\" izz=\"" + number(tensor(2, 2)) +
         "\"/>\n    </inertial>\n";
}

std::string link_xml(const std::string& name, const std::string& inertial) {
  return "  <link name=\"" + name + "\">\n" + inertial + "  </link>\n";
}

std::string joint_xml(const std::string& name, bool continuous, const std::string& parent, const std::string& child,
                      const Eigen::Vector3d& xyz, const Eigen::Vector3d& rpy, const Eigen::Vector3d& axis) {
  std::string xml = "  <joint name=\"" + name + "\" type=\"" + (continuous ? "continuous" : "revolute") + "\">\n" +
                    "    <parent link=\"" + parent + "\"/>\n    <child link=\"" + child + "\"/>\n" +
                    "    <origin xyz=\"" + triple(xyz) + "\" rpy=\"" + triple(rpy) + "\"/>\n" + "    <axis xyz=\"" +
                    triple(axis) + "\"/>\n";
  if (!continuous) xml += "    <limit lower=\"-6.283\" upper=\"6.283\" effort=\"1000\" velocity=\"100\"/>\n";
  return xml + "  </joint>\n";
}

// One random link of a chain: the joint into it and the link itself.
std::string random_segment(Random& random, const std::string& joint_name, bool continuous, const std::string& parent,
                           const std::string& child, bool diagonal_inertia) {
  const Eigen::Vector3d offset = random.uniform(0.05, 0.3) * random.unit_vector();
  const Eigen::Vector3d rpy = random.rpy();
  const Eigen::Vector3d axis = random.unit_vector();
  const std::string joint = joint_xml(joint_name, continuous, parent, child, offset, rpy, axis);
  return joint + link_xml(child, random_inertial(random, 0.5, 3.0, 0.1, 0.15, diagonal_inertia));
}

}  // namespace

std::string random_chain_urdf(int joints, unsigned seed, bool diagonal_inertia) {
  if (joints < 1) throw std::invalid_argument("random_chain_urdf: joints must be >= 1");
  Random random(seed);
  const int width = std::max(2, static_cast<int>(std::to_string(joints).size()));
  std::string xml = "<?xml version=\"1.0\"?>\n<!-- random chain: " + std::to_string(joints) +
                    " revolute joints, seed " + std::to_string(seed) +
                    (diagonal_inertia ? ", principal-axis inertial frames" : ", full inertia tensors") +
                    " -->\n<robot name=\"random_chain_" + std::to_string(joints) + "_" + std::to_string(seed) + "\">\n";
  xml += link_xml("base", random_inertial(random, 0.5, 3.0, 0.1, 0.15, diagonal_inertia));
  std::string parent = "base";
  for (int i = 1; i <= joints; ++i) {
    const std::string child = "link_" + padded(i, width);
    xml += random_segment(random, "joint_" + padded(i, width), i % 2 == 0, parent, child, diagonal_inertia);
    parent = child;
  }
  return xml + "</robot>\n";
}

std::string floating_torso_urdf(unsigned seed, bool diagonal_inertia) {
  Random random(seed);
  std::string xml = "<?xml version=\"1.0\"?>\n<!-- floating torso with four limbs of six revolute joints, seed " +
                    std::to_string(seed) + " -->\n<robot name=\"floating_torso_" + std::to_string(seed) + "\">\n";
  xml += link_xml("torso", random_inertial(random, 8.0, 8.0, 0.02, 0.3, diagonal_inertia));
  const double sx[4] = {0.25, 0.25, -0.25, -0.25};
  const double sy[4] = {0.15, -0.15, 0.15, -0.15};
  for (int limb = 1; limb <= 4; ++limb) {
    const std::string prefix = "limb" + std::to_string(limb) + "_";
    std::string parent = "torso";
    for (int j = 1; j <= 6; ++j) {
      const std::string child = prefix + "link" + std::to_string(j);
      const std::string name = prefix + "joint" + std::to_string(j);
      if (j == 1) {
        // Attach at a hip/shoulder point of the torso, with a random orientation.
        const Eigen::Vector3d offset(sx[limb - 1], sy[limb - 1], 0.0);
        const Eigen::Vector3d rpy = random.rpy();
        const Eigen::Vector3d axis = random.unit_vector();
        xml += joint_xml(name, false, parent, child, offset, rpy, axis);
        xml += link_xml(child, random_inertial(random, 0.5, 3.0, 0.1, 0.15, diagonal_inertia));
      } else {
        xml += random_segment(random, name, j % 2 == 0, parent, child, diagonal_inertia);
      }
      parent = child;
    }
  }
  return xml + "</robot>\n";
}

std::string urdf_model_path(const std::string& file_name) { return std::string(LIEMBS_URDF_MODELS_DIR) + "/" + file_name; }

std::string urdf_model(const std::string& file_name) {
  const std::string path = urdf_model_path(file_name);
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace liembs::test_models
