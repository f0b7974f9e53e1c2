#include "dpstream/completion/synthetic_ratings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"
#include "sampling.hpp"

namespace dpstream::completion {

namespace {

void require_at_least_one(const char* what, const char* name, Eigen::Index value) {
  if (value < 1)
    throw InvalidParameter(std::string(what) + ": " + name + " must be >= 1, got " + std::to_string(value));
}

Eigen::VectorXd uniform_symmetric(Eigen::Index n, privacy::NoiseSource& source) {
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = 2.0 * source.uniform_open() - 1.0;
  return v / v.cwiseAbs().maxCoeff();  // max-abs 1, so ‖u vᵀ‖_∞ = 1 (unit ℓ∞-norm: Jain, Thakkar & Thakurta 2018, §4)
}

}  // namespace

SyntheticRatings rank_one_ratings(Eigen::Index users, Eigen::Index items, Eigen::Index per_user,
                                  std::uint64_t seed) {
  constexpr const char* what = "rank-one ratings";
  require_at_least_one(what, "users", users);
  require_at_least_one(what, "items", items);
  require_at_least_one(what, "per_user", per_user);
  if (per_user > items)
    throw InvalidParameter(std::string(what) + ": per_user " + std::to_string(per_user) + " exceeds items " +
                           std::to_string(items));
  privacy::SeededNoiseSource source(seed);
  SyntheticRatings out;
  out.user_factors = uniform_symmetric(users, source);
  out.item_factors = uniform_symmetric(items, source);
  out.ratings.reserve(static_cast<std::size_t>(users * per_user));
  std::vector<Eigen::Index> chosen;
  chosen.reserve(static_cast<std::size_t>(per_user));
  for (Eigen::Index i = 0; i < users; ++i) {
    // Floyd's algorithm: per_user distinct items, each subset equally likely, per_user draws.
    chosen.clear();
    for (Eigen::Index j = items - per_user; j < items; ++j) {
      const auto t = static_cast<Eigen::Index>(source.uniform_below(static_cast<std::uint64_t>(j + 1)));
      chosen.push_back(std::find(chosen.begin(), chosen.end(), t) == chosen.end() ? t : j);
    }
    std::sort(chosen.begin(), chosen.end());
    for (Eigen::Index j : chosen) out.ratings.push_back({i, j, out.truth(i, j)});
  }
  return out;
}

SyntheticRatings uniform_factor_ratings(Eigen::Index users, Eigen::Index items, Eigen::Index rank,
                                        double observed_fraction, std::uint64_t seed) {
  constexpr const char* what = "uniform-factor ratings";
  require_at_least_one(what, "users", users);
  require_at_least_one(what, "items", items);
  require_at_least_one(what, "rank", rank);
  if (!(observed_fraction > 0.0 && observed_fraction <= 1.0))
    throw InvalidParameter(std::string(what) + ": observed_fraction must be in (0, 1], got " +
                           base::format_value(observed_fraction));
  privacy::SeededNoiseSource source(seed);
  SyntheticRatings out;
  out.user_factors.resize(users, rank);
  out.item_factors.resize(items, rank);
  for (Eigen::Index c = 0; c < rank; ++c)
    for (Eigen::Index i = 0; i < users; ++i) out.user_factors(i, c) = source.uniform_open();
  for (Eigen::Index c = 0; c < rank; ++c)
    for (Eigen::Index j = 0; j < items; ++j) out.item_factors(j, c) = source.uniform_open();
  for (Eigen::Index i = 0; i < users; ++i)
    for (Eigen::Index j = 0; j < items; ++j)
      if (source.uniform_open() < observed_fraction) out.ratings.push_back({i, j, out.truth(i, j)});
  return out;
}

}  // namespace dpstream::completion

