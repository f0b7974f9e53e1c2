// Pieces the tools' SVG plots share (common/regret_plot.cpp, recommend/online_plot.cpp).
#pragma once

#include <string>

namespace dpstream::tools {

// Text for an SVG text node or attribute: &, <, > and " escaped; control characters (not allowed in
// XML 1.0 text) become spaces, which keep the layout.
std::string xml_escape(const std::string& s);

// A "nice" tick step (1, 2 or 5 × 10^n) giving about `target` intervals over `span` (1 if span ≤ 0).
double nice_step(double span, int target);

}  // namespace dpstream::tools
