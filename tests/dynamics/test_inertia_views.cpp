// The node inertias that the kernels apply in factors instead of forming them
// (representations.hpp): the spatial one about the centre of mass (SpatialInertia) and the
// mixed one (MixedInertia), held to the 6x6 congruences they stand for, on random poses,
// rotated inertias and offset centres of mass, and on a massless node.
#include <liembs/dynamics/representations.hpp>
#include <liembs/lie/se3.hpp>

#include <catch2/catch.hpp>

#include "../lie/test_helpers.hpp"

#include <random>

using namespace liembs;
using namespace liembs::lie_test;

namespace {

// A body inertia about its frame origin: mass m, centre of mass c, a rotated principal
// inertia about c (positive, triangle inequality), moved to the origin.
RigidInertia random_body_inertia(std::mt19937& gen, double m) {
  const Mat3 Q = random_rotation(gen);
  const Vec3 principal(uniform(gen, 0.2, 1.0), uniform(gen, 0.2, 1.0), uniform(gen, 0.2, 1.0));
  const Vec3 c = m > 0.0 ? random_vector(gen, 0.5) : Vec3::Zero();
  RigidInertia M;
  M.m = m;
  M.h = m * c;
  M.I = Q * principal.asDiagonal() * Q.transpose() + m * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  return M;
}

}  // namespace

TEST_CASE("centroidal inertia: back to the frame origin", "[inertia-views]") {
  std::mt19937 gen(31);
  for (double m : {0.0, 0.3, 2.5}) {
    const RigidInertia M = random_body_inertia(gen, m);
    const CentroidalInertia Mc = CentroidalInertia::from(M);
    CHECK(Mc.m == M.m);
    CHECK((Mc.m * Mc.c - M.h).norm() < 1e-15);
    // the parallel-axis theorem the other way
    const Mat3 back = Mc.I + Mc.m * (Mc.c.squaredNorm() * Mat3::Identity() - Mc.c * Mc.c.transpose());
    CHECK((back - M.I).norm() < 1e-14);
  }
}

TEST_CASE("spatial inertia view: Ad_C^-T M Ad_C^-1 applied in factors", "[inertia-views]") {
  std::mt19937 gen(32);
  for (int sample = 0; sample < random_samples; ++sample) {
    const double m = sample % 10 == 0 ? 0.0 : uniform(gen, 0.1, 5.0);  // some massless nodes
    const RigidInertia M = random_body_inertia(gen, m);
    const CentroidalInertia Mc = CentroidalInertia::from(M);
    const Pose C = random_pose(gen);
    const Mat6 expected = se3::Ad_inverse(C).transpose() * M.matrix() * se3::Ad_inverse(C);
    const representations::SpatialInertia view(C, Mc);
    const Vec6 V = random_twist(gen, 1.5, 2.0);
    INFO("sample " << sample << ", m = " << m);
    CHECK((view * V - expected * V).norm() < 1e-12 * (1.0 + expected.norm() * V.norm()));
    CHECK((as_matrix(view) - expected).norm() < 1e-12 * (1.0 + expected.norm()));
    // the 10 parameters the CRBA composites start from
    CHECK((representations::Spatial::inertia(C, M).matrix() - expected).norm() < 1e-12 * (1.0 + expected.norm()));
  }
}

TEST_CASE("mixed inertia view: diag(1, R) M diag(1, R^T)", "[inertia-views]") {
  std::mt19937 gen(33);
  for (int sample = 0; sample < random_samples; ++sample) {
    const RigidInertia M = random_body_inertia(gen, uniform(gen, 0.1, 5.0));
    const Pose C = random_pose(gen);
    Mat6 P = Mat6::Identity();  // mixed twist = diag(1, R) body twist
    P.bottomRightCorner<3, 3>() = C.R;
    const Mat6 expected = P * M.matrix() * P.transpose();
    const representations::MixedInertia view = representations::Mixed::inertia(C, M);
    const Vec6 V = random_twist(gen, 1.5, 2.0);
    INFO("sample " << sample);
    CHECK((view * V - expected * V).norm() < 1e-12 * (1.0 + expected.norm() * V.norm()));
    CHECK((as_matrix(view) - expected).norm() < 1e-12 * (1.0 + expected.norm()));
  }
}
