// dpstream-pca: private PCA of a dataset by one of the library's private singular-vector methods,
// scored against the non-private top k of the same rows.
//
//   rows (pb/csv/idx) ─▶ normalise + RowGuard ─▶ method (gauss | power | oja | streaming-oja | pfp | rr) ─▶ V̂ (d × k)
//                                                                    exact AᵀA ─▶ V_k ─┘ scores
//
// The summary gives the captured variance tr(V̂ᵀAᵀAV̂)/Σ_{i≤k} λᵢ(AᵀA), the projector distance
// ‖V̂V̂ᵀ − V_kV_kᵀ‖₂ and the privacy actually charged (an accountant holding the target budget); the
// JSON line {method, k, epsilon, delta, captured_ratio, proj_dist, epsilon_spent, seconds, rows, dim,
// calibration, input, ..., budget}. The scores use the raw rows: they are evaluation, not a release.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/cli_fwd.hpp"
#include <Eigen/Core>

#include "common/cli.hpp"
#include "common/input.hpp"
#include "dpstream/pca/private_pca_method.hpp"
#include "common/unit_flags.hpp"
#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::tools::pca_tool {

struct PcaSettings {
  InputFlags input;
  NormalizeFlags normalize;
  PrivacyFlags privacy;
  std::string method = "gauss";
  Eigen::Index k = 10;
  // power: 5, the best of 2–20 on Fashion-MNIST (noisy_power_method.hpp); oja: Γ = 100 unless given.
  int iterations = 5;
  bool iterations_given = false;
  std::uint64_t limit = 0;  // 0: all rows (the generated stream: 20000)
  // streaming-oja: rows of the first minibatch, each next twice as many (0: derived, streaming_oja_plan.hpp).
  std::uint64_t batch = 0;
  double learning_rate = 0;  // streaming-oja: α of η_t = α/(C_t·(1 + t)), C_t the clip (0: the library's default)
  std::string max_memory;   // --max-memory ("": the default share of the machine's memory)
  UnitFlags unit;           // --user-column, --max-rows-per-user (gauss only; unit_flags.hpp)
};

// Registers every flag; returns a function to call after parsing (it records which flags were given).
std::function<void()> add_pca_options(CLI::App& app, PcaSettings& s);
// UsageError naming the flag for anything that can be checked before the input is opened.
void validate(const PcaSettings& s);

// The chosen method (the library's pca::PrivatePcaMethod) with its options checked by the library
// (InvalidParameter → UsageError naming the flags) when it is built, before any row is read or noise
// drawn.
class PcaMethod {
 public:
  PcaMethod(const PcaSettings& s, Eigen::Index dimension);
  // Every charge goes to `accountant`.
  pca::PrivateSubspace release(const Eigen::MatrixXd& rows, privacy::PrivacyAccountant& accountant) const;
  std::optional<pca::ResolvableGap> one_pass_reach(std::uint64_t rows) const { return method_.one_pass_reach(rows); }

 private:
  pca::PrivatePcaMethod method_;
};

// What a finished run reports.
struct PcaReport {
  std::string input_path, input_note;
  std::string input_integrity;  // "verified" or "none" (verify_input: checked before any noise is drawn)
  std::string non_row_lines;    // "lines not rows: …", or empty
  Eigen::Index dimension = 0;
  std::uint64_t rows = 0, skipped = 0;
  stream::RowGuardCounts guard;
  // Unit level: the bound's counts (not private) and its line for the summary; empty at row level.
  stream::ContributionBoundCounts bound;
  std::string unit_text;
  double captured = 0, opt = 0, captured_ratio = 0, proj_dist = 0;
  pca::PrivateSubspace released;  // the method's release (V̂, and its private values if any)
  privacy::Spent spent{};
  std::string budget;  // what release() was charged to, in its own words (privacy::Budget::describe)
  double method_seconds = 0, seconds = 0;
};

// Checks the input against the settings and builds the method (UsageError, exit 2: also when the rows
// a file declares would not fit in --max-memory), prints the "input:" line, reads every row through
// the guard and releases the subspace (an error there: exit 1, e.g. a file of undeclared length that
// outgrows --max-memory).
PcaReport run_pca(const PcaSettings& s, OpenedInput input);

std::string summary_text(const PcaSettings& s, const PcaReport& r);
std::string json_line(const PcaSettings& s, const PcaReport& r);

}  // namespace dpstream::tools::pca_tool
