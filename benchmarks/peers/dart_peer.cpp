// DART peer: the skeleton comes from DART's own URDF loader.
#include <peers/peer_detail.hpp>

#include <dart/dynamics/FreeJoint.hpp>
#include <dart/dynamics/Joint.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/utils/urdf/DartLoader.hpp>

#include <iostream>
#include <sstream>
#include <stdexcept>

namespace liembs::peers {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

class SilencedStderr {
 public:
  SilencedStderr() : previous_(std::cerr.rdbuf(captured_.rdbuf())) {}
  ~SilencedStderr() { std::cerr.rdbuf(previous_); }
  SilencedStderr(const SilencedStderr&) = delete;
  SilencedStderr& operator=(const SilencedStderr&) = delete;
  std::string text() const { return captured_.str(); }

 private:
  std::ostringstream captured_;
  std::streambuf* previous_;
};

// Results are read one dof at a time (getForce(i), getAcceleration(i)) rather than as the
// Eigen vectors getForces()/getAccelerations() return by value: those are allocated inside
// libdart and would be freed here, which breaks when this code and libdart use different
// Eigen allocation policies (AddressSanitizer builds switch Eigen to its own aligned malloc).
class DartPeer final : public PeerModel {
 public:
  DartPeer(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base)
      : floating_base_(floating_base) {
    using dart::utils::DartLoader;
    {
      // DART warns on std::cerr about the zero default inertia and about body nodes without
      // mass (links without <inertial>, welded to links with mass): expected here.
      const SilencedStderr silenced;
      DartLoader::Options options(
          nullptr, floating_base ? DartLoader::RootJointType::FLOATING : DartLoader::RootJointType::FIXED,
          dart::dynamics::Inertia(0.0, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Zero()));
      DartLoader loader(options);
      skeleton_ = loader.parseSkeletonString(urdf, dart::common::Uri("file:///liembs-peer-model.urdf"));
      if (!skeleton_) throw std::runtime_error("DART cannot load the URDF model: " + silenced.text());
    }
    skeleton_->setGravity(gravity);

    // DART numbers its dofs in the order the loader created the body nodes; map them to the
    // LieMBS order by joint name.
    const detail::UrdfOrder order = detail::urdf_order(urdf, floating_base);
    names_ = order.movable_joints;
    const std::size_t base = floating_base ? 6 : 0;
    const std::size_t n = base + names_.size();
    if (skeleton_->getNumDofs() != n)
      throw std::runtime_error("DART: the skeleton has " + std::to_string(skeleton_->getNumDofs()) + " dofs, expected " +
                               std::to_string(n));
    index_.resize(n);
    if (floating_base) {
      const dart::dynamics::Joint* root = skeleton_->getRootJoint();
      if (dynamic_cast<const dart::dynamics::FreeJoint*>(root) == nullptr)
        throw std::runtime_error("DART: the root joint is not a FreeJoint");
      for (std::size_t i = 0; i < 6; ++i) index_[i] = root->getIndexInSkeleton(i);
    }
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const dart::dynamics::Joint* joint = skeleton_->getJoint(names_[i]);
      if (joint == nullptr || joint->getNumDofs() != 1)
        throw std::runtime_error("DART: no one-dof joint '" + names_[i] + "'");
      index_[base + i] = joint->getIndexInSkeleton(0);
    }
    identity_order_ = true;
    for (std::size_t i = 0; i < n; ++i) identity_order_ = identity_order_ && index_[i] == i;
    buffer_.resize(static_cast<Eigen::Index>(n));
  }

  std::string name() const override { return "DART"; }
  int dof() const override { return static_cast<int>(index_.size()); }
  int position_size() const override { return dof(); }
  bool floating_base() const override { return floating_base_; }
  BaseCoordinates base_coordinates() const override {
    return floating_base_ ? BaseCoordinates::dart_free : BaseCoordinates::none;
  }
  std::vector<std::string> joint_names() const override { return names_; }

  void inverse_dynamics(const VectorXd& q, const VectorXd& qd, const VectorXd& qdd, VectorXd& tau) override {
    skeleton_->setPositions(to_dart(q, "q"));
    skeleton_->setVelocities(to_dart(qd, "qd"));
    skeleton_->setAccelerations(to_dart(qdd, "qdd"));
    skeleton_->computeInverseDynamics(false, false, false);
    tau.resize(dof());
    for (std::size_t i = 0; i < index_.size(); ++i) tau(static_cast<Eigen::Index>(i)) = skeleton_->getForce(index_[i]);
  }

  void forward_dynamics(const VectorXd& q, const VectorXd& qd, const VectorXd& tau, VectorXd& qdd) override {
    skeleton_->setPositions(to_dart(q, "q"));
    skeleton_->setVelocities(to_dart(qd, "qd"));
    skeleton_->setForces(to_dart(tau, "tau"));
    skeleton_->computeForwardDynamics();
    qdd.resize(dof());
    for (std::size_t i = 0; i < index_.size(); ++i)
      qdd(static_cast<Eigen::Index>(i)) = skeleton_->getAcceleration(index_[i]);
  }

  void mass_matrix(const VectorXd& q, MatrixXd& M) override {
    skeleton_->setPositions(to_dart(q, "q"));
    const MatrixXd& dart_M = skeleton_->getMassMatrix();
    if (identity_order_) {
      M = dart_M;
      return;
    }
    const auto n = static_cast<Eigen::Index>(index_.size());
    M.resize(n, n);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        M(i, j) = dart_M(static_cast<Eigen::Index>(index_[static_cast<std::size_t>(i)]),
                         static_cast<Eigen::Index>(index_[static_cast<std::size_t>(j)]));
  }

 private:
  const VectorXd& to_dart(const VectorXd& vector, const char* what) {
    if (vector.size() != static_cast<Eigen::Index>(index_.size()))
      throw std::invalid_argument("DART: " + std::string(what) + " has size " + std::to_string(vector.size()) +
                                  ", expected " + std::to_string(index_.size()));
    if (identity_order_) return vector;
    for (std::size_t i = 0; i < index_.size(); ++i)
      buffer_(static_cast<Eigen::Index>(index_[i])) = vector(static_cast<Eigen::Index>(i));
    return buffer_;
  }

  bool floating_base_;
  dart::dynamics::SkeletonPtr skeleton_;
  std::vector<std::string> names_;
  std::vector<std::size_t> index_;  // LieMBS coordinate i is DART dof index_[i]
  bool identity_order_ = true;
  VectorXd buffer_;
};

}  // namespace

std::unique_ptr<PeerModel> make_dart(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base) {
  return std::make_unique<DartPeer>(urdf, gravity, floating_base);
}

}  // namespace liembs::peers
