// H-GRNE's coefficient rows in body frames (higher_order_body_frame.hpp, SeriesRows): the
// rotation of a twist or wrench series about z, the Cauchy sums of a row and of cross
// products, the 3x3 products and the Newton-Euler assembly, two and four coefficients at a
// time (the four-wide ones also compiled for AVX2 and FMA where the processor has them),
// against the same sums written term by term: random series up to order 12, every last
// coefficient, with random numbers past the last one (which must not leak in). And the
// whole of H-GRNE on the baseline path against the AVX2 one on random trees.
#include <liembs/dynamics/higher_order_body_frame.hpp>

#include <catch2/catch.hpp>

#include <random_trees.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace liembs;
using namespace liembs::higher_order_kernels;

namespace {

constexpr int last_order = 12;
constexpr int row_length = 20;  // the blocks of 2 or 4 covering 0..12, and one more for W_k's Pi_(k+1)

// Rows of row_length coefficients, each after four zeros (as BodyFrameDynamics's; the
// random numbers past `last` in the row before must not leak in either).
struct RowSet {
  static constexpr int front = 4, pitch = front + row_length;
  std::vector<double> data;
  explicit RowSet(int rows) : data(static_cast<std::size_t>(rows * pitch), 0.0) {}
  double* row(int c) { return data.data() + c * pitch + front; }
  double at(int c, int k) const { return data[static_cast<std::size_t>(c * pitch + front + k)]; }
};

RowSet random_rows(int rows, std::mt19937& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  RowSet set(rows);
  for (int c = 0; c < rows; ++c)
    for (int k = 0; k < row_length; ++k) set.row(c)[k] = uniform(random);
  return set;
}

struct Inputs {
  std::mt19937 random{11};
  RowSet x = random_rows(6, random), y = random_rows(6, random), before = random_rows(6, random);
  RowSet a = random_rows(3, random);  // cos, sin, d series (rows 0, 1, 2)
  Mat3 M = Mat3::Random(), N = Mat3::Random();
  Vec3 centre = Vec3::Random();
  std::vector<double> ramp;
  Inputs() {
    for (int k = 0; k < row_length; ++k) ramp.push_back(k + 1);
  }
};

struct Outputs {
  RowSet rotated_twist{6}, rotated_wrench{6}, cauchy_plus{1}, cauchy_minus{1}, cross{3}, cross_second{3}, cross_added{3},
      product{3}, product_added{3}, adjoint_twist{6}, adjoint_wrench{6}, wrench{6};
  explicit Outputs(const Inputs& in) {  // the accumulating kernels add to in.before
    for (RowSet* accumulated : {&cauchy_plus, &cauchy_minus, &cross_added, &product_added, &adjoint_wrench})
      *accumulated = in.before;
  }
};

// Every kernel for coefficients 0..last (forced inline, so that the AVX2 caller below
// compiles them for AVX2).
template <int Width>
__attribute__((always_inline)) inline void run_kernels(Inputs& in, Outputs& out, int last) {
  using Rows = SeriesRows<Width>;
  const int pitch = RowSet::pitch, blocks = Rows::blocks(last);
  Rows::template rotate<1>(in.a.row(0), in.a.row(1), in.x.row(0), out.rotated_twist.row(0), pitch, last, blocks);
  Rows::template rotate<-1>(in.a.row(0), in.a.row(1), in.x.row(0), out.rotated_wrench.row(0), pitch, last, blocks);
  Rows::cauchy(in.a.row(2), 1.0, in.x.row(1), out.cauchy_plus.row(0), last, blocks);
  Rows::cauchy(in.a.row(2), -1.0, in.x.row(1), out.cauchy_minus.row(0), last, blocks);
  Rows::template cross_sums<false>(in.x.row(0), in.y.row(0), in.y.row(3), out.cross.row(0), out.cross_second.row(0), pitch,
                                   last, blocks);
  Rows::template cross_sums<true>(in.x.row(0), in.y.row(0), nullptr, out.cross_added.row(0), nullptr, pitch, last, blocks);
  Rows::template product<false>(in.M, in.x.row(0), out.product.row(0), pitch, blocks);
  Rows::template product<true>(in.M, in.x.row(0), out.product_added.row(0), pitch, blocks);
  Rows::template adjoint<false>(in.M, in.N, in.x.row(0), out.adjoint_twist.row(0), pitch, blocks);
  Rows::template adjoint<true>(in.M, in.N, in.x.row(0), out.adjoint_wrench.row(0), pitch, blocks);
  Rows::newton_euler(in.x.row(0), in.y.row(0), in.centre, in.ramp.data(), out.wrench.row(0), pitch, blocks);
}
void run_two(Inputs& in, Outputs& out, int last) { run_kernels<2>(in, out, last); }
void run_four(Inputs& in, Outputs& out, int last) { run_kernels<4>(in, out, last); }
#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
__attribute__((target("avx2,fma"))) void run_four_avx2(Inputs& in, Outputs& out, int last) { run_kernels<4>(in, out, last); }
#endif

struct Path {
  std::string name;
  void (*run)(Inputs&, Outputs&, int);
};
std::vector<Path> paths() {
  std::vector<Path> all{{"two at a time", run_two}, {"four at a time (baseline)", run_four}};
#ifdef LIEMBS_HIGHER_ORDER_WIDE_KERNELS
  if (wide_kernels()) all.push_back({"four at a time (AVX2, FMA)", run_four_avx2});
#endif
  return all;
}

Vec3 column3(const RowSet& set, int first_row, int k) {
  return Vec3(set.at(first_row, k), set.at(first_row + 1, k), set.at(first_row + 2, k));
}

void check_close(double value, double expected, double scale, int k) {
  INFO("coefficient " << k << ": " << value << " against " << expected);
  CHECK(std::abs(value - expected) <= 1e-14 * (k + 1) * (1.0 + scale));
}

}  // namespace

