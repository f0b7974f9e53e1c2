// Preparing ratings for a private model without reading the private data outside the accounting.
//
// Every choice made before a mechanism is public, local to one privacy unit (one user, all her
// ratings), or made privately and charged. Here:
//   * the item catalogue is public: a list the caller gives (read_item_catalogue), not the set of items
//     the ratings happen to contain — an item rated by one user alone would otherwise exist only when
//     she is present, and anything listing items (a recommendation, an item factor) would show her;
//   * the train/test split is local to each user: a rating's side is a keyed hash of (seed, user id,
//     item id), so adding or removing one user leaves every other user's partition as it was;
//   * the per-user cap ξ is local to each user: her kept ratings are the ξ with the smallest keyed hash
//     of (seed, user id, item id) — a uniform ξ-subset drawn from her own stream.
// The hashes are keyed by external ids (as in the file), never by dense indices: a dense index is the
// user's first-seen position, which another user's lines can move. The hash is libsodium's
// crypto_shorthash (SipHash-2-4) keyed by the seed and a domain tag, so the split and the cap draw
// independent streams. It is a seeded pseudo-random choice, not a secret: like every seed here it is
// for reproducibility (the privacy rests on the noise, not on the split).
//
// (ratings_io.hpp's split_ratings and cap_ratings_per_user draw one stream for all users: adding one
// user moves everyone else's partition. They are kept for the papers' experiments, not for a private
// pipeline.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpstream/completion/ratings_io.hpp"

namespace dpstream::completion {

// Item ids, one per line, or the first column of a CSV (a first data line whose first field is not an
// integer is a header, e.g. MovieLens's movies.csv "movieId,title,genres"). Blank lines and lines
// starting with '#' are skipped. CorruptInput "PATH:LINE: what" for a malformed id (not an integer,
// outside int64) or an id listed twice; for an unreadable file or one without any id, naming the path.
std::vector<std::int64_t> read_item_catalogue(const std::string& path);

// The ratings of catalogue items only, items re-indexed in catalogue order (item_ids = the catalogue:
// items nobody rated are kept, with no ratings). Users keep their indices. `dropped` counts the
// ratings of items outside the catalogue (an exact count of the private data: not private).
struct CataloguedRatings {
  RatingsTable table;
  std::uint64_t dropped = 0;
};
CataloguedRatings restrict_to_catalogue(const RatingsTable& table, const std::vector<std::int64_t>& catalogue);

// The keyed hash of (seed, domain, user id, item id), uniform on [0, 1) (53 bits).
enum class RatingDraw : std::uint8_t { split = 1, cap = 2 };
double rating_draw(RatingDraw domain, std::uint64_t seed, std::int64_t user_id, std::int64_t item_id);

// Test iff rating_draw(split, seed, user id, item id) < test_fraction (each rating independently: the
// test share is test_fraction in expectation). fraction ∈ [0, 1), else InvalidParameter. Both parts
// keep the table's order.
RatingsSplit split_ratings_per_user(const RatingsTable& table, const std::vector<Rating>& ratings,
                                    double test_fraction, std::uint64_t seed);

// At most ξ = max_per_user of each user's ratings: those with the smallest rating_draw(cap, ...), kept
// in input order; what was dropped is counted (not private). `table` names the ids of the dense
// indices. max_per_user ≥ 1, else InvalidParameter.
CappedRatings cap_ratings_per_user_locally(const RatingsTable& table, const std::vector<Rating>& ratings,
                                           Eigen::Index max_per_user, std::uint64_t seed);

}  // namespace dpstream::completion
