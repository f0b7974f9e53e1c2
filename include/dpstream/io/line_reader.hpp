// Reading text one line at a time with a bound on the line's length: the text readers (CSV rows,
// ratings, item catalogues) hold a line whole, and a file without line breaks (/dev/zero, a binary
// file read as CSV) would otherwise grow that buffer until the machine's memory runs out, whatever
// the memory limit (dpstream/base/memory_limit.hpp) says.
//
// The longest line a reader accepts is a share of the memory limit, max_line_bytes(): a line is
// held once and split into fields, whose views cost up to 8 times its length again (16 bytes per
// field of 2 bytes), so 1/16 of the limit keeps a line's cost within it. A longer line is refused —
// CorruptInput naming the file, the line, the bound and the limit — before more is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace dpstream::io {

// memory_limit() / 16 (see above), at least 64 KiB.
std::size_t max_line_bytes() noexcept;

// CorruptInput "WHAT: line N is longer than B (the longest line the memory limit of L allows: ...)".
[[noreturn]] void refuse_long_line(const std::string& what, std::uint64_t line_number, std::size_t max_bytes);

// A text's first bytes: UTF-8's byte-order mark (Excel's "CSV UTF-8", PowerShell) is dropped;
// UTF-16's is refused, CorruptInput naming `what`: the readers take UTF-8 or ASCII text.
std::string_view without_byte_order_mark(std::string_view first_line, const std::string& what);

// Lines of a FILE* (not owned; read through its descriptor, which nothing else may read), without
// their '\n', the first without a byte-order mark (without_byte_order_mark). Reads in chunks;
// max_line_bytes() is read when it is constructed.
class LineReader {
 public:
  // `what` names the file in errors ("csv data.csv").
  LineReader(std::FILE* file, std::string what);

  // The next line (valid until the next call) into `line`; false at the end of the file. CorruptInput
  // for a read error or a line longer than the bound.
  bool next(std::string_view& line);
  std::uint64_t line_number() const noexcept { return line_number_; }

 private:
  bool fill();  // reads more bytes after end_; false at the end of the file

  std::FILE* file_;
  std::string what_;
  std::size_t max_bytes_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;  // the unread bytes
  bool at_end_ = false;
  std::uint64_t line_number_ = 0;
};

}  // namespace dpstream::io
