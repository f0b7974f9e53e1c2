// Exact running sums of rows: the non-private state under a continual-release sum.
//
//   VectorAccumulator      Σ a_t            value: a d-vector (a scalar count or sum is d = 1)
//   CovarianceAccumulator  Σ a_t a_tᵀ       value: a symmetric d×d matrix, packed as its upper
//                                           triangle (d(d+1)/2 coordinates, column by column)
//
// Both are DataSketches-style: update(), merge() (for sharded ingestion: the sums of disjoint row
// sets add), pack()/unpack() for checkpoints, and queries that never change the value. They hold raw
// data: they are as sensitive as the rows and must never be released without noise.
//
// The covariance accumulator buffers single rows in a Boost circular_buffer and folds them in with
// one symmetric rank-k update (BLAS-3 speed), so single-row ingestion costs about what block
// ingestion does. Each also turns exact sum + noise into a release: release() adds a noise vector in
// the packed coordinates, snaps every entry to the power-of-two grid (privacy/snap.hpp) and, for the
// covariance, mirrors the upper triangle so the release is bitwise symmetric.
#pragma once

#include <cstdint>

#include <Eigen/Core>
#include <boost/circular_buffer.hpp>

#include "dpstream/linalg/dense_kernels.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::stream {

class VectorAccumulator {
 public:
  using Value = Eigen::VectorXd;
  static constexpr const char* kKind = "vector";

  explicit VectorAccumulator(Eigen::Index dimension, Eigen::Index batch_rows = 0);

  Eigen::Index dimension() const noexcept { return sum_.size(); }
  Eigen::Index packed_size() const noexcept { return sum_.size(); }
  std::uint64_t rows() const noexcept { return rows_; }
  // l2 sensitivity of the sum to one row of norm ≤ L: L (zero_out_row), 2L (replace_row); a stream
  // refuses add_remove_row (privacy::require_stream_relation).
  static double sensitivity(privacy::Neighbours relation, double row_norm_bound);

  // The caller checks dimension and norm (ContinualSum does); these only add.
  void update(const Eigen::Ref<const Eigen::VectorXd>& row);
  void update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows);  // one row per matrix row
  void merge(const VectorAccumulator& other);

  const Eigen::VectorXd& sum() const noexcept { return sum_; }
  void pack(Eigen::Ref<Eigen::VectorXd> out) const;
  void unpack(const Eigen::Ref<const Eigen::VectorXd>& packed, std::uint64_t rows);
  static void pack_value(const Value& value, Eigen::Ref<Eigen::VectorXd> out);
  static void unpack_value(const Eigen::Ref<const Eigen::VectorXd>& packed, Value& value);

  // out = snap(sum + noise). off_diagonal_scale is ignored (vectors have no off-diagonal).
  void release(const Eigen::Ref<const Eigen::VectorXd>& noise, double off_diagonal_scale,
               double granularity, Value& out) const;

 private:
  Eigen::VectorXd sum_;
  std::uint64_t rows_ = 0;
};

class CovarianceAccumulator {
 public:
  using Value = Eigen::MatrixXd;
  static constexpr const char* kKind = "covariance";

  // batch_rows: single rows buffered before one rank-k update (≥ 1; 0 picks 128).
  explicit CovarianceAccumulator(Eigen::Index dimension, Eigen::Index batch_rows = 0);
  CovarianceAccumulator(const CovarianceAccumulator& other);
  CovarianceAccumulator& operator=(const CovarianceAccumulator& other);
  CovarianceAccumulator(CovarianceAccumulator&&) noexcept = default;
  CovarianceAccumulator& operator=(CovarianceAccumulator&&) noexcept = default;

  Eigen::Index dimension() const noexcept { return dimension_; }
  Eigen::Index packed_size() const noexcept { return dimension_ * (dimension_ + 1) / 2; }
  std::uint64_t rows() const noexcept { return rows_; }
  // l2 sensitivity of the packed upper triangle: L² (zero-out), √2·L² (replace); add_remove_row
  // refused as for vectors; see
  // privacy/symmetric_gaussian.hpp for the proof.
  static double sensitivity(privacy::Neighbours relation, double row_norm_bound);

  void update(const Eigen::Ref<const Eigen::VectorXd>& row);
  void update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows);  // one row per matrix row
  void merge(const CovarianceAccumulator& other);
  // Takes the value and row count of `other` (same dimension; InvalidParameter otherwise): its upper
  // triangle copied into this one's storage, with no allocation (operator= also rebuilds the row
  // batch), for a reader that keeps its own copy of a sum another object adds up (eval::RegretMeter).
  void copy_value(const CovarianceAccumulator& other);

  // The exact Σ a aᵀ, full and symmetric (for evaluation sinks such as a regret meter's OPT).
  Eigen::MatrixXd matrix() const;
  // The same into `out`, reusing its storage when it is already d × d (no allocation per call).
  void matrix(Eigen::MatrixXd& out) const;
  // The diagonal of Σ a aᵀ: Σ a_j² for each coordinate j.
  Eigen::VectorXd diagonal() const;
  // Σ a aᵀ as it is kept: in the upper triangle of this d × d matrix (the strict lower triangle
  // holds nothing meaningful), for readers of one triangle (pca::SubspaceTracker::refresh_upper).
  // Valid until the next update.
  const Eigen::MatrixXd& upper_triangle() const;
  void pack(Eigen::Ref<Eigen::VectorXd> out) const;
  void unpack(const Eigen::Ref<const Eigen::VectorXd>& packed, std::uint64_t rows);
  static void pack_value(const Value& value, Eigen::Ref<Eigen::VectorXd> out);
  static void unpack_value(const Eigen::Ref<const Eigen::VectorXd>& packed, Value& value);

  // out = mirror(snap(upper(sum) + scale ⊙ noise)) with scale 1 on the diagonal and
  // off_diagonal_scale off it (1/√2 gives the GOE shape, see symmetric_gaussian.hpp).
  void release(const Eigen::Ref<const Eigen::VectorXd>& noise, double off_diagonal_scale,
               double granularity, Value& out) const;

 private:
  void flush() const;  // folds the buffered rows into upper_ (logically const)

  Eigen::Index dimension_;
  Eigen::Index batch_rows_;
  mutable Eigen::MatrixXd upper_;  // Σ a aᵀ; only the upper triangle is kept up to date
  mutable boost::circular_buffer<double> batch_;  // buffered rows, d values each
  std::uint64_t rows_ = 0;
};

}  // namespace dpstream::stream
