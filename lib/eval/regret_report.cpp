#include "dpstream/eval/regret_report.hpp"

#include <string>

#include "dpstream/base/atomic_file.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::eval {

using base::format_value;

std::string regret_csv(const RegretMeter& meter) {
  std::string out = "rows,opt";
  // Appended piece by piece (GCC 12 warns, falsely, about `"," + std::string` temporaries).
  for (const auto& name : meter.learners()) {
    out += ",gain_";
    out += name;
    out += ",regret_";
    out += name;
  }
  out += '\n';
  for (const RegretSample& s : meter.curve()) {
    out += std::to_string(s.rows);
    out += ',';
    out += format_value(s.opt);
    for (double g : s.gains) {
      out += ',';
      out += format_value(g);
      out += ',';
      out += format_value(s.opt - g);
    }
    out += '\n';
  }
  return out;
}

void write_regret_csv(const RegretMeter& meter, const std::string& path) {
  base::write_file_atomically(path, regret_csv(meter));  // 0600: OPT is a non-private statistic
}

}  // namespace dpstream::eval
