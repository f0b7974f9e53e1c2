#include "dpstream/pca/streaming_private_pca.hpp"

#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::pca {

using Eigen::Index;

namespace {

// The refresh options with `runs` covering every planned refresh.
NoisyPowerMethodOptions calibrated(const StreamingPrivatePcaOptions& o) {
  if (o.horizon_rows < 1) throw InvalidParameter("StreamingPrivatePca: horizon_rows must be >= 1, got 0");
  if (o.refresh_every < 1) throw InvalidParameter("StreamingPrivatePca: refresh_every must be >= 1, got 0");
  const std::uint64_t planned = (o.horizon_rows + o.refresh_every - 1) / o.refresh_every;
  if (planned > static_cast<std::uint64_t>(INT32_MAX))
    throw InvalidParameter("StreamingPrivatePca: " + std::to_string(planned) + " refreshes is too many");
  NoisyPowerMethodOptions r = o.refresh;
  r.runs = static_cast<int>(planned);
  return r;
}

}  // namespace

StreamingPrivatePca::StreamingPrivatePca(Index dimension, const StreamingPrivatePcaOptions& options,
                                         const privacy::Budget& budget, NoCharge)
    : dimension_(dimension),
      options_(options),
      planned_((options.horizon_rows + std::max<std::uint64_t>(options.refresh_every, 1) - 1) /
               std::max<std::uint64_t>(options.refresh_every, 1)),
      method_(dimension, calibrated(options)),
      exact_(dimension),
      budget_(budget) {}

StreamingPrivatePca::StreamingPrivatePca(Index dimension, const StreamingPrivatePcaOptions& options,
                                         const privacy::Budget& budget)
    : StreamingPrivatePca(dimension, options, budget, NoCharge{}) {
  journal_ = base::StreamJournal::create(options_.journal);
  try {
    charge_stream();
  } catch (...) {
    journal_.discard();  // nothing was built: the journal, empty, goes too
    throw;
  }
}

StreamingPrivatePca::StreamingPrivatePca(StreamingPrivatePca&&) noexcept = default;
StreamingPrivatePca& StreamingPrivatePca::operator=(StreamingPrivatePca&&) noexcept = default;
StreamingPrivatePca::~StreamingPrivatePca() = default;

// One charge for the whole stream: ⌈horizon/B⌉·R rounds of sensitivity Δ and noise σ, i.e. one
// Gaussian mechanism with sensitivity μσ (μ = Δ√(runs·R)/σ), exactly the target.
void StreamingPrivatePca::charge_stream() {
  if (budget_.accounted())
    budget_.accountant()->charge_gaussian("streaming private PCA (" + std::to_string(planned_) + " refreshes of " +
                                              std::to_string(options_.refresh_every) + " rows)",
                                          method_.mu() * method_.sigma(), method_.sigma(),
                                          options_.refresh.privacy.target);
}

void StreamingPrivatePca::subscribe(Subscriber subscriber) { subscribers_.push_back(std::move(subscriber)); }

void StreamingPrivatePca::check(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index) const {
  if (index >= options_.horizon_rows)
    throw BudgetExhausted("StreamingPrivatePca: the stream was calibrated for " + std::to_string(options_.horizon_rows) +
                          " rows; row " + std::to_string(index) + " is past it");
  stream::require_bounded_row(row, index, dimension_, options_.refresh.privacy.row_norm_bound);
}

void StreamingPrivatePca::update(const Eigen::Ref<const Eigen::VectorXd>& row) {
  journal_.require_usable("streaming private PCA");
  check(row, exact_.rows());
  exact_.update(row);
  if (exact_.rows() % options_.refresh_every == 0 || exact_.rows() == options_.horizon_rows) refresh();
}

void StreamingPrivatePca::update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
  journal_.require_usable("streaming private PCA");
  // Every row is checked before any is taken, so a bad block leaves the stream unchanged.
  for (Index i = 0; i < rows.rows(); ++i) check(rows.row(i).transpose(), exact_.rows() + static_cast<std::uint64_t>(i));
  Index done = 0;
  while (done < rows.rows()) {
    // Up to the next refresh boundary, so each refresh sees exactly the rows before it.
    const std::uint64_t to_boundary = options_.refresh_every - exact_.rows() % options_.refresh_every;
    const Index take = static_cast<Index>(std::min<std::uint64_t>(to_boundary, static_cast<std::uint64_t>(rows.rows() - done)));
    exact_.update_block(rows.middleRows(done, take));
    done += take;
    if (exact_.rows() % options_.refresh_every == 0 || exact_.rows() == options_.horizon_rows) refresh();
  }
}

void StreamingPrivatePca::refresh() {
  // Warm start from the last release (post-processing); the first refresh starts data-independently.
  current_ = method_.run(exact_, privacy::Budget::unaccounted("every refresh was charged at construction"), refreshes_ > 0 ? &current_.vectors : nullptr);
  if (journal_.kept()) record_refresh();
  ++refreshes_;
  const Refresh r{refreshes_, exact_.rows(), current_};
  for (const Subscriber& s : subscribers_) s(r);
}

// Into the journal before any subscriber sees it: the refresh as published (the header).
void StreamingPrivatePca::record_refresh() {
  base::ReleaseDigest digest;
  digest.add(refreshes_ + 1).add(exact_.rows());
  digest.add(current_.vectors.data(), static_cast<std::size_t>(current_.vectors.size()));
  digest.add(current_.values.data(), static_cast<std::size_t>(current_.values.size()));
  journal_.record(refreshes_ + 1, digest, [this] {
    current_.vectors.setZero();
    current_.values.setZero();
  });
}

}  // namespace dpstream::pca
