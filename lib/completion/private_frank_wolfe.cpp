#include "dpstream/completion/private_frank_wolfe.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include <Eigen/SparseCore>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::completion {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using base::format_value;

namespace {

// Users may exceed L by this relative round-off when rows are refused rather than clipped (header).
constexpr double kNormSlack = 1e-12;

// Lanczos (exact eigensolver): Ritz residual tolerance relative to ‖Ŵ‖₂, how often the Ritz pair is
// checked, and the relative β below which the Krylov space counts as invariant.
constexpr double kRitzTolerance = 1e-10;
constexpr Index kRitzCheckEvery = 8;
constexpr double kBreakdown = 1e-13;
// Seed of the Lanczos start vector: data-independent and public (the eigensolver is post-processing).
constexpr std::uint64_t kLanczosStartSeed = 0x46572d4c414e43ULL;  // "FW-LANC"

void fail(const std::string& what) { throw InvalidParameter("PrivateFrankWolfe: " + what); }

std::span<double> as_span(double* data, Index size) { return {data, static_cast<std::size_t>(size)}; }

void require_paper_condition(const privacy::EpsDelta& target) {
  // Algorithm 1's input condition, from its zCDP → (ε, δ) conversion (Thm 3.1).
  const double limit = 2.0 * std::log(1.0 / target.delta());
  if (!(target.epsilon() <= limit))
    fail("the paper calibration needs epsilon <= 2 ln(1/delta) = " + format_value(limit) + ", got epsilon = " +
         format_value(target.epsilon()));
}

void require_row_norm_bound(double row_norm_bound) {
  base::require_positive("PrivateFrankWolfe: row_norm_bound", row_norm_bound);
  const double residual_bound = 2.0 * row_norm_bound;
  if (!std::isnormal(residual_bound * residual_bound))
    fail("(2 row_norm_bound)^2 must be a finite normal number, got row_norm_bound = " + format_value(row_norm_bound));
}

void require_iterations(int iterations) {
  if (iterations < 1) fail("iterations must be >= 1, got " + std::to_string(iterations));
}

const FrankWolfeOptions& validated(const FrankWolfeOptions& o) {
  base::require_positive("PrivateFrankWolfe: nuclear_norm_bound", o.nuclear_norm_bound);
  require_iterations(o.iterations);
  require_row_norm_bound(o.privacy.row_norm_bound);
  if (!(o.privacy.target.delta() > 0.0))
    fail("target.delta must be > 0 (a Gaussian mechanism is never pure DP), got " + format_value(o.privacy.target.delta()));
  if (o.privacy.calibration != privacy::Calibration::paper && o.privacy.calibration != privacy::Calibration::tight)
    fail("calibration must be paper or tight, got " + std::to_string(static_cast<int>(o.privacy.calibration)));
  if (o.privacy.relation != privacy::Neighbours::add_remove_row && o.privacy.relation != privacy::Neighbours::replace_row)
    fail("relation must be add_remove_row or replace_row, got " + std::to_string(static_cast<int>(o.privacy.relation)));
  if (o.step != FrankWolfeStep::paper && o.step != FrankWolfeStep::standard)
    fail("step must be paper or standard, got " + std::to_string(static_cast<int>(o.step)));
  if (!(o.bias_multiplier >= 0.0 && o.bias_multiplier <= 1.0))
    fail("bias_multiplier must be in [0, 1], got " + format_value(o.bias_multiplier));
  if (!(o.failure_probability > 0.0 && o.failure_probability < 1.0))
    fail("failure_probability must be in (0, 1), got " + format_value(o.failure_probability));
  if (o.eigensolver != FrankWolfeEigensolver::exact && o.eigensolver != FrankWolfeEigensolver::oja)
    fail("eigensolver must be exact or oja, got " + std::to_string(static_cast<int>(o.eigensolver)));
  if (o.oja_iterations < 1) fail("oja_iterations must be >= 1, got " + std::to_string(o.oja_iterations));
  if (o.nonprivate && o.eigensolver == FrankWolfeEigensolver::oja)
    fail("eigensolver oja needs noise (sigma > 0); nonprivate runs use exact");
  if (!o.nonprivate && o.privacy.calibration == privacy::Calibration::paper) require_paper_condition(o.privacy.target);
  return o;
}

// Releases σ is calibrated for (header "Composition").
long calibrated_releases(const FrankWolfeOptions& o) {
  if (o.nonprivate) return 0;
  const long per_round = o.eigensolver == FrankWolfeEigensolver::oja ? o.oja_iterations + 1L : 1L;
  return o.iterations * per_round;
}

// Δ of one release: the dense Ŵ(t), or one of Oja's products / eigenvalue on rows of norm ≤ 2L.
double release_sensitivity_for(const FrankWolfeOptions& o) {
  return o.eigensolver == FrankWolfeEigensolver::oja ? pca::oja_release_sensitivity(o.privacy.relation, 2.0 * o.privacy.row_norm_bound)
                                                     : frank_wolfe_release_sensitivity(o.privacy.relation, o.privacy.row_norm_bound);
}

double calibrated_sigma(const FrankWolfeOptions& o, double joint_sensitivity) {
  if (o.nonprivate) return 0.0;
  if (o.privacy.calibration == privacy::Calibration::tight) return privacy::analytic_gaussian_sigma(joint_sensitivity, o.privacy.target);
  if (o.eigensolver == FrankWolfeEigensolver::oja)
    return pca::paper_oja_sigma(2.0 * o.privacy.row_norm_bound, o.iterations * o.oja_iterations, o.privacy.target);
  return paper_frank_wolfe_sigma(o.privacy.row_norm_bound, o.iterations, o.privacy.target, o.privacy.relation);
}

// v ← s·v with the s ≤ 1 that brings row_norm(v) to ≤ bound (1 when already within); returns s. The
// shrink loop absorbs the ulps by which bound/‖v‖·v can land above the bound (as RowGuard does).
double scale_into_ball(Eigen::Ref<VectorXd> v, double bound) {
  const double norm = stream::row_norm(v);
  if (norm <= bound) return 1.0;
  double scale = bound / norm;
  v *= scale;
  while (stream::row_norm(v) > bound) {
    v *= (1.0 - 0x1.0p-52);
    scale *= (1.0 - 0x1.0p-52);
  }
  return scale;
}

// Σ_s c(s)·v̂_s[item] in a fixed order: THE prediction formula, shared by the trusted view and the
// users so that both give the same bits.
template <class Coefficients>
double combine(const Coefficients& coefficients, Index steps, const std::vector<FrankWolfeBroadcast>& broadcasts,
               Index item) {
  double sum = 0.0;
  for (Index s = 0; s < steps; ++s) sum += coefficients(s) * broadcasts[static_cast<std::size_t>(s)].direction[item];
  return sum;
}

struct Eigenpair {
  double value;
  VectorXd vector;
};

// The largest (algebraic) eigenpair of a symmetric matrix: Lanczos with full reorthogonalisation (two
// Gram–Schmidt passes against the whole basis per step, so the basis stays orthonormal to round-off
// and no ghost eigenvalues appear). Stops when the top Ritz pair's residual β_k·|s_k| ≤ tol·‖M‖₂ (the
// largest |Ritz value| estimates ‖M‖₂ from below) or the Krylov space is invariant (β ≈ 0, exact; at
// the latest after n steps). `start` must be non-zero.
Eigenpair top_eigenpair(const MatrixXd& symmetric, const VectorXd& start) {
  const Index n = symmetric.rows();
  MatrixXd basis(n, std::min<Index>(n, 64));
  VectorXd alpha(n), beta(n), w(n), projections;
  basis.col(0) = start / start.norm();
  double scale = 0.0;
  for (Index k = 0;; ++k) {
    const auto q = basis.col(k);
    w.noalias() = symmetric * q;
    alpha(k) = q.dot(w);
    const auto previous = basis.leftCols(k + 1);
    for (int pass = 0; pass < 2; ++pass) {
      projections.noalias() = previous.transpose() * w;
      w.noalias() -= previous * projections;
    }
    beta(k) = w.norm();
    scale = std::max({scale, std::fabs(alpha(k)), beta(k)});
    const bool invariant = k + 1 == n || beta(k) <= kBreakdown * scale;
    if (invariant || (k + 1) % kRitzCheckEvery == 0) {
      linalg::SymmetricEigenSolver ritz;
      ritz.compute_from_tridiagonal(alpha.head(k + 1), beta.head(k), Eigen::ComputeEigenvectors);
      const VectorXd& values = ritz.eigenvalues();  // ascending
      const double norm_estimate = std::max(std::fabs(values(0)), std::fabs(values(k)));
      const double residual = beta(k) * std::fabs(ritz.eigenvectors()(k, k));
      if (invariant || residual <= kRitzTolerance * norm_estimate) {
        VectorXd vector = previous * ritz.eigenvectors().col(k);
        vector /= vector.norm();
        return {values(k), std::move(vector)};
      }
    }
    if (k + 1 == basis.cols()) basis.conservativeResize(Eigen::NoChange, std::min<Index>(n, 2 * basis.cols()));
    basis.col(k + 1) = w / beta(k);
  }
}

// Ŵ(t) ← symmetric noise (lower triangle i.i.d. N(0, σ²), column by column), + Σ_i A_iᵀA_i, snapped,
// mirrored. σ = 0 (nonprivate): the exact W(t).
void release_gram(const std::vector<FrankWolfeUser>& users, double sigma, privacy::NoiseSource* noise,
                  MatrixXd& gram) {
  const Index n = gram.rows();
  if (sigma > 0.0) {
    for (Index j = 0; j < n; ++j) noise->fill_gaussian(as_span(&gram(j, j), n - j), sigma);
  } else {
    gram.setZero();
  }
  for (const FrankWolfeUser& user : users) user.add_contribution(gram);
  if (sigma > 0.0) {
    const double grid = privacy::snap_granularity(sigma);
    for (Index j = 0; j < n; ++j) privacy::snap_to_grid(as_span(&gram(j, j), n - j), grid);
  }
  for (Index j = 1; j < n; ++j)
    for (Index i = 0; i < j; ++i) gram(i, j) = gram(j, i);
}

}  // namespace

