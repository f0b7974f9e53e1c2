// movielens_shaped_ratings: exact counts, the half-star grid, the activity and popularity shapes,
// arrival times, reproducibility, and bad shapes refused naming the field. The small preset only
// (≈ 0.1 s); the 10M one runs in bench_recommend.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"

namespace test_synthetic_ratings {

using namespace dpstream;
using namespace dpstream::completion;

const SyntheticRatings& small_set() {
  static const SyntheticRatings set = movielens_shaped_ratings(ml_latest_small, 1);
  return set;
}

std::vector<Eigen::Index> ratings_per_user(const SyntheticRatings& set, Eigen::Index users) {
  std::vector<Eigen::Index> count(static_cast<std::size_t>(users), 0);
  for (const Rating& r : set.ratings) ++count[static_cast<std::size_t>(r.user)];
  return count;
}

TEST_CASE("MovieLens-shaped set: exact count, half-star grid, ordered, no pair twice", "[ratings][synthetic]") {
  const MovieLensShape& shape = ml_latest_small;
  const SyntheticRatings& set = small_set();
  REQUIRE(set.ratings.size() == static_cast<std::size_t>(shape.ratings));
  REQUIRE(set.timestamps.size() == set.ratings.size());
  CHECK(set.user_factors.rows() == shape.users);
  CHECK(set.item_factors.rows() == shape.items);
  for (std::size_t k = 0; k < set.ratings.size(); ++k) {
    const Rating& r = set.ratings[k];
    REQUIRE((r.value >= 0.5 && r.value <= 5.0));
    REQUIRE(2.0 * r.value == std::round(2.0 * r.value));
    REQUIRE((r.user >= 0 && r.user < shape.users && r.item >= 0 && r.item < shape.items));
    if (k > 0) {  // by user, items strictly ascending: so no (user, item) twice
      const Rating& p = set.ratings[k - 1];
      REQUIRE((p.user < r.user || (p.user == r.user && p.item < r.item)));
    }
  }
  RatingsMatrix(shape.users, shape.items, set.ratings);  // throws on a pair twice
  const auto count = ratings_per_user(set, shape.users);
  CHECK(*std::min_element(count.begin(), count.end()) >= shape.min_per_user);
  CHECK(*std::max_element(count.begin(), count.end()) <= shape.max_per_user);
}

TEST_CASE("MovieLens-shaped set: the marginal of rating levels is MovieLens-like", "[ratings][synthetic]") {
  const SyntheticRatings& set = small_set();
  double sum = 0, sum_sq = 0, whole = 0;
  for (const Rating& r : set.ratings) {
    sum += r.value, sum_sq += r.value * r.value;
    whole += r.value == std::round(r.value);
  }
  const double n = static_cast<double>(set.ratings.size()), mean = sum / n;
  const double sd = std::sqrt(sum_sq / n - mean * mean);
  // Model: E ≈ 3.50, sd ≈ 1.04 (header). The mean's spread across seeds comes mostly from the user
  // biases weighted by activity, (Σc)²/Σc² ≈ 173 users in effect (0.45/√173 = 0.034), and the item
  // biases weighted by popularity, ≈ 1,450 items in effect (0.5/√1450 = 0.013): sd ≈ 0.037, so
  // ±0.15 is 4 sd; MovieLens's 3.50 is inside. The sd: ±0.1.
  CHECK(std::abs(mean - 3.5) < 0.15);
  CHECK(std::abs(sd - 1.05) < 0.1);
  // Half the users rate in whole stars, the others on the half-star grid where about half the ratings
  // land on whole stars: ≈ 0.5 + 0.5·0.5 = 0.75. Which users rate in whole stars is a coin per user,
  // weighted by activity (≈ 173 users in effect): sd 0.5/√173 · 0.5 = 0.019, so [0.65, 0.85] is
  // over 5 sd (MovieLens latest-small: ≈ 0.7).
  CHECK(whole / n > 0.65);
  CHECK(whole / n < 0.85);
}

TEST_CASE("MovieLens-shaped set: power-law popularity and heavy-tailed activity", "[ratings][synthetic]") {
  const MovieLensShape& shape = ml_latest_small;
  const SyntheticRatings& set = small_set();
  std::vector<Eigen::Index> item_count(static_cast<std::size_t>(shape.items), 0);
  for (const Rating& r : set.ratings) ++item_count[static_cast<std::size_t>(r.item)];
  std::sort(item_count.rbegin(), item_count.rend());
  double top = 0;
  for (std::size_t k = 0; k < item_count.size() / 100; ++k) top += static_cast<double>(item_count[k]);
  const double top_share = top / static_cast<double>(shape.ratings);
  // Draws ∝ 1/(k + 10): with replacement the top 1% (97 items) would get ln(107/10)/ln(9734/10) =
  // 34% of the draws; without replacement the top items saturate (a user rates each once), which
  // the heavy users hit: 20% measured. A uniform popularity would give 1%. [0.12, 0.35].
  CHECK(top_share > 0.12);
  CHECK(top_share < 0.35);
  // The long tail: the median item has a handful of ratings against a mean of 10.4.
  CHECK(item_count[item_count.size() / 2] <= 6);

  auto count = ratings_per_user(set, shape.users);
  std::sort(count.begin(), count.end());
  const auto quantile = [&](double p) { return count[static_cast<std::size_t>(p * static_cast<double>(count.size() - 1))]; };
  // A Pareto(α = 1.8) excess over 20: median excess = scale·(2^(1/1.8) − 1) = 0.47·scale against a
  // mean of scale/0.8 = 1.25·scale, so median ≈ 20 + 0.38·145 = 75 (cap aside; 84 measured);
  // MovieLens latest-small: median ≈ 70, mean 165. A heavy tail: the 99th percentile is over 10
  // medians (the Pareto's: 100^(1/1.8)·scale = 13·scale against 0.47·scale), and the heaviest user
  // is at the cap (the water-filling hands the excess on).
  CHECK(quantile(0.5) > 40);
  CHECK(quantile(0.5) < 120);
  CHECK(quantile(0.99) > 10 * quantile(0.5));
  CHECK(count.back() == shape.max_per_user);
}

TEST_CASE("MovieLens-shaped set: users arrive over the span, in index order", "[ratings][synthetic]") {
  const MovieLensShape& shape = ml_latest_small;
  const SyntheticRatings& set = small_set();
  const std::int64_t end = shape.first_timestamp + shape.span_seconds;
  std::vector<std::int64_t> earliest(static_cast<std::size_t>(shape.users), end);
  for (std::size_t k = 0; k < set.ratings.size(); ++k) {
    REQUIRE((set.timestamps[k] >= shape.first_timestamp && set.timestamps[k] < end));
    auto& e = earliest[static_cast<std::size_t>(set.ratings[k].user)];
    e = std::min(e, set.timestamps[k]);
  }
  CHECK(std::is_sorted(earliest.begin(), earliest.end()));
  // 610 arrivals uniform over the span: P(the first after 2% of it) = 0.98^610 ≈ 5e-6, the same for
  // the last before 98%; the middle user arrives near the middle (sd of the median ≈ 0.5/√610 = 2%).
  const auto at = [&](double share) { return shape.first_timestamp + static_cast<std::int64_t>(share * static_cast<double>(shape.span_seconds)); };
  CHECK(earliest.front() < at(0.02));
  CHECK(earliest.back() > at(0.98));
  CHECK(earliest[earliest.size() / 2] > at(0.4));
  CHECK(earliest[earliest.size() / 2] < at(0.6));
}

TEST_CASE("MovieLens-shaped set: a pure function of the shape and the seed", "[ratings][synthetic]") {
  MovieLensShape shape = ml_latest_small;
  shape.users = 100, shape.ratings = 8000, shape.max_per_user = 1000;
  const auto a = movielens_shaped_ratings(shape, 7), b = movielens_shaped_ratings(shape, 7);
  const auto c = movielens_shaped_ratings(shape, 8);
  REQUIRE(a.ratings.size() == b.ratings.size());
  bool same = true;
  for (std::size_t k = 0; k < a.ratings.size(); ++k)
    same = same && a.ratings[k].user == b.ratings[k].user && a.ratings[k].item == b.ratings[k].item &&
           a.ratings[k].value == b.ratings[k].value;
  CHECK(same);
  CHECK(a.timestamps == b.timestamps);
  CHECK(a.user_factors == b.user_factors);
  CHECK(a.item_factors == b.item_factors);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < a.ratings.size(); ++k) differ += a.ratings[k].item != c.ratings[k].item;
  CHECK(differ > a.ratings.size() / 2);
}

