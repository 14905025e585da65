#pragma once
// Independent rigid-body dynamics implementations ("peers": Orocos KDL, MuJoCo, DART, all
// Debian packages) behind one interface, to check LieMBS against them and to benchmark it
// side by side. Each peer is compiled in its own translation unit; this header includes no
// peer header.
//
// Coordinates
//   Joint coordinates are ordered like the movable joints of liembs::import_urdf_string for
//   the same URDF (depth-first from the root, siblings in file order); joint_names() lists
//   them. Fixed joints have no coordinates.
//   A fixed-base model has q, qd, qdd, tau of size dof() = number of movable joints.
//   A floating-base model puts the base coordinates first, in the peer's own convention
//   (BaseCoordinates), followed by the joint coordinates; position_size() >= dof().
//   The conversion functions below map the base part to and from the LieMBS convention:
//     base pose C = (R, r)      the root link frame in the world
//     base velocity V           body twist (omega, v) = (omega, R^T r'), body frame
//     base acceleration V'      its time derivative (omega', v')
//     base force                body wrench (moment about the link origin, force), body frame,
//                               the dual of V (power = wrench . V)
//   and leave the joint part unchanged.
//
// Gravity is a world-frame acceleration (e.g. (0, 0, -9.81)). Damping, springs, armature,
// joint limits, friction and contacts are switched off or absent in every peer: the results
// are the pure rigid-body dynamics M(q) qdd + c(q, qd) - g(q) = tau.
#include <Eigen/Core>

#include <memory>
#include <string>
#include <vector>

namespace liembs::peers {

// How a peer stores the floating base (the first position_size() - joints position and the
// first 6 velocity coordinates).
enum class BaseCoordinates {
  // Fixed base: no base coordinates.
  none,
  // MuJoCo free joint. qpos = (r, quaternion w x y z of R), qvel = (r' in the world frame,
  // omega in the body frame), qacc = (r'', omega'), qfrc = (force in the world frame, moment
  // about the link origin in the body frame). Positions: 7 + joints.
  mujoco_free,
  // DART FreeJoint. positions = (rotation vector log R, r), velocities = body twist
  // (omega, R^T r') (= LieMBS), accelerations = its derivative, forces = body wrench
  // (= LieMBS). Positions: 6 + joints.
  dart_free,
};

class PeerModel {
 public:
  virtual ~PeerModel();

  // "KDL", "MuJoCo", "DART".
  virtual std::string name() const = 0;
  // Velocity coordinates: movable joints, + 6 with a floating base.
  virtual int dof() const = 0;
  // Position coordinates: dof(), + 1 for MuJoCo's free joint quaternion.
  virtual int position_size() const = 0;
  virtual bool floating_base() const = 0;
  virtual BaseCoordinates base_coordinates() const = 0;
  // Names of the movable joints in coordinate order (without the floating base).
  virtual std::vector<std::string> joint_names() const = 0;

  // tau = M(q) qdd + c(q, qd) - g(q), from scratch at (q, qd).
  virtual void inverse_dynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                Eigen::VectorXd& tau) = 0;
  // qdd = M(q)^-1 (tau - c(q, qd) + g(q)), from scratch at (q, qd).
  virtual void forward_dynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                                Eigen::VectorXd& qdd) = 0;
  // The joint-space mass matrix (dense, symmetric), from scratch at q.
  virtual void mass_matrix(const Eigen::VectorXd& q, Eigen::MatrixXd& M) = 0;

  // Further pipelines of the peer for benchmarks, by name; run_pipeline(i, q, qd, input,
  // output) runs pipeline i from scratch at (q, qd). The input and output are named in the
  // pipeline's name. Empty by default.
  virtual std::vector<std::string> pipelines() const;
  virtual void run_pipeline(std::size_t index, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                            const Eigen::VectorXd& input, Eigen::VectorXd& output);
};

// Orocos KDL (kdl_parser::treeFromUrdfModel, one KDL::Chain from the root to the only leaf):
// inverse dynamics KDL::ChainIdSolver_RNE, mass matrix KDL::ChainDynParam::JntToMass,
// forward dynamics KDL::ChainFdSolver_RNE (mass matrix and its Cholesky factor + RNE bias).
// Fixed base, serial chains only (throws std::invalid_argument for a branching tree).
std::unique_ptr<PeerModel> make_kdl(const std::string& urdf, const Eigen::Vector3d& gravity);

