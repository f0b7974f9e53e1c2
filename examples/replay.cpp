// dpstream-replay: replays a logged stream of rows through private online PCA (follow-the-perturbed-
// leader on a continual-release covariance, Analyze Gauss §4) and measures its regret against the
// best fixed k-subspace in hindsight, next to the non-private follow-the-leader baseline.
//
//   reader ─▶ normalize ─▶ RowGuard ─▶ blocks of B rows ─┬─▶ ContinualCovariance ─release─▶ FplOnlinePca (private)
//   (pb/csv/idx,        (unit/clip/none)                 └─▶ RegretMeter + FplOnlinePca (follow-the-leader)
//    or generated)
//
// Every block is scored by every learner with the subspace it held BEFORE the block (gains), then
// shown to the meter (observe), then fed to the learners. Output: a human summary, DIR/regret.csv,
// DIR/regret.svg and, as the last line of stdout, one JSON object for scripts. The work runs on
// a reader and three worker threads (see class Replay); results do not depend on the scheduling.
//
// Privacy: only the private learner's subspaces are differentially private (the stream's (ε, δ)).
// The meter, follow-the-leader and every figure printed here are computed from raw rows: they are
// evaluation output, not releases.
//
// Checkpoints (--checkpoint PATH --checkpoint-every N, --resume): every N releases the reader waits
// until every worker is done with the same release (Replay::drain) and writes the whole state —
// the continual sum (its own checkpoint: exact sums, the node noise later releases need, the noise
// source's state, the accountant's ledger), both learners, the regret meter, the reader's counts and a
// fingerprint of the rows replayed, and the settings a resume must share — into one protobuf
// message (replay_checkpoint.proto), replaced atomically (dpstream/io/atomic_file.hpp). Counted in
// releases because a release is the only point where the stream holds no partial block. --resume
// re-opens the input, reads the replayed rows again (the seeded generator and a seeded shuffle give
// the same ones) and checks them against the fingerprint, then continues: with --seed the output
// equals the uninterrupted run's, bit for bit (tests/test_replay_resume.sh), and no released node's
// noise is drawn again. The file holds raw data; it is removed once the run completes.
//
// Exit status: 0 done; 1 the run stopped (malformed input, I/O error); 2 bad command line, input
// that cannot be opened, or a checkpoint that cannot be resumed (damaged, other settings, other input).
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include "guarded_reader.hpp"
#include "json_text.hpp"
#include "replay_checkpoint.hpp"
#include "dpstream/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/eval/regret_report.hpp"
#include "dpstream/io/atomic_file.hpp"
#include "dpstream/io/idx_rows.hpp"
#include "dpstream/io/row_source.hpp"
#include "dpstream/io/synthetic_rows.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/stationary_estimate.hpp"
#include "dpstream/stream/tree_noise.hpp"

using namespace dpstream;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
constexpr std::uint64_t kRing = 8;  // blocks in flight between the reader and the workers

// Bad command line or input that cannot be opened: exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

using tools::json_string;

// A JSON number (shortest round-trip text), or null for a value JSON cannot hold.
std::string json_number(double v) { return std::isfinite(v) ? privacy::format_value(v) : "null"; }

