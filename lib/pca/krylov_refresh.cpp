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
// made these cost as much as the products; three (s = 111) were the cheapest in bench_scale at
// d = 784 and 2048 (docs/performance.md, Kernels). Up to k ≈ 15 (b ≤ 20) the cap does not bind and
// max_blocks = 6 holds.
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

// Columns of a block and blocks held before a thick restart.
struct BasisShape {
  Index block;
  Index max_blocks;
};

BasisShape basis_shape(Index d, Index k, const RefreshOptions& o) {
  // At least one column beyond the k wanted ones: it carries the fresh random direction (Krylov::start).
  const Index b = std::min(d, k + std::max<Index>(o.oversample, 1));
  // Blocks held before a restart: at most o.max_blocks, never more than d columns, at most
  // s ≈ 0.75·(d²b)^{1/3} columns so that the Rayleigh–Ritz eigenproblem (~9s³ flops, done after every
  // block) stays within about twice the flops of the block product (2d²b) — at d = 784 this does not
  // bind; at d = 128 it keeps the small eigenproblems from costing more than the full solve — and at
  // most kMaxKrylovColumns (see there).
  const double cost_cap = 0.75 * std::cbrt(static_cast<double>(d) * static_cast<double>(d) * static_cast<double>(b));
  return {b, std::min({o.max_blocks, d / b, std::max<Index>(2, static_cast<Index>(cost_cap) / b),
                       std::max<Index>(2, kMaxKrylovColumns / b)})};
}

// The stopping rule (subspace.hpp): every residual ≤ tolerance·scale, or, if asked, Σ residuals ≤
// variance_tolerance·captured (the |Σ| of the values certified), or Σ residuals ≤ the caller's floor.
struct StoppingRule {
  const RefreshOptions& o;
  double residual_floor;
  bool met(const VectorXd& norms, double scale, double captured) const {
    return norms.maxCoeff() <= o.tolerance * scale ||
           (o.variance_tolerance > 0 && norms.sum() <= o.variance_tolerance * captured) ||
           norms.sum() <= residual_floor;
  }
};

// The top b Ritz pairs of the basis's first s columns, descending, and the lower bound on ‖Ĉ‖₂ the
// tolerance is relative to: ‖Ĉ‖₂ ≥ ‖Ĉ‖_F/√d, and ≥ every |Ritz value| (see subspace.hpp).
struct RitzPairs {
  VectorXd values;   // b
  MatrixXd vectors;  // s × b, in the basis's coordinates
  double scale;
};

// What an accepted refresh returns: the b Ritz vectors (the top k certified), the top k values and
// their residual norms. No residuals: not accepted.
struct Answer {
  MatrixXd block;
  VectorXd values;
  VectorXd residuals;
};

// Rayleigh–Ritz on span V in double precision, for bases built in single precision: R = ĈV − V(VᵀĈV)
// with A = VᵀĈV in place of Θ (A is Θ up to the float rounding of W; the bound in subspace.hpp holds
// with tr A and this R for any orthonormal V), so the certificate is about Ĉ itself, not its float
// rounding. V is made orthonormal in double first (Cholesky QR, twice), as the bound needs: the
// basis's blocks were projected against each other in single precision, orthonormal to ~1e-7 only.
// The values are A's eigenvalues and V turns to its eigenvectors: Θ carries W's float rounding
// (~1e-7 relative) and could exceed Ĉ's own eigenvalues; these cannot (Cauchy interlacing), and tr A
// is what is certified. A rotation inside span V leaves tr A and ‖R‖_* unchanged, so the certificate
// stands. Empty (no residuals) unless V was orthonormalised and the rule holds with tr A.
Answer certify_in_double(const DoubleMatrix& c, MatrixXd v, const StoppingRule& rule, double scale) {
  bool orthonormal = true;
  for (int pass = 0; pass < 2 && orthonormal; ++pass) {
    const Eigen::LLT<MatrixXd> gram_factor(v.transpose() * v);
    orthonormal = gram_factor.info() == Eigen::Success;
    if (orthonormal) gram_factor.matrixU().solveInPlace<Eigen::OnTheRight>(v);
  }
  if (!orthonormal) return {};
  MatrixXd cv(c.rows(), v.cols());
  c.product(v, cv);
  const MatrixXd a = v.transpose() * cv;
  VectorXd residuals = (cv - v * a).colwise().norm().transpose();
  if (!rule.met(residuals, scale, std::abs(a.trace()))) return {};
  const linalg::SymmetricEigenSolver small(0.5 * (a + a.transpose()));
  return {v * small.eigenvectors().rowwise().reverse(), small.eigenvalues().reverse(), std::move(residuals)};
}

// One refresh's block Krylov basis in the workspace's buffers: Q (d × max_blocks·b, double; in single
// precision also its float copy), W = ĈQ (float in single precision, else double) and the Rayleigh
// quotient H = QᵀĈQ, filled block by block.
class Krylov {
 public:
  Krylov(const DoubleMatrix& c, KrylovWorkspace& ws, BasisShape shape, bool single, RefreshStats& stats)
      : c_(c), ws_(ws), b_(shape.block), single_(single), stats_(stats) {
    const Index d = c.rows(), columns = shape.max_blocks * b_;
    ws.q.resize(d, columns);
    if (!single) ws.w.resize(d, columns);  // single precision: W is ws.w_single's
    ws.h.resize(columns, columns);
    if (single) {
      ws.q_single.resize(d, columns);
      ws.w_single.resize(d, columns);
    }
  }

