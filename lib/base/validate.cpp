#include "dpstream/base/validate.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/format.hpp"
#include "dpstream/base/errors.hpp"

namespace dpstream::base {

void require_positive(std::string_view name, double value) {
  if (!(std::isfinite(value) && value > 0.0))
    throw InvalidParameter(std::string(name) + " must be finite and > 0, got " + format_value(value));
}

void require_nonnegative(std::string_view name, double value) {
  if (!(std::isfinite(value) && value >= 0.0))
    throw InvalidParameter(std::string(name) + " must be finite and >= 0, got " + format_value(value));
}

void require_open_unit(std::string_view name, double value) {
  if (!(value > 0.0 && value < 1.0))
    throw InvalidParameter(std::string(name) + " must be in (0, 1), got " + format_value(value));
}

void require_at_least(std::string_view name, std::int64_t value, std::int64_t min) {
  if (value < min)
    throw InvalidParameter(std::string(name) + " must be >= " + std::to_string(min) + ", got " +
                           std::to_string(value));
}

void require_in_range(std::string_view name, std::int64_t value, std::int64_t lo, std::int64_t hi,
                      std::string_view note) {
  if (value < lo || value > hi)
    throw InvalidParameter(std::string(name) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                           "]" + std::string(note) + ", got " + std::to_string(value));
}

void require_rank(std::string_view who, std::int64_t k, std::int64_t limit, std::string_view note) {
  require_in_range(std::string(who) + ": k", k, 1, limit, note);
}

}  // namespace dpstream::base
