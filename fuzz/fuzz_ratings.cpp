// libFuzzer target: completion::read_ratings (include/dpstream/completion/ratings_io.hpp) over
// arbitrary bytes, with format automatic and each explicit format (csv, tsv, double_colon, row_log),
// each with and without skip_malformed.
//
// Documented errors: CorruptInput only. A table that is returned must be what the header promises:
// at least one rating; dense indices within users()/items(); finite ratings; no (user, item) twice;
// the id maps inverse to the id lists; lines = ratings + skipped ("data lines read (ratings +
// skipped)"); skipped only under skip_malformed, with a first_skip_reason. It must also build a
// RatingsMatrix (whose constructor re-checks all of that and would throw InvalidParameter).
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "dpstream/base/errors.hpp"
#include "dpstream/completion/ratings_io.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "fuzz_common.hpp"

using dpstream::CorruptInput;
using dpstream::completion::RatingsFormat;
using dpstream::completion::RatingsTable;
using dpstream::completion::ReadRatingsOptions;

namespace {

void check_table(const RatingsTable& t, bool skip) {
  FUZZ_CHECK(!t.ratings.empty());
  FUZZ_CHECK(t.user_index_of.size() == t.user_ids.size());
  FUZZ_CHECK(t.item_index_of.size() == t.item_ids.size());
  for (std::size_t k = 0; k < t.user_ids.size(); ++k)
    FUZZ_CHECK(t.user_index(t.user_ids[k]) == static_cast<Eigen::Index>(k));
  for (std::size_t k = 0; k < t.item_ids.size(); ++k)
    FUZZ_CHECK(t.item_index(t.item_ids[k]) == static_cast<Eigen::Index>(k));
  std::unordered_set<std::uint64_t> pairs;
  for (const auto& r : t.ratings) {
    FUZZ_CHECK(r.user >= 0 && r.user < t.users());
    FUZZ_CHECK(r.item >= 0 && r.item < t.items());
    FUZZ_CHECK(std::isfinite(r.value));
    FUZZ_CHECK(pairs.insert(static_cast<std::uint64_t>(r.user) << 32 ^ static_cast<std::uint64_t>(r.item)).second);
  }
  FUZZ_CHECK(t.lines == t.ratings.size() + t.skipped);
  if (!skip) FUZZ_CHECK(t.skipped == 0);
  if (t.skipped > 0) FUZZ_CHECK(!t.first_skip_reason.empty());
  // Must not throw: a table read_ratings returns is a valid matrix.
  const dpstream::completion::RatingsMatrix matrix(t.users(), t.items(), t.ratings);
  FUZZ_CHECK(matrix.size() == static_cast<Eigen::Index>(t.ratings.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dpstream_fuzz::write_scratch("input.ratings", data, size);
  for (const RatingsFormat format : {RatingsFormat::automatic, RatingsFormat::csv, RatingsFormat::tsv,
                                     RatingsFormat::double_colon, RatingsFormat::row_log}) {
    std::uint64_t strict_ratings = 0;
    bool strict_ok = false;
    for (const bool skip : {false, true}) {
      ReadRatingsOptions options;
      options.format = format;
      options.skip_malformed = skip;
      try {
        const RatingsTable table = dpstream::completion::read_ratings(path, options);
        check_table(table, skip);
        if (!skip) {
          strict_ok = true;
          strict_ratings = table.ratings.size();
        } else if (strict_ok) {
          // Nothing was malformed: skipping changes nothing.
          FUZZ_CHECK(table.skipped == 0 && table.ratings.size() == strict_ratings);
        }
      } catch (const CorruptInput&) {
      }
    }
  }
  return 0;
}
