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
  // Unix seconds of each rating, parallel to `ratings`; empty for the sets without a time
  // (rank_one_ratings, uniform_factor_ratings, movielens_like_ratings).
  std::vector<std::int64_t> timestamps;
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

// The shape of a MovieLens release for movielens_shaped_ratings (below).
struct MovieLensShape {
  Eigen::Index users = 0, items = 0, ratings = 0;
  Eigen::Index rank = 10;                 // rank of the residual u_iᵀv_j
  Eigen::Index min_per_user = 20;         // MovieLens keeps users with ≥ 20 ratings
  Eigen::Index max_per_user = 0;          // the heaviest user; ≤ items
  double activity_tail = 1.8;             // Pareto tail index α of a user's ratings beyond the minimum
  double popularity_exponent = 1.0;       // item of popularity rank k drawn ∝ (k + offset)^-exponent
  double popularity_offset = 10.0;
  double whole_star_users = 0.5;          // share of users who rate in whole stars only
  std::int64_t first_timestamp = 0;       // users arrive in [first, first + span) (Unix seconds)
  std::int64_t span_seconds = 0;
  double mean_session_seconds = 30 * 86400.0;  // a user's ratings spread over Exp(this) after arrival
};

// MovieLens "latest-small" (2018): 610 users, 9,724 items, 100,836 half-star ratings, 1996-2018.
// The heaviest user rated 2,698 items; arrivals from 1996-01-01 to 2018-10-01.
inline constexpr MovieLensShape ml_latest_small{.users = 610, .items = 9724, .ratings = 100836,
                                                .max_per_user = 2698, .first_timestamp = 820454400,
                                                .span_seconds = 717897600};
// MovieLens 10M (2009): 69,878 users, 10,677 items, 10,000,054 half-star ratings, 1995-2009.
// The heaviest user rated 7,359 items; arrivals from 1995-01-01 to 2009-01-01.
inline constexpr MovieLensShape ml_10m{.users = 69878, .items = 10677, .ratings = 10000054,
                                       .max_per_user = 7359, .first_timestamp = 788918400,
                                       .span_seconds = 441849600};

// A MovieLens-shaped set with half-star ratings and timestamps, for tests and benches when no large
// ratings file is at hand (none ships with Debian). Exactly shape.ratings ratings, ordered by user,
// items ascending; no (user, item) twice.
//  * Activity: every user has min_per_user ratings, plus a share of the rest ∝ a Pareto(α) draw
//    (U^(-1/α) − 1: a power-law tail), capped at max_per_user (the excess goes to the others).
//  * Popularity: a seeded permutation ranks the items; a user's items are drawn without replacement,
//    each next one ∝ (rank + offset)^-exponent among those she has not rated (Zipf-like). An item
//    may get no rating (ml_latest_small: ≈ 3% of the catalogue).
//  * Value: 3.55 + b_i + c_j + u_iᵀv_j + 0.75·z, b ~ N(0, 0.45²), c ~ N(0, 0.5²), u_iᵀv_j of
//    variance 0.5², z ~ N(0, 1); rounded to half stars and clamped to [0.5, 5], or, for a
//    whole-star user, to whole stars in [1, 5]. truth(i, j) is the mean before noise and rounding.
//    At both presets (seed 1) the mean is ≈ 3.50 and the sd ≈ 1.04 (MovieLens: 3.50-3.51 and
//    1.04-1.06), whole stars ≈ 77% of the ratings; the lowest levels are rarer than in MovieLens
//    (0.5 and 1: ≈ 2.5% against ≈ 4%) and 5 more frequent (≈ 17% against 13-15%).
//  * Time: users arrive in index order at the order statistics of span uniforms (Poisson arrivals
//    given their number); a user's first rating (in time) is at her arrival, the others within an
//    Exp(mean_session_seconds) session after it, cut at the span's end. So user i's earliest
//    timestamp is non-decreasing in i, and a replay in time order sees users arrive over time.
// Cost O(ratings · log items) draws and memory about the ratings and timestamps; 10M ratings in a
// few seconds. users ≥ 1, rank ≥ 1, 1 ≤ min_per_user ≤ max_per_user ≤ items,
// users·min_per_user ≤ ratings ≤ users·max_per_user, activity_tail > 0, popularity_exponent ≥ 0,
// popularity_offset > 0, whole_star_users ∈ [0, 1], span_seconds ≥ 1, mean_session_seconds ≥ 0;
// else InvalidParameter naming the field and the accepted range.
SyntheticRatings movielens_shaped_ratings(const MovieLensShape& shape, std::uint64_t seed);

}  // namespace dpstream::completion
