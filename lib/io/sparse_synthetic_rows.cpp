#include "dpstream/io/sparse_synthetic_rows.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "dpstream/base/errors.hpp"

namespace dpstream::io {

namespace {

const SparseSyntheticRowsOptions& validated(const SparseSyntheticRowsOptions& o) {
  auto fail = [](const std::string& what) { throw InvalidParameter("SparseSyntheticRows: " + what); };
  if (o.shares.empty()) fail("shares must name at least one direction");
  double total = 0.0;
  for (double s : o.shares) {
    if (!(s > 0.0) || !std::isfinite(s)) fail("every share must be finite and > 0");
    total += s;
  }
  if (std::abs(total - 1.0) > 1e-9) fail("shares must sum to 1");
  if (o.topic_support < 1) fail("topic_support must be >= 1");
  if (o.noise_entries < 0) fail("noise_entries must be >= 0");
  if (!(o.noise_level >= 0.0) || !std::isfinite(o.noise_level)) fail("noise_level must be finite and >= 0");
  if (o.dimension < static_cast<Eigen::Index>(o.shares.size()) * o.topic_support || o.dimension > INT32_MAX)
    fail("dimension must hold the directions' disjoint supports (>= shares x topic_support) and fit an int");
  return o;
}

}  // namespace

SparseSyntheticRows::SparseSyntheticRows(const SparseSyntheticRowsOptions& options)
    : options_(validated(options)), noise_(options.seed) {
  // Supports: consecutive slots of a stride permutation of [0, d) (stride coprime to d): scattered,
  // disjoint, and no d-sized table.
  const std::uint64_t d = static_cast<std::uint64_t>(options_.dimension);
  std::uint64_t stride = 7919;
  while (std::gcd(stride, d) != 1) stride += 2;
  Eigen::Index slot = 0;
  for (std::size_t j = 0; j < options_.shares.size(); ++j) {
    Eigen::VectorXi idx(options_.topic_support);
    for (Eigen::Index i = 0; i < idx.size(); ++i, ++slot)
      idx[i] = static_cast<int>((static_cast<std::uint64_t>(slot) * stride + 1) % d);
    std::sort(idx.data(), idx.data() + idx.size());
    Eigen::VectorXd val(idx.size());
    for (Eigen::Index i = 0; i < val.size(); ++i) val[i] = noise_.gaussian();
    val.normalize();
    support_.push_back(idx);
    values_.push_back(val);
    cumulative_.push_back((cumulative_.empty() ? 0.0 : cumulative_.back()) + options_.shares[j]);
  }
}

void SparseSyntheticRows::next(Eigen::VectorXi& indices, Eigen::VectorXd& values) {
  const double u = noise_.uniform_open() * cumulative_.back();
  const auto j = static_cast<std::size_t>(
      std::min<std::ptrdiff_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin(),
                               static_cast<std::ptrdiff_t>(cumulative_.size()) - 1));
  scratch_.clear();
  const double z = noise_.gaussian();
  for (Eigen::Index i = 0; i < support_[j].size(); ++i) scratch_.emplace_back(support_[j][i], z * values_[j][i]);
  const double each = options_.noise_level / std::sqrt(std::max<double>(1.0, double(options_.noise_entries)));
  for (Eigen::Index i = 0; i < options_.noise_entries; ++i)
    scratch_.emplace_back(static_cast<int>(noise_.uniform_below(static_cast<std::uint64_t>(options_.dimension))),
                          each * noise_.gaussian());
  std::sort(scratch_.begin(), scratch_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Merge repeated coordinates (a noise entry on the support, or two noise entries).
  std::size_t n = 0;
  for (std::size_t i = 0; i < scratch_.size(); ++i) {
    if (n > 0 && scratch_[n - 1].first == scratch_[i].first) scratch_[n - 1].second += scratch_[i].second;
    else scratch_[n++] = scratch_[i];
  }
  indices.resize(static_cast<Eigen::Index>(n));
  values.resize(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) indices[Eigen::Index(i)] = scratch_[i].first, values[Eigen::Index(i)] = scratch_[i].second;
  const double norm = values.norm();
  // Unit norm, and never above 1 after the division's round-off (the rows' bound is L = 1).
  if (norm > 0.0) values *= (1.0 - 1e-12) / norm;
}

}  // namespace dpstream::io
