// OnlinePcaSession's construction (online_pca_session.hpp): the learners, the meter and
// follow-the-leader; with a private learner, the stream it follows and what it reads the releases
// through; restored from saved parts (online_pca_session_parts.cpp) before any thread starts.
#include <algorithm>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/session/followed_release.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "dpstream/stream/separable_noise.hpp"

namespace dpstream::session {

using Eigen::Index;
using Eigen::MatrixXd;

OnlinePcaSession::OnlinePcaSession(Index d, const OnlinePcaOptions& o, const SessionParts* from)
    : d_(d), options_(o), block_(o.block), slots_(session_slots(d, o)) {
  build(d, from);
}

OnlinePcaSession::OnlinePcaSession(Index d, const OnlinePcaOptions& o, privacy::Budget budget)
    : d_(d), options_(o), block_(o.block), budget_(std::move(budget)), slots_(session_slots(d, o)) {
  build(d, nullptr);
}

void OnlinePcaSession::build(Index d, const SessionParts* from) {
  const OnlinePcaOptions& o = options_;
  using Evaluation = OnlinePcaOptions::Evaluation;
  if (o.k < 1 || o.k > d)
    throw InvalidParameter("online PCA: k " + std::to_string(o.k) + " is outside [1, " + std::to_string(d) + "]");
  if (o.block == 0) throw InvalidParameter("online PCA: blocks of 0 rows");
  if (o.evaluation != Evaluation::meter_and_ftl && o.nonprivate)
    throw InvalidParameter("online PCA: nonprivate runs follow-the-leader alone: it needs the meter and follow-the-leader");
  if (o.evaluation == Evaluation::none && !o.nonprivate && o.learners != std::vector<std::string>{"fpl"})
    throw InvalidParameter("online PCA: the row-fed learners are scored by the meter: evaluation = none runs fpl alone");
  ring_.resize(slots_.ring);
  gains_.resize(slots_.ring);
  const std::uint64_t steps = o.known_rows ? (*o.known_rows + o.block - 1) / o.block : 0;
  if (!o.nonprivate) {
    check_learners(o.learners);
    learners_ = o.learners;
    share_ = learner_share(o.stream.privacy.target, learners_.size());
    // The whole target (each learner charges its share), unless the caller gave its budget.
    if (!budget_) budget_.emplace(accountant_.emplace(o.stream.privacy.target));
    if (learners_ != std::vector<std::string>{"fpl"})
      rows_ = std::make_unique<RowLearners>(d, o, *budget_);
  }
  build_evaluation(d);
  if (o.private_stream()) build_private(d, steps, from);
  if (from) restore(*from);
  if (nonnegative_) {
    projections_ = std::make_unique<FullProjections>(
        nonnegative_->releases(), nonnegative_->last_full(), nonnegative_->options().refresh_ratio, slots_.projections,
        [this](std::uint64_t t) -> const MatrixXd& { return release_copy_[t % release_buffers_]; });
    if (from) projections_->published(from->blocks);  // release b is in its slot (restore)
  }
  if (o.threaded) start_workers();
}

// The regret meter and follow-the-leader, as options_.evaluation says.
void OnlinePcaSession::build_evaluation(Index d) {
  const OnlinePcaOptions& o = options_;
  if (o.evaluation == OnlinePcaOptions::Evaluation::none) return;
  const bool ftl = o.evaluation == OnlinePcaOptions::Evaluation::meter_and_ftl;
  const std::uint64_t steps = o.known_rows ? (*o.known_rows + o.block - 1) / o.block : 0;
  // ~200 points on the curve when the length is known; a point per block otherwise.
  const std::uint64_t sample_every = o.curve_every.value_or(o.block * std::max<std::uint64_t>(1, steps / 200));
  // The online learners, in list order (an offline one is scored in hindsight only).
  const std::vector<std::string> online = rows_ ? rows_->meter_names() : std::vector<std::string>{};
  std::vector<std::string> names;
  for (const std::string& name : learners_)
    if (name == "fpl") names.push_back("private");  // its name in regret.csv, as before the list
    else if (std::find(online.begin(), online.end(), name) != online.end()) names.push_back(name);
  if (ftl) names.push_back("ftl");
  meter_ = std::make_unique<eval::RegretMeter>(d, o.k, names, sample_every);
  if (!ftl) return;
  ftl_index_ = meter_->learner("ftl");
  main_index_ = names.size() > 1 ? 0 : ftl_index_;
  pca::FplOptions f;
  f.k = o.k;
  f.mode = pca::FplMode::follow_the_leader;
  f.refresh_every = o.block;
  ftl_ = std::make_unique<pca::FplOnlinePca>(d, f);
}

// The stream (charging the accountant once, at construction, for its share; a restored stream
// brings its ledger) and the private learner that follows its releases.
void OnlinePcaSession::build_private(Index d, std::uint64_t steps, const SessionParts* from) {
  stream::ContinualSumOptions o = options_.stream;
  o.horizon = steps;  // 0: unbounded (doubling epochs)
  o.block_rows = options_.block;
  o.privacy.target = share_;
  // The learner follows a release in place, from the stream's own buffers, unless what it follows
  // is made from the release (the separable estimate) or changed in place (nonnegative's reading).
  // One buffer more than the slots of a copy, for as much slack and the same memory: the copy path
  // holds the stream's latest release besides its slots.
  in_place_ = o.strategy != stream::NoiseStrategy::separable && !options_.nonnegative;
  release_buffers_ = slots_.releases + (in_place_ ? 1 : 0);
  if (in_place_) o.kept_releases = static_cast<std::uint32_t>(release_buffers_);
  if (from) {
    const SessionPart* saved = from->find("continual_sum");
    if (!saved) throw CorruptInput("the saved session has no continual_sum part");
    sum_ = std::make_unique<stream::ContinualCovariance>(
        stream::ContinualCovariance::load(saved->bytes, d, o, *budget_));
  } else {
    sum_ = std::make_unique<stream::ContinualCovariance>(d, o, *budget_);
  }
  pca::FplOptions p;
  p.k = options_.k;
  p.mode = pca::FplMode::private_tree;
  private_ = std::make_unique<pca::FplOnlinePca>(d, p);
  // The slots the stream thread writes at every block are written once here, as the stream's
  // release buffers are (continual_sum.cpp): the stream, the longest thread at d = 784, then never
  // faults their pages in.
  if (in_place_) release_view_.assign(release_buffers_, nullptr);
  else release_copy_.assign(release_buffers_, MatrixXd::Zero(d, d));
  release_noise_.assign(release_buffers_, 0.0);
  exact_sums_.assign(slots_.sums, Eigen::VectorXd::Zero(d * (d + 1) / 2));
  // separable: the learner follows the stationary estimate t·m̂_t built from the releases
  // (post-processing, stationary_estimate.hpp), not the released prefix itself.
  if (const auto* separable = dynamic_cast<const stream::SeparableNoise*>(&sum_->noise())) {
    stationary_.emplace(separable->strategy());
    packed_release_.setZero(d * (d + 1) / 2);
  }
  if (options_.nonnegative)
    nonnegative_.emplace(d, pca::DoublyNonnegativeOptions{kNonnegativeRounds, options_.nonnegative_refresh_ratio});
  if (options_.release_observer) sum_->subscribe(options_.release_observer);  // tests and audits
  // Instead of private_->attach(*sum_): the same follow() of every release, run on the learner thread.
  sum_->subscribe([this](const stream::ContinualCovariance::Release& r) { on_release(r); });
  if (meter_) private_index_ = meter_->learner("private");
}

}  // namespace dpstream::session
