#include "dpstream/completion/metrics.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::completion {

namespace {

double checked_prediction(const RatingPredictor& predict, Eigen::Index user, Eigen::Index item) {
  const double p = predict(user, item);
  if (!std::isfinite(p))
    throw InvalidParameter("rmse: prediction for user " + std::to_string(user) + ", item " + std::to_string(item) +
                           " is " + base::format_value(p));
  return p;
}

}  // namespace

double rmse(const RatingPredictor& predict, const std::vector<Rating>& test) {
  if (test.empty()) throw InvalidParameter("rmse: the test set is empty");
  double sum = 0.0;
  for (const Rating& r : test) {
    const double e = checked_prediction(predict, r.user, r.item) - r.value;
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(test.size()));
}

double full_rmse(const RatingPredictor& predict, const RatingPredictor& truth, Eigen::Index users,
                 Eigen::Index items) {
  if (users < 1 || items < 1)
    throw InvalidParameter("full rmse: users and items must be >= 1, got " + std::to_string(users) + " x " +
                           std::to_string(items));
  double sum = 0.0;
  for (Eigen::Index i = 0; i < users; ++i)
    for (Eigen::Index j = 0; j < items; ++j) {
      const double e = checked_prediction(predict, i, j) - truth(i, j);
      sum += e * e;
    }
  return std::sqrt(sum / (static_cast<double>(users) * static_cast<double>(items)));
}

MeanBaselines fit_mean_baselines(const RatingsMatrix& train) {
  MeanBaselines out;
  out.global_mean = train.mean();
  out.item_means = Eigen::VectorXd::Constant(train.items(), out.global_mean);
  const auto& by_item = train.by_item();
  for (Eigen::Index j = 0; j < train.items(); ++j) {
    const Eigen::Index count = train.item_count(j);
    if (count > 0) out.item_means[j] = by_item.col(j).sum() / static_cast<double>(count);
  }
  return out;
}

}  // namespace dpstream::completion
