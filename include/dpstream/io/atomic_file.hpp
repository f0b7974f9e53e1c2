// Atomic file replacement of a file held whole in memory (checkpoints, ledgers, regret reports): a
// StagedFile (dpstream/io/staged_file.hpp says how: a fresh mkostemp temporary beside `path`, never a
// planted link, renamed over `path` only once complete and fsynced) written in one go. A crash before
// the rename leaves the temporary behind, holding what `path` would have held, and since its name is
// unpredictable no later write replaces it: remove_atomic_leftovers removes them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace dpstream::io {

// Replaces `path` with `bytes` as above. `mode` is set exactly (the umask does not apply): 0600 by
// default, for files that hold raw data or statistics of it (checkpoints hold exact sums; regret
// reports a non-private OPT), wider only when the caller knows the content is public. On any
// failure: std::runtime_error "cannot write PATH: what failed: strerror", the temporary is
// removed and `path` is untouched — except when only the final fsync of the directory fails: the
// new file is then in place but the rename may not survive a power loss, and that is reported too.
void write_file_atomically(const std::string& path, const std::string& bytes, mode_t mode = 0600);

// Removes the temporaries that interrupted write_file_atomically(path, …) calls left in `path`'s
// directory: entries named exactly `path`'s file name + ".tmp-" + six letters or digits, that are
// regular files (lstat: a symlink of that name is left alone, never followed) owned by the
// effective uid. Returns how many it removed. Call it when no other write to `path` is in progress
// (a concurrent writer's temporary would be removed under it). std::runtime_error naming the
// directory if it cannot be read, or a file if it cannot be removed.
std::size_t remove_atomic_leftovers(const std::string& path);

}  // namespace dpstream::io
