// The labels of an online-PCA session's report, for every front end (dpstream-replay's JSON line and
// text, Python's replay() dict): the neighbouring relation its private subspaces hold for, the budget
// they are charged to, which of the reported figures are exact evaluation on the raw rows, NOT
// private, and the learners' names.
#pragma once

#include <string>
#include <vector>

#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "dpstream/session/row_learner.hpp"

namespace dpstream::session {

// Every learner of a session is a stream over fixed slots (blocks, minibatches): the zero-out
// relation (gauss alone, offline, would hold under add/remove; run beside the others it is stated
// for the run).
inline privacy::Neighbours session_relation(const OnlinePcaSession& p) {
  return p.sum() ? p.sum()->options().privacy.relation : privacy::Neighbours::zero_out_row;
}

// The budget in its own words (privacy::Budget::describe): the session's accountant, or, for a
// non-private session (built without one), why nothing is charged.
inline std::string session_budget(const OnlinePcaSession& p) {
  return privacy::describe_budget(p.accountant(), "a non-private run: nothing is released privately");
}

// A learner's name in a report or a plot's legend: the private FPL ("fpl", or "private", its name
// in the meter), a row-fed learner's table label (row_learner.hpp), follow-the-leader ("ftl").
inline std::string learner_label(const std::string& name) {
  if (name == "fpl" || name == "private") return "private FPL";
  for (const RowLearnerKind& kind : row_learner_kinds())
    if (name == kind.name) return kind.label;
  return "follow-the-leader (non-private)";
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
