// ReleaseJournal: a durable record of every release a stream has published, so that a stream
// restored from a checkpoint can only publish again what it published before.
//
// Why: a checkpointed stream keeps the noise of its releases and its noise source's state, so a
// stream restored after a crash makes the releases the crashed process published after its last
// checkpoint again with the SAME noise (a fresh draw would let an observer average two draws of one
// release). Fed the same rows, it publishes the same values. Fed other rows, the two published
// versions of one release differ by exactly the rows' difference: the noise cancels, and so does
// the privacy. Nothing in the checkpoint can tell: those releases were made after it was written.
// The journal can: before a release is published (before any subscriber sees it) its digest is
// appended here and made durable (fdatasync); a release whose step the journal already holds must
// have the same digest, or it is refused and nothing is published.
//
// The file: an 8-byte magic "DPSJRNL1", the stream's 32-byte id (random, drawn when the stream was
// built, kept in its checkpoints: a journal of another stream is refused), then one 40-byte record a
// release: its step (uint64, little-endian) and its digest (BLAKE2b-256 of the step, the rows and
// the released values, as published: public values, so the journal holds nothing private). Records
// are consecutive from step 1. A record cut by a crash is dropped when the journal is opened: it was
// cut before its fdatasync returned, so its release was never published. A complete record whose
// fdatasync had not returned was not published either, and still binds that step: conservative.
//
// What a user must keep: the checkpoint AND its journal, together, until the stream is finished. A
// restore refuses a journal that is missing, of another stream, or shorter than the checkpoint.
// Mode 0600; one writer at a time (nothing locks the file).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpstream::base {

class ReleaseJournal {
 public:
  using Digest = std::array<unsigned char, 32>;

  // A new journal at `path` for the stream `id`. InvalidParameter if `path` exists (the journal of
  // a stream that published: restore that stream, or remove the file to start over); the file's
  // creation is made durable (file and directory fsync'ed). std::runtime_error for I/O errors.
  static ReleaseJournal create(const std::string& path, const Digest& id);
  // The journal of stream `id` at `path`, for a stream restored after `steps` releases. CorruptInput
  // (naming the path) if it cannot be read, is not a journal, belongs to another stream, holds
  // records out of order, or fewer than `steps`. A trailing partial record is cut away.
  static ReleaseJournal open(const std::string& path, const Digest& id, std::uint64_t steps);

  ReleaseJournal(ReleaseJournal&&) noexcept;
  ReleaseJournal& operator=(ReleaseJournal&&) noexcept;
  ~ReleaseJournal();

  // Before release `step` is published. A step the journal holds: its digest must be `digest`,
  // else InvalidParameter saying so (nothing written). The next step: appended and fdatasync'ed
  // (std::runtime_error if that fails: then do not publish). Any other step: InvalidParameter.
  void record(std::uint64_t step, const Digest& digest);
  std::uint64_t releases() const noexcept { return releases_; }
  const std::string& path() const noexcept { return path_; }

  // A random id for a new stream (libsodium).
  static Digest new_id();

 private:
  ReleaseJournal(std::string path, int fd, std::uint64_t releases, std::uint64_t first_held,
                 std::vector<Digest> held);
  std::string path_;
  int fd_ = -1;
  std::uint64_t releases_ = 0;     // records in the file
  std::uint64_t first_held_ = 0;   // held_[i] is the digest of step first_held_ + i
  std::vector<Digest> held_;       // the records after the restored step, to check re-releases
};

// BLAKE2b-256 of a release, fed piece by piece (a step, a row count, runs of doubles by their bits).
class ReleaseDigest {
 public:
  ReleaseDigest();
  ReleaseDigest& add(std::uint64_t word);
  ReleaseDigest& add(const double* values, std::size_t n);
  ReleaseJournal::Digest finish();

 private:
  alignas(64) unsigned char state_[384];  // crypto_generichash_state (libsodium: 384 bytes)
};

// A stream's side of its journal, the one piece every journalled stream (ContinualSum,
// StreamingPrivateOja) uses: none, or the journal and the stream's id; and whether a release was
// refused, after which the stream publishes nothing more.
class StreamJournal {
 public:
  StreamJournal() = default;  // none
  // A new stream's: a new id and ReleaseJournal::create at `path` ("" : none).
  static StreamJournal create(const std::string& path);
  // A restored stream's: `id` as its checkpoint holds it ("" : the stream kept none). CorruptInput
  // naming `checkpoint` for an id that is not 32 bytes; ReleaseJournal::open's refusals.
  static StreamJournal open(const std::string& path, const std::string& id, std::uint64_t steps,
                            const std::string& checkpoint);

  bool kept() const noexcept { return journal_.has_value(); }
  std::string id() const;  // for the checkpoint: "" when none
  // The journal of a stream whose construction failed after create(): closed and removed (empty).
  void discard() noexcept;
  // Before release `step` is published. If the journal refuses it or cannot make it durable,
  // `wipe()` clears the values and the stream is marked refused; the exception goes on.
  template <class Wipe>
  void record(std::uint64_t step, ReleaseDigest& digest, Wipe wipe) {
    try {
      journal_->record(step, digest.finish());
    } catch (...) {
      refused_ = true;
      wipe();
      throw;
    }
  }
  // InvalidParameter naming `stream` once a release was refused.
  void require_usable(const std::string& stream) const;

 private:
  std::optional<ReleaseJournal> journal_;
  ReleaseJournal::Digest id_{};
  bool refused_ = false;
};

}  // namespace dpstream::base
