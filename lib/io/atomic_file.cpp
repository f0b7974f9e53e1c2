// Atomic file replacement (why and how: dpstream/io/atomic_file.hpp).
#include "dpstream/io/atomic_file.hpp"

#include <string>

#include "dpstream/io/staged_file.hpp"

namespace dpstream::io {

void write_file_atomically(const std::string& path, const std::string& bytes, mode_t mode) {
  StagedFile file(path, ExistingFile::replace, mode);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

}  // namespace dpstream::io
