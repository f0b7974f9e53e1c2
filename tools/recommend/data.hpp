// dpstream-recommend's data: a ratings file or a generated set, centred, optionally cut to the top-N
// items, split into train and test with a seeded split, and the training ratings capped at ξ per user.
//
//   ratings (csv/tsv/::/pb) ─▶ top-N items ─▶ seeded train/test split ─▶ cap ξ per user (train)
//        or generated (seed 001 / seed 004 / MovieLens-shaped)
//
// Reading is not a release; the top-N item choice reads the item counts without noise (ratings_io.hpp).
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
