// Orocos KDL peer: URDF -> KDL::Tree by kdl_parser, one chain from the root to the only leaf.
#include <peers/peer_detail.hpp>

#include <kdl/chain.hpp>
#include <kdl/chaindynparam.hpp>
#include <kdl/chainfdsolver_recursive_newton_euler.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/jntarray.hpp>
#include <kdl/jntspaceinertiamatrix.hpp>
#include <kdl/tree.hpp>
#include <kdl_parser/kdl_parser.hpp>
#include <urdf_parser/urdf_parser.h>

#include <Eigen/Cholesky>

#include <memory>
#include <stdexcept>

namespace liembs::peers {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

KDL::Chain chain_from_urdf(const std::string& urdf) {
  urdf::ModelInterfaceSharedPtr model = urdf::parseURDF(urdf);
  if (!model) throw std::invalid_argument("KDL: urdfdom cannot read the URDF");
  // KDL's root segment carries no inertia (kdl_parser warns and drops it); with a fixed base
  // it does not matter, so drop it here without the warning.
  std::const_pointer_cast<urdf::Link>(model->getRoot())->inertial.reset();
  KDL::Tree tree;
  if (!kdl_parser::treeFromUrdfModel(*model, tree)) throw std::invalid_argument("KDL: kdl_parser failed");
  std::vector<std::string> leaves;
  for (const auto& [name, element] : tree.getSegments())
    if (GetTreeElementChildren(element).empty()) leaves.push_back(name);
  if (leaves.size() != 1)
    throw std::invalid_argument("KDL peer: the model is not a serial chain (" + std::to_string(leaves.size()) +
                                " leaf links)");
  KDL::Chain chain;
  if (!tree.getChain(tree.getRootSegment()->first, leaves.front(), chain))
    throw std::invalid_argument("KDL: no chain from the root to '" + leaves.front() + "'");
  return chain;
}

// KDL::ChainFdSolver_RNE has an inline destructor that frees Eigen matrices libkdl
// allocated. That is only safe when this code allocates like libkdl (Debian builds it with
// Eigen's default policy: plain malloc, EIGEN_MALLOC_ALREADY_ALIGNED = 1). Builds that
// switch Eigen to its own aligned malloc (AddressSanitizer, wider SIMD alignment) compute
// forward dynamics from KDL's mass matrix and RNE bias instead, as ChainFdSolver_RNE does.
std::unique_ptr<KDL::ChainFdSolver_RNE> make_forward_solver(const KDL::Chain& chain, const KDL::Vector& gravity) {
#if EIGEN_MALLOC_ALREADY_ALIGNED
  return std::make_unique<KDL::ChainFdSolver_RNE>(chain, gravity);
#else
  (void)chain;
  (void)gravity;
  return nullptr;
#endif
}

class KdlPeer final : public PeerModel {
 public:
  KdlPeer(const std::string& urdf, const Eigen::Vector3d& gravity)
      : chain_(chain_from_urdf(urdf)),
        gravity_(gravity.x(), gravity.y(), gravity.z()),
        inverse_(chain_, gravity_),
        parameters_(chain_, gravity_),
        forward_(make_forward_solver(chain_, gravity_)),
        n_(chain_.getNrOfJoints()),
        q_(n_),
        qd_(n_),
        qdd_(n_),
        tau_(n_),
        bias_(n_),
        external_(chain_.getNrOfSegments(), KDL::Wrench::Zero()),
        M_(n_) {
    for (unsigned int i = 0; i < chain_.getNrOfSegments(); ++i) {
      const KDL::Joint& joint = chain_.getSegment(i).getJoint();
      if (joint.getType() != KDL::Joint::None) names_.push_back(joint.getName());
    }
    const detail::UrdfOrder order = detail::urdf_order(urdf, false);
    if (names_ != order.movable_joints) throw std::runtime_error("KDL: the chain's joints are not in the LieMBS order");
  }

  KdlPeer(const KdlPeer&) = delete;
  KdlPeer& operator=(const KdlPeer&) = delete;

  std::string name() const override { return "KDL"; }
  int dof() const override { return static_cast<int>(n_); }
  int position_size() const override { return dof(); }
  bool floating_base() const override { return false; }
  BaseCoordinates base_coordinates() const override { return BaseCoordinates::none; }
  std::vector<std::string> joint_names() const override { return names_; }

  void inverse_dynamics(const VectorXd& q, const VectorXd& qd, const VectorXd& qdd, VectorXd& tau) override {
    set(q_, q, "q");
    set(qd_, qd, "qd");
    set(qdd_, qdd, "qdd");
    if (inverse_.CartToJnt(q_, qd_, qdd_, external_, tau_) < 0)
      throw std::runtime_error("KDL: ChainIdSolver_RNE failed");
    tau = tau_.data;
  }

  void forward_dynamics(const VectorXd& q, const VectorXd& qd, const VectorXd& tau, VectorXd& qdd) override {
    set(q_, q, "q");
    set(qd_, qd, "qd");
    set(tau_, tau, "tau");
    if (forward_) {
      if (forward_->CartToJnt(q_, qd_, tau_, external_, qdd_) < 0)
        throw std::runtime_error("KDL: ChainFdSolver_RNE failed");
      qdd = qdd_.data;
      return;
    }
    // The same computation as ChainFdSolver_RNE: M^-1 (tau - ID(q, qd, 0)).
    qdd_.data.setZero();
    if (inverse_.CartToJnt(q_, qd_, qdd_, external_, bias_) < 0) throw std::runtime_error("KDL: ChainIdSolver_RNE failed");
    if (parameters_.JntToMass(q_, M_) < 0) throw std::runtime_error("KDL: ChainDynParam::JntToMass failed");
    qdd = M_.data.llt().solve(tau - bias_.data);
  }

  void mass_matrix(const VectorXd& q, MatrixXd& M) override {
    set(q_, q, "q");
    if (parameters_.JntToMass(q_, M_) < 0) throw std::runtime_error("KDL: ChainDynParam::JntToMass failed");
    M = M_.data;
  }

 private:
  void set(KDL::JntArray& array, const VectorXd& vector, const char* what) const {
    if (vector.size() != static_cast<Eigen::Index>(n_))
      throw std::invalid_argument("KDL: " + std::string(what) + " has size " + std::to_string(vector.size()) +
                                  ", expected " + std::to_string(n_));
    array.data = vector;
  }

  // The solvers keep references to the chain: it is declared first and never moves (the
  // peer lives behind a unique_ptr).
  KDL::Chain chain_;
  KDL::Vector gravity_;
  KDL::ChainIdSolver_RNE inverse_;
  KDL::ChainDynParam parameters_;
  std::unique_ptr<KDL::ChainFdSolver_RNE> forward_;  // null: see make_forward_solver
  unsigned int n_;
  KDL::JntArray q_, qd_, qdd_, tau_, bias_;
  KDL::Wrenches external_;
  KDL::JntSpaceInertiaMatrix M_;
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<PeerModel> make_kdl(const std::string& urdf, const Eigen::Vector3d& gravity) {
  return std::make_unique<KdlPeer>(urdf, gravity);
}

}  // namespace liembs::peers
