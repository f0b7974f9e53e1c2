// dpstream-recommend: private matrix completion of a ratings file (or a generated set), scored on a
// held-out split next to the item-mean and global-mean baselines.
//
//   data (data.hpp) ─▶ method (fw | als | irls) × mechanism × mode (train.hpp) ─▶ test RMSE, baselines
//
// Every score printed (the RMSEs, both baselines, the recommendations) reads raw ratings: it is
// evaluation, the trusted-curator view of the simulation, not a release.
//
// Output: a human summary and, as the last line of stdout, one JSON object {method, mechanism, mode,
// epsilon, delta, rank, rmse, rmse_item_mean, rmse_global_mean, rmse_private_baseline, epsilon_spent,
// seconds, ...} (epsilon_spent and rmse_private_baseline are null without noise); --online appends
// its keys (online.hpp) after those.
//
// --online: instead of the batch model, the online Recommender replays the same split in timestamp
// order (online.hpp), its ε printed once for the whole stream. The JSON's rmse and
// rmse_private_baseline are then the running figures over every held-out rating, each scored when its
// user was served; epsilon_spent is the stream's.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpstream/completion/ratings_matrix.hpp"
#include "recommend/data.hpp"
#include "recommend/online.hpp"
#include "recommend/settings.hpp"
#include "recommend/train.hpp"

namespace dpstream::tools::recommend {

// The model's scores on the test split, and on every entry of a generated set's truth.
struct Evaluation {
  double rmse = 0, item_mean_rmse = 0, global_mean_rmse = 0;
  std::optional<double> private_baseline_rmse;  // Model::private_baseline's, when the run is private
  std::optional<double> all_entries_rmse;  // generated sets of at most 1e7 entries
};

class RecommendRun {
 public:
  // Everything that can refuse the run before any noise is drawn (UsageError, exit 2): the settings,
  // the --recommend ids (numbers, and users in the data), the data, the test split, every option of
  // the training. Reads the data (a malformed line: exit 1).
  explicit RecommendRun(const RecommendSettings& s);
  ~RecommendRun();

  // Trains and evaluates (an error: exit 1); streaming prints a line per refresh.
  void train();
  // Before train(), a batch dpam run: `observer` sees every V-step release (for the audits).
  void observe_dpam_releases(completion::DpamAls::ReleaseObserver observer) {
    if (!training_) throw std::logic_error("observe_dpam_releases: --online trains no batch model");
    training_->observe_dpam_releases(std::move(observer));
  }

  const Prepared& data() const { return data_; }
  // After train(): the batch model (its public release in Model::released) or the online result.
  const Model& model() const { return model_; }
  const std::optional<OnlineResult>& online_result() const { return online_result_; }
  // After train(): the method, privacy and score lines, then the recommendations.
  std::string summary_text() const;
  std::string json_line() const;

 private:
  std::string recommendations_text() const;

  const RecommendSettings& s_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<RecommendId> ids_;
  std::vector<Index> users_;  // --recommend's users, dense indices
  Prepared data_;
  completion::RatingsMatrix train_;
  std::unique_ptr<Training> training_;
  std::unique_ptr<OnlineReplay> online_;      // --online
  std::optional<OnlineResult> online_result_;
  Model model_;
  Evaluation evaluation_;
  double train_seconds_ = 0;
};

}  // namespace dpstream::tools::recommend