namespace dpstream::completion {

SyntheticRatings movielens_like_ratings(Eigen::Index users, Eigen::Index items, Eigen::Index ratings,
                                        Eigen::Index rank, std::uint64_t seed) {
  constexpr const char* what = "MovieLens-like ratings";
  constexpr Eigen::Index kMinPerUser = 20;
  require_at_least_one(what, "users", users);
  require_at_least_one(what, "rank", rank);
  if (items < kMinPerUser)
    throw InvalidParameter(std::string(what) + ": items must be >= 20, got " + std::to_string(items));
  if (ratings < kMinPerUser * users || ratings > users * items)
    throw InvalidParameter(std::string(what) + ": ratings must be in [20 * users, users * items] = [" +
                           std::to_string(kMinPerUser * users) + ", " + std::to_string(users * items) + "], got " +
                           std::to_string(ratings));
  privacy::SeededNoiseSource source(seed);
  // Factors: [u_i, b_i, 1, 3.5] · [v_j, 1, c_j, 1] = 3.5 + b_i + c_j + u_iᵀv_j.
  SyntheticRatings out;
  out.user_factors.resize(users, rank + 3);
  out.item_factors.resize(items, rank + 3);
  const double factor_sd = 0.5 / std::sqrt(static_cast<double>(rank));
  for (Eigen::Index i = 0; i < users; ++i) {
    for (Eigen::Index c = 0; c < rank; ++c) out.user_factors(i, c) = factor_sd * source.gaussian();
    out.user_factors.row(i).tail(3) << 0.45 * source.gaussian(), 1.0, 3.5;
  }
  for (Eigen::Index j = 0; j < items; ++j) {
    for (Eigen::Index c = 0; c < rank; ++c) out.item_factors(j, c) = factor_sd * source.gaussian();
    out.item_factors.row(j).tail(3) << 1.0, 0.5 * source.gaussian(), 1.0;
  }
  // Activity: 20 each, the rest shared by exponential weights; rounding leftovers go one by one to the
  // users with room, so the total is exact and nobody exceeds the catalogue.
  std::vector<double> weight(static_cast<std::size_t>(users));
  double weight_sum = 0.0;
  for (double& w : weight) weight_sum += (w = source.exponential());
  std::vector<Eigen::Index> count(static_cast<std::size_t>(users), kMinPerUser);
  Eigen::Index assigned = kMinPerUser * users;
  const double extra = static_cast<double>(ratings - assigned);
  for (std::size_t i = 0; i < count.size(); ++i) {
    const auto more = std::min(items - kMinPerUser, static_cast<Eigen::Index>(std::floor(extra * weight[i] / weight_sum)));
    count[i] += more;
    assigned += more;
  }
  for (std::size_t i = 0; assigned < ratings; i = (i + 1) % count.size())
    if (count[i] < items) ++count[i], ++assigned;
  // Popularity ∝ 1/(position + 10) over a seeded permutation of the items; draws by inverse CDF.
  std::vector<Eigen::Index> order(static_cast<std::size_t>(items));
  for (Eigen::Index j = 0; j < items; ++j) order[static_cast<std::size_t>(j)] = j;
  detail::shuffle(order, source);
  std::vector<double> cumulative(order.size());
  double total = 0.0;
  for (std::size_t k = 0; k < order.size(); ++k) cumulative[k] = (total += 1.0 / (static_cast<double>(k) + 10.0));
  std::vector<char> taken(static_cast<std::size_t>(items), 0);
  std::vector<Eigen::Index> chosen;
  out.ratings.reserve(static_cast<std::size_t>(ratings));
  for (Eigen::Index i = 0; i < users; ++i) {
    chosen.clear();
    const Eigen::Index want = count[static_cast<std::size_t>(i)];
    // Popularity-weighted draws until 64 collisions, then the least popular free items: a heavy
    // user (up to the whole catalogue) always completes.
    for (int misses = 0; static_cast<Eigen::Index>(chosen.size()) < want && misses < 64;) {
      const double u = source.uniform_open() * total;
      const auto k = static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
      const Eigen::Index item = order[std::min(k, order.size() - 1)];
      if (taken[static_cast<std::size_t>(item)]) { ++misses; continue; }
      taken[static_cast<std::size_t>(item)] = 1;
      chosen.push_back(item);
    }
    for (std::size_t k = order.size(); static_cast<Eigen::Index>(chosen.size()) < want; --k) {
      const Eigen::Index item = order[k - 1];
      if (!taken[static_cast<std::size_t>(item)]) taken[static_cast<std::size_t>(item)] = 1, chosen.push_back(item);
    }
    std::sort(chosen.begin(), chosen.end());
    for (Eigen::Index j : chosen) {
      taken[static_cast<std::size_t>(j)] = 0;
      const double value = std::round(out.truth(i, j) + 0.9 * source.gaussian());
      out.ratings.push_back({i, j, std::clamp(value, 1.0, 5.0)});
    }
  }
  return out;
}

}  // namespace dpstream::completion

