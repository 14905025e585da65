#pragma once
// Fixed-size Eigen types and the rigid-body configuration C = (R, r) shared by the Lie
// group modules (so3.hpp, se3.hpp, so3xr3.hpp) and the rest of the framework.
//
// Conventions (paper 001 section 2.2-2.3, paper 002 section 2):
//   - screw coordinates are ordered angular first: twist X = (omega, v), wrench (moment, force);
//   - C = (R, r) is the body frame in the reference frame, as a 4x4 matrix [[R, r], [0, 1]];
//     it maps body point coordinates p to R p + r.
#include <Eigen/Dense>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// Pairs. The recursive kernels keep per-node 6-vectors in arrays and read them back soon
// after they were written; a load that spans two stores cannot be forwarded from the store
// buffer and waits for both (a store-forwarding stall, 10 to 20 cycles). Eigen reads and
// writes a whole Vec6 as the 16-byte pairs (0, 1), (2, 3), (4, 5), so the small products
// of the kernels compute in scalars and write their 6-vectors in those pairs:
// V.segment<2>(i) = (lo, hi) and V.segment<2>(i) += (lo, hi) for even i, as one 16-byte
// store. The pair is built in a register: GCC builds an Eigen::Vector2d(lo, hi) with two
// scalar stores to the stack and reads it back as a pair, the very stall avoided here.
LIEMBS_STRONG_INLINE void set_pair(Vec6& V, int i, double lo, double hi) {
#if defined(__SSE2__)
  _mm_store_pd(V.data() + i, _mm_set_pd(hi, lo));
#else
  V(i) = lo;
  V(i + 1) = hi;
#endif
}
LIEMBS_STRONG_INLINE void add_to_pair(Vec6& V, int i, double lo, double hi) {
#if defined(__SSE2__)
  double* pair = V.data() + i;
  _mm_store_pd(pair, _mm_add_pd(_mm_load_pd(pair), _mm_set_pd(hi, lo)));
#else
  V(i) += lo;
  V(i + 1) += hi;
#endif
}
// (p[0], p[1]) = (lo, hi), one 16-byte store to any address.
LIEMBS_STRONG_INLINE void store_pair(double* p, double lo, double hi) {
#if defined(__SSE2__)
  _mm_storeu_pd(p, _mm_set_pd(hi, lo));
#else
  p[0] = lo;
  p[1] = hi;
#endif
}
// (lo, hi) = (p[0], p[1]) as one 16-byte load: for reading back numbers written as one pair
// where the compiler would otherwise merge the reads of neighbouring scalars into a load that
// spans two pairs (e.g. a pose's R(1, 2), R(2, 2), which compose_into writes in two pairs).
LIEMBS_STRONG_INLINE void load_pair(const double* p, double& lo, double& hi) {
#if defined(__SSE2__)
  const __m128d v = _mm_loadu_pd(p);
  lo = _mm_cvtsd_f64(v);
  hi = _mm_cvtsd_f64(_mm_unpackhi_pd(v, v));
#else
  lo = p[0];
  hi = p[1];
#endif
}
// The 6-vector (x0, ..., x5), written as pairs.
LIEMBS_STRONG_INLINE Vec6 pairs(double x0, double x1, double x2, double x3, double x4, double x5) {
  Vec6 V;
  set_pair(V, 0, x0, x1);
  set_pair(V, 2, x2, x3);
  set_pair(V, 4, x4, x5);
  return V;
}

// Two doubles in the two lanes of a vector register (GCC's vector extension: arithmetic
// applies lane by lane, a scalar operand to both lanes; SSE2 on baseline x86-64), for
// kernels that carry two independent quantities through the same steps.
using Lanes = double __attribute__((vector_size(16)));

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
