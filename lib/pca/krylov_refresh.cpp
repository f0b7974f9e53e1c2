#include "krylov_refresh.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include <Eigen/Cholesky>

#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::pca::detail {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// A column that keeps less than this fraction of its norm through Gram–Schmidt is numerically in
// the span already; its direction is rounding noise, so it is replaced. Two Gram–Schmidt passes
// leave a column orthogonal to working precision as long as its norm drops by less than ~1/ε
// ("twice is enough", Giraud et al. 2005); 1e-10 keeps a wide margin from that limit.
constexpr double kDeficientColumn = 1e-10;
// Seed of the pseudo-random vectors that pad a short start and replace deficient columns. Fixed,
// so a refresh is deterministic and its start never depends on the data.
constexpr std::uint64_t kPadSeed = 0x5eed0f5bace;
// Columns of the Krylov basis before a thick restart (unless max_blocks is 2 anyway). Each new block
// is orthogonalised against all s columns held, ~8·d·s·b flops in thin products that run slower than
// the block product (2·d²·b), and Rayleigh–Ritz grows as s³. At k = 32 (b = 37) six blocks (s = 222)
// made these cost as much as the products: the private learner's CPU a release in bench_scale at
// d = 2048, k = 32 (one run each) was 141 ms with 2 blocks, 103 with 3 (s = 111), 121 with 4 and
// 125 with 6; at d = 784, k = 32, 32.6 ms with 6 and 22.3 with 3. Up to k ≈ 15 (b ≤ 20) the cap
// does not bind and max_blocks = 6 holds.
constexpr Index kMaxKrylovColumns = 120;
// Below this tolerance the block products stay in double precision (see RefreshOptions::single_precision).
constexpr double kSinglePrecisionFloor = 1e-5;

void fill_random(Eigen::Ref<VectorXd> x, privacy::NoiseSource& rng) {
  for (Index i = 0; i < x.size(); ++i) x(i) = rng.gaussian();
}

// Makes the columns of z orthonormal and orthogonal to the (orthonormal) columns of q: two block
// classical Gram–Schmidt passes against q (matrix products), then modified Gram–Schmidt, twice,
// inside z. A column numerically in the span already (kDeficientColumn) is replaced by a fixed
// pseudo-random vector treated the same way: whatever it adds to a Rayleigh–Ritz space is harmless.
// If the caller has already projected z against q twice, it passes the column norms from before that
// projection as `projected_from` and the block passes are skipped.
void orthonormalize(const Eigen::Ref<const MatrixXd>& q, Eigen::Ref<MatrixXd> z, privacy::NoiseSource& rng,
                    const VectorXd& projected_from = VectorXd()) {
  VectorXd before = projected_from;
  if (before.size() == 0) {
    before = z.colwise().norm().transpose();
    if (q.cols() > 0)
      for (int pass = 0; pass < 2; ++pass) z.noalias() -= q * (q.transpose() * z);
  }
  for (Index j = 0; j < z.cols(); ++j) {
    double reference = before(j);
    for (int attempt = 0;; ++attempt) {
      for (int pass = 0; pass < 2; ++pass)
        if (j > 0) z.col(j).noalias() -= z.leftCols(j) * (z.leftCols(j).transpose() * z.col(j));
      const double norm = z.col(j).norm();
      if (norm > kDeficientColumn * reference && norm > 0) {
        z.col(j) /= norm;
        break;
      }
      if (attempt == 8)  // cannot happen while q.cols() + z.cols() ≤ d; guard against a logic error
        throw std::logic_error("subspace: no independent direction left to orthonormalize");
      fill_random(z.col(j), rng);
      if (q.cols() > 0)
        for (int pass = 0; pass < 2; ++pass) z.col(j).noalias() -= q * (q.transpose() * z.col(j));
      reference = z.col(j).norm();
    }
  }
}

// Whether the block products run in single precision (see RefreshOptions::single_precision).
bool uses_single_precision(const RefreshOptions& o) {
  return o.single_precision && o.tolerance >= kSinglePrecisionFloor &&
         (o.variance_tolerance == 0 || o.variance_tolerance >= kSinglePrecisionFloor);
}

}  // namespace

