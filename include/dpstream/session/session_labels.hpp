// The privacy labels of an online-PCA session's report, for every front end (dpstream-replay's JSON
// line, Python's replay() dict): the neighbouring relation its private subspaces hold for, the budget
// they are charged to, and which of the reported figures are exact evaluation on the raw rows, NOT
// private.
#pragma once

#include <string>
#include <vector>

#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/session/online_pca_session.hpp"

namespace dpstream::session {

// Every learner of a session is a stream over fixed slots (blocks, minibatches): the zero-out
// relation (gauss alone, offline, would hold under add/remove; run beside the others it is stated
// for the run).
inline privacy::Neighbours session_relation(const OnlinePcaSession& p) {
  return p.sum() ? p.sum()->options().privacy.relation : privacy::Neighbours::zero_out_row;
}

// The budget in its own words (privacy::Budget::describe): the session's accountant, or, for a
// non-private session (built without one), why nothing is charged. describe() only reads the
// accountant; a Budget refers to a mutable one (to charge it), hence the cast.
inline std::string session_budget(const OnlinePcaSession& p) {
  return privacy::Budget::either(const_cast<privacy::PrivacyAccountant*>(p.accountant()),
                                 "a non-private run: nothing is released privately")
      .describe();
}

// The report's keys that hold exact figures (row counts, OPT, gains, regrets, captured ratios,
// timings): "outer.*" for every key of a nested object.
inline const std::vector<std::string>& not_private_keys() {
  static const std::vector<std::string> keys = {
      "rows", "opt", "gain", "regret", "regret_over_opt", "nonprivate_regret_over_opt", "rows_clipped",
      "rows_rejected", "seconds", "rows_read", "rows_skipped", "rows_zero", "header_lines", "comment_lines",
      "blank_lines", "learners.*.regret_over_opt", "learners.*.captured_ratio"};
  return keys;
}

}  // namespace dpstream::session