const char* to_string(FrankWolfeStep step) noexcept {
  switch (step) {
    case FrankWolfeStep::paper: return "paper";
    case FrankWolfeStep::standard: return "standard";
  }
  return "unknown";
}

const char* to_string(FrankWolfeEigensolver eigensolver) noexcept {
  switch (eigensolver) {
    case FrankWolfeEigensolver::exact: return "exact";
    case FrankWolfeEigensolver::oja: return "oja";
  }
  return "unknown";
}

FrankWolfeStep parse_frank_wolfe_step(const std::string& text) {
  for (const FrankWolfeStep step : {FrankWolfeStep::paper, FrankWolfeStep::standard})
    if (text == to_string(step)) return step;
  throw InvalidParameter("Frank-Wolfe step '" + base::printable(text) + "': expected paper or standard");
}

FrankWolfeEigensolver parse_frank_wolfe_eigensolver(const std::string& text) {
  for (const FrankWolfeEigensolver eigensolver : {FrankWolfeEigensolver::exact, FrankWolfeEigensolver::oja})
    if (text == to_string(eigensolver)) return eigensolver;
  throw InvalidParameter("Frank-Wolfe eigensolver '" + base::printable(text) + "': expected exact or oja");
}

double frank_wolfe_release_sensitivity(privacy::Neighbours relation, double row_norm_bound) {
  require_row_norm_bound(row_norm_bound);
  // Residual rows have ‖A_i‖₂ ≤ 2L: the covariance sensitivity of rows bounded by 2L (header).
  return privacy::covariance_sensitivity(relation, 2.0 * row_norm_bound);
}

