// MJCF import (import_mjcf, [model] mjcf): the same robots as URDF files give the same
// RNEA, CRBA and ABA; on MJCF files LieMBS's inverse dynamics and mass matrix agree with
// MuJoCo's own mj_rne and mj_fullM on the same compiled model; what is not modelled is
// listed once; bad files get MuJoCo's or LieMBS's message with the file.
#include "model_format_support.hpp"
#include "../support/cli_process.hpp"

#include <liembs/error.hpp>
#include <liembs/loaders/mjcf_import.hpp>
#include <liembs/model/topology.hpp>
#include <liembs/util/warning.hpp>

#include <mujoco/mujoco.h>

#include <Eigen/Geometry>

#include <fstream>

using namespace liembs;
using namespace liembs::test_formats;
using Catch::Matchers::Contains;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// MuJoCo, from the same file, with everything but the rigid-body dynamics switched off.
struct Mujoco {
  std::unique_ptr<mjModel, decltype(&mj_deleteModel)> model{nullptr, &mj_deleteModel};
  std::unique_ptr<mjData, decltype(&mj_deleteData)> data{nullptr, &mj_deleteData};

  explicit Mujoco(const std::filesystem::path& file) {
    char error[1000] = "";
    model.reset(mj_loadXML(file.c_str(), nullptr, error, sizeof error));
    REQUIRE(model);
    data.reset(mj_makeData(model.get()));
  }
};

// The linear map T(q) from LieMBS's generalized velocity (base body twist, then the tree's
// joint rates) to MuJoCo's qvel, and the rest term of the accelerations:
// qacc = T V' + Tdot V. Free joint: qvel = (R v, omega); ball joint: the child's angular
// velocity relative to its parent in the child frame, omega = sum_k R_{>k}^T a_k qd_k for the
// three rotations exp(a_k q_k) about the child-frame images a_k of the world x, y, z axes;
// hinge and slide: qvel = qd, qpos = q + qpos0.
struct CoordinateMap {
  VectorXd qpos;
  MatrixXd T;
  VectorXd rest;  // Tdot V
};

Mat3 rotation_of(const Vec3& axis, double angle) { return Eigen::AngleAxisd(angle, axis).toRotationMatrix(); }

