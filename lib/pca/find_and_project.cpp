#include "dpstream/pca/find_and_project.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <sstream>
#include <string>

#include <sodium.h>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::Calibration;
using privacy::EpsDelta;
using base::format_value;

namespace {

void require_delta_positive(const char* owner, const EpsDelta& target) {
  base::require_open_unit(std::string(owner) + ": delta", target.delta());
}

void require_rank(const char* owner, Index k, Index oversampling) {
  if (k < 1) throw InvalidParameter(std::string(owner) + ": k must be >= 1, got " + std::to_string(k));
  if (oversampling < 0)
    throw InvalidParameter(std::string(owner) + ": oversampling must be >= 0, got " + std::to_string(oversampling));
}

void require_sketch_fits(const char* owner, Index k, Index oversampling, Index m, Index n) {
  const Index smaller = std::min(m, n);
  if (k + oversampling > smaller)
    throw InvalidParameter(std::string(owner) + ": k + oversampling = " + std::to_string(k) + " + " +
                           std::to_string(oversampling) + " must be <= min(m, n) = " + std::to_string(smaller) +
                           " (A is " + std::to_string(m) + "x" + std::to_string(n) + ")");
}

// Snap every entry of a block whose noise has standard deviation sigma > 0 (snap.hpp).
void snap_block(Eigen::Ref<MatrixXd> block, double sigma) {
  const double grid = privacy::snap_granularity(sigma);
  for (Index j = 0; j < block.cols(); ++j)
    for (Index i = 0; i < block.rows(); ++i) block(i, j) = privacy::snap_to_grid(block(i, j), grid);
}

void fill_standard_normal(MatrixXd& out, privacy::NoiseSource& noise) {
  noise.fill_gaussian(std::span<double>(out.data(), static_cast<std::size_t>(out.size())), 1.0);
}

}  // namespace

// ---- Privacy unit and result types ------------------------------------------------------------

const char* to_string(MatrixNeighbours relation) noexcept {
  switch (relation) {
    case MatrixNeighbours::row_change: return "row_change";
    case MatrixNeighbours::add_remove_row: return "add_remove_row";
    case MatrixNeighbours::replace_row: return "replace_row";
  }
  return "unknown";
}

MatrixNeighbours parse_matrix_neighbours(const std::string& text) {
  for (const MatrixNeighbours relation :
       {MatrixNeighbours::row_change, MatrixNeighbours::add_remove_row, MatrixNeighbours::replace_row})
    if (text == to_string(relation)) return relation;
  throw InvalidParameter("matrix neighbours '" + base::printable(text) + "': expected row_change, add_remove_row or replace_row");
}

double row_change_bound(MatrixNeighbours relation, double row_norm_bound) {
  base::require_positive("row_norm_bound", row_norm_bound);
  return relation == MatrixNeighbours::replace_row ? 2.0 * row_norm_bound : row_norm_bound;
}

double spec_row_change(const char* who, const privacy::PrivacySpec& spec, MatrixNeighbours relation) {
  const privacy::Neighbours stated =
      relation == MatrixNeighbours::add_remove_row ? privacy::Neighbours::add_remove_row : privacy::Neighbours::replace_row;
  if (spec.relation != stated)
    throw InvalidParameter(std::string(who) + ": privacy.relation must be " + privacy::to_string(stated) + " for relation " +
                           to_string(relation) + ", got " + privacy::to_string(spec.relation));
  if (spec.noise.seed)
    throw InvalidParameter(std::string(who) + ": privacy.noise.seed must be unset (the noise is release()'s source)");
  return row_change_bound(relation, spec.row_norm_bound);
}

void check_rows(const Eigen::Ref<const MatrixXd>& a, MatrixNeighbours relation, double row_norm_bound) {
  for (Index i = 0; i < a.rows(); ++i) {
    for (Index j = 0; j < a.cols(); ++j) {
      if (std::isfinite(a(i, j))) continue;
      throw InvalidRow(static_cast<std::uint64_t>(i),
                       "entry at column " + std::to_string(j) + " is " + format_value(a(i, j)) + " (must be finite)");
    }
    if (relation == MatrixNeighbours::row_change) continue;  // rows unbounded: the unit is the change
    const Eigen::VectorXd row = a.row(i).transpose();
    const double norm = stream::row_norm(row);
    if (!(norm <= row_norm_bound)) {
      std::ostringstream msg;
      msg.precision(17);
      msg << "l2 norm " << norm << " is over row_norm_bound " << row_norm_bound << " (relation "
          << to_string(relation) << "; nothing is clipped: pass rows through RowGuard first)";
      throw InvalidRow(static_cast<std::uint64_t>(i), msg.str());
    }
  }
}

