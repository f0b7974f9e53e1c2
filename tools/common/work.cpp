#include "common/work.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <Eigen/Core>

#include "common/cli.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::tools {

namespace {

double measure_flop_rate() {
  // 192 × 192 products (14 Mflop each), repeated for ≥ 20 ms: long enough for the clock, short
  // beside any run worth announcing. The best of three rounds, against a neighbour's burst.
  constexpr Eigen::Index n = 192;
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(n, n), b = Eigen::MatrixXd::Random(n, n);
  Eigen::MatrixXd c(n, n);
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    double flops = 0, seconds = 0;
    do {
      c.noalias() = a * b;
      flops += 2.0 * n * n * n;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (seconds < 0.007);
    best = std::max(best, flops / seconds + c(0, 0) * 0.0);
  }
  return best > 0 ? best : 1e9;
}

}  // namespace

double measured_flop_rate() {
  static const double rate = measure_flop_rate();
  return rate;
}

double estimated_seconds(double flops) { return flops / measured_flop_rate(); }

std::string duration_text(double seconds) {
  char buf[64];
  if (!std::isfinite(seconds)) return "longer than anyone can wait";
  if (seconds < 60) std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (seconds < 3600) std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else if (seconds < 2 * 86400) std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else if (seconds < 365 * 86400.0) std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
  else std::snprintf(buf, sizeof buf, "%.2g years", seconds / (365 * 86400.0));
  return buf;
}

void announce_work(const char* tool, const std::string& what, double flops) {
  const double seconds = estimated_seconds(flops);
  if (!(seconds > kAnnounceSeconds)) return;
  std::fflush(stdout);
  std::fprintf(stderr, "%s: estimated work: %s, ~%.2g flops: about %s at this machine's measured %.1f GFLOP/s (Ctrl-C stops it)\n",
               tool, printable(what).c_str(), flops, duration_text(seconds).c_str(), measured_flop_rate() / 1e9);
}

void require_at_most(const std::string& flag, double value, double cap, const std::string& why) {
  if (value <= cap) return;
  throw UsageError(flag + " must be at most " + base::format_value(cap) + ", got " + base::format_value(value) +
                   " (" + why + ")");
}

}  // namespace dpstream::tools