double paper_frank_wolfe_sigma(double row_norm_bound, int iterations, const privacy::EpsDelta& target,
                               privacy::Neighbours relation) {
  require_iterations(iterations);
  require_row_norm_bound(row_norm_bound);
  if (!(target.delta() > 0.0)) fail("target.delta must be > 0, got " + format_value(target.delta()));
  require_paper_condition(target);
  const double printed =
      row_norm_bound * row_norm_bound * std::sqrt(64.0 * iterations * std::log(1.0 / target.delta())) / target.epsilon();
  // Replacement doubles Δ² (4√2·L²): 64 → 128 keeps the paper's ρ (header).
  return relation == privacy::Neighbours::replace_row ? printed * std::sqrt(2.0) : printed;
}

double frank_wolfe_step_size(FrankWolfeStep step, int iterations, int real_step) {
  require_iterations(iterations);
  if (real_step < 1 || real_step > iterations - 1)
    fail("real step " + std::to_string(real_step) + " outside [1, " + std::to_string(iterations - 1) + "]");
  return step == FrankWolfeStep::paper ? 1.0 / iterations : 2.0 / (real_step + 2.0);  // round t = s + 1
}

// ---- FrankWolfeUser ------------------------------------------------------------------------------

FrankWolfeUser::FrankWolfeUser(const FrankWolfeOptions& options, const RatingsMatrix& ratings, Index user)
    : user_(user),
      items_count_(ratings.items()),
      nuclear_norm_bound_(validated(options).nuclear_norm_bound),
      row_norm_bound_(options.privacy.row_norm_bound),
      iterations_(options.iterations),
      step_(options.step),
      coefficients_(VectorXd::Zero(options.iterations - 1)) {
  if (user < 0 || user >= ratings.users())
    fail("user " + std::to_string(user) + " outside [0, " + std::to_string(ratings.users()) + ")");
  const RatingsMatrix::ByUser& rows = ratings.by_user();
  const Index begin = rows.outerIndexPtr()[user], end = rows.outerIndexPtr()[user + 1];
  items_.assign(rows.innerIndexPtr() + begin, rows.innerIndexPtr() + end);
  ratings_ = Eigen::Map<const VectorXd>(rows.valuePtr() + begin, end - begin);
  observed_predictions_ = VectorXd::Zero(end - begin);
  if (options.clip_user_rows) {
    clipped_ = scale_into_ball(ratings_, row_norm_bound_) < 1.0;
  } else {
    const double norm = stream::row_norm(ratings_);
    if (!(norm <= row_norm_bound_ * (1.0 + kNormSlack)))
      throw InvalidRow(static_cast<std::uint64_t>(user),
                       "user " + std::to_string(user) + ": l2 norm of her ratings " + format_value(norm) +
                           " exceeds row_norm_bound " + format_value(row_norm_bound_) +
                           " (clip_user_rows is false: users are refused, not clipped)");
  }
}

