// The peer interface: defaults, the import order and the floating-base conversions.
#include <peers/peer_detail.hpp>

#include <liembs/lie/so3.hpp>
#include <liembs/loaders/urdf_import.hpp>

#include <Eigen/Geometry>

#include <stdexcept>

namespace liembs::peers {

PeerModel::~PeerModel() = default;

std::vector<std::string> PeerModel::pipelines() const { return {}; }

void PeerModel::run_pipeline(std::size_t index, const Eigen::VectorXd&, const Eigen::VectorXd&,
                             const Eigen::VectorXd&, Eigen::VectorXd&) {
  throw std::out_of_range(name() + ": no pipeline " + std::to_string(index));
}

namespace detail {

UrdfOrder urdf_order(const std::string& urdf, bool floating_base) {
  const Model model = import_urdf_string(urdf, "peer model", floating_base);
  UrdfOrder order;
  for (const auto& joint : model.joints) {
    order.joint_rank.emplace(joint.name, order.joint_rank.size());
    if (joint.dof() > 0) order.movable_joints.push_back(joint.name);
  }
  return order;
}

}  // namespace detail

namespace {

using Eigen::Matrix3d;
using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;

void check_size(const PeerModel& peer, const VectorXd& vector, int expected, const char* what) {
  if (vector.size() != expected)
    throw std::invalid_argument(peer.name() + ": " + what + " has size " + std::to_string(vector.size()) +
                                ", expected " + std::to_string(expected));
}

Matrix3d base_rotation(const PeerModel& peer, const VectorXd& q) {
  check_size(peer, q, peer.position_size(), "position vector");
  switch (peer.base_coordinates()) {
    case BaseCoordinates::mujoco_free:
      return Eigen::Quaterniond(q(3), q(4), q(5), q(6)).normalized().toRotationMatrix();
    case BaseCoordinates::dart_free:
      return so3::exp(Vector3d(q.head<3>()));
    case BaseCoordinates::none:
      break;
  }
  return Matrix3d::Identity();
}

}  // namespace

VectorXd peer_positions(const PeerModel& peer, const Matrix3d& R, const Vector3d& r, const VectorXd& joint_positions) {
  const int n = detail::joint_count(peer);
  check_size(peer, joint_positions, n, "joint position vector");
  VectorXd q(peer.position_size());
  switch (peer.base_coordinates()) {
    case BaseCoordinates::none:
      return joint_positions;
    case BaseCoordinates::mujoco_free: {
      const Eigen::Quaterniond rotation(R);
      q.head<3>() = r;
      q.segment<4>(3) << rotation.w(), rotation.x(), rotation.y(), rotation.z();
      q.tail(n) = joint_positions;
      return q;
    }
    case BaseCoordinates::dart_free:
      q.head<3>() = so3::log(R);
      q.segment<3>(3) = r;
      q.tail(n) = joint_positions;
      return q;
  }
  return q;
}

void split_peer_positions(const PeerModel& peer, const VectorXd& q, Matrix3d& R, Vector3d& r,
                          VectorXd& joint_positions) {
  const int n = detail::joint_count(peer);
  R = base_rotation(peer, q);
  switch (peer.base_coordinates()) {
    case BaseCoordinates::none:
      r.setZero();
      break;
    case BaseCoordinates::mujoco_free:
      r = q.head<3>();
      break;
    case BaseCoordinates::dart_free:
      r = q.segment<3>(3);
      break;
  }
  joint_positions = q.tail(n);
}

VectorXd peer_velocities(const PeerModel& peer, const VectorXd& q, const VectorXd& velocities) {
  check_size(peer, velocities, peer.dof(), "velocity vector");
  if (peer.base_coordinates() != BaseCoordinates::mujoco_free) return velocities;
  const Matrix3d R = base_rotation(peer, q);
  VectorXd qd = velocities;
  qd.head<3>() = R * velocities.segment<3>(3);  // r' = R v
  qd.segment<3>(3) = velocities.head<3>();      // omega (body frame)
  return qd;
}

VectorXd liembs_velocities(const PeerModel& peer, const VectorXd& q, const VectorXd& peer_qd) {
  check_size(peer, peer_qd, peer.dof(), "velocity vector");
  if (peer.base_coordinates() != BaseCoordinates::mujoco_free) return peer_qd;
  const Matrix3d R = base_rotation(peer, q);
  VectorXd velocities = peer_qd;
  velocities.head<3>() = peer_qd.segment<3>(3);
  velocities.segment<3>(3) = R.transpose() * peer_qd.head<3>();
  return velocities;
}

VectorXd peer_accelerations(const PeerModel& peer, const VectorXd& q, const VectorXd& velocities,
                            const VectorXd& accelerations) {
  check_size(peer, velocities, peer.dof(), "velocity vector");
  check_size(peer, accelerations, peer.dof(), "acceleration vector");
  if (peer.base_coordinates() != BaseCoordinates::mujoco_free) return accelerations;
  const Matrix3d R = base_rotation(peer, q);
  const Vector3d omega = velocities.head<3>(), v = velocities.segment<3>(3);
  VectorXd qdd = accelerations;
  qdd.head<3>() = R * (accelerations.segment<3>(3) + omega.cross(v));  // r'' = d/dt (R v)
  qdd.segment<3>(3) = accelerations.head<3>();
  return qdd;
}

VectorXd liembs_accelerations(const PeerModel& peer, const VectorXd& q, const VectorXd& peer_qd,
                              const VectorXd& peer_qdd) {
  check_size(peer, peer_qd, peer.dof(), "velocity vector");
  check_size(peer, peer_qdd, peer.dof(), "acceleration vector");
  if (peer.base_coordinates() != BaseCoordinates::mujoco_free) return peer_qdd;
  const Matrix3d R = base_rotation(peer, q);
  const Vector3d omega = peer_qd.segment<3>(3), v = R.transpose() * peer_qd.head<3>();
  VectorXd accelerations = peer_qdd;
  accelerations.head<3>() = peer_qdd.segment<3>(3);
  accelerations.segment<3>(3) = R.transpose() * peer_qdd.head<3>() - omega.cross(v);
  return accelerations;
}

VectorXd peer_forces(const PeerModel& peer, const VectorXd& q, const VectorXd& forces) {
  check_size(peer, forces, peer.dof(), "force vector");
  if (peer.base_coordinates() != BaseCoordinates::mujoco_free) return forces;
  const Matrix3d R = base_rotation(peer, q);
  VectorXd tau = forces;
  tau.head<3>() = R * forces.segment<3>(3);  // force in the world frame
  tau.segment<3>(3) = forces.head<3>();      // moment in the body frame
  return tau;
}

VectorXd liembs_forces(const PeerModel& peer, const VectorXd& q, const VectorXd& peer_tau) {
  check_size(peer, peer_tau, peer.dof(), "force vector");
  if (peer.base_coordinates() != BaseCoordinates::mujoco_free) return peer_tau;
  const Matrix3d R = base_rotation(peer, q);
  VectorXd forces = peer_tau;
  forces.head<3>() = peer_tau.segment<3>(3);
  forces.segment<3>(3) = R.transpose() * peer_tau.head<3>();
  return forces;
}

MatrixXd liembs_mass_matrix(const PeerModel& peer, const VectorXd& q, const MatrixXd& peer_M) {
  if (peer_M.rows() != peer.dof() || peer_M.cols() != peer.dof())
    throw std::invalid_argument(peer.name() + ": mass matrix has the wrong size");
  if (peer.base_coordinates() != BaseCoordinates::mujoco_free) return peer_M;
  // peer_qd = T^-1 (V; qd) with T^-1 = [[0, R], [1, 0]] on the base block (rows r', omega;
  // columns omega, v) and the identity on the joints.
  const Matrix3d R = base_rotation(peer, q);
  MatrixXd T_inverse = MatrixXd::Identity(peer.dof(), peer.dof());
  T_inverse.topLeftCorner<6, 6>().setZero();
  T_inverse.block<3, 3>(0, 3) = R;
  T_inverse.block<3, 3>(3, 0).setIdentity();
  return T_inverse.transpose() * peer_M * T_inverse;
}

}  // namespace liembs::peers
