#include "replay/learners.hpp"

#include <algorithm>

#include "common/text.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace dpstream::tools::replay {

using Eigen::Index;
using Eigen::MatrixXd;

privacy::EpsDelta learner_share(const privacy::EpsDelta& total, std::size_t learners) {
  if (learners <= 1) return total;  // one learner: the whole target, calibrated as before
  return privacy::gdp_share_target(total, static_cast<long>(learners));  // every learner is Gaussian
}

std::optional<std::uint64_t> learner_seed(const std::optional<std::uint64_t>& seed, std::size_t index) {
  if (!seed) return std::nullopt;
  return *seed + 0x9E3779B97F4A7C15ull * index;  // golden-ratio stride: distinct for every index
}

namespace {

bool listed(const std::vector<std::string>& list, const char* name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// A learner's index among all the learner names (fpl 0: the run's own seed), whatever the list's order.
std::size_t index_of(const char* name) {
  const std::vector<std::string> all = {"fpl", "oja", "power", "gauss"};
  return static_cast<std::size_t>(std::find(all.begin(), all.end(), name) - all.begin());
}

}  // namespace

RowLearners::RowLearners(Index d, const ReplaySettings& s, std::optional<std::uint64_t> horizon,
                         privacy::PrivacyAccountant* accountant)
    : d_(d), k_(s.k), minibatch_(s.minibatch), share_(learner_share(s.privacy.target(), s.learners().size())),
      accountant_(accountant) {
  const std::vector<std::string> list = s.learners();
  for (const char* name : {"oja", "power", "gauss"})
    if (listed(list, name)) names_.emplace_back(name);
  // Built in list order is not needed: each charges its own share, and the charges commute.
  if (listed(list, "oja")) {
    pca::StreamingPrivateOjaOptions o;
    o.k = s.k;
    o.batch_rows = s.minibatch;
    // The replay scores an estimate every --minibatch rows: fixed minibatches with the 1/t Oja step
    // (the power step and the geometric plan are dpstream-pca's one-pass defaults).
    o.batch_growth = 1.0;
    o.step_rule = pca::StepRule::oja;
    o.oversampling = 0;
    o.row_norm_bound = s.normalize.norm_bound();
    o.target = share_;
    o.calibration = s.privacy.calibration_value();
    o.seed = learner_seed(s.privacy.seed, index_of("oja"));
    oja_ = std::make_unique<pca::StreamingPrivateOja>(d, o, accountant);
  }
  if (listed(list, "power")) {
    pca::StreamingPrivatePcaOptions o;
    o.horizon_rows = horizon.value_or(0);
    o.refresh_every = s.minibatch;
    o.refresh.k = s.k;
    o.refresh.release_values = false;  // only the subspace is used: no round spent on the values
    o.refresh.target = share_;
    o.refresh.calibration = s.privacy.calibration_value();
    o.refresh.row_norm_bound = s.normalize.norm_bound();
    o.refresh.seed = learner_seed(s.privacy.seed, index_of("power"));
    power_ = std::make_unique<pca::StreamingPrivatePca>(d, o, accountant);
  }
  if (listed(list, "gauss")) {
    pca::GaussianPcaOptions o;
    o.k = s.k;
    o.mechanism.target = share_;
    o.mechanism.calibration = s.privacy.calibration_value();
    o.mechanism.row_norm_bound = s.normalize.norm_bound();
    o.mechanism.shape = privacy::parse_symmetric_noise_shape(s.noise_shape);
    o.seed = learner_seed(s.privacy.seed, index_of("gauss"));
    gauss_ = std::make_unique<pca::GaussianPca>(d, o);  // its options are checked now, before any noise
  }
}

RowLearners::~RowLearners() = default;

std::vector<std::string> RowLearners::meter_names() const {
  std::vector<std::string> names;
  for (const std::string& name : names_)
    if (name != "gauss") names.push_back(name);
  return names;
}

void RowLearners::step(const Eigen::Ref<const MatrixXd>& rows, eval::RegretMeter& meter) {
  if (oja_) {
    meter.add_gains(meter.learner("oja"), (rows * oja_->basis()).rowwise().squaredNorm());
    oja_->update_block(rows);
  }
  if (power_) {
    const pca::PrivateSubspace& now = power_->current();
    if (now.vectors.cols() == k_)
      meter.add_gains(meter.learner("power"), (rows * now.vectors).rowwise().squaredNorm());
    else
      meter.add_gains(meter.learner("power"), Eigen::VectorXd::Zero(rows.rows()));  // no estimate yet
    power_->update_block(rows);
  }
}

void RowLearners::finish(const eval::RegretMeter& meter) {
  if (oja_) oja_->flush();
  if (!gauss_) return;
  // The meter's exact Σ aaᵀ of every guarded row (each ‖a‖ ≤ L: RowGuard checked them).
  stream::CovarianceAccumulator exact(d_);
  exact.unpack(meter.state().exact_sum, meter.rows());
  gauss_basis_ = gauss_->release(exact, accountant_).subspace.vectors;
}

std::vector<LearnerFigures> RowLearners::figures(const eval::RegretMeter& meter) const {
  const MatrixXd& c = meter.hindsight_covariance();
  const double opt = meter.opt();
  std::vector<LearnerFigures> out;
  for (const std::string& name : names_) {
    LearnerFigures f{name, 0, 0, share_.epsilon(), share_.delta()};
    const MatrixXd* basis = nullptr;
    if (name == "oja") basis = &oja_->basis();
    if (name == "power") basis = &power_->current().vectors;
    if (name == "gauss") basis = &gauss_basis_;
    f.captured_ratio = basis->cols() == k_ ? pca::captured_variance(c, *basis) / opt : 0.0;
    f.regret_over_opt = name == "gauss" ? 1.0 - f.captured_ratio : meter.regret_over_opt(meter.learner(name));
    out.push_back(f);
  }
  return out;
}

std::string RowLearners::describe() const {
  std::string t;
  const std::string share = format("(ε, δ) share (%.4g, %.3g)", share_.epsilon(), share_.delta());
  if (oja_)
    t += format("oja: streaming private Oja (DP-PCA), minibatches of %llu rows, %llu steps; %s, μ = %.4g, "
                "σ per unit sensitivity %.4g\n",
                (unsigned long long)oja_->options().batch_rows, (unsigned long long)oja_->steps(), share.c_str(),
                oja_->mu(), oja_->unit_sigma());
  if (power_)
    t += format("power: streaming noisy power method, a refresh every %llu rows, %llu of %llu refreshes; %s, "
                "μ = %.4g, σ %.4g\n",
                (unsigned long long)minibatch_, (unsigned long long)power_->refreshes(),
                (unsigned long long)power_->planned_refreshes(), share.c_str(), power_->mu(), power_->sigma());
  if (gauss_)
    t += format("gauss: Analyze Gauss, offline, one release of the exact covariance of all rows; %s, σ %.4g\n",
                share.c_str(), gauss_->sigma());
  return t;
}

}  // namespace dpstream::tools::replay
