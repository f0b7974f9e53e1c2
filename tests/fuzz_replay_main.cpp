// Replays files through a libFuzzer target (fuzz/fuzz_*.cpp) without libFuzzer, so the seed corpus
// and the reproducers of past findings (fuzz/regressions/) run in the default suite with the normal
// compiler and, in the sanitizer build, under ASan + UBSan. Arguments: files or directories (every
// regular file in them, sorted). A finding aborts (trap, sanitizer report, escaped exception) and
// fails the test; the input that did it is named first on stderr.
//
// Memory: libFuzzer's -rss_limit_mb is gone here, so a regression that over-allocates is bounded
// another way: RLIMIT_AS (4 GiB) in a plain build, where an over-allocation then escapes as
// std::bad_alloc; ASAN_OPTIONS=max_allocation_size_mb in the sanitizer build (meson sets it).
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::string> inputs_of(const std::vector<std::string>& arguments) {
  std::vector<std::string> files;
  for (const std::string& argument : arguments) {
    if (std::filesystem::is_directory(argument)) {
      std::vector<std::string> in_dir;
      for (const auto& entry : std::filesystem::directory_iterator(argument))
        if (entry.is_regular_file()) in_dir.push_back(entry.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(argument);
    }
  }
  return files;
}

bool address_sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#endif
#endif
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  if (!address_sanitized()) {
    // ASan reserves terabytes of shadow address space, so the limit is for plain builds only.
    const rlim_t limit = rlim_t{4} << 30;
    struct rlimit as {limit, limit};
    if (::setrlimit(RLIMIT_AS, &as) != 0) std::perror("setrlimit(RLIMIT_AS)");
  }
  const std::vector<std::string> files = inputs_of({argv + 1, argv + argc});
  if (files.empty()) {
    std::fprintf(stderr, "no input files under the given paths\n");
    return 2;
  }
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", file.c_str());
      return 2;
    }
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("%zu inputs replayed without a finding\n", files.size());
  return 0;
}
