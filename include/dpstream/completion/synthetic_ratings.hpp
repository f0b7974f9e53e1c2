// Synthetic rating sets with a known low-rank truth X = U Vᵀ, generated in code from a seed (the
// synthetic sets of Jain, Thakkar & Thakurta, "Differentially private matrix completion revisited",
// ICML 2018, §4, and of Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber mechanism for
// differentially private low-rank matrix completion", arXiv 2022, §4). Every random draw comes from
// privacy::SeededNoiseSource, so a set is a pure function of (arguments, seed) on every platform. This is data, not noise: nothing here is
// private or secure.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/ratings_matrix.hpp"

namespace dpstream::completion {

struct SyntheticRatings {
  Eigen::MatrixXd user_factors;  // U, users × rank
  Eigen::MatrixXd item_factors;  // V, items × rank
  std::vector<Rating> ratings;   // observed entries X_ij = u_iᵀ v_j, by user, items ascending
  double truth(Eigen::Index user, Eigen::Index item) const {
    return user_factors.row(user).dot(item_factors.row(item));
  }
};

// Jain, Thakkar & Thakurta's synthetic set (§4: "a random rank-one matrix with unit ℓ∞-norm"): rank
// one, u ∈ ℝ^users and v ∈ ℝ^items i.i.d. U[−1, 1] (the paper says only "random"), each divided
// by its max-abs so that ‖X‖_∞ = 1; every user rates `per_user` distinct items chosen uniformly
// (1 ≤ per_user ≤ items). Zero predictor's RMSE ≈ 1/3.
// users, items ≥ 1, else InvalidParameter naming the argument.
SyntheticRatings rank_one_ratings(Eigen::Index users, Eigen::Index items, Eigen::Index per_user,
                                  std::uint64_t seed);

// Gowtham et al.'s synthetic set (§4; the paper gives neither the size nor the factor law, and this
// recipe reproduces its Table 3 vanilla column): U (users × rank) and V (items × rank) i.i.d. U[0, 1];
// each entry observed independently with probability observed_fraction ∈ (0, 1]. Defaults in the paper: 200 × 200, rank 5, p ∈ {0.05, 0.10, 0.15}.
SyntheticRatings uniform_factor_ratings(Eigen::Index users, Eigen::Index items, Eigen::Index rank,
                                        double observed_fraction, std::uint64_t seed);

// A MovieLens-shaped set for benchmarks and demos when no MovieLens file is at hand (none ships with
// Debian): integer ratings 1..5, every user with at least 20 ratings and the rest shared in
// proportion to exponential weights, item popularity Zipf-like (∝ 1/(rank + 10)), exactly `ratings`
// ratings in all. A rating is round(3.5 + b_i + c_j + u_iᵀv_j + 0.9·z), clamped to [1, 5], with user
// and item biases b ~ N(0, 0.45²), c ~ N(0, 0.5²) and rank-`rank` factors with entries N(0, 0.5/√rank), z ~ N(0, 1).
// The factors returned hold the biases and the 3.5 (extra columns), so truth(i, j) is the rating's
// mean before the noise and rounding. At MovieLens-100K's size (943 users, 1682 items, 100,000) the
// levels 1..5 come out ≈ 4 / 15 / 31 / 30 / 19% (MovieLens: 6 / 11 / 27 / 34 / 21%).
// users ≥ 1, items ≥ 20, 20·users ≤ ratings ≤ users·items, rank ≥ 1; else InvalidParameter.
SyntheticRatings movielens_like_ratings(Eigen::Index users, Eigen::Index items, Eigen::Index ratings,
                                        Eigen::Index rank, std::uint64_t seed);

}  // namespace dpstream::completion
