#include "common/json.hpp"

#include <cmath>
#include <cstdio>

#include "dpstream/base/format.hpp"

namespace dpstream::tools {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? base::format_value(v) : "null"; }

JsonLine& JsonLine::field(const std::string& key, const std::string& json) {
  if (body_.size() > 1) body_ += ',';
  body_ += json_string(key);
  body_ += ':';
  body_ += json;
  return *this;
}

JsonLine& JsonLine::add(const std::string& key, double value) { return field(key, json_number(value)); }
JsonLine& JsonLine::add(const std::string& key, std::uint64_t value) { return field(key, std::to_string(value)); }
JsonLine& JsonLine::add(const std::string& key, std::int64_t value) { return field(key, std::to_string(value)); }
JsonLine& JsonLine::add(const std::string& key, bool value) { return field(key, value ? "true" : "false"); }
JsonLine& JsonLine::add(const std::string& key, const std::string& value) { return field(key, json_string(value)); }
JsonLine& JsonLine::add_null(const std::string& key) { return field(key, "null"); }
JsonLine& JsonLine::add(const std::string& key, const std::optional<std::uint64_t>& value) {
  return value ? add(key, *value) : add_null(key);
}
JsonLine& JsonLine::add(const std::string& key, const std::optional<double>& value) {
  return value ? add(key, *value) : add_null(key);
}
JsonLine& JsonLine::add(const std::string& key, const std::optional<std::string>& value) {
  return value ? add(key, *value) : add_null(key);
}
JsonLine& JsonLine::add_raw(const std::string& key, const std::string& json) { return field(key, json); }

}  // namespace dpstream::tools
