#include "recommend/data.hpp"
#include "recommend/resources.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "dpstream/base/errors.hpp"
#include "dpstream/completion/preparation.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::tools::recommend {

using namespace completion;

namespace {

void read_file(const RecommendSettings& s, Prepared& p) {
  if (!std::ifstream(s.input)) throw UsageError("cannot open --input " + s.input + ": " + std::strerror(errno));
  ReadRatingsOptions o;
  o.skip_malformed = s.skip_malformed;
  try {
    o.format = parse_ratings_format(s.format);
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());
  }
  p.table = read_ratings(s.input, o);  // CorruptInput "PATH:LINE: what" stops the run (exit 1)
  p.description = s.input;
  if (!s.catalogue.empty()) {
    if (!std::ifstream(s.catalogue))
      throw UsageError("cannot open --catalogue " + s.catalogue + ": " + std::strerror(errno));
    const std::vector<std::int64_t> items = read_item_catalogue(s.catalogue);  // CorruptInput: exit 1
    CataloguedRatings kept = restrict_to_catalogue(p.table, items);
    p.table = std::move(kept.table);
    p.dropped_outside_catalogue = kept.dropped;
    p.catalogue = "public catalogue " + s.catalogue + " (" + std::to_string(items.size()) + " items)";
  } else {
    p.catalogue = s.items_public ? "the input's rated items, declared public by --items-public"
                                 : "the input's rated items (a non-private run)";
  }
}

// The MovieLens-shaped presets (synthetic_ratings.hpp): their own size, rank and time span.
void generate_shaped(const RecommendSettings& s, Prepared& p) {
  const bool small = s.synthetic == "ml-latest-small";
  const completion::MovieLensShape& shape = small ? ml_latest_small : ml_10m;
  p.truth = movielens_shaped_ratings(shape, s.split_seed);
  std::ostringstream d;
  d << "generated MovieLens " << (small ? "latest-small" : "10M") << "-shaped set: " << shape.users << " users x "
    << shape.items << " items, " << p.truth->ratings.size() << " half-star ratings 0.5..5, rank " << shape.rank
    << ", power-law popularity and activity (>= " << shape.min_per_user << " each), timestamped";
  p.description = d.str();
}

void generate(const RecommendSettings& s, Prepared& p) {
  const bool rank_one = s.synthetic == "seed001", movielens = s.synthetic == "movielens";
  const bool shaped = s.synthetic == "ml-latest-small" || s.synthetic == "ml-10m";
  const Index users = s.synthetic_users ? s.synthetic_users : (rank_one ? 100000 : movielens ? 943 : 200);
  const Index items = s.synthetic_items ? s.synthetic_items : (rank_one ? 100 : movielens ? 1682 : 200);
  try {
    const Index movielens_ratings = std::llround(static_cast<double>(users) * (100000.0 / 943.0));
    if (shaped) generate_shaped(s, p);
    else
      p.truth = rank_one    ? rank_one_ratings(users, items, s.per_user, s.split_seed)
                : movielens ? movielens_like_ratings(users, items, movielens_ratings, s.synthetic_rank, s.split_seed)
                            : uniform_factor_ratings(users, items, s.synthetic_rank, s.observed, s.split_seed);
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());
  }
  p.table.ratings = p.truth->ratings;
  p.table.timestamps = p.truth->timestamps;  // the ml-* sets' (empty for the others)
  for (Index i = 0; i < p.truth->user_factors.rows(); ++i) p.table.user_ids.push_back(i);
  for (Index j = 0; j < p.truth->item_factors.rows(); ++j) p.table.item_ids.push_back(j);
  p.catalogue = "the generated set's items 0.." + std::to_string(p.table.items() - 1) + " (public)";
  if (shaped) return;
  std::ostringstream d;
  if (rank_one)
    d << "generated seed-001 set: rank one, " << users << " users x " << items << " items, " << s.per_user
      << " ratings each";
  else if (movielens)
    d << "generated MovieLens-shaped set: " << users << " users x " << items << " items, " << p.truth->ratings.size()
      << " ratings 1..5, rank " << s.synthetic_rank;
  else
    d << "generated seed-004 set: U, V ~ U[0,1], rank " << s.synthetic_rank << ", " << users << " x " << items
      << ", " << s.observed * 100 << "% observed";
  p.description = d.str();
}

// Each user's first timestamp; empty without timestamps.
std::vector<std::int64_t> arrivals(const RatingsTable& table) {
  if (table.timestamps.empty() || table.timestamps.size() != table.ratings.size()) return {};
  std::vector<std::int64_t> first(static_cast<std::size_t>(table.users()), std::numeric_limits<std::int64_t>::max());
  for (std::size_t k = 0; k < table.ratings.size(); ++k) {
    std::int64_t& f = first[static_cast<std::size_t>(table.ratings[k].user)];
    f = std::min(f, table.timestamps[k]);
  }
  return first;
}

}  // namespace

Prepared prepare(const RecommendSettings& s) {
  Prepared p;
  check_generated_set(s);  // its size against --max-memory, before it is generated
  if (s.generated()) generate(s, p);
  else read_file(s, p);
  const double center = center_of(s);
  if (center != 0.0)
    for (Rating& r : p.table.ratings) r.value -= center;
  if (s.top_items > 0) p.table = keep_top_items(p.table, s.top_items);
  p.arrival = arrivals(p.table);
  RatingsSplit split = split_ratings_per_user(p.table, p.table.ratings, s.test_fraction, s.split_seed);
  p.test = std::move(split.test);
  if (const Index cap = effective_cap(s); cap > 0) {
    CappedRatings capped = cap_ratings_per_user_locally(p.table, split.train, cap, s.split_seed);
    p.train = std::move(capped.kept);
    p.dropped_by_cap = capped.dropped;
    p.users_capped = capped.users_capped;
  } else {
    p.train = std::move(split.train);
  }
  return p;
}

std::vector<Index> resolve_users(const Prepared& data, const std::vector<RecommendId>& ids) {
  std::vector<Index> users;
  for (const RecommendId& id : ids) {
    const std::optional<Index> user =
        data.truth ? (id.id >= 0 && id.id < data.users() ? std::optional<Index>(id.id) : std::nullopt)
                   : data.table.user_index(id.id);
    if (!user) throw UsageError("--recommend: user " + id.text + " is not in the input");
    users.push_back(*user);
  }
  return users;
}

std::string data_text(const RecommendSettings& s, const Prepared& data) {
  char buf[512];
  std::string t = "input: " + data.description + "; ratings centred at " + base::format_value(center_of(s)) +
                  ", |centred rating| bound " + base::format_value(rating_bound_of(s)) + "\n";
  t += "catalogue: " + data.catalogue + ", " + std::to_string(data.items()) + " items\n";
  std::snprintf(buf, sizeof buf,
                "not private (exact counts of the input): %zu ratings read (%llu malformed lines skipped, %llu outside "
                "the catalogue dropped), %lld users; train %zu, test %zu",
                data.table.ratings.size() + data.dropped_outside_catalogue, (unsigned long long)data.table.skipped,
                (unsigned long long)data.dropped_outside_catalogue, (long long)data.users(), data.train.size(),
                data.test.size());
  t += buf;
  if (effective_cap(s) > 0) {
    std::snprintf(buf, sizeof buf, "; cap %lld per user dropped %llu training ratings of %lld users",
                  (long long)effective_cap(s), (unsigned long long)data.dropped_by_cap, (long long)data.users_capped);
    t += buf;
  }
  return t + "\n";
}

}  // namespace dpstream::tools::recommend
