// Coherence measures (non-private diagnostics): μ (HR13 Def 2.7), μ_k (Def C.1), μ0 (HR12 Def 5.5),
// C-coherence (HR12 Def 5.1). The private doubling search is in private_power_iteration.cpp.
#include "dpstream/pca/coherence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/subspace.hpp"  // kSymmetryTolerance
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "matrix_checks.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using base::format_value;

namespace {

constexpr double kClusterTolerance = 1e-9;    // relative gap below which values count as repeated
constexpr double kEps = std::numeric_limits<double>::epsilon();

using detail::require_finite_matrix;

bool is_symmetric(const Eigen::Ref<const MatrixXd>& a) {
  if (a.rows() != a.cols()) return false;
  return (a - a.transpose()).cwiseAbs().maxCoeff() <= kSymmetryTolerance * a.cwiseAbs().maxCoeff();
}

// A Haar-distributed d × d orthogonal matrix from a fixed seed (diagnostics must be reproducible).
MatrixXd haar_rotation(Index d) {
  privacy::SeededNoiseSource source(0x6d75636f68ULL + static_cast<std::uint64_t>(d));
  MatrixXd g(d, d);
  source.fill_gaussian(std::span<double>(g.data(), static_cast<std::size_t>(g.size())), 1.0);
  return linalg::HouseholderQr(g).q_nonnegative_r();  // R's diagonal sign-fixed: Q exactly Haar
}

double max_abs2(const MatrixXd& m) { return m.size() == 0 ? 0.0 : m.cwiseAbs2().maxCoeff(); }

// Clusters of consecutive values within kClusterTolerance·scale: [begin, end) index ranges.
std::vector<std::pair<Index, Index>> clusters(const VectorXd& values, Index begin, Index end, double scale) {
  std::vector<std::pair<Index, Index>> out;
  Index start = begin;
  for (Index i = begin + 1; i <= end; ++i)
    if (i == end || std::abs(values(i) - values(i - 1)) > kClusterTolerance * scale) {
      out.emplace_back(start, i);
      start = i;
    }
  return out;
}

// One cluster's contribution: max(rows_u·‖U_c R‖∞², rows_v·‖V_c R‖∞²) for R = I, and for a Haar R if
// asked (same R for both sides: σ u vᵀ pairs must rotate together), the smaller of the two.
double cluster_score(const MatrixXd& uc, const MatrixXd* vc, EigenbasisChoice basis) {
  const auto score = [&](const MatrixXd& u, const MatrixXd* v) {
    double s = static_cast<double>(u.rows()) * max_abs2(u);
    if (v != nullptr) s = std::max(s, static_cast<double>(v->rows()) * max_abs2(*v));
    return s;
  };
  double best = score(uc, vc);
  if (basis == EigenbasisChoice::best_of_solver_and_random && uc.cols() > 1) {
    const MatrixXd r = haar_rotation(uc.cols());
    const MatrixXd ur = uc * r;
    if (vc != nullptr) {
      const MatrixXd vr = *vc * r;
      best = std::min(best, score(ur, &vr));
    } else {
      best = std::min(best, score(ur, nullptr));
    }
  }
  return best;
}

// Symmetric: eigenpairs ordered by |λ| descending (the singular vectors).
struct AbsEigen {
  MatrixXd vectors;
  VectorXd abs_values;
};
AbsEigen eigen_by_magnitude(const Eigen::Ref<const MatrixXd>& a) {
  linalg::SymmetricEigenSolver solver(a);
  const Index n = a.rows();
  std::vector<Index> order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](Index i, Index j) {
    return std::abs(solver.eigenvalues()(i)) > std::abs(solver.eigenvalues()(j));
  });
  AbsEigen out{MatrixXd(n, n), VectorXd(n)};
  for (Index j = 0; j < n; ++j) {
    out.vectors.col(j) = solver.eigenvectors().col(order[static_cast<std::size_t>(j)]);
    out.abs_values(j) = std::abs(solver.eigenvalues()(order[static_cast<std::size_t>(j)]));
  }
  return out;
}

Index rank_of(const VectorXd& singular_values_desc, Index m, Index n) {
  if (singular_values_desc.size() == 0 || singular_values_desc(0) <= 0.0) return 0;
  const double tol = static_cast<double>(std::max(m, n)) * kEps * singular_values_desc(0);
  Index r = 0;
  while (r < singular_values_desc.size() && singular_values_desc(r) > tol) ++r;
  return r;
}

}  // namespace

