#include "dpstream/pca/subspace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>

#include "dpstream/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/linalg/symmetric_product.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "symmetric_input.hpp"

namespace dpstream::pca {

// Buffers of the Krylov refresh, kept by a SubspaceTracker between calls.
struct KrylovWorkspace {
  Eigen::MatrixXd q, w, h;
  Eigen::MatrixXd c_full;  // refresh_upper in double precision or for a full solve: both triangles
  Eigen::MatrixXf c_single, q_single, w_single;  // single precision: Ĉ, the basis Q and W = ĈQ (all blocks)
};

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::format_value;
using detail::check_symmetric;
using detail::expand_lower_in_place;
using detail::expand_upper;
using detail::expand_upper_single;
using detail::MatrixSummary;

// Orthonormality tolerance of a basis: max|VᵀV − I| (see the header).
constexpr double kOrthonormalityTolerance = 1e-8;
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

std::string dims(Index rows, Index cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

void check_k(const char* fn, Index k, Index d) {
  if (k < 1 || k > d)
    throw InvalidParameter(std::string(fn) + ": k must be in [1, " + std::to_string(d) + "] (the dimension), got " +
                           std::to_string(k));
}

void check_finite(const char* fn, const char* name, const Eigen::Ref<const MatrixXd>& v) {
  for (Index j = 0; j < v.cols(); ++j)
    for (Index i = 0; i < v.rows(); ++i)
      if (!std::isfinite(v(i, j)))
        throw InvalidParameter(std::string(fn) + ": " + name + "(" + std::to_string(i) + "," + std::to_string(j) +
                               ") is not finite, got " + format_value(v(i, j)));
}

// d × m with 1 ≤ m ≤ d, finite, orthonormal columns within kOrthonormalityTolerance.
void check_basis(const char* fn, const char* name, const Eigen::Ref<const MatrixXd>& v, Index d) {
  if (v.rows() != d || v.cols() < 1 || v.cols() > d)
    throw InvalidParameter(std::string(fn) + ": " + name + " must be " + std::to_string(d) +
                           " x m with 1 <= m <= " + std::to_string(d) + ", got " + dims(v.rows(), v.cols()));
  check_finite(fn, name, v);
  const double err =
      (v.transpose() * v - MatrixXd::Identity(v.cols(), v.cols())).cwiseAbs().maxCoeff();
  if (!(err <= kOrthonormalityTolerance))
    throw InvalidParameter(std::string(fn) + ": " + name + " must have orthonormal columns: max|" + name +
                           "^T " + name + " - I| = " + format_value(err) + " exceeds 1e-8");
}

void check_options(const RefreshOptions& o) {
  if (o.oversample < 0)
    throw InvalidParameter("refresh options: oversample must be >= 0, got " + std::to_string(o.oversample));
  if (o.max_blocks < 2)
    throw InvalidParameter("refresh options: max_blocks must be >= 2, got " + std::to_string(o.max_blocks));
  if (o.max_iterations < 1)
    throw InvalidParameter("refresh options: max_iterations must be >= 1, got " +
                           std::to_string(o.max_iterations));
  if (!(o.tolerance > 0 && o.tolerance < 1))
    throw InvalidParameter("refresh options: tolerance must be in (0, 1), got " + format_value(o.tolerance));
  if (!(o.variance_tolerance >= 0 && o.variance_tolerance < 1))
    throw InvalidParameter("refresh options: variance_tolerance must be in [0, 1), got " +
                           format_value(o.variance_tolerance));
}

// The top `count` eigenpairs of c, algebraic order, from the full eigendecomposition.
// SelfAdjointEigenSolver sorts ascending, so the top ones are the last columns, reversed.
TopEigen full_top(const Eigen::Ref<const MatrixXd>& c, Index count) {
  const linalg::SymmetricEigenSolver es(c);
  if (es.info() != Eigen::Success)
    throw std::runtime_error("top_k_eigen: SelfAdjointEigenSolver did not converge");
  TopEigen t;
  t.values = es.eigenvalues().tail(count).reverse();
  t.vectors = es.eigenvectors().rightCols(count).rowwise().reverse();
  return t;
}

// The matrix a refresh reads in double precision (every product in double, the certificate's
// product ĈV in single precision, a full solve): c itself, or, from refresh_upper in single
// precision, the upper triangle it was given, read in place (linalg::symmetric_product_upper, the
// same product bit for bit); a full solve, a rare fallback there, first expands it into `full_space`.
class DoubleMatrix {
 public:
  explicit DoubleMatrix(const Eigen::Ref<const MatrixXd>& c) : c_(c) {}
  DoubleMatrix(const Eigen::Ref<const MatrixXd>& upper, MatrixXd& full_space) : c_(upper), full_space_(&full_space) {}
  Index rows() const { return c_.rows(); }
  void product(const Eigen::Ref<const MatrixXd>& q, Eigen::Ref<MatrixXd> w) const {
    if (full_space_ != nullptr)
      linalg::symmetric_product_upper(c_, q, w);
    else
      linalg::symmetric_product(c_, q, w);
  }
  TopEigen top(Index count) const {
    if (full_space_ == nullptr) return full_top(c_, count);
    expand_upper("SubspaceTracker::refresh_upper", c_, *full_space_, nullptr);
    return full_top(*full_space_, count);
  }

 private:
  const Eigen::Ref<const MatrixXd>& c_;
  MatrixXd* full_space_ = nullptr;
};

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

// Where the input's check (check_symmetric or expand_upper) writes its float copy: ws.c_single when
// the refresh's block products run in single precision, nowhere for a full solve or in double.
Eigen::MatrixXf* float_copy(const RefreshOptions& o, KrylovWorkspace& ws, bool full_solve) {
  return !full_solve && uses_single_precision(o) ? &ws.c_single : nullptr;
}

// The thick-restarted block Lanczos refresh (see the header). c is validated by the caller and
// `frobenius` is ‖c‖_F from that check (which also left c in float in ws.c_single, float_copy, if
// the products run in single precision). Leaves the k + p Ritz vectors in `block`; returns the top k.
// `ws` holds the buffers between calls (no allocation, hence no page faults, per refresh).
TopEigen krylov_refresh(const DoubleMatrix& c, double frobenius,
                        const Eigen::Ref<const MatrixXd>& start, Index k, const RefreshOptions& o,
                        RefreshStats& stats, MatrixXd& block, KrylovWorkspace& ws, double residual_floor = 0) {
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

  // ‖Ĉ‖₂ ≥ ‖Ĉ‖_F/√d, and ≥ every |Ritz value|: the larger of the two is a lower bound (see the header).
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

// Validation of a start basis: d × m, m ≥ 1, finite (any quality: it is orthonormalised).
void check_start(const char* fn, const Eigen::Ref<const MatrixXd>& start, Index d) {
  if (start.rows() != d || start.cols() < 1)
    throw InvalidParameter(std::string(fn) + ": start basis must be " + std::to_string(d) +
                           " x m with m >= 1, got " + dims(start.rows(), start.cols()));
  check_finite(fn, "start", start);
}

}  // namespace

void require_symmetric(const char* where, const Eigen::Ref<const MatrixXd>& c) { check_symmetric(where, c); }

TopEigen top_k_eigen(const Eigen::Ref<const MatrixXd>& c, Index k) {
  check_symmetric("top_k_eigen", c);
  check_k("top_k_eigen", k, c.rows());
  return full_top(c, k);
}

double sum_top_k_eigenvalues(const Eigen::Ref<const MatrixXd>& c, Index k) {
  check_symmetric("sum_top_k_eigenvalues", c);
  check_k("sum_top_k_eigenvalues", k, c.rows());
  const linalg::SymmetricEigenSolver es(c, Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success)
    throw std::runtime_error("sum_top_k_eigenvalues: SelfAdjointEigenSolver did not converge");
  return es.eigenvalues().tail(k).sum();
}

double captured_variance(const Eigen::Ref<const MatrixXd>& c, const Eigen::Ref<const MatrixXd>& v) {
  check_symmetric("captured_variance", c);
  check_basis("captured_variance", "V", v, c.rows());
  const MatrixXd cv = c * v;
  return (v.array() * cv.array()).sum();  // tr(VᵀCV) without the k × k product
}

Eigen::VectorXd principal_angles(const Eigen::Ref<const MatrixXd>& v, const Eigen::Ref<const MatrixXd>& w) {
  check_basis("principal_angles", "V", v, v.rows());
  check_basis("principal_angles", "W", w, v.rows());
  if (w.cols() != v.cols())
    throw InvalidParameter("principal_angles: V and W must have the same number of columns, got " +
                           std::to_string(v.cols()) + " and " + std::to_string(w.cols()));
  const Index k = v.cols();
  const MatrixXd m = v.transpose() * w;
  // Cosines, descending → angles ascending; sines of W − V·VᵀW, descending → reversed to ascending.
  const VectorXd cosines = linalg::singular_values(m);
  const MatrixXd residual = w - v * m;
  const VectorXd sines = linalg::singular_values(residual).reverse();
  VectorXd angles(k);
  for (Index i = 0; i < k; ++i) {
    // Each formula where it is well conditioned: arcsin below π/4, arccos above (Knyazev & Argentati).
    const double s = std::min(1.0, sines(i));
    angles(i) = s < std::sqrt(0.5) ? std::asin(s) : std::acos(std::min(1.0, cosines(i)));
  }
  std::sort(angles.begin(), angles.end());  // the two formulas can disagree in the last bits at π/4
  return angles;
}

const char* to_string(ProjectorNorm norm) noexcept {
  return norm == ProjectorNorm::spectral ? "spectral" : "frobenius";
}

ProjectorNorm parse_projector_norm(const std::string& text) {
  for (const ProjectorNorm norm : {ProjectorNorm::spectral, ProjectorNorm::frobenius})
    if (text == to_string(norm)) return norm;
  throw InvalidParameter("projector norm '" + text + "': expected spectral or frobenius");
}

double projector_distance(const Eigen::Ref<const MatrixXd>& v, const Eigen::Ref<const MatrixXd>& w,
                          ProjectorNorm norm) {
  check_basis("projector_distance", "V", v, v.rows());
  check_basis("projector_distance", "W", w, v.rows());
  if (v.cols() != w.cols()) {
    if (norm == ProjectorNorm::spectral) return 1.0;
    const double cross = (v.transpose() * w).squaredNorm();
    return std::sqrt(std::max(0.0, static_cast<double>(v.cols() + w.cols()) - 2.0 * cross));
  }
  // The nonzero eigenvalues of VVᵀ − WWᵀ are ±sin θᵢ, each once (Stewart & Sun, Thm I.5.5).
  const VectorXd sines = principal_angles(v, w).array().sin();
  return norm == ProjectorNorm::spectral ? sines.maxCoeff() : std::sqrt(2.0) * sines.norm();
}

TopEigen refresh_top_k(const Eigen::Ref<const MatrixXd>& c, const Eigen::Ref<const MatrixXd>& start, Index k,
                       const RefreshOptions& options, RefreshStats* stats) {
  check_options(options);
  KrylovWorkspace workspace;
  const MatrixSummary summary = check_symmetric("refresh_top_k", c, float_copy(options, workspace, false));
  check_k("refresh_top_k", k, c.rows());
  check_start("refresh_top_k", start, c.rows());
  RefreshStats local;
  MatrixXd block;
  return krylov_refresh(DoubleMatrix(c), summary.frobenius, start, k, options, stats != nullptr ? *stats : local, block, workspace);
}

SubspaceTracker::SubspaceTracker(Index dimension, Index k, const RefreshOptions& options)
    : dimension_(dimension), k_(k), options_(options), workspace_(std::make_unique<KrylovWorkspace>()) {
  if (dimension < 1)
    throw InvalidParameter("SubspaceTracker: dimension must be >= 1, got " + std::to_string(dimension));
  check_k("SubspaceTracker", k, dimension);
  check_options(options);
}

SubspaceTracker::~SubspaceTracker() = default;
SubspaceTracker::SubspaceTracker(SubspaceTracker&&) noexcept = default;
SubspaceTracker& SubspaceTracker::operator=(SubspaceTracker&&) noexcept = default;
SubspaceTracker::SubspaceTracker(const SubspaceTracker& other)
    : dimension_(other.dimension_),
      k_(other.k_),
      options_(other.options_),
      block_(other.block_),
      current_(other.current_),
      stats_(other.stats_),
      workspace_(std::make_unique<KrylovWorkspace>()) {}
SubspaceTracker& SubspaceTracker::operator=(const SubspaceTracker& other) {
  if (this != &other) {
    SubspaceTracker copy(other);
    *this = std::move(copy);
  }
  return *this;
}

const TopEigen& SubspaceTracker::refresh(const Eigen::Ref<const MatrixXd>& c, double residual_floor) {
  check_refresh_arguments("SubspaceTracker::refresh", c, residual_floor);
  const MatrixSummary summary =
      check_symmetric("SubspaceTracker::refresh", c, float_copy(options_, *workspace_, cold_full_solve()));
  return refresh_checked(c, Held::full, summary.frobenius, residual_floor);
}

const TopEigen& SubspaceTracker::refresh_upper(const Eigen::Ref<const MatrixXd>& upper, double residual_floor) {
  const char* fn = "SubspaceTracker::refresh_upper";
  check_refresh_arguments(fn, upper, residual_floor);
  if (Eigen::MatrixXf* single = float_copy(options_, *workspace_, cold_full_solve())) {
    // The products read the float copy; the certificate reads `upper` where it is. Why not the
    // double copy too: writing it was a third of the pass's traffic (d² doubles; 32 MB at d = 2048).
    const MatrixSummary summary = expand_upper_single(fn, upper, *single);
    return refresh_checked(upper, Held::upper, summary.frobenius, residual_floor);
  }
  MatrixXd& full = workspace_->c_full;
  const MatrixSummary summary = expand_upper(fn, upper, full, nullptr);
  return refresh_checked(full, Held::full, summary.frobenius, residual_floor);
}

const TopEigen& SubspaceTracker::refresh_lower(Eigen::Ref<MatrixXd> c, double residual_floor) {
  const char* fn = "SubspaceTracker::refresh_lower";
  check_refresh_arguments(fn, c, residual_floor);
  const MatrixSummary summary =
      expand_lower_in_place(fn, c, float_copy(options_, *workspace_, cold_full_solve()));
  return refresh_checked(c, Held::full, summary.frobenius, residual_floor);
}

bool SubspaceTracker::cold_full_solve() const noexcept {
  return !has_basis() && dimension_ <= options_.cold_full_solve_max_dimension;
}

void SubspaceTracker::check_refresh_arguments(const char* fn, const Eigen::Ref<const MatrixXd>& c,
                                              double residual_floor) const {
  if (!(residual_floor >= 0) || !std::isfinite(residual_floor))
    throw InvalidParameter(std::string(fn) + ": residual_floor must be finite and >= 0, got " +
                           format_value(residual_floor));
  if (c.rows() != dimension_ || c.cols() != dimension_)
    throw InvalidParameter(std::string(fn) + ": matrix must be " + dims(dimension_, dimension_) + ", got " +
                           dims(c.rows(), c.cols()));
}

// c validated (check_symmetric or an expansion, which also left its float copy in the workspace when
// the refresh runs in single precision); `frobenius` = ‖c‖_F. Held::upper: c is the upper triangle
// of the matrix (refresh_upper in single precision).
const TopEigen& SubspaceTracker::refresh_checked(const Eigen::Ref<const MatrixXd>& c, Held held, double frobenius,
                                                 double residual_floor) {
  const DoubleMatrix matrix = held == Held::upper ? DoubleMatrix(c, workspace_->c_full) : DoubleMatrix(c);
  if (cold_full_solve()) {
    // Cold start: the exact answer, once; later refreshes start from it.
    ++stats_.refreshes;
    ++stats_.full_solves;
    stats_.last_iterations = 0;
    stats_.last_residual = 0;
    const TopEigen all = matrix.top(std::min(dimension_, k_ + options_.oversample));
    block_ = all.vectors;
    current_ = TopEigen{all.vectors.leftCols(k_), all.values.head(k_)};
    return current_;
  }
  // A cold start at large d is the iteration from the first coordinate axis (the rest of its block
  // is pseudo-random), not an O(d³) full solve (RefreshOptions::cold_full_solve_max_dimension).
  const MatrixXd axis = has_basis() ? MatrixXd() : MatrixXd::Identity(dimension_, 1);
  MatrixXd next;
  current_ = krylov_refresh(matrix, frobenius, has_basis() ? Eigen::Ref<const MatrixXd>(block_) : Eigen::Ref<const MatrixXd>(axis),
                            k_, options_, stats_, next, *workspace_, residual_floor);
  block_ = std::move(next);
  return current_;
}

void SubspaceTracker::set_start(const Eigen::Ref<const MatrixXd>& basis) {
  check_start("SubspaceTracker::set_start", basis, dimension_);
  block_ = basis;
}

void SubspaceTracker::restore(const State& state) {
  if (state.block.size() > 0) check_start("SubspaceTracker::restore", state.block, dimension_);
  const TopEigen& c = state.current;
  if (c.vectors.size() > 0 || c.values.size() > 0) {
    if (c.vectors.rows() != dimension_ || c.vectors.cols() != k_ || c.values.size() != k_)
      throw InvalidParameter("SubspaceTracker::restore: the last result must be " + dims(dimension_, k_) +
                             " with " + std::to_string(k_) + " values, got " + dims(c.vectors.rows(), c.vectors.cols()) +
                             " with " + std::to_string(c.values.size()));
    check_finite("SubspaceTracker::restore", "last result", c.vectors);
  }
  block_ = state.block;
  current_ = state.current;
  stats_ = state.stats;
}

void SubspaceTracker::reset() {
  block_.resize(0, 0);
  current_ = TopEigen{};
}

}  // namespace dpstream::pca
