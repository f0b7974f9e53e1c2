#include "common/json.hpp"

#include <cmath>
#include <cstdio>

#include "common/text.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::tools {

std::string json_string(const std::string& s) {
  // printable's escaping (the same \xNN a message shows) keeps the line valid UTF-8 for a value that
  // is not (a file name in Latin-1), and free of control characters.
  const std::string text = printable(s);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
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
