// StreamingCompletion: users arrive over time and the model is refreshed every B arrivals, each
// refresh accounted (streaming use).
//
//   add_user(ratings) ─▶ pool of all users so far ─(every B users)─▶ trainer(pool, share) ─▶ model
//                                                                        └─ charges the accountant
//
// Each refresh retrains on ALL users seen so far (a matrix-completion model needs every user's
// ratings), through a caller-supplied trainer (private Frank–Wolfe, rigorous ALS/IRLS, ...) that
// calibrates to the share it is given and charges the stream's accountant.
//
// Privacy contract
//  * Unit: one user (her whole rating row), user-level as in the trainers; the item catalogue
//    (`items`) is public.
//  * Participation: a user who arrives before refresh r is read by refreshes r, r+1, …, R; so every
//    user is in at most R = planned_refreshes refreshes, and the first users in exactly R.
//  * Budget split: the stream's budget (ε, δ) is divided into R shares before the first refresh.
//      Gaussian trainers get gaussian_share = gdp_share_target(budget, R): calibrated alone to it,
//      each refresh is μ/√R-GDP (μ = gdp_mu_for_budget(budget)), and R of them compose to (ε, δ) by the
//      accountant's GDP bound — whatever the data-dependent order in which users arrived, because the
//      refreshes are adaptively composed Gaussian mechanisms (every charge Gaussian: a trainer that
//      made another kind of charge would switch that bound off and have its last share refused).
//      Pure-ε trainers (Laplace, Huber) get pure_share_epsilon = ε/R (basic composition).
//  * Guarantee: every user, over the whole stream, gets (ε, δ)-DP for the broadcasts of all refreshes
//    (joint DP for what the trainer's model gives her back, as the trainer states). The accountant is
//    the stream's; spent() reports what the refreshes so far used.
//  * A refresh past R is refused with BudgetExhausted before the trainer runs; the users stay in the
//    pool (nothing is lost), and the last model stays in service.
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/metrics.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::completion {

struct StreamingCompletionOptions {
  Eigen::Index items = 1;           // n ≥ 1: the public item catalogue
  Eigen::Index refresh_every = 1;   // B ≥ 1: users between refreshes
  long planned_refreshes = 1;       // R ≥ 1: the budget is split into R shares
  privacy::EpsDelta budget{1.0, 1e-6};  // for the whole stream; δ > 0
};

// What one refresh may spend.
struct RefreshBudget {
  privacy::EpsDelta gaussian_share;  // calibrate Gaussian releases to this (gdp_share_target)
  double pure_share_epsilon;         // ε/R, for pure-ε mechanisms
  long refresh;                      // 1-based index of this refresh
};

// Trains on every user so far, charging `accountant` what it spends, and returns the model's predictor.
using RefreshTrainer = std::function<RatingPredictor(const RatingsMatrix& users_so_far, const RefreshBudget& budget,
                                                     privacy::PrivacyAccountant& accountant)>;

class StreamingCompletion {
 public:
  // Options validated (InvalidParameter naming the field); `trainer` must be set.
  StreamingCompletion(const StreamingCompletionOptions& options, RefreshTrainer trainer);

  // Adds the next user (item, rating) pairs; returns her dense index. Items in [0, items), each at most
  // once, ratings finite, else InvalidParameter naming the user and item (the user is not added). When
  // B users are pending, refreshes (and may throw BudgetExhausted: the user is kept all the same).
  Eigen::Index add_user(const std::vector<std::pair<Eigen::Index, double>>& ratings);
  // Refreshes now on the users so far (e.g. at the end of the stream). BudgetExhausted past R.
  void refresh();

  bool has_model() const noexcept { return model_.has_value(); }
  // The latest refresh's predictor; InvalidParameter before the first refresh.
  const RatingPredictor& model() const;
  long refreshes() const noexcept { return refreshes_; }
  Eigen::Index users() const noexcept { return users_; }
  Eigen::Index pending_users() const noexcept { return users_ - users_at_last_refresh_; }
  const std::vector<Rating>& ratings() const noexcept { return ratings_; }
  const RefreshBudget& share() const noexcept { return share_; }
  const privacy::PrivacyAccountant& accountant() const noexcept { return accountant_; }

 private:
  StreamingCompletionOptions options_;
  RefreshTrainer trainer_;
  RefreshBudget share_;
  privacy::PrivacyAccountant accountant_;
  std::vector<Rating> ratings_;
  Eigen::Index users_ = 0;
  Eigen::Index users_at_last_refresh_ = 0;
  long refreshes_ = 0;
  std::optional<RatingPredictor> model_;
};

}  // namespace dpstream::completion