CoordinateMap map_coordinates(const mjModel& m, const Model& model, const KinematicTree& tree, const TreeState& state) {
  const int base = tree.floating_base ? 6 : 0;
  const int nv = tree.velocity_dimension();
  VectorXd velocity(nv);
  velocity << (tree.floating_base ? VectorXd(state.base_twist) : VectorXd()), state.qd;
  CoordinateMap map;
  map.qpos = VectorXd::Zero(m.nq);
  map.T = MatrixXd::Zero(m.nv, nv);
  map.rest = VectorXd::Zero(m.nv);
  const auto node = [&](const std::string& name) {
    const auto found = std::find(tree.dof_names.begin(), tree.dof_names.end(), name);
    REQUIRE(found != tree.dof_names.end());
    return static_cast<int>(found - tree.dof_names.begin());
  };
  for (int j = 0; j < m.njnt; ++j) {
    const std::string name = mj_id2name(&m, mjOBJ_JOINT, j);
    const int qadr = m.jnt_qposadr[j], dadr = m.jnt_dofadr[j];
    switch (m.jnt_type[j]) {
      case mjJNT_FREE: {
        REQUIRE(tree.floating_base);
        const Mat3& R = state.base.R;
        const Eigen::Quaterniond quaternion(R);
        map.qpos.segment<3>(qadr) = state.base.r;
        map.qpos.segment<4>(qadr + 3) << quaternion.w(), quaternion.x(), quaternion.y(), quaternion.z();
        map.T.block<3, 3>(dadr, 3) = R;                  // r' = R v
        map.T.block<3, 3>(dadr + 3, 0).setIdentity();    // omega
        const Vec3 omega = state.base_twist.head<3>(), v = state.base_twist.tail<3>();
        map.rest.segment<3>(dadr) = R * omega.cross(v);  // d/dt (R v) = R (v' + omega x v)
        break;
      }
      case mjJNT_HINGE:
      case mjJNT_SLIDE: {
        const int i = node(name);
        map.qpos(qadr) = state.q(i) + m.qpos0[qadr];
        map.T(dadr, base + i) = 1.0;
        break;
      }
      case mjJNT_BALL: {
        // The child body's reference orientation maps the world axes into its frame.
        const Joint& joint = *std::find_if(model.joints.begin(), model.joints.end(),
                                           [&](const Joint& candidate) { return candidate.name == name; });
        const Mat3 reference = model.bodies[joint.child].reference_pose.R;
        int nodes[3];
        Vec3 axes[3];
        for (int k = 0; k < 3; ++k) {
          nodes[k] = node(name + "[" + std::to_string(k) + "]");
          axes[k] = reference.transpose() * Vec3::Unit(k);
        }
        Mat3 rotation = Mat3::Identity();
        for (int k = 0; k < 3; ++k) rotation = rotation * rotation_of(axes[k], state.q(nodes[k]));
        const Eigen::Quaterniond quaternion(rotation);
        map.qpos.segment<4>(qadr) << quaternion.w(), quaternion.x(), quaternion.y(), quaternion.z();
        // R_{>k} and omega_{>k}, from the last rotation back.
        Mat3 later = Mat3::Identity();
        Vec3 later_omega = Vec3::Zero();
        for (int k = 2; k >= 0; --k) {
          const Vec3 column = later.transpose() * axes[k];
          map.T.block<3, 1>(dadr, base + nodes[k]) = column;
          // d/dt (R_{>k}^T a_k) = -omega_{>k} x R_{>k}^T a_k
          map.rest.segment<3>(dadr) += -later_omega.cross(column) * state.qd(nodes[k]);
          later_omega += column * state.qd(nodes[k]);  // omega of exp(a_k q_k) R_{>k}
          later = rotation_of(axes[k], state.q(nodes[k])) * later;
        }
        break;
      }
      default:
        FAIL("unexpected joint type");
    }
  }
  return map;
}

}  // namespace

namespace {

// Largest relative differences of inverse dynamics and mass matrix from mj_rne and mj_fullM.
std::pair<double, double> compare_with_mujoco(const std::filesystem::path& file, unsigned seed, int states = 10) {
  const Model model = import_mjcf(file);
  Mujoco mujoco(file);
  mjModel& m = *mujoco.model;
  mjData& d = *mujoco.data;
  BoundTree bound = bind(model);
  const KinematicTree& tree = *bound.tree;
  REQUIRE(tree.velocity_dimension() == m.nv);
  std::mt19937 engine(seed);
  double worst_inverse = 0.0, worst_mass = 0.0;
  for (int s = 0; s < states; ++s) {
    const TreeState state = random_state(tree, engine);
    const VectorXd acceleration = random_vector(engine, m.nv, 5.0);
    VectorXd velocity(m.nv);
    velocity << (tree.floating_base ? VectorXd(state.base_twist) : VectorXd()), state.qd;
    const CoordinateMap map = map_coordinates(m, model, tree, state);
    const VectorXd qvel = map.T * velocity, qacc = map.T * acceleration + map.rest;
    mju_copy(d.qpos, map.qpos.data(), m.nq);
    mju_copy(d.qvel, qvel.data(), m.nv);
    mju_copy(d.qacc, qacc.data(), m.nv);
    mj_kinematics(&m, &d);
    mj_comPos(&m, &d);
    mj_comVel(&m, &d);
    VectorXd mujoco_tau(m.nv);
    mj_rne(&m, &d, 1, mujoco_tau.data());
    mj_crb(&m, &d);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> mujoco_mass(m.nv, m.nv);
    mj_fullM(&m, mujoco_mass.data(), d.qM);

    VectorXd tau;
    MatrixXd mass;
    bound.dynamics->inverse_dynamics(state, acceleration, tau);
    bound.dynamics->mass_matrix(state, mass);
    const MatrixXd expected_mass = map.T.transpose() * MatrixXd(mujoco_mass) * map.T;
    INFO(file.filename().string() << ", state " << s);
    worst_inverse = std::max(worst_inverse, relative_difference(tau, map.T.transpose() * mujoco_tau));
    worst_mass = std::max(worst_mass, relative_difference(mass, expected_mass));
  }
  return {worst_inverse, worst_mass};
}

}  // namespace