TEST_CASE("MovieLens-shaped set: users who rate the whole catalogue still complete", "[ratings][synthetic]") {
  // Every user rates all 30 items: the rejection draws give way to the keyed draws of the rest.
  MovieLensShape shape = ml_latest_small;
  shape.users = 50, shape.items = 30, shape.ratings = 50 * 30, shape.min_per_user = 20, shape.max_per_user = 30;
  const auto set = movielens_shaped_ratings(shape, 3);
  REQUIRE(set.ratings.size() == 1500u);
  for (std::size_t k = 0; k < set.ratings.size(); ++k) {
    REQUIRE(set.ratings[k].user == static_cast<Eigen::Index>(k / 30));
    REQUIRE(set.ratings[k].item == static_cast<Eigen::Index>(k % 30));
  }
}

TEST_CASE("MovieLens-shaped set: bad shapes are refused, naming the field and its range", "[ratings][synthetic]") {
  const auto with = [](auto change) {
    MovieLensShape s = ml_latest_small;
    change(s);
    return s;
  };
  using S = MovieLensShape;
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.users = 0; }), 1), InvalidParameter,
                      Catch::Contains("users must be >= 1, got 0"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.rank = 0; }), 1), InvalidParameter,
                      Catch::Contains("rank must be >= 1"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.max_per_user = 9725; }), 1), InvalidParameter,
                      Catch::Contains("max_per_user must be in [min_per_user, items] = [20, 9724], got 9725"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.min_per_user = 0; }), 1), InvalidParameter,
                      Catch::Contains("min_per_user must be in [1, items]"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.ratings = 12199; }), 1), InvalidParameter,
                      Catch::Contains("ratings must be in [users * min_per_user, users * max_per_user] = [12200, 1645780], got 12199"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.activity_tail = 0; }), 1), InvalidParameter,
                      Catch::Contains("activity_tail must be finite and > 0"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.popularity_exponent = -1; }), 1), InvalidParameter,
                      Catch::Contains("popularity_exponent must be finite and >= 0"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.popularity_offset = 0; }), 1), InvalidParameter,
                      Catch::Contains("popularity_offset must be finite and > 0"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.whole_star_users = 1.5; }), 1), InvalidParameter,
                      Catch::Contains("whole_star_users must be in [0, 1], got 1.5"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.span_seconds = 0; }), 1), InvalidParameter,
                      Catch::Contains("span_seconds must be >= 1"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.mean_session_seconds = -1; }), 1), InvalidParameter,
                      Catch::Contains("mean_session_seconds must be finite and >= 0"));
  CHECK_THROWS_NAMING(movielens_shaped_ratings(with([](S& s) { s.users = INT64_MAX / 2; }), 1), InvalidParameter,
                      Catch::Contains("ratings must be in"));
}

}  // namespace test_synthetic_ratings
