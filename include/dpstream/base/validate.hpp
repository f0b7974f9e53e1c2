// Parameter checks shared by every layer. Each throws InvalidParameter whose message names the
// parameter (`name`, which callers prefix with their own name: "GaussianPca: k") and the value
// received, in base::format_value's form; the texts below are the ones tests and docs quote.
// Written so that NaN fails every check: every comparison with NaN is false.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dpstream::base {

// "<name> must be finite and > 0, got <value>"
void require_positive(std::string_view name, double value);

// "<name> must be finite and >= 0, got <value>"
void require_nonnegative(std::string_view name, double value);

// "<name> must be in (0, 1), got <value>": a probability that may be neither 0 nor 1 (δ of a
// Gaussian guarantee, a failure probability).
void require_open_unit(std::string_view name, double value);

// "<name> must be >= <min>, got <value>"
void require_at_least(std::string_view name, std::int64_t value, std::int64_t min);

// "<name> must be in [<lo>, <hi>]<note>, got <value>"; `note` (e.g. " (the dimension)") explains hi.
void require_in_range(std::string_view name, std::int64_t value, std::int64_t lo, std::int64_t hi,
                      std::string_view note = {});

// A rank or a number of directions k of a d-dimensional (or min(m, n)-dimensional) problem:
// "<who>: k must be in [1, <limit>]<note>, got <k>".
void require_rank(std::string_view who, std::int64_t k, std::int64_t limit, std::string_view note = {});

}  // namespace dpstream::base
