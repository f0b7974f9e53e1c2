#include "common/unit_flags.hpp"

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "common/privacy_labels.hpp"
#include "dpstream/base/memory_limit.hpp"

namespace dpstream::tools {

void add_unit_options(CLI::App& app, InputFlags& input, UnitFlags& flags, bool separation) {
  app.add_option("--user-column", input.unit_column,
                 "CSV: the column holding each row's user key (header name or 0-based index); it is not a value");
  app.add_option("--max-rows-per-user", flags.max_rows_per_user,
                 "privacy unit = user: keep at most K rows of each user (her first K; the rest dropped and "
                 "counted) and calibrate for all of one user's rows (default 0: row level)");
  if (separation)
    app.add_option("--min-separation", flags.min_separation,
                   "with --max-rows-per-user: at most one row of a user a release block, blocks at least B "
                   "apart (rows closer are dropped and counted); the default 0 lets rows share a block, which "
                   "costs k times one row's noise, as group privacy does; B >= 1 costs less (the summary says "
                   "the factor)");
}

void validate(const UnitFlags& flags, const InputFlags& input) {
  if (flags.max_rows_per_user == 0) {
    if (!input.unit_column.empty())
      throw UsageError("--user-column needs --max-rows-per-user K (the bound on each user's rows)");
    if (flags.min_separation != 0) throw UsageError("--min-separation needs --max-rows-per-user K");
    return;
  }
  const std::string format =
      input.format != "auto" ? input.format
      : input.path.empty() || input.path == "-" ? std::string()
                                                 : std::string(io::to_string(io::format_from_path(input.path)));
  if (input.path.empty())
    throw UsageError("--max-rows-per-user needs rows with user keys (--input a CSV with --user-column, or a row log "
                     "whose rows carry a unit); the default input has none");
  if (format == "idx") throw UsageError("--max-rows-per-user: IDX files carry no user keys (use a CSV or a row log)");
  if (format == "csv" && input.unit_column.empty())
    throw UsageError("--max-rows-per-user with a CSV input needs --user-column NAME|INDEX (the column of user keys)");
  if (format == "pb" && !input.unit_column.empty())
    throw UsageError("--user-column is for CSV inputs: a row log carries each row's user in its `unit` field");
}

stream::Participation participation(const UnitFlags& flags) {
  if (flags.max_rows_per_user == 0) return {};  // row level: one row
  return {flags.max_rows_per_user, flags.min_separation};
}

std::optional<stream::ContributionBoundOptions> bound_options(const UnitFlags& flags) {
  if (flags.max_rows_per_user == 0) return std::nullopt;
  stream::ContributionBoundOptions o;
  o.participation = participation(flags);
  return o;
}

std::string neighbours_text(const UnitFlags& flags, privacy::Neighbours relation) {
  if (flags.max_rows_per_user == 0) return privacy::describe(relation);
  return stream::describe_unit(participation(flags), "user") + ", each: " + privacy::describe(relation);
}

std::string unit_neighbours_line(const UnitFlags& flags, privacy::Neighbours relation, const std::string& row_bound) {
  return neighbours_line(neighbours_text(flags, relation),
                         std::string(flags.max_rows_per_user ? "user" : "one row") + ", " + row_bound);
}

JsonLine& add_unit_privacy_labels(JsonLine& j, const UnitFlags& flags, const privacy::Neighbours* relation,
                                  const std::vector<std::string>& not_private_keys) {
  return add_neighbours_labels(
      j, relation != nullptr ? std::optional<std::string>(neighbours_text(flags, *relation)) : std::nullopt,
      not_private_keys);
}

std::string unit_summary_text(const stream::ContributionBound* bound) {
  if (bound == nullptr) return {};
  const stream::ContributionBoundCounts& c = bound->counts();
  return "privacy unit: user; neighbouring: " + stream::describe_unit(bound->participation(), "user") + "; " +
         std::to_string(c.units) + " users, " + std::to_string(c.kept) + " rows kept, " + std::to_string(c.over_rows) +
         " dropped over the per-user bound" +
         (bound->participation().min_separation ? ", " + std::to_string(c.too_close) + " dropped as too close" : "") +
         " (these counts are not private); per-user state " + std::to_string(stream::ContributionBound::kBytesPerUnit) +
         " bytes a user, " + bytes_text(static_cast<double>(bound->state_bytes())) + " of a budget of " +
         bytes_text(static_cast<double>(bound->max_state_bytes()));
}

}  // namespace dpstream::tools