// A permutation of 0..n-1 from a seed: Fisher–Yates driven by xoshiro256++ (SeededNoiseSource's
// words), with rejection sampling for unbiased bounded integers. Unlike std::shuffle with a standard
// distribution, the result is the same with every standard library.
std::vector<std::uint64_t> seeded_permutation(std::uint64_t n, std::uint64_t seed) {
  std::vector<std::uint64_t> p(n);
  for (std::uint64_t i = 0; i < n; ++i) p[i] = i;
  privacy::SeededNoiseSource words(seed);
  for (std::uint64_t i = n; i > 1; --i) {
    const std::uint64_t mask = ~std::uint64_t{0} >> std::countl_zero(i - 1);  // smallest 2^b − 1 ≥ i − 1
    std::uint64_t j;
    do j = words.next_word() & mask;
    while (j >= i);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

// A progress line on stderr, only when stderr is a terminal, redrawn at most 10 times a second.
class Progress {
 public:
  explicit Progress(std::optional<std::uint64_t> total) : on_(::isatty(STDERR_FILENO) == 1), total_(total) {}
  void update(const char* phase, std::uint64_t rows, bool force = false) {
    if (!on_) return;
    const auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    char line[160];
    if (total_ && *total_ > 0) {
      const double f = std::min(1.0, static_cast<double>(rows) / static_cast<double>(*total_));
      char bar[31];
      const int filled = static_cast<int>(f * 30);
      for (int i = 0; i < 30; ++i) bar[i] = i < filled ? '#' : '.';
      bar[30] = 0;
      std::snprintf(line, sizeof line, "\r%-8s [%s] %3.0f%% %llu/%llu rows  %.1f s", phase, bar, 100 * f,
                    (unsigned long long)rows, (unsigned long long)*total_, elapsed);
    } else {
      std::snprintf(line, sizeof line, "\r%-8s %llu rows  %.1f s", phase, (unsigned long long)rows, elapsed);
    }
    std::fputs(line, stderr);
    std::fputs("\033[K", stderr);  // erase what a longer previous line left
    std::fflush(stderr);
    drawn_ = true;
  }
  void clear() {
    if (on_ && drawn_) std::fputs("\r\033[K", stderr);
    drawn_ = false;
  }

 private:
  bool on_;
  std::optional<std::uint64_t> total_;
  Clock::time_point start_ = Clock::now(), last_{};
  bool drawn_ = false;
};

// --nonnegative: rounds of (PSD, nonnegative) projection a release (doubly_nonnegative.hpp). One:
// on Fashion-MNIST (separable, GOE, seed 1) 1, 2 and 4 rounds gave regret/OPT 5.022%, 5.025%, 5.025%.
constexpr int kNonnegativeRounds = 1;

struct Settings {
  std::string input, format = "auto", mechanism = "tree", calibration = "tight", normalize = "unit";
  std::string noise_shape = "paper", blt_error = "max";
  std::string out = "replay-out";
  Index k = 10;
  double epsilon = 1.0, delta = 1e-6, clip_norm = 1.0;
  std::uint64_t block = 128, limit = 0;
  std::optional<std::uint64_t> seed, shuffle;
  bool nonprivate = false, skip_malformed = false, clip_norm_given = false;
  bool nonnegative = false;              // rows have no negative entry; the learner projects what it follows
  std::string checkpoint;                // --checkpoint PATH ("": none)
  std::uint64_t checkpoint_every = 0;    // releases between checkpoints (0: none written)
  bool resume = false;                   // continue from the checkpoint
  std::uint64_t test_kill_at_block = 0;  // tests: SIGKILL itself before replaying this block (0: never)
};

// The learners and the meter, and the schedule that drives them on four threads.
//
//   M (main: producer): reads rows (a B-row staging buffer, or every row when shuffling), copies
//     each block of B rows from the row-major buffer into ring slot b % R — a column-major B × d
//     matrix, filled by contiguous reads of each row; writing rows straight into a column-major
//     matrix would be strided and slow — and publishes it (produced = b + 1).
//   S (stream): feeds block b to the ContinualCovariance (exact Gram update, tree noise, release).
//     Its subscriber copies each release Ĉ_t into one of two release slots and publishes it.
//   L (private learner): for block b ≥ 1, follows release b (Ĉ after blocks 0..b−1: the warm
//     eigen-refresh, the most expensive step); then scores block b with that basis into
//     gains[b % R] and publishes them (ready = b + 1).
//   E (evaluation): for block b, once ready > b: FTL's gains, meter.add_gains for FTL and, from
//     gains[b % R], for the private learner, meter.observe(block); at each full block FTL follows
//     the meter's exact covariance (its leader).
// Why this is the protocol of FplOnlinePca attached to the stream, only spread over threads: the
// private learner scores block b with the subspace of release b, i.e. of the rows before block b
// and nothing else (the same sequence of refreshes that attach() would run inside S, since each
// full block of B rows is exactly one release); FTL is scored before its update; the meter gets
// both gains before observe(b) (E reads gains[b] only after L published them: release/acquire on
// `ready`). Splitting S from L lets the Gram update and noise of block b + 1 overlap the refresh of
// release b; the results are identical to a single thread. Slots are reused only when free: M
// rewrites ring slot b % R once S, L and E are done with block b − R; S rewrites release slot t % 2
// once L is done with release t − 2. The threads live for the whole stream, so reading overlaps the
// learners (with --shuffle every row is read before the first block exists). An exception on any
// thread stops the others; close() rethrows it. With --nonprivate only E runs.
//
// Checkpoints: drain() lets every worker finish every published block b' < b (they then wait for
// block b and touch nothing), and save() records that point: the stream after releases 1..b (its
// own serialize(): exact sums, held node noise, the noise source's state, the accountant's ledger), the
// private learner after following releases 1..b−1 (release b is the stream's latest; L follows it
// at block b), FTL and the meter after block b − 1. A Replay built from such a checkpoint starts
// every counter at b, so its workers continue exactly where the saved ones stopped.
class Replay {
 public:
  // `from`: continue from this checkpoint (its settings already checked against `s`). CorruptInput
  // or InvalidParameter if its states do not fit.
  Replay(Index d, const Settings& s, std::optional<std::uint64_t> known_rows, const replay::ReplayCheckpoint* from)
      : d_(d), block_(s.block) {
    const std::uint64_t steps = known_rows ? (*known_rows + s.block - 1) / s.block : 0;
    // ~200 points on the curve when the length is known; a point per block otherwise.
    const std::uint64_t sample_every = s.block * std::max<std::uint64_t>(1, steps / 200);
    std::vector<std::string> names;
    if (!s.nonprivate) names.push_back("private");
    names.push_back("ftl");
    meter_ = std::make_unique<eval::RegretMeter>(d, s.k, names, sample_every);
    ftl_index_ = meter_->learner("ftl");

    pca::FplOptions ftl;
    ftl.k = s.k;
    ftl.mode = pca::FplMode::follow_the_leader;
    ftl.refresh_every = s.block;
    ftl_ = std::make_unique<pca::FplOnlinePca>(d, ftl);

    if (!s.nonprivate) {
      // The stream charges the accountant once, at construction; a restored stream brings its ledger.
      accountant_.emplace(privacy::EpsDelta(s.epsilon, s.delta));
      stream::ContinualSumOptions o;
      o.horizon = steps;  // 0: unbounded (doubling epochs)
      o.block_rows = s.block;
      o.strategy = stream::parse_noise_strategy(s.mechanism);
      o.shape = s.noise_shape == "goe" ? privacy::SymmetricNoiseShape::goe : privacy::SymmetricNoiseShape::paper_symmetric;
      o.blt_error = s.blt_error == "mean" ? stream::BltError::mean : stream::BltError::max;
      o.target = privacy::EpsDelta(s.epsilon, s.delta);
      o.calibration = s.calibration == "paper" ? privacy::Calibration::paper : privacy::Calibration::tight;
      o.row_norm_bound = s.normalize == "unit" ? 1.0 : s.clip_norm;
      o.seed = s.seed;
      if (from)
        sum_ = std::make_unique<stream::ContinualCovariance>(
            stream::ContinualCovariance::deserialize(from->continual_sum(), d, o, &*accountant_));
      else
        sum_ = std::make_unique<stream::ContinualCovariance>(d, o, &*accountant_);
      pca::FplOptions p;
      p.k = s.k;
      p.mode = pca::FplMode::private_tree;
      private_ = std::make_unique<pca::FplOnlinePca>(d, p);
      // --mechanism separable: the learner follows the stationary estimate t·m̂_t built from the
      // releases (post-processing, stationary_estimate.hpp), not the released prefix itself.
      if (const auto* separable = dynamic_cast<const stream::SeparableNoise*>(&sum_->noise()))
        stationary_.emplace(separable->strategy());
      nonnegative_ = s.nonnegative;
      // Instead of private_->attach(*sum_): the same follow() of every release, run on thread L.
      sum_->subscribe([this](const stream::ContinualCovariance::Release& r) { on_release(r); });
      private_index_ = meter_->learner("private");
    }
    if (from) restore(*from);
    if (private_) {
      s_thread_ = std::thread([this] { worker(&Replay::stream_step, s_error_, cpu_stream_); });
      l_thread_ = std::thread([this] { worker(&Replay::learner_step, l_error_, cpu_learner_); });
    }
    e_thread_ = std::thread([this] { worker(&Replay::eval_step, e_error_, cpu_eval_); });
  }
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;
  ~Replay() {
    if (running_) {
      fail();
      join();
    }
  }

  // M: the ring slot for the next block, sized for `rows` rows, once every worker is done with its
  // last use; nullptr if a worker failed (then close() reports why).
  MatrixXd* next_slot(std::uint64_t rows) {
    const std::uint64_t b = produced_;
    if (b >= kRing) {
      if (private_) {
        wait_until(s_done_, b - kRing + 1);
        wait_until(l_done_, b - kRing + 1);
      }
      wait_until(e_done_, b - kRing + 1);
    }
    if (failed_) return nullptr;
    MatrixXd& m = ring_[b % kRing];
    if (static_cast<std::uint64_t>(m.rows()) != rows) m.resize(static_cast<Index>(rows), d_);
    return &m;
  }
  // M: the slot from next_slot() holds the next block.
  void publish() {
    ++produced_;
    produced_signal_.store(produced_, std::memory_order_release);
    produced_signal_.notify_all();
  }
  // M: no more blocks. Waits for the workers to finish them and rethrows a worker's error.
  void close() {
    produced_signal_.fetch_or(kClosed, std::memory_order_release);
    produced_signal_.notify_all();
    join();
    for (const auto& error : {s_error_, l_error_, e_error_})
      if (error) std::rethrow_exception(error);
  }
  // After close(): a final partial block becomes the last release (followed here, as attach()
  // would); the meter's final OPT.
  void finish() {
    if (sum_) sum_->flush();
    meter_->finish();
  }

  // M: waits until S, L and E are done with every published block (see the class comment); false if
  // a worker failed (close() says why).
  bool drain() {
    const std::uint64_t b = produced_;
    if (private_ && (!wait_until(s_done_, b) || !wait_until(l_done_, b))) return false;
    return wait_until(e_done_, b) && !failed_;
  }
  // M, after drain(): the learners', the meter's and the stream's state.
  void save(replay::ReplayCheckpoint& out) const {
    out.set_blocks(produced_);
    if (sum_) {
      out.set_continual_sum(sum_->serialize());
      tools::checkpoint::put(private_->state(), *out.mutable_private_learner());
      if (stationary_) tools::checkpoint::put(stationary_->state(), *out.mutable_stationary());
    }
    tools::checkpoint::put(ftl_->state(), *out.mutable_ftl());
    tools::checkpoint::put(meter_->state(), *out.mutable_meter());
  }
  std::uint64_t blocks_published() const { return produced_; }
  const privacy::PrivacyAccountant* accountant() const { return accountant_ ? &*accountant_ : nullptr; }

  std::uint64_t rows_done() const { return rows_done_.load(std::memory_order_relaxed); }
  eval::RegretMeter& meter() { return *meter_; }
  const stream::ContinualCovariance* sum() const { return sum_.get(); }
  const pca::FplOnlinePca* private_learner() const { return private_.get(); }
  // --mechanism separable: what the private learner follows; nullptr otherwise.
  const stream::StationaryEstimate<MatrixXd>* stationary() const { return stationary_ ? &*stationary_ : nullptr; }
  std::size_t private_index() const { return private_index_; }
  std::size_t ftl_index() const { return ftl_index_; }
  // CPU seconds of the worker threads (so that other processes on the machine do not count).
  double cpu_stream() const { return cpu_stream_; }
  double cpu_learner() const { return cpu_learner_; }
  double cpu_eval() const { return cpu_eval_; }

 private:
  static constexpr std::uint64_t kClosed = std::uint64_t{1} << 63;  // "no more" flag of a counter

  // Blocks until `counter` (without its flag) ≥ target; false if it was closed first or a worker failed.
  bool wait_until(std::atomic<std::uint64_t>& counter, std::uint64_t target) {
    for (;;) {
      const std::uint64_t v = counter.load(std::memory_order_acquire);
      if (failed_) return false;
      if ((v & ~kClosed) >= target) return true;
      if (v & kClosed) return false;
      counter.wait(v);
    }
  }
  static void signal(std::atomic<std::uint64_t>& counter, std::uint64_t value) {
    counter.store(value, std::memory_order_release);
    counter.notify_all();
  }
  void fail() {
    failed_ = true;
    for (auto* a : {&produced_signal_, &released_, &release_free_, &ready_, &s_done_, &l_done_, &e_done_}) {
      a->fetch_or(kClosed);
      a->notify_all();
    }
  }
  void join() {
    for (auto* t : {&s_thread_, &l_thread_, &e_thread_})
      if (t->joinable()) t->join();
    running_ = false;
  }
  // Before the threads start: every state and counter as saved at block b (see save()).
  void restore(const replay::ReplayCheckpoint& from) {
    const std::uint64_t b = from.blocks();
    meter_->restore(tools::checkpoint::get(from.meter()));
    ftl_->restore(tools::checkpoint::get(from.ftl(), pca::FplMode::follow_the_leader, "ftl"));
    std::string progress = "blocks " + std::to_string(b) + ", meter rows " + std::to_string(meter_->rows()) +
                           ", follow-the-leader refreshes " + std::to_string(ftl_->refreshes());
    bool consistent = b >= 1 && meter_->rows() == b * block_ && ftl_->refreshes() == b;
    if (private_) {
      private_->restore(tools::checkpoint::get(from.private_learner(), pca::FplMode::private_tree, "private_learner"));
      progress += ", releases " + std::to_string(sum_->steps()) + " of " + std::to_string(sum_->rows()) +
                  " rows, private refreshes " + std::to_string(private_->refreshes()) + ", ledger entries " +
                  std::to_string(accountant_->ledger().size());
      consistent = consistent && sum_->steps() == b && sum_->rows() == b * block_ && private_->refreshes() == b - 1 &&
                   accountant_->ledger().size() == 1;
    }
    if (!consistent) throw CorruptInput("the saved states are not of one point of the stream (" + progress + ")");
    first_block_ = b;
    produced_ = b;
    for (auto* a : {&produced_signal_, &released_, &ready_, &s_done_, &l_done_, &e_done_}) a->store(b);
    release_free_.store(b - 1);
    rows_done_.store(b * block_);
    if (stationary_) {
      try {
        stationary_->restore(tools::checkpoint::get(from.stationary()));
      } catch (const InvalidParameter& e) {
        throw CorruptInput(std::string("stationary estimate: ") + e.what());
      }
      if (stationary_->steps() != b)
        throw CorruptInput("stationary estimate: " + std::to_string(stationary_->steps()) + " releases, expected " +
                           std::to_string(b));
    }
    if (private_) copy_followed(sum_->noisy_prefix(), release_copy_[b % 2]);  // release b, which L follows at block b
  }

  void worker(bool (Replay::*step)(std::uint64_t), std::exception_ptr& error, double& cpu) {
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
  bool stream_step(std::uint64_t b) {
    if (!wait_until(produced_signal_, b + 1)) return false;
    sum_->update_block(ring_[b % kRing]);
    signal(s_done_, b + 1);
    return true;
  }
  // S (inside update_block): release t into slot t % 2, once L is done with release t − 2. After
  // the workers stopped (the final flush), the learner follows it here.
  void on_release(const stream::ContinualCovariance::Release& r) {
    if (stationary_) stationary_->add(r.step, r.noisy_prefix);
    if (!running_) {
      MatrixXd followed;
      copy_followed(r.noisy_prefix, followed);
      follow(followed);
      return;
    }
    if (r.step > 2 && !wait_until(release_free_, r.step - 2)) return;  // failed: S stops next step
    copy_followed(r.noisy_prefix, release_copy_[r.step % 2]);
    signal(released_, r.step);
  }
  // What the private learner follows for the latest release — the release, or the stationary
  // estimate — into `slot` (its storage reused).
  void copy_followed(const MatrixXd& release, MatrixXd& slot) const {
    if (stationary_)
      slot = stationary_->prefix();
    else
      slot = release;
  }
  // The private learner follows `followed` (a copy of what copy_followed gives), projected first
  // under --nonnegative (post-processing, in place).
  void follow(MatrixXd& followed) {
    if (nonnegative_) pca::project_doubly_nonnegative(followed, kNonnegativeRounds);
    private_->follow(followed);
  }
  // L: follow release b (for b ≥ 1), then score block b.
  bool learner_step(std::uint64_t b) {
    if (!wait_until(produced_signal_, b + 1)) {
      ready_.fetch_or(kClosed, std::memory_order_release);  // E: no block after the last one
      ready_.notify_all();
      return false;
    }
    if (b >= 1) {
      // Block b exists, so blocks 0..b−1 were full and release b will come.
      if (!wait_until(released_, b)) return false;
      follow(release_copy_[b % 2]);  // on L, in the slot L holds until release_free_
      signal(release_free_, b);
    }
    gains_[b % kRing] = private_->gains(ring_[b % kRing]);
    signal(ready_, b + 1);
    signal(l_done_, b + 1);
    return true;
  }
  // E: block b into the meter and FTL.
  bool eval_step(std::uint64_t b) {
    if (!wait_until(private_ ? ready_ : produced_signal_, b + 1)) return false;
    const MatrixXd& m = ring_[b % kRing];
    meter_->add_gains(ftl_index_, ftl_->gains(m));
    if (private_) meter_->add_gains(private_index_, gains_[b % kRing]);
    meter_->observe(m);
    // FTL's leader is the exact Σ a aᵀ the meter already holds: follow it rather than accumulate a
    // second copy (what update_block would do). At each multiple of B rows, as refresh_every = B.
    if (meter_->rows() % block_ == 0) ftl_->follow(meter_->hindsight_covariance());
    rows_done_.store(meter_->rows(), std::memory_order_relaxed);
    signal(e_done_, b + 1);
    return true;
  }

  Index d_;
  std::uint64_t block_;
  std::unique_ptr<eval::RegretMeter> meter_;
  std::unique_ptr<pca::FplOnlinePca> ftl_;
  std::optional<privacy::PrivacyAccountant> accountant_;  // before sum_, which points at it
  std::unique_ptr<stream::ContinualCovariance> sum_;
  std::unique_ptr<pca::FplOnlinePca> private_;
  std::optional<stream::StationaryEstimate<MatrixXd>> stationary_;  // --mechanism separable
  bool nonnegative_ = false;  // --nonnegative: the learner follows the doubly nonnegative projection
  std::size_t private_index_ = 0, ftl_index_ = 0;
  MatrixXd ring_[kRing];
  VectorXd gains_[kRing];
  MatrixXd release_copy_[2];
  std::uint64_t first_block_ = 0;  // 0, or the block a resumed run starts from
  std::uint64_t produced_ = 0;     // M's count of published blocks
  // Counters (with the kClosed flag): blocks published, releases copied, releases followed, private
  // gains ready, blocks done by S, L and E; rows the meter has seen (progress only).
  std::atomic<std::uint64_t> produced_signal_{0}, released_{0}, release_free_{0}, ready_{0};
  std::atomic<std::uint64_t> s_done_{0}, l_done_{0}, e_done_{0}, rows_done_{0};
  std::atomic<bool> failed_{false}, running_{true};
  std::exception_ptr s_error_, l_error_, e_error_;
  double cpu_stream_ = 0, cpu_learner_ = 0, cpu_eval_ = 0;
  std::thread s_thread_, l_thread_, e_thread_;  // last: started once everything above is built
};

// σ of each noise draw: a tree's nodes (the last epoch's for an unbounded stream), a factorization's
// per-step z_t.
double node_sigma(const stream::ContinualCovariance& sum) {
  if (const auto* tree = dynamic_cast<const stream::TreeNoise*>(&sum.noise())) return tree->node_sigma();
  if (const auto* blt = dynamic_cast<const stream::BltNoise*>(&sum.noise())) return blt->sigma();
  if (const auto* sqrt = dynamic_cast<const stream::SqrtToeplitzNoise*>(&sum.noise())) return sqrt->sigma();
  if (const auto* separable = dynamic_cast<const stream::SeparableNoise*>(&sum.noise())) return separable->sigma();
  if (const auto* epochs = dynamic_cast<const stream::EpochTreeNoise*>(&sum.noise())) {
    const std::uint64_t steps = std::max<std::uint64_t>(1, sum.steps());
    return epochs->epoch_sigma(static_cast<std::uint32_t>(std::bit_width(steps) - 1));
  }
  return std::nan("");
}

// The strategy in words, for the summary and the plot.
std::string mechanism_label(const stream::ContinualCovariance& sum) {
  if (const auto* blt = dynamic_cast<const stream::BltNoise*>(&sum.noise()))
    return "BLT (" + std::to_string(blt->blt().buffers()) + " buffers)";
  if (dynamic_cast<const stream::SqrtToeplitzNoise*>(&sum.noise())) return "square-root Toeplitz factorization";
  if (dynamic_cast<const stream::SeparableNoise*>(&sum.noise()))
    return "separable factorization, followed through its stationary estimate";
  return sum.options().strategy == stream::NoiseStrategy::honaker_tree ? "Honaker tree" : "binary tree";
}

// Writes checkpoint files on a thread of its own, one at a time: encoding a few MB and fsync'ing
// them takes longer than copying the state (measured: ~20 ms against ~3 ms at d = 256), and the
// workers need not wait for it. A crash during a write leaves the previous checkpoint
// (atomic_file.hpp). wait() rethrows a failed write's error; the destructor only joins.
class CheckpointWriter {
 public:
  using Done = std::function<void(std::size_t bytes, double seconds)>;
  CheckpointWriter() = default;
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;
  ~CheckpointWriter() {
    if (thread_.joinable()) thread_.join();
  }
  // After the previous write (wait()): encodes `msg` and replaces `path` with it, then calls `done`
  // on the writer's thread.
  void start(std::string path, replay::ReplayCheckpoint msg, Done done) {
    wait();
    thread_ = std::thread([this, path = std::move(path), msg = std::move(msg), done = std::move(done)] {
      try {
        const auto t0 = Clock::now();
        const std::string bytes = tools::checkpoint::envelope(msg);
        io::write_file_atomically(path, bytes);
        done(bytes.size(), seconds_since(t0));
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  }
  void wait() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  std::thread thread_;
  std::exception_ptr error_;
};

// The settings a resumed run must share with the checkpointed one, as "--flag" → value: everything
// that decides which rows are replayed, in which order, and what the learners and the stream do
// with them. --out, --checkpoint-every and the checkpoint's path may change.
tools::checkpoint::SettingList resume_settings(const Settings& s, const io::RowSource& source) {
  auto optional = [](const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string("none"); };
  auto flag = [](bool on) { return std::string(on ? "on" : "off"); };
  return {{"--input", source.path()},
          {"--format", io::to_string(source.format())},
          {"--limit", std::to_string(s.limit)},
          {"--skip-malformed", flag(s.skip_malformed)},
          {"--normalize", s.normalize},
          {"--clip-norm", privacy::format_value(s.clip_norm)},
          {"--shuffle", optional(s.shuffle)},
          {"--block", std::to_string(s.block)},
          {"--k", std::to_string(s.k)},
          {"--nonprivate", flag(s.nonprivate)},
          {"--nonnegative", flag(s.nonnegative)},
          {"--epsilon", privacy::format_value(s.epsilon)},
          {"--delta", privacy::format_value(s.delta)},
          {"--mechanism", s.mechanism},
          {"--blt-error", s.blt_error},
          {"--noise-shape", s.noise_shape},
          {"--calibration", s.calibration},
          {"--seed", optional(s.seed)}};
}

int run(const Settings& s) {
  const auto start = Clock::now();

  // ---- validate what can be checked before opening anything (exit 2) ----
  if (s.k < 1) throw UsageError("--k must be >= 1, got " + std::to_string(s.k));
  if (!s.nonprivate) {
    if (!std::isfinite(s.epsilon) || s.epsilon <= 0)
      throw UsageError("--epsilon must be finite and > 0, got " + privacy::format_value(s.epsilon));
    if (!(s.delta > 0 && s.delta < 1))
      throw UsageError("--delta must be in (0, 1), got " + privacy::format_value(s.delta));
  }
  if (s.block < 1) throw UsageError("--block must be >= 1, got 0");
  if (!std::isfinite(s.clip_norm) || s.clip_norm <= 0)
    throw UsageError("--clip-norm must be finite and > 0, got " + privacy::format_value(s.clip_norm));
  if (s.clip_norm_given && s.normalize == "unit")
    throw UsageError("--clip-norm applies to --normalize clip or none (unit scales every row to norm 1)");
  if (s.input.empty() && s.format != "auto") throw UsageError("--format needs --input");
  if (s.checkpoint.empty() && (s.resume || s.checkpoint_every != 0))
    throw UsageError(std::string(s.resume ? "--resume" : "--checkpoint-every") + " needs --checkpoint PATH");

  // ---- open the input ----
  std::unique_ptr<io::RowSource> source;
  std::string input_note;
  try {
    if (s.input.empty()) {
      const char* env = std::getenv("DPSTREAM_FASHION_MNIST");
      const std::string fashion = env && *env ? env : kFashionMnist;
      if (std::filesystem::exists(fashion)) {
        io::RowSourceOptions o;
        o.scale = 1.0 / 255.0;
        source = io::open_row_source(fashion, io::RowFormat::idx, o);
        input_note = "Fashion-MNIST train (default; pixels scaled by 1/255)";
      } else {
        source = std::make_unique<io::SyntheticRowSource>();
        input_note = "generated spiked-covariance stream (default; " + fashion +
                     " not found: apt-get install dataset-fashion-mnist)";
      }
    } else {
      const io::RowFormat format =
          s.format == "auto" ? io::format_from_path(s.input) : io::parse_row_format(s.format);
      io::RowSourceOptions o;
      o.skip_malformed = s.skip_malformed;
      if (format == io::RowFormat::idx) {
        // IDX images are bytes: read them as [0, 1] (1/255), other IDX value types as stored.
        o.scale = 1.0 / 255.0;
        source = io::open_row_source(s.input, format, o);
        if (static_cast<const io::IdxRowReader&>(*source).type_code() != 0x08) {
          o.scale = 1.0;
          source = io::open_row_source(s.input, format, o);
          input_note = "IDX";
        } else {
          input_note = "IDX, unsigned bytes scaled by 1/255";
        }
      } else {
        source = io::open_row_source(s.input, format, o);
        input_note = io::to_string(format);
      }
    }
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot read the input: ") + e.what());
  }
  const Index d = source->dimension();
  if (s.k > d)
    throw UsageError("--k " + std::to_string(s.k) + " is larger than the input's dimension " + std::to_string(d));
  std::printf("input: %s — %s\n", source->path().c_str(), input_note.c_str());

  const std::filesystem::path out_dir(s.out);
  try {
    std::filesystem::create_directories(out_dir);
  } catch (const std::exception& e) {
    throw UsageError("--out " + s.out + ": cannot create the folder: " + e.what());
  }

  // ---- the checkpoint to resume from: read and checked before any row is (exit 2) ----
  const bool checkpointing = !s.checkpoint.empty();
  const tools::checkpoint::SettingList settings = resume_settings(s, *source);
  std::optional<replay::ReplayCheckpoint> from;
  if (s.resume) {
    try {
      from = tools::checkpoint::read(s.checkpoint);
    } catch (const CorruptInput& e) {
      throw UsageError(std::string("--resume: checkpoint ") + e.what());
    }
    if (const std::string why = tools::checkpoint::mismatch(*from, settings); !why.empty())
      throw UsageError("--resume: " + s.checkpoint + " was made with other settings: " + why);
    if (from->dimension() != d)
      throw UsageError("--resume: the input differs from the checkpointed run's: " + std::to_string(d) +
                       " columns, the checkpoint has " + std::to_string(from->dimension()));
  } else if (!s.checkpoint.empty() && std::filesystem::exists(s.checkpoint)) {
    throw UsageError("--checkpoint " + s.checkpoint +
                     " exists (an unfinished run's state): give --resume to continue that run, or remove the file "
                     "to start over");
  }

  // ---- the number of rows, if known (sets the tree's horizon and the curve's spacing) ----
  // Shuffling needs every row in memory anyway: then the count is exact.
  tools::GuardedReader reader(*source, {s.normalize, s.clip_norm, s.skip_malformed, s.limit, s.nonnegative});
  tools::RowBuffer buf(d);
  std::optional<std::uint64_t> known_rows;
  std::vector<std::uint64_t> order;
  Progress progress([&]() -> std::optional<std::uint64_t> {
    auto n = source->declared_rows();
    if (s.limit != 0) n = n ? std::min(*n, s.limit) : s.limit;
    return n;
  }());
  double read_seconds = 0;
  if (s.shuffle) {
    const auto r0 = Clock::now();
    if (auto n = source->declared_rows()) {
      buf.reserve(std::min(*n, s.limit ? s.limit : *n));
      buf.prefault_async();
    }
    reader.fill(buf, UINT64_MAX, [&](std::uint64_t used) { progress.update("reading", used); });
    known_rows = buf.rows;
    order = seeded_permutation(buf.rows, *s.shuffle);
    read_seconds += seconds_since(r0);
  } else {
    known_rows = source->declared_rows();
    if (s.limit != 0) known_rows = known_rows ? std::min(*known_rows, s.limit) : s.limit;
  }

  if (!s.nonprivate && stream::needs_fixed_horizon(stream::parse_noise_strategy(s.mechanism)) && !known_rows)
    throw UsageError("--mechanism " + s.mechanism + " is built for a known number of releases, and " + source->path() +
                     " does not declare its row count: give --limit N (or --shuffle, which reads every row first)");
  // ---- resuming: the rows already replayed are read again (the same rows, or the resume is refused) ----
  // Their fingerprint, in replay order, goes into every checkpoint; a resumed run recomputes it while
  // skipping them (the reader's counts come back by themselves: the same rows meet the same guard).
  tools::Fingerprint rows_hash;
  const std::uint64_t resume_rows = from ? from->blocks() * s.block : 0;
  if (from) {
    const auto r0 = Clock::now();
    const replay::InputProgress& saved = from->input();
    if (from->rows_known() != known_rows.has_value() || from->known_rows() != known_rows.value_or(0))
      throw UsageError("--resume: the input differs from the checkpointed run's: " +
                       (known_rows ? std::to_string(*known_rows) + " rows" : std::string("length unknown")) +
                       ", the checkpoint's run had " +
                       (from->rows_known() ? std::to_string(from->known_rows()) + " rows" : std::string("length unknown")));
    if (s.shuffle) {
      for (std::uint64_t i = 0; i < std::min(resume_rows, buf.rows); ++i)
        rows_hash.add(buf.row(order[i]), static_cast<std::size_t>(d));
    } else {
      buf.reserve(s.block);
      while (reader.used() < resume_rows) {
        buf.rows = 0;
        const bool more = reader.fill(buf, std::min(s.block, resume_rows - reader.used()),
                                      [&](std::uint64_t used) { progress.update("skipping", used); });
        for (std::uint64_t i = 0; i < buf.rows; ++i) rows_hash.add(buf.row(i), static_cast<std::size_t>(d));
        if (!more) break;
      }
    }
    const auto& counts = reader.guard_counts();
    const std::vector<std::pair<std::string, std::pair<std::uint64_t, std::uint64_t>>> now_vs_saved = {
        {"rows used", {reader.used(), saved.rows_used()}},
        {"rows returned by the reader", {source->rows_returned(), saved.rows_returned()}},
        {"rows skipped by the reader", {source->skipped(), saved.rows_skipped()}},
        {"zero rows", {reader.zero(), saved.rows_zero()}},
        {"rows clipped", {counts.clipped, saved.rows_clipped()}},
        {"rows rejected", {counts.rejected, saved.rows_rejected()}},
        {"fingerprint of the rows", {rows_hash.value(), saved.rows_hash()}}};
    for (const auto& [what, values] : now_vs_saved)
      if (values.first != values.second) {
        progress.clear();
        throw UsageError("--resume: the input differs from the checkpointed run's: after its first " +
                         std::to_string(resume_rows) + " replayed rows, " + what + " " + std::to_string(values.first) +
                         ", the checkpoint has " + std::to_string(values.second));
      }
    read_seconds += seconds_since(r0);
  }

  // The library validates the privacy options (e.g. paper calibration refuses ε ≥ 1) and the
  // checkpoint's states: exit 2.
  std::unique_ptr<Replay> replay_ptr;
  try {
    replay_ptr = std::make_unique<Replay>(d, s, known_rows, from ? &*from : nullptr);
  } catch (const InvalidParameter& e) {
    progress.clear();
    throw UsageError(from ? "--resume: checkpoint " + s.checkpoint + ": " + e.what() : std::string(e.what()));
  } catch (const CorruptInput& e) {
    progress.clear();
    throw UsageError("--resume: checkpoint " + s.checkpoint + ": " + e.what());
  }
  Replay& replay = *replay_ptr;
  from.reset();  // its states are in the Replay now; the bytes can go

  // ---- checkpoints: every --checkpoint-every releases, at the start of a block (before its rows
  // are read), so that the reader's counts are those of the blocks replayed. The workers only wait
  // while the state is copied into the message (after drain()); encoding and the atomic write run
  // on the writer's thread while the replay goes on ----
  struct {
    std::uint64_t last_block = 0;                      // M's: the latest checkpoint's release
    std::uint64_t written = 0, bytes = 0;              // the writer's (read after wait())
    double drain_seconds = 0, copy_seconds = 0, write_seconds = 0;
  } ckpt;
  ckpt.last_block = replay.blocks_published();
  CheckpointWriter writer;
  auto write_checkpoint = [&]() {
    const auto t0 = Clock::now();
    if (!replay.drain()) return false;  // a worker failed: close() says why
    const double drained = seconds_since(t0);
    replay::ReplayCheckpoint msg;
    msg.set_format_version(tools::checkpoint::kFormatVersion);
    tools::checkpoint::put(settings, msg);
    msg.set_dimension(d);
    msg.set_rows_known(known_rows.has_value());
    msg.set_known_rows(known_rows.value_or(0));
    replay::InputProgress& in = *msg.mutable_input();
    in.set_rows_used(reader.used());
    in.set_rows_returned(source->rows_returned());
    in.set_rows_skipped(source->skipped());
    in.set_rows_zero(reader.zero());
    in.set_rows_clipped(reader.guard_counts().clipped);
    in.set_rows_rejected(reader.guard_counts().rejected);
    in.set_rows_hash(rows_hash.value());
    replay.save(msg);
    const double copied = seconds_since(t0) - drained;
    ckpt.last_block = replay.blocks_published();
    ckpt.drain_seconds += drained;
    ckpt.copy_seconds += copied;
    const std::uint64_t release = ckpt.last_block;
    writer.start(s.checkpoint, std::move(msg), [&, release, drained, copied](std::size_t bytes, double seconds) {
      ++ckpt.written;
      ckpt.bytes = bytes;
      ckpt.write_seconds += seconds;
      std::fprintf(stderr,
                   "%sdpstream-replay: checkpoint at release %llu (%llu rows): %s, %.1f MB; workers drained in "
                   "%.3f s, state copied in %.3f s, written in %.3f s beside the replay\n",
                   ::isatty(STDERR_FILENO) == 1 ? "\r\033[K" : "", (unsigned long long)release,
                   (unsigned long long)(release * s.block), s.checkpoint.c_str(), bytes / 1e6, drained, copied, seconds);
    });
    return true;
  };
  // M, before each block: a checkpoint when one is due; the tests' crash.
  auto before_block = [&]() {
    const std::uint64_t b = replay.blocks_published();
    if (s.checkpoint_every != 0 && b > ckpt.last_block && b % s.checkpoint_every == 0 && !write_checkpoint())
      return false;
    if (s.test_kill_at_block != 0 && b == s.test_kill_at_block) {
      writer.wait();  // deterministic for the tests: the latest checkpoint is on disk
      std::fflush(stdout);
      std::raise(SIGKILL);
    }
    return true;
  };
  // M: hand the blocks to the workers, rows [first, first + n) of `rows_buf` in `order` (or as held).
  auto produce = [&](const tools::RowBuffer& rows_buf, const std::uint64_t* perm, std::uint64_t first, std::uint64_t n) {
    MatrixXd* slot = replay.next_slot(n);
    if (!slot) return false;  // a worker failed: close() says why
    for (std::uint64_t i = 0; i < n; ++i) {
      const double* row = rows_buf.row(perm ? perm[first + i] : first + i);
      slot->row(static_cast<Index>(i)) = Eigen::Map<const Eigen::RowVectorXd>(row, d);
      if (checkpointing) rows_hash.add(row, static_cast<std::size_t>(d));
    }
    replay.publish();
    progress.update("replay", replay.rows_done());
    return true;
  };
  if (s.shuffle) {
    for (std::uint64_t first = resume_rows; first < buf.rows; first += s.block)
      if (!before_block() || !produce(buf, order.data(), first, std::min(s.block, buf.rows - first))) break;
  } else {
    buf.reserve(s.block);  // a staging block: rows stream through, the learners overlap the reading
    for (bool more = true; more;) {
      if (!before_block()) break;
      buf.rows = 0;
      const auto r0 = Clock::now();
      more = reader.fill(buf, s.block);
      read_seconds += seconds_since(r0);
      if (buf.rows > 0 && !produce(buf, nullptr, 0, buf.rows)) break;
    }
  }
  writer.wait();  // a failed write stops the run (exit 1), as any I/O error does
  replay.close();
  progress.update("finish", reader.used(), true);
  const std::uint64_t rows = reader.used();
  if (rows == 0) {
    progress.clear();
    throw std::runtime_error(source->path() + ": no usable rows (" + std::to_string(reader.guard_counts().rejected) +
                             " rejected by the guard, " + std::to_string(source->skipped()) +
                             " skipped by the reader)");
  }
  const auto f0 = Clock::now();
  replay.finish();
  eval::RegretMeter& meter = replay.meter();
  const double finish_seconds = seconds_since(f0);

  // ---- reports ----
  const std::string csv_path = (out_dir / "regret.csv").string(), svg_path = (out_dir / "regret.svg").string();
  const auto* sum = replay.sum();
  std::ostringstream subtitle;
  subtitle << rows << " rows × " << d << ", k = " << s.k << ", blocks of " << s.block;
  if (sum)
    subtitle << "; private: " << mechanism_label(*sum) << (s.noise_shape == "goe" ? " (GOE noise)" : "") << ", ε = "
             << privacy::format_value(s.epsilon) << ", δ = " << privacy::format_value(s.delta) << " (" << s.calibration
             << ")";
  else
    subtitle << "; non-private only";
  subtitle << (s.shuffle ? "; shuffled" : "; log order");
  std::vector<std::string> labels;
  if (sum) labels.push_back("private FPL (ε = " + privacy::format_value(s.epsilon) + ")");
  labels.push_back("follow-the-leader (non-private)");
  const std::string name = s.input.empty() ? (source->format() == io::RowFormat::synthetic ? std::string("synthetic stream")
                                                                                           : std::string("Fashion-MNIST train"))
                                           : std::filesystem::path(s.input).filename().string();
  eval::write_regret_csv(meter, csv_path);
  eval::write_regret_svg(meter, svg_path, "Online PCA regret on " + name, subtitle.str(), labels);
  const double seconds = seconds_since(start);
  progress.clear();

  // ---- summary ----
  const auto& counts = reader.guard_counts();
  const std::uint64_t skipped = source->skipped();
  const std::uint64_t rows_read = source->rows_returned() + skipped;
  const std::uint64_t clipped = counts.clipped, rejected = counts.rejected;
  const double opt = meter.opt();
  const std::size_t main_learner = sum ? replay.private_index() : replay.ftl_index();
  const double ftl_ratio = meter.regret_over_opt(replay.ftl_index());

  std::printf("rows: %llu used of %llu read = %llu used + %llu rejected by the guard + %llu skipped by the reader\n",
              (unsigned long long)rows, (unsigned long long)rows_read, (unsigned long long)rows,
              (unsigned long long)rejected, (unsigned long long)skipped);
  std::printf("      dimension %lld; %s; %llu zero rows; %llu clipped%s\n", (long long)d,
              s.normalize == "unit" ? "normalised to unit norm"
              : s.normalize == "clip" ? ("clipped to norm " + privacy::format_value(s.clip_norm)).c_str()
                                      : ("norm bound " + privacy::format_value(s.clip_norm) + " (reject)").c_str(),
              (unsigned long long)reader.zero(), (unsigned long long)clipped,
              s.normalize == "unit" && clipped ? " (by an ulp or so, after the division)" : "");
  if (rejected) std::printf("      first rejected: %s\n", reader.first_reject().c_str());
  if (skipped) std::printf("      first skipped: %s\n", source->first_skip_reason().c_str());
  std::printf("order: %s\n", s.shuffle ? ("shuffled with seed " + std::to_string(*s.shuffle) +
                                          " (all rows held in memory)").c_str()
                                       : "as stored");
  if (sum) {
    std::printf("private learner: FPL on a %s%s over %s, releases every %llu rows; (ε, δ) = (%s, %s), %s calibration\n",
                mechanism_label(*sum).c_str(), s.noise_shape == "goe" ? " with GOE-shaped noise" : "",
                sum->options().horizon ? (std::to_string(sum->options().horizon) + " releases").c_str()
                                       : "an unbounded stream (doubling epochs)",
                (unsigned long long)s.block, privacy::format_value(s.epsilon).c_str(),
                privacy::format_value(s.delta).c_str(), s.calibration.c_str());
    std::printf("      Gaussian DP μ = %.4g; σ per draw = %.4g; last release: step %llu, noise variance %.4g per entry\n",
                sum->mu(), node_sigma(*sum), (unsigned long long)sum->steps(), sum->latest().noise_variance);
    if (const auto* estimate = replay.stationary()) {
      // What the learner follows: t·m̂_t, per-entry variance t²·Var(m̂_t).
      const double t = static_cast<double>(estimate->steps());
      std::printf("      followed: the stationary estimate t·m̂_t, noise variance %.4g per entry at step %llu\n",
                  t * t * estimate->step_sum_variance(node_sigma(*sum)), (unsigned long long)estimate->steps());
    }
    if (s.nonnegative)
      std::printf("      followed: projected onto the doubly nonnegative matrices (PSD, entries >= 0), %d round%s a "
                  "release (--nonnegative)\n", kNonnegativeRounds, kNonnegativeRounds == 1 ? "" : "s");
    std::printf("      noise: %s; refreshes %llu (block products %llu, full solves %llu)\n",
                s.seed ? ("seeded (seed " + std::to_string(*s.seed) + "): reproducible, NOT secure").c_str()
                       : "secure (libsodium ChaCha20, OS-keyed)",
                (unsigned long long)replay.private_learner()->refreshes(),
                (unsigned long long)replay.private_learner()->refresh_stats().iterations,
                (unsigned long long)replay.private_learner()->refresh_stats().full_solves);
  } else {
    std::printf("private learner: none (--nonprivate): no privacy spent\n");
  }
  std::printf("k = %lld, OPT = %.6g (sum of the top-%lld eigenvalues of the exact covariance)\n", (long long)s.k, opt,
              (long long)s.k);
  std::printf("  %-34s %14s %14s %12s\n", "learner", "gain", "regret", "regret/OPT");
  if (sum)
    std::printf("  %-34s %14.6g %14.6g %11.3f%%\n", "private FPL", meter.gain(replay.private_index()),
                meter.regret(replay.private_index()), 100 * meter.regret_over_opt(replay.private_index()));
  std::printf("  %-34s %14.6g %14.6g %11.3f%%\n", "follow-the-leader (non-private)", meter.gain(replay.ftl_index()),
              meter.regret(replay.ftl_index()), 100 * ftl_ratio);
  std::printf("time: %.2f s (%.0f rows/s); reading %.2f s%s; CPU of the concurrent workers: stream %.2f s, "
              "private learner %.2f s, evaluation %.2f s; final OPT and flush %.2f s\n",
              seconds, rows / seconds, read_seconds, s.shuffle ? " (before the replay)" : " (overlapped)",
              replay.cpu_stream(), replay.cpu_learner(), replay.cpu_eval(), finish_seconds);
  if (checkpointing) {
    std::printf("checkpoints: %s", s.checkpoint.c_str());
    if (resume_rows) std::printf("; resumed at release %llu (row %llu)", (unsigned long long)(resume_rows / s.block),
                                 (unsigned long long)resume_rows);
    if (ckpt.written)
      std::printf("; %llu written (every %llu releases), %.1f MB each; on average the workers drained in %.3f s, "
                  "the state was copied in %.3f s and written in %.3f s beside the replay",
                  (unsigned long long)ckpt.written, (unsigned long long)s.checkpoint_every, ckpt.bytes / 1e6,
                  ckpt.drain_seconds / ckpt.written, ckpt.copy_seconds / ckpt.written,
                  ckpt.write_seconds / ckpt.written);
    std::printf("; removed (the run is complete)\n");
  }
  if (const auto* accountant = replay.accountant()) {
    const privacy::Spent spent = accountant->spent();
    std::printf("privacy spent (accountant, %zu charge%s): epsilon %s at delta %s\n", accountant->ledger().size(),
                accountant->ledger().size() == 1 ? "" : "s", privacy::format_value(spent.epsilon).c_str(),
                privacy::format_value(spent.delta).c_str());
  }
  std::printf("wrote %s (%zu curve points) and %s\n", csv_path.c_str(), meter.curve().size(), svg_path.c_str());

  // ---- the JSON line (last line of stdout) ----
  std::string j = "{";
  j += "\"rows\":" + std::to_string(rows);
  j += ",\"dim\":" + std::to_string(d);
  j += ",\"k\":" + std::to_string(s.k);
  j += ",\"epsilon\":" + (sum ? json_number(s.epsilon) : "null");
  j += ",\"delta\":" + (sum ? json_number(s.delta) : "null");
  j += ",\"mechanism\":" + (sum ? json_string(s.mechanism) : "null");
  j += ",\"block\":" + std::to_string(s.block);
  j += ",\"opt\":" + json_number(opt);
  j += ",\"gain\":" + json_number(meter.gain(main_learner));
  j += ",\"regret\":" + json_number(meter.regret(main_learner));
  j += ",\"regret_over_opt\":" + json_number(meter.regret_over_opt(main_learner));
  j += ",\"nonprivate_regret_over_opt\":" + json_number(ftl_ratio);
  j += ",\"rows_clipped\":" + std::to_string(clipped);
  j += ",\"rows_rejected\":" + std::to_string(rejected);
  j += ",\"seconds\":" + json_number(std::round(seconds * 1000) / 1000);
  // Extras, after the fixed keys.
  j += ",\"rows_read\":" + std::to_string(rows_read);
  j += ",\"rows_skipped\":" + std::to_string(skipped);
  j += ",\"rows_zero\":" + std::to_string(reader.zero());
  j += ",\"normalize\":" + json_string(s.normalize);
  j += ",\"calibration\":" + (sum ? json_string(s.calibration) : "null");
  j += ",\"noise_shape\":" + (sum ? json_string(s.noise_shape) : "null");
  j += ",\"nonnegative\":" + std::string(s.nonnegative ? "true" : "false");
  j += ",\"seed\":" + (sum && s.seed ? std::to_string(*s.seed) : "null");
  j += ",\"secure_noise\":" + std::string(sum ? (sum->is_secure() ? "true" : "false") : "null");
  j += ",\"mu\":" + (sum ? json_number(sum->mu()) : "null");
  j += ",\"node_sigma\":" + (sum ? json_number(node_sigma(*sum)) : "null");
  j += ",\"shuffle\":" + (s.shuffle ? std::to_string(*s.shuffle) : "null");
  j += ",\"input\":" + json_string(source->path());
  j += ",\"csv\":" + json_string(csv_path);
  j += ",\"svg\":" + json_string(svg_path);
  j += "}";
  std::printf("%s\n", j.c_str());
  std::fflush(stdout);
  // The run is complete: its checkpoint (raw data: exact sums of the rows) is not needed any more,
  // nor the temporary file a write interrupted by a crash may have left (atomic_file.hpp).
  if (checkpointing) {
    std::error_code ignored;
    std::filesystem::remove(s.checkpoint, ignored);
    std::filesystem::remove(s.checkpoint + ".tmp", ignored);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dpstream-replay: replay a logged stream through private online PCA (follow-the-perturbed-leader on a\n"
      "continual-release covariance) and measure its regret, next to non-private follow-the-leader.\n"
      "Without --input: Fashion-MNIST train if installed (dataset-fashion-mnist), else a generated\n"
      "spiked-covariance stream (d = 256, 20000 rows). DPSTREAM_FASHION_MNIST overrides where the\n"
      "Fashion-MNIST train images are looked for."};
  Settings s;
  app.add_option("--input", s.input, "rows to replay: a row log (.pb/.rowlog), CSV (.csv) or IDX (.idx, -ubyte, .gz)");
  app.add_option("--format", s.format, "input format (default: from the file name)")
      ->check(CLI::IsMember({"auto", "pb", "csv", "idx"}));
  app.add_option("--k", s.k, "dimension of the learned subspace")->capture_default_str();
  app.add_option("--epsilon", s.epsilon, "privacy: epsilon of the whole stream")->capture_default_str();
  app.add_option("--delta", s.delta, "privacy: delta of the whole stream, in (0, 1)")->capture_default_str();
  app.add_option("--mechanism", s.mechanism,
                 "continual-release noise: binary tree, Honaker's variance-reduced tree, square-root Toeplitz "
                 "factorization (memory: all past draws, small d only), a BLT optimised for the stream's length, "
                 "or the separable factorization whose releases the learner follows through their stationary "
                 "estimate (least squares, assumes the rows' distribution does not drift) (sqrt, blt and separable "
                 "need the length: an input that declares it, --shuffle, or --limit)")
      ->check(CLI::IsMember({"tree", "honaker", "sqrt", "blt", "separable"}))
      ->capture_default_str();
  app.add_option("--blt-error", s.blt_error,
                 "--mechanism blt: optimise the BLT for the largest release variance (max) or the average (mean)")
      ->check(CLI::IsMember({"max", "mean"}))
      ->capture_default_str();
  app.add_option("--noise-shape", s.noise_shape,
                 "covariance noise: paper (i.i.d. upper triangle, mirrored) or goe (off-diagonal variance halved, "
                 "same privacy)")
      ->check(CLI::IsMember({"paper", "goe"}))
      ->capture_default_str();
  app.add_option("--calibration", s.calibration, "tight (analytic Gaussian) or paper (the formulas as printed)")
      ->check(CLI::IsMember({"tight", "paper"}))
      ->capture_default_str();
  app.add_option("--block", s.block, "rows per release (B)")->capture_default_str();
  app.add_option("--seed", s.seed,
                 "seed the noise: reproducible, NOT secure (default: the secure source, OS-keyed ChaCha20)");
  app.add_option("--normalize", s.normalize,
                 "unit: a/|a| (zero rows stay zero); clip: scale rows over --clip-norm down to it; none: reject "
                 "rows over --clip-norm")
      ->check(CLI::IsMember({"unit", "clip", "none"}))
      ->capture_default_str();
  auto* clip = app.add_option("--clip-norm", s.clip_norm, "row norm bound L for clip / none")->capture_default_str();
  app.add_option("--out", s.out, "folder for regret.csv and regret.svg (created)")->capture_default_str();
  app.add_flag("--nonprivate", s.nonprivate, "follow-the-leader only: no private learner, no privacy spent");
  app.add_flag("--nonnegative", s.nonnegative,
               "the rows have no negative entry (pixels, counts): a row with one is refused like any bad row, and the "
               "private learner follows each release projected onto the PSD, then the entrywise nonnegative matrices "
               "(post-processing; one d x d eigendecomposition a release, O(d^3): 0.25 s at d = 784)");
  app.add_option("--shuffle", s.shuffle,
                 "replay in the order of a permutation seeded by SEED (reproducible; holds all rows in memory)");
  app.add_flag("--skip-malformed", s.skip_malformed,
               "count and skip malformed rows (reader errors, rows the guard rejects) instead of stopping");
  app.add_option("--limit", s.limit,
                 "use the first N valid rows of the input, in file order (with --shuffle those N are shuffled; 0: all)");
  app.add_option("--checkpoint", s.checkpoint,
                 "checkpoint file: the whole state of the run (stream, learners, regret meter, rows consumed, settings), "
                 "replaced atomically; holds raw data (mode 0600); removed when the run completes")
      ->type_name("PATH");
  app.add_option("--checkpoint-every", s.checkpoint_every,
                 "write the checkpoint every N releases (N x --block rows), at a point where every worker is done "
                 "with the same release (default 0: never; needs --checkpoint)")
      ->type_name("N");
  app.add_flag("--resume", s.resume,
               "continue from --checkpoint: the input is read again and the replayed rows skipped; refused (exit 2) if "
               "the file is damaged, was made with other settings (named), or the input differs. With --seed the "
               "result equals the uninterrupted run's; released noise is never drawn again");
  app.add_option("--test-kill-at-block", s.test_kill_at_block,
                 "tests: kill this process with SIGKILL just before replaying block B (0-based; 0: never)")
      ->group("");  // hidden: a deterministic crash for tests/test_replay_resume.sh
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "dpstream-replay: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  s.clip_norm_given = clip->count() > 0;
  Eigen::initParallel();  // two threads call Eigen below
  try {
    return run(s);
  } catch (const UsageError& e) {
    std::fflush(stdout);
    std::cerr << "dpstream-replay: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    if (::isatty(STDERR_FILENO) == 1) std::cerr << "\r\033[K";  // over the progress line
    std::cerr << "dpstream-replay: error: " << e.what() << "\n";
    return 1;
  }
}
