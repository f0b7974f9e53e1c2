// dpstream-recommend's output (run.hpp): the summary, the recommendations and the JSON line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/json.hpp"
#include "common/privacy_labels.hpp"
#include "common/progress.hpp"
#include "common/text.hpp"
#include "dpstream/base/format.hpp"
#include "recommend/run.hpp"

namespace dpstream::tools::recommend {

using namespace completion;

namespace {

// The JSON keys whose figures are exact functions of the private data (counts, evaluation on raw
// ratings, timings): printed for the curator, not private. Listed in the JSON's "not_private".
std::vector<std::string> not_private_keys(const RecommendSettings& s, const Evaluation& e, bool online) {
  std::vector<std::string> keys = {"rmse", "rmse_item_mean", "rmse_global_mean", "rmse_private_baseline", "seconds"};
  if (e.all_entries_rmse) keys.push_back("rmse_all_entries");
  keys.insert(keys.end(), {"train_seconds", "users"});
  if (!s.private_run() && !s.generated() && s.catalogue.empty() && !s.items_public) keys.push_back("items");
  keys.insert(keys.end(), {"train", "test", "dropped_outside_catalogue", "dropped_by_cap", "users_capped"});
  if (online)
    keys.insert(keys.end(), {"online_rmse", "online_rmse_private_baseline", "online_rmse_global_mean", "online_users",
                             "online_scored", "online_releases", "online_top_hits", "online_rows_clipped",
                             "online_seconds"});
  return keys;
}

}  // namespace

std::string RecommendRun::summary_text() const {
  const Evaluation& e = evaluation_;
  std::string t = format("method: %s, mechanism %s, mode %s, (ε, δ) = (%s, %s), rank %lld%s\n", s_.method.c_str(),
                         s_.mechanism.c_str(), s_.mode.c_str(), base::format_value(s_.privacy.epsilon).c_str(),
                         base::format_value(s_.privacy.delta).c_str(), (long long)model_.rank,
                         s_.privacy.seed ? ", seeded noise (reproducible, NOT secure)" : ", secure noise");
  t += "neighbours: " + neighbours_of(s_) + "\n" + budget_line(model_.budget);
  if (online_result_)  // its own lines, the ε once; the non-private baselines of the batch split beside them
    return t + online_text(s_, *online_result_) +
           format("non-private baselines on the same test ratings (not private: evaluation on the raw ratings): item "
                  "mean %.4f, global mean %.4f\n", e.item_mean_rmse,
                  e.global_mean_rmse);
  t += model_.notes;
  t += format("test RMSE %.4f (item mean %.4f, global mean %.4f", e.rmse, e.item_mean_rmse, e.global_mean_rmse);
  if (e.private_baseline_rmse)
    t += format("; private baseline %.4f%s", *e.private_baseline_rmse,
                s_.method == "dpam" ? ", the model's own" : ", a separate release for comparison");
  t += ")";
  if (e.all_entries_rmse) t += format("; RMSE over all entries of the truth %.4f", *e.all_entries_rmse);
  t += "; not private: evaluation on the raw held-out ratings, for the curator";
  t += format("\nprivacy spent: ε = %.4g at δ = %s; training %.2f s\n", model_.epsilon_spent,
              base::format_value(s_.privacy.delta).c_str(), train_seconds_);
  return t + recommendations_text();
}

// Each --recommend user's top --top items among those she has not rated in training.
std::string RecommendRun::recommendations_text() const {
  std::string t;
  const Index items = data_.items();
  const double center = center_of(s_);
  for (std::size_t u = 0; u < users_.size(); ++u) {
    const Index user = users_[u];
    std::vector<bool> rated(static_cast<std::size_t>(items), false);
    for (RatingsMatrix::ByUser::InnerIterator it(train_.by_user(), user); it; ++it)
      rated[static_cast<std::size_t>(it.col())] = true;
    std::vector<std::pair<double, Index>> scored;
    for (Index j = 0; j < items; ++j)
      if (!rated[static_cast<std::size_t>(j)]) scored.emplace_back(model_.predict(user, j), j);
    const auto shown = std::min<std::size_t>(static_cast<std::size_t>(s_.top), scored.size());
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(shown), scored.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    t += format("top %zu for user %s:", shown, ids_[u].text.c_str());
    for (std::size_t k = 0; k < shown; ++k)
      t += format(" %lld (%.2f)", (long long)data_.table.item_ids[static_cast<std::size_t>(scored[k].second)],
                  scored[k].first + center);
    t += "\n";
  }
  return t;
}

std::string RecommendRun::json_line() const {
  const Evaluation& e = evaluation_;
  const double seconds = seconds_since(start_);
  JsonLine j;
  j.add("method", s_.method)
      .add("mechanism", s_.mechanism)
      .add("mode", s_.mode)
      .add("epsilon", s_.privacy.epsilon)
      .add("delta", s_.privacy.delta)
      .add("rank", static_cast<std::int64_t>(model_.rank))
      .add("rmse", e.rmse)
      .add("rmse_item_mean", e.item_mean_rmse)
      .add("rmse_global_mean", e.global_mean_rmse)
      .add("rmse_private_baseline", e.private_baseline_rmse)
      .add("epsilon_spent", model_.epsilon_spent)  // null without noise (JSON has no infinity)
      .add("seconds", std::round(seconds * 1000) / 1000);
  if (e.all_entries_rmse) j.add("rmse_all_entries", *e.all_entries_rmse);
  j.add("train_seconds", std::round(train_seconds_ * 1000) / 1000)
      .add("users", static_cast<std::int64_t>(data_.users()))
      .add("items", static_cast<std::int64_t>(data_.items()))
      .add("train", static_cast<std::uint64_t>(data_.train.size()))
      .add("test", static_cast<std::uint64_t>(data_.test.size()))
      .add("input", data_.description)
      .add("neighbours", neighbours_of(s_))
      .add("catalogue", data_.catalogue)
      .add("dropped_outside_catalogue", data_.dropped_outside_catalogue)
      .add("dropped_by_cap", data_.dropped_by_cap)
      .add("users_capped", static_cast<std::int64_t>(data_.users_capped));
  add_budget_label(j, model_.budget);
  if (online_result_) add_online_json(j, *online_result_);
  add_not_private(j, not_private_keys(s_, e, online_result_.has_value()));
  return j.text();
}

}  // namespace dpstream::tools::recommend
