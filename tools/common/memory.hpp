// What a tool may allocate: a limit (--max-memory, default a share of the machine's memory) and the
// check that refuses a run, before it allocates, when what it needs is over the limit — naming the
// dimension, the bytes and the limit, instead of ending in std::bad_alloc seconds later at gigabytes.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace dpstream::tools {

// Physical memory × 0.8 (sysconf), or 4 GiB if the machine does not say.
std::uint64_t default_memory_limit();

// "1.5G", "512M", "64k" or plain bytes (binary units), for --max-memory. UsageError otherwise.
std::uint64_t parse_bytes(const std::string& text, const std::string& flag);
// "1.50 GiB", "12.0 MiB", "512 bytes".
std::string bytes_text(double bytes);

// --max-memory SIZE into `text` (parsed by memory_limit()).
void add_memory_option(CLI::App& app, std::string& text);
std::uint64_t memory_limit(const std::string& text);

// UsageError "WHAT needs about N (…), over the --max-memory limit of M" when bytes > limit.
void require_memory(const std::string& what, double bytes, std::uint64_t limit);

}  // namespace dpstream::tools
