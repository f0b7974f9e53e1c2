// Text the tools print: printf-style formatting, and the one escaping every message, summary and
// JSON string goes through. Paths on Linux are bytes (a file name need not be UTF-8) and input files
// are hostile: what a tool prints is valid UTF-8 without control characters, whatever it quotes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "dpstream/base/text.hpp"

namespace dpstream::tools {

// printf-style formatting into a std::string, for the tools' summaries: sized to the text (never cut
// off, however long a path in it) and checked against its arguments by the compiler.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The library's escaping (dpstream/base/text.hpp), which every message, summary and JSON string of
// the tools goes through.
using base::printable;
using base::utf8_sequence_length;

}  // namespace dpstream::tools
