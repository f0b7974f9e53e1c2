// The process-wide memory limit (why: dpstream/base/memory_limit.hpp).
#include "dpstream/base/memory_limit.hpp"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>

#include "dpstream/base/errors.hpp"

namespace dpstream {

namespace {
std::atomic<std::uint64_t> configured_limit{0};  // 0: the machine's default
}  // namespace

std::uint64_t machine_memory_limit() noexcept {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{4} << 30;
  return static_cast<std::uint64_t>(0.8 * static_cast<double>(pages) * static_cast<double>(page));
}

std::uint64_t memory_limit() noexcept {
  const std::uint64_t set = configured_limit.load(std::memory_order_relaxed);
  return set != 0 ? set : machine_memory_limit();
}

void set_memory_limit(std::uint64_t bytes) noexcept { configured_limit.store(bytes, std::memory_order_relaxed); }

std::string bytes_text(double bytes) {
  char buf[48];
  if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  else if (bytes >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024));
  else std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  return buf;
}

void require_memory(const std::string& what, double bytes) {
  const std::uint64_t limit = memory_limit();
  if (std::isfinite(bytes) && bytes >= 0 && bytes <= static_cast<double>(limit)) return;
  throw ResourceLimit(what + " needs about " + bytes_text(bytes) + ", over the memory limit of " +
                      bytes_text(static_cast<double>(limit)));
}

}  // namespace dpstream
