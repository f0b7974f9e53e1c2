// What dpstream-replay reports: DIR/regret.csv and DIR/regret.svg (the regret curves), the summary
// for a person, and the JSON line for scripts (the last line of stdout; its first keys are fixed:
// rows, dim, k, epsilon, delta, mechanism, block, opt, gain, regret, regret_over_opt,
// nonprivate_regret_over_opt, rows_clipped, rows_rejected, seconds; the top-level figures are those of
// the first online learner of --learner). Last: epsilon_spent (the accountant's) and `learners`, an
// object with each listed learner's regret_over_opt, captured_ratio and budget share (dpstream/session/row_learners.hpp).
//
// Every figure besides the private learner's subspaces is computed from raw rows (the meter, OPT,
// follow-the-leader): evaluation output, not a release.
#pragma once

#include <string>

#include "replay/run.hpp"

namespace dpstream::tools::replay {

struct ReportFiles {
  std::string csv, svg;
};

// Writes the curve's CSV and SVG into the run's --out folder.
ReportFiles write_report_files(const ReplayRun& run);
// The summary, as printed.
std::string summary_text(const ReplayRun& run, const ReportFiles& files);
// The JSON line (no newline).
std::string json_line(const ReplayRun& run, const ReportFiles& files);

// The strategy in words (ContinualNoise::describe, and what the learner follows).
std::string mechanism_text(const stream::ContinualCovariance& sum);

}  // namespace dpstream::tools::replay
