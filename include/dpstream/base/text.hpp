// How dpstream puts text it did not write (a field of an input file, a file name) into a message.
// Input files are hostile and paths on Linux are bytes: what the library and the tools quote is valid
// UTF-8 without control characters, and a NUL byte cannot cut a message short (an exception's what()
// is a C string).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dpstream::base {

// The length of the well-formed UTF-8 sequence starting at text[at] (1 to 4; overlong forms,
// surrogates and code points past U+10FFFF are not well formed), or 0 if there is none.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

// `text` as printable, valid UTF-8: every byte of a control character (C0, NUL among them, DEL and
// the 8-bit C1 controls U+0080–U+009F, a terminal's escape sequences among them) and every byte that
// is not part of well-formed UTF-8 (a Latin-1 file name, gzip bytes) written as the four characters
// \xNN. With keep_newlines, '\n' and '\t' stay (a summary's lines). Idempotent: escaped text is kept
// as it is.
std::string printable(std::string_view text, bool keep_newlines = false);

// A field of an input quoted for an error message: "text", printable, its first `max_bytes` bytes
// (cut before a UTF-8 sequence, never inside one) and "..." after the quote when it was longer, so
// that a runaway field (a binary file read as text) leaves the message readable.
std::string quote_input(std::string_view text, std::size_t max_bytes = 40);

}  // namespace dpstream::base
