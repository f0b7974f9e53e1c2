// Atomic file replacement of a file held whole in memory (checkpoints, ledgers, regret reports): a
// StagedFile (dpstream/base/staged_file.hpp says how: a fresh mkostemp temporary beside `path`, never a
// planted link, renamed over `path` only once complete and fsynced) written in one go. A crash before
// the rename by SIGINT, SIGTERM or SIGHUP removes the temporary (remove_temporaries_on_signal); one by
// SIGKILL leaves it behind (mode 0600), and no later run removes it: only the files a run itself
// created are ever removed, never files found by a name pattern (a user's PATH.tmp-backup is kept).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "dpstream/base/staged_file.hpp"

namespace dpstream::base {

// Replaces `path` with `bytes` as above. `mode` is set exactly (the umask does not apply): 0600 by
// default, for files that hold raw data or statistics of it (checkpoints hold exact sums; regret
// reports a non-private OPT), wider only when the caller knows the content is public. On any
// failure: std::runtime_error "cannot write PATH: what failed: strerror", the temporary is
// removed and `path` is untouched — except when only the final fsync of the directory fails: the
// new file is then in place but the rename may not survive a power loss, and that is reported too.
void write_file_atomically(const std::string& path, const std::string& bytes, mode_t mode = 0600);

// A set of files that belong together (a CSV and its plot): every one is written and fsynced to its
// temporary before any replaces its target, so a failure while writing (a full disk) leaves the old
// set whole and no temporary. Only the renames, which need no space, remain after that point.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& path_and_bytes,
                            ExistingFile existing = ExistingFile::replace, mode_t mode = 0600);

}  // namespace dpstream::base
