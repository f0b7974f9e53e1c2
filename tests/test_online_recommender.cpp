// The online Recommender (online_recommender.hpp): the row bound its sensitivity rests on, for
// adversarial users; one charge at construction; seeded reproducibility; serving by the latest
// release; and, on a MovieLens-shaped stream replayed in time order, no worse than the global mean.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/completion/item_model.hpp"
#include "dpstream/completion/online_recommender.hpp"
#include "dpstream/completion/ratings_io.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "random_ratings.hpp"
#include "unaccounted.hpp"

namespace test_online_recommender {

using namespace dpstream;
using namespace dpstream::completion;
using Eigen::Index;
using Eigen::VectorXd;
using Row = std::vector<std::pair<Index, double>>;

namespace {

RecommenderOptions small_options(Index items, std::uint64_t release_every, std::uint64_t seed) {
  RecommenderOptions o;
  o.items = items;
  o.als.rank = 3;
  o.als.target = privacy::EpsDelta(2.0, 1e-6);
  o.als.seed = seed;
  o.release_every = release_every;
  return o;
}

// Random users (random_ratings.hpp), each item rated with probability 0.3.
std::vector<Row> random_users(Index users, Index items, std::uint64_t seed) {
  return testing::random_rating_rows(users, items, 0.3, seed);
}

}  // namespace

TEST_CASE("online: the shares and L as the header derives them", "[online][privacy]") {
  const RecommenderOptions o = small_options(10, 5, 1);
  const Recommender rec(o, test_budget::unaccounted());
  const double bu = o.als.fold_in.factor_bound, br = o.als.residual_bound;
  const double delta_a2 = bu * bu * (bu * bu + br * br);
  const double rest = 1.0 - o.als.global_share - o.als.baseline_share;
  const double g2 = 2.0 * rec.global_scale() * rec.global_scale(), b2 = 2.0 * rec.baseline_scale() * rec.baseline_scale();
  CHECK(g2 / delta_a2 == Approx(o.als.global_share / rest).epsilon(1e-12));
  CHECK(b2 / delta_a2 == Approx(o.als.baseline_share / rest).epsilon(1e-12));
  CHECK(rec.row_norm_bound() == Approx(std::sqrt(g2 + b2 + delta_a2)).epsilon(1e-12));
  CHECK(rec.dimension() == 2 + 10 * (2 + 9));  // rank 3: stride 6 + 3
}

TEST_CASE("online: adversarial users' rows stay within L, the baseline blocks' part attained", "[online][privacy]") {
  const Index items = 20;
  Recommender rec(small_options(items, 4, 3), test_budget::unaccounted());
  for (const Row& row : random_users(8, items, 4)) rec.add(row);  // two releases: weights and factors move
  REQUIRE(rec.releases() == 2);
  const double g = rec.global_scale(), beta = rec.baseline_scale(), bound = rec.row_norm_bound();
  std::vector<Row> adversaries;
  Row all_top, one_top, over;
  for (Index j = 0; j < items; ++j) all_top.emplace_back(j, 5.0), over.emplace_back(j, 9.0);
  one_top.emplace_back(items - 1, 5.0);
  adversaries = {all_top, one_top, over, Row{{3, 0.5}, {4, 0.5}}};
  for (const Row& row : adversaries) {
    const VectorXd a = rec.packed_row(row);
    // Allowance 1e-12 relative: the stream's L' (header); the derivation gives ≤ L exactly.
    CHECK(a.norm() <= bound * (1.0 + 1e-12));
    // All ratings at one end of the scale (9 is clipped to 5): the global and item blocks reach
    // 2g² + 2β² (header), the attained part of L.
    CHECK(a.head(2 + 2 * items).squaredNorm() == Approx(2.0 * g * g + 2.0 * beta * beta).epsilon(1e-12));
  }
  Row mixed;
  for (Index j = 0; j < items; ++j) mixed.emplace_back(j, j % 2 ? 9.0 : -4.0);
  CHECK(rec.packed_row(mixed).norm() <= bound * (1.0 + 1e-12));
  CHECK(rec.counts().rows_clipped == 0);
  CHECK_THROWS_AS(rec.add(Row{{1, 3.0}, {1, 4.0}}), InvalidParameter);  // an item twice breaks Σw² = 1
  CHECK_THROWS_AS(rec.add(Row{{items, 3.0}}), InvalidParameter);
  CHECK(rec.counts().users == 8);  // refused users added nothing
}

TEST_CASE("online: removing one user moves the release by her row, at most L", "[online][privacy]") {
  const Index items = 15;
  const auto users = random_users(12, items, 7);
  Row top;
  for (Index j = 0; j < items; j += 2) top.emplace_back(j, 5.0);
  // One release of everybody (release_every above the stream, then flush): the same seed draws the
  // same noise, so the two releases differ by exactly her row (up to the 2^-30·σ snapping grid).
  const auto release = [&](bool with_her) {
    Recommender rec(small_options(items, 100, 11), test_budget::unaccounted());
    for (std::size_t i = 0; i < users.size(); ++i) {
      if (i == 5 && with_her) rec.add(top);
      rec.add(users[i]);
    }
    rec.flush();
    REQUIRE(rec.releases() == 1);
    return std::make_pair(VectorXd(rec.released()), rec.release_sigma());
  };
  const auto [with, sigma] = release(true);
  const auto [without, sigma_without] = release(false);
  Recommender fresh(small_options(items, 100, 11), test_budget::unaccounted());
  const double bound = fresh.row_norm_bound();
  const double difference = (with - without).norm();
  // Snapping moves each entry by ≤ a grid step ≈ σ·2^-30 per release: ≤ 2·√D·σ·2^-30 in norm.
  const double snap = 2.0 * std::sqrt(static_cast<double>(fresh.dimension())) * sigma * std::ldexp(1.0, -29);
  CHECK(sigma == sigma_without);
  CHECK(difference <= bound + snap);
  CHECK(difference == Approx(fresh.packed_row(top).norm()).margin(snap));  // her row, computed against the prior
  // Her baseline blocks alone are √(2g² + 2β²) = √(global_share + baseline_share)·L = L/2 at the
  // default shares (all her ratings at the top); her V-step part against the prior's tiny init is small.
  CHECK(difference >= 0.5 * bound * (1.0 - 1e-9));
}

TEST_CASE("online: one charge at construction, none per user or release", "[online][privacy]") {
  privacy::PrivacyAccountant accountant(privacy::EpsDelta(3.0, 1e-5));
  Recommender rec(small_options(10, 3, 5), accountant);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK(accountant.spent().basic_epsilon == Approx(2.0).epsilon(1e-12));  // the target, charged once
  for (const Row& row : random_users(10, 10, 6)) rec.add(row);
  rec.flush();
  CHECK(rec.releases() == 4);
  CHECK(accountant.ledger().size() == 1);
  privacy::PrivacyAccountant small(privacy::EpsDelta(1.0, 1e-5));
  CHECK_THROWS_AS(Recommender(small_options(10, 3, 5), small), BudgetExhausted);
  CHECK(small.ledger().empty());
}

TEST_CASE("online: bad options are refused, naming the field", "[online]") {
  RecommenderOptions o = small_options(10, 3, 5);
  o.release_every = 0;
  CHECK_THROWS_WITH(Recommender(o, test_budget::unaccounted()), Catch::Contains("release_every"));
  o = small_options(0, 3, 5);
  CHECK_THROWS_WITH(Recommender(o, test_budget::unaccounted()), Catch::Contains("items"));
  o = small_options(10, 3, 5);
  o.strategy = stream::NoiseStrategy::blt;
  CHECK_THROWS_WITH(Recommender(o, test_budget::unaccounted()), Catch::Contains("horizon"));
  o = small_options(10, 3, 5);
  o.als.residual_bound = -1.0;
  CHECK_THROWS_WITH(Recommender(o, test_budget::unaccounted()), Catch::Contains("residual_bound"));
}

TEST_CASE("online: a BLT's horizon refuses users past it, nothing changed", "[online][privacy]") {
  RecommenderOptions o = small_options(8, 2, 5);
  o.strategy = stream::NoiseStrategy::blt;
  o.horizon = 3;
  Recommender rec(o, test_budget::unaccounted());
  const auto users = random_users(7, 8, 2);
  for (std::size_t i = 0; i < 6; ++i) rec.add(users[i]);
  CHECK(rec.releases() == 3);
  CHECK_THROWS_AS(rec.add(users[6]), BudgetExhausted);
  CHECK(rec.counts().users == 6);
}

TEST_CASE("online: a non-finite fold-in or rating is refused before it reaches the stream", "[online][privacy]") {
  // Item factors of sd 1e200 overflow the training fold-in's Gram (v·vᵀ = inf): its factor is NaN, and
  // a NaN norm passes a "norm > bound" clip. Refused, nothing added: the releases stay finite.
  RecommenderOptions o = small_options(4, 1, 3);
  o.als.init_sd = 1e200;
  Recommender overflowing(o, test_budget::unaccounted());
  const Row row = {{0, 5.0}, {1, 1.0}, {2, 4.0}};
  CHECK_THROWS_WITH(overflowing.add(row), Catch::Contains("not finite"));
  CHECK(overflowing.counts().users == 0);
  CHECK(overflowing.releases() == 0);
  // A NaN rating passes the scale's clip: fold_in_user refuses it too (the serving path).
  Recommender rec(small_options(4, 1, 3), test_budget::unaccounted());
  CHECK_THROWS_WITH(rec.serve(Row{{0, std::nan("")}}), Catch::Contains("not finite"));
  rec.add(row);  // a sane user after the refusal is added and released, finite
  CHECK(rec.releases() == 1);
  CHECK(rec.released().allFinite());
}

TEST_CASE("online: seeded runs are reproducible; later users are served by the latest release", "[online]") {
  const Index items = 12;
  const auto users = random_users(9, items, 8);
  const auto run = [&](std::vector<ItemModel>* models) {
    auto rec = std::make_unique<Recommender>(small_options(items, 3, 21), test_budget::unaccounted());
    for (const Row& row : users) {
      rec->add(row);
      if (models) models->push_back(rec->model());
    }
    return rec;
  };
  std::vector<ItemModel> models;
  const auto a = run(&models);
  const auto b = run(nullptr);
  CHECK(a->model().item_factors == b->model().item_factors);
  CHECK(a->model().item_bias == b->model().item_bias);
  CHECK(a->model().global_mean == b->model().global_mean);
  // Before the first release: the prior (the scale's centre, no biases, no factors).
  CHECK(models[0].global_mean == a->model().scale.center());
  CHECK(models[1].item_bias.isZero());
  CHECK(models[1].item_factors.isZero());
  // From then on, the model changes at each release and serve() folds in against it.
  CHECK(models[2].item_bias != models[1].item_bias);
  CHECK(models[5].item_bias != models[2].item_bias);
  CHECK(models[4].item_bias == models[3].item_bias);
  const Row her{{0, 4.5}, {3, 2.0}, {7, 5.0}};
  const UserModel served = a->serve(her);
  const UserModel direct = fold_in_user(a->model(), a->options().als.fold_in, her);
  CHECK(served.bias == direct.bias);
  CHECK(served.factor == direct.factor);
  const auto top = a->top_n(served, her, 4);
  REQUIRE(top.size() == 4);
  for (std::size_t k = 0; k < top.size(); ++k) {
    CHECK(top[k].item != 0);
    CHECK(top[k].item != 3);
    CHECK(top[k].item != 7);
    CHECK(top[k].prediction == a->predict(served, top[k].item));
    if (k > 0) CHECK(top[k].prediction <= top[k - 1].prediction);
  }
}

namespace {

// A replay in time order: users arrive at their first timestamp, are served from their training
// ratings, scored on their held-out ones, then added. Returns (served, global mean) squared-error
// sums and counts over the arrivals from `from` on.
struct Replay {
  double served = 0.0, global = 0.0;
  std::size_t count = 0;
  bool finite = true;
};

Replay replay(const SyntheticRatings& set, Index users, Index items, std::size_t from) {
  const RatingsSplit split = split_ratings(set.ratings, 0.2, 1);
  std::vector<Row> train(static_cast<std::size_t>(users)), test(static_cast<std::size_t>(users));
  for (const Rating& r : split.train) train[static_cast<std::size_t>(r.user)].emplace_back(r.item, r.value);
  for (const Rating& r : split.test) test[static_cast<std::size_t>(r.user)].emplace_back(r.item, r.value);
  double global_mean = 0.0;
  for (const Rating& r : split.train) global_mean += r.value;
  global_mean /= static_cast<double>(split.train.size());  // non-private, over the whole log: a strong reference
  std::vector<std::int64_t> first(static_cast<std::size_t>(users), INT64_MAX);
  for (std::size_t k = 0; k < set.ratings.size(); ++k) {
    auto& f = first[static_cast<std::size_t>(set.ratings[k].user)];
    f = std::min(f, set.timestamps[k]);
  }
  std::vector<Index> order(static_cast<std::size_t>(users));
  std::iota(order.begin(), order.end(), Index{0});
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return first[a] < first[b]; });
  RecommenderOptions o;
  o.items = items;
  o.als.target = privacy::EpsDelta(1.0, 1e-6);
  o.als.seed = 1;
  o.release_every = 50;
  Recommender rec(o, test_budget::unaccounted());
  Replay out;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto u = static_cast<std::size_t>(order[k]);
    const UserModel served = rec.serve(train[u]);
    for (const auto& [item, value] : test[u]) {
      const double e = rec.predict(served, item) - value, e0 = global_mean - value;
      out.finite = out.finite && std::isfinite(e);
      if (k >= from) out.served += e * e, out.global += e0 * e0, ++out.count;
    }
    rec.add(train[u]);
  }
  return out;
}

}  // namespace