// MuJoCo 2.2 from the MJCF text mjcf_from_urdf() writes (loaded from a virtual file):
//   inverse dynamics  mj_kinematics, mj_comPos, mj_comVel, mj_rne(flg_acc = 1)
//   mass matrix       mj_kinematics, mj_comPos, mj_crb, mj_fullM
//   forward dynamics  mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne(flg_acc = 0),
//                     mj_solveM (the smooth-dynamics part of mj_forward)
//   pipelines()       "mj_forward (tau -> qacc)": the complete mj_forward with qfrc_applied = tau;
//                     "mj_inverse (qacc -> tau)": the complete mj_inverse (qfrc_inverse)
// Constraints, contacts, limits, equality, friction loss, passive forces, actuation and
// sensors are disabled (mjModel::opt.disableflags); gravity stays on.
std::unique_ptr<PeerModel> make_mujoco(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base);

// DART 6 (dart::utils::DartLoader; root joint FreeJoint with a floating base, WeldJoint
// otherwise; links without <inertial> get zero mass):
//   inverse dynamics  setPositions, setVelocities, setAccelerations, computeInverseDynamics, getForces
//   mass matrix       setPositions, getMassMatrix
//   forward dynamics  setPositions, setVelocities, setForces, computeForwardDynamics, getAccelerations
std::unique_ptr<PeerModel> make_dart(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base);

// The MJCF model make_mujoco loads: one <body> per URDF link (name kept), body pos/quat =
// the joint origin, hinge/slide joints with the URDF axis at the body origin, a <freejoint>
// on the root for a floating base, <inertial> with the centre of mass and the principal
// moments and axes (the URDF tensor diagonalized here with Eigen; a tensor already diagonal
// in its inertial frame is passed through unchanged, so MuJoCo and URDF agree exactly).
// A massless root link is the world (same rule as liembs::import_urdf_string). Bodies nested
// deeper than 64 go to <include> files (tinyxml2 9 refuses XML nested over 100 elements deep),
// so chains of any length load.
struct Mjcf {
  struct File {
    std::string name;
    std::string text;
  };
  std::string model;           // the <mujoco> document
  std::vector<File> includes;  // the <mujocoinclude> files, nested ones included, one flat list
};
Mjcf mjcf_from_urdf(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base);

// ---------------------------------------------------------------------------------------
// Conversions between the peer's floating-base coordinates and the LieMBS convention (see
// the top of this file). "velocities", "accelerations", "forces" are LieMBS vectors
// (V or V', or the body wrench, then the joint part); q is always the peer's position
// vector. For a fixed-base peer every conversion is the identity.

// Peer position vector from the base pose (R, r) and the joint positions.
Eigen::VectorXd peer_positions(const PeerModel& peer, const Eigen::Matrix3d& R, const Eigen::Vector3d& r,
                               const Eigen::VectorXd& joint_positions);
// Base pose and joint positions from a peer position vector.
void split_peer_positions(const PeerModel& peer, const Eigen::VectorXd& q, Eigen::Matrix3d& R, Eigen::Vector3d& r,
                          Eigen::VectorXd& joint_positions);

Eigen::VectorXd peer_velocities(const PeerModel& peer, const Eigen::VectorXd& q, const Eigen::VectorXd& velocities);
Eigen::VectorXd liembs_velocities(const PeerModel& peer, const Eigen::VectorXd& q, const Eigen::VectorXd& peer_qd);

// Accelerations need the velocities (MuJoCo: r'' = R (v' + omega x v)).
Eigen::VectorXd peer_accelerations(const PeerModel& peer, const Eigen::VectorXd& q, const Eigen::VectorXd& velocities,
                                   const Eigen::VectorXd& accelerations);
Eigen::VectorXd liembs_accelerations(const PeerModel& peer, const Eigen::VectorXd& q, const Eigen::VectorXd& peer_qd,
                                     const Eigen::VectorXd& peer_qdd);

Eigen::VectorXd peer_forces(const PeerModel& peer, const Eigen::VectorXd& q, const Eigen::VectorXd& forces);
Eigen::VectorXd liembs_forces(const PeerModel& peer, const Eigen::VectorXd& q, const Eigen::VectorXd& peer_tau);

// Mass matrix in LieMBS velocity coordinates from the peer's: M = T^-T M_peer T^-1 with
// (V; qd) = T peer_qd.
Eigen::MatrixXd liembs_mass_matrix(const PeerModel& peer, const Eigen::VectorXd& q, const Eigen::MatrixXd& peer_M);

}  // namespace liembs::peers
