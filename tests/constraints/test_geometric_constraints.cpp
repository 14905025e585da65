// The geometric constraints of paper 004 (DP1, DP2, D, CD) and the lower pairs of its
// Table 1: the reference note's finite-difference checks T1 (Jacobian rows against central
// differences along A <- A exp(dtheta~), r <- r + A dv, i.e. in body twists) and T2 (eta
// against J V' - Phi''_FD along a motion quadratic in the exponential coordinates, and nu
// against Phi'_FD); composite joints vanishing along their motions with the rank of Table 1;
// the alternate-driver swap.
#include <liembs/sim/joint_constraints.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>

#include <catch2/catch.hpp>

#include <Eigen/QR>

#include <random>

using namespace liembs;
using Type = GeometricConstraint::Type;

namespace {

std::mt19937 rng(20261125);
Vec3 random_vec(double scale = 1.0) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return scale * Vec3(u(rng), u(rng), u(rng));
}
Pose random_pose() { return {so3::exp(random_vec(2.0)), random_vec(1.5)}; }

Model two_bodies() {
  Model model;
  model.bodies.resize(2);
  model.bodies[0].name = "i";
  model.bodies[1].name = "j";
  return model;
}

GeometricConstraint make(Type type, std::size_t body_i, std::size_t body_j) {
  GeometricConstraint g;
  g.name = std::string(to_string(type));
  g.type = type;
  g.body_i = body_i;
  g.body_j = body_j;
  g.a_bar_i = random_vec();
  g.a_bar_j = random_vec();
  g.s_bar_p_i = random_vec();
  g.s_bar_q_j = random_vec();
  g.c = random_vec().normalized();
  g.f = std::make_shared<const TimeFunction>(
      TimeFunction::parse(type == Type::distance ? "2 + 0.5*t^2 + sin(t)" : "0.3*sin(2*t) + 0.1*t^3"));
  return g;
}

// Residual of `set` at poses moved along body twists xi: C_k <- (R exp(xi_w), r + R xi_v).
Eigen::VectorXd residual_at(const JointConstraintSet& set, std::vector<Pose> poses, const std::vector<Vec6>& twists,
                            const Eigen::VectorXd& xi, double t) {
  for (std::size_t k = 0; k < poses.size(); ++k) {
    const Vec6 x = xi.segment<6>(static_cast<Eigen::Index>(6 * k));
    poses[k].r += poses[k].R * x.tail<3>();
    poses[k].R = poses[k].R * so3::exp(x.head<3>());
  }
  Eigen::VectorXd g;
  set.evaluate(poses, twists, t, &g, nullptr, nullptr);
  return g;
}

// Pose at time t of a motion quadratic in exponential coordinates and in r, with its body
// twist (omega = dexp_left(phi) phi' in this library's naming, the body-frame Jacobian; v = R^T r').
struct QuadraticMotion {
  Pose start;
  Vec3 angular_rate, angular_acceleration, velocity, acceleration;
  Pose pose(double t) const {
    const Vec3 phi = t * angular_rate + 0.5 * t * t * angular_acceleration;
    return {start.R * so3::exp(phi), start.r + t * velocity + 0.5 * t * t * acceleration};
  }
  Vec6 twist(double t) const {
    const Vec3 phi = t * angular_rate + 0.5 * t * t * angular_acceleration;
    const Vec3 phi_rate = angular_rate + t * angular_acceleration;
    const Pose p = pose(t);
    Vec6 V;
    V << so3::dexp_left(phi) * phi_rate, p.R.transpose() * (velocity + t * acceleration);
    return V;
  }
};

