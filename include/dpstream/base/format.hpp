// How dpstream prints a received number in an error message or a summary. Below every layer: the
// privacy, stream, pca, completion, eval and io code and the tools all print values this way, so a
// value quoted in an error reads back as exactly the value that was refused.
#pragma once

#include <string>

namespace dpstream::base {

// The shortest decimal text that reads back as exactly `value` ("0.1", "-1", "1e-06", "inf", "nan"):
// the form every dpstream error message uses for a received value.
std::string format_value(double value);

}  // namespace dpstream::base
