// printf-style formatting into a std::string, for the tools' summaries: sized to the text (never cut
// off, however long a path in it) and checked against its arguments by the compiler.
#pragma once

#include <string>

namespace dpstream::tools {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace dpstream::tools
