// Atomic file replacement (why and how: dpstream/io/atomic_file.hpp).
#include "dpstream/io/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dpstream::io {

namespace {

constexpr char kTemporarySuffix[] = ".tmp-XXXXXX";  // mkostemp's template: six random letters or digits

std::runtime_error write_error(const std::string& path, const std::string& what, int err) {
  return std::runtime_error("cannot write " + path + ": " + what + ": " + std::strerror(err));
}

// The directory holding `path` (where its temporaries go) and the file name within it.
std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string file_name_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `name` is `base` + ".tmp-" + six characters of mkostemp's alphabet ([A-Za-z0-9]).
bool is_leftover_name(const std::string& name, const std::string& base) {
  const std::string prefix = base + ".tmp-";
  if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) return false;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& bytes, mode_t mode) {
  std::string tmp = path + kTemporarySuffix;
  // O_EXCL (mkostemp's): an existing name, a planted symlink included, is never opened.
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw write_error(path, "cannot create a temporary file beside it", errno);
  auto fail = [&](const char* what, bool open) {
    const int err = errno;
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    return write_error(path, std::string(what) + " (" + tmp + ")", err);
  };
  if (::fchmod(fd, mode) != 0) throw fail("cannot set the mode", true);
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw fail("write failed", true);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) throw fail("fsync failed", true);
  if (::close(fd) != 0) throw fail("close failed", false);
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("rename failed", false);
  // Make the rename itself durable.
  const std::string dir = directory_of(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw write_error(path, "written, but its directory cannot be opened to fsync the rename", errno);
  if (::fsync(dfd) != 0) {
    const int err = errno;
    ::close(dfd);
    throw write_error(path, "written, but fsync of its directory failed", err);
  }
  ::close(dfd);
}

std::size_t remove_atomic_leftovers(const std::string& path) {
  const std::string dir = directory_of(path);
  const std::string base = file_name_of(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw std::runtime_error("cannot read " + dir + " for leftovers of " + path + ": " + std::strerror(errno));
  DIR* listing = ::fdopendir(dfd);  // owns dfd from here
  if (listing == nullptr) {
    const int err = errno;
    ::close(dfd);
    throw std::runtime_error("cannot read " + dir + " for leftovers of " + path + ": " + std::strerror(err));
  }
  std::size_t removed = 0;
  const uid_t me = ::geteuid();
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(listing);
    if (entry == nullptr) break;
    const std::string name = entry->d_name;
    if (!is_leftover_name(name, base)) continue;
    struct stat info {};
    if (::fstatat(dfd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (!S_ISREG(info.st_mode) || info.st_uid != me) continue;
    // unlinkat removes the name, never what a link there points to: if the entry was swapped for
    // something else since the fstatat, at most that name goes.
    if (::unlinkat(dfd, name.c_str(), 0) != 0) {
      if (errno == ENOENT) continue;
      const int err = errno;
      ::closedir(listing);
      throw std::runtime_error("cannot remove " + dir + "/" + name + ", a leftover temporary of " + path + ": " +
                               std::strerror(err));
    }
    ++removed;
  }
  const int err = errno;
  ::closedir(listing);
  if (err != 0) throw std::runtime_error("cannot read " + dir + " for leftovers of " + path + ": " + std::strerror(err));
  return removed;
}

}  // namespace dpstream::io
