// The files one run writes, checked before any work: two of a run's paths that name the same file
// (a checkpoint that is also an output, an input that is also an output) would destroy one another,
// and a file a tool replaces must be a regular file (a FIFO, a device, a socket, a directory or a
// symlink at an output's path is never replaced: as root, --output /dev/null would otherwise
// replace the system's /dev/null).
#pragma once

#include <string>
#include <vector>

namespace dpstream::tools {

// One path of a run, with the flag (or "--out FOLDER's regret.csv") that names it in messages.
struct RunPath {
  std::string flag;
  std::string path;
};

// UsageError (exit 2) naming both flags if two of `paths` are the same file: an existing file by
// (st_dev, st_ino), following links; a missing one by its parent's real path and its name. Empty
// paths and /dev/stdin are skipped.
void refuse_shared_paths(const std::vector<RunPath>& paths);

// UsageError (exit 2) naming `flag` and `path` unless nothing is at `path` or it is a regular file
// (lstat: a symlink is refused, never followed).
void refuse_non_regular_output(const std::string& flag, const std::string& path);

}  // namespace dpstream::tools