void check_derivatives(const JointConstraintSet& set, const std::vector<QuadraticMotion>& motions, double t) {
  const std::size_t n = motions.size();
  auto poses_at = [&](double time) {
    std::vector<Pose> poses;
    for (const auto& m : motions) poses.push_back(m.pose(time));
    return poses;
  };
  auto twists_at = [&](double time) {
    std::vector<Vec6> twists;
    for (const auto& m : motions) twists.push_back(m.twist(time));
    return twists;
  };
  const std::vector<Pose> poses = poses_at(t);
  const std::vector<Vec6> twists = twists_at(t);
  Eigen::VectorXd g, eta, nu;
  Eigen::MatrixXd J;
  set.evaluate(poses, twists, t, &g, &J, &eta, &nu);

  // T1: J against central differences along body twists.
  const double step = 1e-6;
  Eigen::MatrixXd J_fd(set.rows(), static_cast<Eigen::Index>(6 * n));
  for (Eigen::Index c = 0; c < J_fd.cols(); ++c) {
    Eigen::VectorXd xi = Eigen::VectorXd::Zero(J_fd.cols());
    xi(c) = step;
    J_fd.col(c) = (residual_at(set, poses, twists, xi, t) - residual_at(set, poses, twists, -xi, t)) / (2 * step);
  }
  INFO("J\n" << J << "\nfinite differences\n" << J_fd);
  CHECK((J - J_fd).cwiseAbs().maxCoeff() < 1e-8 * std::max(1.0, J.cwiseAbs().maxCoeff()));

  // T2: Phi' = J V - nu and Phi'' = J V' - eta along the motion (Phi includes -f(t)).
  Eigen::VectorXd V(6 * n), V_rate(6 * n);
  const double dv = 1e-5, dt = 1e-4;
  for (std::size_t k = 0; k < n; ++k) {
    V.segment<6>(static_cast<Eigen::Index>(6 * k)) = twists[k];
    V_rate.segment<6>(static_cast<Eigen::Index>(6 * k)) = (motions[k].twist(t + dv) - motions[k].twist(t - dv)) / (2 * dv);
  }
  auto phi = [&](double time) {
    Eigen::VectorXd value;
    set.evaluate(poses_at(time), twists_at(time), time, &value, nullptr, nullptr);
    return value;
  };
  const Eigen::VectorXd phi_plus = phi(t + dt), phi_minus = phi(t - dt);
  const double dt1 = 1e-5;  // the first derivative with a smaller step (truncation error: dt^2/6 times the third derivative)
  const Eigen::VectorXd phi_rate = (phi(t + dt1) - phi(t - dt1)) / (2 * dt1);
  const Eigen::VectorXd phi_acceleration = (phi_plus - 2 * g + phi_minus) / (dt * dt);
  INFO("J V - nu " << (J * V - nu).transpose() << "\nPhi'_FD " << phi_rate.transpose());
  CHECK((J * V - nu - phi_rate).cwiseAbs().maxCoeff() < 1e-7 * std::max(1.0, phi_rate.cwiseAbs().maxCoeff()));
  INFO("J V' - eta " << (J * V_rate - eta).transpose() << "\nPhi''_FD " << phi_acceleration.transpose());
  CHECK((J * V_rate - eta - phi_acceleration).cwiseAbs().maxCoeff() <
        1e-5 * std::max(1.0, phi_acceleration.cwiseAbs().maxCoeff()));
}

QuadraticMotion random_motion() { return {random_pose(), random_vec(2.0), random_vec(3.0), random_vec(), random_vec(2.0)}; }

}  // namespace

TEST_CASE("T1, T2: every GCON's Jacobian, nu and eta against finite differences", "[gcon][T1][T2]") {
  for (const Type type : {Type::dp1, Type::dp2, Type::distance, Type::coordinate_difference}) {
    for (int trial = 0; trial < 4; ++trial) {
      Model model = two_bodies();
      model.constraints.push_back(make(type, 0, 1));        // between two bodies
      model.constraints.push_back(make(type, 1, Joint::world));  // a body and the ground
      model.constraints.push_back(make(type, Joint::world, 0));  // the ground as body i
      const JointConstraintSet set(model, {}, true);
      REQUIRE(set.rows() == 3);
      CHECK(set.rheonomic());
      INFO(to_string(type) << ", trial " << trial);
      check_derivatives(set, {random_motion(), random_motion()}, 0.4 + 0.3 * trial);
    }
  }
}

