// The regret curves of a RegretMeter as a self-contained SVG plot, for people (dpstream-replay's
// DIR/regret.svg). The library writes the curve's numbers (eval/regret_report.hpp); drawing them is
// the tools' business.
//
// 800 × 500, no external fonts, scripts or styles: cumulative regret against rows for every learner,
// the OPT curve as a dashed grey reference (gains are ≥ 0, so regret ≤ OPT: a learner that gained
// nothing would lie on it), axes with tick labels, a legend that gives each learner's final regret
// as a share of OPT, the title and the subtitle (XML-escaped). Evaluation output from raw rows, so
// written like the CSV: mode 0600, atomically.
#pragma once

#include <string>
#include <vector>

#include "dpstream/eval/regret.hpp"

namespace dpstream::tools {

// The SVG text. `labels` names the learners in the legend (the meter's names if empty; otherwise
// one per learner, else InvalidParameter). A meter without curve samples gives the axes and a note.
std::string regret_svg(const eval::RegretMeter& meter, const std::string& title, const std::string& subtitle,
                       const std::vector<std::string>& labels = {});
// std::runtime_error naming the path if it cannot be written.
void write_regret_svg(const eval::RegretMeter& meter, const std::string& path, const std::string& title,
                      const std::string& subtitle, const std::vector<std::string>& labels = {});

}  // namespace dpstream::tools
