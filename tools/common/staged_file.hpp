// An output file a tool streams into: written under a temporary name beside its target and renamed
// into place only once complete, so that a run that fails (or is killed) never leaves a partial file
// at the target, and never damages a file that was there before (dpstream-convert --output).
//
// The temporary is `path`.tmp-XXXXXX (mkstemp: created O_EXCL with mode 0600, six random
// characters), in the target's directory because rename is atomic within one file system only. A run
// killed by a signal leaves that temporary behind (never the target).
#pragma once

#include <string>

namespace dpstream::tools {

class StagedFile {
 public:
  // UsageError (exit 2: nothing written) if `path` exists (any kind of entry, a dangling symlink
  // included) and `replace` is false, if it is a directory, or if the temporary cannot be created.
  // `flag` names the option in messages ("--output").
  StagedFile(std::string path, bool replace, std::string flag);
  // Removes the temporary unless committed.
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  const std::string& path() const noexcept { return path_; }
  // Where to write: the temporary.
  const std::string& temporary() const noexcept { return temporary_; }

  // Call after the writer has closed the temporary: fsyncs it, renames it to `path` (replacing an
  // existing entry only if `replace`; the entry itself, a symlink's target is never written) and
  // fsyncs the directory. std::runtime_error naming the path on failure; the temporary is removed
  // then and `path` is as it was.
  void commit();

 private:
  std::string path_, temporary_, flag_;
  bool replace_;
  bool committed_ = false;
};

}  // namespace dpstream::tools
