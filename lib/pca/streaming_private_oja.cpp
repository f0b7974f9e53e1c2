#include "dpstream/pca/streaming_private_oja.hpp"


#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "privacy/noise_source_state.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/pca/streaming_oja_centre.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// The options with scale_share resolved (unset: the derived share), checked.
StreamingPrivateOjaOptions validated(Index dimension, StreamingPrivateOjaOptions o) {
  auto fail = [](const std::string& what) { throw InvalidParameter("StreamingPrivateOja: " + what); };
  if (dimension < 1) fail("dimension must be >= 1, got " + std::to_string(dimension));
  base::require_rank("StreamingPrivateOja", o.k, dimension);
  if (o.oversampling < 0) fail("oversampling must be >= 0, got " + std::to_string(o.oversampling));
  if (!(o.batch_growth >= 1.0) || !std::isfinite(o.batch_growth))
    fail("batch_growth must be finite and >= 1, got " + base::format_value(o.batch_growth));
  if (o.step_rule != StepRule::power && o.step_rule != StepRule::oja) fail("step_rule is not power or oja");
  privacy::require_stream_relation("StreamingPrivateOja", o.privacy.relation);
  base::require_positive("row_norm_bound", o.privacy.row_norm_bound);
  const double l2 = o.privacy.row_norm_bound * o.privacy.row_norm_bound;
  if (!std::isfinite(l2) || !std::isnormal(l2)) fail("row_norm_bound squared must be finite and normal");
  base::require_positive("learning_rate", o.learning_rate);
  if (!(o.rate_offset >= 0.0) || !std::isfinite(o.rate_offset))
    fail("rate_offset must be finite and >= 0, got " + base::format_value(o.rate_offset));
  if (!(o.initial_clip >= 0.0 && o.initial_clip <= l2))
    fail("initial_clip must be in (0, L^2] (or 0 for L^2), got " + base::format_value(o.initial_clip));
  if (!(o.clip_quantile > 0.0 && o.clip_quantile < 1.0))
    fail("clip_quantile must be in (0, 1), got " + base::format_value(o.clip_quantile));
  if (!o.scale_share) o.scale_share = derived_scale_share(dimension, o.clip_quantile);
  if (!(*o.scale_share >= 0.0 && *o.scale_share < 1.0))
    fail("scale_share must be in [0, 1), got " + base::format_value(*o.scale_share));
  if (o.centred_updates && *o.scale_share == 0.0)
    fail("centred_updates needs scale_share > 0 (the radius is the private quantile of the updates' "
         "distances to the centre), got scale_share 0");
  return o;
}

// σ for sensitivity 1 at the target: the whole minibatch's releases together are this one mechanism.
double calibrated_unit_sigma(const StreamingPrivateOjaOptions& o) {
  return privacy::gaussian_sigma(1.0, o.privacy.target, o.privacy.calibration);
}

// Q of the thin QR of m (d × k, k ≤ d), columns signed so that R's diagonal is ≥ 0: a deterministic
// retraction (Householder QR's signs are otherwise arbitrary).
// Q is the same for m·2^-e; far from 1 (entries past 2^500: the noise at a row_norm_bound near
// 1e150), m is scaled by that power of two first (exact but for entries 2^-1074 below the largest),
// or the squared column norms Householder QR forms overflow and the basis turns NaN after the noise.
MatrixXd orthonormalized(const MatrixXd& m) {
  int e = 0;
  (void)std::frexp(m.cwiseAbs().maxCoeff(), &e);
  const linalg::HouseholderQr qr(std::abs(e) > 500 ? MatrixXd(m * std::ldexp(1.0, -e)) : m);
  return qr.q_nonnegative_r(m.cols());
}

// ‖sin Θ(V_new, V_old)‖₂ for orthonormal d × k bases: the largest singular value of (I − V_old V_oldᵀ)V_new.
double subspace_change(const MatrixXd& from, const MatrixXd& to) {
  const MatrixXd off = to - from * (from.transpose() * to);
  const linalg::SymmetricEigenSolver eig(off.transpose() * off, Eigen::EigenvaluesOnly);
  return std::sqrt(std::clamp(eig.eigenvalues().maxCoeff(), 0.0, 1.0));
}

}  // namespace