void FrankWolfeUser::add_contribution(MatrixXd& gram) const {
  // A_iᵀA_i is supported on Ω_i × Ω_i; items ascending, so (items_[q], items_[p]) with q ≥ p is on or
  // below the diagonal. Column-major: each p walks down one column.
  const Index count = static_cast<Index>(items_.size());
  for (Index p = 0; p < count; ++p) {
    const double a_p = observed_predictions_[p] - ratings_[p];
    double* column = &gram(0, items_[static_cast<std::size_t>(p)]);
    for (Index q = p; q < count; ++q)
      column[items_[static_cast<std::size_t>(q)]] += a_p * (observed_predictions_[q] - ratings_[q]);
  }
}

void FrankWolfeUser::apply(const FrankWolfeBroadcast& broadcast) {
  if (broadcast.round != steps_ + 1)
    fail("user " + std::to_string(user_) + " expects broadcast " + std::to_string(steps_ + 1) + ", got round " +
         std::to_string(broadcast.round));
  if (broadcast.direction.size() != items_count_)
    fail("broadcast direction has " + std::to_string(broadcast.direction.size()) + " entries, expected " +
         std::to_string(items_count_));
  const int real_step = steps_ + 1;
  const double eta = frank_wolfe_step_size(step_, iterations_, real_step);
  // û_i = A_i v̂/λ̂′ with A_i the residual BEFORE this step (Algorithm 1, A_local).
  const Index count = static_cast<Index>(items_.size());
  double u_hat = 0.0;
  if (broadcast.damped_singular_value > 0.0) {
    double dot = 0.0;
    for (Index p = 0; p < count; ++p)
      dot += (observed_predictions_[p] - ratings_[p]) * broadcast.direction[items_[static_cast<std::size_t>(p)]];
    u_hat = dot / broadcast.damped_singular_value;
  }
  // Y_i ← (1 − η)Y_i − η·k·û·v̂ᵀ, kept both as coefficients and on her observed items.
  const double new_coefficient = -eta * nuclear_norm_bound_ * u_hat;
  for (Index p = 0; p < count; ++p)
    observed_predictions_[p] = (1.0 - eta) * observed_predictions_[p] +
                               new_coefficient * broadcast.direction[items_[static_cast<std::size_t>(p)]];
  coefficients_.head(steps_) *= (1.0 - eta);
  coefficients_[steps_] = new_coefficient;
  ++steps_;
  // Π_{L,Ω}: the observed entries' norm sets the scale, which applies to the whole row.
  const double scale = scale_into_ball(observed_predictions_, row_norm_bound_);
  if (scale < 1.0) coefficients_.head(steps_) *= scale;
}

