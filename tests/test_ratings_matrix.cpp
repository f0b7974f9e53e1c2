// RatingsMatrix (both views agree, bad input named), the synthetic sets, and the metrics.
#include <cmath>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/completion/metrics.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"

namespace test_ratings_matrix {

using namespace dpstream;
using namespace dpstream::completion;

TEST_CASE("ratings matrix: both views hold the same entries", "[ratings]") {
  const std::vector<Rating> ratings{{0, 2, 5.0}, {1, 0, 3.0}, {0, 0, 1.0}, {2, 2, -2.0}};
  const RatingsMatrix m(3, 4, ratings);
  CHECK(m.users() == 3);
  CHECK(m.items() == 4);
  CHECK(m.size() == 4);
  CHECK(Eigen::MatrixXd(m.by_user()).isApprox(Eigen::MatrixXd(m.by_item())));
  CHECK(m.by_user().coeff(0, 2) == 5.0);
  CHECK(m.user_count(0) == 2);
  CHECK(m.user_count(1) == 1);
  CHECK(m.item_count(2) == 2);
  CHECK(m.item_count(3) == 0);
  CHECK(m.max_user_norm() == Approx(std::sqrt(26.0)));
  CHECK(m.mean() == Approx(7.0 / 4.0));
  const auto back = m.triplets();
  REQUIRE(back.size() == 4);
  CHECK((back[0].user == 0 && back[0].item == 0 && back[0].value == 1.0));
  CHECK((back[3].user == 2 && back[3].item == 2 && back[3].value == -2.0));
}

TEST_CASE("ratings matrix: bad ratings are refused, naming the rating", "[ratings]") {
  CHECK_THROWS_NAMING(RatingsMatrix(2, 2, {{0, 0, 1.0}, {2, 0, 1.0}}), InvalidParameter, Catch::Contains("rating 1 (user 2, item 0)"));
  CHECK_THROWS_NAMING(RatingsMatrix(2, 2, {{0, 5, 1.0}}), InvalidParameter, Catch::Contains("item outside [0, 2)"));
  CHECK_THROWS_NAMING(RatingsMatrix(2, 2, {{0, 1, std::nan("")}}), InvalidParameter, Catch::Contains("value is nan"));
  CHECK_THROWS_NAMING(RatingsMatrix(2, 2, {{1, 1, 1.0}, {1, 1, 2.0}}), InvalidParameter,
                      Catch::Contains("user 1 rated item 1 more than once"));
  CHECK_THROWS_NAMING(RatingsMatrix(2, 2, {}).user_count(2), InvalidParameter, Catch::Contains("user 2"));
}

TEST_CASE("rank-one synthetic set (Jain, Thakkar & Thakurta 2018, §4)", "[ratings][synthetic]") {
  const auto set = rank_one_ratings(2000, 50, 10, 3);
  REQUIRE(set.ratings.size() == 2000u * 10u);
  CHECK(set.user_factors.cwiseAbs().maxCoeff() == 1.0);
  CHECK(set.item_factors.cwiseAbs().maxCoeff() == 1.0);
  const RatingsMatrix m(2000, 50, set.ratings);  // distinct items per user, or this throws
  for (Eigen::Index i = 0; i < 2000; ++i) REQUIRE(m.user_count(i) == 10);
  double sum_sq = 0;
  for (const auto& r : set.ratings) {
    REQUIRE(r.value == set.truth(r.user, r.item));
    sum_sq += r.value * r.value;
  }
  // Items are chosen uniformly, so E[value²] = mean_i(u_i²)·mean_j(v_j²) given the factors (the zero
  // predictor's RMSE², ≈ 1/9 for U[−1,1] factors). Each value² lies in [0, 1] with variance
  // ≤ E[u⁴]E[v⁴] = 1/25, so the mean of 20000 has sd ≤ 0.0014: 5 sd = 0.007.
  const double expected = set.user_factors.squaredNorm() / 2000.0 * set.item_factors.squaredNorm() / 50.0;
  CHECK(sum_sq / 20000.0 == Approx(expected).margin(0.007));
  // Items are chosen uniformly: each item is rated ≈ 2000·10/50 = 400 times (binomial sd ≈ 18.3);
  // 6 sd over 50 items is a false-alarm rate below 1e-7.
  for (Eigen::Index j = 0; j < 50; ++j) CHECK(std::abs(m.item_count(j) - 400.0) < 6 * 18.3);
  // Same seed, same set; another seed, another.
  CHECK(rank_one_ratings(2000, 50, 10, 3).user_factors == set.user_factors);
  CHECK(rank_one_ratings(2000, 50, 10, 4).user_factors != set.user_factors);
  CHECK_THROWS_NAMING(rank_one_ratings(10, 5, 6, 1), InvalidParameter, Catch::Contains("per_user 6 exceeds items 5"));
}

TEST_CASE("uniform-factor synthetic set (Gowtham et al. 2022, §4)", "[ratings][synthetic]") {
  const auto set = uniform_factor_ratings(200, 200, 5, 0.1, 9);
  CHECK(set.user_factors.minCoeff() > 0.0);
  CHECK(set.item_factors.maxCoeff() < 1.0);
  // 40000 Bernoulli(0.1) draws: mean 4000, sd 60; 5 sd.
  CHECK(std::abs(static_cast<double>(set.ratings.size()) - 4000.0) < 300.0);
  CHECK_THROWS_NAMING(uniform_factor_ratings(10, 10, 2, 0.0, 1), InvalidParameter, Catch::Contains("observed_fraction"));
}

TEST_CASE("metrics: rmse, full rmse and the mean baselines", "[ratings][metrics]") {
  const std::vector<Rating> train{{0, 0, 4.0}, {1, 0, 2.0}, {0, 1, 5.0}};
  const RatingsMatrix m(2, 3, train);
  const auto base = fit_mean_baselines(m);
  CHECK(base.global_mean == Approx(11.0 / 3.0));
  CHECK(base.item_means[0] == 3.0);
  CHECK(base.item_means[1] == 5.0);
  CHECK(base.item_means[2] == Approx(11.0 / 3.0));  // unrated: global mean
  const std::vector<Rating> test{{1, 1, 4.0}, {1, 2, 3.0}};
  const double item_rmse = rmse([&](Eigen::Index u, Eigen::Index i) { return base.predict_item(u, i); }, test);
  CHECK(item_rmse == Approx(std::sqrt((1.0 + std::pow(3.0 - 11.0 / 3.0, 2)) / 2.0)));
  CHECK(full_rmse([](Eigen::Index, Eigen::Index) { return 1.0; }, [](Eigen::Index, Eigen::Index) { return 3.0; }, 2, 3) ==
        2.0);
  CHECK_THROWS_NAMING(rmse([](Eigen::Index, Eigen::Index) { return 0.0; }, {}), InvalidParameter, Catch::Contains("test set is empty"));
  CHECK_THROWS_NAMING(rmse([](Eigen::Index, Eigen::Index) { return std::nan(""); }, test), InvalidParameter,
                      Catch::Contains("user 1, item 1 is nan"));
}

TEST_CASE("MovieLens-like synthetic set: the shape of MovieLens-100K", "[ratings][synthetic]") {
  const auto set = movielens_like_ratings(943, 1682, 100000, 10, 1);
  REQUIRE(set.ratings.size() == 100000u);
  const RatingsMatrix m(943, 1682, set.ratings);  // distinct (user, item) pairs, or this throws
  Eigen::Index fewest = 1682, most = 0;
  for (Eigen::Index i = 0; i < 943; ++i) fewest = std::min(fewest, m.user_count(i)), most = std::max(most, m.user_count(i));
  CHECK(fewest >= 20);
  CHECK(most > 200);  // heavy-tailed activity (MovieLens-100K's most active user has 737)
  std::vector<int> histogram(6, 0);
  for (const auto& r : set.ratings) {
    REQUIRE((r.value >= 1 && r.value <= 5 && r.value == std::round(r.value)));
    ++histogram[static_cast<std::size_t>(r.value)];
  }
  // Every level used, the middle ones most (MovieLens: 6% / 11% / 27% / 34% / 21%).
  for (int v = 1; v <= 5; ++v) CHECK(histogram[static_cast<std::size_t>(v)] > 2000);
  CHECK(histogram[3] + histogram[4] > 50000);
  // Popular items: the most-rated item has far more than the mean 59 ratings.
  Eigen::Index top = 0;
  for (Eigen::Index j = 0; j < 1682; ++j) top = std::max(top, m.item_count(j));
  CHECK(top > 300);
  CHECK(movielens_like_ratings(943, 1682, 100000, 10, 1).ratings.back().value == set.ratings.back().value);
  CHECK_THROWS_NAMING(movielens_like_ratings(10, 30, 100, 2, 1), InvalidParameter, Catch::Contains("[200, 300]"));
}

}  // namespace test_ratings_matrix
