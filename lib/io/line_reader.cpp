#include "dpstream/io/line_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <unistd.h>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/memory_limit.hpp"

namespace dpstream::io {

namespace {
constexpr std::size_t kChunk = std::size_t{1} << 16;
constexpr std::uint64_t kCostPerByte = 16;  // the line and its fields' views (line_reader.hpp)
}  // namespace

std::size_t max_line_bytes() noexcept {
  return static_cast<std::size_t>(std::max<std::uint64_t>(memory_limit() / kCostPerByte, kChunk));
}

void refuse_long_line(const std::string& what, std::uint64_t line_number, std::size_t max_bytes) {
  throw CorruptInput(what + ": line " + std::to_string(line_number) + " is longer than " +
                     bytes_text(static_cast<double>(max_bytes)) + " (" + std::to_string(max_bytes) +
                     " bytes), the longest line the memory limit of " + bytes_text(static_cast<double>(memory_limit())) +
                     " allows (a line costs up to " + std::to_string(kCostPerByte) +
                     " times its length; --max-memory raises it): is it a text file with line breaks?");
}

std::string_view without_byte_order_mark(std::string_view first_line, const std::string& what) {
  if (first_line.starts_with("\xEF\xBB\xBF")) return first_line.substr(3);
  if (first_line.starts_with("\xFF\xFE") || first_line.starts_with("\xFE\xFF"))
    throw CorruptInput(what + ": starts with a UTF-16 byte-order mark; the reader takes UTF-8 or ASCII text "
                              "(convert it, e.g. iconv -f UTF-16 -t UTF-8)");
  return first_line;
}

LineReader::LineReader(std::FILE* file, std::string what)
    : file_(file), what_(std::move(what)), max_bytes_(max_line_bytes()), buffer_(kChunk) {}

bool LineReader::fill() {
  if (at_end_) return false;
  if (begin_ > 0) {  // move the unfinished line to the front
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) {
    // The line (with its '\n') may take max_bytes_ + 1 bytes; the buffer grows up to that, no further.
    if (buffer_.size() > max_bytes_) refuse_long_line(what_, line_number_ + 1, max_bytes_);
    buffer_.resize(std::min(2 * buffer_.size(), max_bytes_ + 1));
  }
  // read(2), not fread: a pipe's first line is returned when it arrives, not once 64 KiB have.
  ssize_t n = 0;
  do n = ::read(::fileno(file_), buffer_.data() + end_, buffer_.size() - end_);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    throw CorruptInput(what_ + ": read error after line " + std::to_string(line_number_) + ": " + std::strerror(errno));
  end_ += static_cast<std::size_t>(n);
  if (n == 0) at_end_ = true;
  return n > 0;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = begin_;  // bytes of the current line already searched for '\n'
  for (;;) {
    const char* data = buffer_.data();
    const void* newline = std::memchr(data + scanned, '\n', end_ - scanned);
    if (newline != nullptr) {
      const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(newline) - data);
      if (at - begin_ > max_bytes_) refuse_long_line(what_, line_number_ + 1, max_bytes_);
      line = std::string_view(data + begin_, at - begin_);
      begin_ = at + 1;
      if (++line_number_ == 1) line = without_byte_order_mark(line, what_);
      return true;
    }
    const std::size_t searched = end_ - begin_;
    if (searched > max_bytes_) refuse_long_line(what_, line_number_ + 1, max_bytes_);
    if (!fill()) {
      if (begin_ == end_) return false;
      line = std::string_view(buffer_.data() + begin_, end_ - begin_);  // the last line, without '\n'
      begin_ = end_;
      if (++line_number_ == 1) line = without_byte_order_mark(line, what_);
      return true;
    }
    scanned = begin_ + searched;  // fill() moved the line to the front
  }
}

}  // namespace dpstream::io