TEST_CASE("MJCF import: inverse dynamics and mass matrix equal MuJoCo's mj_rne and mj_fullM on the same file") {
  // Hinge and slide joints with full and rotated diagonal inertias; a floating humanoid;
  // ball, free and multi-joint bodies, refs, welded bodies, inertias from geoms.
  for (const auto& file : {models_dir() / "mjcf/slide-arm.xml", models_dir() / "mjcf/humanoid.xml",
                           data_dir() / "mjcf/ball-free-tree.xml", data_dir() / "mjcf/ball-chain.xml"}) {
    CapturedWarnings warnings;  // the humanoid's actuators, limits, contacts are not compared
    const auto [inverse, mass] = compare_with_mujoco(file, 11);
    INFO(file.filename().string() << ": inverse dynamics " << inverse << ", mass matrix " << mass);
    CHECK(inverse < 1e-10);
    CHECK(mass < 1e-10);
  }
}

TEST_CASE("MJCF import: the same robots as URDF files give the same RNEA and CRBA and ABA") {
  for (const TwinRobot& robot : twin_robots()) {
    INFO(robot.name);
    CapturedWarnings warnings;
    const Model mjcf = import_mjcf(models_dir() / "mjcf" / (std::string(robot.name) + ".xml"));
    CHECK(mjcf.gravity == Vec3(0.0, 0.0, -9.81));  // the file's <option gravity>
    const Agreement agreement = compare_with_urdf_twin(robot, mjcf, 5);
    INFO("RNEA " << agreement.inverse << ", CRBA " << agreement.mass << ", ABA " << agreement.forward);
    // MuJoCo keeps inertias in principal axes (its own eigen-decomposition of fullinertia).
    CHECK(agreement.inverse < 1e-8);
    CHECK(agreement.mass < 1e-8);
    CHECK(agreement.forward < 1e-8);
  }
}

TEST_CASE("MJCF import: bodies and joints and frames and inertias of the compiled model") {
  const Model model = import_mjcf(data_dir() / "mjcf/ball-free-tree.xml");
  // A free base, a ball, a three-joint body as a chain of two massless links, a weld.
  std::vector<std::string> bodies, joints;
  for (const auto& body : model.bodies) bodies.push_back(body.name);
  for (const auto& joint : model.joints) joints.push_back(joint.name);
  CHECK(bodies == std::vector<std::string>{"base", "arm", "forearm/elbow_bend", "forearm/elbow_twist", "forearm", "hand",
                                           "leg", "foot"});
  CHECK(joints == std::vector<std::string>{"shoulder", "elbow_bend", "elbow_twist", "forearm_slide", "wrist", "hip",
                                           "foot_weld"});
  CHECK(model.free_bodies() == std::vector<std::size_t>{0});
  CHECK(model.joints[0].type == JointType::spherical);
  CHECK(model.joints[3].type == JointType::prismatic);
  CHECK(model.joints[6].type == JointType::fixed);
  CHECK(model.bodies[2].mass == 0.0);
  CHECK(model.gravity.isApprox(Vec3(0.3, -0.2, -9.81)));
  // The free body at its pose in the file (quat normalized by MuJoCo).
  const Eigen::Quaterniond base_orientation = Eigen::Quaterniond(0.9, 0.1, -0.2, 0.3).normalized();
  CHECK((model.bodies[0].reference_pose.R - base_orientation.toRotationMatrix()).norm() < 1e-12);
  CHECK((model.bodies[0].reference_pose.r - Vec3(0.1, -0.2, 1.0)).norm() < 1e-12);
  // fullinertia comes back as given, about the COM, to the accuracy of MuJoCo's iterative
  // eigen-decomposition into principal axes (measured 1.2e-7 relative here).
  Mat3 full;
  full << 0.2, 0.01, -0.02, 0.01, 0.18, 0.005, -0.02, 0.005, 0.1;
  CHECK((model.bodies[0].inertia - full).norm() < 1e-6 * full.norm());
  CHECK((model.bodies[0].inertia - full).norm() > 0.0);  // MuJoCo's round-off is there: the tensor is MuJoCo's
  CHECK(model.bodies[0].mass == 5.0);
  CHECK((model.bodies[0].center_of_mass - Vec3(0.02, -0.01, 0.03)).norm() < 1e-15);
  // The ball joint turns about its anchor, 0.05 along the arm's z axis.
  const Pose& arm = model.bodies[1].reference_pose;
  const Vec3 anchor = arm.r + arm.R * Vec3(0, 0, 0.05);
  CHECK((model.joints[0].screws[0].tail<3>() - anchor.cross(Vec3::UnitX())).norm() < 1e-12);
}

