// movielens_shaped_ratings at MovieLens 10M's shape (69,878 users, 10,677 items, 10,000,054
// ratings): the generation rate and the set's shape.
// Figures:
//   ratings_per_second       ratings generated per second of process CPU time (single-threaded);
//   seconds_over_floor       generation time over a floor measured in the same run: one Gaussian draw
//                            from the same SeededNoiseSource per rating, written to a vector of
//                            Ratings (every rating needs at least that: its noise and its store);
//   seconds_over_limit       CPU seconds over the 10 s limit ("seconds" for a 10M-rating set).
// Also printed: the marginal of rating levels, the top-1% items' share, user activity quantiles.
// Last line: JSON with the figures. Exit status 1 if the limit is missed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <vector>

#include "dpstream/completion/synthetic_ratings.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace {

using dpstream::completion::Rating;

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

double floor_seconds(std::size_t n) {
  dpstream::privacy::SeededNoiseSource source(2);
  std::vector<Rating> out;
  out.reserve(n);
  const double t0 = cpu_seconds();
  for (std::size_t k = 0; k < n; ++k) out.push_back({static_cast<Eigen::Index>(k / 143), 0, source.gaussian()});
  const double s = cpu_seconds() - t0;
  std::printf("floor: %zu Gaussian draws into Ratings %.3f s (last %.3f)\n", n, s, out.back().value);
  return s;
}

void print_shape(const dpstream::completion::SyntheticRatings& set, const dpstream::completion::MovieLensShape& shape) {
  std::map<double, std::size_t> levels;
  std::vector<long> per_user(static_cast<std::size_t>(shape.users)), per_item(static_cast<std::size_t>(shape.items));
  double sum = 0, sum_sq = 0;
  for (const Rating& r : set.ratings) {
    ++levels[r.value], ++per_user[static_cast<std::size_t>(r.user)], ++per_item[static_cast<std::size_t>(r.item)];
    sum += r.value, sum_sq += r.value * r.value;
  }
  const double n = static_cast<double>(set.ratings.size()), mean = sum / n;
  std::printf("levels (mean %.3f, sd %.3f):", mean, std::sqrt(sum_sq / n - mean * mean));
  for (const auto& [level, count] : levels) std::printf(" %.1f:%.1f%%", level, 100.0 * static_cast<double>(count) / n);
  std::sort(per_user.begin(), per_user.end());
  std::sort(per_item.rbegin(), per_item.rend());
  const auto q = [&](double p) { return per_user[static_cast<std::size_t>(p * static_cast<double>(per_user.size() - 1))]; };
  std::printf("\nusers: ratings min %ld, quartiles %ld / %ld / %ld, 90%% %ld, 99%% %ld, max %ld\n", per_user.front(),
              q(0.25), q(0.5), q(0.75), q(0.9), q(0.99), per_user.back());
  double top = 0;
  for (std::size_t k = 0; k < per_item.size() / 100; ++k) top += static_cast<double>(per_item[k]);
  std::printf("items: top 1%% hold %.1f%% of the ratings; most rated %ld (%.0f%% of users), median %ld\n",
              100.0 * top / n, per_item.front(), 100.0 * static_cast<double>(per_item.front()) / static_cast<double>(shape.users),
              per_item[per_item.size() / 2]);
}

}  // namespace

int main() {
  const auto& shape = dpstream::completion::ml_10m;
  const double t0 = cpu_seconds();
  const auto set = dpstream::completion::movielens_shaped_ratings(shape, 1);
  const double seconds = cpu_seconds() - t0;
  const double rate = static_cast<double>(set.ratings.size()) / seconds;
  std::printf("ml_10m: %zu ratings in %.2f s CPU = %.2f M ratings/s\n", set.ratings.size(), seconds, rate / 1e6);
  print_shape(set, shape);
  const double floor = floor_seconds(set.ratings.size());
  const double limit = 10.0;
  std::printf("{\"ratings_per_second\":%.0f,\"seconds_over_floor\":%.3f,\"seconds_over_limit\":%.3f}\n", rate,
              seconds / floor, seconds / limit);
  return seconds < limit ? 0 : 1;
}
