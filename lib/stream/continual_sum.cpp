#include "dpstream/stream/continual_sum.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/memory_limit.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::stream {

const char* to_string(NoiseStrategy strategy) noexcept {
  switch (strategy) {
    case NoiseStrategy::plain_tree: return "plain";
    case NoiseStrategy::honaker_tree: return "honaker";
    case NoiseStrategy::sqrt_toeplitz: return "sqrt_toeplitz";
    case NoiseStrategy::blt: return "blt";
    case NoiseStrategy::separable: return "separable";
  }
  return "?";
}

NoiseStrategy parse_noise_strategy(const std::string& name) {
  if (name == "plain" || name == "tree") return NoiseStrategy::plain_tree;
  if (name == "honaker") return NoiseStrategy::honaker_tree;
  if (name == "sqrt_toeplitz" || name == "sqrt") return NoiseStrategy::sqrt_toeplitz;
  if (name == "blt") return NoiseStrategy::blt;
  if (name == "separable") return NoiseStrategy::separable;
  throw InvalidParameter("unknown noise strategy '" + name + "' (expected tree, honaker, sqrt, blt or separable)");
}

namespace {

// What the charge protects, when it is more than one row.
std::string participation_label(const Participation& participation) {
  if (participation.max_rows == 1) return "";
  return "; " + describe(participation);
}

const ContinualSumOptions& validated(const ContinualSumOptions& options) {
  if (options.block_rows < 1) throw InvalidParameter("continual sum: block_rows must be >= 1, got 0");
  check_participation(options.participation);
  options.privacy.validate("continual sum:");
  if (options.batch_rows < 0)
    throw InvalidParameter("continual sum: batch_rows must be >= 0, got " + std::to_string(options.batch_rows));
  if (options.kept_releases < 1 || options.kept_releases > 64)
    throw InvalidParameter("continual sum: kept_releases must be in [1, 64], got " +
                           std::to_string(options.kept_releases));
  if (options.horizon != 0 && options.horizon > UINT64_MAX / options.block_rows)
    throw InvalidParameter("continual sum: horizon × block_rows overflows 64 bits");
  if (needs_fixed_horizon(options.strategy) && options.horizon == 0)
    throw InvalidParameter(std::string("continual sum: the ") + to_string(options.strategy) +
                           " strategy is built for a fixed horizon; horizon must be >= 1 (0 = unbounded is for trees)");
  if (options.blt && options.strategy != NoiseStrategy::blt)
    throw InvalidParameter(std::string("continual sum: blt parameters given, but the strategy is ") +
                           to_string(options.strategy));
  return options;
}

// The state a stream will hold, in doubles: the exact sum (a covariance keeps a full d × d upper
// triangle and its row batch), the kept noisy releases and the latest's noise, and the strategy's own state —
// a tree's levels, a BLT's buffers, one previous draw and the α of every step (separable), or every
// past draw (the square-root Toeplitz reference). Refused, before anything is allocated, over the
// memory limit (base/memory_limit.hpp).
template <class Accumulator>
void require_stream_memory(Eigen::Index dimension, const ContinualSumOptions& options) {
  const double d = static_cast<double>(std::max<Eigen::Index>(dimension, 1));
  const bool covariance = std::is_same_v<Accumulator, CovarianceAccumulator>;
  const double packed = covariance ? d * (d + 1) / 2 : d;
  const double exact = covariance ? d * d + d * (options.batch_rows > 0 ? options.batch_rows : 128) : d;
  const double value = covariance ? d * d : d;
  const double steps = options.horizon ? static_cast<double>(options.horizon) : 1.0;
  double held = packed;  // what the strategy keeps
  switch (options.strategy) {
    case NoiseStrategy::plain_tree:
    case NoiseStrategy::honaker_tree: held = packed * (std::ceil(std::log2(steps + 1)) + 2); break;
    case NoiseStrategy::blt: held = packed * (options.blt ? static_cast<double>(options.blt->buffers()) + 1 : 16); break;
    case NoiseStrategy::separable: held = 2 * packed + 4 * steps; break;
    case NoiseStrategy::sqrt_toeplitz: held = packed * (steps + 1) + steps; break;
  }
  require_memory(std::string("a continual ") + Accumulator::kKind + " sum of dimension " + std::to_string(dimension) +
                     " (" + to_string(options.strategy) + ", " +
                     (options.horizon ? std::to_string(options.horizon) : std::string("unbounded")) + " releases)",
                 8.0 * (exact + value * options.kept_releases + 2 * packed + held));
}

}  // namespace

