// dpstream-recommend's data: a ratings file or a generated set, restricted to a public item catalogue,
// centred, split into train and test per user, and the training ratings capped at ξ per user.
//
//   ratings (csv/tsv/::/pb) ─▶ public catalogue ─▶ per-user split ─▶ per-user cap ξ (train)
//        or generated (seed 001 / seed 004 / MovieLens-shaped; catalogue 0..n−1)
//
// Privacy (preparation.hpp): every choice made here is public or local to one user (the privacy unit),
// so that a file with one more user changes nobody else's prepared ratings:
//  * the catalogue is public: --catalogue FILE, or the file's rated items when --items-public declares
//    them public knowledge (a private run on a file needs one of the two); ratings of other items are
//    dropped and counted;
//  * a rating's side of the split is a keyed hash of (--split-seed, user id, item id), her cap keeps her
//    ξ ratings of smallest keyed hash: both read her own ratings only;
//  * --top-items (exact counts) is refused for a private run (settings.cpp).
// The counts kept here (users, ratings, dropped) are exact: printed as not private.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dpstream/completion/ratings_io.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"
#include "recommend/settings.hpp"

namespace dpstream::tools::recommend {

// The prepared data: a train matrix (ξ-capped), the test ratings, and what the preparation did.
struct Prepared {
  completion::RatingsTable table;  // external ids (a file) or dense ids (generated)
  std::vector<completion::Rating> train, test;
  std::uint64_t dropped_by_cap = 0;
  std::uint64_t dropped_outside_catalogue = 0;
  std::string catalogue;  // where the catalogue came from, in words
  Index users_capped = 0;
  std::optional<completion::SyntheticRatings> truth;  // generated sets only
  // Per dense user, her first timestamp (INT64_MAX for a user left without ratings); empty when the
  // ratings carry no timestamps (--online needs them).
  std::vector<std::int64_t> arrival;
  std::string description;

  Index users() const { return table.users(); }
  Index items() const { return table.items(); }
};

// UsageError (exit 2) for a file that cannot be opened or a generated set's bad parameters; a
// malformed line stops the run (CorruptInput "PATH:LINE: what", exit 1) unless --skip-malformed.
Prepared prepare(const RecommendSettings& s);

// The dense user index of each --recommend id: UsageError for an id not in the data.
std::vector<Index> resolve_users(const Prepared& data, const std::vector<RecommendId>& ids);

// The "input:" and "ratings:" lines of the summary.
std::string data_text(const RecommendSettings& s, const Prepared& data);

}  // namespace dpstream::tools::recommend
