#pragma once
// Fixed-size Eigen types and the rigid-body configuration C = (R, r) shared by the Lie
// group modules (so3.hpp, se3.hpp, so3xr3.hpp) and the rest of the framework.
//
// Conventions (paper 001 section 2.2-2.3, paper 002 section 2):
//   - screw coordinates are ordered angular first: twist X = (omega, v), wrench (moment, force);
//   - C = (R, r) is the body frame in the reference frame, as a 4x4 matrix [[R, r], [0, 1]];
//     it maps body point coordinates p to R p + r.
#include <Eigen/Dense>

// Forces inlining of the small fixed-size kernels the recursive algorithms are built from:
// GCC otherwise leaves some of them as calls inside the per-body loops.
#if defined(__GNUC__)
#define LIEMBS_STRONG_INLINE __attribute__((always_inline)) inline
#else
#define LIEMBS_STRONG_INLINE inline
#endif

namespace liembs {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Mat4 = Eigen::Matrix4d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;

// Element of SE(3) or SO(3) x R^3 (same data, different group law: see se3.hpp, so3xr3.hpp).
struct Pose {
  Mat3 R = Mat3::Identity();  // orientation of the body frame
  Vec3 r = Vec3::Zero();      // position of the body-frame origin

  // The homogeneous 4x4 matrix [[R, r], [0, 1]].
  Mat4 matrix() const {
    Mat4 C = Mat4::Identity();
    C.topLeftCorner<3, 3>() = R;
    C.topRightCorner<3, 1>() = r;
    return C;
  }

  // Reads R and r from the top rows of a homogeneous matrix; the bottom row is ignored.
  static Pose from_matrix(const Mat4& C) {
    Pose pose;
    pose.R = C.topLeftCorner<3, 3>();
    pose.r = C.topRightCorner<3, 1>();
    return pose;
  }
};

}  // namespace liembs