template <class Accumulator>
ContinualSum<Accumulator>::ContinualSum(Eigen::Index dimension, const ContinualSumOptions& options,
                                        const privacy::Budget& budget, NoCharge)
    : dimension_((require_stream_memory<Accumulator>(dimension, validated(options)), dimension)),
      options_(validated(options)),
      l2_sensitivity_(Accumulator::sensitivity(options.privacy.relation, options.privacy.row_norm_bound)),
      budget_(budget),
      source_(options.privacy.noise.make_source()),
      exact_(dimension, options.batch_rows),
      released_(options.kept_releases) {
  if (options.strategy == NoiseStrategy::plain_tree || options.strategy == NoiseStrategy::honaker_tree) {
    TreeNoiseOptions tree;
    tree.kind = options.strategy == NoiseStrategy::plain_tree ? TreeKind::plain : TreeKind::honaker;
    tree.horizon = options.horizon;
    tree.l2_sensitivity = l2_sensitivity_;
    tree.target = options.privacy.target;
    tree.calibration = options.privacy.calibration;
    tree.participation = options.participation;
    noise_ = make_tree_noise(tree, exact_.packed_size());
  } else {
    FactorizationNoiseOptions f;
    f.kind = options.strategy == NoiseStrategy::blt         ? FactorizationKind::blt
             : options.strategy == NoiseStrategy::separable ? FactorizationKind::separable
                                                            : FactorizationKind::sqrt_toeplitz;
    f.horizon = options.horizon;
    f.l2_sensitivity = l2_sensitivity_;
    f.target = options.privacy.target;
    f.calibration = options.privacy.calibration;
    f.blt = options.blt;
    f.error = options.blt_error;
    f.participation = options.participation;
    noise_ = make_factorization_noise(f, exact_.packed_size());
  }
  release_noise_ = Eigen::VectorXd::Zero(exact_.packed_size());
  // The release buffers are written at every release: allocated and written once here, so that the
  // stream does not fault their pages in as it goes (dear on virtual machines: docs/performance.md,
  // Page faults). The memory check above counts them already.
  for (Value& value : released_) Accumulator::unpack_value(release_noise_, value);
}

template <class Accumulator>
ContinualSum<Accumulator>::ContinualSum(Eigen::Index dimension, const ContinualSumOptions& options,
                                        const privacy::Budget& budget)
    : ContinualSum(dimension, options, budget, NoCharge{}) {
  journal_ = base::StreamJournal::create(options_.journal);
  try {
    if (budget_.accounted()) charge_stream();
  } catch (...) {
    journal_.discard();  // nothing was built: the journal, empty, goes too
    throw;
  }
}

template <class Accumulator>
void ContinualSum<Accumulator>::charge_stream() {
  // One charge for the whole stream: it is one Gaussian mechanism with GDP parameter μ, i.e. the
  // Gaussian mechanism with sensitivity μ and σ = 1 (ρ = μ²/2), whose (ε, δ) is the target.
  const std::string label = std::string("continual ") + Accumulator::kKind + " sum (" + noise_->name() + ", " +
                            (options_.horizon ? std::to_string(options_.horizon) : std::string("unbounded")) +
                            " releases of " + std::to_string(options_.block_rows) + " rows" +
                            participation_label(options_.participation) + ")";
  budget_.accountant()->charge_gaussian(label, mu(), 1.0, options_.privacy.target);
}

template <class Accumulator>
void ContinualSum<Accumulator>::subscribe(Subscriber subscriber) {
  if (!subscriber) throw InvalidParameter("continual sum: subscriber is empty");
  subscribers_.push_back(std::move(subscriber));
}

template <class Accumulator>
void ContinualSum<Accumulator>::check_row(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index) const {
  // row_norm, as RowGuard uses: a row it passed or clipped passes here too, bit for bit, wherever it
  // sits in memory. NaN fails the comparison too.
  require_bounded_row(row, index, dimension_, options_.privacy.row_norm_bound);
}

template <class Accumulator>
void ContinualSum<Accumulator>::check_capacity(std::uint64_t more_rows) const {
  if (options_.horizon == 0) return;
  const std::uint64_t capacity = (options_.horizon - steps_) * options_.block_rows - rows_pending();
  if (more_rows > capacity)
    throw BudgetExhausted("continual sum: the stream was calibrated for " + std::to_string(options_.horizon) +
                          " releases of " + std::to_string(options_.block_rows) + " rows; " +
                          std::to_string(more_rows) + " more rows at row " + std::to_string(rows()) +
                          " exceed the " + std::to_string(capacity) + " it can still release");
}

template <class Accumulator>
void ContinualSum<Accumulator>::update(const Eigen::Ref<const Eigen::VectorXd>& row) {
  journal_.require_usable("continual sum");
  check_row(row, rows());
  check_capacity(1);
  exact_.update(row);
  if (rows_pending() == options_.block_rows) release_step();
}

