// Atomic file replacement for checkpoints: a crash (kill -9, power loss) at any moment leaves either
// the previous file or the complete new one at `path`, never a torn one.
//
// How: the bytes go to `path`.tmp (created with mode 0600: checkpoints hold raw data), which is
// fsync'ed, renamed over `path` (atomic within one file system), and the directory is fsync'ed so
// that the rename itself survives a power loss. A crash before the rename can leave `path`.tmp
// behind; it is never read as a checkpoint and the next write replaces it.
//
// Used by ContinualSum::save_checkpoint and the tools' own checkpoints (dpstream-replay --checkpoint).
#pragma once

#include <string>

namespace dpstream::io {

// std::runtime_error "checkpoint PATH: what failed: strerror" on any failure (the temporary file is
// removed then; `path` is untouched).
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace dpstream::io
