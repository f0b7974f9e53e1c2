// Checks on the paths of one run (why: output_paths.hpp).
#include "output_paths.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "cli.hpp"

namespace dpstream::tools {

namespace {

// A key equal for two paths exactly when they name the same file, existing or to be created.
std::string identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0)
    return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  // Not there yet: the parent resolved (links, "..", relative parts) and the name as given. A
  // parent that does not exist either is normalised as far as it exists.
  std::error_code ignored;
  const std::filesystem::path p(path);
  const std::filesystem::path parent = std::filesystem::weakly_canonical(
      std::filesystem::absolute(p.has_parent_path() ? p.parent_path() : ".", ignored), ignored);
  return "path " + (parent / p.filename()).lexically_normal().string();
}

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void refuse_shared_paths(const std::vector<RunPath>& paths) {
  std::vector<std::string> keys(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].path.empty() || paths[i].path == "/dev/stdin" || paths[i].path == "-") continue;
    keys[i] = identity_of(paths[i].path);
    for (std::size_t j = 0; j < i; ++j)
      if (!keys[j].empty() && keys[j] == keys[i])
        throw UsageError(paths[j].flag + " " + printable(paths[j].path) + " and " + paths[i].flag + " " +
                         printable(paths[i].path) + " are the same file: one would destroy the other");
  }
}

void refuse_non_regular_output(const std::string& flag, const std::string& path) {
  struct stat st {};
  if (path.empty() || ::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  throw UsageError(flag + " " + printable(path) + " is " + kind_of(st.st_mode) +
                   ": only a regular file is replaced");
}

}  // namespace dpstream::tools
