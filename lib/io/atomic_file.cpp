// Atomic file replacement (why and how: dpstream/io/atomic_file.hpp).
#include "dpstream/io/atomic_file.hpp"

#include "dpstream/io/staged_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dpstream::io {

namespace {

// The file name of `path` within its directory (directory_of, staged_file.hpp).
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
  StagedFile file(path, ExistingFile::replace, mode);
  file.write(bytes.data(), bytes.size());
  file.commit();
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
