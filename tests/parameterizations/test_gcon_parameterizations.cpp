// Check T4 of the paper-004 note: the Jacobians of every GCON (DP1, DP2, D, CD) and of the
// Table 1 lower pairs built from them agree in rA (rotation-matrix, i.e. SO3xR3), rp
// (euler-parameters) and re (euler-angles), and with SE3: for the same motion
//   G^A [omega; r'] = G^P [p'; r'] = G^e [e'; r']   (omega = 2 G(p) p' = B(e) e'),
// on random poses. LieMBS writes every GCON against body twists and maps it through the
// parameterization's T(q); the reference here is the paper's own form, written out in this
// file by the chain rule from the derivative of A s_bar with respect to each
// parameterization's rotation coordinates (004 Table 2 for rA, eq. 23a for rp, the partials
// of eq. 28 for re). Also checked: nu = f'(t) the same in all four (0 on rp's normalization
// rows) and the acceleration level, J v' - eta equal across them for the same body twist
// rates (it is J_b V_b' - eta_b, independent of T'v).
#include <liembs/config/config_table.hpp>
#include <liembs/error.hpp>
#include <liembs/lie/so3.hpp>
#include <liembs/model/model.hpp>
#include <liembs/plugin/algorithm.hpp>
#include <liembs/host/registry.hpp>
#include <liembs/sim/constrained_system.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace liembs;
using Type = GeometricConstraint::Type;

namespace {

std::mt19937 rng(4004);
Vec3 random_vec(double scale = 1.0) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return scale * Vec3(u(rng), u(rng), u(rng));
}

// A random pose whose ZXZ angle theta has |sin theta| > 0.6, so that euler-angles keeps its
// identity chart offset there (R = A(e), checked below).
Pose random_pose() {
  for (;;) {
    const Mat3 R = so3::exp(random_vec(3.0));
    if (std::abs(R(2, 2)) < 0.8) return {R, random_vec(1.5)};
  }
}

std::shared_ptr<const TimeFunction> f(const char* expression) {
  return std::make_shared<const TimeFunction>(TimeFunction::parse(expression));
}

GeometricConstraint gcon(const std::string& name, Type type, std::size_t i, std::size_t j) {
  GeometricConstraint g;
  g.name = name;
  g.type = type;
  g.body_i = i;
  g.body_j = j;
  g.a_bar_i = random_vec();
  g.a_bar_j = random_vec();
  g.s_bar_p_i = random_vec();
  g.s_bar_q_j = random_vec();
  g.c = random_vec().normalized();
  g.f = f(type == Type::distance ? "3 + 0.5*t^2 + sin(t)" : "0.3*sin(2*t) + 0.1*t^3");
  return g;
}

constexpr std::size_t ground = Joint::world;

// Two free bodies "i" and "j" with the given constraints (fewer rows than the 12 velocities,
// independent at generic poses).
std::shared_ptr<Model> two_body_model(std::vector<GeometricConstraint> constraints) {
  auto model = std::make_shared<Model>();
  model->gravity = Vec3(0, 0, -9.81);
  for (const char* name : {"i", "j"}) {
    RigidBody body;
    body.name = name;
    body.mass = 1.5;
    body.inertia = Vec3(0.1, 0.2, 0.25).asDiagonal();
    body.reference_pose = random_pose();
    model->bodies.push_back(body);
  }
  model->constraints = std::move(constraints);
  return model;
}

// The models: the four GCONs between the bodies and against the ground (with f(t)), and the
// lower pairs of Table 1 composed from them.
std::vector<std::pair<std::string, std::shared_ptr<Model>>> models() {
  std::vector<std::pair<std::string, std::shared_ptr<Model>>> out;
  out.emplace_back("basic GCONs", two_body_model({gcon("dp1", Type::dp1, 0, 1), gcon("dp2", Type::dp2, 0, 1),
                                                  gcon("d", Type::distance, 0, 1),
                                                  gcon("cd", Type::coordinate_difference, 0, 1),
                                                  gcon("dp1-ground", Type::dp1, 0, ground),
                                                  gcon("dp2-ground", Type::dp2, ground, 1),
                                                  gcon("d-ground", Type::distance, 1, ground),
                                                  gcon("cd-ground", Type::coordinate_difference, ground, 0)}));
  auto composite = [](const std::vector<std::pair<std::string, std::size_t>>& types) {
    std::vector<GeometricConstraint> constraints;
    for (const auto& [type, pair] : types) {
      CompositeJointData data{pair == 0 ? 0u : ground, 1};
      if (pair == 2) data.body_i = 0, data.body_j = ground;
      data.s_bar_p_i = random_vec();
      data.s_bar_q_j = random_vec();
      data.a_bar_i = random_vec().normalized();
      data.a_bar_j = random_vec().normalized();
      data.b_bar_i = data.a_bar_i.unitOrthogonal();
      data.b_bar_j = data.a_bar_j.unitOrthogonal();
      add_composite_joint(type, type, data, constraints);
    }
    return constraints;
  };
  // pair 0: i-j, 1: ground-j, 2: i-ground
  out.emplace_back("revolute + universal", two_body_model(composite({{"revolute", 0}, {"universal", 1}})));
  out.emplace_back("spherical + translational + revolute-cylindrical",
                   two_body_model(composite({{"spherical", 2}, {"translational", 0}, {"revolute-cylindrical", 1}})));
  out.emplace_back("cylindrical x 2", two_body_model(composite({{"cylindrical", 0}, {"cylindrical", 2}})));
  return out;
}