  // The start block: the first b − 1 columns of `start`, padded with pseudo-random ones; the last
  // column is always random. Why: if the start spans an invariant subspace of Ĉ (exact eigenvectors,
  // as when a new row is orthogonal to the current top k), its Krylov space is that subspace and a
  // new, larger eigenvalue elsewhere could never be found; its residuals would be 0 and the old answer
  // accepted. A random direction has a component on every eigenvector (with probability 1).
  void start(const Eigen::Ref<const MatrixXd>& start, privacy::NoiseSource& rng) {
    const Index used = std::min(b_ - 1, start.cols());
    ws_.q.leftCols(used) = start.leftCols(used);
    for (Index j = used; j < b_; ++j) fill_random(ws_.q.col(j), rng);
    orthonormalize(ws_.q.leftCols(0), ws_.q.leftCols(b_), rng);
    multiply(0);
  }

  // F = (I − QQᵀ)W_last of the basis's first s columns, twice (QᵀW_last is H's last block column),
  // and the norms of W_last's columns before the projection. In exact arithmetic ĈQ = QH + F·[0 … 0 I],
  // so the Ritz residual of y = Q·s is F·s_last: its norm comes from the b × b Gram matrix FᵀF,
  // without forming y.
  void residual_block(Index s, MatrixXd& f, VectorXd& f_norms) const {
    const Index last = s - b_;
    if (single_) {
      Eigen::MatrixXf projected = ws_.w_single.middleCols(last, b_);
      f_norms = projected.colwise().norm().transpose().cast<double>();
      const auto qf = ws_.q_single.leftCols(s);
      projected.noalias() -= qf * ws_.h.block(0, last, s, b_).cast<float>();
      projected.noalias() -= qf * (qf.transpose() * projected);
      f = projected.cast<double>();
    } else {
      f = ws_.w.middleCols(last, b_);
      f_norms = f.colwise().norm().transpose();
      f.noalias() -= ws_.q.leftCols(s) * ws_.h.block(0, last, s, b_);
      f.noalias() -= ws_.q.leftCols(s) * (ws_.q.leftCols(s).transpose() * f);
    }
  }

  // Appends the orthonormalised F (residual_block) as the next block, the new direction of the block
  // Krylov space, and its product.
  void append(Index s, const MatrixXd& f, const VectorXd& f_norms, privacy::NoiseSource& rng) {
    ws_.q.middleCols(s, b_) = f;
    orthonormalize(ws_.q.leftCols(s), ws_.q.middleCols(s, b_), rng, f_norms);
    multiply(s);
  }

  RitzPairs ritz_pairs(Index s, double frobenius_bound) const {
    const linalg::SymmetricEigenSolver es(ws_.h.topLeftCorner(s, s));
    return {es.eigenvalues().tail(b_).reverse(), es.eigenvectors().rightCols(b_).rowwise().reverse(),
            std::max(frobenius_bound, es.eigenvalues().cwiseAbs().maxCoeff())};
  }

  // The answer if the top k Ritz pairs of the first s columns meet the rule: first by their implicit
  // residuals (from F), then confirmed explicitly, so the answer always meets the test — in double
  // precision (certify_in_double) if the basis is single, else ĈY = W·S, so the residuals ĈY − YΘ
  // cost no product. y: the Ritz vectors Q·S, once formed (a restart reuses them).
  Answer accept(Index s, Index k, const RitzPairs& r, const MatrixXd& f, const StoppingRule& rule, MatrixXd& y) const {
    const double wanted_sum = std::abs(r.values.head(k).sum());
    const MatrixXd gram = f.transpose() * f;
    const MatrixXd s_last = r.vectors.bottomRows(b_).leftCols(k);
    const VectorXd implicit = (s_last.array() * (gram * s_last).array()).colwise().sum().transpose();
    if (!rule.met(implicit.cwiseMax(0.0).cwiseSqrt(), r.scale, wanted_sum)) return {};
    y.noalias() = ws_.q.leftCols(s) * r.vectors;
    Answer answer;
    if (single_) {
      answer = certify_in_double(c_, y.leftCols(k), rule, r.scale);
      if (answer.residuals.size() == 0) return {};
    } else {
      MatrixXd residuals = ws_.w.leftCols(s) * r.vectors.leftCols(k);
      residuals -= y.leftCols(k) * r.values.head(k).asDiagonal();
      answer.residuals = residuals.colwise().norm().transpose();
      answer.values = r.values.head(k);
    }
    if (!rule.met(answer.residuals, r.scale, wanted_sum)) return {};
    if (answer.block.size() > 0) y.leftCols(k) = answer.block;  // the certified vectors, rotated
    answer.block = std::move(y);
    return answer;
  }