TEST_CASE("MJCF import: what LieMBS does not model is listed once and the dynamics are the bodies' alone") {
  CapturedWarnings warnings;
  const Model model = import_mjcf(models_dir() / "mjcf/humanoid.xml");
  REQUIRE(warnings.messages().size() == 1);
  const std::string& message = warnings.messages()[0];
  CHECK_THAT(message, Contains("humanoid.xml: not modelled by LieMBS") && Contains("2 actuator(s)") &&
                          Contains("limits of 'knee_l', 'knee_r'") && Contains("damping of 'knee_l', 'knee_r'") &&
                          Contains("contacts of 3 geom(s)"));
  CHECK_THAT(message, !Contains("ARMATURE"));
  {
    CapturedWarnings none;
    import_mjcf(models_dir() / "mjcf/slide-arm.xml");
    CHECK(none.messages().empty());
  }
}

namespace {

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("liembs-test-mjcf-" + name);
  std::ofstream(path) << text;
  return path;
}

std::string mjcf_body(const std::string& joint, const std::string& inertial = R"(<inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/>)") {
  return "<mujoco>\n  <worldbody>\n    <body name=\"a\" pos=\"0 0 1\">\n      " + joint + "\n      " + inertial +
         "\n    </body>\n  </worldbody>\n</mujoco>\n";
}

}  // namespace

TEST_CASE("MJCF import: armature is named loudly in the warning") {
  const auto file = write_file("armature.xml", mjcf_body(R"(<joint name="j" type="hinge" armature="0.1"/>)"));
  CapturedWarnings warnings;
  import_mjcf(file);
  REQUIRE(warnings.messages().size() == 1);
  CHECK_THAT(warnings.messages()[0], Contains("ARMATURE of 'j'") && Contains("diag(armature)"));
}

