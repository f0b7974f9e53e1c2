// Rows held in memory for the tools, row-major (one row = d contiguous doubles).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <Eigen/Core>

#include "common/memory.hpp"

namespace dpstream::tools {

using Eigen::Index;

// Rows as read, after normalisation and RowGuard.
// The storage is an anonymous mapping with transparent huge pages requested: a shuffled replay
// holds every row (Fashion-MNIST: 376 MB), and filling that through ~92,000 4 KiB page faults is
// slow where faults are dear (virtual machines); 2 MiB pages need ~190. The kernel
// zero-fills lazily, so growing costs no memset either.
class RowBuffer {
 public:
  explicit RowBuffer(Index d) : d_(d) {}
  ~RowBuffer() {
    join_prefault();
    if (data_) ::munmap(data_, bytes_);
  }
  RowBuffer(const RowBuffer&) = delete;
  RowBuffer& operator=(const RowBuffer&) = delete;

  // At most this many bytes of rows: a reserve() past it throws std::length_error naming the rows,
  // the bytes and the limit (a shuffled replay of a stream that does not say its length).
  void limit_bytes(std::size_t max_bytes) { max_bytes_ = max_bytes; }

  // Room for at least `rows` rows (growing keeps the rows held).
  void reserve(std::uint64_t rows) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t want = std::max<std::size_t>(1, rows * static_cast<std::size_t>(d_) * sizeof(double));
    if (want <= bytes_) return;
    if (want > max_bytes_)
      throw std::length_error("holding " + std::to_string(rows) + " rows of dimension " + std::to_string(d_) +
                              " needs " + bytes_text(static_cast<double>(want)) + ", over the memory limit of " +
                              bytes_text(static_cast<double>(max_bytes_)) + " (--max-memory)");
    join_prefault();  // the mapping may move
    std::size_t bytes = (std::max(want, bytes_ * 2) + kHuge - 1) / kHuge * kHuge;
    if (bytes > max_bytes_) bytes = (want + 4095) / 4096 * 4096;  // doubling would pass the limit: just enough
    void* p = data_ ? ::mremap(data_, bytes_, bytes, MREMAP_MAYMOVE)
                    : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advisory: without THP it is 4 KiB pages, still correct
    data_ = static_cast<double*>(p);
    bytes_ = bytes;
  }
  // Faults in the reserved room on another thread, ahead of the rows being written, so that the
  // kernel's page zeroing (~0.5 s for Fashion-MNIST here) runs beside the reading instead of in it.
  // MADV_POPULATE_WRITE maps pages writable without touching their contents: a page the reader has
  // already written keeps its rows. Advisory: a kernel without it (< 5.14) leaves the faults to the
  // reader, as before.
  void prefault_async() {
    join_prefault();
    if (data_) prefault_ = std::thread([p = data_, n = bytes_] { ::madvise(p, n, MADV_POPULATE_WRITE); });
  }
  double* row(std::uint64_t i) { return data_ + i * static_cast<std::uint64_t>(d_); }
  const double* row(std::uint64_t i) const { return data_ + i * static_cast<std::uint64_t>(d_); }
  Index dimension() const { return d_; }

  std::uint64_t rows = 0;  // rows held

 private:
  void join_prefault() {
    if (prefault_.joinable()) prefault_.join();
  }

  Index d_;
  double* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t max_bytes_ = SIZE_MAX;
  std::thread prefault_;
};

}  // namespace dpstream::tools
