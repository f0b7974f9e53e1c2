// Text the tools print: printf-style formatting, and the one escaping every message, summary and
// JSON string goes through. Paths on Linux are bytes (a file name need not be UTF-8) and input files
// are hostile: what a tool prints is valid UTF-8 without control characters, whatever it quotes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dpstream::tools {

// printf-style formatting into a std::string, for the tools' summaries: sized to the text (never cut
// off, however long a path in it) and checked against its arguments by the compiler.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The length of the well-formed UTF-8 sequence starting at text[at] (1 to 4; overlong forms,
// surrogates and code points past U+10FFFF are not well formed), or 0 if there is none.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

// `text` as printable, valid UTF-8: every byte of a control character (C0, DEL and the 8-bit C1
// controls U+0080–U+009F, a terminal's escape sequences among them) and every byte that is not part
// of well-formed UTF-8 (a Latin-1 file name, gzip bytes) written as the four characters \xNN. With
// keep_newlines, '\n' and '\t' stay (a summary's lines). Idempotent: escaped text is kept as it is.
std::string printable(std::string_view text, bool keep_newlines = false);

}  // namespace dpstream::tools
