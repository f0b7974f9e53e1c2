#include "dpstream/completion/dpam_als.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/completion/private_als.hpp"  // statistics_stride
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"

namespace dpstream::completion {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using base::format_value;

namespace {

constexpr std::uint64_t kDpamInitSeedOffset = 0x5eed'a15bULL;  // the initial V's stream, apart from the noise's

void require_positive_option(const char* field, double value) {
  base::require_positive(std::string("DpamAls: ") + field, value);
}

void require_nonnegative_option(const char* field, double value) {
  base::require_nonnegative(std::string("DpamAls: ") + field, value);
}

const DpamAlsOptions& validated(const DpamAlsOptions& o) {
  if (o.rank < 1) throw InvalidParameter("DpamAls: rank must be >= 1, got " + std::to_string(o.rank));
  if (o.iterations < 1) throw InvalidParameter("DpamAls: iterations must be >= 1, got " + std::to_string(o.iterations));
  o.baseline.validate();
  o.fold_in.validate();
  require_positive_option("residual_bound", o.residual_bound);
  require_positive_option("item_regularization", o.item_regularization);
  require_nonnegative_option("gram_noise_multiplier", o.gram_noise_multiplier);
  require_nonnegative_option("min_item_count_sds", o.min_item_count_sds);
  require_positive_option("init_sd", o.init_sd);
  if (!(o.item_weight_exponent >= 0.0 && o.item_weight_exponent <= 1.0))
    throw InvalidParameter("DpamAls: item_weight_exponent must be in [0, 1], got " + format_value(o.item_weight_exponent));
  if (!(o.global_share > 0.0 && o.baseline_share > 0.0 && o.gate_share >= 0.0 &&
        o.global_share + o.baseline_share + o.gate_share < 1.0))
    throw InvalidParameter("DpamAls: global_share and baseline_share must be > 0, gate_share >= 0, with a sum < 1; got " +
                           format_value(o.global_share) + ", " + format_value(o.baseline_share) + " and " +
                           format_value(o.gate_share));
  require_positive_option("gate_bound", o.gate_bound);
  require_nonnegative_option("gate_margin", o.gate_margin);
  if (!(o.target.delta() > 0.0)) throw InvalidParameter("DpamAls: the mechanism is Gaussian: target delta must be > 0");
  return o;
}


}  // namespace

double dpam_item_weight(double noisy_count, double exponent) { return std::pow(std::max(noisy_count, 0.0) + 1.0, -exponent); }

std::uint64_t add_user_v_step_terms(const DpamAlsOptions& o, const ItemModel& model, const UserModel& user,
                                    std::span<const std::pair<Index, double>> ratings, Eigen::Ref<VectorXd> statistics) {
  const Index rank = o.rank, stride = statistics_stride(rank);
  if (model.rank() != rank || user.factor.size() != rank || statistics.size() != model.items() * stride)
    throw InvalidParameter("add_user_v_step_terms: the model, the user's factor and the statistics must have rank " +
                           std::to_string(rank) + " and " + std::to_string(model.items()) + " items");
  double norm2 = 0.0;
  for (const auto& [item, value] : ratings) {
    if (item < 0 || item >= model.items())
      throw InvalidParameter("add_user_v_step_terms: item " + std::to_string(item) + " is outside [0, " +
                             std::to_string(model.items()) + ")");
    const double a = dpam_item_weight(model.item_weight[item], o.item_weight_exponent);
    norm2 += a * a;
  }
  if (norm2 == 0.0) return 0;
  const double inverse_norm = 1.0 / std::sqrt(norm2);
  const VectorXd& u = user.factor;
  std::uint64_t clipped = 0;
  for (const auto& [item, value] : ratings) {
    const double w = dpam_item_weight(model.item_weight[item], o.item_weight_exponent) * inverse_norm;
    double r = model.scale.clip(value) - model.item_baseline(item) - user.bias;
    if (std::fabs(r) > o.residual_bound) {
      r = std::copysign(o.residual_bound, r);
      ++clipped;
    }
    double* out = statistics.data() + item * stride;
    Index pos = 0;
    for (Index a = 0; a < rank; ++a) {
      const double wa = w * u[a];
      for (Index b = a; b < rank; ++b) out[pos++] += wa * u[b];
    }
    const double wr = w * r;
    for (Index a = 0; a < rank; ++a) out[pos++] += wr * u[a];
  }
  return clipped;
}

std::optional<double> dpam_gate_term(const DpamAlsOptions& o, const ItemModel& model,
                                     std::span<const std::pair<Index, double>> ratings, bool& clipped) {
  clipped = false;
  const std::optional<HeldOutGain> gain = held_out_factor_gain(model, o.fold_in, ratings);
  if (!gain) return std::nullopt;
  if (std::fabs(gain->mean) <= o.gate_bound) return gain->mean;
  clipped = true;
  return std::copysign(o.gate_bound, gain->mean);
}

FoldInOptions training_fold_in(const FoldInOptions& serving) {
  FoldInOptions o = serving;
  o.validate_factor = false;
  return o;
}

VectorXd dpam_v_step_statistics(const DpamAlsOptions& options, const ItemModel& model, const RatingsMatrix& ratings) {
  VectorXd statistics = VectorXd::Zero(model.items() * statistics_stride(options.rank));
  const FoldInOptions fold_in = training_fold_in(options.fold_in);
  for (Index i = 0; i < ratings.users(); ++i) {
    const auto row = ratings.user_ratings(i);
    add_user_v_step_terms(options, model, fold_in_user(model, fold_in, row), row, statistics);
  }
  return statistics;
}

VectorXd solve_item_factor(const DpamAlsOptions& o, const double* statistics, double noise_sigma) {
  const Index rank = o.rank;
  Eigen::MatrixXd gram(rank, rank);
  VectorXd rhs(rank);
  Index pos = 0;
  for (Index a = 0; a < rank; ++a)
    for (Index b = a; b < rank; ++b) gram(a, b) = gram(b, a) = statistics[pos++];
  for (Index a = 0; a < rank; ++a) rhs[a] = statistics[pos++];
  const double ridge = o.item_regularization + o.gram_noise_multiplier * 2.0 * noise_sigma * std::sqrt(static_cast<double>(rank));
  const linalg::SymmetricEigenSolver eigen(gram);
  const MatrixXd& q = eigen.eigenvectors();
  VectorXd coordinates = q.transpose() * rhs;
  coordinates.array() /= eigen.eigenvalues().array().max(0.0) + ridge;
  return q * coordinates;
}

DpamAls::DpamAls(const DpamAlsOptions& options) : options_(validated(options)) {
  const DpamAlsOptions& o = options_;
  mu_ = gdp_mu_for_target(o.target);
  const double block = std::sqrt(2.0);
  baseline_noise_.global_sigma = block / (mu_ * std::sqrt(o.global_share));
  baseline_noise_.item_sigma = block / (mu_ * std::sqrt(o.baseline_share));
  const double als_share = 1.0 - o.global_share - o.baseline_share - o.gate_share;
  release_sigma_ = release_sensitivity() * std::sqrt(static_cast<double>(o.iterations)) / (mu_ * std::sqrt(als_share));
  if (o.gate_share > 0.0) gate_sigma_ = o.gate_bound / (mu_ * std::sqrt(o.gate_share));
  // Checked now, not at train()'s charge: a μ that the target does not admit in floating point (an ε
  // so large that the profile's δ cannot be met) or a σ that overflows or vanishes (a huge factor
  // bound) would otherwise stop the run after it started.
  const double sigmas[] = {baseline_noise_.global_sigma, baseline_noise_.item_sigma, release_sigma_,
                           o.gate_share > 0.0 ? gate_sigma_ : 1.0};
  for (const double sigma : sigmas)
    if (!std::isfinite(sigma) || !(sigma > 0.0))
      throw InvalidParameter("DpamAls: a noise scale is not finite and > 0 (sigma " + base::format_value(sigma) +
                             ", GDP mu " + base::format_value(mu_) + ", factor bound " +
                             base::format_value(o.fold_in.factor_bound) + ")");
  if (!(privacy::analytic_gaussian_delta(mu_, 1.0, o.target.epsilon()) <= o.target.delta() * (1.0 + 1e-6)))
    throw InvalidParameter("DpamAls: GDP mu " + base::format_value(mu_) + " does not meet " +
                           o.target.to_string() + " in floating point");
  if (o.seed) {
    mechanism_source_ = std::make_unique<privacy::SeededNoiseSource>(*o.seed);
    algorithm_source_ = std::make_unique<privacy::SeededNoiseSource>(*o.seed + kDpamInitSeedOffset);
  } else {
    mechanism_source_ = privacy::make_secure_noise_source();
    algorithm_source_ = privacy::make_secure_noise_source();
  }
}

DpamAls::~DpamAls() = default;

double DpamAls::release_sensitivity() const noexcept {
  const double bu = options_.fold_in.factor_bound, br = options_.residual_bound;
  return bu * std::sqrt(bu * bu + br * br);
}

bool DpamAls::secure() const noexcept { return mechanism_source_->is_secure() && algorithm_source_->is_secure(); }

DpamAlsResult DpamAls::train(const RatingsMatrix& train, const privacy::Budget& budget,
                             const std::string& label, const ReleaseObserver& observer) {
  const DpamAlsOptions& o = options_;
  if (train.items() < 1) throw InvalidParameter("DpamAls: the ratings have no item");
  if (budget.accounted()) budget.accountant()->charge_gaussian(label, mu_, 1.0, o.target);  // before any data is read

  BaselineRelease base = release_baseline(train, o.baseline, baseline_noise_, *mechanism_source_);
  DpamAlsResult result;
  result.ratings_clipped = base.released.ratings_clipped;  // (base.released moves into the result below)
  ItemModel& model = result.model;
  model = std::move(base.model);
  const Index items = train.items(), users = train.users(), rank = o.rank;

  // Public, from the baseline release: the items that get a factor.
  std::vector<char> active(static_cast<std::size_t>(items));
  const double count_threshold = o.min_item_count_sds * baseline_noise_.item_sigma;
  for (Index j = 0; j < items; ++j) {
    active[static_cast<std::size_t>(j)] = model.item_weight[j] >= count_threshold ? 1 : 0;
    if (!active[static_cast<std::size_t>(j)]) ++result.items_left_out;
  }
  model.item_factors.resize(items, rank);
  for (Index j = 0; j < items; ++j)
    for (Index c = 0; c < rank; ++c) model.item_factors(j, c) = o.init_sd * algorithm_source_->gaussian();
  for (Index j = 0; j < items; ++j)
    if (!active[static_cast<std::size_t>(j)]) model.item_factors.row(j).setZero();
  result.baseline = std::move(base.released);
  result.initial_model = model;

  std::vector<std::vector<std::pair<Index, double>>> rows(static_cast<std::size_t>(users));
  for (Index i = 0; i < users; ++i) rows[static_cast<std::size_t>(i)] = train.user_ratings(i);
  VectorXd statistics(items * statistics_stride(rank));
  const privacy::GaussianMechanism release = privacy::GaussianMechanism::with_sigma(release_sensitivity(), release_sigma_);
  const FoldInOptions fold_in = training_fold_in(o.fold_in);
  for (int t = 1; t <= o.iterations; ++t) {
    statistics.setZero();
    for (const auto& row : rows) {  // each user alone, from the public model
      const UserModel user = fold_in_user(model, fold_in, row);
      if (user.factor_clipped) ++result.user_factors_clipped;
      result.residuals_clipped += add_user_v_step_terms(o, model, user, row, statistics);
    }
    // One release: every item's Gram and RHS.
    release.add_noise(statistics, *mechanism_source_, privacy::Budget::unaccounted("train() charged the whole run"));
    for (Index j = 0; j < items; ++j)
      if (active[static_cast<std::size_t>(j)])
        model.item_factors.row(j) = solve_item_factor(o, statistics.data() + j * statistics_stride(rank), release_sigma_).transpose();
    if (observer) observer(DpamRelease{t, statistics, model});
  }
  if (o.gate_share > 0.0) {
    ModelGate gate;
    gate.sigma = gate_sigma_;
    gate.threshold = o.gate_margin * gate_sigma_;
    double sum = 0.0;
    for (const auto& row : rows) {  // each user alone, from the public model
      bool clipped = false;
      if (const std::optional<double> term = dpam_gate_term(o, model, row, clipped)) {
        sum += *term;
        ++gate.users;
        if (clipped) ++gate.users_clipped;
      }
    }
    VectorXd released = VectorXd::Constant(1, sum);
    privacy::GaussianMechanism::with_sigma(o.gate_bound, gate_sigma_).add_noise(released, *mechanism_source_, privacy::Budget::unaccounted("train() charged the whole run"));
    gate.noisy_sum = released[0];
    gate.open = gate.noisy_sum > gate.threshold;
    if (!gate.open) model.item_factors.resize(items, 0);  // the baseline alone
    result.gate = gate;
  }
  return result;
}

}  // namespace dpstream::completion
