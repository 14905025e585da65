// The elemental (Denavit-Hartenberg) frames of a tree and the CRBA on them
// (liembs/dynamics/elemental_mass_matrix.hpp).
#include <liembs/dynamics/elemental_mass_matrix.hpp>

#include <liembs/lie/se3.hpp>

#include <cmath>
#include <cstring>

namespace liembs {

InertiaParameters InertiaParameters::from(const RigidInertia& M) {
  InertiaParameters J;
  J.m = M.m;
  J.h0 = M.h(0), J.h1 = M.h(1), J.h2 = M.h(2);
  J.I00 = M.I(0, 0), J.I11 = M.I(1, 1), J.I22 = M.I(2, 2);
  J.I01 = 0.5 * (M.I(0, 1) + M.I(1, 0)), J.I02 = 0.5 * (M.I(0, 2) + M.I(2, 0)), J.I12 = 0.5 * (M.I(1, 2) + M.I(2, 1));
  return J;
}

RigidInertia InertiaParameters::rigid() const {
  RigidInertia M;
  M.m = m;
  M.h << h0, h1, h2;
  M.I << I00, I01, I02, I01, I11, I12, I02, I12, I22;
  return M;
}

namespace {

Pose rotation_z(double angle) {
  Pose P;
  P.R = Eigen::AngleAxisd(angle, Vec3::UnitZ()).toRotationMatrix();
  return P;
}
Pose rotation_x(double angle) {
  Pose P;
  P.R = Eigen::AngleAxisd(angle, Vec3::UnitX()).toRotationMatrix();
  return P;
}
Pose shift(const Vec3& t) {
  Pose P;
  P.r = t;
  return P;
}

// Below this |e_z x u| two axes are taken as parallel (round-off of the alignment); between
// it and ill_conditioned their common normal is too far away to use.
constexpr double parallel = 1e-13;
constexpr double ill_conditioned = 1e-3;

// The common normal from the z axis to the line o + t u (|u| = 1): the angle gamma of its
// direction n about z, its foot b e_z on the z axis, the angle alpha of u about n, its length
// d (signed along n). Parallel lines: n points from the z axis to the line (e_x if they
// coincide) and b = 0. `conditioned` is false for nearly parallel lines.
struct CommonNormal {
  double gamma = 0.0, b = 0.0, alpha = 0.0, d = 0.0;
  bool conditioned = true;
};
CommonNormal common_normal(const Vec3& o, const Vec3& u) {
  CommonNormal out;
  const Vec3 w = Vec3::UnitZ().cross(u);
  const double sine = w.norm();
  Vec3 n;
  if (sine <= parallel) {
    const Vec3 across(o(0), o(1), 0.0);
    const double distance = across.norm();
    n = distance > parallel * (1.0 + o.norm()) ? Vec3(across / distance) : Vec3(Vec3::UnitX());
    out.alpha = u(2) > 0.0 ? 0.0 : M_PI;
    out.b = 0.0;
  } else {
    out.conditioned = sine >= ill_conditioned;
    n = w / sine;
    out.alpha = std::atan2(sine, u(2));
    // Feet: o + t u - b e_z = d n, so o_z + t u_z = b and o.u + t = b u_z.
    const double t = (u(2) * o(2) - o.dot(u)) / (sine * sine);
    out.b = o(2) + t * u(2);
  }
  out.gamma = std::atan2(n(1), n(0));
  out.d = o.dot(n);
  return out;
}

AxisRotation rotation_of(double angle) { return AxisRotation::of(std::cos(angle), std::sin(angle)); }

}  // namespace

Pose elemental_pose(const ElementalJoint& e, double q) {
  const double theta = e.theta0 + e.X.angular * q, r = e.r0 + e.X.linear * q;
  Pose P = se3::compose(se3::compose(rotation_x(std::atan2(e.alpha.s, e.alpha.c)), shift(Vec3(e.d, 0.0, 0.0))),
                        se3::compose(rotation_z(theta), shift(Vec3(0.0, 0.0, r))));
  if (e.prefix)
    P = se3::compose(se3::compose(rotation_z(std::atan2(e.gamma.s, e.gamma.c)), shift(Vec3(0.0, 0.0, e.b))), P);
  return P;
}

ElementalFrames elemental_frames(const AlignedTree& aligned) {
  const KinematicTree& tree = aligned.tree;
  const auto n = static_cast<std::size_t>(tree.dof());
  ElementalFrames out;
  out.joint.resize(n);
  out.frame.resize(n);
  out.inertia.resize(n);
  out.base = InertiaParameters::from(RigidInertia::from_matrix(tree.base_inertia));

  // Z_p: x on the common normal to the first child's axis, the origin at its foot.
  for (std::size_t p = 0; p < n; ++p) {
    if (tree.children[p].empty()) continue;
    const Pose& B = tree.reference[static_cast<std::size_t>(tree.children[p].front())];
    const CommonNormal normal = common_normal(B.r, B.R.col(2));
    out.frame[p] = se3::compose(rotation_z(normal.gamma), shift(Vec3(0.0, 0.0, normal.b)));
  }
  for (std::size_t k = 0; k < n; ++k) {
    const int p = tree.parent[k];
    const Pose parent_frame = p >= 0 ? out.frame[static_cast<std::size_t>(p)] : Pose{};
    const Pose Q = se3::compose(se3::compose(se3::inverse(parent_frame), tree.reference[k]), out.frame[k]);
    CommonNormal normal = common_normal(Q.r, Q.R.col(2));
    out.usable = out.usable && normal.conditioned;
    ElementalJoint& e = out.joint[k];
    e.X = aligned.axial[k];
    // The first child of a node has gamma = b = 0 up to round-off (its parent's Z_p was
    // placed on this normal); the others, and the root's children, keep them.
    const bool first_child = p >= 0 && tree.children[static_cast<std::size_t>(p)].front() == static_cast<int>(k);
    e.prefix = !first_child;
    if (!e.prefix) normal.gamma = normal.b = 0.0;
    e.gamma = rotation_of(normal.gamma);
    e.b = normal.b;
    e.alpha = rotation_of(normal.alpha);
    e.d = normal.d;
    // What is left of Q is Rz(theta0) Tz(r0).
    Pose normal_pose = se3::compose(rotation_x(normal.alpha), shift(Vec3(normal.d, 0.0, 0.0)));
    if (e.prefix) normal_pose = se3::compose(se3::compose(rotation_z(normal.gamma), shift(Vec3(0.0, 0.0, normal.b))), normal_pose);
    const Pose rest = se3::compose(se3::inverse(normal_pose), Q);
    const double scale = 1.0 + Q.r.norm();
    if (!(rest.R(2, 2) > 1.0 - 1e-12 && std::abs(rest.r(0)) <= 1e-12 * scale && std::abs(rest.r(1)) <= 1e-12 * scale))
      out.usable = false;
    e.theta0 = std::atan2(rest.R(1, 0), rest.R(0, 0));
    e.r0 = std::abs(rest.r(2)) > 1e-15 * scale ? rest.r(2) : 0.0;
    e.shifts = e.r0 != 0.0 || e.X.linear != 0.0;
    // The node inertia in E_k = F_k Z_k.
    const Mat6 Ad_Z = se3::Ad(out.frame[k]);
    out.inertia[k] = InertiaParameters::from(RigidInertia::from_matrix(Ad_Z.transpose() * tree.inertia[k] * Ad_Z));
    for (int j = p; j >= 0; j = tree.parent[static_cast<std::size_t>(j)]) ++out.walk_steps;
    if (tree.floating_base) ++out.walk_steps;
  }
  return out;
}

ElementalMassMatrix::ElementalMassMatrix(const AlignedTree& aligned)
    : frames_(elemental_frames(aligned)), parent_(aligned.tree.parent), floating_base_(aligned.tree.floating_base) {
  const std::size_t n = parent_.size();
  rotation_.resize(n);
  shift_.resize(n);
  composite_.resize(n);
  // Breadth-first order: consecutive nodes of one level are on different branches.
  for (std::size_t k = 0; k < n; ++k)
    if (parent_[k] < 0) level_order_.push_back(static_cast<int>(k));
  for (std::size_t i = 0; i < level_order_.size(); ++i)
    for (const int child : aligned.tree.children[static_cast<std::size_t>(level_order_[i])]) level_order_.push_back(child);
  // Unrelated degrees of freedom (on different branches) have zeros in M: none on a chain.
  std::size_t related = 0;
  for (std::size_t k = 0; k < n; ++k)
    for (int j = parent_[k]; j >= 0; j = parent_[static_cast<std::size_t>(j)]) ++related;
  branched_ = related != n * (n - 1) / 2;
  // In the composites' order (the reverse of level_order_), the first child to reach its
  // parent starts the parent's composite from the parent's own inertia.
  starts_parent_.assign(n, false);
  std::vector<bool> started(n, false);
  for (std::size_t i = n; i-- > 0;) {
    const int p = parent_[static_cast<std::size_t>(level_order_[i])];
    if (p >= 0 && !started[static_cast<std::size_t>(p)]) {
      started[static_cast<std::size_t>(p)] = true;
      starts_parent_[static_cast<std::size_t>(level_order_[i])] = true;
    }
  }
  for (std::size_t k = 0; k < n; ++k)  // leaves: their own inertia
    if (!started[k]) composite_[k] = frames_.inertia[k];
  // The walks: a node with its parent where both are free (a chain of 6 gives 3 pairs),
  // else alone.
  std::vector<bool> taken(n, false);
  for (std::size_t k = n; k-- > 0;) {
    if (taken[k]) continue;
    const int p = parent_[k];
    const bool pair = p >= 0 && !taken[static_cast<std::size_t>(p)];
    walks_.push_back({static_cast<int>(k), pair ? p : -1});
    taken[k] = true;
    if (pair) taken[static_cast<std::size_t>(p)] = true;
  }
}

bool ElementalMassMatrix::preferred() const {
  return frames_.usable && !parent_.empty() &&
         static_cast<double>(frames_.walk_steps) <= max_mean_walk * static_cast<double>(parent_.size());
}

namespace {

// F = I S for an axial screw S = (0, 0, a, 0, 0, l): a I e_z + l h x e_z, m l e_z - a h x e_z.
Wrench<double> composite_times_screw(const InertiaParameters& J, const AxialScrew& S) {
  const double a = S.angular, l = S.linear;
  return {a * J.I02 + l * J.h1, a * J.I12 - l * J.h0, a * J.I22, -a * J.h1, a * J.h0, l * J.m};
}

template <class T>
T screw_dot(const AxialScrew& S, const Wrench<T>& F) {
  return S.angular * F.n2 + S.linear * F.f2;
}

}  // namespace

void ElementalMassMatrix::compute(const Eigen::VectorXd& q, Eigen::MatrixXd& mass) {
  const std::size_t n = parent_.size();
  const Eigen::Index offset = floating_base_ ? 6 : 0;
  // The joint rotations Rz(theta0 + a q) and shifts r0 + l q, two nodes at a time.
  const auto angle = [&](std::size_t k) { return frames_.joint[k].theta0 + frames_.joint[k].X.angular * q(static_cast<Eigen::Index>(k)); };
  std::size_t k = 0;
  for (; k + 1 < n; k += 2) {
    const SinCosLanes both = sincos(Lanes{angle(k), angle(k + 1)});
    rotation_[k] = AxisRotation::of(both.cos[0], both.sin[0]);
    rotation_[k + 1] = AxisRotation::of(both.cos[1], both.sin[1]);
  }
  if (k < n) {
    const SinCos last = sincos(angle(k));
    rotation_[k] = AxisRotation::of(last.cos, last.sin);
  }
  for (k = 0; k < n; ++k) shift_[k] = frames_.joint[k].r0 + frames_.joint[k].X.linear * q(static_cast<Eigen::Index>(k));
  // Composites, leaves first (000 eq. 80), a level at a time: the chains of elemental
  // motions of neighbouring nodes are independent and overlap.
  InertiaParameters root = frames_.base;
  for (std::size_t i = n; i-- > 0;) {
    const auto k = static_cast<std::size_t>(level_order_[i]);
    const int p = parent_[k];
    if (p < 0 && !floating_base_) continue;  // the world takes it
    InertiaParameters moved = composite_[k];
    to_parent(k, moved);
    if (p < 0) root += moved;
    else if (starts_parent_[k]) composite_[static_cast<std::size_t>(p)] = frames_.inertia[static_cast<std::size_t>(p)] + moved;
    else composite_[static_cast<std::size_t>(p)] += moved;
  }
  if (branched_) std::memset(mass.data(), 0, sizeof(double) * static_cast<std::size_t>(mass.size()));
  // Columns (000 eq. 81): F_i = I^c_i S_i walked to the root, paired with every ancestor's
  // screw on the way; two columns at a time, in the two lanes of a vector, where a node and
  // its parent walk together from the parent up.
  const auto set = [&](Eigen::Index row, Eigen::Index column, double value) { mass(row, column) = mass(column, row) = value; };
  const auto set_base = [&](Eigen::Index column, const double (&F)[6]) {
    for (Eigen::Index r = 0; r < 6; ++r) set(r, column, F[r]);
  };
  for (const Walk& walk : walks_) {
    const auto i = static_cast<std::size_t>(walk.node);
    const Eigen::Index column = offset + walk.node;
    Wrench<double> F = composite_times_screw(composite_[i], frames_.joint[i].X);
    set(column, column, screw_dot(frames_.joint[i].X, F));
    if (walk.parent < 0) {  // alone
      for (std::size_t j = i;;) {
        const int p = parent_[j];
        if (p < 0 && !floating_base_) break;
        to_parent(j, F);
        if (p < 0) break;
        j = static_cast<std::size_t>(p);
        set(offset + p, column, screw_dot(frames_.joint[j].X, F));
      }
      if (floating_base_) set_base(column, {F.n0, F.n1, F.n2, F.f0, F.f1, F.f2});
      continue;
    }
    // With its parent: one step alone, then both. (The same walk as above in lanes; one
    // generic walk for both measured 4 % more instructions on the torso, so it is written twice.)
    const auto p = static_cast<std::size_t>(walk.parent);
    const Eigen::Index parent_column = offset + walk.parent;
    to_parent(i, F);
    set(parent_column, column, screw_dot(frames_.joint[p].X, F));
    const Wrench<double> G = composite_times_screw(composite_[p], frames_.joint[p].X);
    set(parent_column, parent_column, screw_dot(frames_.joint[p].X, G));
    Wrench<Lanes> both{{F.n0, G.n0}, {F.n1, G.n1}, {F.n2, G.n2}, {F.f0, G.f0}, {F.f1, G.f1}, {F.f2, G.f2}};
    for (std::size_t j = p;;) {
      const int up = parent_[j];
      if (up < 0 && !floating_base_) break;
      to_parent(j, both);
      if (up < 0) break;
      j = static_cast<std::size_t>(up);
      const Lanes value = screw_dot(frames_.joint[j].X, both);
      set(offset + up, column, value[0]);
      set(offset + up, parent_column, value[1]);
    }
    if (floating_base_) {
      set_base(column, {both.n0[0], both.n1[0], both.n2[0], both.f0[0], both.f1[0], both.f2[0]});
      set_base(parent_column, {both.n0[1], both.n1[1], both.n2[1], both.f0[1], both.f1[1], both.f2[1]});
    }
  }
  if (floating_base_) mass.topLeftCorner<6, 6>() = root.rigid().matrix();
}

}  // namespace liembs