// --- The paper's Jacobians, written out per formulation ---
enum class Formulation { rA, rp, re, se3 };

// The rotation coordinates of a body and d(A s_bar)/d(rotation coordinates), 3 x k.
struct RotationDerivative {
  Formulation formulation;
  const double* chart;  // p (rp) or e (re) of the body
  Mat3 R;

  Eigen::MatrixXd operator()(const Vec3& s) const {
    switch (formulation) {
      case Formulation::rA:
      case Formulation::se3:
        return -R * so3::hat(s);  // A exp(dtheta~) s: Pi_bar (004 eq. 8, Table 2)
      case Formulation::rp: {  // B(p, s) = 2 [(e0 1 + e~) s, e s^T - (e0 1 + e~) s~]   (004 eq. 23a)
        const double e0 = chart[0];
        const Vec3 e(chart[1], chart[2], chart[3]);
        const Mat3 E = e0 * Mat3::Identity() + so3::hat(e);
        Eigen::Matrix<double, 3, 4> B;
        B.col(0) = 2.0 * E * s;
        B.rightCols<3>() = 2.0 * (e * s.transpose() - E * so3::hat(s));
        return B;
      }
      case Formulation::re: {  // columns A1_phi A2 A3 s, A1 A2_theta A3 s, A1 A2 A3_psi s   (004 eq. 28a)
        const double cf = std::cos(chart[0]), sf = std::sin(chart[0]), ct = std::cos(chart[1]),
                     st = std::sin(chart[1]), cp = std::cos(chart[2]), sp = std::sin(chart[2]);
        Mat3 A1, A2, A3, A1f, A2t, A3p;
        A1 << cf, -sf, 0, sf, cf, 0, 0, 0, 1;
        A2 << 1, 0, 0, 0, ct, -st, 0, st, ct;
        A3 << cp, -sp, 0, sp, cp, 0, 0, 0, 1;
        A1f << -sf, -cf, 0, cf, -sf, 0, 0, 0, 0;
        A2t << 0, 0, 0, 0, -st, -ct, 0, ct, -st;
        A3p << -sp, -cp, 0, cp, -sp, 0, 0, 0, 0;
        Mat3 D;
        D << A1f * A2 * A3 * s, A1 * A2t * A3 * s, A1 * A2 * A3p * s;
        return D;
      }
    }
    return {};
  }
};