double mu_coherence(const Eigen::Ref<const MatrixXd>& a, EigenbasisChoice basis) {
  require_finite_matrix("mu_coherence", a);
  if (is_symmetric(a)) {
    linalg::SymmetricEigenSolver solver(a);
    const VectorXd& lambda = solver.eigenvalues();  // ascending: repeated values are adjacent
    const double scale = lambda.cwiseAbs().maxCoeff();
    double mu = 0.0;
    for (const auto& [b, e] : clusters(lambda, 0, lambda.size(), scale))
      mu = std::max(mu, cluster_score(solver.eigenvectors().middleCols(b, e - b), nullptr, basis));
    return mu;
  }
  const Index m = a.rows(), n = a.cols();
  // Jacobi, not divide and conquer: the library's one SVD instantiation (decompositions.hpp), and it
  // resolves the small singular values the rank is read from. Eigen's BDCSVD here cost 30 s of
  // compile time (-O3) for diagnostics of test-sized matrices.
  const linalg::JacobiSvd svd(a, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const VectorXd& s = svd.singular_values();
  const Index r = rank_of(s, m, n);
  double mu = 0.0;
  // Nonzero singular values: U and V columns rotate together within a cluster.
  for (const auto& [b, e] : clusters(s, 0, r, r > 0 ? s(0) : 0.0)) {
    const MatrixXd vc = svd.v().middleCols(b, e - b);
    mu = std::max(mu, cluster_score(svd.u().middleCols(b, e - b), &vc, basis));
  }
  // Null spaces (σ = 0, and the extra columns of the longer side): any orthonormal bases, chosen apart.
  if (r < m) mu = std::max(mu, cluster_score(svd.u().rightCols(m - r), nullptr, basis));
  if (r < n) mu = std::max(mu, cluster_score(svd.v().rightCols(n - r), nullptr, basis));
  return mu;
}

double top_k_coherence(const Eigen::Ref<const MatrixXd>& a, Index k) {
  require_finite_matrix("top_k_coherence", a);
  const Index m = a.rows(), n = a.cols();
  base::require_rank("top_k_coherence", k, std::min(m, n));
  if (is_symmetric(a)) {
    const AbsEigen e = eigen_by_magnitude(a);
    return static_cast<double>(n) * max_abs2(e.vectors.leftCols(k));
  }
  const linalg::JacobiSvd svd(a, Eigen::ComputeThinU | Eigen::ComputeThinV);
  return std::max(static_cast<double>(m) * max_abs2(svd.u().leftCols(k)),
                  static_cast<double>(n) * max_abs2(svd.v().leftCols(k)));
}

double mu0_coherence(const Eigen::Ref<const MatrixXd>& basis) {
  require_finite_matrix("mu0_coherence", basis);
  const Index m = basis.rows(), r = basis.cols();
  const double off = (basis.transpose() * basis - MatrixXd::Identity(r, r)).cwiseAbs().maxCoeff();
  if (!(off <= 1e-8))
    throw InvalidParameter("mu0_coherence: basis must have orthonormal columns: max|U^T U - I| = " + format_value(off) +
                           " exceeds 1e-8");
  return static_cast<double>(m) / static_cast<double>(r) * basis.rowwise().squaredNorm().maxCoeff();
}

double mu0_coherence_of(const Eigen::Ref<const MatrixXd>& a, Index rank) {
  require_finite_matrix("mu0_coherence_of", a);
  const Index m = a.rows(), n = a.cols();
  if (rank < 0 || rank > std::min(m, n))
    throw InvalidParameter("mu0_coherence_of: rank must be in [0, " + std::to_string(std::min(m, n)) + "], got " +
                           std::to_string(rank));
  MatrixXd u;
  VectorXd s;
  if (is_symmetric(a)) {
    AbsEigen e = eigen_by_magnitude(a);
    u = std::move(e.vectors);
    s = std::move(e.abs_values);
  } else {
    const linalg::JacobiSvd svd(a, Eigen::ComputeThinU);
    u = svd.u();
    s = svd.singular_values();
  }
  const Index r = rank > 0 ? rank : rank_of(s, m, n);
  if (r == 0) throw InvalidParameter("mu0_coherence_of: the matrix is zero (rank 0)");
  return mu0_coherence(u.leftCols(r));
}

double c_coherence(const Eigen::Ref<const MatrixXd>& a) {
  require_finite_matrix("c_coherence", a);
  const double frobenius = a.norm();
  if (!(frobenius > 0.0)) throw InvalidParameter("c_coherence: the matrix is zero");
  return std::sqrt(static_cast<double>(a.rows())) * std::sqrt(a.rowwise().squaredNorm().maxCoeff()) / frobenius;
}

Index numerical_rank(const Eigen::Ref<const MatrixXd>& a) {
  require_finite_matrix("numerical_rank", a);
  if (is_symmetric(a)) {
    VectorXd s = linalg::SymmetricEigenSolver(a, Eigen::EigenvaluesOnly).eigenvalues().cwiseAbs();
    std::sort(s.data(), s.data() + s.size(), std::greater<double>());
    return rank_of(s, a.rows(), a.cols());
  }
  return rank_of(linalg::singular_values(a), a.rows(), a.cols());
}

}  // namespace dpstream::pca