// The γ-quantile of the B slots' ‖g‖ (an empty slot's is 0), rounded up to an edge L²·2^{−i}: the
// smallest edge whose noisy count of rows strictly above it, bins 0..i−1, stays within (1 − γ)·B,
// scanning down from L². Counted from the top, the count the rule compares carries the noise of the
// i bins above the edge (√i·σ_h, i ≈ log₂(L²/C)), the tail the share's derivation sizes σ_h for;
// counted from the bottom it would carry the noise of the up to 47 mostly empty bins below.
double StreamingPrivateOja::quantile_edge(const VectorXd& noisy_histogram, double quantile, double batch,
                                          double l2) noexcept {
  const double tail = (1.0 - quantile) * batch;
  double above = 0.0;
  Index edge = 0;
  while (edge + 1 < noisy_histogram.size() && above + noisy_histogram[edge] <= tail) above += noisy_histogram[edge++];
  return std::ldexp(l2, -static_cast<int>(edge));
}

StreamingPrivateOja::StreamingPrivateOja(Index dimension, const StreamingPrivateOjaOptions& options, NoCharge)
    : dimension_(dimension),
      options_(validated(dimension, options)),
      unit_sigma_(calibrated_unit_sigma(options)),
      first_batch_(options.batch_rows != 0 ? options.batch_rows
                                           : derived_first_batch(dimension, options.k, unit_sigma_)),
      plan_(first_batch_, options.batch_growth, options.horizon),
      source_(options.privacy.noise.make_source()),
      width_(options.k + std::min<Index>(dimension - options.k, options.oversampling)),
      sum_(MatrixXd::Zero(dimension, width_)),
      projection_(width_),
      histogram_(VectorXd::Zero(scale_share() > 0.0 ? kScaleBins : 0)),
      clip_(options.initial_clip > 0.0 ? options.initial_clip : options.privacy.row_norm_bound * options.privacy.row_norm_bound) {
  // Every noise scale the pass can use, checked now: the clip is the initial one, then L² down to
  // L²·2^-47; a σ that overflows or vanishes in floating point would stop the pass at a release.
  const double l2 = options_.privacy.row_norm_bound * options_.privacy.row_norm_bound;
  for (const double clip : {clip_, l2, std::ldexp(l2, -static_cast<int>(kScaleBins - 1))}) {
    const double saved = std::exchange(clip_, clip);
    const double sigma = gradient_sigma();
    clip_ = saved;
    if (!(std::isfinite(sigma) && sigma > 0.0))
      throw InvalidParameter("StreamingPrivateOja: the gradient noise sigma " + base::format_value(sigma) +
                             " at clip " + base::format_value(clip) + " is not finite and > 0 (row_norm_bound " +
                             base::format_value(options_.privacy.row_norm_bound) + ", unit sigma " +
                             base::format_value(unit_sigma_) + ")");
  }
  // W_0: data-independent, the Q of a Gaussian matrix (uniform on the Stiefel manifold).
  MatrixXd start(dimension_, width_);
  source_->fill_gaussian(std::span<double>(start.data(), static_cast<std::size_t>(start.size())));
  iterate_ = orthonormalized(start);
  previous_ = iterate_;
  basis_ = iterate_.leftCols(options_.k);
  if (options_.centred_updates) centre_ = MatrixXd::Zero(dimension_, width_);  // c_1: no release yet
}

StreamingPrivateOja::StreamingPrivateOja(Index dimension, const StreamingPrivateOjaOptions& options,
                                         const privacy::Budget& budget)
    : StreamingPrivateOja(dimension, options, NoCharge{}) {
  journal_ = base::StreamJournal::create(options_.journal);
  // One charge for the whole pass (parallel composition over disjoint minibatches: the header).
  try {
    if (budget.accounted())
      budget.accountant()->charge_gaussian("streaming private Oja (one pass, minibatches from " +
                                      std::to_string(first_batch_) + " rows, growth " +
                                      base::format_value(options_.batch_growth) + ", " + clip_label() + ")",
                                  1.0, unit_sigma_, options_.privacy.target);
  } catch (...) {
    journal_.discard();  // nothing was built: the journal, empty, goes too
    throw;
  }
}

// What the ledger says of the clip: the private quantile clip's share of μ², or the fixed clip.
std::string StreamingPrivateOja::clip_label() const {
  if (scale_share() == 0.0) return "fixed clip " + base::format_value(clip_);
  return "private clip scale, share " + base::format_value(scale_share()) + " of mu^2" +
         (options_.centred_updates ? ", updates centred (centre from earlier releases, radius private)" : "");
}

