#include "common/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace dpstream::tools {

Progress::Progress(std::optional<std::uint64_t> total) : on_(::isatty(STDERR_FILENO) == 1), total_(total) {}

void Progress::update(const char* phase, std::uint64_t rows, bool force) {
  if (!on_) return;
  const auto now = Clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  char line[160];
  if (total_ && *total_ > 0) {
    const double f = std::min(1.0, static_cast<double>(rows) / static_cast<double>(*total_));
    char bar[31];
    const int filled = static_cast<int>(f * 30);
    for (int i = 0; i < 30; ++i) bar[i] = i < filled ? '#' : '.';
    bar[30] = 0;
    std::snprintf(line, sizeof line, "\r%-8s [%s] %3.0f%% %llu/%llu rows  %.1f s", phase, bar, 100 * f,
                  (unsigned long long)rows, (unsigned long long)*total_, elapsed);
  } else {
    std::snprintf(line, sizeof line, "\r%-8s %llu rows  %.1f s", phase, (unsigned long long)rows, elapsed);
  }
  std::fputs(line, stderr);
  std::fputs("\033[K", stderr);  // erase what a longer previous line left
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (on_ && drawn_) std::fputs("\r\033[K", stderr);
  drawn_ = false;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace dpstream::tools
