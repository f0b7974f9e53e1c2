#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/completion/ratings_io.hpp"
#include "dpstream/io/row_log.hpp"
#include "stat_helpers.hpp"
#include "temp_dir.hpp"

namespace test_ratings_io {

using namespace dpstream::completion;
using dpstream::CorruptInput;
using dpstream::InvalidParameter;
using dpstream::testing::TempDir;
using dpstream::testing::write_bytes;
using Catch::Matchers::Contains;
using Eigen::Index;

namespace {

using Triple = std::tuple<Index, Index, double>;
using Ids = std::vector<std::int64_t>;

std::vector<Triple> triples(const std::vector<Rating>& ratings) {
  std::vector<Triple> out;
  for (const Rating& r : ratings) out.emplace_back(r.user, r.item, r.value);
  return out;
}

std::vector<double> values(const std::vector<Rating>& ratings) {
  std::vector<double> out;
  for (const Rating& r : ratings) out.push_back(r.value);
  return out;
}

// A file in a fresh directory, read back with the given options.
struct Fixture {
  TempDir dir;
  std::string write(const std::string& bytes, const std::string& name = "ratings.txt") const {
    const std::string path = dir.file(name);
    write_bytes(path, bytes);
    return path;
  }
  RatingsTable read(const std::string& bytes, RatingsFormat format = RatingsFormat::automatic,
                    bool skip_malformed = false) const {
    return read_ratings(write(bytes), {format, skip_malformed});
  }
};

// Ratings numbered by position: value k at position k, so where each one went can be told.
std::vector<Rating> numbered(Index count, Index users) {
  std::vector<Rating> out;
  for (Index k = 0; k < count; ++k) out.push_back({k % users, k, static_cast<double>(k)});
  return out;
}

Eigen::VectorXi indices(std::initializer_list<int> list) {
  Eigen::VectorXi v(static_cast<Index>(list.size()));
  std::copy(list.begin(), list.end(), v.data());
  return v;
}
Eigen::VectorXd doubles(std::initializer_list<double> list) {
  Eigen::VectorXd v(static_cast<Index>(list.size()));
  std::copy(list.begin(), list.end(), v.data());
  return v;
}

}  // namespace

TEST_CASE("ratings format names round trip; unknown text refused", "[ratings_io]") {
  for (const char* name : {"auto", "csv", "tsv", "colons", "pb"}) CHECK(std::string(to_string(parse_ratings_format(name))) == name);
  CHECK(parse_ratings_format("colons") == RatingsFormat::double_colon);
  CHECK_THROWS_NAMING(parse_ratings_format("json"), InvalidParameter, Contains("\"json\""));
}

TEST_CASE("csv: header, comments, blank lines, dense indices in first-seen order", "[ratings_io]") {
  Fixture f;
  const std::string text =
      "# MovieLens latest\n"
      "userId,movieId,rating,timestamp\n"
      "1,31,2.5,1260759144\n"
      "\n"
      "1, 1029 ,3.0,1260759179\n"
      "7,31,4\n";
  for (const RatingsFormat format : {RatingsFormat::csv, RatingsFormat::automatic}) {
    const RatingsTable t = f.read(text, format);
    CHECK(t.user_ids == Ids{1, 7});
    CHECK(t.item_ids == Ids{31, 1029});
    CHECK(triples(t.ratings) == std::vector<Triple>{{0, 0, 2.5}, {0, 1, 3.0}, {1, 0, 4.0}});
    CHECK(t.lines == 3);
    CHECK(t.skipped == 0);
    CHECK(t.timestamps.empty());  // the last line has none: all or nothing
    CHECK(t.user_index(7) == Index{1});
    CHECK(t.item_index(1029) == Index{1});
    CHECK_FALSE(t.user_index(31).has_value());
  }
}

TEST_CASE("tsv: any run of spaces and tabs separates; \\r\\n endings; no final newline", "[ratings_io]") {
  Fixture f;
  const std::string text = "196\t242\t3\t881250949\r\n  186  302 \t3\t891717742\r\n22\t377 1\r\n-5 242 -1.5";
  for (const RatingsFormat format : {RatingsFormat::tsv, RatingsFormat::automatic}) {
    const RatingsTable t = f.read(text, format);
    CHECK(t.user_ids == Ids{196, 186, 22, -5});
    CHECK(t.item_ids == Ids{242, 302, 377});
    CHECK(triples(t.ratings) == std::vector<Triple>{{0, 0, 3.0}, {1, 1, 3.0}, {2, 2, 1.0}, {3, 0, -1.5}});
  }
}

TEST_CASE("double colon (ratings.dat) with \\r\\n endings", "[ratings_io]") {
  Fixture f;
  const std::string text = "1::1193::5::978300760\r\n1::661::3::978302109\r\n# note\r\n2::1193::4::978298413\r\n";
  for (const RatingsFormat format : {RatingsFormat::double_colon, RatingsFormat::automatic}) {
    const RatingsTable t = f.read(text, format);
    CHECK(t.user_ids == Ids{1, 2});
    CHECK(t.item_ids == Ids{1193, 661});
    CHECK(triples(t.ratings) == std::vector<Triple>{{0, 0, 5.0}, {0, 1, 3.0}, {1, 0, 4.0}});
    CHECK(t.timestamps == Ids{978300760, 978302109, 978298413});
  }
}

TEST_CASE("timestamps: kept parallel to the ratings, through skips and keep_top_items", "[ratings_io]") {
  Fixture f;
  const RatingsTable t = f.read("1,10,4,100\n1,11,x,101\n2,11,3,102\n2,10,5,103\n", RatingsFormat::csv, true);
  CHECK(t.skipped == 1);
  CHECK(t.timestamps == Ids{100, 102, 103});
  const RatingsTable top = keep_top_items(t, 1);
  REQUIRE(top.ratings.size() == 2);
  CHECK(top.timestamps == Ids{100, 103});
}

TEST_CASE("a table filled by hand (no id maps) still answers look-ups", "[ratings_io]") {
  RatingsTable t;
  t.user_ids = {5, 6};
  t.item_ids = {9};
  CHECK(t.user_index(6) == Index{1});
  CHECK(t.item_index(9) == Index{0});
  CHECK_FALSE(t.user_index(9).has_value());
}

TEST_CASE("every malformed line is named PATH:LINE with what is wrong", "[ratings_io]") {
  struct BadLine {
    const char* text;
    RatingsFormat format;
    int line;
    const char* says;
  };
  const RatingsFormat csv = RatingsFormat::csv, tsv = RatingsFormat::tsv, colons = RatingsFormat::double_colon;
  const BadLine cases[] = {
      {"1,2\n", csv, 1, "expected 3 or 4 fields (user, item, rating[, timestamp]) separated by ',', got 2"},
      {"1,2,3,4,5\n", csv, 1, "got 5"},
      {"1 2 3\n4 5\n", tsv, 2, "separated by spaces/tabs, got 2"},
      {"1::2::3\n3::4\n", colons, 2, "separated by '::', got 2"},
      {"1,2,3\nx,2,3\n", csv, 2, "user \"x\" is not an integer"},
      {"1,2,3\n1,2.5,3\n", csv, 2, "item \"2.5\" is not an integer"},
      {"1,2,3\n1,3,abc\n", csv, 2, "rating \"abc\" is not a number"},
      {"1,2,3\n1,3,4,t\n", csv, 2, "timestamp \"t\" is not an integer"},
      {"1,2,3,\n", csv, 1, "timestamp \"\" is not an integer"},
      {"# c\n\n1,2,nan\n", csv, 3, "rating \"nan\" is not finite (nan)"},
      {"1,2,1e999\n", csv, 1, "rating \"1e999\" is not finite (inf)"},
      {"99999999999999999999,2,3\n", csv, 1, "user \"99999999999999999999\" is outside int64"},
      {"1\t-99999999999999999999\t3\n", tsv, 1, "item \"-99999999999999999999\" is outside int64"},
      {"1,2,3\nuserId,movieId,rating\n", csv, 2, "a header is allowed only as the first non-comment line"},
      {"user item rating\n1 2 3\n", tsv, 1, "this format has no header line"},
  };
  Fixture f;
  for (const BadLine& c : cases) {
    INFO(c.text);
    const std::string path = f.write(c.text);
    CHECK_THROWS_NAMING(read_ratings(path, {c.format, false}), CorruptInput,
                        Contains(path + ":" + std::to_string(c.line) + ": ") && Contains(c.says));
  }
  // A NUL byte in a field is shown as \x00, and the message does not end there (what() is a C string).
  const std::string nul = f.write(std::string("1,2,3\n1,3,a\0b\n", 14));
  CHECK_THROWS_NAMING(read_ratings(nul, {csv, false}), CorruptInput,
                      Contains(nul + ":2: ") && Contains("rating \"a\\x00b\" is not a number"));
}

TEST_CASE("duplicates name both lines; skip_malformed counts and keeps the first reason", "[ratings_io]") {
  Fixture f;
  const std::string path = f.write("1,10,4\n2,10,3\n1,10,5\n");
  CHECK_THROWS_NAMING(read_ratings(path), CorruptInput,
                      Contains(path + ":3: ") && Contains("user 1, item 10 rated twice: lines 1 and 3"));

  const std::string mixed = f.write(
      "1,10,4\n"   // 1 kept
      "1,x,4\n"    // 2 bad item
      "2,10,3\n"   // 3 kept
      "2,20\n"     // 4 two fields
      "1,10,5\n"   // 5 duplicate of line 1: the later one is skipped
      "3,30,1\n",  // 6 kept
      "mixed.csv");
  const RatingsTable t = read_ratings(mixed, {RatingsFormat::csv, true});
  CHECK(triples(t.ratings) == std::vector<Triple>{{0, 0, 4.0}, {1, 0, 3.0}, {2, 1, 1.0}});
  CHECK(t.item_ids == Ids{10, 30});  // item 20 was only on a skipped line
  CHECK(t.lines == 6);
  CHECK(t.skipped == 3);
  CHECK(t.first_skip_reason == mixed + ":2: item \"x\" is not an integer");

  const std::string all_bad = f.write("1,x,4\n2,y\n", "bad.csv");
  CHECK_THROWS_NAMING(read_ratings(all_bad, {RatingsFormat::csv, true}), CorruptInput,
                      Contains(all_bad + ": no rating: all 2 data lines were malformed (first: " + all_bad + ":1: "));
}

TEST_CASE("empty, rating-less and unreadable files are refused naming the path", "[ratings_io]") {
  Fixture f;
  const std::string empty = f.write("", "empty.csv");
  CHECK_THROWS_NAMING(read_ratings(empty), CorruptInput, Contains(empty + ": empty file"));
  const std::string comments = f.write("# a\n\n  \n", "comments.csv");
  CHECK_THROWS_NAMING(read_ratings(comments), CorruptInput, Contains(comments + ": no rating (3 lines"));
  const std::string header_only = f.write("userId,movieId,rating\n", "header.csv");
  CHECK_THROWS_NAMING(read_ratings(header_only), CorruptInput, Contains(header_only + ": no rating"));
  const std::string missing = f.dir.file("missing.csv");
  CHECK_THROWS_NAMING(read_ratings(missing), CorruptInput,
                      Contains(missing + ": cannot open") && Contains(std::strerror(ENOENT)));
  CHECK_THROWS_NAMING(read_ratings(f.dir.path.string()), CorruptInput, Contains(std::strerror(EISDIR)));
}

TEST_CASE("row log: sparse rows read back as ratings; dense rows refused", "[ratings_io]") {
  Fixture f;
  dpstream::io::RowLogHeader header;
  header.dimension = 10;
  const std::string path = f.dir.file("ratings.dat");  // a name that says nothing: detected by the magic
  {
    dpstream::io::RowLogWriter writer(path, header);
    writer.write_sparse(indices({1, 4}), doubles({5.0, -2.5}), 42);  // user 42
    writer.write_sparse(indices({4}), doubles({3.0}));                // no id: user = position 1
    writer.write_sparse(indices({}), doubles({}), 7);                 // no ratings: no user
    writer.write_sparse(indices({0, 9}), doubles({1.0, 2.0}), 42);    // user 42 again, other items
    writer.close();
  }
  for (const RatingsFormat format : {RatingsFormat::row_log, RatingsFormat::automatic}) {
    const RatingsTable t = read_ratings(path, {format, false});
    CHECK(t.user_ids == Ids{42, 1});
    CHECK(t.item_ids == Ids{1, 4, 0, 9});
    CHECK(triples(t.ratings) == std::vector<Triple>{{0, 0, 5.0}, {0, 1, -2.5}, {1, 1, 3.0}, {0, 2, 1.0}, {0, 3, 2.0}});
    CHECK(t.lines == 5);
  }

  const std::string dense = f.dir.file("dense.pb");
  {
    dpstream::io::RowLogWriter writer(dense, header);
    writer.write_sparse(indices({2}), doubles({4.0}), 1);
    writer.write_dense(Eigen::VectorXd::Ones(10), 2);
    writer.close();
  }
  for (const bool skip : {false, true})  // a feature log is not damaged ratings: refused either way
    CHECK_THROWS_NAMING(read_ratings(dense, {RatingsFormat::automatic, skip}), CorruptInput,
                        Contains(dense + ": row 1: a dense row (10 values) is not a set of ratings"));

  const std::string bad = f.dir.file("bad.pb");
  {
    dpstream::io::RowLogWriter writer(bad, header);
    writer.write_sparse(indices({3}), doubles({4.0}), 5);
    writer.write_sparse(indices({1, 2}), doubles({std::numeric_limits<double>::quiet_NaN(), 1.0}), 6);
    writer.write_sparse(indices({3}), doubles({2.0}), 5);
    writer.write_sparse(indices({3}), doubles({2.0}), std::uint64_t{1} << 63);
    writer.close();
  }
  CHECK_THROWS_NAMING(read_ratings(bad), CorruptInput, Contains(bad + ": row 1: item 1: rating nan is not finite"));
  const RatingsTable t = read_ratings(bad, {RatingsFormat::row_log, true});
  CHECK(triples(t.ratings) == std::vector<Triple>{{0, 0, 4.0}, {1, 1, 1.0}});
  CHECK(t.skipped == 3);
  CHECK(t.lines == 5);
  CHECK(t.first_skip_reason == bad + ": row 1: item 1: rating nan is not finite");

  const std::string dup = f.dir.file("dup.pb");
  {
    dpstream::io::RowLogWriter writer(dup, header);
    writer.write_sparse(indices({3}), doubles({4.0}), 5);
    writer.write_sparse(indices({3}), doubles({2.0}), 5);
    writer.close();
  }
  CHECK_THROWS_NAMING(read_ratings(dup), CorruptInput,
                      Contains(dup + ": row 1: user 5, item 3 rated twice: rows 0 and 1"));
  const std::string huge_id = f.dir.file("huge.pb");
  {
    dpstream::io::RowLogWriter writer(huge_id, header);
    writer.write_sparse(indices({3}), doubles({4.0}), std::uint64_t{1} << 63);
    writer.close();
  }
  CHECK_THROWS_NAMING(read_ratings(huge_id), CorruptInput,
                      Contains(huge_id + ": row 0: user id 9223372036854775808 is outside int64"));
}

TEST_CASE("keep_top_items: most-rated first, ties to the smaller index, re-indexed", "[ratings_io]") {
  Fixture f;
  // item counts: 10 → 2, 20 → 3, 30 → 2, 40 → 1 (dense 0, 1, 2, 3 by first appearance)
  const RatingsTable t = f.read("1,10,1\n1,20,2\n2,20,3\n2,30,4\n3,10,5\n3,20,1\n4,30,2\n5,40,3\n");
  const RatingsTable top = keep_top_items(t, 2);
  CHECK(top.item_ids == Ids{20, 10});  // 10 beats 30 (both 2 ratings): smaller dense index
  CHECK(triples(top.ratings) == std::vector<Triple>{{0, 1, 1.0}, {0, 0, 2.0}, {1, 0, 3.0}, {2, 1, 5.0}, {2, 0, 1.0}});
  CHECK(top.user_ids == t.user_ids);  // users 4 and 5 kept without ratings
  CHECK(top.item_index(20) == Index{0});
  CHECK(top.item_index(10) == Index{1});
  CHECK_FALSE(top.item_index(30).has_value());
  CHECK(top.user_index(5) == Index{4});
  CHECK(top.lines == t.lines);

  const RatingsTable all = keep_top_items(t, 100);
  CHECK(all.item_ids == Ids{20, 10, 30, 40});
  CHECK(all.ratings.size() == t.ratings.size());
  CHECK_THROWS_NAMING(keep_top_items(t, 0), InvalidParameter, Contains("count must be >= 1, got 0"));
}

TEST_CASE("keep_items: listed ids in list order; unknown or repeated ids refused", "[ratings_io]") {
  Fixture f;
  const RatingsTable t = f.read("1,10,1\n1,20,2\n2,20,3\n2,30,4\n3,10,5\n5,40,3\n");
  const RatingsTable kept = keep_items(t, {40, 10});
  CHECK(kept.item_ids == Ids{40, 10});
  CHECK(triples(kept.ratings) == std::vector<Triple>{{0, 1, 1.0}, {2, 1, 5.0}, {3, 0, 3.0}});
  CHECK(kept.item_index(40) == Index{0});
  CHECK_THROWS_NAMING(keep_items(t, {10, 99}), InvalidParameter, Contains("item id 99 is not in the table"));
  CHECK_THROWS_NAMING(keep_items(t, {10, 10}), InvalidParameter, Contains("item id 10 is listed twice"));
}

TEST_CASE("split_ratings: sizes, disjoint and covering, input order, deterministic per seed", "[ratings_io]") {
  for (const auto& [count, fraction, expected] :
       {std::tuple{1000, 0.25, 250}, std::tuple{7, 0.5, 4}, std::tuple{10, 0.0, 0}, std::tuple{3, 0.9, 3}}) {
    const std::vector<Rating> ratings = numbered(count, 5);
    const RatingsSplit split = split_ratings(ratings, fraction, 11);
    CHECK(split.test.size() == static_cast<std::size_t>(expected));
    const std::vector<double> test = values(split.test), train = values(split.train);
    CHECK(std::is_sorted(test.begin(), test.end()));  // input order, and no position twice
    CHECK(std::adjacent_find(test.begin(), test.end()) == test.end());
    CHECK(std::is_sorted(train.begin(), train.end()));
    std::vector<double> both;
    std::merge(test.begin(), test.end(), train.begin(), train.end(), std::back_inserter(both));
    CHECK(both == values(ratings));  // every rating in exactly one part
  }
  const std::vector<Rating> ratings = numbered(1000, 7);
  CHECK(values(split_ratings(ratings, 0.3, 5).test) == values(split_ratings(ratings, 0.3, 5).test));
  CHECK(values(split_ratings(ratings, 0.3, 5).test) != values(split_ratings(ratings, 0.3, 6).test));
  for (const double bad : {1.0, -0.1, std::nan("")})
    CHECK_THROWS_NAMING(split_ratings(ratings, bad, 5), InvalidParameter, Contains("test_fraction must be in [0, 1)"));
}

TEST_CASE("split_ratings: test membership is uniform over positions", "[ratings_io]") {
  // N = 10000 ratings, K = 3000 go to test. If the test set is a uniform 3000-subset, the number X
  // of test ratings among the first 5000 positions is hypergeometric: E X = 3000·5000/10000 = 1500,
  // Var X = 3000·½·½·(10000 − 3000)/(10000 − 1) ≈ 525, below the binomial 3000·½·½ = 750 (sd 27.4).
  // Accepting |X − 1500| ≤ 5 binomial sd = 137 is then ≥ 5.9 true sd wide: a false alarm has
  // probability < 1e-8 per seed. A split biased to either end (e.g. the last K) misses by ~1500.
  const std::vector<Rating> ratings = numbered(10000, 100);
  const double binomial_sd = std::sqrt(3000 * 0.5 * 0.5);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const RatingsSplit split = split_ratings(ratings, 0.3, seed);
    REQUIRE(split.test.size() == 3000);
    const auto first_half = std::count_if(split.test.begin(), split.test.end(), [](const Rating& r) { return r.value < 5000; });
    INFO("seed " << seed << ": " << first_half << " of 3000 test ratings in the first half");
    CHECK(std::abs(static_cast<double>(first_half) - 1500.0) <= 5 * binomial_sd);
  }
}