template <class Accumulator>
void ContinualSum<Accumulator>::check_block(const Eigen::Ref<const Eigen::MatrixXd>& rows) const {
  journal_.require_usable("continual sum");
  if (rows.cols() != dimension_)
    throw InvalidRow(this->rows(), "block of dimension " + std::to_string(rows.cols()) + ", expected " +
                                       std::to_string(dimension_));
  for (Eigen::Index i = 0; i < rows.rows(); ++i) check_row(rows.row(i).transpose(), this->rows() + static_cast<std::uint64_t>(i));
  check_capacity(static_cast<std::uint64_t>(rows.rows()));
}

template <class Accumulator>
void ContinualSum<Accumulator>::update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
  update_block(rows, {});
}

template <class Accumulator>
void ContinualSum<Accumulator>::update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows,
                                             const std::function<void()>& checked) {
  check_block(rows);
  if (checked) checked();
  Eigen::Index done = 0;
  while (done < rows.rows()) {
    const auto room = static_cast<Eigen::Index>(options_.block_rows - rows_pending());
    const Eigen::Index take = std::min(room, rows.rows() - done);
    exact_.update_block(rows.middleRows(done, take));
    done += take;
    if (rows_pending() == options_.block_rows) release_step();
  }
}

template <class Accumulator>
void ContinualSum<Accumulator>::add_aggregate(const BlockAggregate& part) {
  journal_.require_usable("continual sum");
  check_aggregate(part, {Accumulator::kKind, dimension_, exact_.packed_size(), options_.block_rows,
                         options_.privacy.row_norm_bound, rows(), options_.block_rows - rows_pending()});
  check_capacity(part.rows);
  Accumulator summed(dimension_, options_.batch_rows);
  summed.unpack(part.packed_sum, part.rows);
  exact_.merge(summed);
  if (rows_pending() == options_.block_rows) release_step();
}

template <class Accumulator>
void ContinualSum<Accumulator>::flush() {
  journal_.require_usable("continual sum");
  if (rows_pending() > 0) release_step();
}

template <class Accumulator>
double ContinualSum<Accumulator>::off_diagonal_scale() const noexcept {
  return options_.shape == privacy::SymmetricNoiseShape::goe ? std::sqrt(0.5) : 1.0;
}

template <class Accumulator>
void ContinualSum<Accumulator>::release_step() {
  noise_->advance(*source_, release_noise_);
  // Forward secrecy of checkpoints: from now on the secure source's state cannot regenerate the
  // noise just drawn (noise_source.hpp, SecureNoiseSource::ratchet).
  source_->ratchet();
  ++steps_;
  rows_released_ = rows();
  const double variance = noise_->release_variance(steps_);
  exact_.release(release_noise_, off_diagonal_scale(), privacy::snap_granularity(std::sqrt(variance)),
                 released_[steps_ % released_.size()]);
  if (journal_.kept()) record_release();
  const Release release = latest();
  for (const Subscriber& subscriber : subscribers_) subscriber(release);
}

// Into the journal before anyone sees it: the step, its rows and its values (a covariance's upper
// triangle, column by column), as published. If the journal refuses it (or cannot make it durable),
// the values are wiped and the stream refuses everything after: nothing of it is published.
template <class Accumulator>
void ContinualSum<Accumulator>::record_release() {
  Value& value = released_[steps_ % released_.size()];
  base::ReleaseDigest digest;
  digest.add(steps_).add(rows_released_);
  if constexpr (std::is_same_v<Value, Eigen::MatrixXd>) {
    for (Eigen::Index j = 0; j < value.cols(); ++j) digest.add(value.col(j).data(), static_cast<std::size_t>(j + 1));
  } else {
    digest.add(value.data(), static_cast<std::size_t>(value.size()));
  }
  journal_.record(steps_, digest, [&value] { value.setZero(); });
}

template <class Accumulator>
const typename ContinualSum<Accumulator>::Value& ContinualSum<Accumulator>::noisy_prefix() const {
  journal_.require_usable("continual sum");
  if (steps_ == 0) throw InvalidParameter("continual sum: no release yet (" + std::to_string(rows()) + " rows pending)");
  return released_[steps_ % released_.size()];
}

template <class Accumulator>
typename ContinualSum<Accumulator>::Release ContinualSum<Accumulator>::latest() const {
  const Value& value = noisy_prefix();
  const double variance = noise_->release_variance(steps_);
  const double scale = off_diagonal_scale();
  return Release{steps_, rows_released_, value, variance, scale * scale * variance};
}

template class ContinualSum<VectorAccumulator>;
template class ContinualSum<CovarianceAccumulator>;

}  // namespace dpstream::stream
