// What a tool may allocate: a limit (--max-memory, default the library's: a share of the machine's memory) and the
// check that refuses a run, before it allocates, when what it needs is over the limit — naming the
// dimension, the bytes and the limit, instead of ending in std::bad_alloc seconds later at gigabytes.
#pragma once

#include <cstdint>
#include <string>

#include "common/cli_fwd.hpp"

#include "dpstream/base/memory_limit.hpp"  // bytes_text, machine_memory_limit

namespace dpstream::tools {

// "1.5G", "512M", "64k" or plain bytes (binary units), for --max-memory. UsageError otherwise.
std::uint64_t parse_bytes(const std::string& text, const std::string& flag);

// --max-memory SIZE into `text`. memory_limit() parses it (the machine's default when empty) and
// sets it as the library's limit too (dpstream/base/memory_limit.hpp), so that a component the tool builds
// refuses at the same limit.
void add_memory_option(CLI::App& app, std::string& text);
std::uint64_t memory_limit(const std::string& text);

// UsageError "WHAT needs about N (…), over the --max-memory limit of M" when bytes > limit.
void require_memory(const std::string& what, double bytes, std::uint64_t limit);

}  // namespace dpstream::tools