// Into the journal before anyone sees them: the step's two releases, as published (the header).
void StreamingPrivateOja::record_step() {
  base::ReleaseDigest digest;
  digest.add(steps_ + 1).add(rows_).add(noisy_.data(), static_cast<std::size_t>(noisy_.size()));
  if (scale_share() > 0.0) digest.add(noisy_histogram_.data(), static_cast<std::size_t>(noisy_histogram_.size()));
  journal_.record(steps_ + 1, digest, [this] {
    noisy_.setZero();
    noisy_histogram_.setZero();
  });
}

StreamingPrivateOja::~StreamingPrivateOja() = default;
StreamingPrivateOja::StreamingPrivateOja(StreamingPrivateOja&&) noexcept = default;
StreamingPrivateOja& StreamingPrivateOja::operator=(StreamingPrivateOja&&) noexcept = default;

void StreamingPrivateOja::subscribe(Subscriber subscriber) { subscribers_.push_back(std::move(subscriber)); }

double StreamingPrivateOja::gradient_sigma() const noexcept { return sigma_at(clip_); }

double StreamingPrivateOja::sigma_at(double clip) const noexcept {
  const double sensitivity = options_.privacy.relation == privacy::Neighbours::replace_row ? 2.0 * clip : clip;
  return sensitivity * unit_sigma_ / std::sqrt(1.0 - scale_share());
}

double StreamingPrivateOja::histogram_sigma() const noexcept {
  if (scale_share() == 0.0) return std::numeric_limits<double>::infinity();
  const double sensitivity = options_.privacy.relation == privacy::Neighbours::replace_row ? std::sqrt(2.0) : 1.0;
  return sensitivity * unit_sigma_ / std::sqrt(scale_share());
}

Index StreamingPrivateOja::scale_bin(double update_norm, double l2) noexcept {
  // L²·2^{−i−1} < ‖g‖ ≤ L²·2^{−i}; round-off above L² lands in bin 0, anything tiny in the last.
  const double i = std::floor(std::log2(l2 / update_norm));  // 2^i ≤ L²/‖g‖ < 2^{i+1}
  return static_cast<Index>(std::clamp(i, 0.0, static_cast<double>(kScaleBins - 1)));
}

double StreamingPrivateOja::step_size(std::uint64_t step, double clip) const noexcept {
  if (options_.step_rule == StepRule::power) return std::numeric_limits<double>::infinity();
  // The scale a slot's update is bounded by: C, or L² for a centred one (c + clip_r(g − c)).
  const double l2 = options_.privacy.row_norm_bound * options_.privacy.row_norm_bound;
  const double scale = options_.centred_updates ? l2 : clip;
  return options_.learning_rate / (scale * (options_.rate_offset + static_cast<double>(step)));
}

// The published k columns: with oversampling (p > k), the top k Ritz directions of the step — the
// eigenvectors U_k of sym(W_{t−1}ᵀS̃_t) ≈ B·W_{t−1}ᵀΣ̂W_{t−1} — carried through S̃_t: qr(S̃_t·U_k).
// Post-processing of the release S̃_t and the public W_{t−1}. `ritz` receives the Ritz values of the
// step, sym(W_{t−1}ᵀS̃_t)/B_t, descending (empty when p = k).
MatrixXd StreamingPrivateOja::published_basis(double batch, VectorXd& ritz) const {
  ritz.resize(0);
  if (width_ == options_.k) return iterate_;
  const linalg::SymmetricEigenSolver eig(step_ritz_matrix(previous_, noisy_));  // ascending eigenvalues
  ritz = eig.eigenvalues().reverse() / batch;
  return orthonormalized(noisy_ * eig.eigenvectors().rightCols(options_.k).rowwise().reverse());
}

std::uint64_t StreamingPrivateOja::planned_rows(std::uint64_t step) const noexcept {
  return final_step_ != 0 && step >= final_step_ ? final_rows_ : plan_.rows_of(step);
}

// After a power step of a planned pass: whether the next minibatch takes every row left to the
// horizon (take_rest_next; streaming_oja_plan.hpp). The inputs are releases and public numbers.
void StreamingPrivateOja::plan_rest(const MatrixXd& published_before, const VectorXd& ritz, double batch,
                                    double clip) {
  if (options_.step_rule != StepRule::power || plan_.planned_steps() == 0 || final_step_ != 0 || last_clip_ == 0.0)
    return;  // no horizon, or already decided: nothing to read
  StepReading reading;
  reading.ritz = ritz;
  reading.sigma = sigma_at(clip);
  reading.previous_sigma = sigma_at(last_clip_);
  reading.rows = static_cast<std::uint64_t>(batch);
  reading.previous_rows = steps_ >= 2 ? planned_rows(steps_ - 1) : 0;
  reading.change = subspace_change(published_before, basis_);
  if (!take_rest_next(plan_, steps_, options_.k, dimension_, reading) || rows_ >= plan_.horizon()) return;
  final_step_ = steps_ + 1;
  final_rows_ = plan_.horizon() - rows_;
}

