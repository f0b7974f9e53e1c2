#include "dpstream/session/online_pca_session.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/packed_triangle.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/session/followed_release.hpp"
#include "dpstream/stream/separable_noise.hpp"

namespace dpstream::session {

using Eigen::Index;
using Eigen::MatrixXd;

namespace {

// Nice steps the evaluation thread takes below the thread that built the session, whose nice it starts with
// (online_pca_session.hpp, "Scheduling"). 5 to 19 all gained; 10 keeps the evaluation from being starved as hard by other
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

// The threads, named for what they do (seen by top -H and debuggers).
void OnlinePcaSession::start_workers() {
  if (private_) {
    stream_thread_ = std::thread([this] { worker("stream", &OnlinePcaSession::stream_step, stream_error_, cpu_stream_); });
    if (projections_)
      projection_thread_ = std::thread(
          [this] { worker("projection", &OnlinePcaSession::projection_step, projection_error_, cpu_projection_); });
    learner_thread_ =
        std::thread([this] { worker("learner", &OnlinePcaSession::learner_step, learner_error_, cpu_learner_); });
  }
  evaluation_thread_ = std::thread([this, beside_learner = private_ != nullptr] {
    if (beside_learner) lower_this_thread_priority(kEvaluationNice);
    worker("evaluation", &OnlinePcaSession::evaluation_step, evaluation_error_, cpu_evaluation_);
  });
}

std::vector<LearnerFigures> OnlinePcaSession::learner_figures() const {
  if (!meter_) return {};  // evaluation = none: no figures
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

OnlinePcaSession::~OnlinePcaSession() {
  if (running_) {
    fail();
    join();
  }
}

MatrixXd* OnlinePcaSession::next_slot(std::uint64_t rows) {
  if (ingesting_) throw InvalidParameter("online PCA: next_slot: this session is fed by ingest()");
  const std::uint64_t b = produced_;
  const std::uint64_t ring = slots_.ring;
  if (b >= ring) {
    if (private_) {
      wait_until(stream_done_, b - ring + 1);
      wait_until(learner_done_, b - ring + 1);
    }
    wait_until(evaluation_done_, b - ring + 1);
  }
  if (failed_) return nullptr;
  MatrixXd& m = ring_[b % ring];
  if (static_cast<std::uint64_t>(m.rows()) != rows) m.resize(static_cast<Index>(rows), d_);
  return &m;
}

void OnlinePcaSession::publish() {
  ++produced_;
  produced_signal_.store(produced_, std::memory_order_release);
  produced_signal_.notify_all();
  if (!options_.threaded) run_inline(produced_ - 1);
}

// Unthreaded: block b through the workers' steps, in an order in which none of them waits (each
// waits only for an earlier step of this block or of an earlier one). An exception propagates to
// the caller, after the session is marked failed.
void OnlinePcaSession::run_inline(std::uint64_t b) {
  try {
    if (private_ && (!stream_step(b) || !learner_step(b))) throw std::logic_error("online PCA: a step would wait");
    if (!evaluation_step(b)) throw std::logic_error("online PCA: a step would wait");
  } catch (...) {
    fail();
    throw;
  }
}

void OnlinePcaSession::run(const Eigen::Ref<const MatrixXd>& rows) {
  for (Index first = 0; first < rows.rows(); first += static_cast<Index>(block_)) {
    const Index n = std::min(static_cast<Index>(block_), rows.rows() - first);
    MatrixXd* slot = next_slot(static_cast<std::uint64_t>(n));
    if (!slot) break;  // a worker failed: close() says why
    *slot = rows.middleRows(first, n);
    publish();
  }
  close();
  finish();
}

void OnlinePcaSession::start_ingesting(const char* fn) {
  if (options_.threaded || produced_ > 0)
    throw InvalidParameter(std::string("online PCA: ") + fn +
                           ": needs an unthreaded session (threaded = false) fed by ingest() and add_aggregate() alone");
  if (ingesting_) return;
  ingesting_ = true;
  // The block path's slots between the workers are not used here (a release is followed as it is made).
  std::vector<MatrixXd>().swap(release_copy_);
  std::vector<Eigen::VectorXd>().swap(exact_sums_);
}

std::uint64_t OnlinePcaSession::rows_pending() const { return sum_ ? sum_->rows_pending() : ingested_ % block_; }

void OnlinePcaSession::ingest(const Eigen::Ref<const MatrixXd>& rows) {
  start_ingesting("ingest");
  for (Index done = 0; done < rows.rows();) {
    const auto room = std::min<std::uint64_t>(block_ - rows_pending(), static_cast<std::uint64_t>(rows.rows() - done));
    const auto take = static_cast<Index>(room);
    ingest_piece(rows.middleRows(done, take));
    done += take;
  }
}

// Rows within one block, in the order of the block path's steps: checked by the stream first (a row
// it refuses, or rows past its horizon, leave the whole session as it was), the private learner's
// gains (with the subspace of the releases before this block, so before the stream may complete a
// release), then the evaluation's sequence, in which the stream takes the rows (on_release follows a
// release at once: ingesting_) and the meter the stream's exact sum. The stream checks each row once:
// the scoring runs inside its update_block, after the checks and before it takes any row.
void OnlinePcaSession::ingest_piece(const Eigen::Ref<const MatrixXd>& piece) {
  if (!meter_) {
    if (sum_) sum_->update_block(piece);
  } else if (!sum_) {  // no private learner, no stream: the meter takes the rows
    score_and_observe(piece, nullptr, [&] {
      meter_->observe(piece);
      return true;
    });
  } else {
    sum_->update_block(piece, [&] {
      const Eigen::VectorXd gains = private_->gains(piece);
      score(piece, &gains);
    });
    meter_->observe(piece, sum_->exact_sum());  // not the piece's Gram a second time
    observed();
  }
  ingested_ += static_cast<std::uint64_t>(piece.rows());
}

void OnlinePcaSession::add_aggregate(const stream::BlockAggregate& part) {
  start_ingesting("add_aggregate");
  if (meter_) throw InvalidParameter("online PCA: add_aggregate: the regret meter needs the rows (evaluation = none)");
  if (!sum_) throw InvalidParameter("online PCA: add_aggregate: no private stream (fpl is not listed)");
  sum_->add_aggregate(part);
  ingested_ += part.rows;
}

void OnlinePcaSession::close() {
  produced_signal_.fetch_or(kClosed, std::memory_order_release);
  produced_signal_.notify_all();
  join();
  for (const auto& error : {stream_error_, projection_error_, learner_error_, evaluation_error_})
    if (error) std::rethrow_exception(error);
}

void OnlinePcaSession::finish() {
  if (sum_) sum_->flush();
  if (!meter_) return;
  meter_->finish();
  if (rows_) rows_->finish(*meter_);
}

bool OnlinePcaSession::drain() {
  const std::uint64_t b = produced_;
  if (private_ && (!wait_until(stream_done_, b) || !wait_until(learner_done_, b))) return false;
  return wait_until(evaluation_done_, b) && !failed_;
}

// Blocks until `counter` (without its flag) ≥ target; false if it was closed first or a worker failed.
bool OnlinePcaSession::wait_until(std::atomic<std::uint64_t>& counter, std::uint64_t target) {
  for (;;) {
    const std::uint64_t v = counter.load(std::memory_order_acquire);
    if (failed_) return false;
    if ((v & ~kClosed) >= target) return true;
    if (v & kClosed) return false;
    counter.wait(v);
  }
}

void OnlinePcaSession::signal(std::atomic<std::uint64_t>& counter, std::uint64_t value) {
  counter.store(value, std::memory_order_release);
  counter.notify_all();
}

void OnlinePcaSession::fail() {
  failed_ = true;
  if (projections_) projections_->stop();
  for (auto* a : {&produced_signal_, &released_, &release_free_, &ready_, &stream_done_, &learner_done_, &evaluation_done_}) {
    a->fetch_or(kClosed);
    a->notify_all();
  }
}

void OnlinePcaSession::join() {
  for (auto* t : {&stream_thread_, &learner_thread_, &evaluation_thread_})
    if (t->joinable()) t->join();
  if (projections_) projections_->stop();  // nothing left to project (P may be ahead of the last release)
  if (projection_thread_.joinable()) projection_thread_.join();
  running_ = false;
}

void OnlinePcaSession::worker(const char* name, Step step, std::exception_ptr& error, double& cpu) {
#ifdef __linux__
  ::pthread_setname_np(::pthread_self(), name);  // at most 15 characters
#else
  (void)name;
#endif
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

// Stream thread: block b into the stream.
bool OnlinePcaSession::stream_step(std::uint64_t b) {
  if (!wait_until(produced_signal_, b + 1)) return false;
  // In place: block b completes release b + 1, written over release b + 1 − n (n buffers): once L
  // is done with that one.
  const std::uint64_t n = release_buffers_;
  if (in_place_ && b + 1 > n && !wait_until(release_free_, b + 1 - n)) return false;
  sum_->update_block(ring_[b % slots_.ring]);
  if (b >= slots_.sums && !wait_until(evaluation_done_, b - slots_.sums + 1)) return false;
  sum_->exact_sum().pack(exact_sum_slot(b));
  signal(stream_done_, b + 1);
  return true;
}

// Stream thread (inside update_block): release t for the learner, in slot t % n — the stream's own
// buffer in place (stream_step waited for it), else a copy, once the learner is done with release
// t − n. After the workers
// stopped (the final flush), the learner follows it here.
void OnlinePcaSession::on_release(const stream::ContinualCovariance::Release& r) {
  if (stationary_) {
    linalg::pack_lower(r.noisy_prefix, packed_release_);  // releases are exactly symmetric: nothing is lost
    stationary_->add(r.step, packed_release_);
  }
  if (!running_ || ingesting_) {
    MatrixXd followed;
    copy_followed(r.noisy_prefix, followed);
    follow(followed, followed_noise_norm(r), 0);
    return;
  }
  const std::uint64_t n = release_buffers_;
  if (in_place_) {
    release_view_[r.step % n] = &r.noisy_prefix;  // valid until release t + n (kept_releases)
  } else {
    if (r.step > n && !wait_until(release_free_, r.step - n)) return;  // failed: the stream thread stops next step
    copy_followed(r.noisy_prefix, release_copy_[r.step % n]);
  }
  release_noise_[r.step % n] = followed_noise_norm(r);
  if (projections_) projections_->published(r.step);
  signal(released_, r.step);
}

// What the private learner follows for the latest release — the release, or the stationary
// estimate — into `slot`'s lower triangle (its storage reused): the learner and the projections
// read that triangle only, so neither the stream thread mirrors it nor the learner checks its symmetry (the release and the
// packed estimate are exactly symmetric).
void OnlinePcaSession::copy_followed(const MatrixXd& release, MatrixXd& slot) const {
  if (stationary_) {
    linalg::unpack_lower_triangle(stationary_->prefix(), slot);
    return;
  }
  slot.resize(d_, d_);
  for (Index j = 0; j < d_; ++j) slot.col(j).tail(d_ - j) = release.col(j).tail(d_ - j);
}

double OnlinePcaSession::followed_noise_norm(const stream::ContinualCovariance::Release& r) const {
  std::optional<double> stationary_variance;
  if (stationary_) stationary_variance = stationary_->prefix_variance(sum_->noise().draw_sigma());
  return session::followed_noise_norm(d_, r, stationary_variance, nonnegative_.has_value());
}

// The private learner follows `followed` (a copy of what copy_followed gives), read first under
// nonnegative (post-processing, in place; the releases in order, so the reader's schedule is theirs).
// `step`: on the learner thread, the release it is, so that a full one is read with the projection
// the projection or learner thread computed ahead; 0 after the workers stopped (the final flush), where the reader projects it itself. False
// if stopped while waiting for a projection (a worker failed).
bool OnlinePcaSession::follow(MatrixXd& followed, double noise_norm, std::uint64_t step) {
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

// Learner thread: follow release b (for b ≥ 1), then score block b.
bool OnlinePcaSession::learner_step(std::uint64_t b) {
  if (!wait_until(produced_signal_, b + 1)) {
    ready_.fetch_or(kClosed, std::memory_order_release);  // evaluation: no block after the last one
    ready_.notify_all();
    return false;
  }
  if (b >= 1) {
    // Block b exists, so blocks 0..b−1 were full and release b will come.
    if (!wait_until(released_, b)) return false;
    const std::uint64_t slot = b % release_buffers_;
    // In the slot the learner holds until release_free_: the stream's buffer, read only (its upper
    // triangle: the stream made the release symmetric, so follow()'s check of both would read twice
    // the bytes for nothing), or L's copy, read in place.
    if (in_place_) private_->follow_upper(*release_view_[slot], release_noise_[slot]);
    else if (!follow(release_copy_[slot], release_noise_[slot], b)) return false;
    signal(release_free_, b);
  }
  gains_[b % slots_.ring] = private_->gains(ring_[b % slots_.ring]);
  signal(ready_, b + 1);
  signal(learner_done_, b + 1);
  return true;
}

// Projection thread: projects the next full release it can claim (the argument, a step count, is unused).
bool OnlinePcaSession::projection_step(std::uint64_t) { return projections_->help(); }

// The evaluation's sequence on rows (block b on the evaluation thread; a piece of the current block
// in ingest): FTL's gains and the private learner's (`private_gains`, made with the subspace of the
// releases before the rows' block; nullptr without a private learner), the row-fed learners scored
// and fed, then `observe` gives the meter the rows with the exact sum (false: the session stopped
// while it waited for the sum). FTL's leader is the exact Σ a aᵀ the meter already holds, and the
// meter solves its top k for the curve anyway (RegretMeter::leader): FTL takes that solution rather
// than accumulating a second copy of the sum and solving it again, at each multiple of B rows, as
// refresh_every = B.
void OnlinePcaSession::score(const Eigen::Ref<const MatrixXd>& rows, const Eigen::VectorXd* private_gains) {
  if (ftl_) meter_->add_gains(ftl_index_, ftl_->gains(rows));
  if (private_gains) meter_->add_gains(private_index_, *private_gains);
  if (rows_) rows_->step(rows, *meter_);
}

void OnlinePcaSession::observed() {
  if (ftl_ && meter_->rows() % block_ == 0) ftl_->follow_solved(meter_->leader());
  rows_done_.store(meter_->rows(), std::memory_order_relaxed);
}

template <class Observe>
bool OnlinePcaSession::score_and_observe(const Eigen::Ref<const MatrixXd>& rows, const Eigen::VectorXd* private_gains,
                                         Observe&& observe) {
  score(rows, private_gains);
  if (!observe()) return false;
  observed();
  return true;
}

// Evaluation thread: block b into the meter and FTL.
bool OnlinePcaSession::evaluation_step(std::uint64_t b) {
  if (!wait_until(private_ ? ready_ : produced_signal_, b + 1)) return false;
  const MatrixXd& m = ring_[b % slots_.ring];
  if (meter_) {  // evaluation = none: nothing to score, nothing to observe
    const bool observed = score_and_observe(m, private_ ? &gains_[b % slots_.ring] : nullptr, [&] {
      if (!private_) {
        meter_->observe(m);  // nonprivate: no stream adds up the sum
        return true;
      }
      if (!wait_until(stream_done_, b + 1)) return false;
      meter_->observe(m, exact_sum_slot(b));  // the sum the stream thread packed after block b
      return true;
    });
    if (!observed) return false;
  }
  signal(evaluation_done_, b + 1);
  return true;
}

}  // namespace dpstream::session
