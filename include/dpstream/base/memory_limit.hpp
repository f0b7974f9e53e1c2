// What a component may allocate. A hostile or mistaken input (a CSV of 20,000 columns, an IDX
// header declaring d = 30,000) would otherwise end in std::bad_alloc after seconds at gigabytes:
// every component whose state grows as d² (ContinualSum over covariances and its noise,
// CovarianceAccumulator, the PCA methods' d × d matrices) calls require_memory with the bytes it is
// about to hold before it allocates them, and is refused — ResourceLimit naming what, the bytes and
// the limit — when they exceed the limit.
//
// The limit is process-wide (like Eigen's thread count): 80% of the machine's physical memory unless
// set_memory_limit says otherwise (the tools' --max-memory does). Estimates are of the component's
// own state, not of the rows a caller holds.
#pragma once

#include <cstdint>
#include <string>

namespace dpstream {

// 80% of physical memory (sysconf), or 4 GiB if the machine does not say.
std::uint64_t machine_memory_limit() noexcept;
// The limit in force: the last set_memory_limit(bytes > 0), else machine_memory_limit().
std::uint64_t memory_limit() noexcept;
// bytes = 0 restores the machine default. Thread-safe; applies to components constructed after it.
void set_memory_limit(std::uint64_t bytes) noexcept;

// ResourceLimit "WHAT needs about N GiB (B bytes), over the memory limit of M GiB" when bytes > the
// limit (a non-finite or negative estimate counts as over).
void require_memory(const std::string& what, double bytes);

// "1.50 GiB", "12.0 MiB", "512 bytes".
std::string bytes_text(double bytes);

}  // namespace dpstream