TEST_CASE("cap_ratings_per_user: min(count, ξ) per user, counted, deterministic per seed", "[ratings_io]") {
  // user 0 has 10 ratings, user 1 has 3, user 2 has 5, interleaved; value = position
  std::vector<Rating> ratings;
  const Index users_in_order[] = {0, 1, 0, 2, 0, 0, 1, 2, 0, 2, 0, 0, 1, 2, 0, 0, 2, 0};
  for (Index user : users_in_order) ratings.push_back({user, static_cast<Index>(ratings.size()), static_cast<double>(ratings.size())});

  const CappedRatings capped = cap_ratings_per_user(ratings, 4, 3);
  std::map<Index, int> per_user;
  for (const Rating& r : capped.kept) ++per_user[r.user];
  CHECK(per_user == std::map<Index, int>{{0, 4}, {1, 3}, {2, 4}});
  CHECK(capped.dropped == 7);
  CHECK(capped.users_capped == 2);
  const std::vector<double> kept = values(capped.kept);
  CHECK(std::is_sorted(kept.begin(), kept.end()));  // input order
  for (const Rating& r : capped.kept) CHECK(ratings[static_cast<std::size_t>(r.value)].user == r.user);

  CHECK(values(cap_ratings_per_user(ratings, 4, 3).kept) == kept);
  CHECK(values(cap_ratings_per_user(ratings, 4, 4).kept) != kept);
  const CappedRatings loose = cap_ratings_per_user(ratings, 10, 3);
  CHECK(loose.kept.size() == ratings.size());
  CHECK(loose.dropped == 0);
  CHECK(loose.users_capped == 0);
  CHECK_THROWS_NAMING(cap_ratings_per_user(ratings, 0, 3), InvalidParameter, Contains("max_per_user must be >= 1, got 0"));
  CHECK_THROWS_NAMING(cap_ratings_per_user({{-1, 0, 1.0}}, 2, 3), InvalidParameter,
                      Contains("rating 0 has user index -1 < 0"));
}

