// The privacy labels every releasing tool prints beside its (ε, δ) claim (docs/privacy.md, "How
// outputs are labelled"), so a reader can tell what the claim covers:
//  * the neighbouring relation in words: summary line "neighbours: …; privacy unit: …", JSON key
//    "neighbours" (null when nothing private is released);
//  * the budget the releases are charged to, in its own words (privacy::Budget::describe: the
//    accountant's target, or "not accounted: <why>"): summary line "budget: …", JSON key "budget";
//  * the figures that are NOT private — exact values computed from the data without noise (row and
//    user counts, clipping and rejection counts, OPT, gains, regrets, captured ratios, timings):
//    summary line "NOT private (exact, from the data; not covered by (ε, δ)): …", JSON key
//    "not_private" listing the keys of the same line that hold them ("outer.inner" for a nested
//    key; "outer.*" for every key of a nested object). Keys are not renamed, so scripts reading
//    them keep working; the list says which are exact. Everything else in the line is a setting
//    (public) or a released value (private).
// The Python API labels the same figures "NOT private" in its docstrings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::tools {

// `relation_text`: the relation in words (privacy::describe, or a unit-level one: unit_flags.hpp).
inline std::string neighbours_line(const std::string& relation_text, const std::string& unit) {
  return "neighbours: " + relation_text + "; privacy unit: " + unit + "\n";
}

inline std::string neighbours_line(privacy::Neighbours relation, const std::string& unit) {
  return neighbours_line(privacy::describe(relation), unit);
}

// Budget::describe()'s words for a report that holds its accountant as const. Null: unaccounted,
// for `reason_if_none`.
inline std::string budget_text(const privacy::PrivacyAccountant* accountant, const std::string& reason_if_none) {
  return privacy::describe_budget(accountant, reason_if_none);
}

// `budget_text`: privacy::Budget::describe()'s words.
inline std::string budget_line(const std::string& budget_text) { return "budget: " + budget_text + "\n"; }
inline std::string budget_line(const privacy::Budget& budget) { return budget_line(budget.describe()); }

inline JsonLine& add_budget_label(JsonLine& j, const std::string& budget_text) { return j.add("budget", budget_text); }
inline JsonLine& add_budget_label(JsonLine& j, const privacy::Budget& budget) {
  return add_budget_label(j, budget.describe());
}

inline std::string not_private_line(const std::string& what) {
  return "NOT private (exact, from the data; not covered by (ε, δ)): " + what + "\n";
}

// The JSON key "not_private": the list of keys holding exact figures.
inline JsonLine& add_not_private(JsonLine& j, const std::vector<std::string>& not_private_keys) {
  std::string list = "[";
  for (const std::string& key : not_private_keys) list += (list.size() > 1 ? "," : "") + json_string(key);
  return j.add_raw("not_private", list + "]");
}

// "neighbours" (the relation in words; null: nothing private is released) and "not_private".
inline JsonLine& add_neighbours_labels(JsonLine& j, const std::optional<std::string>& relation_text,
                                       const std::vector<std::string>& not_private_keys) {
  if (relation_text) j.add("neighbours", *relation_text);
  else j.add_null("neighbours");
  return add_not_private(j, not_private_keys);
}

inline JsonLine& add_privacy_labels(JsonLine& j, const privacy::Neighbours* relation,
                                    const std::vector<std::string>& not_private_keys) {
  return add_neighbours_labels(
      j, relation != nullptr ? std::optional<std::string>(privacy::describe(*relation)) : std::nullopt,
      not_private_keys);
}

}  // namespace dpstream::tools
