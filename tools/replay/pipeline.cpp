#include "replay/pipeline.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "dpstream/linalg/packed_triangle.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "replay/checkpoint.hpp"

namespace dpstream::tools::replay {

using Eigen::Index;
using Eigen::MatrixXd;

namespace {

// Nice steps E takes below the thread that built the Pipeline, whose nice it starts with
// (pipeline.hpp, "Scheduling"). 5 to 19 all gained; 10 keeps E from being starved as hard by other
// processes' work as 19 would.
constexpr int kEvaluationNice = 10;

// Lowers the calling thread's priority by `more` nice steps (at most to 19). Linux: setpriority on a
// thread id sets that thread's nice alone. Lowering is always allowed; if it fails all the same (a
// sandbox forbidding the call), only the speed it would bring is lost.
void lower_this_thread_priority(int more) {
#ifdef __linux__
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (errno == 0) ::setpriority(PRIO_PROCESS, tid, std::min(19, now + more));
#else
  (void)more;
#endif
}

}  // namespace

Pipeline::Pipeline(Index d, const ReplaySettings& s, std::optional<std::uint64_t> known_rows,
                   const pb::ReplayCheckpoint* from)
    : d_(d), block_(s.block), slots_(pipeline_slots(d, s)) {
  ring_.resize(slots_.ring);
  gains_.resize(slots_.ring);
  const std::uint64_t steps = known_rows ? (*known_rows + s.block - 1) / s.block : 0;
  // ~200 points on the curve when the length is known; a point per block otherwise.
  const std::uint64_t sample_every = s.block * std::max<std::uint64_t>(1, steps / 200);
  if (!s.nonprivate) {
    learners_ = s.learners();
    share_ = learner_share(s.privacy.target(), learners_.size());
    accountant_.emplace(s.privacy.target());  // the whole target; each learner charges its share
    if (learners_ != std::vector<std::string>{"fpl"})
      rows_ = std::make_unique<RowLearners>(d, s, known_rows, &*accountant_);
  }
  std::vector<std::string> names;
  for (const std::string& name : learners_)
    if (name == "fpl") names.push_back("private");  // its name in regret.csv, as before the list
    else if (name != "gauss") names.push_back(name);
  names.push_back("ftl");
  meter_ = std::make_unique<eval::RegretMeter>(d, s.k, names, sample_every);
  ftl_index_ = meter_->learner("ftl");
  main_index_ = names.size() > 1 ? 0 : ftl_index_;

  pca::FplOptions ftl;
  ftl.k = s.k;
  ftl.mode = pca::FplMode::follow_the_leader;
  ftl.refresh_every = s.block;
  ftl_ = std::make_unique<pca::FplOnlinePca>(d, ftl);

  if (s.has_learner("fpl") && !s.nonprivate) build_private(d, s, steps, from);
  if (from) restore(*from);
  if (nonnegative_) {
    projections_ = std::make_unique<FullProjections>(
        nonnegative_->releases(), nonnegative_->last_full(), nonnegative_->options().refresh_ratio, slots_.projections,
        [this](std::uint64_t t) -> const MatrixXd& { return release_copy_[t % release_buffers_]; });
    if (from) projections_->published(from->blocks());  // release b is in its slot (restore)
  }
  if (private_) {
    s_thread_ = std::thread([this] { worker(&Pipeline::stream_step, s_error_, cpu_stream_); });
    if (projections_) p_thread_ = std::thread([this] { worker(&Pipeline::projection_step, p_error_, cpu_projections_); });
    l_thread_ = std::thread([this] { worker(&Pipeline::learner_step, l_error_, cpu_learner_); });
  }
  e_thread_ = std::thread([this, beside_learner = private_ != nullptr] {
    if (beside_learner) lower_this_thread_priority(kEvaluationNice);
    worker(&Pipeline::eval_step, e_error_, cpu_eval_);
  });
}

// The stream (charging the accountant once, at construction, for its share; a restored stream
// brings its ledger) and the private learner that follows its releases.
void Pipeline::build_private(Index d, const ReplaySettings& s, std::uint64_t steps, const pb::ReplayCheckpoint* from) {
  stream::ContinualSumOptions o = s.stream_options(steps);
  o.target = share_;
  // The learner follows a release in place, from the stream's own buffers, unless what it follows
  // is made from the release (the separable estimate) or changed in place (--nonnegative's reading).
  // One buffer more than the slots of a copy, for as much slack and the same memory: the copy path
  // holds the stream's latest release besides its slots.
  in_place_ = o.strategy != stream::NoiseStrategy::separable && !s.nonnegative;
  release_buffers_ = slots_.releases + (in_place_ ? 1 : 0);
  if (in_place_) o.kept_releases = static_cast<std::uint32_t>(release_buffers_);
  if (!s.checkpoint.empty()) o.journal = journal_path(s.checkpoint);
  if (from)
    sum_ = std::make_unique<stream::ContinualCovariance>(
        stream::ContinualCovariance::deserialize(from->continual_sum(), d, o, &*accountant_));
  else
    sum_ = std::make_unique<stream::ContinualCovariance>(d, o, &*accountant_);
  pca::FplOptions p;
  p.k = s.k;
  p.mode = pca::FplMode::private_tree;
  private_ = std::make_unique<pca::FplOnlinePca>(d, p);
  // The slots S writes at every block are written once here, as the stream's release buffers are
  // (continual_sum.cpp): S, the longest thread at d = 784, then never faults their pages in.
  if (in_place_) release_view_.assign(release_buffers_, nullptr);
  else release_copy_.assign(release_buffers_, MatrixXd::Zero(d, d));
  release_noise_.assign(release_buffers_, 0.0);
  exact_sums_.assign(slots_.sums, Eigen::VectorXd::Zero(d * (d + 1) / 2));
  // --mechanism separable: the learner follows the stationary estimate t·m̂_t built from the
  // releases (post-processing, stationary_estimate.hpp), not the released prefix itself.
  if (const auto* separable = dynamic_cast<const stream::SeparableNoise*>(&sum_->noise())) {
    stationary_.emplace(separable->strategy());
    packed_release_.setZero(d * (d + 1) / 2);
  }
  if (s.nonnegative) nonnegative_.emplace(d, pca::DoublyNonnegativeOptions{kNonnegativeRounds, kNonnegativeRefreshRatio});
  if (s.release_observer) sum_->subscribe(s.release_observer);  // tests and audits (settings.hpp)
  // Instead of private_->attach(*sum_): the same follow() of every release, run on thread L.
  sum_->subscribe([this](const stream::ContinualCovariance::Release& r) { on_release(r); });
  private_index_ = meter_->learner("private");
}

std::vector<LearnerFigures> Pipeline::learner_figures() const {
  std::vector<LearnerFigures> row_figures;
  if (rows_) row_figures = rows_->figures(*meter_);
  std::vector<LearnerFigures> out;
  for (const std::string& name : learners_) {
    if (name == "fpl") {
      const double captured = pca::captured_variance(meter_->hindsight_covariance(), private_->basis()) / meter_->opt();
      out.push_back({name, meter_->regret_over_opt(private_index_), captured, share_.epsilon(), share_.delta()});
    } else {
      for (const LearnerFigures& f : row_figures)
        if (f.name == name) out.push_back(f);
    }
  }
  return out;
}

Pipeline::~Pipeline() {
  if (running_) {
    fail();
    join();
  }
}

MatrixXd* Pipeline::next_slot(std::uint64_t rows) {
  const std::uint64_t b = produced_;
  const std::uint64_t ring = slots_.ring;
  if (b >= ring) {
    if (private_) {
      wait_until(s_done_, b - ring + 1);
      wait_until(l_done_, b - ring + 1);
    }
    wait_until(e_done_, b - ring + 1);
  }
  if (failed_) return nullptr;
  MatrixXd& m = ring_[b % ring];
  if (static_cast<std::uint64_t>(m.rows()) != rows) m.resize(static_cast<Index>(rows), d_);
  return &m;
}

void Pipeline::publish() {
  ++produced_;
  produced_signal_.store(produced_, std::memory_order_release);
  produced_signal_.notify_all();
}

void Pipeline::close() {
  produced_signal_.fetch_or(kClosed, std::memory_order_release);
  produced_signal_.notify_all();
  join();
  for (const auto& error : {s_error_, p_error_, l_error_, e_error_})
    if (error) std::rethrow_exception(error);
}

void Pipeline::finish() {
  if (sum_) sum_->flush();
  meter_->finish();
  if (rows_) rows_->finish(*meter_);
}

bool Pipeline::drain() {
  const std::uint64_t b = produced_;
  if (private_ && (!wait_until(s_done_, b) || !wait_until(l_done_, b))) return false;
  return wait_until(e_done_, b) && !failed_;
}

// Blocks until `counter` (without its flag) ≥ target; false if it was closed first or a worker failed.
bool Pipeline::wait_until(std::atomic<std::uint64_t>& counter, std::uint64_t target) {
  for (;;) {
    const std::uint64_t v = counter.load(std::memory_order_acquire);
    if (failed_) return false;
    if ((v & ~kClosed) >= target) return true;
    if (v & kClosed) return false;
    counter.wait(v);
  }
}

void Pipeline::signal(std::atomic<std::uint64_t>& counter, std::uint64_t value) {
  counter.store(value, std::memory_order_release);
  counter.notify_all();
}

void Pipeline::fail() {
  failed_ = true;
  if (projections_) projections_->stop();
  for (auto* a : {&produced_signal_, &released_, &release_free_, &ready_, &s_done_, &l_done_, &e_done_}) {
    a->fetch_or(kClosed);
    a->notify_all();
  }
}

void Pipeline::join() {
  for (auto* t : {&s_thread_, &l_thread_, &e_thread_})
    if (t->joinable()) t->join();
  if (projections_) projections_->stop();  // nothing left to project (P may be ahead of the last release)
  if (p_thread_.joinable()) p_thread_.join();
  running_ = false;
}

void Pipeline::worker(bool (Pipeline::*step)(std::uint64_t), std::exception_ptr& error, double& cpu) {
  try {
    for (std::uint64_t b = first_block_; (this->*step)(b); ++b) {}
  } catch (...) {
    error = std::current_exception();
    fail();
  }
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  cpu = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// S: block b into the stream.
bool Pipeline::stream_step(std::uint64_t b) {
  if (!wait_until(produced_signal_, b + 1)) return false;
  // In place: block b completes release b + 1, written over release b + 1 − n (n buffers): once L
  // is done with that one.
  const std::uint64_t n = release_buffers_;
  if (in_place_ && b + 1 > n && !wait_until(release_free_, b + 1 - n)) return false;
  sum_->update_block(ring_[b % slots_.ring]);
  if (b >= slots_.sums && !wait_until(e_done_, b - slots_.sums + 1)) return false;
  sum_->exact_sum().pack(exact_sum_slot(b));
  signal(s_done_, b + 1);
  return true;
}

// S (inside update_block): release t for L, in slot t % n — the stream's own buffer in place (S
// waited for it in stream_step), else a copy, once L is done with release t − n. After the workers
// stopped (the final flush), the learner follows it here.
void Pipeline::on_release(const stream::ContinualCovariance::Release& r) {
  if (stationary_) {
    linalg::pack_lower(r.noisy_prefix, packed_release_);  // releases are exactly symmetric: nothing is lost
    stationary_->add(r.step, packed_release_);
  }
  if (!running_) {
    MatrixXd followed;
    copy_followed(r.noisy_prefix, followed);
    follow(followed, followed_noise_norm(r), 0);
    return;
  }
  const std::uint64_t n = release_buffers_;
  if (in_place_) {
    release_view_[r.step % n] = &r.noisy_prefix;  // valid until release t + n (kept_releases)
  } else {
    if (r.step > n && !wait_until(release_free_, r.step - n)) return;  // failed: S stops next step
    copy_followed(r.noisy_prefix, release_copy_[r.step % n]);
  }
  release_noise_[r.step % n] = followed_noise_norm(r);
  if (projections_) projections_->published(r.step);
  signal(released_, r.step);
}

// What the private learner follows for the latest release — the release, or the stationary
// estimate — into `slot`'s lower triangle (its storage reused): the learner and the projections
// read that triangle only, so neither S mirrors it nor L checks its symmetry (the release and the
// packed estimate are exactly symmetric).
void Pipeline::copy_followed(const MatrixXd& release, MatrixXd& slot) const {
  if (stationary_) {
    linalg::unpack_lower_triangle(stationary_->prefix(), slot);
    return;
  }
  slot.resize(d_, d_);
  for (Index j = 0; j < d_; ++j) slot.col(j).tail(d_ - j) = release.col(j).tail(d_ - j);
}

double followed_noise_norm(Index d, const stream::ContinualCovariance::Release& r,
                           std::optional<double> stationary_variance, bool nonnegative) {
  if (nonnegative) return 0;
  double off_diagonal = r.off_diagonal_noise_variance;
  if (stationary_variance) {
    const double ratio = r.noise_variance > 0 ? r.off_diagonal_noise_variance / r.noise_variance : 1.0;
    off_diagonal = *stationary_variance * ratio;
  }
  return pca::noise_spectral_norm(d, off_diagonal);
}

double Pipeline::followed_noise_norm(const stream::ContinualCovariance::Release& r) const {
  std::optional<double> stationary_variance;
  if (stationary_) stationary_variance = stationary_->prefix_variance(sum_->noise().draw_sigma());
  return replay::followed_noise_norm(d_, r, stationary_variance, nonnegative_.has_value());
}

// The private learner follows `followed` (a copy of what copy_followed gives), read first under
// --nonnegative (post-processing, in place; the releases in order, so the reader's schedule is theirs).
// `step`: on L, the release it is, so that a full one is read with the projection P or L computed
// ahead; 0 after the workers stopped (the final flush), where the reader projects it itself. False
// if stopped while waiting for a projection (a worker failed).
bool Pipeline::follow(MatrixXd& followed, double noise_norm, std::uint64_t step) {
  if (nonnegative_ && step > 0 && nonnegative_->next_is_full()) {
    const MatrixXd* projected = projections_->take(step);
    if (!projected) return false;
    nonnegative_->apply_projected_lower(followed, *projected);
    projections_->give_back(step);
  } else if (nonnegative_) {
    nonnegative_->apply_lower(followed);
  }
  private_->follow_lower(followed, noise_norm);
  return true;
}

// L: follow release b (for b ≥ 1), then score block b.
bool Pipeline::learner_step(std::uint64_t b) {
  if (!wait_until(produced_signal_, b + 1)) {
    ready_.fetch_or(kClosed, std::memory_order_release);  // E: no block after the last one
    ready_.notify_all();
    return false;
  }
  if (b >= 1) {
    // Block b exists, so blocks 0..b−1 were full and release b will come.
    if (!wait_until(released_, b)) return false;
    const std::uint64_t slot = b % release_buffers_;
    // On L, in the slot L holds until release_free_: the stream's buffer, read only (its upper
    // triangle: the stream made the release symmetric, so follow()'s check of both would read twice
    // the bytes for nothing), or L's copy, read in place.
    if (in_place_) private_->follow_upper(*release_view_[slot], release_noise_[slot]);
    else if (!follow(release_copy_[slot], release_noise_[slot], b)) return false;
    signal(release_free_, b);
  }
  gains_[b % slots_.ring] = private_->gains(ring_[b % slots_.ring]);
  signal(ready_, b + 1);
  signal(l_done_, b + 1);
  return true;
}

// P: projects the next full release it can claim (the argument, a step count, is unused).
bool Pipeline::projection_step(std::uint64_t) { return projections_->help(); }

// E: block b into the meter and FTL.
bool Pipeline::eval_step(std::uint64_t b) {
  if (!wait_until(private_ ? ready_ : produced_signal_, b + 1)) return false;
  const MatrixXd& m = ring_[b % slots_.ring];
  meter_->add_gains(ftl_index_, ftl_->gains(m));
  if (private_) meter_->add_gains(private_index_, gains_[b % slots_.ring]);
  if (rows_) rows_->step(m, *meter_);
  if (private_) {
    if (!wait_until(s_done_, b + 1)) return false;
    meter_->observe(m, exact_sum_slot(b));  // the sum S holds after block b
  } else {
    meter_->observe(m);
  }
  // FTL's leader is the exact Σ a aᵀ the meter already holds, and the meter solves its top k for the
  // curve anyway (RegretMeter::leader): FTL takes that solution rather than accumulating a second
  // copy of the sum and solving it again. At each multiple of B rows, as refresh_every = B.
  if (meter_->rows() % block_ == 0) ftl_->follow_solved(meter_->leader());
  rows_done_.store(meter_->rows(), std::memory_order_relaxed);
  signal(e_done_, b + 1);
  return true;
}

}  // namespace dpstream::tools::replay