namespace dpstream::completion {

namespace {

constexpr const char* kShaped = "MovieLens-shaped ratings";

[[noreturn]] void refuse_shape(const std::string& field, const std::string& range, const std::string& got) {
  throw InvalidParameter(std::string(kShaped) + ": " + field + " must be " + range + ", got " + got);
}

Eigen::Index saturating_product(Eigen::Index a, Eigen::Index b) {
  Eigen::Index p = 0;
  return __builtin_mul_overflow(a, b, &p) ? std::numeric_limits<Eigen::Index>::max() : p;
}

void validate_shape(const MovieLensShape& s) {
  const auto str = [](auto v) { return std::to_string(v); };
  if (s.users < 1) refuse_shape("users", ">= 1", str(s.users));
  if (s.items < 1) refuse_shape("items", ">= 1", str(s.items));
  if (s.rank < 1) refuse_shape("rank", ">= 1", str(s.rank));
  if (s.min_per_user < 1 || s.min_per_user > s.items)
    refuse_shape("min_per_user", "in [1, items] = [1, " + str(s.items) + "]", str(s.min_per_user));
  if (s.max_per_user < s.min_per_user || s.max_per_user > s.items)
    refuse_shape("max_per_user", "in [min_per_user, items] = [" + str(s.min_per_user) + ", " + str(s.items) + "]",
                 str(s.max_per_user));
  const Eigen::Index least = saturating_product(s.users, s.min_per_user);
  const Eigen::Index most = saturating_product(s.users, s.max_per_user);
  if (s.ratings < least || s.ratings > most)
    refuse_shape("ratings", "in [users * min_per_user, users * max_per_user] = [" + str(least) + ", " + str(most) + "]",
                 str(s.ratings));
  const auto num = [](double v) { return base::format_value(v); };
  if (!(s.activity_tail > 0.0 && std::isfinite(s.activity_tail)))
    refuse_shape("activity_tail", "finite and > 0", num(s.activity_tail));
  if (!(s.popularity_exponent >= 0.0 && std::isfinite(s.popularity_exponent)))
    refuse_shape("popularity_exponent", "finite and >= 0", num(s.popularity_exponent));
  if (!(s.popularity_offset > 0.0 && std::isfinite(s.popularity_offset)))
    refuse_shape("popularity_offset", "finite and > 0", num(s.popularity_offset));
  if (!(s.whole_star_users >= 0.0 && s.whole_star_users <= 1.0))
    refuse_shape("whole_star_users", "in [0, 1]", num(s.whole_star_users));
  if (s.span_seconds < 1) refuse_shape("span_seconds", ">= 1", str(s.span_seconds));
  if (s.first_timestamp > std::numeric_limits<std::int64_t>::max() - s.span_seconds)
    refuse_shape("first_timestamp", "at most INT64_MAX - span_seconds", str(s.first_timestamp));
  if (!(s.mean_session_seconds >= 0.0 && std::isfinite(s.mean_session_seconds)))
    refuse_shape("mean_session_seconds", "finite and >= 0", num(s.mean_session_seconds));
}

// Residual factors in the first `rank` columns, entries of variance 0.5/√rank, so that u_iᵀv_j has
// variance rank·(0.5/√rank)² = 0.5²; then [b_i, 1, 3.55] · [1, c_j, 1] add the biases and the mean.
void shaped_factors(const MovieLensShape& s, privacy::NoiseSource& source, SyntheticRatings& out) {
  const double entry_sd = std::sqrt(0.5 / std::sqrt(static_cast<double>(s.rank)));
  out.user_factors.resize(s.users, s.rank + 3);
  out.item_factors.resize(s.items, s.rank + 3);
  for (Eigen::Index i = 0; i < s.users; ++i) {
    for (Eigen::Index c = 0; c < s.rank; ++c) out.user_factors(i, c) = entry_sd * source.gaussian();
    out.user_factors.row(i).tail(3) << 0.45 * source.gaussian(), 1.0, 3.55;
  }
  for (Eigen::Index j = 0; j < s.items; ++j) {
    for (Eigen::Index c = 0; c < s.rank; ++c) out.item_factors(j, c) = entry_sd * source.gaussian();
    out.item_factors.row(j).tail(3) << 1.0, 0.5 * source.gaussian(), 1.0;
  }
}

// Ratings per user: min_per_user each, the rest ∝ Pareto weights w_i = U^(-1/α) − 1 with a common
// scale t chosen so that Σ min(room, t·w_i) is the rest (water-filling: the heaviest are capped at
// max_per_user and their excess goes to the others); floors, then the leftover one by one to users
// with room, so the total is exact.
std::vector<Eigen::Index> shaped_activity(const MovieLensShape& s, privacy::NoiseSource& source) {
  const auto n = static_cast<std::size_t>(s.users);
  std::vector<double> weight(n);
  // Capped far above any use so that a tiny α cannot make a weight infinite.
  for (double& w : weight) w = std::min(1e200, std::pow(source.uniform_open(), -1.0 / s.activity_tail) - 1.0);
  std::vector<std::size_t> heaviest(n);
  for (std::size_t i = 0; i < n; ++i) heaviest[i] = i;
  // Ties by index: the order (hence the set) is the same under every standard library.
  std::sort(heaviest.begin(), heaviest.end(),
            [&](std::size_t a, std::size_t b) { return weight[a] > weight[b] || (weight[a] == weight[b] && a < b); });
  std::vector<double> lighter_weight(n + 1, 0.0);  // Σ of the weights from the k-th heaviest on
  for (std::size_t k = n; k > 0; --k) lighter_weight[k - 1] = lighter_weight[k] + weight[heaviest[k - 1]];
  const double room = static_cast<double>(s.max_per_user - s.min_per_user);
  const double rest = static_cast<double>(s.ratings - s.users * s.min_per_user);
  // The k heaviest capped: the others share rest − k·room at scale (rest − k·room)/lighter_weight[k].
  std::size_t capped = 0;
  const auto scale_with = [&](std::size_t k) {
    return lighter_weight[k] > 0.0 ? std::max(0.0, rest - room * static_cast<double>(k)) / lighter_weight[k] : 0.0;
  };
  while (capped < n && scale_with(capped) * weight[heaviest[capped]] > room) ++capped;
  const double scale = scale_with(capped);
  std::vector<Eigen::Index> count(n, s.min_per_user);
  Eigen::Index assigned = s.users * s.min_per_user;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = heaviest[k];
    const double more = k < capped ? room : std::min(room, std::floor(scale * weight[i]));
    count[i] += static_cast<Eigen::Index>(more);
    assigned += static_cast<Eigen::Index>(more);
  }
  // Rounding in the scale may leave the floors a few over or (at most n) under the total.
  for (std::size_t i = 0; assigned > s.ratings; i = (i + 1) % n)
    if (count[i] > s.min_per_user) --count[i], --assigned;
  for (std::size_t i = 0; assigned < s.ratings; i = (i + 1) % n)
    if (count[i] < s.max_per_user) ++count[i], ++assigned;
  return count;
}

// Draws a user's items without replacement, each next item ∝ its popularity weight among those she
// has not taken: by rejection from the whole catalogue (Walker's alias method, O(1) a draw) while most
// draws land on new items, then, for a heavy user who holds much of the popular mass, by
// Efraimidis–Spirakis keys E/w over her remaining items (the same law: successive sampling).
class PopularityDraw {
 public:
  PopularityDraw(const MovieLensShape& s, privacy::NoiseSource& source)
      : item_of_rank_(static_cast<std::size_t>(s.items)), weight_(item_of_rank_.size()),
        accept_(item_of_rank_.size()), alias_(item_of_rank_.size()), taken_(item_of_rank_.size(), 0) {
    for (std::size_t k = 0; k < item_of_rank_.size(); ++k) item_of_rank_[k] = static_cast<Eigen::Index>(k);
    detail::shuffle(item_of_rank_, source);
    double total = 0.0;
    for (std::size_t k = 0; k < weight_.size(); ++k)
      total += (weight_[k] = std::pow(static_cast<double>(k) + s.popularity_offset, -s.popularity_exponent));
    build_alias(total);
  }

