// dpstream-privacy-demo: the privacy core end to end on a synthetic stream.
//
// Rows from a seeded low-rank-plus-noise source pass through RowGuard (clipped to ‖a‖ ≤ 1, counted),
// their covariance AᵀA is released once with Analyze Gauss Algorithm 1 under each calibration and
// noise shape, and the top-k subspace of each release is scored against the exact covariance (Theorem
// 3's deterministic bound 2k‖E‖₂ is printed beside the loss). The accountant then refuses a second
// release past its budget.
//
// Noise: the secure source unless --seed N is given; --seed N seeds the data (default 42) and the noise
// (N + 1): reproducible, NOT secure. --secure (kept for old command lines) forces the secure source,
// the seed then choosing the data only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/cli_fwd.hpp"

#include "common/cli.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::tools::privacy_demo {

struct DemoSettings {
  int dim = 30, rows = 20000, rank = 3, k = 3;
  PrivacyFlags privacy{0.5, 1e-6, "tight", std::nullopt};
  bool secure = false;  // --secure: the secure source even with --seed
  std::string max_memory;  // --max-memory (common/memory.hpp)

  std::uint64_t data_seed() const { return privacy.seed.value_or(42); }
  bool seeded_noise() const { return privacy.seed.has_value() && !secure; }
  // "seeded (seed N): reproducible, NOT secure" or "secure (libsodium ChaCha20, OS-keyed)".
  std::string noise_text() const;
};

void add_demo_options(CLI::App& app, DemoSettings& s);
// UsageError naming the flag.
void validate(const DemoSettings& s);

// One row of the table: a release under one calibration and noise shape, or its refusal.
struct ReleaseRow {
  std::string calibration, shape;
  bool refused = false;  // the paper calibration needs ε < 1
  double sigma = 0, e_norm = 0, captured = 0, loss = 0, bound = 0;
};

struct DemoReport {
  stream::RowGuardCounts counts;
  double opt = 0, trace = 0;
  std::vector<ReleaseRow> releases;
  privacy::Spent spent{};
  std::string refusal;  // the accountant's message for the second release
};

// Checks the settings and builds every mechanism (UsageError, exit 2: no noise drawn), then runs.
DemoReport run_demo(const DemoSettings& s);

std::string summary_text(const DemoSettings& s, const DemoReport& r);
std::string json_line(const DemoSettings& s, const DemoReport& r);

}  // namespace dpstream::tools::privacy_demo
