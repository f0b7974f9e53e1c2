// Reductions whose bits do not depend on where the values sit in memory. Applied to data it can
// address (a Map, a Ref, a block, a sparse matrix's values), Eigen's sum(), mean(), prod(), redux(),
// colwise().sum() and stableNorm() start their packets at the first address aligned to the packet
// size and add the entries before it one by one: the same values at another address are added in
// another order and can differ in the last bit. (Reductions of an expression, such as squaredNorm(),
// norm(), dot() or cwiseAbs().sum(), read from the first entry in unaligned packets and do not.)
// Memory Eigen did not allocate can start anywhere; a VectorXd starts where its allocator aligns it.
// reduce_as_aligned gives, wherever the values are, the result for them held in a VectorXd: reduced
// in place when they start at such an address, else on an aligned copy. So callers that pass their
// own VectorXd get the same bits as before, and no copy.
#pragma once

#include <cstdint>

#include <Eigen/Core>

namespace dpstream::linalg {

// Whether `data` starts where Eigen's allocator puts a VectorXd's first entry.
inline bool has_eigen_alignment(const double* data) noexcept {
  constexpr std::uintptr_t alignment = EIGEN_DEFAULT_ALIGN_BYTES;  // 0 when Eigen does not align
  return alignment == 0 || reinterpret_cast<std::uintptr_t>(data) % alignment == 0;
}

// reduce(v) on the n contiguous values at `data`, as if they were held in a VectorXd.
template <class Reduce>
double reduce_as_aligned(const double* data, Eigen::Index n, Reduce reduce) {
  if (has_eigen_alignment(data)) return reduce(Eigen::Map<const Eigen::VectorXd, Eigen::AlignedMax>(data, n));
  const Eigen::VectorXd copy = Eigen::Map<const Eigen::VectorXd>(data, n);
  return reduce(copy);
}

// Σ data[i], i < n, as a VectorXd's sum().
inline double aligned_sum(const double* data, Eigen::Index n) {
  return reduce_as_aligned(data, n, [](const auto& v) { return v.sum(); });
}
inline double aligned_sum(const Eigen::Ref<const Eigen::VectorXd>& v) { return aligned_sum(v.data(), v.size()); }

}  // namespace dpstream::linalg