TEST_CASE("H-GRNE's coefficient rows equal their term-by-term sums on every path", "[higher-order][kernels]") {
  for (const Path& path : paths())
    for (int last = 0; last <= last_order; ++last) {
      INFO(path.name << ", coefficients 0.." << last);
      Inputs in;
      Outputs out(in);
      path.run(in, out, last);
      for (int k = 0; k <= last; ++k) {
        // Rotations: R_z^T (sign +1) and R_z (sign -1) of the pairs (0, 1) and (3, 4).
        for (const double sign : {1.0, -1.0}) {
          const RowSet& rotated = sign > 0 ? out.rotated_twist : out.rotated_wrench;
          for (const int first : {0, 3}) {
            double u = 0.0, v = 0.0;
            for (int j = 0; j <= k; ++j) {
              const double c = in.a.at(0, j), s = sign * in.a.at(1, j);
              u += c * in.x.at(first, k - j) + s * in.x.at(first + 1, k - j);
              v += c * in.x.at(first + 1, k - j) - s * in.x.at(first, k - j);
            }
            check_close(rotated.at(first, k), u, std::abs(u), k);
            check_close(rotated.at(first + 1, k), v, std::abs(v), k);
            CHECK(rotated.at(first + 2, k) == in.x.at(first + 2, k));
          }
        }
        double sum = 0.0;
        Vec3 cross = Vec3::Zero(), cross_second = Vec3::Zero();
        for (int j = 0; j <= k; ++j) {
          sum += in.a.at(2, j) * in.x.at(1, k - j);
          cross += column3(in.x, 0, j).cross(column3(in.y, 0, k - j));
          cross_second += column3(in.x, 0, j).cross(column3(in.y, 3, k - j));
        }
        check_close(out.cauchy_plus.at(0, k), in.before.at(0, k) + sum, std::abs(sum), k);
        check_close(out.cauchy_minus.at(0, k), in.before.at(0, k) - sum, std::abs(sum), k);
        const Vec3 product = in.M * column3(in.x, 0, k);
        for (int c = 0; c < 3; ++c) {
          check_close(out.cross.at(c, k), cross(c), cross.norm(), k);
          check_close(out.cross_second.at(c, k), cross_second(c), cross_second.norm(), k);
          check_close(out.cross_added.at(c, k), in.before.at(c, k) + cross(c), cross.norm(), k);
          check_close(out.product.at(c, k), product(c), product.norm(), k);
          check_close(out.product_added.at(c, k), in.before.at(c, k) + product(c), product.norm(), k);
        }
        // Adjoint maps: a twist (M top, M bottom + N top), a wrench added (M top + N bottom, M bottom).
        const Vec3 top = column3(in.x, 0, k), bottom = column3(in.x, 3, k);
        const Vec3 twist_top = in.M * top, twist_bottom = in.M * bottom + in.N * top;
        const Vec3 wrench_top = in.M * top + in.N * bottom, wrench_bottom = in.M * bottom;
        for (int c = 0; c < 3; ++c) {
          check_close(out.adjoint_twist.at(c, k), twist_top(c), twist_top.norm(), k);
          check_close(out.adjoint_twist.at(3 + c, k), twist_bottom(c), twist_bottom.norm(), k);
          check_close(out.adjoint_wrench.at(c, k), in.before.at(c, k) + wrench_top(c), wrench_top.norm(), k);
          check_close(out.adjoint_wrench.at(3 + c, k), in.before.at(3 + c, k) + wrench_bottom(c), wrench_bottom.norm(), k);
        }
        // W_k = (k+1) Pi_(k+1) + (G_k + c x F_k, F_k), Pi = x, (G, F) = y.
        const Vec3 F = column3(in.y, 3, k);
        const Vec3 moment = (k + 1) * column3(in.x, 0, k + 1) + column3(in.y, 0, k) + in.centre.cross(F);
        const Vec3 force = (k + 1) * column3(in.x, 3, k + 1) + F;
        for (int c = 0; c < 3; ++c) {
          check_close(out.wrench.at(c, k), moment(c), moment.norm(), k);
          check_close(out.wrench.at(3 + c, k), force(c), force.norm(), k);
        }
      }
    }
}