VectorXd FrankWolfeUser::predictions(const std::vector<FrankWolfeBroadcast>& broadcasts) const {
  if (static_cast<Index>(broadcasts.size()) < steps_)
    fail("user " + std::to_string(user_) + " applied " + std::to_string(steps_) + " broadcasts, got " +
         std::to_string(broadcasts.size()));
  VectorXd row(items_count_);
  for (Index item = 0; item < items_count_; ++item) row[item] = combine(coefficients_, steps_, broadcasts, item);
  return row;
}

VectorXd rebuild_user_predictions(const FrankWolfeOptions& options, const RatingsMatrix& ratings, Index user,
                                  const std::vector<FrankWolfeBroadcast>& broadcasts) {
  FrankWolfeUser local(options, ratings, user);
  for (const FrankWolfeBroadcast& broadcast : broadcasts) local.apply(broadcast);
  return local.predictions(broadcasts);
}

// ---- FrankWolfeResult ----------------------------------------------------------------------------

double FrankWolfeResult::predict(Index user, Index item) const {
  if (user < 0 || user >= trusted_user_coefficients.rows())
    throw InvalidParameter("FrankWolfeResult::predict: user " + std::to_string(user) + " outside [0, " +
                           std::to_string(trusted_user_coefficients.rows()) + ")");
  // The catalogue size is kept apart from the broadcasts: with T = 1 there are none, and an unknown
  // item must still be refused rather than predicted 0 (bad-input finding).
  if (item < 0 || item >= items)
    throw InvalidParameter("FrankWolfeResult::predict: item " + std::to_string(item) + " outside [0, " +
                           std::to_string(items) + ")");
  return combine(trusted_user_coefficients.row(user), trusted_user_coefficients.cols(), broadcasts, item);
}

// ---- PrivateFrankWolfe ---------------------------------------------------------------------------

PrivateFrankWolfe::PrivateFrankWolfe(const FrankWolfeOptions& options)
    : options_(validated(options)),
      release_sensitivity_(release_sensitivity_for(options)),
      sigma_(calibrated_sigma(options, joint_sensitivity())) {
  if (!options_.nonprivate && !(std::isfinite(sigma_) && sigma_ > 0.0))
    fail("calibrated sigma is " + format_value(sigma_) + " for target " + options_.privacy.target.to_string());
  if (options_.nonprivate) return;
  if (options_.eigensolver == FrankWolfeEigensolver::oja) {
    pca::PrivateOjaOptions oja;
    oja.iterations = options_.oja_iterations;
    oja.privacy.row_norm_bound = 2.0 * options_.privacy.row_norm_bound;  // residual rows (header)
    oja.privacy.target = options_.privacy.target;  // not claimed: σ is ours
    oja.privacy.relation = options_.privacy.relation;
    oja.release_eigenvalue = true;
    oja.privacy.noise.seed = options_.privacy.noise.seed;
    oja.sigma = sigma_;  // calibrated above for all T·(Γ+1) releases; charged once by train()
    oja_ = std::make_unique<pca::PrivateOja>(oja);
  } else {
    noise_ = options_.privacy.noise.make_source();
  }
}

PrivateFrankWolfe::~PrivateFrankWolfe() = default;
PrivateFrankWolfe::PrivateFrankWolfe(PrivateFrankWolfe&&) noexcept = default;
PrivateFrankWolfe& PrivateFrankWolfe::operator=(PrivateFrankWolfe&&) noexcept = default;

long PrivateFrankWolfe::releases() const noexcept { return calibrated_releases(options_); }

double PrivateFrankWolfe::joint_sensitivity() const noexcept {
  // R adaptively composed Gaussians of sensitivity Δ and one σ: μ² = R·(Δ/σ)².
  return release_sensitivity_ * std::sqrt(static_cast<double>(releases()));
}

