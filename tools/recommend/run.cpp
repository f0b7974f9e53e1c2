#include "recommend/run.hpp"

#include "common/progress.hpp"
#include "recommend/resources.hpp"
#include "dpstream/completion/metrics.hpp"

namespace dpstream::tools::recommend {

using namespace completion;

RecommendRun::RecommendRun(const RecommendSettings& s) : s_(s) {
  validate(s_);
  ids_ = parse_recommend_ids(s_.recommend);
  data_ = prepare(s_);
  users_ = resolve_users(data_, ids_);
  if (data_.test.empty()) throw UsageError("the test split is empty: raise --test-fraction");
  check_training(s_, data_.users(), data_.items(), data_.train.size());  // exit 2 before its allocations
  train_ = RatingsMatrix(data_.users(), data_.items(), data_.train);
  if (s_.online)  // the stream alone: its one charge is the run's whole ε
    online_ = std::make_unique<OnlineReplay>(s_, data_);
  else
    training_ = std::make_unique<Training>(s_, data_, train_);
}

RecommendRun::~RecommendRun() = default;

void RecommendRun::train() {
  const MeanBaselines baselines = fit_mean_baselines(train_);
  evaluation_.item_mean_rmse = rmse([&](Index u, Index i) { return baselines.predict_item(u, i); }, data_.test);
  evaluation_.global_mean_rmse = rmse([&](Index u, Index i) { return baselines.predict_global(u, i); }, data_.test);
  if (online_) {
    online_result_ = online_->run();
    const OnlineResult& r = *online_result_;
    model_.rank = s_.rank;
    model_.epsilon_spent = r.epsilon_spent;
    model_.budget = r.budget;
    train_seconds_ = r.seconds;
    if (!r.curve.empty()) {  // each held-out rating scored when its user was served
      evaluation_.rmse = r.curve.back().rmse;
      evaluation_.private_baseline_rmse = r.curve.back().private_baseline_rmse;
    }
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  model_ = training_->run();
  train_seconds_ = seconds_since(t0);
  evaluation_.rmse = rmse(model_.predict, data_.test);
  if (model_.private_baseline) evaluation_.private_baseline_rmse = rmse(*model_.private_baseline, data_.test);
  const Index users = data_.users(), items = data_.items();
  if (data_.truth && static_cast<double>(users) * static_cast<double>(items) <= 1e7) {
    const double center = center_of(s_);
    const SyntheticRatings& truth = *data_.truth;
    evaluation_.all_entries_rmse =
        full_rmse(model_.predict, [&](Index u, Index i) { return truth.truth(u, i) - center; }, users, items);
  }
}

}  // namespace dpstream::tools::recommend
