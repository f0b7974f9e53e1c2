#include "dpstream/stream/accumulators.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/memory_limit.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/aligned_reduction.hpp"
#include "dpstream/linalg/mirror.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"

namespace dpstream::stream {

namespace {

void require_dimension(Eigen::Index dimension) {
  if (dimension < 1) throw InvalidParameter("accumulator dimension must be >= 1, got " + std::to_string(dimension));
}

void require_size(const char* what, Eigen::Index got, Eigen::Index expected) {
  if (got != expected)
    throw InvalidParameter(std::string(what) + " has size " + std::to_string(got) + ", expected " +
                           std::to_string(expected));
}

void snap(double* data, Eigen::Index n, double granularity) {
  privacy::snap_to_grid(std::span<double>(data, static_cast<std::size_t>(n)), granularity);
}

}  // namespace

// ---- VectorAccumulator --------------------------------------------------------------------------

VectorAccumulator::VectorAccumulator(Eigen::Index dimension, Eigen::Index /*batch_rows*/)
    : sum_(Eigen::VectorXd::Zero((require_dimension(dimension), dimension))) {}

double VectorAccumulator::sensitivity(privacy::Neighbours relation, double row_norm_bound) {
  privacy::require_stream_relation("continual sum", relation);
  base::require_positive("row_norm_bound", row_norm_bound);
  // zero-out: ‖a‖ ≤ L; replace: ‖a − b‖ ≤ 2L (attained by b = −a).
  return relation == privacy::Neighbours::replace_row ? 2.0 * row_norm_bound : row_norm_bound;
}

void VectorAccumulator::update(const Eigen::Ref<const Eigen::VectorXd>& row) {
  require_size("vector accumulator: row", row.size(), dimension());
  sum_ += row;
  ++rows_;
}

void VectorAccumulator::update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
  require_size("vector accumulator: block columns", rows.cols(), dimension());
  // Each column as a VectorXd of it would sum (linalg/aligned_reduction.hpp): colwise().sum() on the
  // caller's memory starts its packets at each column's first aligned entry, so the same rows at
  // another address (another offset in a block, a Python array) would be added in another order.
  for (Eigen::Index j = 0; j < dimension(); ++j) sum_(j) += linalg::aligned_sum(rows.col(j).data(), rows.rows());
  rows_ += static_cast<std::uint64_t>(rows.rows());
}

void VectorAccumulator::merge(const VectorAccumulator& other) {
  require_size("vector accumulator: merged accumulator", other.dimension(), dimension());
  sum_ += other.sum_;
  rows_ += other.rows_;
}

void VectorAccumulator::pack(Eigen::Ref<Eigen::VectorXd> out) const { pack_value(sum_, out); }

void VectorAccumulator::unpack(const Eigen::Ref<const Eigen::VectorXd>& packed, std::uint64_t rows) {
  require_size("vector accumulator: packed sum", packed.size(), packed_size());
  sum_ = packed;
  rows_ = rows;
}

void VectorAccumulator::pack_value(const Value& value, Eigen::Ref<Eigen::VectorXd> out) {
  require_size("vector accumulator: packed output", out.size(), value.size());
  out = value;
}

void VectorAccumulator::unpack_value(const Eigen::Ref<const Eigen::VectorXd>& packed, Value& value) {
  value = packed;
}

void VectorAccumulator::release(const Eigen::Ref<const Eigen::VectorXd>& noise, double /*off_diagonal_scale*/,
                                double granularity, Value& out) const {
  require_size("vector accumulator: noise", noise.size(), packed_size());
  out = sum_ + noise;
  snap(out.data(), out.size(), granularity);
}

// ---- CovarianceAccumulator ----------------------------------------------------------------------

