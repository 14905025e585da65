// The tree-order factorization M = L^T D L (tree_mass_factorization.hpp) against Eigen's
// dense Cholesky on the mass matrices of random chains and branched trees, fixed and
// floating: single solves, M^-1 and right-hand sides with the tree's sparsity; a matrix
// that is not positive definite is refused.
#include <liembs/dynamics/kinematic_tree.hpp>
#include <liembs/dynamics/tree_dynamics.hpp>
#include <liembs/dynamics/tree_mass_factorization.hpp>
#include <liembs/error.hpp>

#include <catch2/catch.hpp>

#include <derivative_checks.hpp>

#include <Eigen/Cholesky>

#include <limits>

using namespace liembs;
using namespace liembs::testing::derivative_checks;

namespace {

// related(i, j): velocities i and j are equal or one is an ancestor of the other (the base's
// six are related to everything).
Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> related_velocities(const KinematicTree& tree) {
  const int offset = tree.floating_base ? 6 : 0, nv = tree.velocity_dimension();
  Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> related = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>::Constant(nv, nv, false);
  for (int k = 0; k < nv; ++k) {
    related(k, k) = true;
    for (int c = 0; c < offset; ++c) related(k, c) = related(c, k) = true;
  }
  for (int i = 0; i < tree.dof(); ++i)
    for (int j = tree.parent[static_cast<std::size_t>(i)]; j >= 0; j = tree.parent[static_cast<std::size_t>(j)])
      related(offset + i, offset + j) = related(offset + j, offset + i) = true;
  return related;
}

}  // namespace

TEST_CASE("the tree-order factorization of M solves like a dense Cholesky", "[dynamics][derivatives]") {
  REQUIRE_BUILD_TREE_REPRESENTATIONS();
  const auto& representation = *plugins().loaded.front().second;
  for (const auto& variant : tree_variants())
    for (unsigned seed = 1; seed <= 2; ++seed) {
      INFO(variant.name << ", seed " << seed);
      const auto tree = std::make_shared<const KinematicTree>(compile_tree(random_tree_model(seed, variant.options)));
      const int nv = tree->velocity_dimension();
      Eigen::MatrixXd mass;
      representation.bind_tree(tree)->mass_matrix(random_state(*tree, 40 + seed), mass);
      const Eigen::LLT<Eigen::MatrixXd> dense(mass);
      REQUIRE(dense.info() == Eigen::Success);

      TreeMassFactorization factorization(*tree);
      REQUIRE(factorization.size() == nv);
      factorization.factorize(mass);
      const Eigen::VectorXd b = random_vector(nv, 50 + seed);
      Eigen::VectorXd x = b;
      factorization.solve_in_place(x);
      CHECK(relative_error(x, dense.solve(b)) < roundoff_tolerance);
      CHECK(relative_error(mass * x, b) < roundoff_tolerance);

      // [1 | B1 | B2], B random with the tree's sparsity (and zeros elsewhere); the first
      // block is ignored on input.
      // The blocks are padded to TreeMassFactorization::block_width columns with zeros.
      const auto related = related_velocities(*tree);
      const Eigen::Index width = TreeMassFactorization::block_width(nv);
      REQUIRE(width % 8 == 0);
      REQUIRE((width >= nv && width < nv + 8));
      Eigen::MatrixXd B(nv, 3 * nv);
      B.leftCols(nv).setIdentity();
      for (int block = 1; block < 3; ++block)
        B.middleCols(block * nv, nv) = related.select(Eigen::MatrixXd::Random(nv, nv), 0.0);
      RowMajorMatrix X = RowMajorMatrix::Zero(nv, 3 * width);
      for (int block = 0; block < 3; ++block) X.middleCols(block * width, nv) = B.middleCols(block * nv, nv);
      X.leftCols(nv).setConstant(std::numeric_limits<double>::quiet_NaN());
      factorization.inverse_and_solve_in_place(X);
      // M^-1 is given as its upper triangle.
      X.leftCols(nv) = Eigen::MatrixXd(X.leftCols(nv).selfadjointView<Eigen::Upper>());
      for (int block = 0; block < 3; ++block) {
        INFO("block " << block);
        CHECK(relative_error(Eigen::MatrixXd(X.middleCols(block * width, nv)), dense.solve(Eigen::MatrixXd(B.middleCols(block * nv, nv)))) < roundoff_tolerance);
        CHECK(X.middleCols(block * width + nv, width - nv).isZero(0.0));  // the padding
      }
      CHECK(relative_error(Eigen::MatrixXd(X.leftCols(nv)) * mass, Eigen::MatrixXd::Identity(nv, nv)) < roundoff_tolerance);

      // Not positive definite: refused, whichever velocity shows it.
      if (nv == 0) continue;
      Eigen::MatrixXd indefinite = mass;
      indefinite(nv - 1, nv - 1) = -1.0;
      CHECK_THROWS_AS(factorization.factorize(indefinite), SimulationError);
      indefinite = mass;
      indefinite(0, 0) = 0.0;
      CHECK_THROWS_WITH(factorization.factorize(indefinite), Catch::Contains("mass matrix is not positive definite"));
    }
}