TEST_CASE("GCON residuals are the paper's eqs. 1-4", "[gcon]") {
  Model model = two_bodies();
  for (const Type type : {Type::dp1, Type::dp2, Type::distance, Type::coordinate_difference})
    model.constraints.push_back(make(type, 0, 1));
  const JointConstraintSet set(model, {}, true);
  const std::vector<Pose> poses{random_pose(), random_pose()};
  const double t = 0.7;
  Eigen::VectorXd g;
  set.evaluate(poses, {Vec6::Zero(), Vec6::Zero()}, t, &g, nullptr, nullptr);
  const auto& [Ai, ri] = std::pair{poses[0].R, poses[0].r};
  const auto& [Aj, rj] = std::pair{poses[1].R, poses[1].r};
  auto f = [&](int k) { return model.constraints[static_cast<std::size_t>(k)].f->value(t); };
  const auto& dp1 = model.constraints[0];
  CHECK(g(0) == Approx(dp1.a_bar_i.dot(Ai.transpose() * Aj * dp1.a_bar_j) - f(0)));
  const auto& dp2 = model.constraints[1];
  const Vec3 d2 = rj + Aj * dp2.s_bar_q_j - ri - Ai * dp2.s_bar_p_i;
  CHECK(g(1) == Approx((Ai * dp2.a_bar_i).dot(d2) - f(1)));
  const auto& dd = model.constraints[2];
  const Vec3 d3 = rj + Aj * dd.s_bar_q_j - ri - Ai * dd.s_bar_p_i;
  CHECK(g(2) == Approx(d3.squaredNorm() - f(2)));
  const auto& cd = model.constraints[3];
  const Vec3 d4 = rj + Aj * cd.s_bar_q_j - ri - Ai * cd.s_bar_p_i;
  CHECK(g(3) == Approx(cd.c.dot(d4) - f(3)));
  // Table 2 of the paper (r-columns of DP2 and CD; our linear columns are Phi_r A).
  Eigen::MatrixXd J;
  set.evaluate(poses, {Vec6::Zero(), Vec6::Zero()}, t, nullptr, &J, nullptr);
  CHECK((J.block<1, 3>(1, 9) - (Ai * dp2.a_bar_i).transpose() * Aj).norm() < 1e-12);
  CHECK((J.block<1, 3>(3, 3) + cd.c.transpose() * Ai).norm() < 1e-12);
  CHECK((J.block<1, 3>(3, 0) - cd.c.transpose() * Ai * so3::hat(cd.s_bar_p_i)).norm() < 1e-12);  // c^T A_i [s_i]x
  CHECK((J.block<1, 3>(0, 6) + dp1.a_bar_i.transpose() * Ai.transpose() * Aj * so3::hat(dp1.a_bar_j)).norm() < 1e-12);
}

TEST_CASE("the lower pairs of Table 1 vanish along their motions and have its row counts", "[gcon][joints]") {
  struct Case {
    const char* type;
    int rows;
  };
  for (const Case c : {Case{"spherical", 3}, Case{"universal", 4}, Case{"revolute", 5}, Case{"cylindrical", 4},
                       Case{"translational", 5}, Case{"revolute-cylindrical", 3}}) {
    const std::string type = c.type;
    INFO(type);
    // Body j's frame coincides with body i's frame moved to P; a_bar_j = a_bar_i there.
    CompositeJointData data{0, 1};
    data.s_bar_p_i = random_vec();
    data.a_bar_i = random_vec().normalized();
    data.a_bar_j = data.a_bar_i;
    const Vec3 other = data.a_bar_i.cross(random_vec()).normalized();  // perpendicular to the axis
    if (type == "universal") data.a_bar_j = other;
    data.b_bar_i = other;
    data.b_bar_j = data.a_bar_i.cross(other);
    if (type == "revolute-cylindrical") data.a_bar_j = data.a_bar_i.cross(other);  // perpendicular to b_i
    Model model = two_bodies();
    add_composite_joint("joint", type, data, model.constraints);
    const JointConstraintSet set(model, {}, true);
    CHECK(set.rows() == c.rows);
    REQUIRE(set.blocks().size() == 1);
    for (int trial = 0; trial < 3; ++trial) {
      const Pose Ci = random_pose();
      std::uniform_real_distribution<double> u(-2.0, 2.0);
      const double angle = u(rng), angle2 = u(rng), slide = u(rng);
      // Relative motion of j in i's frame allowed by the joint (about/along a_i through P).
      Mat3 relative = Mat3::Identity();
      Vec3 offset = data.s_bar_p_i;
      if (type == "spherical") relative = so3::exp(random_vec(2.0));
      if (type == "universal") relative = so3::exp(angle * data.a_bar_i) * so3::exp(angle2 * data.a_bar_j);
      if (type == "revolute" || type == "cylindrical") relative = so3::exp(angle * data.a_bar_i);
      // The slider crank's composite: Q slides on the line of i and j turns about b_i and a_j.
      if (type == "revolute-cylindrical") relative = so3::exp(angle * data.b_bar_i) * so3::exp(angle2 * data.a_bar_j);
      if (type == "cylindrical" || type == "translational" || type == "revolute-cylindrical")
        offset += slide * data.a_bar_i;
      const Pose Cj{Ci.R * relative, Ci.r + Ci.R * offset};
      Eigen::VectorXd g;
      Eigen::MatrixXd J;
      set.evaluate({Ci, Cj}, {Vec6::Zero(), Vec6::Zero()}, 0.0, &g, &J, nullptr);
      INFO("g = " << g.transpose());
      CHECK(g.cwiseAbs().maxCoeff() < 1e-12);
      Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(J);
      qr.setThreshold(1e-9);
      CHECK(qr.rank() == c.rows);
      // A motion the joint forbids (a rotation about a perpendicular axis) violates it,
      // except for the spherical joint.
      if (type != "spherical" && type != "universal" && type != "revolute-cylindrical") {
        const Pose bent{Cj.R * so3::exp(0.3 * other), Cj.r};
        set.evaluate({Ci, bent}, {Vec6::Zero(), Vec6::Zero()}, 0.0, &g, nullptr, nullptr);
        CHECK(g.cwiseAbs().maxCoeff() > 1e-3);
      }
    }
  }
}

