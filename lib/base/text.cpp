#include "dpstream/base/text.hpp"

#include <algorithm>
#include <cstdio>

namespace dpstream::base {

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xbf;  // the second byte's range (Unicode 15, table 3-7)
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;       // no overlong forms
    else if (lead == 0xed) high = 0x9f;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    else if (lead == 0xf4) high = 0x8f;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xbf) return 0;
  return length;
}

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char u) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    out += buf;
  };
  for (std::size_t at = 0; at < text.size();) {
    const auto u = static_cast<unsigned char>(text[at]);
    const std::size_t length = utf8_sequence_length(text, at);
    const bool c0 = u < 0x20 && !(keep_newlines && (u == '\n' || u == '\t'));
    const bool c1 = length == 2 && u == 0xc2 && static_cast<unsigned char>(text[at + 1]) < 0xa0;
    if (length == 0 || c0 || u == 0x7f || c1) {
      for (std::size_t i = 0; i < std::max<std::size_t>(length, 1); ++i) escape(static_cast<unsigned char>(text[at + i]));
      at += std::max<std::size_t>(length, 1);
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

std::string quote_input(std::string_view text, std::size_t max_bytes) {
  std::size_t cut = 0;  // the longest prefix of whole sequences (a malformed byte counts as one)
  while (cut < text.size()) {
    const std::size_t next = cut + std::max<std::size_t>(utf8_sequence_length(text, cut), 1);
    if (next > max_bytes) break;
    cut = next;
  }
  std::string s = "\"";  // appended, not "\"" + string: GCC 12 warns falsely (-Wrestrict) on that
  s += printable(text.substr(0, cut));
  s += cut < text.size() ? "\"..." : "\"";
  return s;
}

}  // namespace dpstream::base