TEST_CASE("online: an ml-latest-small-shaped stream in time order ends no worse than the global mean", "[online][utility][statistical-regression]") {
  const SyntheticRatings set = movielens_shaped_ratings(ml_latest_small, 1);
  // The second half of the arrivals (305 users, 12 releases before them), ε = 1.
  const Replay r = replay(set, ml_latest_small.users, ml_latest_small.items, 305);
  REQUIRE(r.finite);
  REQUIRE(r.count > 5000);
  const double served = std::sqrt(r.served / r.count), global = std::sqrt(r.global / r.count);
  INFO("served " << served << " global mean " << global << " over " << r.count << " ratings");
  // Measured (seed 1, release build): served 0.9747, global mean 1.0538, over 10,760 ratings. The
  // check is a strict ≤: the gap, 0.079, is about ten standard errors of an RMSE over ~10⁴ ratings
  // (√(2/n)·MSE/(2·RMSE) ≈ 0.007 for near-Gaussian errors), so only a real loss fails it.
  CHECK(served <= global);
}

TEST_CASE("online: the factors start from the init and learn the low-rank part when the noise allows", "[online][utility][statistical-regression]") {
  // test_dpam_als's strong rank-3 set (3 + b_i + c_j + u_iᵀv_j, sd of uᵀv ≈ 0.6, + N(0, 0.3²)):
  // 1500 users each rating ~60 of 200 items, arriving in index order, a release every 100, ε = 1000
  // (negligible noise). Scored on the last 500 arrivals: the served model against the same
  // release's baseline (rank 0: μ̂ + b̂_j + her own b_i). If factors never started (all-zero training
  // factors) the two would coincide.
  const Index users = 1500, items = 200, rank = 3;
  privacy::SeededNoiseSource source(21);
  Eigen::MatrixXd u(users, rank), v(items, rank);
  for (Index i = 0; i < users; ++i) u.row(i) << source.gaussian(), source.gaussian(), source.gaussian();
  for (Index j = 0; j < items; ++j) v.row(j) << source.gaussian(), source.gaussian(), source.gaussian();
  VectorXd bu(users), bv(items);
  for (Index i = 0; i < users; ++i) bu[i] = 0.3 * source.gaussian();
  for (Index j = 0; j < items; ++j) bv[j] = 0.4 * source.gaussian();
  u *= 0.6 / std::sqrt(std::sqrt(3.0));
  v *= 0.6 / std::sqrt(std::sqrt(3.0));
  RecommenderOptions o;
  o.items = items;
  o.als.rank = rank;
  o.als.baseline.scale = {0.5 - 3.0, 5.0 - 3.0};
  o.als.target = privacy::EpsDelta(1000.0, 1e-6);
  o.als.seed = 1;
  o.release_every = 100;
  Recommender rec(o, test_budget::unaccounted());
  double model = 0.0, baseline = 0.0;
  std::size_t count = 0;
  for (Index i = 0; i < users; ++i) {
    Row train, test;
    for (Index j = 0; j < items; ++j)
      if (source.uniform_below(200) < 60) {
        const double x = std::clamp(3.0 + bu[i] + bv[j] + u.row(i).dot(v.row(j)) + 0.3 * source.gaussian(), 0.5, 5.0) - 3.0;
        (source.uniform_below(10) == 0 ? test : train).emplace_back(j, x);
      }
    if (i >= 1000) {
      const UserModel served = rec.serve(train);
      ItemModel base = rec.model();
      base.item_factors.resize(items, 0);
      const UserModel own = fold_in_user(base, o.als.fold_in, train);
      for (const auto& [j, x] : test) {
        const double e = rec.predict(served, j) - x, b = base.predict(own, j) - x;
        model += e * e, baseline += b * b, ++count;
      }
    }
    rec.add(train);
  }
  model = std::sqrt(model / count), baseline = std::sqrt(baseline / count);
  INFO("model " << model << ", baseline " << baseline << " over " << count);
  // Measured (seed 1): model 0.4038, baseline 0.4629 over 3,012 ratings (batch DpamAls: 0.361 against
  // 0.471, test_dpam_als). The margin asked, 0.03, leaves 0.029 ≈ six standard errors of an RMSE over
  // 3,012 ratings (≈ RMSE/√(2n) ≈ 0.005) below the measured gap.
  CHECK(model < baseline - 0.03);
}

}  // namespace test_online_recommender
