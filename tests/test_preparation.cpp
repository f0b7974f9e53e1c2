// Preparation local to one user (preparation.hpp): the public catalogue, the keyed per-user split and
// cap. The privacy property is checked directly: a table with one more user (listed first, so that
// every other user's dense index moves) leaves every other user's test and kept ratings as they were.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/completion/preparation.hpp"
#include "stat_helpers.hpp"
#include "temp_dir.hpp"

namespace test_preparation {

using namespace dpstream;
using namespace dpstream::completion;
using Catch::Matchers::Contains;
using Eigen::Index;
using Ids = std::vector<std::int64_t>;
// (user id, item id, value) as in a file.
using External = std::tuple<std::int64_t, std::int64_t, double>;

namespace {

// A table from external triples, dense indices in first-seen order (as read_ratings makes them).
RatingsTable table_of(const std::vector<External>& lines) {
  RatingsTable t;
  for (const auto& [user, item, value] : lines) {
    auto u = t.user_index_of.find(user);
    if (u == t.user_index_of.end()) {
      u = t.user_index_of.emplace(user, t.users()).first;
      t.user_ids.push_back(user);
    }
    auto i = t.item_index_of.find(item);
    if (i == t.item_index_of.end()) {
      i = t.item_index_of.emplace(item, t.items()).first;
      t.item_ids.push_back(item);
    }
    t.ratings.push_back({u->second, i->second, value});
  }
  return t;
}

std::set<External> externals(const RatingsTable& t, const std::vector<Rating>& ratings) {
  std::set<External> out;
  for (const Rating& r : ratings)
    out.emplace(t.user_ids[static_cast<std::size_t>(r.user)], t.item_ids[static_cast<std::size_t>(r.item)], r.value);
  return out;
}

// 200 users (ids 1000..1199) with 30 ratings each over 100 items; `with_extra` lists user 7 first.
std::vector<External> population(bool with_extra) {
  std::vector<External> lines;
  if (with_extra)
    for (std::int64_t j = 0; j < 40; ++j) lines.emplace_back(7, 500 + j, 5.0);
  for (std::int64_t u = 0; u < 200; ++u)
    for (std::int64_t k = 0; k < 30; ++k) lines.emplace_back(1000 + u, (u * 7 + k * 3) % 100, static_cast<double>(k % 5 + 1));
  return lines;
}

std::set<External> without_user(std::set<External> s, std::int64_t user) {
  std::erase_if(s, [&](const External& e) { return std::get<0>(e) == user; });
  return s;
}

}  // namespace

TEST_CASE("split and cap: one more user changes no other user's partition or kept ratings", "[preparation]") {
  const RatingsTable d = table_of(population(false)), d_plus = table_of(population(true));
  REQUIRE(d_plus.user_index(1000) != d.user_index(1000));  // every dense index moved
  const RatingsSplit split = split_ratings_per_user(d, d.ratings, 0.2, 9);
  const RatingsSplit split_plus = split_ratings_per_user(d_plus, d_plus.ratings, 0.2, 9);
  CHECK(without_user(externals(d_plus, split_plus.test), 7) == externals(d, split.test));
  CHECK(without_user(externals(d_plus, split_plus.train), 7) == externals(d, split.train));
  const CappedRatings cap = cap_ratings_per_user_locally(d, split.train, 10, 9);
  const CappedRatings cap_plus = cap_ratings_per_user_locally(d_plus, split_plus.train, 10, 9);
  CHECK(without_user(externals(d_plus, cap_plus.kept), 7) == externals(d, cap.kept));
  CHECK(cap.users_capped == 200);  // every user has ~24 training ratings > 10
  // The library's shared-stream split does move the others (why the tool no longer uses it).
  CHECK(without_user(externals(d_plus, split_ratings(d_plus.ratings, 0.2, 9).test), 7) !=
        externals(d, split_ratings(d.ratings, 0.2, 9).test));
}

TEST_CASE("per-user split: the test share is the fraction, draws differ by seed and domain", "[preparation]") {
  // 6000 ratings, each in test with probability 0.2 independently: the count is Binomial(6000, 0.2),
  // mean 1200, sd √(6000·0.2·0.8) = 31. Accepting ±6 sd: a false alarm < 1e-8 per seed.
  const RatingsTable d = table_of(population(false));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const RatingsSplit split = split_ratings_per_user(d, d.ratings, 0.2, seed);
    CHECK(split.test.size() + split.train.size() == d.ratings.size());
    CHECK(std::abs(static_cast<double>(split.test.size()) - 1200.0) <= 6 * std::sqrt(6000 * 0.2 * 0.8));
  }
  CHECK(externals(d, split_ratings_per_user(d, d.ratings, 0.2, 1).test) !=
        externals(d, split_ratings_per_user(d, d.ratings, 0.2, 2).test));
  CHECK(rating_draw(RatingDraw::split, 1, 5, 6) != rating_draw(RatingDraw::cap, 1, 5, 6));
  CHECK(rating_draw(RatingDraw::split, 1, 5, 6) == rating_draw(RatingDraw::split, 1, 5, 6));
  for (const double bad : {1.0, -0.1, std::nan("")})
    CHECK_THROWS_NAMING(split_ratings_per_user(d, d.ratings, bad, 5), InvalidParameter,
                        Contains("test_fraction must be in [0, 1)"));
}