  // Thick restart: the basis continues from the b best Ritz vectors y = Q·S (formed here unless
  // accept() did), whose products ĈY = W·S are known.
  void restart(Index s, const MatrixXd& ritz, MatrixXd& y) {
    if (y.cols() == 0) y.noalias() = ws_.q.leftCols(s) * ritz;
    MatrixXd cy;
    if (single_) {
      const Eigen::MatrixXf cy_single = ws_.w_single.leftCols(s) * ritz.cast<float>();
      cy = cy_single.cast<double>();
      ws_.w_single.leftCols(b_) = cy_single;
      ws_.q_single.leftCols(b_) = y.cast<float>();
    } else {
      cy = ws_.w.leftCols(s) * ritz;
      ws_.w.leftCols(b_) = cy;
    }
    ws_.q.leftCols(b_) = y;
    auto h = ws_.h.topLeftCorner(b_, b_);
    h.noalias() = y.transpose() * cy;
    h = (0.5 * (h + h.transpose())).eval();
  }

 private:
  // W_j = Ĉ·Q_j for the block at column `first`, then H's new block column and row.
  void multiply(Index first) {
    MatrixXd& q = ws_.q;
    MatrixXd& h = ws_.h;
    if (single_) {
      ws_.q_single.middleCols(first, b_) = q.middleCols(first, b_).cast<float>();
      linalg::symmetric_product(ws_.c_single, ws_.q_single.middleCols(first, b_), ws_.w_single.middleCols(first, b_));
      h.block(0, first, first + b_, b_) =
          (ws_.q_single.leftCols(first + b_).transpose() * ws_.w_single.middleCols(first, b_)).cast<double>();
    } else {
      c_.product(q.middleCols(first, b_), ws_.w.middleCols(first, b_));
      h.block(0, first, first + b_, b_).noalias() = q.leftCols(first + b_).transpose() * ws_.w.middleCols(first, b_);
    }
    h.block(first, 0, b_, first) = h.block(0, first, first, b_).transpose();
    ++stats_.last_iterations;
  }

  const DoubleMatrix& c_;
  KrylovWorkspace& ws_;
  const Index b_;
  const bool single_;
  RefreshStats& stats_;
};

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
  const BasisShape shape = basis_shape(d, k, o);
  const Index b = shape.block;
  ++stats.refreshes;
  stats.last_iterations = 0;
  stats.last_residual = 0;
  auto full = [&] {
    ++stats.full_solves;
    TopEigen all = c.top(b);
    block = all.vectors;
    return TopEigen{all.vectors.leftCols(k), all.values.head(k)};
  };
  if (shape.max_blocks < 2) return full();  // d < 2(k + p): no room for a Krylov space; the full solve is cheap
  auto count_products = [&] {
    stats.iterations += static_cast<std::uint64_t>(stats.last_iterations);
    stats.matvecs += static_cast<std::uint64_t>(stats.last_iterations * b);
  };

  // Pseudo-random vectors from a fixed seed advanced by the refresh count: deterministic, never
  // data-dependent, and a different direction at every refresh.
  privacy::SeededNoiseSource rng(kPadSeed + stats.refreshes);
  Krylov basis(c, ws, shape, uses_single_precision(o), stats);
  basis.start(start, rng);
  const StoppingRule rule{o, residual_floor};
  const double frobenius_bound = frobenius / std::sqrt(static_cast<double>(d));
  Index blocks = 1;
  for (;;) {
    const Index s = blocks * b;
    MatrixXd f;
    VectorXd f_norms;
    basis.residual_block(s, f, f_norms);

    // Rayleigh–Ritz (an s × s eigenproblem, up to ~the cost of a block product at s = 90) only where
    // it can end the refresh or is needed for a restart: at every second block and when the basis is
    // full. Never on the start block alone: its random column must be expanded at least once before
    // an answer is accepted (Krylov::start), or an invariant start would still pass. Skipping it
    // elsewhere delays the stop by at most one block product (max_iterations is checked here too);
    // the Krylov expansion itself never needs it.
    if (blocks % 2 == 0 || blocks == shape.max_blocks) {
      const RitzPairs ritz = basis.ritz_pairs(s, frobenius_bound);
      MatrixXd y;
      Answer answer = basis.accept(s, k, ritz, f, rule, y);
      if (answer.residuals.size() > 0) {
        stats.last_residual = answer.residuals.maxCoeff() / ritz.scale;
        count_products();
        block = std::move(answer.block);
        return TopEigen{block.leftCols(k), std::move(answer.values)};
      }
      if (stats.last_iterations >= o.max_iterations) {
        count_products();
        ++stats.fallbacks;
        const int iterations = stats.last_iterations;
        TopEigen result = full();
        stats.last_iterations = iterations;
        return result;
      }
      if (blocks == shape.max_blocks) {
        basis.restart(s, ritz.vectors, y);
        blocks = 1;
        ++stats.restarts;
        continue;
      }
    }
    basis.append(s, f, f_norms, rng);
    ++blocks;
  }
}

}  // namespace dpstream::pca::detail
