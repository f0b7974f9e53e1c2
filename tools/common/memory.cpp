#include "common/memory.hpp"

#include <cmath>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "dpstream/base/memory_limit.hpp"

namespace dpstream::tools {

std::uint64_t parse_bytes(const std::string& text, const std::string& flag) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "k" || unit == "K" || unit == "KiB") scale = 1024.0;
  else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TiB") scale = 1024.0 * 1024 * 1024 * 1024;
  const double bytes = value * scale;
  if (used == 0 || scale == 0 || !(bytes >= 1) || bytes > 1.8e19)
    throw UsageError(flag + " '" + printable(text) + "': expected a size such as 512M, 8G or a number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

void add_memory_option(CLI::App& app, std::string& text) {
  app.add_option("--max-memory", text,
                 "refuse a run that needs more memory than SIZE (e.g. 512M, 8G), before allocating it (default: 80% "
                 "of the machine's memory)")
      ->type_name("SIZE");
}

std::uint64_t memory_limit(const std::string& text) {
  const std::uint64_t bytes = text.empty() ? machine_memory_limit() : parse_bytes(text, "--max-memory");
  set_memory_limit(bytes);  // the library's components refuse at the same limit
  return bytes;
}

void require_memory(const std::string& what, double bytes, std::uint64_t limit) {
  if (bytes <= static_cast<double>(limit)) return;
  throw UsageError(what + " needs about " + bytes_text(bytes) + ", over the memory limit of " +
                   bytes_text(static_cast<double>(limit)) + " (--max-memory)");
}

}  // namespace dpstream::tools
