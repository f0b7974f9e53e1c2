// A file written whole or not at all: every file the library writes (checkpoints, ledgers, regret
// reports, row logs, CSV rows) goes through this class. The bytes go to a fresh temporary beside the
// target and are renamed over it only once complete, so a failure or a crash (kill -9, power loss)
// at any moment leaves either the previous file or the complete new one at `path`, never a torn
// one, and an existing file is never truncated first.
//
// The temporary is `path`.tmp-XXXXXX in the target's directory (rename is atomic within one file
// system only), created by mkostemp: the six characters are random and the file is opened
// O_CREAT|O_EXCL, so a name someone planted (a symlink to a file of ours, say) is never opened but
// skipped for another. Its mode is set exactly by fchmod (the umask does not apply). commit()
// fsyncs it, renames it over `path` and fsyncs the directory so that the rename itself survives a
// power loss. Only a regular file at `path` is ever replaced: a symlink, FIFO, device, socket or
// directory there is refused (by the constructor, and again just before the rename), never
// followed; directories on the way to `path` are followed as usual. A process stopped by SIGINT,
// SIGTERM or SIGHUP removes its temporaries (remove_temporaries_on_signal); one killed by SIGKILL
// leaves its temporary behind, which no later run removes (it cannot tell it from a user's file of
// that name).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace dpstream::base {

// What commit() does when `path` already exists when it renames.
enum class ExistingFile {
  replace,  // the new file takes its place (the old one stays intact until then)
  refuse,   // nothing is replaced: the constructor refuses an existing entry, and commit() refuses one
            // that appeared meanwhile (renameat2 RENAME_NOREPLACE, else link + unlink)
};

class StagedFile {
 public:
  // Creates the temporary. std::runtime_error "cannot write PATH: …" naming what failed: the
  // directory does not exist or is not writable, `path` is not a regular file, or (refuse) it exists.
  explicit StagedFile(std::string path, ExistingFile existing = ExistingFile::replace, mode_t mode = 0600);
  // Unless committed: closes and removes the temporary; `path` is as it was.
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  const std::string& path() const noexcept { return path_; }
  const std::string& temporary() const noexcept { return temporary_; }
  // The temporary's descriptor, for a writer that streams into it (-1 after commit). Do not close it.
  int fd() const noexcept { return fd_; }

  // Writes all of `size` bytes at the current offset (EINTR and short writes retried).
  void write(const char* data, std::size_t size);

  // fsync, close, rename over `path` (as `existing` says), fsync the directory. On any failure:
  // std::runtime_error "cannot write PATH: what failed: strerror", the temporary removed, `path`
  // untouched — except when only the directory's fsync fails: the new file is then in place but the
  // rename may not survive a power loss, and that is reported too. Once only.
  void commit();
  // The first half of commit(): fsync and close (failures as commit's), so that several files can
  // be made durable before any of them replaces its target (write_files_atomically). commit()
  // after it only renames and fsyncs the directory.
  void prepare();

 private:
  std::runtime_error failure(const std::string& what, int err);
  std::string path_, temporary_;
  ExistingFile existing_;
  int fd_ = -1;
  bool done_ = false;  // committed, or failed and cleaned up
  int slot_ = -1;      // its entry in the table remove_temporaries_on_signal's handler reads
};

// Installs a handler for SIGINT, SIGTERM and SIGHUP (each not ignored already) that removes the
// temporaries of every StagedFile of this process not yet committed or destroyed, then dies of the
// signal with its default action. The handler only reads a fixed table of names and calls unlink
// (async-signal-safe). Tools call it first thing; SIGKILL cannot be caught: a temporary it leaves
// (mode 0600, PATH.tmp-XXXXXX) is left for the user, as no run removes a file it did not create.
void remove_temporaries_on_signal();

// The directory holding `path`, where its temporaries go ("." for a bare file name).
std::string directory_of(const std::string& path);

}  // namespace dpstream::base
