// Reading rating files and preparing them for training (the procedure of Jain, Thakkar & Thakurta,
// "Differentially private matrix completion revisited", ICML 2018, §4).
//
// Formats (one rating per line: user, item, rating[, timestamp]; ids are integers):
//   csv          "1,31,2.5,1260759144"      (MovieLens latest; a first data line none of whose fields
//                                            parses as a number is a header, e.g. "userId,movieId,...";
//                                            anywhere else it is a malformed line)
//   tsv          "196\t242\t3\t881250949"   (MovieLens-100K u.data; any run of spaces/tabs separates)
//   double_colon "1::1193::5::978300760"    (MovieLens-1M/10M ratings.dat)
//   row_log      the Protobuf row log (io/row_log.hpp): one row per user, its SPARSE entries are the
//                user's ratings (column index = item id); the user id is Row.id when set, else the
//                row's 0-based position. A row without entries adds no user (users and items come into
//                being through ratings, as in the text formats). Dense rows are refused, also under
//                skip_malformed (a dense row is not a set of ratings: the file is a feature log).
//   automatic    by content: the row log's magic, else the first data line: "::" → double_colon,
//                ',' → csv, otherwise tsv.
// Blank lines and lines starting with '#' are skipped (not counted as malformed); "\r\n" endings are
// accepted.
//
// Errors: a malformed line (not 3 or 4 fields, a non-numeric field, a non-finite rating, an id or
// timestamp outside int64) throws CorruptInput "PATH:LINE: what" (row log: "PATH: row N: what", for
// a user id over int64 or a non-finite value); with skip_malformed it is counted instead
// (RatingsTable::skipped, first_skip_reason) — never dropped silently. The same (user, item) twice
// throws CorruptInput naming both lines (with skip_malformed the later one is counted as skipped).
// An unreadable or empty file (no rating) throws CorruptInput naming the path.
//
// Privacy: reading is not a release. Note that choosing the top-N items (keep_top_items) reads the
// item counts of the private data without noise: the papers implemented here do this as preprocessing and treat
// the item set as public; a caller who needs it private must supply the item list instead
// (keep_items).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpstream/completion/ratings_matrix.hpp"

namespace dpstream::completion {

enum class RatingsFormat { automatic, csv, tsv, double_colon, row_log };
const char* to_string(RatingsFormat format) noexcept;
// "auto" | "csv" | "tsv" | "colons" | "pb"; anything else: InvalidParameter naming the text.
RatingsFormat parse_ratings_format(const std::string& text);

struct ReadRatingsOptions {
  RatingsFormat format = RatingsFormat::automatic;
  bool skip_malformed = false;
};

// Ratings with dense indices and the external ids they came from.
struct RatingsTable {
  std::vector<std::int64_t> user_ids;   // dense user index → id in the file (first-seen order)
  std::vector<std::int64_t> item_ids;   // dense item index → id in the file (first-seen order)
  std::vector<Rating> ratings;          // file order
  // Unix seconds of each rating (the 4th field), parallel to `ratings` when every kept rating had
  // one; empty otherwise (3-field lines anywhere, a row log). keep_* carry it along.
  std::vector<std::int64_t> timestamps;
  std::uint64_t lines = 0;              // data lines read (ratings + skipped; row log: entries read
                                        // + skipped rows)
  std::uint64_t skipped = 0;            // malformed lines counted under skip_malformed
  std::string first_skip_reason;        // "PATH:LINE: what" of the first skipped line

  Eigen::Index users() const noexcept { return static_cast<Eigen::Index>(user_ids.size()); }
  Eigen::Index items() const noexcept { return static_cast<Eigen::Index>(item_ids.size()); }
  // Dense index of an external id; nullopt when the id is not in the table.
  std::optional<Eigen::Index> user_index(std::int64_t id) const;
  std::optional<Eigen::Index> item_index(std::int64_t id) const;

  // id → dense index, the inverse of user_ids / item_ids, kept by read_ratings and keep_*. A table
  // filled by hand may leave them empty: the look-ups then scan the id lists (a map whose size
  // differs from its id list is not trusted).
  std::unordered_map<std::int64_t, Eigen::Index> user_index_of;
  std::unordered_map<std::int64_t, Eigen::Index> item_index_of;
};

RatingsTable read_ratings(const std::string& path, const ReadRatingsOptions& options = {});

// Keep only the ratings of the `count` most-rated items (ties broken by the smaller dense index), and
// re-index items densely in descending count order (item_ids follows). Users keep their indices (a user
// left without ratings is kept). count ≥ 1, else InvalidParameter; count ≥ items keeps all (re-ordered).
RatingsTable keep_top_items(const RatingsTable& table, Eigen::Index count);
// Keep only the ratings of the listed external item ids (re-indexed in list order). An id that is not
// in the table, or listed twice: InvalidParameter naming it.
RatingsTable keep_items(const RatingsTable& table, const std::vector<std::int64_t>& item_ids);

// NOT for a private pipeline: split_ratings and cap_ratings_per_user draw one stream for all users, so
// adding one user moves every other user's partition (preparation.hpp has the per-user versions the
// tool uses). Kept for the papers' experiments and as the audits' planted bug.
//
// A deterministic train/test split: a seeded shuffle of the ratings, the first round(fraction·N) go to
// test (Jain, Thakkar & Thakurta's "1% of the ratings at random"). fraction ∈ [0, 1), else
// InvalidParameter. Both parts keep the input's relative order.
struct RatingsSplit {
  std::vector<Rating> train;
  std::vector<Rating> test;
};
RatingsSplit split_ratings(const std::vector<Rating>& ratings, double test_fraction, std::uint64_t seed);

// At most `max_per_user` ratings per user (ξ), chosen uniformly at random by `seed` (Jain, Thakkar &
// Thakurta's cap of 80). max_per_user ≥ 1, else InvalidParameter; so is a negative user index. What was dropped is
// counted, not lost silently.
struct CappedRatings {
  std::vector<Rating> kept;       // input order
  std::uint64_t dropped = 0;
  Eigen::Index users_capped = 0;  // users who had more than ξ
};
CappedRatings cap_ratings_per_user(const std::vector<Rating>& ratings, Eigen::Index max_per_user,
                                   std::uint64_t seed);

}  // namespace dpstream::completion
