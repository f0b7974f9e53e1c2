// The budget of a test that checks a mechanism's noise, calibration or input checks rather than its
// accounting: every such call says so (privacy::Budget has no null default).
#pragma once

#include "dpstream/privacy/budget.hpp"

namespace test_budget {

inline dpstream::privacy::Budget unaccounted() {
  return dpstream::privacy::Budget::unaccounted("a test of the noise or the checks, not of the accounting");
}

}  // namespace test_budget