TEST_CASE("per-user cap: min(count, ξ) each, counted, and the kept subset is uniform", "[preparation]") {
  // 20000 users with 5 ratings each, ξ = 2: each user's kept pair uniform over the C(5,2) = 10 pairs.
  // Pearson's statistic over the 10 cells (2000 expected each) ≈ χ²_9; the bound at α = 1e-7 (≈ 65)
  // is where a sampler favouring one pair by 10% (≈ 200) fails.
  std::vector<External> lines;
  for (std::int64_t u = 0; u < 20000; ++u)
    for (std::int64_t j = 0; j < 5; ++j) lines.emplace_back(u, j, 1.0);
  const RatingsTable t = table_of(lines);
  const CappedRatings capped = cap_ratings_per_user_locally(t, t.ratings, 2, 2024);
  REQUIRE(capped.kept.size() == 40000);
  CHECK(capped.dropped == 60000);
  CHECK(capped.users_capped == 20000);
  std::array<double, 25> pair_count{};
  for (std::size_t k = 0; k < capped.kept.size(); k += 2) {
    REQUIRE(capped.kept[k].user == capped.kept[k + 1].user);  // input order
    ++pair_count[static_cast<std::size_t>(capped.kept[k].item * 5 + capped.kept[k + 1].item)];
  }
  double chi_square = 0;
  for (Index a = 0; a < 5; ++a)
    for (Index b = a + 1; b < 5; ++b) chi_square += std::pow(pair_count[static_cast<std::size_t>(a * 5 + b)] - 2000.0, 2) / 2000.0;
  INFO("chi-square over the 10 pairs: " << chi_square);
  CHECK(chi_square <= dpstream::testing::chi_square_upper(9, 1e-7));
  CHECK(cap_ratings_per_user_locally(t, t.ratings, 5, 1).dropped == 0);
  CHECK_THROWS_NAMING(cap_ratings_per_user_locally(t, t.ratings, 0, 3), InvalidParameter,
                      Contains("max_per_user must be >= 1, got 0"));
}

TEST_CASE("catalogue: read from a list or a CSV's first column; ratings outside it dropped and counted",
          "[preparation]") {
  dpstream::testing::TempDir dir;
  const std::string list = (dir.path / "items.txt").string(), csv = (dir.path / "movies.csv").string();
  dpstream::testing::write_bytes(list, "# public items\n30\n\n10\r\n20\n");
  dpstream::testing::write_bytes(csv, "movieId,title,genres\n10,\"A, the film\",Drama\n40,B,Comedy\n");
  CHECK(read_item_catalogue(list) == Ids{30, 10, 20});
  CHECK(read_item_catalogue(csv) == Ids{10, 40});
  const RatingsTable t = table_of({{1, 10, 4.0}, {1, 99, 2.0}, {2, 20, 3.0}, {3, 99, 5.0}});
  const CataloguedRatings kept = restrict_to_catalogue(t, read_item_catalogue(list));
  CHECK(kept.dropped == 2);
  CHECK(kept.table.item_ids == Ids{30, 10, 20});  // the catalogue, item 30 unrated but present
  CHECK(kept.table.items() == 3);
  CHECK(kept.table.users() == 3);  // user 3 kept, without ratings
  CHECK(externals(kept.table, kept.table.ratings) == std::set<External>{{1, 10, 4.0}, {2, 20, 3.0}});
  CHECK(kept.table.item_index(20) == Index{2});

  const std::string twice = (dir.path / "twice.txt").string(), bad = (dir.path / "bad.txt").string(),
                    empty = (dir.path / "empty.txt").string();
  dpstream::testing::write_bytes(twice, "1\n2\n1\n");
  dpstream::testing::write_bytes(bad, "1\nx2\n");
  dpstream::testing::write_bytes(empty, "itemId\n# nothing\n");
  CHECK_THROWS_NAMING(read_item_catalogue(twice), CorruptInput, Contains("twice.txt:3: item 1 is listed twice (first on line 1)"));
  CHECK_THROWS_NAMING(read_item_catalogue(bad), CorruptInput, Contains("bad.txt:2: 'x2' is not an item id"));
  CHECK_THROWS_NAMING(read_item_catalogue(empty), CorruptInput, Contains("no item id"));
  CHECK_THROWS_NAMING(read_item_catalogue((dir.path / "missing").string()), CorruptInput, Contains("cannot open"));

  // The line reader's byte-order mark rule: UTF-8's dropped (the first id kept, not taken for a
  // header), UTF-16's refused by name.
  const std::string bom8 = (dir.path / "bom8.txt").string(), bom16 = (dir.path / "bom16.txt").string();
  dpstream::testing::write_bytes(bom8, "\xEF\xBB\xBF" "7\n8\n");
  dpstream::testing::write_bytes(bom16, std::string("\xFF\xFE" "7\0\n\0", 6));
  CHECK(read_item_catalogue(bom8) == Ids{7, 8});
  CHECK_THROWS_NAMING(read_item_catalogue(bom16), CorruptInput, Contains("bom16.txt") && Contains("UTF-16 byte-order mark"));
}

}  // namespace test_preparation
