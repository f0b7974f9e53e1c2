// Reading rows for the tools: a row buffer that can hold a whole dataset, and a reader that passes
// every row through normalisation and RowGuard, counting what it clips, rejects or skips
// (dpstream-replay, dpstream-pca).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <Eigen/Core>

#include "dpstream/errors.hpp"
#include "dpstream/io/row_source.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::tools {

using Eigen::Index;
using Eigen::VectorXd;

// Rows as read, after normalisation and RowGuard, row-major (one row = d contiguous doubles).
// The storage is an anonymous mapping with transparent huge pages requested: a shuffled replay
// holds every row (Fashion-MNIST: 376 MB), and filling that through 4 KiB page faults cost about
// a second on the 2-core VM this was measured on; 2 MiB pages need ~190 faults. The kernel
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

  // Room for at least `rows` rows (growing keeps the rows held).
  void reserve(std::uint64_t rows) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t want = std::max<std::size_t>(1, rows * static_cast<std::size_t>(d_) * sizeof(double));
    if (want <= bytes_) return;
    join_prefault();  // the mapping may move
    const std::size_t bytes = (std::max(want, bytes_ * 2) + kHuge - 1) / kHuge * kHuge;
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
  std::thread prefault_;
};

// Reads rows through normalisation and the guard, counting everything that does not get through.
// Errors name the file and the row (and line); with skip_malformed they are counted instead.
struct ReadOptions {
  std::string normalize = "unit";  // unit: a/‖a‖; clip: scale rows over clip_norm down; none: reject over clip_norm
  double clip_norm = 1.0;
  bool skip_malformed = false;     // count and skip reader errors and guard rejections instead of throwing
  std::uint64_t limit = 0;         // use the first N valid rows (0: all)
  bool nonnegative = false;        // the guard refuses a row with a negative entry (RowGuardOptions)
};

class GuardedReader {
 public:
  GuardedReader(io::RowSource& source, const ReadOptions& o)
      : source_(source),
        normalize_(o.normalize),
        guard_({source.dimension(),
                o.normalize == "unit" ? 1.0 : o.clip_norm,
                o.normalize == "none" ? stream::OverNormPolicy::reject : stream::OverNormPolicy::clip,
                o.nonnegative}),
        skip_(o.skip_malformed),
        limit_(o.limit) {}

  // Appends up to `max_rows` admitted rows to `buf` (growing it); returns false once the input (or
  // --limit) is exhausted.
  bool fill(RowBuffer& buf, std::uint64_t max_rows, const std::function<void(std::uint64_t)>& on_progress = {}) {
    const Index d = source_.dimension();
    std::uint64_t added = 0;
    while (added < max_rows) {
      if (limit_ != 0 && used_ == limit_) return false;
      if (!source_.next(record_)) return false;  // CorruptInput propagates (names file and row)
      // Normalised and checked in the reader's own VectorXd, not in the buffer: Eigen's vectorised
      // norm depends on the data's alignment by an ulp, and ContinualSum re-checks ‖a‖ ≤ L on an
      // aligned copy (Eigen's heap alignment, like this vector's). Checked at another alignment, a
      // row at L to the last ulp could pass the guard and then be refused by the stream.
      VectorXd& row = record_.dense;
      // unit: a ← a/‖a‖ (a zero row stays zero and is counted). A row with a NaN or ±Inf is left
      // as read, so that the guard's message names the offending column.
      if (normalize_ == "unit" && row.allFinite()) {
        // norm() is ~3x faster than stableNorm(); it can only under- or overflow for entries
        // beyond ~1e±154, and then the scaled stableNorm() decides.
        double norm = row.norm();
        if (!(norm > 0 && norm < std::numeric_limits<double>::infinity())) norm = row.stableNorm();
        if (norm > 0) row /= norm;
        else ++zero_;
      }
      try {
        // unit: clip at L = 1 (the division can leave ‖a‖ = 1 + 1 ulp); clip: clip at L;
        // none: reject over L.
        guard_.admit(row);
      } catch (const InvalidRow& e) {
        std::string what = e.what();  // "row N: …" with N the guard's count; name the file's row instead
        const auto colon = what.find(": ");
        if (colon != std::string::npos) what = what.substr(colon + 2);
        std::string where = source_.path() + ": row " + std::to_string(record_.row_index);
        if (record_.line != 0) where += " (line " + std::to_string(record_.line) + ")";
        if (!skip_) throw std::runtime_error(where + ": " + what + " (--skip-malformed counts and skips such rows)");
        if (first_reject_.empty()) first_reject_ = where + ": " + what;
        continue;
      }
      buf.reserve(buf.rows + 1);
      Eigen::Map<VectorXd>(buf.row(buf.rows), d) = row;
      ++buf.rows;
      ++added;
      ++used_;
      if (on_progress && (used_ & 1023) == 0) on_progress(used_);
    }
    return true;
  }

  std::uint64_t used() const { return used_; }
  std::uint64_t zero() const { return zero_; }
  const stream::RowGuardCounts& guard_counts() const { return guard_.counts(); }
  const std::string& first_reject() const { return first_reject_; }

 private:
  io::RowSource& source_;
  std::string normalize_;
  stream::RowGuard guard_;
  bool skip_;
  std::uint64_t limit_;
  io::RowRecord record_;
  std::uint64_t used_ = 0, zero_ = 0;
  std::string first_reject_;
};

}  // namespace dpstream::tools