TEST_CASE("MJCF import: bad files get MuJoCo's message with the file and line or name what LieMBS cannot read") {
  const std::string good = mjcf_body(R"(<joint name="j" type="hinge"/>)");
  SECTION("truncated") {
    const auto file = write_file("truncated.xml", good.substr(0, good.size() / 2));
    CHECK_THROWS_WITH(import_mjcf(file), Contains("truncated.xml: MuJoCo cannot load the model: XML parse error") &&
                                              Contains("Line number="));
  }
  SECTION("unknown joint type") {
    const auto file = write_file("twist.xml", mjcf_body(R"(<joint name="j" type="twist"/>)"));
    CHECK_THROWS_WITH(import_mjcf(file), Contains("twist.xml: MuJoCo cannot load the model") &&
                                              Contains("invalid keyword: 'twist'") && Contains("Element 'joint', line 4"));
  }
  SECTION("zero mass on a moving body") {
    const auto file = write_file("massless.xml", mjcf_body(R"(<joint name="j" type="hinge"/>)", ""));
    CHECK_THROWS_WITH(import_mjcf(file), Contains("massless.xml: MuJoCo cannot load the model") &&
                                              Contains("mass and inertia of moving bodies") &&
                                              Contains("Object name = a") && Contains("line = 3"));
  }
  SECTION("missing file") {
    CHECK_THROWS_WITH(import_mjcf("/nonexistent/robot.xml"), Contains("/nonexistent/robot.xml: cannot open the MJCF file"));
  }
  SECTION("a weld whose relpose is not the pose at qpos0") {
    const auto file = write_file("weld.xml", R"(<mujoco>
  <worldbody>
    <body name="a"><joint name="ja" type="hinge"/><geom size="0.1"/></body>
    <body name="b" pos="1 0 0"><joint name="jb" type="hinge"/><geom size="0.1"/></body>
  </worldbody>
  <equality><weld name="glue" body1="a" body2="b" relpose="0 0 0 1 0 0 0"/></equality>
</mujoco>
)");
    CHECK_THROWS_WITH(import_mjcf(file), Contains("weld.xml: weld equality 'glue' between 'a' and 'b'") &&
                                              Contains("relpose"));
  }
  SECTION("an equality that closes no loop") {
    // Two floating bodies pinned together: a joint of a floating tree, not a loop closure.
    const auto file = write_file("floating-pair.xml", R"(<mujoco>
  <worldbody>
    <body name="a"><freejoint/><geom size="0.1"/></body>
    <body name="b" pos="0.5 0 0"><freejoint/><geom size="0.1"/></body>
  </worldbody>
  <equality><connect name="pin" body1="a" body2="b" anchor="0.25 0 0"/></equality>
</mujoco>
)");
    CHECK_THROWS_WITH(import_mjcf(file), Contains("floating-pair.xml: equality 'pin' between 'a' and 'b' closes no loop") &&
                                              Contains("two floating trees"));
  }
}

TEST_CASE("MJCF import: an equality with the world closes a loop at a massless anchor welded to the world") {
  // A chain closed to the world at its third body: the world reaches the anchor before the
  // chain's bodies, so the equality is the cut joint and the chain keeps its three hinges.
  const auto file = write_file("closed-chain.xml", R"(<mujoco>
  <worldbody>
    <body name="a"><joint name="ja" type="hinge" axis="0 1 0"/><geom size="0.1"/>
      <body name="b" pos="0.5 0 0"><joint name="jb" type="hinge" axis="0 1 0"/><geom size="0.1"/>
        <body name="c" pos="0.5 0 0"><joint name="jc" type="hinge" axis="0 1 0"/><geom size="0.1"/></body>
      </body>
    </body>
  </worldbody>
  <equality><connect name="pin" body1="c" anchor="0.5 0 0"/></equality>
</mujoco>
)");
  CapturedWarnings warnings;  // contacts
  const Model model = import_mjcf(file);
  const Topology topology = analyze_topology(model);
  REQUIRE(topology.cut_joints.size() == 1);
  const Joint& pin = model.joints[topology.cut_joints[0]];
  CHECK(pin.name == "pin");
  CHECK(model.bodies[pin.parent].name == "c");
  CHECK(model.bodies[pin.child].name == "world/pin");
  CHECK(model.bodies[pin.child].mass == 0.0);
  CHECK((pin.screws[0].tail<3>() - Vec3(1.5, 0, 0).cross(Vec3::UnitX())).norm() < 1e-15);
  const KinematicTree tree = compile_tree(model, true);
  std::vector<std::string> coordinates = tree.dof_names;
  std::sort(coordinates.begin(), coordinates.end());
  CHECK(coordinates == std::vector<std::string>{"ja", "jb", "jc"});
}

