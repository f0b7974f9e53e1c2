// Shared helpers of the libFuzzer targets (fuzz/fuzz_*.cpp; run them with scripts/fuzz.sh).
//
// The file-based readers take a path, so each input is written to a file in a per-process scratch
// directory under /dev/shm (tmpfs: no disk I/O per execution), removed when the process exits.
//
// Policy of every target: the only exceptions caught are the ones the API under test documents for
// bad input (dpstream::CorruptInput for all parsers). Anything else escaping — another exception
// type, a crash, a sanitizer report, an out-of-memory — reaches libFuzzer and is a finding. A broken
// round-trip property calls fuzz_fail(), which prints why and traps.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace dpstream_fuzz {

[[noreturn]] inline void fuzz_fail(const char* what) {
  std::fprintf(stderr, "FUZZ PROPERTY VIOLATED: %s\n", what);
  std::fflush(stderr);
  __builtin_trap();
}

#define FUZZ_CHECK(cond)                                                                          \
  do {                                                                                            \
    if (!(cond)) ::dpstream_fuzz::fuzz_fail(#cond " (" __FILE__ ":" FUZZ_STRINGIFY(__LINE__) ")"); \
  } while (0)
#define FUZZ_STRINGIFY(x) FUZZ_STRINGIFY2(x)
#define FUZZ_STRINGIFY2(x) #x

// The per-process scratch directory (created on first use, removed at exit).
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = std::getenv("DPSTREAM_FUZZ_TMP");
    std::string pattern = std::string(base && *base ? base : "/dev/shm") + "/dpstream-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    static std::string keep;
    keep = pattern;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(keep, ignored);
    });
    return pattern;
  }();
  return dir;
}

// Writes `size` bytes to scratch_dir()/name (created or truncated) and returns the path.
inline std::string write_scratch(const char* name, const std::uint8_t* data, std::size_t size) {
  std::string path = scratch_dir() + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror("open scratch file");
    std::abort();
  }
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) {
      std::perror("write scratch file");
      std::abort();
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return path;
}

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace dpstream_fuzz
