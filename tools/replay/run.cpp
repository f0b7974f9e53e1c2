#include "replay/run.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "common/memory.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/atomic_file.hpp"
#include "dpstream/stream/seeded_permutation.hpp"
#include "common/work.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::tools::replay {

using Eigen::Index;

namespace {

// The replay's dominant allocations, in bytes: the ring of blocks in flight and the staging block
// (every row with --shuffle), and about (16 + n/2) d × d matrices of state (more with deeper
// buffers: session_slots) — the stream's exact sum,
// its releases in flight, the exact sums it hands to the meter (1.5), the meter's exact sum and its
// OPT solves, both learners' leaders and eigensolver workspaces, the separable estimate's sums (the
// measured total is ~14 at d = 2048: docs/performance.md) — with n packed d × d noise states held by
// the mechanism (a tree's nodes ~log2 T, a BLT's buffers, square-root Toeplitz's T draws).
double replay_bytes(const ReplaySettings& s, Index d, std::optional<std::uint64_t> rows) {
  const double dd = static_cast<double>(d) * static_cast<double>(d);
  const double steps = rows ? std::ceil(static_cast<double>(*rows) / static_cast<double>(s.block)) : 1e6;
  double held = std::log2(std::max(2.0, steps)) + 2;  // tree nodes (an unbounded stream: its epochs)
  if (s.mechanism == "blt") held = 16;
  if (s.mechanism == "sqrt") held = steps;
  const session::SessionSlots slots = session::session_slots(d, s.session_options(rows));
  const double blocks = static_cast<double>(slots.ring + 1) * static_cast<double>(s.block);
  const double deeper = extra_slot_matrices(slots);  // the 16 matrices above count the defaults' slots
  const double held_rows = s.shuffle && rows ? static_cast<double>(*rows) : 0;
  // The row-fed learners' own matrices (power: its exact Σ and workspace; gauss: Ĉ and its eigensolve).
  const double learners = s.nonprivate ? 0 : session::row_learner_matrices(s.learners());
  return 8.0 * (static_cast<double>(d) * (blocks + held_rows) +
                dd * (16 + deeper + learners + (s.nonprivate ? 0 : held / 2)));
}

// The floating-point work (common/work.hpp) of `rows` rows (unknown: of one release): each row's
// outer product in the stream's sum and the meter's (2 d² a row), and per release ~10 d³ for each
// eigendecomposition — the meter's OPT, each private learner's and FTL's — and a PSD projection (d³
// by MRRR) with --nonnegative.
double replay_flops(const ReplaySettings& s, double d, std::optional<std::uint64_t> rows) {
  const double n = rows ? static_cast<double>(*rows) : static_cast<double>(s.block);
  const double releases = std::ceil(n / static_cast<double>(s.block));
  const double eigen = 2 + (s.nonprivate ? 0 : static_cast<double>(s.learners().size()));
  return 2 * n * d * d + releases * d * d * d * (10 * eigen + (s.nonnegative ? 5 : 0));
}

// A file that can be read twice (not a pipe, a terminal or a socket).
bool rereadable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

ReplayRun::ReplayRun(ReplaySettings& s, OpenedInput input)
    : s_(s), input_(std::move(input)), d_(input_.source->dimension()), buf_(d_) {
  validate(s_);
  if (s_.k > d_)
    throw UsageError("--k " + std::to_string(s_.k) + " is larger than the input's dimension " + std::to_string(d_));
  // The resolved input, as the resume check and the report name it: a file by its canonical path, so
  // that a resume may name it by another.
  std::error_code no_path;
  const auto canonical = std::filesystem::canonical(input_.source->path(), no_path);
  s_.input.path = no_path || input_.source->path() == "/dev/stdin" ? input_.source->path() : canonical.string();
  s_.input.format = io::to_string(input_.source->format());
  try {
    std::filesystem::create_directories(s_.out);
  } catch (const std::exception& e) {
    throw UsageError("--out " + s_.out + ": cannot create the folder: " + e.what());
  }
  if (::access(s_.out.c_str(), W_OK | X_OK) != 0)  // found now, not after the whole run
    throw UsageError("--out " + s_.out + ": cannot write into the folder: " + std::strerror(errno));
  resume_settings_ = resume_settings(s_);
  check_resume_file();
  reader_ = std::make_unique<GuardedReader>(*input_.source, read_options());
  size_stream();
  // After size_stream: a file whose length the mechanism needs (sqrt holds a draw per release) has been
  // counted, so the estimate is of its releases, not of an assumed long stream.
  require_memory("a replay of " + std::to_string(d_) + "-dimensional rows in blocks of " + std::to_string(s_.block),
                 replay_bytes(s_, d_, known_rows_), memory_limit(s_.max_memory));
  announce_work("dpstream-replay",
                (known_rows_ ? std::to_string(*known_rows_) + " rows" : "each release (the stream's length is unknown)") +
                    std::string(" of dimension ") + std::to_string(d_) + " in blocks of " + std::to_string(s_.block) +
                    (s_.nonnegative ? ", --nonnegative" : ""),
                replay_flops(s_, static_cast<double>(d_), known_rows_));
  skip_replayed_rows();
  build_session();
  // Only now: a run refused above (exit 2: a resumed input that differs, flags that leave no usable
  // noise) prints nothing on stdout.
  std::printf("input: %s — %s\n", printable(input_.source->path()).c_str(), printable(input_.note).c_str());
}

ReplayRun::~ReplayRun() {
  if (progress_) progress_->clear();
}

ReadOptions ReplayRun::read_options() const {
  ReadOptions o;
  o.normalize = s_.normalize;
  o.skip_malformed = s_.input.skip_malformed;
  o.limit = s_.limit;
  o.nonnegative = s_.nonnegative;
  o.bound = bound_options(s_.unit);  // unit level: source → bound → guard → stream
  o.block_rows = s_.block;
  return o;
}

// The checkpoint to resume from: read and checked before any row is (exit 2).
void ReplayRun::check_resume_file() {
  if (!s_.checkpoint.empty()) {
    lock_.acquire("--checkpoint", s_.checkpoint, lock_path(s_.checkpoint));
    writer_.set_lock(&lock_);
  }
  if (!s_.resume) {
    if (!s_.checkpoint.empty() && std::filesystem::exists(s_.checkpoint))
      throw UsageError("--checkpoint " + s_.checkpoint +
                       " exists (an unfinished run's state): give --resume to continue that run, or remove the file "
                       "to start over");
    if (!s_.checkpoint.empty() && std::filesystem::exists(journal_path(s_.checkpoint)))
      throw UsageError("--checkpoint " + s_.checkpoint + ": " + journal_path(s_.checkpoint) +
                       " exists (the release journal of a run that published releases): give --resume to continue "
                       "that run, or remove it to start over");
    return;
  }
  try {
    from_ = read_checkpoint(s_.checkpoint);
  } catch (const CorruptInput& e) {
    throw UsageError(std::string("--resume: checkpoint ") + e.what());
  }
  if (const std::string why = settings_mismatch(*from_, resume_settings_); !why.empty())
    throw UsageError("--resume: " + s_.checkpoint + " was made with other settings: " + why);
  if (from_->dimension() != d_)
    throw UsageError("--resume: the input differs from the checkpointed run's: " + std::to_string(d_) +
                     " columns, the checkpoint has " + std::to_string(from_->dimension()));
}

// The number of rows, if known: it sets a fixed-horizon mechanism's horizon and the curve's
// spacing. Shuffling holds every row anyway: then the count is exact.
void ReplayRun::size_stream() {
  io::RowSource& source = *input_.source;
  std::optional<std::uint64_t> expected = source.declared_rows();
  if (s_.limit != 0) expected = expected ? std::min(*expected, s_.limit) : s_.limit;
  progress_ = std::make_unique<Progress>(expected);
  if (s_.shuffle) {
    const auto r0 = std::chrono::steady_clock::now();
    buf_.limit_bytes(memory_limit(s_.max_memory));
    if (auto n = source.declared_rows()) {
      buf_.reserve(std::min(*n, s_.limit ? s_.limit : *n));
      buf_.prefault_async();
    }
    reader_->fill(buf_, UINT64_MAX, [&](std::uint64_t used) { progress_->update("reading", used); });
    known_rows_ = buf_.rows;
    order_ = stream::seeded_permutation(buf_.rows, *s_.shuffle);
    figures_.read_seconds += seconds_since(r0);
    return;
  }
  known_rows_ = expected;
  // A fixed-horizon continual release (fpl) and a row-fed learner such as the noisy power method
  // (power) are calibrated for the stream's length.
  const bool power = !s_.nonprivate && session::row_learners_need_length(s_.learners());
  const bool fixed = !s_.nonprivate && s_.has_learner("fpl") &&
                     stream::needs_fixed_horizon(stream::parse_noise_strategy(s_.mechanism));
  if (!power && !fixed) return;
  if (!source.declared_rows() && !input_.is_default && rereadable(s_.input.path)) {
    // A file has a length: count the rows the run will use, through the same reader and guard.
    OpenedInput again = open_input(s_.input);
    known_rows_ = count_usable_rows(*again.source, read_options());
    figures_.length_counted = true;
  }
  if (!known_rows_)
    throw UsageError((fixed ? "--mechanism " + s_.mechanism : std::string("--learner power")) +
                     " is built for a known number of " + (fixed ? "releases" : "rows") + ", and " + source.path() +
                     " is a stream of unknown length: give --limit N");
}

// Resuming: the rows already replayed are read again (the same rows, or the resume is refused).
// Their fingerprint, in replay order, goes into every checkpoint; a resumed run recomputes it while
// skipping them (the reader's counts come back by themselves: the same rows meet the same guard).
void ReplayRun::skip_replayed_rows() {
  if (!from_) return;
  const auto r0 = std::chrono::steady_clock::now();
  if (from_->rows_known() != known_rows_.has_value() || from_->known_rows() != known_rows_.value_or(0))
    throw UsageError("--resume: the input differs from the checkpointed run's: " +
                     (known_rows_ ? std::to_string(*known_rows_) + " rows" : std::string("length unknown")) +
                     ", the checkpoint's run had " +
                     (from_->rows_known() ? std::to_string(from_->known_rows()) + " rows" : std::string("length unknown")));
  const std::uint64_t resume_rows = from_->blocks() * s_.block;
  figures_.resumed_rows = resume_rows;
  if (s_.shuffle) {
    for (std::uint64_t i = 0; i < std::min(resume_rows, buf_.rows); ++i)
      rows_hash_.add(buf_.row(order_[i]), static_cast<std::size_t>(d_));
  } else {
    buf_.reserve(s_.block);
    while (reader_->used() < resume_rows) {
      buf_.rows = 0;
      const bool more = reader_->fill(buf_, std::min(s_.block, resume_rows - reader_->used()),
                                      [&](std::uint64_t used) { progress_->update("skipping", used); });
      for (std::uint64_t i = 0; i < buf_.rows; ++i) rows_hash_.add(buf_.row(i), static_cast<std::size_t>(d_));
      if (!more) break;
    }
  }
  verify_replayed_counts();
  figures_.read_seconds += seconds_since(r0);
}

void ReplayRun::verify_replayed_counts() const {
  const pb::InputProgress now = input_progress(), saved = from_->input();
  const std::vector<std::pair<std::string, std::pair<std::uint64_t, std::uint64_t>>> now_vs_saved = {
      {"rows used", {now.rows_used(), saved.rows_used()}},
      {"rows returned by the reader", {now.rows_returned(), saved.rows_returned()}},
      {"rows skipped by the reader", {now.rows_skipped(), saved.rows_skipped()}},
      {"zero rows", {now.rows_zero(), saved.rows_zero()}},
      {"rows clipped", {now.rows_clipped(), saved.rows_clipped()}},
      {"rows rejected", {now.rows_rejected(), saved.rows_rejected()}},
      {"fingerprint of the rows", {now.rows_hash(), saved.rows_hash()}}};
  for (const auto& [what, values] : now_vs_saved)
    if (values.first != values.second)
      throw UsageError("--resume: the input differs from the checkpointed run's: after its first " +
                       std::to_string(figures_.resumed_rows) + " replayed rows, " + what + " " +
                       std::to_string(values.first) + ", the checkpoint has " + std::to_string(values.second));
}

pb::InputProgress ReplayRun::input_progress() const {
  pb::InputProgress in;
  in.set_rows_used(reader_->used());
  in.set_rows_returned(input_.source->rows_returned());
  in.set_rows_skipped(input_.source->skipped());
  in.set_rows_zero(reader_->zero());
  in.set_rows_clipped(reader_->guard_counts().clipped);
  in.set_rows_rejected(reader_->guard_counts().rejected);
  in.set_rows_hash(rows_hash_.value());
  return in;
}

// The library validates the privacy options (e.g. paper calibration refuses ε ≥ 1) and the
// checkpoint's states: exit 2.
void ReplayRun::build_session() {
  try {
    const session::SessionParts parts = from_ ? session_parts(*from_) : session::SessionParts{};
    session_ = std::make_unique<session::OnlinePcaSession>(d_, s_.session_options(known_rows_),
                                                           from_ ? &parts : nullptr);
  } catch (const InvalidParameter& e) {
    if (from_) throw UsageError("--resume: checkpoint " + s_.checkpoint + ": " + e.what());
    // The privacy options as given leave no usable noise (an ε so large that σ underflows, a δ or a
    // norm bound so small that it overflows or vanishes): name the flags, then the library's reason.
    throw UsageError("--epsilon " + base::format_value(s_.privacy.epsilon) + ", --delta " +
                     base::format_value(s_.privacy.delta) + ", --calibration " + s_.privacy.calibration +
                     " and the row norm bound " + base::format_value(s_.normalize.norm_bound()) +
                     " (--normalize, --clip-norm) give no usable private stream: " + e.what());
  } catch (const CorruptInput& e) {
    throw UsageError("--resume: checkpoint " + s_.checkpoint + ": " + e.what());
  }
  from_.reset();  // its states are in the session now; the bytes can go
  last_checkpoint_block_ = session_->blocks_published();
}

// Every --checkpoint-every releases, at the start of a block (before its rows are read), so that
// the reader's counts are those of the blocks replayed. The workers only wait while the state is
// copied into the message (after drain()); encoding and the atomic write run on the writer's
// thread while the replay goes on. False if a worker failed (close() says why).
bool ReplayRun::write_checkpoint() {
  const auto t0 = std::chrono::steady_clock::now();
  if (!session_->drain()) return false;
  const double drained = seconds_since(t0);
  pb::ReplayCheckpoint msg;
  msg.set_format_version(kCheckpointFormatVersion);
  put_settings(resume_settings_, msg);
  msg.set_dimension(d_);
  msg.set_rows_known(known_rows_.has_value());
  msg.set_known_rows(known_rows_.value_or(0));
  *msg.mutable_input() = input_progress();
  put_session_parts(session_->save(), msg);
  const double copied = seconds_since(t0) - drained;
  last_checkpoint_block_ = session_->blocks_published();
  figures_.drain_seconds += drained;
  figures_.copy_seconds += copied;
  const std::uint64_t release = last_checkpoint_block_;
  writer_.start(s_.checkpoint, std::move(msg), [this, release, drained, copied](std::size_t bytes, double seconds) {
    ++figures_.checkpoints_written;
    figures_.checkpoint_bytes = bytes;
    figures_.write_seconds += seconds;
    std::fprintf(stderr,
                 "%sdpstream-replay: checkpoint at release %llu (%llu rows): %s, %.1f MB; workers drained in "
                 "%.3f s, state copied in %.3f s, written in %.3f s beside the replay\n",
                 ::isatty(STDERR_FILENO) == 1 ? "\r\033[K" : "", (unsigned long long)release,
                 (unsigned long long)(release * s_.block), printable(s_.checkpoint).c_str(), bytes / 1e6, drained, copied, seconds);
  });
  return true;
}

// Reader, before each block: a checkpoint when one is due; the tests' crash.
bool ReplayRun::before_block() {
  const std::uint64_t b = session_->blocks_published();
  if (s_.checkpoint_every != 0 && b > last_checkpoint_block_ && b % s_.checkpoint_every == 0 && !write_checkpoint())
    return false;
  if (s_.test_kill_at_block != 0 && b == s_.test_kill_at_block) {
    writer_.wait();  // deterministic for the tests: the latest checkpoint is on disk,
    session_->drain();  // and every block handed out is released (and in the release journal)
    std::fflush(stdout);
    std::raise(SIGKILL);
  }
  return true;
}

// Reader: hands rows [first, first + n) of the buffer, in `perm` order (or as held), to the session.
bool ReplayRun::produce(const std::uint64_t* perm, std::uint64_t first, std::uint64_t n) {
  Eigen::MatrixXd* slot = session_->next_slot(n);
  if (!slot) return false;  // a worker failed: close() says why
  const bool checkpointing = !s_.checkpoint.empty();
  for (std::uint64_t i = 0; i < n; ++i) {
    const double* row = buf_.row(perm ? perm[first + i] : first + i);
    slot->row(static_cast<Index>(i)) = Eigen::Map<const Eigen::RowVectorXd>(row, d_);
    if (checkpointing) rows_hash_.add(row, static_cast<std::size_t>(d_));
  }
  session_->publish();
  progress_->update("replay", session_->rows_done());
  return true;
}

void ReplayRun::replay() {
  if (s_.shuffle) {
    for (std::uint64_t first = figures_.resumed_rows; first < buf_.rows; first += s_.block)
      if (!before_block() || !produce(order_.data(), first, std::min(s_.block, buf_.rows - first))) break;
  } else {
    buf_.reserve(s_.block);  // a staging block: rows stream through, the learners overlap the reading
    for (bool more = true; more;) {
      if (!before_block()) break;
      buf_.rows = 0;
      const auto r0 = std::chrono::steady_clock::now();
      more = reader_->fill(buf_, s_.block);
      figures_.read_seconds += seconds_since(r0);
      if (buf_.rows > 0 && !produce(nullptr, 0, buf_.rows)) break;
    }
  }
  writer_.wait();  // a failed write stops the run (exit 1), as any I/O error does
  session_->close();
  figures_.input_integrity = verify_input(*input_.source);  // a read stopped by --limit: the rest too
  progress_->update("finish", reader_->used(), true);
  if (reader_->used() == 0) {
    progress_->clear();
    throw std::runtime_error(input_.source->path() + ": no usable rows (" +
                             std::to_string(reader_->guard_counts().rejected) + " rejected by the guard, " +
                             std::to_string(input_.source->skipped()) + " skipped by the reader)");
  }
  const auto f0 = std::chrono::steady_clock::now();
  session_->finish();
  figures_.finish_seconds = seconds_since(f0);
  figures_.seconds = seconds_since(start_);
  progress_->clear();
}

void ReplayRun::remove_checkpoint() {
  if (s_.checkpoint.empty()) return;
  std::error_code ignored;
  // Only the run's own files: its temporaries are gone already (each StagedFile removes its own),
  // and a file beside the checkpoint that merely looks like one (ck.tmp-backup) is someone's.
  std::filesystem::remove(s_.checkpoint, ignored);
  std::filesystem::remove(journal_path(s_.checkpoint), ignored);  // the run is complete: nothing to resume
  lock_.remove();
}

}  // namespace dpstream::tools::replay