TEST_CASE("MJCF import: a connect equality closes a loop as the cut joint and the four-bar moves like configs/four-bar/planar.toml") {
  // models/mjcf/four-bar.xml: crank and coupler a chain from the world, the rocker on the
  // world, pinned to the coupler by a connect (a ball joint where planar.toml has a revolute).
  const Model model = import_mjcf(models_dir() / "mjcf/four-bar.xml");
  const Topology topology = analyze_topology(model);
  REQUIRE(topology.cut_joints.size() == 1);
  const Joint& cut = model.joints[topology.cut_joints[0]];
  CHECK(cut.name == "C");
  CHECK(cut.type == JointType::spherical);
  CHECK(model.bodies[cut.parent].name == "coupler");  // the deeper body
  CHECK(model.bodies[cut.child].name == "rocker");
  const Vec3 point_c(0.2987218950531729, 0.0, 0.2823875802126917);  // planar.toml's joint C
  CHECK((cut.screws[0].tail<3>() - point_c.cross(Vec3::UnitX())).norm() < 1e-15);
  const KinematicTree tree = compile_tree(model, true);
  std::vector<std::string> coordinates = tree.dof_names;
  std::sort(coordinates.begin(), coordinates.end());
  CHECK(coordinates == std::vector<std::string>{"A", "B", "D"});
  CHECK(tree.cut_joints == std::vector<std::size_t>{topology.cut_joints[0]});

  const RunAgreement runs = compare_four_bar_runs("../../configs/four-bar/planar-mjcf.toml");
  INFO("largest difference " << runs.largest_difference << ", largest motion " << runs.largest_motion);
  CHECK(runs.largest_motion > 0.05);
  CHECK(runs.largest_difference < 1e-11);
}

TEST_CASE("MJCF import: a weld equality closes a loop as a fixed cut joint") {
  // Two pendulums welded at their tips: one degree of freedom left.
  const auto file = write_file("welded.xml", R"(<mujoco>
  <worldbody>
    <body name="left"><joint name="L" type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02"/></body>
    <body name="right" pos="0.3 0 0"><joint name="R" type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 -0.3 0 -0.5" size="0.02"/></body>
  </worldbody>
  <equality><weld name="tips" body1="left" body2="right"/></equality>
</mujoco>
)");
  CapturedWarnings warnings;
  const Model model = import_mjcf(file);
  const Topology topology = analyze_topology(model);
  REQUIRE(topology.cut_joints.size() == 1);
  CHECK(model.joints[topology.cut_joints[0]].name == "tips");
  CHECK(model.joints[topology.cut_joints[0]].type == JointType::fixed);
}

TEST_CASE("MJCF import: liembs eval and run take the same columns as the URDF twin with one warning") {
  const auto io = cli_test::scratch_folder("liembs-test-mjcf", "eval");
  const std::string configs = std::string(LIEMBS_SOURCE_DIR) + "/configs/formats/";
  for (const std::string robot : {"slide-arm", "humanoid"}) {
    INFO(robot);
    const auto urdf = cli_test::run_liembs("eval " + configs + robot + "-urdf.toml --set algorithm.name=rnea --columns", io);
    const auto mjcf = cli_test::run_liembs("eval " + configs + robot + "-mjcf.toml --set algorithm.name=rnea --columns", io);
    REQUIRE(urdf.status == 0);
    REQUIRE(mjcf.status == 0);
    CHECK(mjcf.out == urdf.out);
    CHECK_THAT(mjcf.out, Contains(robot == "humanoid" ? "q.knee_l" : "q.telescope"));
  }
  // The humanoid's actuators, limits, damping and contacts: one warning line, and the run goes on.
  const auto run = cli_test::run_liembs("run " + configs + "humanoid-mjcf.toml --set simulation.end_time=0.01 --output " +
                                            cli_test::single_quoted(io / "run"), io);
  CHECK(run.status == 0);
  std::size_t warnings = 0;
  for (std::size_t at = run.err.find("warning:"); at != std::string::npos; at = run.err.find("warning:", at + 1)) ++warnings;
  CHECK(warnings == 1);
  CHECK_THAT(run.err, Contains("humanoid.xml: not modelled by LieMBS"));
}