TEST_CASE("a DP1 driver swaps to its alternate near |f| = 1 and back", "[gcon][driver]") {
  // The four link's rotor driver: -x of the rotor against the ground's y, f = cos(pi t + pi/2);
  // alternate against z, f = cos(pi t).
  Model model;
  model.bodies.resize(1);
  model.bodies[0].name = "rotor";
  GeometricConstraint driver;
  driver.name = "driver";
  driver.type = Type::dp1;
  driver.body_i = 0;
  driver.a_bar_i = Vec3(-1, 0, 0);
  driver.a_bar_j = Vec3(0, 1, 0);
  driver.f = std::make_shared<const TimeFunction>(TimeFunction::parse("cos(pi*t + pi/2)"));
  GeometricConstraint alternate = driver;
  alternate.a_bar_j = Vec3(0, 0, 1);
  alternate.f = std::make_shared<const TimeFunction>(TimeFunction::parse("cos(pi*t)"));
  driver.alternate = std::make_shared<const GeometricConstraint>(alternate);
  model.constraints.push_back(driver);
  JointConstraintSet set(model, {}, true);
  // The rotor turns about the world x axis by pi t (its body z is x, its -x starts along z).
  auto pose_at = [](double t) {
    const Mat3 A0 = (Mat3() << 0, 0, 1, 0, 1, 0, -1, 0, 0).finished();
    return Pose{so3::exp(Vec3(M_PI * t, 0, 0)) * A0, Vec3::Zero()};
  };
  int swaps = 0, active_alternate_steps = 0;
  const double h = 1e-3;
  for (int k = 0; k <= 2000; ++k) {
    const double t = k * h;
    swaps += set.switch_drivers(t);
    Eigen::VectorXd g;
    Eigen::MatrixXd J;
    set.evaluate({pose_at(t)}, {Vec6::Zero()}, t, &g, &J, nullptr);
    INFO("t = " << t);
    REQUIRE(std::abs(g(0)) < 1e-12);             // both drivers hold on the motion
    REQUIRE(J.row(0).norm() > 0.4);              // never at the singular point
    // Active: the one whose |f| is away from 1.
    const double primary = std::cos(M_PI * t + M_PI / 2);
    if (std::abs(std::abs(primary) - 1.0) < 0.1) ++active_alternate_steps;
  }
  // |cos(pi t + pi/2)| = |sin(pi t)| reaches 1 at t = 0.5, 1.5: swaps there and back.
  CHECK(swaps == 4);
  CHECK(active_alternate_steps > 0);
}