PrivateSubspace StreamingPrivateOja::current() const { return PrivateSubspace{basis_, {}, "streaming-oja"}; }

double StreamingPrivateOja::clip_factor(double update_norm) const noexcept {
  // Always applied (not only above L²): the bound C then holds whatever W's round-off.
  return update_norm > clip_ ? clip_ / update_norm : 1.0;
}

void StreamingPrivateOja::check_dense(const Eigen::Ref<const VectorXd>& row, std::uint64_t index) const {
  journal_.require_usable("streaming Oja");
  stream::require_bounded_row(row, index, dimension_, options_.privacy.row_norm_bound);
}

void StreamingPrivateOja::update(const Eigen::Ref<const VectorXd>& row) {
  check_dense(row, rows_);
  if (options_.centred_updates) return add_centred(row);
  projection_.noalias() = iterate_.transpose() * row;  // xᵀW (p), from the column-major W always
  const double norm = row.norm() * projection_.norm();  // ‖x (xᵀW)‖_F
  const double factor = clip_factor(norm);
  if (histogram_.size() > 0 && norm > 0.0) histogram_[scale_bin(norm, options_.privacy.row_norm_bound * options_.privacy.row_norm_bound)] += 1.0;
  if (sparse_layout_)
    sum_rows_.noalias() += (factor * row) * projection_.transpose();
  else
    sum_.noalias() += (factor * row) * projection_.transpose();
  after_row();
}

// From the first sparse row on (the header's layouts): exact copies, nothing recomputed.
void StreamingPrivateOja::use_sparse_layout() {
  iterate_rows_ = iterate_;
  sum_rows_ = sum_;
  sum_.resize(0, 0);
  sparse_layout_ = true;
}

MatrixXd StreamingPrivateOja::pending_sum() const { return sparse_layout_ ? MatrixXd(sum_rows_) : sum_; }

void StreamingPrivateOja::update_block(const Eigen::Ref<const MatrixXd>& rows) {
  // Every row is checked before any is taken, so a bad block leaves the estimator unchanged.
  for (Index i = 0; i < rows.rows(); ++i) check_dense(rows.row(i).transpose(), rows_ + static_cast<std::uint64_t>(i));
  for (Index i = 0; i < rows.rows(); ++i) update(rows.row(i).transpose());
}

void StreamingPrivateOja::update_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices,
                                        const Eigen::Ref<const VectorXd>& values) {
  journal_.require_usable("streaming Oja");
  if (indices.size() != values.size())
    throw InvalidRow(rows_, "StreamingPrivateOja: sparse row has " + std::to_string(indices.size()) + " indices but " +
                                std::to_string(values.size()) + " values");
  for (Index i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= dimension_ || (i > 0 && indices[i] <= indices[i - 1]))
      throw InvalidRow(rows_, "StreamingPrivateOja: sparse index " + std::to_string(indices[i]) + " at position " +
                                  std::to_string(i) + " is outside [0, " + std::to_string(dimension_) +
                                  ") or not increasing");
  }
  // The same checks as a dense row's (finite entries, ‖x‖ ≤ L): the absent entries are zeros.
  stream::require_bounded_row(values, rows_, values.size(), options_.privacy.row_norm_bound);
  if (!sparse_layout_) use_sparse_layout();
  if (options_.centred_updates) return add_centred_sparse(indices, values);
  // p contiguous doubles of W and of S per non-zero (plain loops: p is small and known only at run
  // time; the same operations, in the same order, as the vector expressions they replace).
  const Index p = width_;
  // At large d each non-zero's rows of W and S are cache misses: ask for all of them at once, so
  // they overlap instead of arriving one after another.
  constexpr Index kLine = 64 / sizeof(double);  // doubles a cache line
  for (Index i = 0; i < indices.size(); ++i) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(indices[i]) * p;
    for (Index j = 0; j < p; j += kLine) {
      __builtin_prefetch(iterate_rows_.data() + at + j, 0);
      __builtin_prefetch(sum_rows_.data() + at + j, 1);
    }
  }
  double* projection = projection_.data();
  std::fill(projection, projection + p, 0.0);
  for (Index i = 0; i < indices.size(); ++i) {
    const double v = values[i];
    const double* w = iterate_rows_.data() + static_cast<std::ptrdiff_t>(indices[i]) * p;
    for (Index j = 0; j < p; ++j) projection[j] += v * w[j];
  }
  const double norm = values.norm() * projection_.norm();
  const double factor = clip_factor(norm);
  if (histogram_.size() > 0 && norm > 0.0) histogram_[scale_bin(norm, options_.privacy.row_norm_bound * options_.privacy.row_norm_bound)] += 1.0;
  for (Index i = 0; i < indices.size(); ++i) {
    const double a = factor * values[i];
    double* s = sum_rows_.data() + static_cast<std::ptrdiff_t>(indices[i]) * p;
    for (Index j = 0; j < p; ++j) s[j] += a * projection[j];
  }
  after_row();
}

