// Atomic file replacement (why and how: dpstream/base/atomic_file.hpp).
#include "dpstream/base/atomic_file.hpp"

#include <memory>
#include <string>

#include "dpstream/base/staged_file.hpp"

namespace dpstream::base {

void write_file_atomically(const std::string& path, const std::string& bytes, mode_t mode) {
  StagedFile file(path, ExistingFile::replace, mode);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& path_and_bytes,
                            ExistingFile existing, mode_t mode) {
  std::vector<std::unique_ptr<StagedFile>> files;  // destroyed uncommitted on a throw: temporaries removed
  for (const auto& [path, bytes] : path_and_bytes) {
    files.push_back(std::make_unique<StagedFile>(path, existing, mode));
    files.back()->write(bytes.data(), bytes.size());
    files.back()->prepare();
  }
  for (auto& file : files) file->commit();
}

}  // namespace dpstream::base
