// Accuracy of a completed matrix: test RMSE and the two non-private baselines every result is shown
// beside (test RMSE: Jain, Thakkar & Thakurta, "Differentially private matrix completion revisited",
// ICML 2018, §4; RMSE over all entries: Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the
// Huber mechanism for differentially private low-rank matrix completion", arXiv 2022, §4).
//
// The baselines are NOT private: they read the training ratings without noise. They are reference
// points for a report, never something to release.
#pragma once

#include <functional>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/ratings_matrix.hpp"

namespace dpstream::completion {

// predict(user, item) → rating.
using RatingPredictor = std::function<double(Eigen::Index user, Eigen::Index item)>;

// √(mean over `test` of (predict − value)²). Empty test: InvalidParameter. A non-finite prediction:
// InvalidParameter naming the user and item.
double rmse(const RatingPredictor& predict, const std::vector<Rating>& test);

// ‖X − Ẑ‖_F/√(mn) over ALL entries of a known truth (Gowtham et al.'s metric on synthetic data).
double full_rmse(const RatingPredictor& predict, const RatingPredictor& truth, Eigen::Index users,
                 Eigen::Index items);

// Baselines fitted on `train`: the global mean, and each item's mean (items without ratings fall back
// to the global mean).
struct MeanBaselines {
  double global_mean = 0.0;
  Eigen::VectorXd item_means;
  double predict_global(Eigen::Index, Eigen::Index) const { return global_mean; }
  double predict_item(Eigen::Index, Eigen::Index item) const { return item_means[item]; }
};
MeanBaselines fit_mean_baselines(const RatingsMatrix& train);

}  // namespace dpstream::completion