void StreamingPrivateOja::after_row() {
  ++rows_;
  if (++pending_rows_ == planned_rows(steps_ + 1)) step();
}

void StreamingPrivateOja::flush() {
  journal_.require_usable("streaming Oja");
  if (pending_rows_ == 0) return;
  // A power step on a small remainder would replace the estimate by a noisier one (the header).
  if (options_.step_rule == StepRule::power && 2 * pending_rows_ < planned_rows(steps_ + 1)) return;
  step();
}

void StreamingPrivateOja::step() {
  const double batch = static_cast<double>(pending_rows_);  // public: slots, not rows' contents
  const double clip = clip_;
  const double sigma_g = gradient_sigma();
  // S̃ = S + Z, snapped: the minibatch's first release.
  noisy_.resize(dimension_, width_);
  source_->fill_gaussian(std::span<double>(noisy_.data(), static_cast<std::size_t>(noisy_.size())), sigma_g);
  if (sparse_layout_)
    noisy_ += sum_rows_;
  else
    noisy_ += sum_;
  if (options_.centred_updates) noisy_ += batch * centre_;  // every slot's c (public B and c)
  privacy::snap_to_grid(std::span<double>(noisy_.data(), static_cast<std::size_t>(noisy_.size())),
                        privacy::snap_granularity(sigma_g));
  // h̃ = h + N(0, σ_h² I), snapped: the second (only with a scale share).
  if (scale_share() > 0.0) {
    const double sigma_h = histogram_sigma();
    noisy_histogram_.resize(kScaleBins);
    source_->fill_gaussian(std::span<double>(noisy_histogram_.data(), std::size_t(kScaleBins)), sigma_h);
    noisy_histogram_ += histogram_;
    privacy::snap_to_grid(std::span<double>(noisy_histogram_.data(), std::size_t(kScaleBins)),
                          privacy::snap_granularity(sigma_h));
  }
  if (journal_.kept()) record_step();
  // Forward secrecy of checkpoints, as ContinualSum: the saved key cannot regenerate this noise.
  source_->ratchet();
  ++steps_;
  // Post-processing of the two releases: Oja's step, the retraction, the next clip scale.
  const double eta = step_size(steps_, clip);
  previous_ = iterate_;
  iterate_ = options_.step_rule == StepRule::power ? orthonormalized(noisy_)
                                                   : orthonormalized(previous_ + (eta / batch) * noisy_);
  if (sparse_layout_) iterate_rows_ = iterate_;
  VectorXd ritz;
  MatrixXd published_before = std::move(basis_);
  basis_ = published_basis(batch, ritz);
  plan_rest(published_before, ritz, batch, clip);
  const double l2 = options_.privacy.row_norm_bound * options_.privacy.row_norm_bound;
  if (options_.centred_updates) {
    // The gate reads the Ritz values published_basis solved for (p > k); with p = k none were solved.
    if (ritz.size() == 0) ritz = step_ritz_values(previous_, noisy_, batch);
    released_centre_ = std::exchange(centre_, update_centre(iterate_, previous_, noisy_, ritz, batch, sigma_g, l2));
  }
  last_clip_ = clip;
  if (scale_share() > 0.0) {
    clip_ = quantile_edge(noisy_histogram_, options_.clip_quantile, batch, l2);
    histogram_.setZero();
  }
  if (sparse_layout_)
    sum_rows_.setZero();
  else
    sum_.setZero();
  pending_rows_ = 0;
  const Release release{steps_, rows_, basis_, noisy_, previous_, clip, noisy_histogram_, eta, released_centre_};
  for (const Subscriber& s : subscribers_) s(release);
}

}  // namespace dpstream::pca
