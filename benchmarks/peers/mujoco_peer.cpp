// MuJoCo peer: the model is the MJCF of mjcf_from_urdf(), loaded from a virtual file.
#include <peers/peer_detail.hpp>

#include <mujoco/mujoco.h>

#include <cstring>
#include <stdexcept>

namespace liembs::peers {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

class MujocoPeer final : public PeerModel {
 public:
  MujocoPeer(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base)
      : floating_base_(floating_base) {
    const Mjcf mjcf = mjcf_from_urdf(urdf, gravity, floating_base);
    const auto vfs = std::make_unique<mjVFS>();
    mj_defaultVFS(vfs.get());
    const char* file_name = "peer-model.xml";
    const auto add_file = [&](const std::string& name, const std::string& text) {
      if (mj_makeEmptyFileVFS(vfs.get(), name.c_str(), static_cast<int>(text.size())) != 0) {
        mj_deleteVFS(vfs.get());
        throw std::runtime_error("MuJoCo: cannot create the virtual model file " + name);
      }
      std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), name.c_str())], text.data(), text.size());
    };
    add_file(file_name, mjcf.model);
    for (const auto& include : mjcf.includes) add_file(include.name, include.text);
    char error[1024] = "";
    model_.reset(mj_loadXML(file_name, vfs.get(), error, sizeof error));
    mj_deleteVFS(vfs.get());
    if (!model_) throw std::runtime_error(std::string("MuJoCo cannot load the model: ") + error);
    model_->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT |
                                mjDSBL_CONTACT | mjDSBL_PASSIVE | mjDSBL_CLAMPCTRL | mjDSBL_WARMSTART |
                                mjDSBL_ACTUATION | mjDSBL_SENSOR;
    data_.reset(mj_makeData(model_.get()));
    if (!data_) throw std::runtime_error("MuJoCo: mj_makeData failed");

    // Coordinates: the free joint first (if any), then the hinge/slide joints in body order,
    // which mjcf_from_urdf made the LieMBS order. Checked by name.
    const detail::UrdfOrder order = detail::urdf_order(urdf, floating_base);
    names_ = order.movable_joints;
    const int base_joints = floating_base ? 1 : 0;
    if (model_->njnt != base_joints + static_cast<int>(names_.size()) ||
        model_->nv != (floating_base ? 6 : 0) + static_cast<int>(names_.size()))
      throw std::runtime_error("MuJoCo: unexpected number of joints or dofs");
    if (floating_base && model_->jnt_type[0] != mjJNT_FREE)
      throw std::runtime_error("MuJoCo: the first joint is not the free joint");
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const int joint = base_joints + static_cast<int>(i);
      const char* name = mj_id2name(model_.get(), mjOBJ_JOINT, joint);
      if (name == nullptr || names_[i] != name)
        throw std::runtime_error("MuJoCo: joint " + std::to_string(joint) + " is not '" + names_[i] + "'");
    }
    bias_.resize(model_->nv);
    dense_.resize(model_->nv, model_->nv);
  }

  std::string name() const override { return "MuJoCo"; }
  int dof() const override { return model_->nv; }
  int position_size() const override { return model_->nq; }
  bool floating_base() const override { return floating_base_; }
  BaseCoordinates base_coordinates() const override {
    return floating_base_ ? BaseCoordinates::mujoco_free : BaseCoordinates::none;
  }
  std::vector<std::string> joint_names() const override { return names_; }

  void inverse_dynamics(const VectorXd& q, const VectorXd& qd, const VectorXd& qdd, VectorXd& tau) override {
    set_state(q, qd);
    check(qdd, model_->nv, "qdd");
    mju_copy(data_->qacc, qdd.data(), model_->nv);
    mj_kinematics(model_.get(), data_.get());
    mj_comPos(model_.get(), data_.get());
    mj_comVel(model_.get(), data_.get());
    tau.resize(model_->nv);
    mj_rne(model_.get(), data_.get(), 1, tau.data());
  }

  void forward_dynamics(const VectorXd& q, const VectorXd& qd, const VectorXd& tau, VectorXd& qdd) override {
    set_state(q, qd);
    check(tau, model_->nv, "tau");
    mj_kinematics(model_.get(), data_.get());
    mj_comPos(model_.get(), data_.get());
    mj_crb(model_.get(), data_.get());
    mj_factorM(model_.get(), data_.get());
    mj_comVel(model_.get(), data_.get());
    mj_rne(model_.get(), data_.get(), 0, bias_.data());
    bias_ = tau - bias_;
    qdd.resize(model_->nv);
    mj_solveM(model_.get(), data_.get(), qdd.data(), bias_.data(), 1);
  }

  void mass_matrix(const VectorXd& q, MatrixXd& M) override {
    check(q, model_->nq, "q");
    mju_copy(data_->qpos, q.data(), model_->nq);
    mj_kinematics(model_.get(), data_.get());
    mj_comPos(model_.get(), data_.get());
    mj_crb(model_.get(), data_.get());
    // mj_fullM writes row-major; M is symmetric.
    mj_fullM(model_.get(), dense_.data(), data_->qM);
    M = dense_;
  }

  std::vector<std::string> pipelines() const override {
    return {"mj_forward (tau -> qacc)", "mj_inverse (qacc -> tau)"};
  }

  void run_pipeline(std::size_t index, const VectorXd& q, const VectorXd& qd, const VectorXd& input,
                    VectorXd& output) override {
    set_state(q, qd);
    check(input, model_->nv, "pipeline input");
    output.resize(model_->nv);
    if (index == 0) {
      mju_copy(data_->qfrc_applied, input.data(), model_->nv);
      mj_forward(model_.get(), data_.get());
      mju_copy(output.data(), data_->qacc, model_->nv);
    } else if (index == 1) {
      mju_copy(data_->qacc, input.data(), model_->nv);
      mj_inverse(model_.get(), data_.get());
      mju_copy(output.data(), data_->qfrc_inverse, model_->nv);
    } else {
      PeerModel::run_pipeline(index, q, qd, input, output);
    }
  }

 private:
  void check(const VectorXd& vector, int size, const char* what) const {
    if (vector.size() != size)
      throw std::invalid_argument("MuJoCo: " + std::string(what) + " has size " + std::to_string(vector.size()) +
                                  ", expected " + std::to_string(size));
  }

  void set_state(const VectorXd& q, const VectorXd& qd) {
    check(q, model_->nq, "q");
    check(qd, model_->nv, "qd");
    mju_copy(data_->qpos, q.data(), model_->nq);
    mju_copy(data_->qvel, qd.data(), model_->nv);
  }

  bool floating_base_;
  std::unique_ptr<mjModel, decltype(&mj_deleteModel)> model_{nullptr, &mj_deleteModel};
  std::unique_ptr<mjData, decltype(&mj_deleteData)> data_{nullptr, &mj_deleteData};
  std::vector<std::string> names_;
  VectorXd bias_;
  MatrixXd dense_;
};

}  // namespace

std::unique_ptr<PeerModel> make_mujoco(const std::string& urdf, const Eigen::Vector3d& gravity, bool floating_base) {
  return std::make_unique<MujocoPeer>(urdf, gravity, floating_base);
}

}  // namespace liembs::peers
