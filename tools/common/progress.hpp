// A progress line on stderr, only when stderr is a terminal, redrawn at most 10 times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace dpstream::tools {

class Progress {
 public:
  // `total`: the rows expected, when known (a bar is drawn), else a count.
  explicit Progress(std::optional<std::uint64_t> total);
  void update(const char* phase, std::uint64_t rows, bool force = false);
  // Erases the line (before a message, or at the end).
  void clear();

 private:
  using Clock = std::chrono::steady_clock;
  bool on_;
  std::optional<std::uint64_t> total_;
  Clock::time_point start_ = Clock::now(), last_{};
  bool drawn_ = false;
};

// Seconds since `t`, on the steady clock.
double seconds_since(std::chrono::steady_clock::time_point t);

}  // namespace dpstream::tools
