// An exclusive lock on a state file (why: file_lock.hpp).
#include "common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/cli.hpp"

namespace dpstream::tools {

FileLock::~FileLock() {
  if (fd_ < 0) return;
  // A lock file this run created and that notes nothing (a refused or failed run) goes with it; one
  // noting a temporary stays for the next run, as does one that was there before.
  struct stat st {};
  if (created_ && ::fstat(fd_, &st) == 0 && st.st_size == 0) ::unlink(path_.c_str());
  ::close(fd_);  // releases the lock
}

void FileLock::acquire(const std::string& flag, const std::string& state, const std::string& path) {
  // A holder that completes removes the file while locked: a lock taken on that unlinked inode is no
  // lock at all, so it is taken again on the file now at `path` (a few times: each needs a race).
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool created = true;
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
      created = false;
      fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0)
      throw UsageError(flag + " " + printable(state) + ": cannot create its lock file " + printable(path) + ": " +
                       std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw UsageError(flag + " " + printable(state) + " is in use by another run (" + printable(path) +
                         " is locked): one run at a time per checkpoint");
      throw UsageError(flag + " " + printable(state) + ": cannot lock " + printable(path) + ": " + std::strerror(err));
    }
    struct stat held {}, now {};
    if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      fd_ = fd;
      path_ = path;
      created_ = created;
      remove_noted_temporary(state);
      return;
    }
    ::close(fd);
  }
  throw UsageError(flag + " " + printable(state) + " is in use by another run (" + printable(path) +
                   " keeps changing)");
}

void FileLock::remove_noted_temporary(const std::string& state) {
  char name[4097];
  const ssize_t n = ::pread(fd_, name, sizeof(name), 0);
  if (n <= 0) return;
  // Only what note() writes: one name of the state's temporaries (STATE.tmp-…). Anything else is a
  // file of someone's that happens to have the lock's name: refused, its bytes kept.
  const std::string noted(name, static_cast<std::size_t>(n));
  if (n == static_cast<ssize_t>(sizeof(name)) || noted.rfind(state + ".tmp-", 0) != 0 ||
      noted.find('\0') != std::string::npos) {
    ::close(fd_);
    fd_ = -1;
    throw UsageError("--checkpoint " + printable(state) + ": " + printable(path_) +
                     " is not a checkpoint's lock file (it holds something else): move it away or choose another "
                     "--checkpoint");
  }
  struct stat st {};  // the lock file is ours (0600), but what is at the noted name now may not be
  if (::lstat(noted.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid()) ::unlink(noted.c_str());
  note("");
}

void FileLock::note(const std::string& temporary) {
  if (fd_ < 0) return;
  // No fsync: this guards against a killed process, whose page cache survives it; a power loss may
  // lose the note (and leave one temporary for the user).
  if (::ftruncate(fd_, 0) != 0) return;
  if (!temporary.empty()) (void)!::pwrite(fd_, temporary.data(), temporary.size(), 0);
}

void FileLock::remove() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace dpstream::tools
