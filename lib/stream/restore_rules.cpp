#include "dpstream/stream/restore_rules.hpp"

#include <exception>
#include <string>

#include "dpstream/base/errors.hpp"

namespace dpstream::stream {

namespace {

// The refusal being handled again, its message prefixed with the rule it enforces (same type).
[[noreturn]] void refuse(const std::string& what, const char* rule, const std::exception& e) {
  rethrow_with_message(what + ": restore refused (" + rule + "): " + e.what());
}

constexpr const char* kJournalRule = "a restored stream never publishes a step again on other rows";
constexpr const char* kLedgerRule = "a restore never lowers an accountant's spend";

}  // namespace

base::StreamJournal restore_publication(const Publication& published, const std::string& journal_path,
                                        const privacy::Budget& budget,
                                        const std::function<void()>& charge_afresh, const std::string& what) {
  const bool kept = !published.journal_id.empty(), given = !journal_path.empty();
  if (kept != given)
    throw CorruptInput(what + ": restore refused (" + kJournalRule + "): the checkpoint's stream kept " +
                       (kept ? "a release journal" : "no release journal") + ", the stream being restored has " +
                       (given ? "one" : "none") + " (checkpoint made with other parameters)");
  base::StreamJournal journal;
  try {
    journal = base::StreamJournal::open(journal_path, published.journal_id, published.steps, what);
  } catch (const CorruptInput& e) {
    refuse(what, kJournalRule, e);
  } catch (const InvalidParameter& e) {
    refuse(what, kJournalRule, e);
  }
  if (!budget.accounted()) return journal;
  if (published.ledger.empty()) {
    charge_afresh();
    return journal;
  }
  try {
    budget.accountant()->restore(published.ledger);
  } catch (const CorruptInput& e) {
    refuse(what, kLedgerRule, e);
  } catch (const BudgetExhausted& e) {
    refuse(what, kLedgerRule, e);
  }
  return journal;
}

}  // namespace dpstream::stream