// G = [dPhi/d(rotation_k), dPhi/dr_k] per body, for the GCON rows of the model, at the poses.
// SE3's translation coordinates are body-frame (v = R^T r'): dr = R dv there.
Eigen::MatrixXd paper_jacobian(const Model& model, Formulation formulation, const std::vector<Pose>& poses,
                               const Eigen::VectorXd& chart, int rotation, int velocity, int chart_size) {
  const auto rows = static_cast<Eigen::Index>(model.constraints.size());
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(rows, velocity * static_cast<Eigen::Index>(poses.size()));
  auto body_of = [&](std::size_t k) {
    return RotationDerivative{formulation, chart.size() ? chart.data() + chart_size * k : nullptr,
                              k == ground ? Mat3::Identity() : poses[k].R};
  };
  auto world = [&](std::size_t k, const Vec3& s) { return k == ground ? Vec3(s) : Vec3(poses[k].R * s); };
  auto point = [&](std::size_t k, const Vec3& s) { return k == ground ? Vec3(s) : Vec3(poses[k].r + poses[k].R * s); };
  for (Eigen::Index row = 0; row < rows; ++row) {
    const GeometricConstraint& g = model.constraints[static_cast<std::size_t>(row)];
    // dPhi = sum over the bodies of (row vector) d(A s) + (row vector) dr.
    auto add = [&](std::size_t k, const Eigen::RowVector3d& by_point, const Vec3& s,
                   const Eigen::RowVector3d& by_position) {
      if (k == ground) return;
      const Eigen::Index o = velocity * static_cast<Eigen::Index>(k);
      G.block(row, o, 1, rotation) += by_point * body_of(k)(s);
      const Mat3 translation = formulation == Formulation::se3 ? poses[k].R : Mat3::Identity();
      G.block(row, o + rotation, 1, 3) += by_position * translation;
    };
    const Vec3 a_i = world(g.body_i, g.a_bar_i), a_j = world(g.body_j, g.a_bar_j);
    const Vec3 d = point(g.body_j, g.s_bar_q_j) - point(g.body_i, g.s_bar_p_i);
    const Eigen::RowVector3d zero = Eigen::RowVector3d::Zero();
    switch (g.type) {
      case Type::dp1:  // a_i^T a_j
        add(g.body_i, a_j.transpose(), g.a_bar_i, zero);
        add(g.body_j, a_i.transpose(), g.a_bar_j, zero);
        break;
      case Type::dp2:  // a_i^T d_ij
        add(g.body_i, d.transpose(), g.a_bar_i, zero);
        add(g.body_i, -a_i.transpose(), g.s_bar_p_i, -a_i.transpose());
        add(g.body_j, a_i.transpose(), g.s_bar_q_j, a_i.transpose());
        break;
      case Type::distance:  // d^T d
        add(g.body_i, -2.0 * d.transpose(), g.s_bar_p_i, -2.0 * d.transpose());
        add(g.body_j, 2.0 * d.transpose(), g.s_bar_q_j, 2.0 * d.transpose());
        break;
      case Type::coordinate_difference:  // c^T d
        add(g.body_i, -g.c.transpose(), g.s_bar_p_i, -g.c.transpose());
        add(g.body_j, g.c.transpose(), g.s_bar_q_j, g.c.transpose());
        break;
    }
  }
  return G;
}

struct Parameterization {
  std::string name;
  Formulation formulation;
};

}  // namespace