  // `want` distinct items, ascending, into `chosen`.
  void draw(Eigen::Index want, privacy::NoiseSource& source, std::vector<Eigen::Index>& chosen) {
    chosen.clear();
    ranks_.clear();
    for (std::size_t misses = 0; static_cast<Eigen::Index>(ranks_.size()) < want;) {
      if (misses > 64 && misses > ranks_.size()) {  // under half the draws are new: switch
        draw_rest(want - static_cast<Eigen::Index>(ranks_.size()), source);
        break;
      }
      std::size_t rank = source.uniform_below(accept_.size());
      if (source.uniform_open() >= accept_[rank]) rank = alias_[rank];
      if (taken_[rank]) { ++misses; continue; }
      taken_[rank] = 1;
      ranks_.push_back(rank);
    }
    for (std::size_t rank : ranks_) taken_[rank] = 0, chosen.push_back(item_of_rank_[rank]);
    std::sort(chosen.begin(), chosen.end());
  }

 private:
  // Vose's construction: column k keeps rank k with probability accept_[k], else gives alias_[k].
  void build_alias(double total) {
    const std::size_t n = weight_.size();
    std::vector<double> scaled(n);
    std::vector<std::size_t> small, large;
    for (std::size_t k = 0; k < n; ++k) {
      scaled[k] = weight_[k] * static_cast<double>(n) / total;
      (scaled[k] < 1.0 ? small : large).push_back(k);
    }
    while (!small.empty() && !large.empty()) {
      const std::size_t lo = small.back(), hi = large.back();
      small.pop_back();
      accept_[lo] = scaled[lo], alias_[lo] = hi;
      scaled[hi] -= 1.0 - scaled[lo];
      if (scaled[hi] < 1.0) large.pop_back(), small.push_back(hi);
    }
    for (std::size_t k : large) accept_[k] = 1.0, alias_[k] = k;
    for (std::size_t k : small) accept_[k] = 1.0, alias_[k] = k;  // rounding leftovers: ≈ 1
  }

