// The budget a release is charged to: an accountant, or a stated reason why the release is not
// accounted. Every mechanism, stream and estimator that may charge takes one, and none has a null
// default: a caller that does not account says so, in words a summary can print
// ("not accounted: <reason>"), instead of passing a pointer that may silently be null.
//
// A Budget refers to its accountant (it does not own it): the accountant must outlive every
// Budget and every object built with one. Copies refer to the same accountant.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "dpstream/privacy/accountant.hpp"

namespace dpstream::privacy {

class Budget {
 public:
  // Every charge goes to `accountant`. Implicit, so that a call reads `release(x, noise, accountant)`.
  Budget(PrivacyAccountant& accountant) noexcept : accountant_(&accountant) {}  // NOLINT(google-explicit-constructor)
  Budget(std::nullptr_t) = delete;  // a null accountant is not a budget: say unaccounted(why)
  // Nothing is charged; `reason` says why (non-empty, else InvalidParameter), e.g. "the tool's
  // --nonprivate baseline" or "a test of the noise's distribution".
  static Budget unaccounted(std::string reason);
  // `accountant` when it is non-null, else unaccounted(reason_if_none): for holders of an optional
  // accountant (a session built with or without one).
  static Budget either(PrivacyAccountant* accountant, std::string reason_if_none);

  bool accounted() const noexcept { return accountant_ != nullptr; }
  // The accountant, or nullptr when unaccounted.
  PrivacyAccountant* accountant() const noexcept { return accountant_; }
  // Why nothing is charged ("" when accounted).
  const std::string& reason() const noexcept { return reason_; }
  // For summaries: "accounted against (epsilon=1, delta=1e-06)" or "not accounted: <reason>".
  std::string describe() const;

 private:
  explicit Budget(std::string reason) noexcept : reason_(std::move(reason)) {}

  PrivacyAccountant* accountant_ = nullptr;
  std::string reason_;
};

// Budget::describe()'s words for a holder of a read-only accountant (a report): `accountant`'s when
// it is non-null, else "not accounted: <reason_if_none>".
std::string describe_budget(const PrivacyAccountant* accountant, const std::string& reason_if_none);

}  // namespace dpstream::privacy
