// A file written whole or not at all (why and how: dpstream/base/staged_file.hpp).
#include "dpstream/base/staged_file.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace dpstream::base {

namespace {

std::runtime_error write_error(const std::string& path, const std::string& what, int err) {
  return std::runtime_error("cannot write " + path + ": " + what + ": " + std::strerror(err));
}

// rename that never replaces: renameat2(RENAME_NOREPLACE), or link + unlink where the file system
// does not support it (link fails with EEXIST just the same). False with errno set on failure.
bool rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return false;
  if (::link(from.c_str(), to.c_str()) != 0) return false;
  ::unlink(from.c_str());
  return true;
}

// Only a regular file is ever replaced: a FIFO, a device, a socket or a symlink at `path` is
// someone's (as root, /dev/null would otherwise become a regular file).
const char* const not_regular =
    "it is not a regular file (a link, FIFO, device or socket), and only a regular file is replaced";

bool holds_non_regular(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

// The live temporaries of this process, for the signal handler: a fixed table (no allocation, no
// lock) whose states are lock-free atomics, so that the handler only reads it and calls unlink,
// both async-signal-safe. 0 free, 1 being filled, 2 live.
constexpr int kSlots = 64;
struct TemporarySlot {
  std::atomic<int> state{0};
  char name[4096];
};
TemporarySlot g_temporaries[kSlots];

int register_temporary(const std::string& name) {
  if (name.size() >= sizeof(g_temporaries[0].name)) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_temporaries[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_temporaries[i].name, name.c_str(), name.size() + 1);
    g_temporaries[i].state.store(2, std::memory_order_release);
    return i;
  }
  return -1;  // more than kSlots at once: that one is removed by its owner only
}

void release_temporary(int& slot) {
  if (slot >= 0) g_temporaries[slot].state.store(0, std::memory_order_release);
  slot = -1;
}

extern "C" void remove_temporaries_and_die(int sig) {
  for (auto& t : g_temporaries)
    if (t.state.load(std::memory_order_acquire) == 2) ::unlink(t.name);
  std::signal(sig, SIG_DFL);  // then die of the signal as before: the exit status says which
  std::raise(sig);
}

}  // namespace

void remove_temporaries_on_signal() {
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_die;
  sigemptyset(&action.sa_mask);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A signal ignored by the parent (nohup, a background job's SIGINT) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &action, nullptr);
  }
}

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

StagedFile::StagedFile(std::string path, ExistingFile existing, mode_t mode)
    : path_(std::move(path)), existing_(existing) {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw write_error(path_, "it is a directory", EISDIR);
    if (existing_ == ExistingFile::refuse) throw write_error(path_, "it exists and is not to be replaced", EEXIST);
    if (!S_ISREG(st.st_mode)) throw write_error(path_, not_regular, EEXIST);
  }
  std::string name = path_ + ".tmp-XXXXXX";  // mkostemp's template: six random letters or digits
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) throw write_error(path_, "cannot create a temporary file beside it", errno);
  temporary_ = std::move(name);
  slot_ = register_temporary(temporary_);
  if (::fchmod(fd_, mode) != 0) {
    const int err = errno;
    ::close(fd_);
    ::unlink(temporary_.c_str());
    release_temporary(slot_);
    throw write_error(path_, "cannot set the mode of " + temporary_, err);
  }
}

StagedFile::~StagedFile() {
  if (done_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(temporary_.c_str());
  release_temporary(slot_);
}

std::runtime_error StagedFile::failure(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temporary_.c_str());
  release_temporary(slot_);
  done_ = true;
  return write_error(path_, what + " (" + temporary_ + ")", err);
}

void StagedFile::write(const char* data, std::size_t size) {
  if (done_ || fd_ < 0) throw std::logic_error("StagedFile::write after commit: " + path_);
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw failure("write failed", errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void StagedFile::prepare() {
  if (done_) throw std::logic_error("StagedFile::prepare after commit: " + path_);
  if (fd_ < 0) return;  // prepared already
  if (::fsync(fd_) != 0) throw failure("fsync failed", errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) throw failure("close failed", errno);
}

void StagedFile::commit() {
  if (done_) throw std::logic_error("StagedFile::commit twice: " + path_);
  prepare();
  if (existing_ == ExistingFile::replace && holds_non_regular(path_)) throw failure(not_regular, EEXIST);
  const bool renamed = existing_ == ExistingFile::replace ? ::rename(temporary_.c_str(), path_.c_str()) == 0
                                                         : rename_no_replace(temporary_, path_);
  if (!renamed) throw failure("cannot move the finished file into place", errno);
  done_ = true;
  release_temporary(slot_);  // a signal from here on finds nothing of ours to remove
  const std::string dir = directory_of(path_);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw write_error(path_, "written, but its directory cannot be opened to fsync the rename", errno);
  if (::fsync(dfd) != 0) {
    const int err = errno;
    ::close(dfd);
    throw write_error(path_, "written, but fsync of its directory failed", err);
  }
  ::close(dfd);
}

}  // namespace dpstream::base
