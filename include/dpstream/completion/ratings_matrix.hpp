// RatingsMatrix: the observed entries P_Ω(X) of a users × items rating matrix, with both sparse views
// the completion algorithms need — by user (row i holds Ω_i, the items user i rated) and by item
// (column j holds Ω̃_j, the users who rated item j).
//
// Indices are dense and 0-based (io maps a file's external ids to them: ratings_io.hpp). The matrix is
// immutable once built; both views hold the same entries in the same numeric values.
//
// Privacy: this is the private input. Nothing here is released. The unit of privacy for every
// completion algorithm is stated in its own header (user-level for Frank–Wolfe; see the ALS header for
// its modes).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace dpstream::completion {

// One observed rating with dense indices.
struct Rating {
  Eigen::Index user = 0;
  Eigen::Index item = 0;
  double value = 0.0;
};

class RatingsMatrix {
 public:
  using ByUser = Eigen::SparseMatrix<double, Eigen::RowMajor>;  // users × items, compressed rows
  using ByItem = Eigen::SparseMatrix<double, Eigen::ColMajor>;  // users × items, compressed columns

  RatingsMatrix() = default;  // 0 × 0, no ratings
  // users, items ≥ 0; every rating's indices in range and value finite; no (user, item) twice.
  // Otherwise InvalidParameter naming the rating's position in `ratings` and what is wrong.
  RatingsMatrix(Eigen::Index users, Eigen::Index items, const std::vector<Rating>& ratings);

  Eigen::Index users() const noexcept { return by_user_.rows(); }
  Eigen::Index items() const noexcept { return by_user_.cols(); }
  Eigen::Index size() const noexcept { return by_user_.nonZeros(); }  // |Ω|

  const ByUser& by_user() const noexcept { return by_user_; }
  const ByItem& by_item() const noexcept { return by_item_; }

  Eigen::Index user_count(Eigen::Index user) const;  // |Ω_i|
  // User i's (item, rating) pairs, items ascending (what the per-user code of the recommenders reads).
  // InvalidParameter for a user out of range.
  std::vector<std::pair<Eigen::Index, double>> user_ratings(Eigen::Index user) const;
  Eigen::Index item_count(Eigen::Index item) const;  // |Ω̃_j|
  // The largest ‖P_Ω(X_i)‖₂ over users (0 without ratings): what a user-level bound L must cover.
  double max_user_norm() const;
  double mean() const;                      // mean observed rating (0 without ratings)
  std::vector<Rating> triplets() const;     // by user, items ascending

 private:
  ByUser by_user_;
  ByItem by_item_;
};

}  // namespace dpstream::completion
