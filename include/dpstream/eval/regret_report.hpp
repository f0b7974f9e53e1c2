// Regret reports: a RegretMeter's curve as CSV (for scripts) and as a self-contained SVG plot (for
// people).
//
// Both are evaluation output computed from the meter, i.e. from the exact Σ a aᵀ of the raw rows:
// OPT_t along the stream is a non-private statistic of the data. They are therefore written like
// other raw-data files of the library: mode 0600, atomically (io::write_file_atomically: a fresh
// temporary file in the same folder, fsync, rename), so a reader never sees a half-written report and
// a failed write leaves any older file in place. Every failure throws std::runtime_error naming the
// path and the system's reason.
//
// CSV: a header line `rows,opt,gain_<name>,regret_<name>,…` (learners in the meter's order), then
// one line per curve sample: rows seen, OPT of those rows, and each learner's cumulative gain and
// regret (OPT_t − gain_t). Numbers in the shortest form that reads back exactly.
//
// SVG (800 × 500, no external fonts, scripts or styles): cumulative regret against rows for every
// learner, the OPT curve as a dashed grey reference (gains are ≥ 0, so regret ≤ OPT: a learner that
// gained nothing would lie on it), axes with tick labels, a legend that gives each learner's final
// regret as a share of OPT, the title and the subtitle.
#pragma once

#include <string>
#include <vector>

#include "dpstream/eval/regret.hpp"

namespace dpstream::eval {

// The CSV text (header + one line per curve sample).
std::string regret_csv(const RegretMeter& meter);
void write_regret_csv(const RegretMeter& meter, const std::string& path);

// The SVG text. `labels` names the learners in the legend (the meter's names if empty; otherwise
// one per learner, else InvalidParameter). A meter without curve samples gives the axes and a note.
std::string regret_svg(const RegretMeter& meter, const std::string& title, const std::string& subtitle,
                       const std::vector<std::string>& labels = {});
void write_regret_svg(const RegretMeter& meter, const std::string& path, const std::string& title,
                      const std::string& subtitle, const std::vector<std::string>& labels = {});

}  // namespace dpstream::eval