TopEigen full_top(const Eigen::Ref<const MatrixXd>& c, Index count) {
  const linalg::SymmetricEigenSolver es(c);
  if (es.info() != Eigen::Success)
    throw std::runtime_error("top_k_eigen: SelfAdjointEigenSolver did not converge");
  TopEigen t;
  t.values = es.eigenvalues().tail(count).reverse();
  t.vectors = es.eigenvectors().rightCols(count).rowwise().reverse();
  return t;
}

Eigen::MatrixXf* float_copy(const RefreshOptions& o, KrylovWorkspace& ws, bool full_solve) {
  return !full_solve && uses_single_precision(o) ? &ws.c_single : nullptr;
}

TopEigen krylov_refresh(const DoubleMatrix& c, double frobenius,
                        const Eigen::Ref<const MatrixXd>& start, Index k, const RefreshOptions& o,
                        RefreshStats& stats, MatrixXd& block, KrylovWorkspace& ws, double residual_floor) {
  const Index d = c.rows();
  // At least one column beyond the k wanted ones: it carries the fresh random direction (below).
  const Index b = std::min(d, k + std::max<Index>(o.oversample, 1));
  // Blocks held before a restart: at most o.max_blocks, never more than d columns, at most
  // s ≈ 0.75·(d²b)^{1/3} columns so that the Rayleigh–Ritz eigenproblem (~9s³ flops, done after every
  // block) stays within about twice the flops of the block product (2d²b) — at d = 784 this does not
  // bind; at d = 128 it keeps the small eigenproblems from costing more than the full solve — and at
  // most kMaxKrylovColumns (see there).
  const double cost_cap = 0.75 * std::cbrt(static_cast<double>(d) * static_cast<double>(d) * static_cast<double>(b));
  const Index max_blocks = std::min({o.max_blocks, d / b, std::max<Index>(2, static_cast<Index>(cost_cap) / b),
                                     std::max<Index>(2, kMaxKrylovColumns / b)});
  ++stats.refreshes;
  stats.last_iterations = 0;
  stats.last_residual = 0;
  auto full = [&] {
    ++stats.full_solves;
    TopEigen all = c.top(b);
    block = all.vectors;
    return TopEigen{all.vectors.leftCols(k), all.values.head(k)};
  };
  if (max_blocks < 2) return full();  // d < 2(k + p): no room for a Krylov space; the full solve is cheap

  // Pseudo-random vectors from a fixed seed advanced by the refresh count: deterministic, never
  // data-dependent, and a different direction at every refresh.
  privacy::SeededNoiseSource rng(kPadSeed + stats.refreshes);
  const bool single = uses_single_precision(o);
  // Krylov basis Q and W = ĈQ, block by block, and the Rayleigh quotient H = QᵀĈQ.
  ws.q.resize(d, max_blocks * b);
  if (!single) ws.w.resize(d, max_blocks * b);  // single precision: W is ws.w_single's
  ws.h.resize(max_blocks * b, max_blocks * b);
  MatrixXd& q = ws.q;
  MatrixXd& w = ws.w;
  MatrixXd& h = ws.h;
  if (single) {
    ws.q_single.resize(d, max_blocks * b);
    ws.w_single.resize(d, max_blocks * b);
  }
  auto matvec = [&](Index first) {  // W_j = Ĉ·Q_j, then H's new block column and row
    if (single) {
      ws.q_single.middleCols(first, b) = q.middleCols(first, b).cast<float>();
      linalg::symmetric_product(ws.c_single, ws.q_single.middleCols(first, b), ws.w_single.middleCols(first, b));
      h.block(0, first, first + b, b) =
          (ws.q_single.leftCols(first + b).transpose() * ws.w_single.middleCols(first, b)).cast<double>();
    } else {
      c.product(q.middleCols(first, b), w.middleCols(first, b));
      h.block(0, first, first + b, b).noalias() = q.leftCols(first + b).transpose() * w.middleCols(first, b);
    }
    h.block(first, 0, b, first) = h.block(0, first, first, b).transpose();
    ++stats.last_iterations;
  };

  // Start block: the first b − 1 columns of `start`, padded with pseudo-random ones; the last column
  // is always random. Why: if the start spans an invariant subspace of Ĉ (exact eigenvectors, as
  // when a new row is orthogonal to the current top k), its Krylov space is that subspace and a new,
  // larger eigenvalue elsewhere could never be found; its residuals would be 0 and the old answer
  // accepted. A random direction has a component on every eigenvector (with probability 1).
  const Index used = std::min(b - 1, start.cols());
  q.leftCols(used) = start.leftCols(used);
  for (Index j = used; j < b; ++j) fill_random(q.col(j), rng);
  orthonormalize(q.leftCols(0), q.leftCols(b), rng);
  matvec(0);

  // ‖Ĉ‖₂ ≥ ‖Ĉ‖_F/√d, and ≥ every |Ritz value|: the larger of the two is a lower bound (see subspace.hpp).
  const double frobenius_bound = frobenius / std::sqrt(static_cast<double>(d));
  Index blocks = 1;
  for (;;) {
    const Index s = blocks * b, last = s - b;
    // F = (I − QQᵀ)W_last, twice (QᵀW_last is H's last block column). In exact arithmetic
    // ĈQ = QH + F·[0 … 0 I], so the Ritz residual of y = Q·s is F·s_last: its norm comes from the
    // b × b Gram matrix FᵀF, without forming y.
    MatrixXd f;
    VectorXd f_norms;
    if (single) {
      Eigen::MatrixXf projected = ws.w_single.middleCols(last, b);
      f_norms = projected.colwise().norm().transpose().cast<double>();
      const auto qf = ws.q_single.leftCols(s);
      projected.noalias() -= qf * h.block(0, last, s, b).cast<float>();
      projected.noalias() -= qf * (qf.transpose() * projected);
      f = projected.cast<double>();
    } else {
      f = w.middleCols(last, b);
      f_norms = f.colwise().norm().transpose();
      f.noalias() -= q.leftCols(s) * h.block(0, last, s, b);
      f.noalias() -= q.leftCols(s) * (q.leftCols(s).transpose() * f);
    }

    // Rayleigh–Ritz (an s × s eigenproblem, up to ~the cost of a block product at s = 90) only where
    // it can end the refresh or is needed for a restart: at every second block and when the basis is
    // full. Never on the start block alone: its random column must be expanded at least once before
    // an answer is accepted (see the start block above), or an invariant start would still pass.
    // Skipping it elsewhere delays the stop by at most one block product (max_iterations is checked
    // here too); the Krylov expansion itself never needs it.
    const bool check = blocks % 2 == 0 || blocks == max_blocks;
    if (check) {
      const linalg::SymmetricEigenSolver es(h.topLeftCorner(s, s));
      const VectorXd theta = es.eigenvalues().tail(b).reverse();                  // top b, descending
      const MatrixXd ritz = es.eigenvectors().rightCols(b).rowwise().reverse();  // s × b
      const double scale = std::max(frobenius_bound, es.eigenvalues().cwiseAbs().maxCoeff());

      const MatrixXd gram = f.transpose() * f;
      const MatrixXd s_last = ritz.bottomRows(b).leftCols(k);
      const VectorXd implicit = (s_last.array() * (gram * s_last).array()).colwise().sum().transpose();
      const VectorXd implicit_norms = implicit.cwiseMax(0.0).cwiseSqrt();
      // The stopping rule (header): every residual ≤ tolerance·‖Ĉ‖, or, if asked, Σ residuals ≤
      // variance_tolerance·|Σ top-k Ritz values|.
      const double wanted_sum = std::abs(theta.head(k).sum());
      auto accept = [&](const VectorXd& norms) {
        return norms.maxCoeff() <= o.tolerance * scale ||
               (o.variance_tolerance > 0 && norms.sum() <= o.variance_tolerance * wanted_sum) ||
               norms.sum() <= residual_floor;
      };

      MatrixXd y;
      if (accept(implicit_norms)) {
        // Confirm with the explicit residuals: the answer always meets the test.
        y.noalias() = q.leftCols(s) * ritz;
        VectorXd norms, values = theta.head(k);
        MatrixXd confirmed;  // single precision: V made orthonormal and turned to A's Ritz vectors (below)
        if (single) {
          // In double precision, so the certificate is about Ĉ itself, not its float rounding:
          // R = ĈV − V(VᵀĈV) with A = VᵀĈV in place of Θ (A is Θ up to the float rounding of W; the
          // bound in the header holds with tr A and this R for any orthonormal V).
          // Q's blocks were projected against each other in single precision, so V is orthonormal
          // to ~1e-7 only: made orthonormal in double first (Cholesky QR, twice), as the bound needs.
          MatrixXd v = y.leftCols(k);
          bool orthonormal = true;
          for (int pass = 0; pass < 2 && orthonormal; ++pass) {
            const Eigen::LLT<MatrixXd> gram_factor(v.transpose() * v);
            orthonormal = gram_factor.info() == Eigen::Success;
            if (orthonormal) gram_factor.matrixU().solveInPlace<Eigen::OnTheRight>(v);
          }
          norms.setConstant(k, std::numeric_limits<double>::infinity());
          if (orthonormal) {
            MatrixXd cv(d, k);
            c.product(v, cv);
            const MatrixXd a = v.transpose() * cv;
            // The values returned are A's eigenvalues and V turns to its eigenvectors (Rayleigh–Ritz
            // on span V in double): Θ carries W's float rounding (~1e-7 relative) and could exceed
            // Ĉ's own eigenvalues; these cannot (Cauchy interlacing), and tr A is what is certified.
            // A rotation inside span V leaves tr A and ‖R‖_* unchanged, so the certificate stands.
            const linalg::SymmetricEigenSolver small(0.5 * (a + a.transpose()));
            values = small.eigenvalues().reverse();
            const VectorXd residuals = (cv - v * a).colwise().norm().transpose();
            if (residuals.maxCoeff() <= o.tolerance * scale ||
                (o.variance_tolerance > 0 && residuals.sum() <= o.variance_tolerance * std::abs(a.trace())) ||
                residuals.sum() <= residual_floor) {
              norms = residuals;
              confirmed = v * small.eigenvectors().rowwise().reverse();
            }
          }
        } else {
          // ĈY = W·S, so the residuals ĈY − YΘ cost no product.
          MatrixXd r = w.leftCols(s) * ritz.leftCols(k);
          r -= y.leftCols(k) * theta.head(k).asDiagonal();
          norms = r.colwise().norm().transpose();
        }
        if (accept(norms)) {
          stats.last_residual = norms.maxCoeff() / scale;
          stats.iterations += static_cast<std::uint64_t>(stats.last_iterations);
          stats.matvecs += static_cast<std::uint64_t>(stats.last_iterations * b);
          if (confirmed.size() > 0) y.leftCols(k) = confirmed;
          block = std::move(y);
          return TopEigen{block.leftCols(k), values};
        }
      }
      if (stats.last_iterations >= o.max_iterations) {
        stats.iterations += static_cast<std::uint64_t>(stats.last_iterations);
        stats.matvecs += static_cast<std::uint64_t>(stats.last_iterations * b);
        ++stats.fallbacks;
        const int iterations = stats.last_iterations;
        TopEigen result = full();
        stats.last_iterations = iterations;
        return result;
      }
      if (blocks == max_blocks) {
        // Thick restart: continue from the b best Ritz vectors, whose products ĈY = W·S are known.
        if (y.cols() == 0) y.noalias() = q.leftCols(s) * ritz;
        MatrixXd cy;
        if (single) {
          const Eigen::MatrixXf cy_single = ws.w_single.leftCols(s) * ritz.cast<float>();
          cy = cy_single.cast<double>();
          ws.w_single.leftCols(b) = cy_single;
          ws.q_single.leftCols(b) = y.cast<float>();
        } else {
          cy = w.leftCols(s) * ritz;
          w.leftCols(b) = cy;
        }
        q.leftCols(b) = y;
        h.topLeftCorner(b, b).noalias() = y.transpose() * cy;
        h.topLeftCorner(b, b) = (0.5 * (h.topLeftCorner(b, b) + h.topLeftCorner(b, b).transpose())).eval();
        blocks = 1;
        ++stats.restarts;
        continue;
      }
    }
    // Next block: the orthonormalised F, the new direction of the block Krylov space.
    q.middleCols(s, b) = f;
    orthonormalize(q.leftCols(s), q.middleCols(s, b), rng, f_norms);
    matvec(s);
    ++blocks;
  }
}

}  // namespace dpstream::pca::detail