MatrixXd LowRankFactors::dense() const { return left * singular_values.asDiagonal() * right.transpose(); }

LowRankFactors top_k_svd(const Eigen::Ref<const MatrixXd>& m, Index k) {
  const Index smaller = std::min(m.rows(), m.cols());
  base::require_rank("top_k_svd", k, smaller);
  if (!m.allFinite()) throw InvalidParameter("top_k_svd: the matrix has a non-finite entry");
  if (m.rows() > m.cols()) {
    LowRankFactors t = top_k_svd(m.transpose(), k);
    std::swap(t.left, t.right);
    return t;
  }
  // rows ≤ cols: the rows × rows Gram matrix is the small one (m ≪ n in HR12's regime).
  MatrixXd gram = MatrixXd::Zero(m.rows(), m.rows());
  gram.selfadjointView<Eigen::Lower>().rankUpdate(m);
  linalg::SymmetricEigenSolver eigen(gram);  // reads the lower triangle
  const MatrixXd u = eigen.eigenvectors().rightCols(k).rowwise().reverse();  // descending
  // B_k = U Uᵀ m = U Xᵀ with X = mᵀU = Q R = Q (U_r S V_rᵀ): left U V_r, values S, right Q U_r.
  const MatrixXd x = m.transpose() * u;
  linalg::HouseholderQr qr(x);
  const MatrixXd q = qr.q(k);
  const MatrixXd r = qr.r();  // k × k: x has k columns
  linalg::JacobiSvd small(r, Eigen::ComputeFullU | Eigen::ComputeFullV);
  LowRankFactors out;
  out.left = u * small.v();
  out.singular_values = small.singular_values();
  out.right = q * small.u();
  return out;
}

PrivateSubspace to_private_subspace(const LowRankFactors& factors, const std::string& method) {
  PrivateSubspace s;
  s.vectors = factors.right;
  s.values = factors.singular_values.array().square().matrix();
  s.method = method;
  return s;
}

// ---- Range finder -----------------------------------------------------------------------------

PrivateRangeFinder::PrivateRangeFinder(const RangeFinderOptions& options)
    : options_(options), row_change_(spec_row_change("PrivateRangeFinder", options.privacy, options.relation)) {
  require_rank("PrivateRangeFinder", options.k, options.oversampling);
  require_delta_positive("PrivateRangeFinder", options.privacy.target);
  calibration_ = range_finder_calibration(columns(), row_change_, options.privacy.target, options.privacy.calibration);
}

MatrixXd PrivateRangeFinder::release(const Eigen::Ref<const MatrixXd>& a, privacy::NoiseSource& noise,
                                     const privacy::Budget& budget, const std::string& label) const {
  require_sketch_fits("PrivateRangeFinder", options_.k, options_.oversampling, a.rows(), a.cols());
  check_rows(a, options_.relation, options_.privacy.row_norm_bound);
  // Not a Gaussian mechanism with a fixed sensitivity (see the header): an (ε, δ) charge. Tight: the
  // mixture bound proves it (certified_delta ≤ δ). Paper: the paper's claim, proven only where
  // calibration().certified_delta ≤ δ.
  if (budget.accounted()) budget.accountant()->charge_approx(label, options_.privacy.target);
  return draw(a, noise);
}

MatrixXd PrivateRangeFinder::draw(const Eigen::Ref<const MatrixXd>& a, privacy::NoiseSource& noise) const {
  const Index m = a.rows(), n = a.cols(), k = columns();
  // Ω: fresh from the source on every call, so no two releases share it, and wiped after use (best
  // effort: GEMM's packing buffers are not): the privacy argument needs it secret and single-use.
  MatrixXd omega(n, k);
  fill_standard_normal(omega, noise);
  MatrixXd sketch = a * omega;
  sodium_memzero(omega.data(), sizeof(double) * static_cast<std::size_t>(omega.size()));
  MatrixXd gaussian(m, k);
  fill_standard_normal(gaussian, noise);
  sketch += calibration_.sigma * gaussian;
  snap_block(sketch, calibration_.sigma);
  linalg::HouseholderQr qr(sketch);
  return qr.q(k);
}