double PrivateFrankWolfe::bias(Index items) const {
  if (items < 1) fail("bias needs items >= 1, got " + std::to_string(items));
  const double n = static_cast<double>(items);
  return options_.bias_multiplier * std::sqrt(sigma_ * std::log(n / options_.failure_probability)) *
         std::sqrt(std::sqrt(n));
}

bool PrivateFrankWolfe::secure() const noexcept {
  if (oja_) return oja_->secure();
  return noise_ != nullptr && noise_->is_secure();
}

void PrivateFrankWolfe::charge_run(privacy::PrivacyAccountant& accountant, const std::string& label) const {
  if (options_.nonprivate) fail("a nonprivate run releases nothing private: it charges no accountant");
  accountant.charge_gaussian(label, joint_sensitivity(), sigma_, options_.privacy.target);
}

FrankWolfeResult PrivateFrankWolfe::train(const RatingsMatrix& ratings, const privacy::Budget& budget,
                                          const std::string& label, const RoundObserver& observer) {
  const Index n = ratings.items();
  if (n < 1) fail("train needs at least one item, got 0");
  if (options_.nonprivate && budget.accounted())
    fail("a nonprivate run releases nothing private: it takes no accountant");
  if (budget.accounted()) charge_run(*budget.accountant(), label);  // once, before any rating is read or noise drawn

  FrankWolfeResult result;
  result.items = n;
  result.sigma = sigma_;
  result.bias = bias(n);
  result.releases_calibrated = releases();

  std::vector<FrankWolfeUser> users;
  users.reserve(static_cast<std::size_t>(ratings.users()));
  for (Index i = 0; i < ratings.users(); ++i) {
    users.emplace_back(options_, ratings, i);
    if (users.back().clipped()) ++result.users_clipped;
  }

  const int rounds = options_.iterations - 1;  // the T-th release is never used (header)
  const bool exact = options_.eigensolver == FrankWolfeEigensolver::exact;
  MatrixXd gram;
  VectorXd lanczos_start;
  Eigen::SparseMatrix<double, Eigen::RowMajor> residual_rows;
  if (rounds > 0 && exact) {
    gram.resize(n, n);
    privacy::SeededNoiseSource start_source(kLanczosStartSeed);
    lanczos_start.resize(n);
    start_source.fill_gaussian(as_span(lanczos_start.data(), n));
  } else if (rounds > 0) {
    residual_rows = ratings.by_user();  // the pattern of Ω; values overwritten every round
  }

  result.broadcasts.reserve(static_cast<std::size_t>(std::max(rounds, 0)));
  for (int t = 1; t <= rounds; ++t) {
    FrankWolfeBroadcast broadcast;
    broadcast.round = t;
    if (exact) {
      release_gram(users, sigma_, noise_.get(), gram);
      Eigenpair top = top_eigenpair(gram, lanczos_start);
      broadcast.direction = std::move(top.vector);
      broadcast.top_eigenvalue = top.value;
    } else {
      double* values = residual_rows.valuePtr();
      for (const FrankWolfeUser& user : users) {
        const Index begin = residual_rows.outerIndexPtr()[user.user()];
        Eigen::Map<VectorXd>(values + begin, user.ratings().size()) = user.observed_predictions() - user.ratings();
      }
      pca::PrivateOjaResult oja = oja_->run(residual_rows, privacy::Budget::unaccounted("every round was charged once by train()"), "private frank-wolfe oja round");
      broadcast.direction = std::move(oja.vector);
      broadcast.top_eigenvalue = *oja.eigenvalue;
    }
    broadcast.singular_value = std::sqrt(std::max(broadcast.top_eigenvalue, 0.0));
    broadcast.damped_singular_value = broadcast.singular_value + result.bias;
    result.broadcasts.push_back(std::move(broadcast));
    const FrankWolfeBroadcast& published = result.broadcasts.back();
    if (observer) observer(FrankWolfeRound{published, exact ? &gram : nullptr});
    for (FrankWolfeUser& user : users) user.apply(published);
  }

  result.trusted_user_coefficients.resize(ratings.users(), std::max(rounds, 0));
  for (const FrankWolfeUser& user : users) result.trusted_user_coefficients.row(user.user()) = user.coefficients().transpose();
  return result;
}

}  // namespace dpstream::completion
