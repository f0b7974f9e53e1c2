#include "dpstream/completion/ratings_matrix.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/linalg/aligned_reduction.hpp"

namespace dpstream::completion {

RatingsMatrix::RatingsMatrix(Eigen::Index users, Eigen::Index items, const std::vector<Rating>& ratings) {
  if (users < 0 || items < 0)
    throw InvalidParameter("ratings matrix: users and items must be >= 0, got " + std::to_string(users) + " x " +
                           std::to_string(items));
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(ratings.size());
  for (std::size_t k = 0; k < ratings.size(); ++k) {
    const Rating& r = ratings[k];
    const std::string where = "ratings matrix: rating " + std::to_string(k) + " (user " + std::to_string(r.user) +
                              ", item " + std::to_string(r.item) + ")";
    if (r.user < 0 || r.user >= users) throw InvalidParameter(where + ": user outside [0, " + std::to_string(users) + ")");
    if (r.item < 0 || r.item >= items) throw InvalidParameter(where + ": item outside [0, " + std::to_string(items) + ")");
    if (!std::isfinite(r.value)) throw InvalidParameter(where + ": value is " + base::format_value(r.value));
    entries.emplace_back(static_cast<int>(r.user), static_cast<int>(r.item), r.value);
  }
  by_user_.resize(users, items);
  // Duplicates are an error, not summed: a duplicate (user, item) would silently double a rating.
  Eigen::SparseMatrix<double, Eigen::RowMajor> counts(users, items);
  std::vector<Eigen::Triplet<double>> ones;
  ones.reserve(entries.size());
  for (const auto& e : entries) ones.emplace_back(e.row(), e.col(), 1.0);
  counts.setFromTriplets(ones.begin(), ones.end());
  if (counts.nonZeros() != static_cast<Eigen::Index>(entries.size())) {
    for (Eigen::Index i = 0; i < counts.outerSize(); ++i)
      for (ByUser::InnerIterator it(counts, i); it; ++it)
        if (it.value() > 1.0)
          throw InvalidParameter("ratings matrix: user " + std::to_string(it.row()) + " rated item " +
                                 std::to_string(it.col()) + " more than once");
  }
  by_user_.setFromTriplets(entries.begin(), entries.end());
  by_user_.makeCompressed();
  by_item_ = by_user_;
  by_item_.makeCompressed();
}

Eigen::Index RatingsMatrix::user_count(Eigen::Index user) const {
  if (user < 0 || user >= users())
    throw InvalidParameter("ratings matrix: user " + std::to_string(user) + " outside [0, " + std::to_string(users()) + ")");
  return by_user_.outerIndexPtr()[user + 1] - by_user_.outerIndexPtr()[user];
}

std::vector<std::pair<Eigen::Index, double>> RatingsMatrix::user_ratings(Eigen::Index user) const {
  std::vector<std::pair<Eigen::Index, double>> row;
  row.reserve(static_cast<std::size_t>(user_count(user)));  // checks the range
  for (ByUser::InnerIterator it(by_user_, user); it; ++it) row.emplace_back(it.col(), it.value());
  return row;
}

Eigen::Index RatingsMatrix::item_count(Eigen::Index item) const {
  if (item < 0 || item >= items())
    throw InvalidParameter("ratings matrix: item " + std::to_string(item) + " outside [0, " + std::to_string(items()) + ")");
  return by_item_.outerIndexPtr()[item + 1] - by_item_.outerIndexPtr()[item];
}

double RatingsMatrix::max_user_norm() const {
  double largest = 0.0;
  for (Eigen::Index i = 0; i < users(); ++i) largest = std::max(largest, by_user_.row(i).norm());
  return largest;
}

// Not by_user_.sum(): Eigen sums a compressed matrix's values in place, from wherever new[] put them,
// and the order of its additions (so the last bit) followed that address.
double RatingsMatrix::mean() const {
  if (size() == 0) return 0.0;
  return linalg::aligned_sum(by_user_.valuePtr(), by_user_.nonZeros()) / static_cast<double>(size());
}

std::vector<Rating> RatingsMatrix::triplets() const {
  std::vector<Rating> out;
  out.reserve(static_cast<std::size_t>(size()));
  for (Eigen::Index i = 0; i < by_user_.outerSize(); ++i)
    for (ByUser::InnerIterator it(by_user_, i); it; ++it) out.push_back({it.row(), it.col(), it.value()});
  return out;
}

}  // namespace dpstream::completion