// ---- Pruning ----------------------------------------------------------------------------------

MatrixXd prune(const Eigen::Ref<const MatrixXd>& w, double alpha, Index* zeroed) {
  base::require_positive("prune_threshold", alpha);
  MatrixXd out = w;
  Index count = 0;
  for (Index j = 0; j < out.cols(); ++j)
    for (Index i = 0; i < out.rows(); ++i)
      if (std::fabs(out(i, j)) > alpha) {
        out(i, j) = 0.0;
        ++count;
      }
  if (zeroed != nullptr) *zeroed = count;
  return out;
}

// ---- Projection -------------------------------------------------------------------------------

double projection_paper_rho(Index columns, const EpsDelta& target) {
  if (columns < 1) throw InvalidParameter("projection: columns must be >= 1, got " + std::to_string(columns));
  require_delta_positive("projection", target);
  const double k = static_cast<double>(columns), delta = target.delta();
  return 2.0 / target.epsilon() * std::sqrt(8.0 * k * std::log(4.0 * k / delta) * std::log(2.0 / delta));
}

PrivateProjection::PrivateProjection(const ProjectionOptions& options)
    : options_(options),
      row_change_(spec_row_change("PrivateProjection", options.privacy, options.relation)),
      tight_multiplier_(0) {
  require_delta_positive("PrivateProjection", options.privacy.target);
  if (options.privacy.calibration == Calibration::tight)
    tight_multiplier_ = privacy::analytic_gaussian_sigma(1.0, options.privacy.target);
}

double PrivateProjection::noise_multiplier(Index columns) const {
  return options_.privacy.calibration == Calibration::tight ? tight_multiplier_ : projection_paper_rho(columns, options_.privacy.target);
}

void PrivateProjection::check_basis(const Eigen::Ref<const MatrixXd>& w_prime, Index rows) const {
  if (w_prime.rows() != rows || w_prime.cols() < 1)
    throw InvalidParameter("PrivateProjection: w_prime must be " + std::to_string(rows) + " x K with K >= 1, got " +
                           std::to_string(w_prime.rows()) + "x" + std::to_string(w_prime.cols()));
  for (Index j = 0; j < w_prime.cols(); ++j) {
    if (!w_prime.col(j).allFinite())
      throw InvalidParameter("PrivateProjection: w_prime column " + std::to_string(j) + " has a non-finite entry");
    const double norm = w_prime.col(j).norm();
    if (norm > 1.0 + 1e-9)
      throw InvalidParameter("PrivateProjection: w_prime column " + std::to_string(j) + " has norm " +
                             format_value(norm) + " > 1 (Fig 3 takes columns of norm <= 1)");
  }
}

void PrivateProjection::charge(privacy::PrivacyAccountant& accountant, const std::string& label) const {
  if (options_.privacy.calibration == Calibration::tight) {
    // One Gaussian release with σ = s·multiplier for sensitivity s: per unit of s, ρ = 1/(2·multiplier²),
    // the same whatever the (released) W' is, so it can be charged before W' exists.
    accountant.charge_gaussian(label, 1.0, tight_multiplier_, options_.privacy.target);
  } else {
    // The paper's claim (Lemma 4.6). It holds — conservatively, see the header — but is charged as
    // stated, as an (ε, δ) release.
    accountant.charge_approx(label, options_.privacy.target);
  }
}