TEST_CASE("cap_ratings_per_user: the kept subset is uniform", "[ratings_io]") {
  // 20000 users with 5 ratings each, ξ = 2: each user's kept pair should be uniform over the
  // C(5,2) = 10 pairs, independently. Pearson's statistic over the 10 cells (expected 2000 each) is
  // then ≈ χ²_9 (the approximation is tight at such counts); Laurent–Massart's bound at α = 1e-7 is
  // ≈ 65, where a sampler that favoured one pair by 10% would give ≈ 200.
  constexpr Index users = 20000, per_user = 5;
  std::vector<Rating> ratings;
  for (Index u = 0; u < users; ++u)
    for (Index j = 0; j < per_user; ++j) ratings.push_back({u, j, 0.0});
  const CappedRatings capped = cap_ratings_per_user(ratings, 2, 2024);
  REQUIRE(capped.kept.size() == static_cast<std::size_t>(2 * users));
  std::array<double, per_user * per_user> pair_count{};
  for (std::size_t k = 0; k < capped.kept.size(); k += 2) {
    REQUIRE(capped.kept[k].user == capped.kept[k + 1].user);
    ++pair_count[static_cast<std::size_t>(capped.kept[k].item * per_user + capped.kept[k + 1].item)];
  }
  const double expected = users / 10.0;
  double chi_square = 0;
  for (Index a = 0; a < per_user; ++a)
    for (Index b = a + 1; b < per_user; ++b) {
      const double d = pair_count[static_cast<std::size_t>(a * per_user + b)] - expected;
      chi_square += d * d / expected;
    }
  INFO("chi-square over the 10 pairs: " << chi_square);
  CHECK(chi_square <= dpstream::testing::chi_square_upper(9, 1e-7));
}

