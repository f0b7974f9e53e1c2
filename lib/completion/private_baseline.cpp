#include "dpstream/completion/private_baseline.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"

namespace dpstream::completion {

using Eigen::Index;
using Eigen::VectorXd;
using base::format_value;

namespace {

constexpr double kBlockSensitivity = 1.4142135623730951;  // √2, both blocks (header)

void require_positive_baseline(const char* field, double value) {
  base::require_positive(std::string(field), value);
}

}  // namespace

void BaselineOptions::validate() const {
  scale.validate("scale");
  require_positive_baseline("item_shrinkage", item_shrinkage);
  require_positive_baseline("item_bias_prior_sd", item_bias_prior_sd);
}

double BaselineNoise::mu() const {
  return std::sqrt(2.0 / (global_sigma * global_sigma) + 2.0 / (item_sigma * item_sigma));
}

double gdp_mu_for_target(const privacy::EpsDelta& target) {
  return 1.0 / privacy::analytic_gaussian_sigma(1.0, target);
}

std::uint64_t add_user_baseline_terms(const RatingScale& scale, std::span<const std::pair<Index, double>> ratings,
                                      Eigen::Ref<VectorXd> global, Eigen::Ref<VectorXd> items) {
  if (ratings.empty()) return 0;  // a user without ratings contributes nothing (and is not counted)
  const double c = scale.center(), b = scale.half_range();
  const double w = 1.0 / std::sqrt(static_cast<double>(ratings.size()));
  std::uint64_t clipped = 0;
  double sum = 0.0;
  for (const auto& [item, value] : ratings) {
    if (item < 0 || 2 * item + 1 >= items.size())
      throw InvalidParameter("add_user_baseline_terms: item " + std::to_string(item) + " is outside [0, " +
                             std::to_string(items.size() / 2) + ")");
    if (!std::isfinite(value))  // a NaN passes the clip
      throw InvalidParameter("add_user_baseline_terms: the rating of item " + std::to_string(item) + " is not finite");
    const double x = scale.clip(value);
    if (x != value) ++clipped;
    const double centred = (x - c) / b;
    sum += centred;
    items[2 * item] += w;
    items[2 * item + 1] += w * centred;
  }
  global[0] += 1.0;
  global[1] += sum / static_cast<double>(ratings.size());
  return clipped;
}

BaselineStatistics baseline_statistics(const RatingsMatrix& train, const RatingScale& scale) {
  scale.validate("scale");
  BaselineStatistics out{VectorXd::Zero(2), VectorXd::Zero(2 * train.items()), 0};
  for (Index i = 0; i < train.users(); ++i)
    out.ratings_clipped += add_user_baseline_terms(scale, train.user_ratings(i), out.global, out.items);
  return out;
}

ItemModel baseline_model(const Eigen::Ref<const VectorXd>& global, const Eigen::Ref<const VectorXd>& item_block,
                         const BaselineOptions& options, double item_sigma) {
  options.validate();
  const RatingScale& scale = options.scale;
  const double c = scale.center(), b = scale.half_range();
  const Index items = item_block.size() / 2;
  ItemModel model;
  model.scale = scale;
  model.global_mean = scale.clip(c + b * global[1] / std::max(global[0], 1.0));
  model.item_bias.resize(items);
  model.item_weight.resize(items);
  model.item_factors.resize(items, 0);
  const double tau2 = options.item_bias_prior_sd * options.item_bias_prior_sd;
  const double release_variance = b * b * item_sigma * item_sigma;
  for (Index j = 0; j < items; ++j) {
    const double count = std::max(item_block[2 * j], 0.0);
    const double residual_sum = b * item_block[2 * j + 1] - count * (model.global_mean - c);
    model.item_weight[j] = count;
    const double denominator = count * (count + options.item_shrinkage) + release_variance / tau2;
    model.item_bias[j] = denominator > 0.0 ? count * residual_sum / denominator : 0.0;
  }
  return model;
}

BaselineRelease release_baseline(const RatingsMatrix& train, const BaselineOptions& options,
                                 const BaselineNoise& noise, privacy::NoiseSource& source) {
  options.validate();
  require_positive_baseline("global_sigma", noise.global_sigma);
  require_positive_baseline("item_sigma", noise.item_sigma);
  BaselineRelease out;
  out.released = baseline_statistics(train, options.scale);
  privacy::GaussianMechanism::with_sigma(kBlockSensitivity, noise.global_sigma).add_noise(out.released.global, source, privacy::Budget::unaccounted("charged by the caller"));
  privacy::GaussianMechanism::with_sigma(kBlockSensitivity, noise.item_sigma).add_noise(out.released.items, source, privacy::Budget::unaccounted("charged by the caller"));
  out.model = baseline_model(out.released.global, out.released.items, options, noise.item_sigma);
  return out;
}

PrivateBaseline::PrivateBaseline(const BaselineOptions& options, const privacy::EpsDelta& target,
                                 double global_share, std::optional<std::uint64_t> seed)
    : options_(options), target_(target) {
  options_.validate();
  if (!(global_share > 0.0 && global_share < 1.0))
    throw InvalidParameter("global_share must be in (0, 1), got " + format_value(global_share));
  if (!(target.delta() > 0.0)) throw InvalidParameter("the private baseline is Gaussian: its target needs delta > 0");
  const double mu = gdp_mu_for_target(target);
  noise_.global_sigma = kBlockSensitivity / (mu * std::sqrt(global_share));
  noise_.item_sigma = kBlockSensitivity / (mu * std::sqrt(1.0 - global_share));
  source_ = seed ? std::unique_ptr<privacy::NoiseSource>(std::make_unique<privacy::SeededNoiseSource>(*seed))
                 : privacy::make_secure_noise_source();
}

PrivateBaseline::~PrivateBaseline() = default;

bool PrivateBaseline::secure() const noexcept { return source_->is_secure(); }

BaselineRelease PrivateBaseline::train(const RatingsMatrix& train, const privacy::Budget& budget,
                                       const std::string& label) {
  if (budget.accounted()) budget.accountant()->charge_gaussian(label, noise_.mu(), 1.0, target_);
  return release_baseline(train, options_, noise_, *source_);
}

}  // namespace dpstream::completion
