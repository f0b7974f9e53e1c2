#include "dpstream/stream/participation.hpp"

#include "dpstream/errors.hpp"
#include "dpstream/stream/continual_sum.hpp"

namespace dpstream::stream {

void validate(const Participation& p, std::uint64_t horizon) {
  if (!p.unit_level() && p.min_separation != 0)
    throw InvalidParameter("participation: min_separation " + std::to_string(p.min_separation) +
                           " needs max_rows_per_unit >= 1 (a separation bounds a unit's rows)");
  // With k ≥ 2 rows b apart in T releases, b ≥ T allows one block only: a k that can never be reached
  // is a mistake in the options, not a bound to calibrate for.
  if (p.max_rows_per_unit >= 2 && p.min_separation != 0 && horizon != 0 && p.min_separation >= horizon)
    throw InvalidParameter("participation: min_separation " + std::to_string(p.min_separation) +
                           " leaves room for one block in " + std::to_string(horizon) + " releases, but max_rows_per_unit is " +
                           std::to_string(p.max_rows_per_unit));
}

double participation_sensitivity_factor(NoiseStrategy /*strategy*/, std::uint64_t /*horizon*/, const Participation& p) {
  // The triangle-inequality bound of the header, valid for every strategy: k single-row sensitivities.
  return p.unit_level() ? static_cast<double>(p.max_rows_per_unit) : 1.0;
}

std::string neighbouring_text(const Participation& p, const std::string& unit) {
  if (!p.unit_level()) return "one row";
  std::string t = "all rows of one " + unit + " (at most " + std::to_string(p.max_rows_per_unit) + " row" +
                  (p.max_rows_per_unit == 1 ? "" : "s") + " kept per " + unit;
  if (p.min_separation != 0)
    t += ", one per block, blocks at least " + std::to_string(p.min_separation) + " apart";
  return t + ")";
}

}  // namespace dpstream::stream
