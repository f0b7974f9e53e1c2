// dpstream-replay's checkpoint file, and the writer that keeps it current beside the replay.
//
// The file: the protobuf message of replay_checkpoint.proto — the run's settings, the reader's counts
// and the online-PCA session as a list of parts, each one object's own saving
// (dpstream/session/session_parts.hpp) — in an envelope that ends in the
// library's CRC-32 seal (dpstream/base/message_seal.hpp). Why the seal: protobuf happily parses a
// message cut at a field boundary (the missing fields read as empty), so a truncated file could
// otherwise pass for a checkpoint of an earlier point. The file is only ever replaced atomically
// (dpstream/base/atomic_file.hpp), so a mismatch means damage after the fact. Version 1 files (the
// session's states as typed fields) are still read, as the same parts; another version is refused,
// naming it.
//
// Every reading function throws CorruptInput naming what does not fit.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "common/file_lock.hpp"
#include "dpstream/session/session_parts.hpp"
#include "replay/settings.hpp"
#include "replay_checkpoint.pb.h"

namespace dpstream::tools::replay {

// A 64-bit fingerprint of a sequence of 64-bit words (doubles by their bits, bytes 8 at a time):
// an integrity check against accidents — a changed input file, a damaged checkpoint — not against
// an adversary (not cryptographic). Each word is xor-ed in and diffused by an odd multiply and a
// shift, so every bit of every word, and the words' order, affect the result.
class Fingerprint {
 public:
  void add(std::uint64_t word) {
    h_ ^= word;
    h_ *= 0x9E3779B97F4A7C15ull;
    h_ ^= h_ >> 29;
  }
  void add(const double* values, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t w;
      std::memcpy(&w, values + i, sizeof w);
      add(w);
    }
  }
  void add(const std::string& bytes) {
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, bytes.data() + i, sizeof w);
      add(w);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
    add(tail);
    add(static_cast<std::uint64_t>(bytes.size()));  // "ab" + zero padding ≠ "ab\0"
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0x6A09E667F3BCC908ull;
};

constexpr std::uint32_t kCheckpointFormatVersion = 2;  // written; version 1 is still read

// The stream's release journal beside the checkpoint (dpstream/base/release_journal.hpp): the
// checkpoint's row fingerprint covers the rows before it; the journal, the releases published
// after it, so a resumed run re-publishes exactly those or stops (exit 1) before publishing.
inline std::string journal_path(const std::string& checkpoint) { return checkpoint + ".journal"; }
// The lock one run holds on the checkpoint for its whole life (common/file_lock.hpp).
inline std::string lock_path(const std::string& checkpoint) { return checkpoint + ".lock"; }

// The file's bytes for `msg`.
std::string checkpoint_file_bytes(const pb::ReplayCheckpoint& msg);

// The checkpoint in `path`. CorruptInput: cannot be read, not a checkpoint, truncated or damaged,
// another format version (named).
pb::ReplayCheckpoint read_checkpoint(const std::string& path);

// The session's saved parts in `msg` (either version).
session::SessionParts session_parts(const pb::ReplayCheckpoint& msg);
// Records the session's parts in `msg` (version 2).
void put_session_parts(const session::SessionParts& parts, pb::ReplayCheckpoint& msg);

// Records `settings` in `msg`.
void put_settings(const SettingList& settings, pb::ReplayCheckpoint& msg);
// Empty if `msg` was made with `settings`, else what differs, naming the setting.
std::string settings_mismatch(const pb::ReplayCheckpoint& msg, const SettingList& settings);

// Writes checkpoint files on a thread of its own, one at a time: encoding a few MB and fsync'ing
// them takes several times longer than copying the state, and the
// workers need not wait for it. A crash during a write leaves the previous checkpoint
// (atomic_file.hpp). wait() rethrows a failed write's error; the destructor only joins.
class CheckpointWriter {
 public:
  using Done = std::function<void(std::size_t bytes, double seconds)>;
  CheckpointWriter() = default;
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;
  ~CheckpointWriter();
  // After the previous write (wait()): encodes `msg` and replaces `path` with it, then calls `done`
  // on the writer's thread.
  void start(std::string path, pb::ReplayCheckpoint msg, Done done);
  void wait();
  // The run's lock on the checkpoint, where each write notes its temporary (common/file_lock.hpp).
  void set_lock(FileLock* lock) { lock_ = lock; }

 private:
  FileLock* lock_ = nullptr;
  std::thread thread_;
  std::exception_ptr error_;
};

}  // namespace dpstream::tools::replay
