// SparseSyntheticRows: an endless-looking stream of sparse, high-dimensional unit rows with a planted
// low-rank structure (text or click features in shape): the workload of StreamingPrivateOja at d where
// no d × d matrix fits (d = 100,000: a packed covariance alone is 40 GB).
//
// Model: r planted directions u_j, each supported on `topic_support` coordinates (scattered over
// [0, d), disjoint between directions), unit norm with Gaussian entries. A row picks j with
// probability shares[j], takes z·u_j (z ~ N(0, 1)), adds `noise_entries` uniformly placed entries
// of total variance noise_level², and is scaled to unit norm. Each row has at most topic_support +
// noise_entries non-zeros, and E[xxᵀ] ≈ Σ_j shares_j·c·u_j u_jᵀ + a diagonal of order
// noise_level²/(d·(1 + noise_level²)), c = E[z²/(z² + noise_level²)] — so the u_j, in the order of
// decreasing shares, are its top eigenvectors. Seeded (SeededNoiseSource): the same options give the
// same stream, which lets a second pass score an estimate.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::io {

struct SparseSyntheticRowsOptions {
  Eigen::Index dimension = 100000;                  // d ≥ shares.size()·topic_support
  std::vector<double> shares = {0.4, 0.3, 0.2, 0.1};  // probabilities of the directions, > 0, sum 1
  Eigen::Index topic_support = 40;                  // ≥ 1
  Eigen::Index noise_entries = 10;                  // ≥ 0
  double noise_level = 0.3;                         // ≥ 0
  std::uint64_t seed = 1;
};

class SparseSyntheticRows {
 public:
  // InvalidParameter naming the bad option.
  explicit SparseSyntheticRows(const SparseSyntheticRowsOptions& options = {});

  // The next row: strictly increasing indices and their values, ‖values‖ = 1 (to round-off ≤ 1).
  void next(Eigen::VectorXi& indices, Eigen::VectorXd& values);

  Eigen::Index dimension() const noexcept { return options_.dimension; }
  // u_j: its support (increasing) and values, for j in the order of `shares`.
  const std::vector<Eigen::VectorXi>& direction_indices() const noexcept { return support_; }
  const std::vector<Eigen::VectorXd>& direction_values() const noexcept { return values_; }

 private:
  SparseSyntheticRowsOptions options_;
  privacy::SeededNoiseSource noise_;
  std::vector<Eigen::VectorXi> support_;
  std::vector<Eigen::VectorXd> values_;
  std::vector<double> cumulative_;
  std::vector<std::pair<int, double>> scratch_;
};

}  // namespace dpstream::io
