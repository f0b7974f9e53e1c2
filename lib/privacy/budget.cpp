#include "dpstream/privacy/budget.hpp"

#include <utility>

#include "dpstream/base/errors.hpp"

namespace dpstream::privacy {

Budget Budget::unaccounted(std::string reason) {
  if (reason.empty())
    throw InvalidParameter("Budget::unaccounted: the reason must be stated (it is what a summary prints)");
  return Budget(std::move(reason));
}

Budget Budget::either(PrivacyAccountant* accountant, std::string reason_if_none) {
  if (accountant != nullptr) return Budget(*accountant);
  return unaccounted(std::move(reason_if_none));
}

std::string Budget::describe() const { return describe_budget(accountant_, reason_); }

std::string describe_budget(const PrivacyAccountant* accountant, const std::string& reason_if_none) {
  if (accountant != nullptr) return "accounted against " + accountant->budget().to_string();
  return "not accounted: " + reason_if_none;
}

}  // namespace dpstream::privacy