  void draw_rest(Eigen::Index need, privacy::NoiseSource& source) {
    keyed_.clear();
    for (std::size_t k = 0; k < taken_.size(); ++k)
      if (!taken_[k]) keyed_.emplace_back(source.exponential() / weight_[k], k);
    const auto end = keyed_.begin() + need;
    std::nth_element(keyed_.begin(), end - 1, keyed_.end());
    for (auto it = keyed_.begin(); it != end; ++it) taken_[it->second] = 1, ranks_.push_back(it->second);
  }

  std::vector<Eigen::Index> item_of_rank_;
  std::vector<double> weight_, accept_;
  std::vector<std::size_t> alias_, ranks_;
  std::vector<char> taken_;
  std::vector<std::pair<double, std::size_t>> keyed_;
};

// Arrival times: the order statistics of `users` uniforms on [first, first + span) via normalised
// cumulative Exp(1) gaps (one gap more than users, so the last arrival is before the end).
std::vector<std::int64_t> shaped_arrivals(const MovieLensShape& s, privacy::NoiseSource& source) {
  std::vector<double> cumulative(static_cast<std::size_t>(s.users) + 1);
  double sum = 0.0;
  for (double& c : cumulative) c = (sum += source.exponential());
  std::vector<std::int64_t> arrival(static_cast<std::size_t>(s.users));
  for (std::size_t i = 0; i < arrival.size(); ++i)
    arrival[i] = s.first_timestamp +
                 std::min(s.span_seconds - 1, static_cast<std::int64_t>(std::floor(static_cast<double>(s.span_seconds) *
                                                                                    (cumulative[i] / sum))));
  return arrival;
}

// One user's `count` timestamps: one at her arrival (a random one of her ratings), the others
// uniform over a session of Exp(mean_session_seconds), cut at the span's last second.
void shaped_times(const MovieLensShape& s, std::int64_t arrival, std::size_t count, privacy::NoiseSource& source,
                  std::vector<std::int64_t>& out) {
  const std::int64_t last = s.first_timestamp + s.span_seconds - 1;
  const double session = std::min(source.exponential() * s.mean_session_seconds, static_cast<double>(last - arrival));
  const std::size_t first = out.size();
  for (std::size_t k = 0; k < count; ++k)
    out.push_back(arrival + static_cast<std::int64_t>(std::floor(source.uniform_open() * session)));
  out[first + source.uniform_below(count)] = arrival;
}

}  // namespace