ProjectionRelease PrivateProjection::draw(const Eigen::Ref<const MatrixXd>& a, const Eigen::Ref<const MatrixXd>& w_prime,
                                          privacy::NoiseSource& noise) const {
  const Index k = w_prime.cols();
  ProjectionRelease out;
  out.released = w_prime.transpose() * a;
  out.column_max_abs = w_prime.cwiseAbs().colwise().maxCoeff().transpose();
  out.max_row_norm = w_prime.rowwise().norm().maxCoeff();
  out.noise_sigma = VectorXd::Zero(k);
  for (Index j = 0; j < k; ++j) {
    if (out.column_max_abs(j) == 0.0) continue;  // row j of W'ᵀA is 0 for every A: nothing to hide
    out.noise_sigma(j) = options_.privacy.calibration == Calibration::tight
                             ? tight_multiplier_ * row_change_ * out.max_row_norm
                             : projection_paper_rho(k, options_.privacy.target) * row_change_ * out.column_max_abs(j);
  }
  MatrixXd gaussian(k, a.cols());
  fill_standard_normal(gaussian, noise);
  for (Index j = 0; j < k; ++j) {
    if (out.noise_sigma(j) == 0.0) continue;
    const double grid = privacy::snap_granularity(out.noise_sigma(j));
    for (Index c = 0; c < a.cols(); ++c)
      out.released(j, c) = privacy::snap_to_grid(out.released(j, c) + out.noise_sigma(j) * gaussian(j, c), grid);
  }
  return out;
}

ProjectionRelease PrivateProjection::release(const Eigen::Ref<const MatrixXd>& a, const Eigen::Ref<const MatrixXd>& w_prime,
                                             privacy::NoiseSource& noise, const privacy::Budget& budget,
                                             const std::string& label) const {
  check_basis(w_prime, a.rows());
  check_rows(a, options_.relation, options_.privacy.row_norm_bound);
  if (budget.accounted()) charge(*budget.accountant(), label);
  return draw(a, w_prime, noise);
}

// ---- PFP --------------------------------------------------------------------------------------

namespace {

RangeFinderOptions range_finder_options(const FindAndProjectOptions& o) {
  require_rank("PrivateFindAndProject", o.k, o.oversampling);
  require_delta_positive("PrivateFindAndProject", o.privacy.target);
  base::require_positive("prune_threshold", o.prune_threshold);
  RangeFinderOptions r;
  r.k = o.k;
  r.oversampling = o.oversampling;
  r.privacy = o.privacy;
  r.privacy.target = EpsDelta(o.privacy.target.epsilon() / 2.0, o.privacy.target.delta() / 2.0);  // Lemma 6.1's split
  r.relation = o.relation;
  return r;
}

ProjectionOptions projection_options(const FindAndProjectOptions& o) {
  ProjectionOptions p;
  p.privacy = o.privacy;
  p.privacy.target = EpsDelta(o.privacy.target.epsilon() / 2.0, o.privacy.target.delta() / 2.0);
  p.relation = o.relation;
  return p;
}

}  // namespace

PrivateFindAndProject::PrivateFindAndProject(const FindAndProjectOptions& options)
    : options_(options), range_finder_(range_finder_options(options)), projection_(projection_options(options)) {}

FindAndProjectResult PrivateFindAndProject::release(const Eigen::Ref<const MatrixXd>& a, privacy::NoiseSource& noise,
                                                    const privacy::Budget& budget,
                                                    const std::string& label) const {
  require_sketch_fits("PrivateFindAndProject", options_.k, options_.oversampling, a.rows(), a.cols());
  check_rows(a, options_.relation, options_.privacy.row_norm_bound);
  if (budget.accounted()) {
    // Both charges or neither: make them on a copy of the ledger first (a BudgetExhausted there leaves
    // the real one untouched), then on the real one. The range finder's is an (ε/2, δ/2) release, see
    // PrivateRangeFinder::release.
    const auto charge_both = [&](privacy::PrivacyAccountant& ledger) {
      ledger.charge_approx(label + " range finder", range_finder_.options().privacy.target);
      projection_.charge(ledger, label + " projection");
    };
    privacy::PrivacyAccountant trial = *budget.accountant();
    charge_both(trial);
    charge_both(*budget.accountant());
  }
  FindAndProjectResult out;
  out.range = range_finder_.draw(a, noise);
  const MatrixXd pruned = prune(out.range, options_.prune_threshold, &out.pruned_entries);
  out.projection = projection_.draw(a, pruned, noise);
  // B = W·P with W orthonormal: B's SVD is W times P's, so only the K × n matrix P is decomposed.
  out.approximation = top_k_svd(out.projection.released, options_.k);
  out.approximation.left = out.range * out.approximation.left;
  out.subspace = to_private_subspace(out.approximation, "pfp");
  return out;
}

}  // namespace dpstream::pca
