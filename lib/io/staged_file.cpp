// A file written whole or not at all (why and how: dpstream/io/staged_file.hpp).
#include "dpstream/io/staged_file.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace dpstream::io {

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

}  // namespace

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
  }
  std::string name = path_ + ".tmp-XXXXXX";  // mkostemp's template: six random letters or digits
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) throw write_error(path_, "cannot create a temporary file beside it", errno);
  temporary_ = std::move(name);
  if (::fchmod(fd_, mode) != 0) {
    const int err = errno;
    ::close(fd_);
    ::unlink(temporary_.c_str());
    throw write_error(path_, "cannot set the mode of " + temporary_, err);
  }
}

StagedFile::~StagedFile() {
  if (done_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(temporary_.c_str());
}

std::runtime_error StagedFile::failure(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temporary_.c_str());
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

void StagedFile::commit() {
  if (done_) throw std::logic_error("StagedFile::commit twice: " + path_);
  if (::fsync(fd_) != 0) throw failure("fsync failed", errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) throw failure("close failed", errno);
  const bool renamed = existing_ == ExistingFile::replace ? ::rename(temporary_.c_str(), path_.c_str()) == 0
                                                         : rename_no_replace(temporary_, path_);
  if (!renamed) throw failure("cannot move the finished file into place", errno);
  done_ = true;
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

}  // namespace dpstream::io
