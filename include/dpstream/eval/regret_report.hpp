// Regret reports: a RegretMeter's curve as CSV, for scripts. (The SVG plot for people is the tools'
// business, tools/common/regret_plot.hpp: a DP library does not draw.)
//
// It is evaluation output computed from the meter, i.e. from the exact Σ a aᵀ of the raw rows:
// OPT_t along the stream is a non-private statistic of the data. It is therefore written like
// other raw-data files of the library: mode 0600, atomically (base::write_file_atomically: a fresh
// temporary file in the same folder, fsync, rename), so a reader never sees a half-written report and
// a failed write leaves any older file in place. Every failure throws std::runtime_error naming the
// path and the system's reason.
//
// CSV: a header line `rows,opt,gain_<name>,regret_<name>,…` (learners in the meter's order), then
// one line per curve sample: rows seen, OPT of those rows, and each learner's cumulative gain and
// regret (OPT_t − gain_t). Numbers in the shortest form that reads back exactly.
#pragma once

#include <string>

#include "dpstream/eval/regret.hpp"

namespace dpstream::eval {

// The CSV text (header + one line per curve sample).
std::string regret_csv(const RegretMeter& meter);
void write_regret_csv(const RegretMeter& meter, const std::string& path);

}  // namespace dpstream::eval