namespace {
constexpr Eigen::Index kDefaultBatchRows = 128;
Eigen::Index checked_batch_rows(Eigen::Index batch_rows) {
  if (batch_rows < 0)
    throw InvalidParameter("covariance accumulator: batch_rows must be >= 0, got " + std::to_string(batch_rows));
  return batch_rows > 0 ? batch_rows : kDefaultBatchRows;
}
// Its d × d upper triangle and its row batch, refused over the memory limit before allocating.
void require_covariance_memory(Eigen::Index dimension, Eigen::Index batch_rows) {
  const double d = static_cast<double>(dimension);
  const double batch = static_cast<double>(batch_rows > 0 ? batch_rows : kDefaultBatchRows);
  require_memory("a covariance accumulator of dimension " + std::to_string(dimension), 8.0 * d * (d + batch));
}
// Offset of column j of the packed upper triangle (column-major: entries (0..j, j)).
inline Eigen::Index column_offset(Eigen::Index j) { return j * (j + 1) / 2; }

// upper += X Xᵀ on the upper triangle, X = d × k (one row of data per column). Column panels of
// width kPanel, each one GEMM: upper(0:j1, j0:j1) += X(0:j1, :) · X(j0:j1, :)ᵀ. That computes the
// whole square diagonal block (half of it wasted, a fraction ≈ kPanel/(d + kPanel) of all flops) but
// runs at GEMM speed, which Eigen's selfadjointView().rankUpdate does not reach for mid-sized d
// (measured by bench/continual). Small d use rankUpdate: one panel would waste half.
constexpr Eigen::Index kPanel = 96;
template <class Rows>
void add_gram_upper(Eigen::MatrixXd& upper, const Rows& x) {
  const Eigen::Index d = upper.rows();
  if (x.cols() == 1 || d <= kPanel) {
    if (x.cols() == 1)
      upper.selfadjointView<Eigen::Upper>().rankUpdate(x.col(0));
    else
      upper.selfadjointView<Eigen::Upper>().rankUpdate(x);
    return;
  }
  for (Eigen::Index j0 = 0; j0 < d; j0 += kPanel) {
    const Eigen::Index width = std::min(kPanel, d - j0);
    upper.block(0, j0, j0 + width, width).noalias() += x.topRows(j0 + width) * x.middleRows(j0, width).transpose();
  }
}
}  // namespace

CovarianceAccumulator::CovarianceAccumulator(Eigen::Index dimension, Eigen::Index batch_rows)
    : dimension_((require_dimension(dimension), require_covariance_memory(dimension, batch_rows), dimension)),
      batch_rows_(checked_batch_rows(batch_rows)),
      upper_(Eigen::MatrixXd::Zero(dimension, dimension)),
      batch_(static_cast<std::size_t>(batch_rows_ * dimension)) {}

CovarianceAccumulator::CovarianceAccumulator(const CovarianceAccumulator& other)
    : dimension_(other.dimension_),
      batch_rows_(other.batch_rows_),
      upper_((other.flush(), other.upper_)),
      batch_(other.batch_.capacity()),
      rows_(other.rows_) {}

CovarianceAccumulator& CovarianceAccumulator::operator=(const CovarianceAccumulator& other) {
  if (this != &other) {
    other.flush();
    dimension_ = other.dimension_;
    batch_rows_ = other.batch_rows_;
    upper_ = other.upper_;
    batch_ = boost::circular_buffer<double>(other.batch_.capacity());
    rows_ = other.rows_;
  }
  return *this;
}

double CovarianceAccumulator::sensitivity(privacy::Neighbours relation, double row_norm_bound) {
  privacy::require_stream_relation("continual sum", relation);
  return privacy::covariance_sensitivity(relation, row_norm_bound);
}

void CovarianceAccumulator::flush() const {
  if (batch_.empty()) return;
  const auto count = static_cast<Eigen::Index>(batch_.size()) / dimension_;
  // linearize() makes the buffer one contiguous array (a no-op here: it is only ever appended to and
  // cleared), so the rows are the columns of a d × count matrix.
  const Eigen::Map<const Eigen::MatrixXd> rows(const_cast<boost::circular_buffer<double>&>(batch_).linearize(),
                                               dimension_, count);
  add_gram_upper(upper_, rows);
  batch_.clear();
}

void CovarianceAccumulator::update(const Eigen::Ref<const Eigen::VectorXd>& row) {
  require_size("covariance accumulator: row", row.size(), dimension_);
  if (batch_.full()) flush();
  batch_.insert(batch_.end(), row.data(), row.data() + dimension_);
  ++rows_;
}

void CovarianceAccumulator::update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
  require_size("covariance accumulator: block columns", rows.cols(), dimension_);
  flush();
  add_gram_upper(upper_, rows.transpose());  // C += XᵀX on the upper triangle
  rows_ += static_cast<std::uint64_t>(rows.rows());
}

