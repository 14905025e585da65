#pragma once
// Test and benchmark models as URDF text: seeded random serial chains and a floating torso
// with four limbs, plus access to the files in models/urdf. The same seed gives the same
// text on every platform (own uniform numbers from std::mt19937, numbers printed with 17
// significant digits so that every URDF reader gets the same doubles).
//
// Naming: links and joints carry zero-padded indices ("link_03", "joint_03",
// "limb2_joint4"), so the file order, the depth-first order and the name order agree.
#include <string>

namespace liembs::test_models {

// Serial chain "base" -> link_1 ... link_n, all joints revolute (odd: "revolute" with wide
// limits, even: "continuous") about random unit axes given in the joint frame. Joint origins:
// random directions, lengths 0.05..0.3 m, random rpy. Links: masses 0.5..3 kg, centres of mass
// within +-0.1 m per axis, principal moments from random second moments (so the triangle
// inequality holds), inertial frames with random rpy. diagonal_inertia = false writes the full
// tensor R diag(a, b, c) R^T in that frame (R random); true writes diag(a, b, c), i.e. the
// inertial frame is the principal frame (still rotated in the link frame).
// The base link has mass too, so the chain can also be imported with a floating base.
std::string random_chain_urdf(int joints, unsigned seed, bool diagonal_inertia);

// A torso (8 kg) with four limbs of six revolute joints each (24 joints), limb k attached at
// (+-0.25, +-0.15, 0) of the torso; limb links as in random_chain_urdf. The root "torso" is
// meant to float: import with floating_base = true (the peers add their free joint).
std::string floating_torso_urdf(unsigned seed, bool diagonal_inertia = false);

// Path of a file in models/urdf of the source tree, e.g. "iiwa-like-arm.urdf".
std::string urdf_model_path(const std::string& file_name);

// Text of a file in models/urdf.
std::string urdf_model(const std::string& file_name);

}  // namespace liembs::test_models
