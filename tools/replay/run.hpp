// One dpstream-replay run: the input opened and checked, a checkpoint resumed, the rows read through
// the guard and handed to the online-PCA session (dpstream/session/online_pca_session.hpp: its
// stream, learner, evaluation and projection threads) block by block on the reader thread, the
// caller's, with checkpoints written beside it.
//
// Construction does everything that can refuse the run before a row is replayed or any noise is
// drawn (UsageError, exit 2): the settings, the input, the checkpoint to resume and the rows it
// replayed, the stream's length for a fixed-horizon mechanism (a file that does not declare it is
// counted in a first pass; a stream of unknown length needs --limit). replay() then runs the stream;
// an error there (malformed data, I/O) stops it (exit 1).
//
// Checkpoints (--checkpoint PATH --checkpoint-every N, --resume): every N releases the reader waits
// until every worker is done with the same release (OnlinePcaSession::drain) and writes the whole
// state — the session's parts (OnlinePcaSession::save), the reader's counts and a fingerprint of the rows replayed, and the
// settings a resume must share (settings.hpp) — into one message, replaced atomically. Counted in
// releases because a release is the only point where the stream holds no partial block. --resume
// re-opens the input, reads the replayed rows again (the seeded generator and a seeded shuffle give
// the same ones) and checks them against the fingerprint, then continues: with --seed the output
// equals the uninterrupted run's, bit for bit (tests/test_replay_resume.sh), and no released node's
// noise is drawn again. The file holds raw data; it is removed once the run completes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/file_lock.hpp"
#include "common/guarded_reader.hpp"
#include "common/input.hpp"
#include "common/progress.hpp"
#include "common/row_buffer.hpp"
#include "replay/checkpoint.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "replay/settings.hpp"

namespace dpstream::tools::replay {

// What a finished run reports besides the session's own figures.
struct RunFigures {
  double seconds = 0, read_seconds = 0, finish_seconds = 0;
  std::uint64_t resumed_rows = 0;  // rows replayed before the checkpoint it resumed from
  std::uint64_t checkpoints_written = 0, checkpoint_bytes = 0;
  double drain_seconds = 0, copy_seconds = 0, write_seconds = 0;  // summed over the checkpoints
  bool length_counted = false;     // a first pass counted the rows (fixed-horizon mechanism, a file)
  std::string input_integrity;     // "verified" (a gzip CRC checked to the end), or "none"
};

class ReplayRun {
 public:
  // Opens and checks everything (see above). `s` is kept by reference; its input and format are
  // replaced by the resolved ones (the path opened, the format read).
  ReplayRun(ReplaySettings& s, OpenedInput input);
  ~ReplayRun();

  // Replays every row; then the final release and OPT. std::runtime_error if no row was usable.
  void replay();
  // After a complete run: removes the checkpoint (raw data) and any temporary a crash left.
  void remove_checkpoint();

  const ReplaySettings& settings() const { return s_; }
  const OpenedInput& input() const { return input_; }
  const GuardedReader& reader() const { return *reader_; }
  session::OnlinePcaSession& session() { return *session_; }
  const session::OnlinePcaSession& session() const { return *session_; }
  std::optional<std::uint64_t> known_rows() const { return known_rows_; }
  const RunFigures& figures() const { return figures_; }

 private:
  void size_stream();
  void check_resume_file();
  void skip_replayed_rows();
  void verify_replayed_counts() const;
  void build_session();
  bool write_checkpoint();
  bool before_block();
  bool produce(const std::uint64_t* perm, std::uint64_t first, std::uint64_t n);
  pb::InputProgress input_progress() const;
  ReadOptions read_options() const;

  ReplaySettings& s_;
  OpenedInput input_;
  Eigen::Index d_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::unique_ptr<GuardedReader> reader_;
  RowBuffer buf_;
  std::vector<std::uint64_t> order_;  // --shuffle: the replay order of the rows held
  std::optional<std::uint64_t> known_rows_;
  std::optional<pb::ReplayCheckpoint> from_;
  SettingList resume_settings_;
  Fingerprint rows_hash_;
  std::unique_ptr<Progress> progress_;
  std::unique_ptr<session::OnlinePcaSession> session_;
  FileLock lock_;  // --checkpoint: PATH.lock, held for the whole run
  CheckpointWriter writer_;
  std::uint64_t last_checkpoint_block_ = 0;
  RunFigures figures_;
};

}  // namespace dpstream::tools::replay
