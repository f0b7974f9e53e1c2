// SyntheticRowSource: a seeded spiked-covariance stream, for replays and demos when no data set is
// installed, and for tests that need rows with a known low-rank structure.
//
// Row t (independent of every other row):
//
//   a_t = Σ_j √share_j · g_{t,j} · u_j  +  √(isotropic/d) · g_t,     g_{t,j} ~ N(0, 1), g_t ~ N(0, I_d)
//
// with r = shares.size() fixed orthonormal "spikes" u_1, …, u_r (the Q factor of a d × r Gaussian
// matrix drawn from the seed). So E[a aᵀ] = Σ_j share_j·u_j u_jᵀ + (isotropic/d)·I: the top
// eigenvectors are the spikes (eigenvalues share_j + isotropic/d), the rest is a flat bulk, and
// E‖a‖² = Σ share_j + isotropic (1 for the defaults). That is the setting online PCA is meant for
// — a few strong directions in isotropic noise — with a known answer: the best k-subspace is
// span(u_1..u_k) and OPT ≈ m·(Σ_{j≤k} share_j + k·isotropic/d) over m rows.
//
// Why a generator and not a file: the replay tool and the demo must run on a machine where the
// Fashion-MNIST package is not installed, and a test must be able to ask for any d and m.
//
// Randomness: every Gaussian comes from privacy::SeededNoiseSource (xoshiro256++, Ziggurat), so the
// stream is a pure function of (options, seed), identical on every platform. This is data, not
// noise: nothing here is private or secure.
//
// Defaults: d = 256, shares {0.3, 0.2, 0.1, 0.05, 0.05}, isotropic 0.3, 20000 rows, seed 1.
// declared_rows() returns the row count; format() is RowFormat::synthetic; path() describes the
// stream ("synthetic(d=256, rows=20000, seed=1)"). Cost: O(d·r) per row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/io/row_source.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::io {

struct SyntheticRowsOptions {
  Eigen::Index dimension = 256;                                // d ≥ 1
  std::uint64_t rows = 20000;                                  // m ≥ 1
  std::vector<double> shares = {0.3, 0.2, 0.1, 0.05, 0.05};    // spike variances, finite ≥ 0; at most d of them
  double isotropic = 0.3;                                      // total variance of the isotropic part, finite ≥ 0
  std::uint64_t seed = 1;
};

class SyntheticRowSource final : public RowSource {
 public:
  // InvalidParameter naming the bad option.
  explicit SyntheticRowSource(const SyntheticRowsOptions& options = {});

  Eigen::Index dimension() const override { return options_.dimension; }
  // Writes the next row into out.dense (dense, no id or timestamp; row_index counts from 0).
  bool next(RowRecord& out) override;
  std::optional<std::uint64_t> declared_rows() const override { return options_.rows; }
  RowFormat format() const override { return RowFormat::synthetic; }

  const SyntheticRowsOptions& options() const noexcept { return options_; }
  // The spikes u_j, d × r with orthonormal columns, in the order of `shares`.
  const Eigen::MatrixXd& spikes() const noexcept { return spikes_; }
  // E[a aᵀ] = Σ share_j u_j u_jᵀ + (isotropic/d)·I.
  Eigen::MatrixXd expected_covariance() const;

 private:
  SyntheticRowsOptions options_;
  privacy::SeededNoiseSource noise_;
  Eigen::MatrixXd spikes_;
  Eigen::VectorXd spike_scale_;  // √share_j
  Eigen::VectorXd coefficients_;  // scratch: √share_j·g_j for one row
};

}  // namespace dpstream::io
