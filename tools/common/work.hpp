// How long a run will take, said before it starts: every tool estimates the floating-point work of
// its run from the sizes and flags (a count of flops: a d × d eigendecomposition ~10 d³, a pass of a
// d × d update over n rows n d², ...), converts it to seconds at this machine's rate — measured once
// per process on a small matrix product, so the estimate follows the machine, not a constant — and
// prints the estimate on stderr when it is over a few seconds. The estimate is for orientation
// (within a factor of a few), not a promise.
//
// What no one can mean is refused instead (require_at_most): iteration counts past where more only
// add noise or time, named with their flag and cap, exit 2 before anything is read.
#pragma once

#include <string>

namespace dpstream::tools {

// Floating-point operations per second of this machine on a dense matrix product (Eigen, the
// threads the tools use), measured on first use (~10 ms).
double measured_flop_rate();

// Seconds that `flops` take at measured_flop_rate().
double estimated_seconds(double flops);

// "1.5 s", "12 min", "3.2 h", "4.0 days".
std::string duration_text(double seconds);

// When `flops` take over kAnnounceSeconds, prints "TOOL: estimated work: WHAT, ~N flops: about T at the
// measured R GFLOP/s" on stderr (before the run, so that a user can stop it at once).
inline constexpr double kAnnounceSeconds = 10.0;
void announce_work(const char* tool, const std::string& what, double flops);

// UsageError "FLAG must be at most CAP, got VALUE (WHY)" when value > cap.
void require_at_most(const std::string& flag, double value, double cap, const std::string& why);

}  // namespace dpstream::tools
