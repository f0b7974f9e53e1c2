#include "recommend/train.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/completion/private_baseline.hpp"
#include "dpstream/completion/streaming_completion.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "common/privacy_labels.hpp"
#include "dpstream/privacy/calibration.hpp"

namespace dpstream::tools::recommend {

using namespace completion;

namespace {

std::string format_line(const char* format, double a, double b = 0.0, double c = 0.0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// ‖U Vᵀ‖_nuc: the singular values of U Vᵀ are those of R_U R_Vᵀ (U = Q_U R_U, V = Q_V R_V; r × r).
double nuclear_norm(const SyntheticRatings& truth) {
  const Eigen::MatrixXd ru = linalg::HouseholderQr(truth.user_factors).r();
  const Eigen::MatrixXd rv = linalg::HouseholderQr(truth.item_factors).r();
  return linalg::singular_values(ru * rv.transpose()).sum();
}

FrankWolfeOptions frank_wolfe_options(const RecommendSettings& s, const RatingsMatrix& train,
                                      const std::optional<SyntheticRatings>& truth) {
  FrankWolfeOptions o;
  o.iterations = s.iterations > 0 ? s.iterations : 10;
  // k must be public: a constant matrix of typical rating c has nuclear norm c·√(mn); c = B_r/4 (the
  // centred ratings sit well inside the bound; on the MovieLens-shaped set B_r/4 beat B_r/2 and B_r/8
  // non-privately). --oracle-k: validate() has checked that the set is generated.
  const double users = static_cast<double>(train.users()), items = static_cast<double>(train.items());
  o.nuclear_norm_bound = s.oracle_k ? nuclear_norm(*truth)
                         : s.nuclear_norm ? *s.nuclear_norm
                                          : rating_bound_of(s) / 4 * std::sqrt(users * items);
  const Index cap = effective_cap(s);
  o.privacy.row_norm_bound = s.row_norm_bound ? *s.row_norm_bound : rating_bound_of(s) * std::sqrt(static_cast<double>(cap > 0 ? cap : 80));
  o.privacy.target = s.privacy.target();
  o.privacy.calibration = s.mode == "faithful" ? privacy::Calibration::paper : privacy::Calibration::tight;
  o.step = s.step == "paper" ? FrankWolfeStep::paper : FrankWolfeStep::standard;
  o.bias_multiplier = s.bias;
  o.eigensolver = s.eigensolver == "oja" ? FrankWolfeEigensolver::oja : FrankWolfeEigensolver::exact;
  o.nonprivate = !s.private_run();
  o.privacy.noise.seed = s.privacy.seed;
  return o;
}

AlsOptions als_options(const RecommendSettings& s) {
  AlsOptions o;
  o.rank = s.rank;
  o.regularization = s.lambda ? *s.lambda : (star_scale(s) ? 10.0 : 0.5);
  o.iterations = s.iterations > 0 ? s.iterations : 20;
  o.irls_iterations = s.method == "irls" ? s.irls_iterations : 0;
  o.huber_alpha = s.huber_alpha;
  o.seed = s.privacy.seed;
  o.mechanism = parse_als_mechanism(s.mechanism);
  o.mode = o.mechanism == AlsMechanism::none ? AlsMode::faithful : parse_als_mode(s.mode);
  const double epsilon = s.privacy.epsilon, delta = s.privacy.delta;
  if (o.mode == AlsMode::faithful && o.mechanism != AlsMechanism::none) {
    // --epsilon is the paper's per-draw ε (Table 1, Δf = 5): the noise it maps to, unless given.
    o.report_delta = delta;
    if (o.mechanism == AlsMechanism::huber && !s.noise_variance)
      o.huber_noise_alpha = epsilon / o.paper_sensitivity;
    else
      o.noise_variance = s.noise_variance ? *s.noise_variance
                                          : faithful_noise_variance_for_epsilon(o.mechanism, epsilon, o.paper_sensitivity, delta);
  } else if (o.mode == AlsMode::rigorous) {
    o.target = s.privacy.target();
    o.rating_bound = rating_bound_of(s);
    o.max_per_user = effective_cap(s);
    o.user_factor_bound = s.factor_bound;
  }
  return o;
}

std::string als_notes(const AlsOptions& o, const AlsResult& result) {
  if (o.mechanism == AlsMechanism::none) return "";
  const AlsPrivacyReport& r = result.privacy;
  std::string notes =
      format_line("noise: %.0f releases, %.0f draws, variance %.4g per coordinate", static_cast<double>(r.releases),
                  static_cast<double>(r.draws), r.noise_variance) +
      format_line("; per-draw epsilon %.4g (as printed %.4g)", r.per_draw_epsilon, r.per_draw_epsilon_as_printed) +
      format_line("; composed: basic %.4g, zCDP %.4g", r.composed_epsilon_basic, r.composed_epsilon_zcdp) +
      (r.proven ? std::string(" (proven)\n") : std::string(" (faithful: conditional on the paper's sensitivity, NOT a guarantee)\n"));
  if (o.mode == AlsMode::rigorous)
    notes += format_line("clipped (exact counts, not private): %.0f ratings, %.0f user-factor solves; %.0f noisy Grams floored\n",
                         static_cast<double>(result.ratings_clipped), static_cast<double>(result.user_factors_clipped),
                         static_cast<double>(result.gram_projections));
  return notes;
}

}  // namespace

DpamAlsOptions dpam_options(const RecommendSettings& s) {
  DpamAlsOptions o;
  o.rank = s.rank;
  if (s.iterations > 0) o.iterations = s.iterations;
  const auto [low, high] = centred_scale_of(s);
  o.baseline.scale = {low, high};
  o.fold_in.factor_bound = s.factor_bound;
  o.target = s.privacy.target();
  o.seed = s.privacy.seed;
  return o;
}

namespace {

std::string gate_note(const std::optional<ModelGate>& gate) {
  if (!gate) return "model gate: none (the factors are served)\n";
  return format_line("model gate: noisy sum of the held-out gains %.4g (of %.0f users: exact, not private)", gate->noisy_sum,
                     static_cast<double>(gate->users)) +
         format_line(" against threshold %.4g (sigma %.4g): ", gate->threshold, gate->sigma) +
         (gate->open ? "open, the factors are served" : "closed, the baseline alone is served") +
         format_line("; %.0f terms clipped (exact, not private)\n", static_cast<double>(gate->users_clipped));
}

std::string dpam_notes(const DpamAls& dpam, const DpamAlsResult& result) {
  const BaselineNoise& b = dpam.baseline_noise();
  return format_line("dpam: GDP mu %.4g; baseline sigma %.4g (global), %.4g (items)", dpam.mu(), b.global_sigma,
                     b.item_sigma) +
         format_line("; %.0f V-step releases, sigma %.4g at sensitivity", dpam.options().iterations, dpam.release_sigma()) +
         format_line(" %.4g\n", dpam.release_sensitivity()) +
         format_line("clipped (exact counts, not private): %.0f ratings to the scale, %.0f residual terms,",
                     static_cast<double>(result.ratings_clipped),
                     static_cast<double>(result.residuals_clipped)) +
         format_line(" %.0f user-factor solves; %.0f items below the count threshold (served by the baseline)\n",
                     static_cast<double>(result.user_factors_clipped), static_cast<double>(result.items_left_out)) +
         gate_note(result.gate);
}

// Every user's local part, folded in against the released model (joint DP: each from her own ratings).
RatingPredictor served_predictor(const ItemModel& model, const FoldInOptions& fold_in, const RatingsMatrix& train) {
  auto users = std::make_shared<std::vector<UserModel>>();
  users->reserve(static_cast<std::size_t>(train.users()));
  for (Index i = 0; i < train.users(); ++i) users->push_back(fold_in_user(model, fold_in, train, i));
  auto shared = std::make_shared<ItemModel>(model);
  return [shared, users](Index user, Index item) { return shared->predict((*users)[static_cast<std::size_t>(user)], item); };
}

}  // namespace

Trainer::Trainer(const RecommendSettings& s, const RatingsMatrix& train, const std::optional<SyntheticRatings>& truth)
    : settings_(s) {
  try {
    if (s.method == "dpam") {
      dpam_options_ = dpam_options(s);
      dpam_ = std::make_unique<DpamAls>(dpam_options_);
    } else if (s.method == "fw") {
      fw_options_ = frank_wolfe_options(s, train, truth);
      fw_ = std::make_unique<PrivateFrankWolfe>(fw_options_);
    } else {
      als_options_ = als_options(s);
      als_ = std::make_unique<PrivateAls>(als_options_);
      // The run's charge (rigorous, on a ledger of its own) and the composed figures (faithful), as
      // the report computes them after the run: a ρ or an ε that is not finite is refused now.
      (void)als_->privacy_report(train.items());
      als_->check_draws(train.items());  // a draw the mechanism cannot make (Laplace's sampler range)
    }
  } catch (const InvalidParameter& e) {  // e.g. the paper's σ refuses ε > 2 ln(1/δ)
    throw calibration_refused(s.privacy, "--method " + s.method + ", --mechanism " + s.mechanism +
                                             " and its bounds (--factor-bound, --rating-bound, --center, "
                                             "--nuclear-norm, --row-norm-bound, --iters, --noise-variance)",
                              e.what());
  }
}

Trainer::~Trainer() = default;

void Trainer::charge_run(privacy::PrivacyAccountant& accountant, const std::string& label) const {
  if (fw_) fw_->charge_run(accountant, label);
  else if (als_) als_->charge_run(accountant, label);
  else throw std::logic_error("Trainer::charge_run: dpam is trained once, never refreshed");
}

Model Trainer::train(const RatingsMatrix& train, privacy::PrivacyAccountant& accountant) {
  if (dpam_) return train_dpam(train, accountant);
  Model m = fw_ ? train_frank_wolfe(train, accountant) : train_als(train, accountant);
  if (std::isfinite(m.epsilon_spent)) m.private_baseline = comparison_baseline(train);
  return m;
}

Model Trainer::train_dpam(const RatingsMatrix& train, privacy::PrivacyAccountant& accountant) {
  const DpamAlsResult result = dpam_->train(train, accountant, "dpam als", dpam_observer);
  Model m;
  m.rank = dpam_options_.rank;
  m.epsilon_spent = accountant.spent().epsilon;
  m.budget = privacy::Budget(accountant).describe();
  m.notes = dpam_notes(*dpam_, result);
  m.predict = served_predictor(result.model, dpam_options_.fold_in, train);
  m.dpam = result;
  ItemModel baseline = result.model;  // the same release without the factors
  baseline.item_factors.resize(baseline.items(), 0);
  m.private_baseline = served_predictor(baseline, dpam_options_.fold_in, train);
  return m;
}

RatingPredictor Trainer::comparison_baseline(const RatingsMatrix& train) const {
  const DpamAlsOptions defaults = dpam_options(settings_);
  PrivateBaseline baseline(defaults.baseline, defaults.target, 0.25, defaults.seed);
  const privacy::Budget figure_only =
      privacy::Budget::unaccounted("a comparison figure at the run's target, not charged to its budget");
  return served_predictor(baseline.train(train, figure_only).model, defaults.fold_in, train);
}

Model Trainer::train_frank_wolfe(const RatingsMatrix& train, privacy::PrivacyAccountant& accountant) {
  const FrankWolfeOptions& o = fw_options_;
  const privacy::Budget budget =
      o.nonprivate ? privacy::Budget::unaccounted("--nonprivate: no noise") : privacy::Budget(accountant);
  FrankWolfeResult result = fw_->train(train, budget);
  Model m;
  m.budget = budget.describe();
  m.rank = static_cast<Index>(result.broadcasts.size());
  m.epsilon_spent = o.nonprivate ? INFINITY : accountant.spent().epsilon;
  m.notes = format_line("frank-wolfe: T = %.0f, k = %.4g, L = %.4g", o.iterations, o.nuclear_norm_bound, o.privacy.row_norm_bound) +
            format_line(", sigma = %.4g over %.0f releases, eigenvalue bias %.4g", result.sigma,
                        static_cast<double>(result.releases_calibrated), result.bias) +
            format_line("; %.0f users clipped to L (exact, not private)\n", static_cast<double>(result.users_clipped));
  auto shared = std::make_shared<FrankWolfeResult>(std::move(result));
  m.predict = [shared](Index user, Index item) { return shared->predict(user, item); };
  return m;
}

Model Trainer::train_als(const RatingsMatrix& train, privacy::PrivacyAccountant& accountant) {
  const AlsOptions& o = als_options_;
  const privacy::Budget budget = o.mode == AlsMode::rigorous
                                     ? privacy::Budget(accountant)
                                     : privacy::Budget::unaccounted("faithful mode proves no guarantee");
  AlsResult result = als_->train(train, budget);
  Model m;
  m.budget = budget.describe();
  m.rank = o.rank;
  m.epsilon_spent = o.mechanism == AlsMechanism::none ? INFINITY
                    : o.mode == AlsMode::rigorous      ? accountant.spent().epsilon
                                                       : result.privacy.epsilon_spent;
  m.notes = als_notes(o, result);
  auto shared = std::make_shared<AlsResult>(std::move(result));
  m.predict = [shared](Index user, Index item) { return shared->predict(user, item); };
  return m;
}

namespace {

long planned_refreshes(const RecommendSettings& s, Index users) {
  return s.planned_refreshes > 0 ? s.planned_refreshes : (users + s.refresh_every - 1) / s.refresh_every;
}

StreamingCompletionOptions streaming_options(const RecommendSettings& s, const Prepared& data) {
  StreamingCompletionOptions o;
  o.items = data.items();
  o.refresh_every = s.refresh_every;
  o.planned_refreshes = planned_refreshes(s, data.users());
  o.budget = s.privacy.target();
  return o;
}

// Each refresh calibrates to its share: Gaussian methods to μ/√R (GDP), pure ones to ε/R.
RecommendSettings refresh_settings(const RecommendSettings& s, const RefreshBudget& budget) {
  RecommendSettings r = s;
  const bool pure = s.mechanism == "laplace" || s.mechanism == "huber";
  r.privacy.epsilon = pure ? budget.pure_share_epsilon : budget.gaussian_share.epsilon();
  r.privacy.delta = pure ? s.privacy.delta : budget.gaussian_share.delta();
  return r;
}

// The flags behind the refreshes' composed charges, and the library's reason for refusing them.
UsageError refreshes_refused(const RecommendSettings& s, long planned, const std::exception& e) {
  return calibration_refused(s.privacy, "--refresh-every " + std::to_string(s.refresh_every) +
                                            ", --planned-refreshes " + std::to_string(planned) +
                                            " (the refreshes' charges, composed)",
                             e.what());
}

// The planned refreshes' charges on a throwaway accountant with the run's budget, each made by the
// refresh's own method as its run will make it (its Δ and σ, not an ideal Gaussian of the share's μ):
// at extreme ε (1e-20, 1e100) a calibration that misses its share by ~1e-8 relative composes past the
// budget in floating point, which the run would find at a later refresh, after noise was drawn. The
// count is the planned one (--planned-refreshes on a file: public), as the budget's split.
void probe_refresh_charges(const RecommendSettings& s, const Trainer& refresh, long planned) {
  if (s.mechanism == "none" || s.mode == "faithful") return;  // nothing charged
  constexpr long kMaxProbed = 10000;  // the accountant recomposes its ledger on each charge: O(R²)
  try {
    privacy::PrivacyAccountant probe(s.privacy.target());
    for (long r = 0; r < std::min(planned, kMaxProbed); ++r) refresh.charge_run(probe, "refresh");
  } catch (const InvalidParameter& e) {  // the floating point, not the data
    throw refreshes_refused(s, planned, e);
  } catch (const BudgetExhausted& e) {  // a ResourceLimit or anything else keeps its own class
    throw refreshes_refused(s, planned, e);
  }
}

}  // namespace

Training::Training(const RecommendSettings& s, const Prepared& data, const RatingsMatrix& train)
    : s_(s), data_(data), train_(train), per_refresh_(s) {
  if (s.refresh_every == 0) {
    trainer_ = std::make_unique<Trainer>(s, train, data.truth);
    return;
  }
  const Index users = data.users();
  const long needed = (users + s.refresh_every - 1) / s.refresh_every;
  if (planned_refreshes(s, users) < needed)
    throw UsageError("--planned-refreshes " + std::to_string(s.planned_refreshes) + " is fewer than the " +
                     std::to_string(needed) + " refreshes " + std::to_string(users) + " users need at --refresh-every " +
                     std::to_string(s.refresh_every));
  try {  // the options and the share (StreamingCompletion computes it as the run will)
    StreamingCompletion probe(streaming_options(s, data), [](const RatingsMatrix&, const RefreshBudget&,
                                                              privacy::PrivacyAccountant&) -> RatingPredictor {
      throw std::logic_error("not run");
    });
    per_refresh_ = refresh_settings(s, probe.share());
  } catch (const InvalidParameter& e) {
    throw calibration_refused(s.privacy, "--refresh-every " + std::to_string(s.refresh_every) +
                                             ", --planned-refreshes " + std::to_string(s.planned_refreshes),
                              e.what());
  }
  std::unique_ptr<Trainer> check;
  try {
    check = std::make_unique<Trainer>(per_refresh_, train, data.truth);  // a refresh's options, on the whole matrix
  } catch (const UsageError& e) {  // it names the refresh's share: say whose share it is
    throw UsageError("--refresh-every " + std::to_string(s.refresh_every) + ": one refresh's share of --epsilon " +
                     base::format_value(s.privacy.epsilon) + ", --delta " + base::format_value(s.privacy.delta) +
                     ": " + e.what());
  }
  probe_refresh_charges(s, *check, planned_refreshes(s, users));
}

Training::~Training() = default;

void Training::observe_dpam_releases(DpamAls::ReleaseObserver observer) {
  if (!trainer_) throw std::logic_error("observe_dpam_releases: a streaming run retrains; nothing to observe once");
  trainer_->dpam_observer = std::move(observer);
}

Model Training::run() {
  if (!trainer_) return run_streaming();
  privacy::PrivacyAccountant accountant(s_.privacy.target());
  return trainer_->train(train_, accountant);
}

// Users arrive in dense-index order (first appearance in the file); every B a refresh.
Model Training::run_streaming() {
  Model model;
  StreamingCompletion stream(streaming_options(s_, data_), [&](const RatingsMatrix& pool, const RefreshBudget& budget,
                                                                privacy::PrivacyAccountant& accountant) {
    Model refreshed;
    try {
      refreshed = Trainer(per_refresh_, pool, data_.truth).train(pool, accountant);
    } catch (const UsageError& e) {
      throw std::runtime_error(std::string("refresh ") + std::to_string(budget.refresh) + ": " + e.what());
    }
    std::vector<Rating> seen;
    for (const Rating& r : data_.test)
      if (r.user < pool.users()) seen.push_back(r);
    std::printf("refresh %ld: %lld users, test RMSE of the users so far %.4f (not private: exact)\n", budget.refresh,
                (long long)pool.users(), seen.empty() ? std::nan("") : rmse(refreshed.predict, seen));
    model.rank = refreshed.rank;
    model.notes = refreshed.notes;
    return refreshed.predict;
  });
  for (Index i = 0; i < train_.users(); ++i) stream.add_user(train_.user_ratings(i));
  if (stream.pending_users() > 0) stream.refresh();
  model.predict = stream.model();
  model.epsilon_spent = stream.accountant().spent().epsilon;
  model.budget = budget_text(&stream.accountant(), "");
  return model;
}

}  // namespace dpstream::tools::recommend
