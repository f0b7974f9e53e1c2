// The tools' JSON result line: one object on one line, as the last line of stdout, that a strict
// parser (RFC 8259; Python's json.loads) reads. Numbers are written in their shortest round-trip
// form; a value JSON cannot hold (NaN, ±Inf) is written as null, never as a bare token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dpstream::tools {

// A JSON string literal of printable(s) (common/text.hpp: control characters and bytes that are not
// UTF-8 as the text \xNN, so that the line is valid UTF-8), with `"` and `\` escaped.
std::string json_string(const std::string& s);
// A JSON number, or null for a value JSON cannot hold.
std::string json_number(double v);

class JsonLine {
 public:
  JsonLine& add(const std::string& key, double value);
  JsonLine& add(const std::string& key, std::uint64_t value);
  JsonLine& add(const std::string& key, std::int64_t value);
  JsonLine& add(const std::string& key, int value) { return add(key, static_cast<std::int64_t>(value)); }
  JsonLine& add(const std::string& key, bool value);
  JsonLine& add(const std::string& key, const std::string& value);
  JsonLine& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  JsonLine& add_null(const std::string& key);
  // Optional values: null when absent.
  JsonLine& add(const std::string& key, const std::optional<std::uint64_t>& value);
  JsonLine& add(const std::string& key, const std::optional<double>& value);
  JsonLine& add(const std::string& key, const std::optional<std::string>& value);
  // A value already in JSON text (a nested object built by another JsonLine's text()).
  JsonLine& add_raw(const std::string& key, const std::string& json);

  std::string text() const { return body_ + "}"; }

 private:
  JsonLine& field(const std::string& key, const std::string& json);
  std::string body_ = "{";
};

}  // namespace dpstream::tools