SyntheticRatings movielens_shaped_ratings(const MovieLensShape& shape, std::uint64_t seed) {
  validate_shape(shape);
  privacy::SeededNoiseSource source(seed);
  SyntheticRatings out;
  shaped_factors(shape, source, out);
  const std::vector<Eigen::Index> count = shaped_activity(shape, source);
  PopularityDraw popularity(shape, source);
  const std::vector<std::int64_t> arrival = shaped_arrivals(shape, source);
  out.ratings.reserve(static_cast<std::size_t>(shape.ratings));
  out.timestamps.reserve(static_cast<std::size_t>(shape.ratings));
  // Row-major copies: each value reads contiguous rows, not the column-major factors' strided ones.
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> items = out.item_factors;
  const Eigen::Index width = items.cols();
  Eigen::RowVectorXd user;
  std::vector<Eigen::Index> chosen;
  for (Eigen::Index i = 0; i < shape.users; ++i) {
    popularity.draw(count[static_cast<std::size_t>(i)], source, chosen);
    const bool whole_stars = source.uniform_open() < shape.whole_star_users;
    const double step = whole_stars ? 1.0 : 0.5;
    user = out.user_factors.row(i);
    for (Eigen::Index j : chosen) {
      // A scalar sum in column order, not Eigen's dot: its vectorised order follows the SIMD width
      // (-march), and a different last bit could round a value to another half star.
      double mean = 0.0;
      for (Eigen::Index c = 0; c < width; ++c) mean += user[c] * items(j, c);
      const double value = std::round((mean + 0.75 * source.gaussian()) / step) * step;
      out.ratings.push_back({i, j, std::clamp(value, step, 5.0)});
    }
    shaped_times(shape, arrival[static_cast<std::size_t>(i)], chosen.size(), source, out.timestamps);
  }
  return out;
}

}  // namespace dpstream::completion
