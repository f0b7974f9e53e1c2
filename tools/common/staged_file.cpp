#include "common/staged_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/cli.hpp"

namespace dpstream::tools {

namespace {

std::string why() { return std::strerror(errno); }

void fsync_path(const std::string& path, int flags, const std::string& what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(what + ": cannot open to sync: " + why());
  const bool ok = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(what + ": fsync failed: " + std::strerror(err));
}

// rename without replacing: renameat2(RENAME_NOREPLACE), or link + unlink where the file system does
// not support it. Returns false with errno set on failure.
bool rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return false;
  if (::link(from.c_str(), to.c_str()) != 0) return false;
  ::unlink(from.c_str());
  return true;
}

}  // namespace

StagedFile::StagedFile(std::string path, bool replace, std::string flag)
    : path_(std::move(path)), flag_(std::move(flag)), replace_(replace) {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw UsageError(flag_ + " " + path_ + " is a directory");
    if (!replace_) throw UsageError(flag_ + " " + path_ + " exists: give --force to replace it");
  }
  std::vector<char> name(path_.begin(), path_.end());
  for (const char c : std::string(".tmp-XXXXXX")) name.push_back(c);
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw UsageError(flag_ + " " + path_ + ": cannot create a file beside it: " + why());
  ::close(fd);
  temporary_ = name.data();
}

StagedFile::~StagedFile() {
  if (!committed_) ::unlink(temporary_.c_str());
}

void StagedFile::commit() {
  const std::string what = flag_ + " " + path_;
  try {
    fsync_path(temporary_, O_RDONLY, what);
    const bool renamed = replace_ ? ::rename(temporary_.c_str(), path_.c_str()) == 0
                                  : rename_no_replace(temporary_, path_);
    if (!renamed)
      throw std::runtime_error(what + ": cannot move the finished file into place (" + why() + "); nothing written");
  } catch (...) {
    ::unlink(temporary_.c_str());
    committed_ = true;
    throw;
  }
  committed_ = true;
  std::string dir = std::filesystem::path(path_).parent_path().string();
  fsync_path(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY, what + " (its directory)");
}

}  // namespace dpstream::tools