void CovarianceAccumulator::merge(const CovarianceAccumulator& other) {
  require_size("covariance accumulator: merged accumulator", other.dimension_, dimension_);
  flush();
  other.flush();
  upper_.triangularView<Eigen::Upper>() += other.upper_;
  rows_ += other.rows_;
}

void CovarianceAccumulator::copy_value(const CovarianceAccumulator& other) {
  require_size("covariance accumulator: copied accumulator", other.dimension_, dimension_);
  if (this == &other) return;
  other.flush();
  batch_.clear();
  for (Eigen::Index j = 0; j < dimension_; ++j) upper_.col(j).head(j + 1) = other.upper_.col(j).head(j + 1);
  rows_ = other.rows_;
}

Eigen::MatrixXd CovarianceAccumulator::matrix() const {
  Eigen::MatrixXd full;
  matrix(full);
  return full;
}

void CovarianceAccumulator::matrix(Eigen::MatrixXd& out) const {
  flush();
  out.resize(dimension_, dimension_);
  for (Eigen::Index j = 0; j < dimension_; ++j) out.col(j).head(j + 1) = upper_.col(j).head(j + 1);
  linalg::mirror_upper(out);
}

const Eigen::MatrixXd& CovarianceAccumulator::upper_triangle() const {
  flush();
  return upper_;
}

Eigen::VectorXd CovarianceAccumulator::diagonal() const {
  flush();
  return upper_.diagonal();
}

void CovarianceAccumulator::pack(Eigen::Ref<Eigen::VectorXd> out) const {
  flush();
  pack_value(upper_, out);
}

void CovarianceAccumulator::unpack(const Eigen::Ref<const Eigen::VectorXd>& packed, std::uint64_t rows) {
  require_size("covariance accumulator: packed sum", packed.size(), packed_size());
  batch_.clear();
  // The upper triangle only: it is all upper_ keeps (unpack_value would mirror it too).
  for (Eigen::Index j = 0; j < dimension_; ++j) upper_.col(j).head(j + 1) = packed.segment(column_offset(j), j + 1);
  rows_ = rows;
}

void CovarianceAccumulator::pack_value(const Value& value, Eigen::Ref<Eigen::VectorXd> out) {
  const Eigen::Index d = value.rows();
  require_size("covariance accumulator: packed output", out.size(), d * (d + 1) / 2);
  for (Eigen::Index j = 0; j < d; ++j) out.segment(column_offset(j), j + 1) = value.col(j).head(j + 1);
}

void CovarianceAccumulator::unpack_value(const Eigen::Ref<const Eigen::VectorXd>& packed, Value& value) {
  // d(d+1)/2 = n  ⇒  d = (√(8n+1) − 1)/2, checked exactly below.
  const auto d = static_cast<Eigen::Index>((std::sqrt(8.0 * static_cast<double>(packed.size()) + 1.0) - 1.0) / 2.0 + 0.5);
  if (d * (d + 1) / 2 != packed.size())
    throw InvalidParameter("covariance accumulator: " + std::to_string(packed.size()) +
                           " packed values are not a triangle d(d+1)/2");
  value.resize(d, d);
  for (Eigen::Index j = 0; j < d; ++j) value.col(j).head(j + 1) = packed.segment(column_offset(j), j + 1);
  linalg::mirror_upper(value);
}

void CovarianceAccumulator::release(const Eigen::Ref<const Eigen::VectorXd>& noise, double off_diagonal_scale,
                                    double granularity, Value& out) const {
  require_size("covariance accumulator: noise", noise.size(), packed_size());
  flush();
  const Eigen::Index d = dimension_;
  out.resize(d, d);
  for (Eigen::Index j = 0; j < d; ++j) {
    const Eigen::Index off = column_offset(j);
    auto column = out.col(j).head(j + 1);
    if (off_diagonal_scale == 1.0) {
      column = upper_.col(j).head(j + 1) + noise.segment(off, j + 1);
    } else {
      column.head(j) = upper_.col(j).head(j) + off_diagonal_scale * noise.segment(off, j);
      column(j) = upper_(j, j) + noise(off + j);
    }
    snap(column.data(), j + 1, granularity);
  }
  linalg::mirror_upper(out);
}

}  // namespace dpstream::stream
