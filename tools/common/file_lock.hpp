// One run at a time on a state file (a replay's --checkpoint): an exclusive flock on PATH.lock,
// held while the run lives. Two runs sharing a checkpoint would overwrite each other's state, and
// one's completion would remove the only checkpoint the other had.
#pragma once

#include <string>

namespace dpstream::tools {

class FileLock {
 public:
  FileLock() = default;
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Locks `path` (created if missing, mode 0600, never through a symlink). UsageError (exit 2)
  // "FLAG STATE is in use by another run (PATH is locked)…" if another process holds it, naming
  // the path if it cannot be created.
  // Then removes the temporary a killed holder noted (note()), if any.
  void acquire(const std::string& flag, const std::string& state, const std::string& path);
  // For a run whose state is gone: removes the lock file while still holding it, then releases it.
  void remove();

  // Records in the lock file the name of a temporary the holder has just created ("" once it is
  // committed or removed), so that after a SIGKILL the next holder removes exactly that file
  // (acquire: if it is still a regular file of ours) and never one found by a name pattern.
  void note(const std::string& temporary);

 private:
  void remove_noted_temporary(const std::string& state);
  int fd_ = -1;
  bool created_ = false;  // by this run (only then removed by the destructor)
  std::string path_;
};

}  // namespace dpstream::tools