TEST_CASE("a generated 1M-line u.data parses; line numbers hold across read chunks", "[ratings_io]") {
  // users k/100 + 1, items (k mod 100)·7 + 3: every pair once, then line 500000's pair again (the
  // file is ~25 MB, read in 4 MB chunks: the duplicate's message checks the line count across them)
  constexpr int lines = 1000000;
  std::string text;
  text.reserve(static_cast<std::size_t>(lines) * 28);
  char buffer[64];
  for (int k = 0; k < lines; ++k) {
    char* end = buffer;
    for (const long field : {long{k / 100 + 1}, long{k % 100 * 7 + 3}, long{1 + k % 5}, 881250949L + k}) {
      end = std::to_chars(end, buffer + sizeof buffer, field).ptr;
      *end++ = '\t';
    }
    end[-1] = '\n';
    text.append(buffer, end);
  }
  text += "5000\t696\t4\t0\n";  // line 500000 is k = 499999: user 5000, item 99·7 + 3
  Fixture f;
  const std::string path = f.write(text, "u.data");
  const auto start = std::chrono::steady_clock::now();
  const RatingsTable t = read_ratings(path, {RatingsFormat::automatic, true});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("parsed " << lines << " lines in " << seconds << " s");
  CHECK(t.ratings.size() == static_cast<std::size_t>(lines));
  CHECK(t.skipped == 1);
  CHECK(t.first_skip_reason == path + ":1000001: user 5000, item 696 rated twice: lines 500000 and 1000001");
  CHECK(t.users() == lines / 100);
  CHECK(t.items() == 100);
  CHECK(t.user_ids.back() == lines / 100);
  CHECK(triples({t.ratings[123457]}) == std::vector<Triple>{{1234, 57, 1 + 123457 % 5}});
}

}  // namespace test_ratings_io
