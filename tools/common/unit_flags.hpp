// The privacy unit on the command line (dpstream-replay, dpstream-pca): --user-column,
// --max-rows-per-user and (continual release) --min-separation, checked and turned into the library's
// ContributionBound and Participation (stream/contribution_bound.hpp, stream/participation.hpp).
//
// With --max-rows-per-user k, every row must carry a unit key: a CSV names its column with
// --user-column NAME|INDEX (0-based), a row log has the rows' `unit` field; IDX files and the
// generated stream have none and are refused. The run is then private for the unit (all rows of one
// user, at most k kept), and the rows the bound drops are counted in the summary, a count that is NOT
// private.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/cli_fwd.hpp"

#include "common/input.hpp"
#include "common/json.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/contribution_bound.hpp"

namespace dpstream::tools {

struct UnitFlags {
  std::uint32_t max_rows_per_user = 0;  // 0: row level
  std::uint64_t min_separation = 0;     // blocks; 0: none
};

// Registers --user-column (into input.unit_column), --max-rows-per-user and, if `separation`,
// --min-separation.
void add_unit_options(CLI::App& app, InputFlags& input, UnitFlags& flags, bool separation);

// UsageError naming the flag: a key column or separation without --max-rows-per-user, a CSV without
// --user-column, --user-column for a format other than CSV, an input that has no unit keys.
void validate(const UnitFlags& flags, const InputFlags& input);

stream::Participation participation(const UnitFlags& flags);
// The bound's options (budget: a quarter of the memory limit, which --max-memory sets), or none at
// row level.
std::optional<stream::ContributionBoundOptions> bound_options(const UnitFlags& flags);

// The relation a run's (ε, δ) holds for: row level, privacy::describe(relation); unit level, "all rows
// of one user (at most k rows kept per user), each: " + describe(relation).
std::string neighbours_text(const UnitFlags& flags, privacy::Neighbours relation);
// The summary's "neighbours: …; privacy unit: …" line; `row_bound` says the per-row bound ("||a|| <= 1
// after the guard").
std::string unit_neighbours_line(const UnitFlags& flags, privacy::Neighbours relation, const std::string& row_bound);
// The JSON keys "neighbours" (neighbours_text; null without a relation: nothing private) and
// "not_private".
JsonLine& add_unit_privacy_labels(JsonLine& j, const UnitFlags& flags, const privacy::Neighbours* relation,
                                  const std::vector<std::string>& not_private_keys);

// For summaries: "unit: user (at most k rows each; rows dropped by the bound: N over k, M too close;
// these counts are not private)", or "" at row level.
std::string unit_summary_text(const stream::ContributionBound* bound);

}  // namespace dpstream::tools