TEST_CASE("T4: GCON and lower-pair Jacobians agree in rA, rp, re and SE3 through T(q), and with the paper's forms",
          "[parameterizations][gcon][T4]") {
  Registry registry;
  registry.append_search_path({{LIEMBS_TEST_PLUGIN_DIR, "build tree", true}});
  registry.load();
  const auto no_options = ConfigDocument::from_string("", "(default options)");
  auto algorithm = registry.create<Algorithm>("newton-euler", no_options->root());
  const std::vector<Parameterization> parameterizations{{"rotation-matrix", Formulation::rA},
                                                        {"euler-parameters", Formulation::rp},
                                                        {"euler-angles", Formulation::re},
                                                        {"SE3", Formulation::se3}};
  for (const auto& [model_name, model] : models()) {
    const auto rows = static_cast<Eigen::Index>(model->constraints.size());
    REQUIRE(rows <= 12);
    for (int sample = 0; sample < 4; ++sample) {
      const std::vector<Pose> poses{random_pose(), random_pose()};
      Eigen::VectorXd twists(12), twist_rates(12);
      for (int k = 0; k < 4; ++k) {
        twists.segment<3>(3 * k) = random_vec(2.0);
        twist_rates.segment<3>(3 * k) = random_vec(3.0);
      }
      const double time = 0.37 + 0.5 * sample;
      // The same motion in every parameterization: J v, nu and J v' - eta.
      Eigen::VectorXd reference_velocity_product, reference_nu, reference_acceleration_defect;
      for (const auto& [group_name, formulation] : parameterizations) {
        INFO(model_name << ", sample " << sample << ", " << group_name);
        auto group = registry.create<Group>(group_name, no_options->root());
        const BodyCoordinates layout = group->body_coordinates();
        const DynamicsContext context{model, *group, group_name, nullptr, ""};
        auto dynamics = algorithm->bind_forward_dynamics(context);
        ConstrainedSystem& system = *dynamics->constraints();
        REQUIRE(system.constraint_count() == rows + 2 * layout.internal_constraints);

        State state;
        state.time = time;
        state.poses = poses;
        state.chart.resize(2 * layout.chart);
        group->chart_from_poses(state.poses, state.chart.data());
        if (formulation == Formulation::re) REQUIRE((state.chart(3) == 0 && state.chart(7) == 0));  // R = A(e)
        state.velocities.resize(2 * layout.velocity);
        group->from_body_twists(state.poses, state.chart.data(), twists.data(), state.velocities.data());
        Eigen::VectorXd rates(2 * layout.velocity);
        group->rates_from_body_twist_rates(state.poses, state.chart.data(), state.velocities.data(),
                                           twist_rates.data(), rates.data());
        DaeTerms terms;
        system.evaluate(state, terms, dae::all);
        const Eigen::MatrixXd J = terms.jacobian.topRows(rows);

        // The paper's Jacobian in this formulation; for rp it holds on the tangent space of
        // p^T p = 1 only (B(p, s) p = 2 (A + 1) s, G p = 0): the two differ by multiples of
        // the normalization rows p^T, and agree on every p' with p^T p' = 0.
        const Eigen::MatrixXd paper = paper_jacobian(*model, formulation, state.poses, state.chart, layout.rotation,
                                                     layout.velocity, layout.chart);
        const double scale = 1.0 + paper.cwiseAbs().maxCoeff();
        if (formulation == Formulation::rp) {
          Eigen::MatrixXd tangent = Eigen::MatrixXd::Identity(14, 14);
          for (int k = 0; k < 2; ++k) {
            const Eigen::Vector4d p = state.chart.segment<4>(4 * k);
            tangent.block<4, 4>(7 * k, 7 * k) -= p * p.transpose();
            // The difference is c p^T: zero on the tangent space...
            CHECK(((paper - J).middleCols<4>(7 * k) * (Eigen::Matrix4d::Identity() - p * p.transpose())).norm() <
                  1e-12 * scale);
          }
          CHECK(((paper - J) * tangent).norm() < 1e-12 * scale);
          // ...and the normalization rows are p^T with eta = -p'^T p'.
          for (int k = 0; k < 2; ++k) {
            const Eigen::RowVectorXd row = terms.jacobian.row(rows + k);
            CHECK((row.segment<4>(7 * k) - state.chart.segment<4>(4 * k).transpose()).norm() < 1e-15);
            CHECK(terms.acceleration_rhs(rows + k) == Approx(-state.velocities.segment<4>(7 * k).squaredNorm()));
          }
        } else {
          CHECK((paper - J).norm() < 1e-12 * scale);
        }

        // T4: the same motion gives the same J v in every formulation (p' from omega has
        // p^T p' = 0, so rp's paper Jacobian gives it too).
        const Eigen::VectorXd velocity_product = J * state.velocities;
        CHECK((paper * state.velocities - velocity_product).norm() < 1e-12 * scale * (1.0 + twists.norm()));
        // nu: empty when no row depends on time (the lower pairs), meaning 0.
        const Eigen::VectorXd nu = terms.velocity_rhs.size() > 0 ? terms.velocity_rhs
                                                                 : Eigen::VectorXd::Zero(system.constraint_count());
        REQUIRE(nu.size() == system.constraint_count());
        if (layout.internal_constraints > 0) CHECK(nu.tail(2).norm() == 0.0);
        const Eigen::VectorXd acceleration_defect =
            J * rates - terms.acceleration_rhs.head(rows);  // = J_b V_b' - eta_b: the same for all
        if (reference_velocity_product.size() == 0) {
          reference_velocity_product = velocity_product;
          reference_nu = nu.head(rows);
          reference_acceleration_defect = acceleration_defect;
          if (model_name == "basic GCONs") CHECK(reference_nu.norm() > 0.1);  // nu = f'(t), not trivially 0
        } else {
          const double v_scale = 1.0 + reference_velocity_product.cwiseAbs().maxCoeff();
          CHECK((velocity_product - reference_velocity_product).cwiseAbs().maxCoeff() < 1e-12 * v_scale);
          CHECK((nu.head(rows) - reference_nu).cwiseAbs().maxCoeff() < 1e-14);
          const double a_scale = 1.0 + reference_acceleration_defect.cwiseAbs().maxCoeff();
          CHECK((acceleration_defect - reference_acceleration_defect).cwiseAbs().maxCoeff() < 1e-11 * a_scale);
        }
        if (formulation == Formulation::rp) {  // the internal rows: p^T p'' + p'^T p' = 0 from rates_from_body_twist_rates
          CHECK((terms.jacobian.bottomRows(2) * rates - terms.acceleration_rhs.tail(2)).norm() < 1e-12);
        }
      }
    }
  }
}