TEST_CASE("H-GRNE in body frames gives the same forces on the baseline and the AVX2 path", "[higher-order][kernels]") {
  if (!wide_kernels()) SUCCEED("this processor has no AVX2 and FMA: the baseline path only (tested above and by every H-GRNE test)");
  for (const auto& variant : testing::tree_variants())
    for (const int r : {0, 1, 2, 5, 10}) {
      INFO(variant.name << ", order " << r);
      const KinematicTree tree = compile_tree(testing::random_tree_model(4, variant.options));
      if (tree.velocity_dimension() == 0) continue;  // (the chain of fixed joints)
      const AlignedTree aligned = align_node_frames(tree);
      const TreeState state = testing::random_state(tree, 5);
      const Eigen::MatrixXd rates =
          testing::random_vector(tree.velocity_dimension() * (r + 1), 6).reshaped(tree.velocity_dimension(), r + 1);
      BodyFrameDynamics baseline(aligned.tree, aligned.axial, false), wide(aligned.tree, aligned.axial, wide_kernels());
      Eigen::MatrixXd forces_baseline, forces_wide;
      baseline.inverse(state, rates, nullptr, 0, forces_baseline);
      wide.inverse(state, rates, nullptr, 0, forces_wide);
      for (int k = 0; k <= r; ++k) {
        const double scale = forces_baseline.col(k).cwiseAbs().maxCoeff();
        INFO("coefficient " << k);
        CHECK((forces_wide.col(k) - forces_baseline.col(k)).cwiseAbs().maxCoeff() <= 1e-13 * (k + 1) * (k + 1) * (1.0 + scale));
      }
    }
}
