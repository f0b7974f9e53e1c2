#include "dpstream/completion/item_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"

namespace dpstream::completion {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using base::format_value;

void RatingScale::validate(const char* field) const {
  if (!(std::isfinite(low) && std::isfinite(high) && low < high))
    throw InvalidParameter(std::string(field) + ": the rating scale needs finite low < high, got [" + format_value(low) +
                           ", " + format_value(high) + "]");
}

void FoldInOptions::validate() const {
  base::require_nonnegative("bias_shrinkage", bias_shrinkage);
  base::require_positive("factor_regularization", factor_regularization);
  base::require_positive("factor_bound", factor_bound);
  base::require_nonnegative("validation_margin", validation_margin);
}

namespace {

void require_item(const ItemModel& model, Index item) {
  if (item < 0 || item >= model.items())
    throw InvalidParameter("item " + std::to_string(item) + " is outside the model's [0, " +
                           std::to_string(model.items()) + ")");
}

}  // namespace

double ItemModel::predict(const UserModel& user, Index item) const {
  require_item(*this, item);
  double value = item_baseline(item) + user.bias;
  if (rank() > 0 && user.factor.size() == rank()) value += item_factors.row(item).dot(user.factor);
  return scale.clip(value);
}

namespace {

UserModel fit_user(const ItemModel& model, const FoldInOptions& options, std::span<const std::pair<Index, double>> ratings);

// Sums over held-out ratings of the gain g (baseline's squared error minus the factor's) and of g².
struct GainSums {
  double count = 0.0, sum = 0.0, sum_squares = 0.0;
};

// Adds, for each rating of `held_out`, how much a fit on `fitted` predicts it better with her factor
// than with her bias alone to `sums`.
void add_held_out_gains(const ItemModel& model, const FoldInOptions& options,
                        std::span<const std::pair<Index, double>> fitted,
                        std::span<const std::pair<Index, double>> held_out, GainSums& sums) {
  const UserModel user = fit_user(model, options, fitted);
  UserModel bias_only = user;
  bias_only.factor.setZero();
  for (const auto& [item, value] : held_out) {
    const double x = model.scale.clip(value);
    const double g = std::pow(model.predict(bias_only, item) - x, 2) - std::pow(model.predict(user, item) - x, 2);
    sums.count += 1.0;
    sums.sum += g;
    sums.sum_squares += g * g;
  }
}

}  // namespace

std::optional<HeldOutGain> held_out_factor_gain(const ItemModel& model, const FoldInOptions& options,
                                                std::span<const std::pair<Index, double>> ratings) {
  if (ratings.size() < 4) return std::nullopt;
  std::vector<std::pair<Index, double>> even, odd;
  for (std::size_t k = 0; k < ratings.size(); ++k) (k % 2 == 0 ? even : odd).push_back(ratings[k]);
  GainSums sums;
  add_held_out_gains(model, options, even, odd, sums);
  add_held_out_gains(model, options, odd, even, sums);
  const double n = sums.count;
  HeldOutGain out;
  out.ratings = ratings.size();
  out.mean = sums.sum / n;
  out.standard_error = std::sqrt(std::max(0.0, (sums.sum_squares - sums.sum * sums.sum / n) / (n - 1.0)) / n);
  return out;
}

namespace {

// The check of FoldInOptions::validate_factor: her held-out gain above validation_margin standard errors.
bool factor_validates(const ItemModel& model, const FoldInOptions& options, std::span<const std::pair<Index, double>> ratings) {
  const std::optional<HeldOutGain> gain = held_out_factor_gain(model, options, ratings);
  return gain && gain->mean > options.validation_margin * gain->standard_error;
}

}  // namespace

UserModel fold_in_user(const ItemModel& model, const FoldInOptions& options,
                       std::span<const std::pair<Index, double>> ratings) {
  for (const auto& [item, value] : ratings) {
    require_item(model, item);
    if (!std::isfinite(value))  // a NaN passes the scale's clip and would reach every term made from her
      throw InvalidParameter("fold_in_user: the rating of item " + std::to_string(item) + " is " +
                             base::format_value(value) + ", not finite");
  }
  UserModel user = fit_user(model, options, ratings);
  if (options.validate_factor && model.rank() > 0 && !factor_validates(model, options, ratings)) {
    user.factor.setZero();
    user.factor_declined = true;
  }
  return user;
}

namespace {

UserModel fit_user(const ItemModel& model, const FoldInOptions& options, std::span<const std::pair<Index, double>> ratings) {
  const Index rank = model.rank();
  UserModel user;
  user.factor = VectorXd::Zero(rank);
  if (ratings.empty()) return user;
  // Her bias: shrunk mean of her ratings against the public item baselines.
  double residual_sum = 0.0;
  for (const auto& [item, value] : ratings) residual_sum += model.scale.clip(value) - model.item_baseline(item);
  user.bias = residual_sum / (static_cast<double>(ratings.size()) + options.bias_shrinkage);
  if (rank == 0) return user;
  // Her factor: ridge regression of what the biases leave on the public item factors.
  MatrixXd gram = options.factor_regularization * MatrixXd::Identity(rank, rank);
  VectorXd rhs = VectorXd::Zero(rank);
  for (const auto& [item, value] : ratings) {
    const auto v = model.item_factors.row(item).transpose();
    gram.selfadjointView<Eigen::Lower>().rankUpdate(v);
    rhs += (model.scale.clip(value) - model.item_baseline(item) - user.bias) * v;
  }
  user.factor = gram.selfadjointView<Eigen::Lower>().ldlt().solve(rhs);
  const double norm = user.factor.norm();
  if (!std::isfinite(norm) || !std::isfinite(user.bias))  // NaN > bound is false: the clip would let it through
    throw InvalidParameter("fold_in_user: the fitted factor's norm is " + base::format_value(norm) + " and the bias " +
                           base::format_value(user.bias) + ": not finite (a non-finite or overflowing item model), refused");
  if (norm > options.factor_bound) {
    user.factor *= options.factor_bound / norm;
    user.factor_clipped = true;
  }
  return user;
}

}  // namespace

UserModel fold_in_user(const ItemModel& model, const FoldInOptions& options, const RatingsMatrix& ratings,
                       Index user) {
  if (user < 0 || user >= ratings.users())
    throw InvalidParameter("user " + std::to_string(user) + " is outside the ratings' [0, " +
                           std::to_string(ratings.users()) + ")");
  return fold_in_user(model, options, ratings.user_ratings(user));
}

}  // namespace dpstream::completion
