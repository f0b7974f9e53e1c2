#include "dpstream/completion/streaming_completion.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/calibration.hpp"

namespace dpstream::completion {

namespace {

const StreamingCompletionOptions& validated(const StreamingCompletionOptions& o) {
  if (o.items < 1) throw InvalidParameter("streaming completion: items must be >= 1, got " + std::to_string(o.items));
  if (o.refresh_every < 1)
    throw InvalidParameter("streaming completion: refresh_every must be >= 1, got " + std::to_string(o.refresh_every));
  if (o.planned_refreshes < 1)
    throw InvalidParameter("streaming completion: planned_refreshes must be >= 1, got " +
                           std::to_string(o.planned_refreshes));
  if (!(o.budget.delta() > 0.0))
    throw InvalidParameter("streaming completion: the budget's delta must be > 0 (the Gaussian shares are mu-GDP)");
  return o;
}

}  // namespace

StreamingCompletion::StreamingCompletion(const StreamingCompletionOptions& options, RefreshTrainer trainer)
    : options_(validated(options)),
      trainer_(std::move(trainer)),
      share_{privacy::gdp_share_target(options.budget, options.planned_refreshes),
             options.budget.epsilon() / static_cast<double>(options.planned_refreshes), 0},
      accountant_(options.budget) {
  if (!trainer_) throw InvalidParameter("streaming completion: trainer must be set");
}

Eigen::Index StreamingCompletion::add_user(const std::vector<std::pair<Eigen::Index, double>>& ratings) {
  const Eigen::Index user = users_;
  std::vector<bool> seen(static_cast<std::size_t>(options_.items), false);
  for (const auto& [item, value] : ratings) {
    const std::string where = "streaming completion: user " + std::to_string(user) + ", item " + std::to_string(item);
    if (item < 0 || item >= options_.items)
      throw InvalidParameter(where + ": item outside [0, " + std::to_string(options_.items) + ")");
    if (seen[static_cast<std::size_t>(item)]) throw InvalidParameter(where + ": rated twice");
    if (!std::isfinite(value)) throw InvalidParameter(where + ": rating is not finite");
    seen[static_cast<std::size_t>(item)] = true;
  }
  for (const auto& [item, value] : ratings) ratings_.push_back({user, item, value});
  ++users_;
  if (pending_users() >= options_.refresh_every) refresh();
  return user;
}

void StreamingCompletion::refresh() {
  if (refreshes_ >= options_.planned_refreshes)
    throw BudgetExhausted("streaming completion: refresh " + std::to_string(refreshes_ + 1) + " refused: the budget " +
                          options_.budget.to_string() + " was split into " +
                          std::to_string(options_.planned_refreshes) + " refreshes, all used; " +
                          std::to_string(pending_users()) + " users wait unrefreshed, the last model stays");
  RefreshBudget budget = share_;
  budget.refresh = refreshes_ + 1;
  const RatingsMatrix users_so_far(users_, options_.items, ratings_);
  model_ = trainer_(users_so_far, budget, accountant_);
  ++refreshes_;
  users_at_last_refresh_ = users_;
}

const RatingPredictor& StreamingCompletion::model() const {
  if (!model_) throw InvalidParameter("streaming completion: no model before the first refresh");
  return *model_;
}

}  // namespace dpstream::completion
