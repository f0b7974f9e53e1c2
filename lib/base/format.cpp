#include "dpstream/base/format.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace dpstream::base {

std::string format_value(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), value);  // shortest round trip
  return std::string(buf.data(), res.ptr);
}

}  // namespace dpstream::base
