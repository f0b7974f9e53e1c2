#include "dpstream/completion/synthetic_ratings.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpstream/errors.hpp"
#include "dpstream/privacy/params.hpp"
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
                           privacy::format_value(observed_fraction));
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
