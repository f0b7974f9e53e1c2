// Noisy ALS / IRLS (Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber mechanism for
// differentially private low-rank matrix completion", arXiv 2022, Algorithms 1–3) in faithful and rigorous
// modes: see private_als.hpp.
#include "dpstream/completion/private_als.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <Eigen/Cholesky>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"
#include "dpstream/privacy/huber.hpp"
#include "dpstream/privacy/laplace_mechanism.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::completion {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using base::format_value;

const char* to_string(AlsInit init) noexcept { return init == AlsInit::uniform ? "uniform" : "gaussian"; }

AlsInit parse_als_init(const std::string& text) {
  for (const AlsInit init : {AlsInit::uniform, AlsInit::gaussian})
    if (text == to_string(init)) return init;
  throw InvalidParameter("ALS init '" + base::printable(text) + "': expected uniform or gaussian");
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The rigorous Huber noise shape when huber_noise_alpha is unset (header: close to Laplace's variance).
constexpr double kRigorousHuberAlpha = 1.0;
// The algorithmic stream's seed is the noise seed moved by the golden-ratio constant, so the two
// seeded streams differ (each is further mixed by splitmix64 inside SeededNoiseSource).
constexpr std::uint64_t kAlgorithmSeedOffset = 0x9E3779B97F4A7C15ULL;

using StorageIndex = RatingsMatrix::ByUser::StorageIndex;

void require_positive_field(const char* field, double value) {
  base::require_positive((std::string("PrivateAls: ") + field).c_str(), value);
}

void require_at_least(const char* field, long long value, long long minimum) {
  if (value < minimum)
    throw InvalidParameter(std::string("PrivateAls: ") + field + " must be >= " + std::to_string(minimum) + ", got " +
                           std::to_string(value));
}

bool is_rigorous(const AlsOptions& o) { return o.mode == AlsMode::rigorous; }
bool is_irls(const AlsOptions& o) { return o.irls_iterations > 0; }

// The α of the faithful Huber noise: the option, or the α whose unit-scale variance is v (Table 1).
double faithful_huber_alpha(const AlsOptions& o) {
  if (o.huber_noise_alpha) return *o.huber_noise_alpha;
  if (!(o.noise_variance > 1.0))
    throw InvalidParameter("PrivateAls: noise_variance must be > 1 for faithful Huber noise without huber_noise_alpha "
                           "(unit-scale Huber noise always has variance > 1; the paper's v = 1 uses alpha = 3), got " +
                           format_value(o.noise_variance));
  return privacy::HuberDistribution::alpha_for_variance(o.noise_variance);
}

const AlsOptions& validated(const AlsOptions& o) {
  require_at_least("rank", o.rank, 1);
  require_positive_field("regularization", o.regularization);
  require_at_least("iterations", o.iterations, 1);
  require_at_least("irls_iterations", o.irls_iterations, 0);
  require_positive_field("huber_alpha", o.huber_alpha);
  if (o.init != AlsInit::uniform && o.init != AlsInit::gaussian)
    throw InvalidParameter("PrivateAls: init must be uniform or gaussian, got " + std::to_string(static_cast<int>(o.init)));
  require_positive_field("init_scale", o.init_scale);
  if (o.mechanism != AlsMechanism::none && o.mechanism != AlsMechanism::gaussian &&
      o.mechanism != AlsMechanism::laplace && o.mechanism != AlsMechanism::huber)
    throw InvalidParameter("PrivateAls: mechanism must be none, gaussian, laplace or huber, got " +
                           std::to_string(static_cast<int>(o.mechanism)));
  if (o.mode != AlsMode::faithful && o.mode != AlsMode::rigorous)
    throw InvalidParameter("PrivateAls: mode must be faithful or rigorous, got " + std::to_string(static_cast<int>(o.mode)));
  if (o.huber_noise_alpha) require_positive_field("huber_noise_alpha", *o.huber_noise_alpha);
  require_positive_field("noise_variance", o.noise_variance);
  require_positive_field("paper_sensitivity", o.paper_sensitivity);
  base::require_open_unit("PrivateAls: report_delta", o.report_delta);
  if (o.relation != privacy::Neighbours::add_remove_row && o.relation != privacy::Neighbours::replace_row)
    throw InvalidParameter("PrivateAls: relation must be add_remove_row or replace_row, got " +
                           std::to_string(static_cast<int>(o.relation)));
  require_positive_field("rating_bound", o.rating_bound);
  require_at_least("max_per_user", o.max_per_user, 1);
  require_positive_field("user_factor_bound", o.user_factor_bound);
  if (!(std::isfinite(o.gram_floor_multiplier) && o.gram_floor_multiplier >= 0.0))
    throw InvalidParameter("PrivateAls: gram_floor_multiplier must be finite and >= 0, got " +
                           format_value(o.gram_floor_multiplier));
  if (is_rigorous(o)) {
    if (o.mechanism == AlsMechanism::none)
      throw InvalidParameter("PrivateAls: rigorous mode needs a mechanism (gaussian, laplace or huber), got none");
    if (o.mechanism == AlsMechanism::gaussian && !(o.target.delta() > 0.0))
      throw InvalidParameter("PrivateAls: target.delta must be > 0 for the Gaussian mechanism, got " +
                             format_value(o.target.delta()));
  } else if (o.mechanism == AlsMechanism::huber) {
    faithful_huber_alpha(o);  // refuses v ≤ 1 without an explicit α
  }
  return o;
}

// ---- the sparse data as the algorithm sees it ----------------------------------------------------

// One user's row or one item's column of the sparse views: `count` (index, value) pairs.
struct Entries {
  const StorageIndex* indices;
  const double* values;
  Index count;
};

template <class Sparse>
Entries entries_of(const Sparse& m, Index outer) {
  const auto* outer_index = m.outerIndexPtr();  // both views are compressed (ratings_matrix.cpp)
  const Index begin = outer_index[outer];
  return {m.innerIndexPtr() + begin, m.valuePtr() + begin, static_cast<Index>(outer_index[outer + 1]) - begin};
}

// Rigorous mode: x ← clamp(x, −B_r, B_r) on every stored value; returns how many moved.
template <class Sparse>
std::uint64_t clip_ratings(Sparse& m, double bound) {
  std::uint64_t clipped = 0;
  double* values = m.valuePtr();
  for (Index k = 0; k < m.nonZeros(); ++k) {
    if (std::fabs(values[k]) > bound) {
      values[k] = std::clamp(values[k], -bound, bound);
      ++clipped;
    }
  }
  return clipped;
}

struct TrainingData {
  RatingsMatrix::ByUser by_user;
  RatingsMatrix::ByItem by_item;
  std::uint64_t ratings_clipped = 0;
};

// Copies of both views, clipped in rigorous mode (both views hold the same entries, so the count of
// one is the count).
TrainingData prepare(const AlsOptions& o, const RatingsMatrix& ratings) {
  TrainingData d{ratings.by_user(), ratings.by_item(), 0};
  if (is_rigorous(o)) {
    d.ratings_clipped = clip_ratings(d.by_user, o.rating_bound);
    clip_ratings(d.by_item, o.rating_bound);
  }
  return d;
}

// ---- the per-user and per-item solves ------------------------------------------------------------

// Scratch for the r × r normal equations of one user or item; sized once per run.
struct Workspace {
  MatrixXd gathered;   // r × p: the factors of the p entries' counterparts
  VectorXd targets;    // p ratings
  VectorXd weights;    // p IRLS weights (1 for ALS)
  MatrixXd weighted;   // r × p: gathered · diag(weights)
  MatrixXd gram;       // r × r
  VectorXd rhs;        // r
  VectorXd coordinates;  // r: the RHS in the eigenbasis of a projected Gram
  Eigen::LDLT<MatrixXd> ldlt;
  Eigen::LLT<MatrixXd> llt;
  linalg::SymmetricEigenSolver eigen;

  Workspace(Index rank, Index max_entries)
      : gathered(rank, max_entries), targets(max_entries), weights(max_entries), weighted(rank, max_entries),
        gram(rank, rank), rhs(rank), coordinates(rank), ldlt(rank), llt(rank), eigen(rank) {}
};

Index max_entries(const RatingsMatrix::ByUser& by_user, const RatingsMatrix::ByItem& by_item) {
  Index largest = 0;
  for (Index i = 0; i < by_user.outerSize(); ++i) largest = std::max(largest, entries_of(by_user, i).count);
  for (Index j = 0; j < by_item.outerSize(); ++j) largest = std::max(largest, entries_of(by_item, j).count);
  return largest;
}

// Gathers the counterparts' factors (columns of `factor_columns`, r × count) and the ratings.
void gather(const Entries& e, const MatrixXd& factor_columns, Workspace& w) {
  for (Index k = 0; k < e.count; ++k) {
    w.gathered.col(k) = factor_columns.col(e.indices[k]);
    w.targets[k] = e.values[k];
  }
}

// gram = A·diag(w)·Aᵀ, rhs = A·diag(w)·x over the gathered entries. Weights of exactly 1 (ALS) make
// every product exact, which is why IRLS with all weights 1 reproduces ALS bitwise.
void normal_equations(Index count, Workspace& w) {
  const auto a = w.gathered.leftCols(count);
  auto weighted = w.weighted.leftCols(count);
  weighted.noalias() = a * w.weights.head(count).asDiagonal();
  w.gram.noalias() = weighted * a.transpose();
  w.rhs.noalias() = weighted * w.targets.head(count);
}

// (gram + λI)⁻¹ rhs into `out`.
void ridge_solve(double lambda, Workspace& w, Eigen::Ref<VectorXd> out) {
  w.gram.diagonal().array() += lambda;
  w.ldlt.compute(w.gram);
  out = w.ldlt.solve(w.rhs);
}

// The u-step for one user (Algorithm 1 line 4, Algorithm 2 line 5): ridge LS on her ratings and the
// public V; rigorous mode clips ‖u‖ to B_u. `e` holds her ratings, already clipped in rigorous mode.
// Returns whether the factor was clipped.
bool solve_user(const AlsOptions& o, const Entries& e, const MatrixXd& item_columns, Workspace& w,
                Eigen::Ref<VectorXd> out) {
  gather(e, item_columns, w);
  w.weights.head(e.count).setOnes();
  normal_equations(e.count, w);
  ridge_solve(o.regularization, w, out);
  if (!is_rigorous(o)) return false;
  const double norm = out.norm();
  if (!(norm > o.user_factor_bound)) return false;
  out *= o.user_factor_bound / norm;
  return true;
}

// ψ_α(r)/r: r/r = 1 in the core (and the limit at r = 0), α·sign(r)/r = α/|r| beyond. Inline here: the
// exported huber_weight cannot be inlined across the shared library's interposable symbol.
inline double weight_of(double residual, double alpha) {
  const double magnitude = std::fabs(residual);
  return magnitude <= alpha ? 1.0 : alpha / magnitude;
}

Index upper_size(Index rank) { return rank * (rank + 1) / 2; }

// One item's V-step statistics (header: v_step_statistics) into out[0, stride): the gathered users'
// factors, the IRLS weights from θ̂ (theta null: ALS, weights 1), the Gram's upper triangle row by
// row, then the RHS.
void item_statistics(const AlsOptions& o, const Entries& e, const MatrixXd& user_columns, const double* theta,
                     Workspace& w, double* out) {
  gather(e, user_columns, w);
  if (theta == nullptr) {
    w.weights.head(e.count).setOnes();
  } else {
    const Eigen::Map<const VectorXd> t(theta, o.rank);
    for (Index k = 0; k < e.count; ++k)
      w.weights[k] = weight_of(w.targets[k] - w.gathered.col(k).dot(t), o.huber_alpha);
  }
  normal_equations(e.count, w);
  Index pos = 0;
  for (Index a = 0; a < o.rank; ++a)
    for (Index b = a; b < o.rank; ++b) out[pos++] = w.gram(a, b);
  for (Index a = 0; a < o.rank; ++a) out[pos++] = w.rhs[a];
}

// v_j from one item's (noisy) statistics. floor: rigorous mode, where the noisy Gram Ĝ need not be
// positive definite — its eigenvalues are clipped below at `floor` ≥ 0 (0: the projection onto the PSD
// cone), computed only when Ĝ − floor·I has no Cholesky factor, i.e. when the clip changes anything.
// Post-processing of the release. Then + λI and the ridge solve. Returns whether it clipped.
bool solve_item(const AlsOptions& o, const double* statistics, std::optional<double> floor, Workspace& w,
                Eigen::Ref<VectorXd> out) {
  Index pos = 0;
  for (Index a = 0; a < o.rank; ++a)
    for (Index b = a; b < o.rank; ++b) w.gram(a, b) = w.gram(b, a) = statistics[pos++];
  for (Index a = 0; a < o.rank; ++a) w.rhs[a] = statistics[pos++];
  if (floor) {
    w.llt.compute(w.gram - *floor * MatrixXd::Identity(o.rank, o.rank));
    if (w.llt.info() != Eigen::Success) {
      // (Q max(Λ, f) Qᵀ + λI)⁻¹ b = Q (max(Λ, f) + λ)⁻¹ Qᵀ b, straight from the eigendecomposition.
      w.eigen.compute(w.gram);
      const MatrixXd& q = w.eigen.eigenvectors();
      w.coordinates.noalias() = q.transpose() * w.rhs;
      w.coordinates.array() /= w.eigen.eigenvalues().array().max(*floor) + o.regularization;
      out.noalias() = q * w.coordinates;
      return true;
    }
  }
  ridge_solve(o.regularization, w, out);
  return false;
}

}  // namespace

// ---- building blocks -----------------------------------------------------------------------------

double huber_weight(double residual, double alpha) { return weight_of(residual, alpha); }

AlsReleaseSensitivity v_step_sensitivity(Index rank, Index max_per_user, double rating_bound,
                                         double user_factor_bound) {
  require_at_least("rank", rank, 1);
  require_at_least("max_per_user", max_per_user, 1);
  require_positive_field("rating_bound", rating_bound);
  require_positive_field("user_factor_bound", user_factor_bound);
  const double xi = static_cast<double>(max_per_user), r = static_cast<double>(rank);
  const double bu = user_factor_bound, br = rating_bound;
  return {std::sqrt(xi) * bu * std::hypot(bu, br), xi * ((r + 1.0) * bu * bu / 2.0 + std::sqrt(r) * br * bu)};
}

Index statistics_stride(Index rank) { return upper_size(rank) + rank; }

VectorXd local_user_factor(const AlsOptions& options, const RatingsMatrix& ratings, Index user,
                           const MatrixXd& item_factors) {
  const AlsOptions& o = validated(options);
  if (user < 0 || user >= ratings.users())
    throw InvalidParameter("local_user_factor: user " + std::to_string(user) + " outside [0, " +
                           std::to_string(ratings.users()) + ")");
  if (item_factors.rows() != ratings.items() || item_factors.cols() != o.rank)
    throw InvalidParameter("local_user_factor: item_factors must be items x rank = " + std::to_string(ratings.items()) +
                           " x " + std::to_string(o.rank));
  const Entries row = entries_of(ratings.by_user(), user);
  std::vector<double> own(row.values, row.values + row.count);
  if (is_rigorous(o))
    for (double& x : own) x = std::clamp(x, -o.rating_bound, o.rating_bound);
  const MatrixXd item_columns = item_factors.transpose();
  Workspace w(o.rank, row.count);
  VectorXd factor(o.rank);
  solve_user(o, {row.indices, own.data(), row.count}, item_columns, w, factor);
  return factor;
}

VectorXd v_step_statistics(const AlsOptions& options, const RatingsMatrix& ratings, const MatrixXd& user_factors,
                           const MatrixXd* weights_from) {
  const AlsOptions& o = validated(options);
  if (user_factors.rows() != ratings.users() || user_factors.cols() != o.rank)
    throw InvalidParameter("v_step_statistics: user_factors must be users x rank = " + std::to_string(ratings.users()) +
                           " x " + std::to_string(o.rank));
  if (weights_from != nullptr && (weights_from->rows() != ratings.items() || weights_from->cols() != o.rank))
    throw InvalidParameter("v_step_statistics: weights_from must be items x rank = " + std::to_string(ratings.items()) +
                           " x " + std::to_string(o.rank));
  const TrainingData d = prepare(o, ratings);
  const MatrixXd user_columns = user_factors.transpose();
  MatrixXd theta_columns;
  if (weights_from != nullptr) theta_columns = weights_from->transpose();
  const Index stride = statistics_stride(o.rank);
  Workspace w(o.rank, max_entries(d.by_user, d.by_item));
  VectorXd out(ratings.items() * stride);
  for (Index j = 0; j < ratings.items(); ++j)
    item_statistics(o, entries_of(d.by_item, j), user_columns,
                    weights_from != nullptr ? theta_columns.col(j).data() : nullptr, w, out.data() + j * stride);
  return out;
}

double faithful_noise_variance_for_epsilon(AlsMechanism mechanism, double per_draw_epsilon, double paper_sensitivity,
                                           double delta) {
  base::require_positive("per_draw_epsilon", per_draw_epsilon);
  base::require_positive("paper_sensitivity", paper_sensitivity);
  base::require_open_unit("delta", delta);
  switch (mechanism) {
    case AlsMechanism::gaussian: {
      const double sigma = std::sqrt(2.0 * std::log(1.25 / delta)) * paper_sensitivity / per_draw_epsilon;
      return sigma * sigma;
    }
    case AlsMechanism::laplace: {
      const double b = paper_sensitivity / per_draw_epsilon;
      return 2.0 * b * b;
    }
    case AlsMechanism::huber: return privacy::HuberDistribution(per_draw_epsilon / paper_sensitivity).variance();
    case AlsMechanism::none: break;
  }
  throw InvalidParameter("faithful_noise_variance_for_epsilon: mechanism must be gaussian, laplace or huber");
}

double AlsResult::predict(Index user, Index item) const {
  if (user < 0 || user >= user_factors.rows() || item < 0 || item >= item_factors.rows())
    throw InvalidParameter("AlsResult::predict: (user " + std::to_string(user) + ", item " + std::to_string(item) +
                           ") outside " + std::to_string(user_factors.rows()) + " x " +
                           std::to_string(item_factors.rows()));
  return user_factors.row(user).dot(item_factors.row(item));
}

// ---- the calibrated mechanism --------------------------------------------------------------------

// Outside the anonymous namespace: PrivateAls::Noise (declared in the header, so of external linkage)
// derives from it, and a base of internal linkage made GCC warn (-Wsubobject-linkage).
namespace detail {

// One draw's mechanism (faithful: one item's RHS; rigorous: one whole release), its sensitivity and
// noise parameters. Charges nothing itself: train() charges once per run.
struct CalibratedNoise {
  std::variant<std::monostate, privacy::GaussianMechanism, privacy::LaplaceMechanism, privacy::HuberMechanism> mechanism;
  double sensitivity = 0.0;  // faithful Δf; rigorous Δ₂ (Gaussian) or Δ₁ (pure) of one release
  double scale = 0.0;        // σ, b or s
  double alpha = kNaN;       // Huber α
  double variance = 0.0;     // per coordinate
  double gram_floor = 0.0;   // rigorous: the eigenvalue floor of the noisy Gram (header)

  bool active() const noexcept { return !std::holds_alternative<std::monostate>(mechanism); }
  void add(Eigen::Ref<VectorXd> value, privacy::NoiseSource& source) const {
    std::visit(
        [&](const auto& m) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(m)>, std::monostate>) m.add_noise(value, source, privacy::Budget::unaccounted("train() charges once per run"));
        },
        mechanism);
  }
  // ε of one draw (pure mechanisms only).
  double pure_epsilon() const {
    if (const auto* l = std::get_if<privacy::LaplaceMechanism>(&mechanism)) return l->epsilon();
    return std::get<privacy::HuberMechanism>(mechanism).epsilon();
  }
};

}  // namespace detail

namespace {

using detail::CalibratedNoise;

// The V-step releases of one run: T·max(K, 1).
long release_count(const AlsOptions& o) {
  return static_cast<long>(o.iterations) * std::max(o.irls_iterations, 1);
}

// Faithful: the paper's draws (Algorithms 1, 3) with noise variance v and the assumed Δf.
void make_faithful_noise(const AlsOptions& o, CalibratedNoise& n) {
  n.sensitivity = o.paper_sensitivity;
  switch (o.mechanism) {
    case AlsMechanism::none: return;
    case AlsMechanism::gaussian:
      n.scale = std::sqrt(o.noise_variance);
      n.mechanism = privacy::GaussianMechanism::with_sigma(n.sensitivity, n.scale);
      n.variance = n.scale * n.scale;
      return;
    case AlsMechanism::laplace: {
      const privacy::LaplaceMechanism laplace(n.sensitivity, n.sensitivity / std::sqrt(o.noise_variance / 2.0));
      n.scale = laplace.scale();
      n.variance = laplace.variance();
      n.mechanism = laplace;
      return;
    }
    case AlsMechanism::huber: {
      const privacy::HuberMechanism huber(n.sensitivity, faithful_huber_alpha(o), 1.0);
      n.scale = 1.0;
      n.alpha = huber.distribution().alpha();
      n.variance = huber.variance();
      n.mechanism = huber;
      return;
    }
  }
}

// Rigorous: calibrated to the target for all releases (header "Mechanism and calibration").
void make_rigorous_noise(const AlsOptions& o, CalibratedNoise& n) {
  const AlsReleaseSensitivity add_remove =
      v_step_sensitivity(o.rank, o.max_per_user, o.rating_bound, o.user_factor_bound);
  const double relation_factor = o.relation == privacy::Neighbours::replace_row ? 2.0 : 1.0;
  const double releases = static_cast<double>(release_count(o));
  if (o.mechanism == AlsMechanism::gaussian) {
    n.sensitivity = relation_factor * add_remove.l2;
    n.scale = privacy::analytic_gaussian_sigma(n.sensitivity * std::sqrt(releases), o.target);
    if (!(std::isfinite(n.scale) && n.scale > 0.0))
      throw InvalidParameter("PrivateAls: calibrated sigma is " + format_value(n.scale) + " for target " +
                             o.target.to_string());
    n.mechanism = privacy::GaussianMechanism::with_sigma(n.sensitivity, n.scale);
    n.variance = n.scale * n.scale;
    return;
  }
  n.sensitivity = relation_factor * add_remove.l1;
  const double per_release_epsilon = o.target.epsilon() / releases;  // basic composition
  if (o.mechanism == AlsMechanism::laplace) {
    const privacy::LaplaceMechanism laplace(n.sensitivity, per_release_epsilon);
    n.scale = laplace.scale();
    n.variance = laplace.variance();
    n.mechanism = laplace;
    return;
  }
  const double alpha = o.huber_noise_alpha.value_or(kRigorousHuberAlpha);
  const privacy::HuberMechanism huber(n.sensitivity, alpha, alpha * n.sensitivity / per_release_epsilon);
  n.scale = huber.scale();
  n.alpha = alpha;
  n.variance = huber.variance();
  n.mechanism = huber;
}

// Rigorous: the floor of the noisy Gram's eigenvalues, gram_floor_multiplier × 2·sd·√r (header).
void set_gram_floor(const AlsOptions& o, CalibratedNoise& n) {
  n.gram_floor = o.gram_floor_multiplier * 2.0 * std::sqrt(n.variance) * std::sqrt(static_cast<double>(o.rank));
}

// The single charge of a rigorous run (header "Accounting").
void charge_rigorous_run(const AlsOptions& o, const CalibratedNoise& n, privacy::PrivacyAccountant& accountant,
                         const std::string& label) {
  if (o.mechanism == AlsMechanism::gaussian)
    accountant.charge_gaussian(label, n.sensitivity * std::sqrt(static_cast<double>(release_count(o))), n.scale,
                               o.target);
  else
    accountant.charge_pure(label, o.target.epsilon());
}

}  // namespace

struct PrivateAls::Noise : detail::CalibratedNoise {};

// ---- PrivateAls ----------------------------------------------------------------------------------

PrivateAls::PrivateAls(const AlsOptions& options) : options_(validated(options)), noise_(std::make_unique<Noise>()) {
  if (is_rigorous(options_)) {
    make_rigorous_noise(options_, *noise_);
    set_gram_floor(options_, *noise_);
  } else {
    make_faithful_noise(options_, *noise_);
  }
  if (options_.seed) {
    mechanism_source_ = std::make_unique<privacy::SeededNoiseSource>(*options_.seed);
    algorithm_source_ = std::make_unique<privacy::SeededNoiseSource>(*options_.seed + kAlgorithmSeedOffset);
  } else {
    mechanism_source_ = privacy::make_secure_noise_source();
    algorithm_source_ = privacy::make_secure_noise_source();
  }
}

PrivateAls::~PrivateAls() = default;
PrivateAls::PrivateAls(PrivateAls&&) noexcept = default;
PrivateAls& PrivateAls::operator=(PrivateAls&&) noexcept = default;

long PrivateAls::releases() const noexcept { return release_count(options_); }

bool PrivateAls::secure() const noexcept { return mechanism_source_->is_secure() && algorithm_source_->is_secure(); }

AlsPrivacyReport PrivateAls::privacy_report(Index items) const {
  require_at_least("items", items, 1);
  const AlsOptions& o = options_;
  const bool rigorous = is_rigorous(o);
  const bool gaussian = o.mechanism == AlsMechanism::gaussian;
  AlsPrivacyReport r;
  r.mode = o.mode;
  r.mechanism = o.mechanism;
  r.proven = rigorous;
  r.releases = releases();
  r.delta = rigorous ? o.target.delta() : o.report_delta;
  r.sensitivity = noise_->sensitivity;
  r.huber_noise_alpha = noise_->alpha;
  r.per_draw_epsilon_as_printed = kNaN;
  r.composed_epsilon_gdp = kNaN;
  if (!noise_->active()) {  // vanilla: no noise, nothing is protected
    r.per_draw_epsilon = r.per_draw_epsilon_as_printed = kInf;
    r.composed_epsilon_basic = r.composed_epsilon_zcdp = r.epsilon_spent = kInf;
    r.rho = kInf;
    r.delta_spent = 0.0;
    return r;
  }
  r.draws = rigorous ? r.releases : r.releases * static_cast<long>(items);
  r.coordinates_per_draw = rigorous ? items * statistics_stride(o.rank) : o.rank;
  r.noise_scale = noise_->scale;
  r.noise_variance = noise_->variance;
  const double draws = static_cast<double>(r.draws);

  double draw_delta = 0.0, draw_rho = 0.0;
  if (gaussian) {
    const double delta_ratio = 1.25 / r.delta;
    const auto classical = [&](double log_term) { return std::sqrt(2.0 * log_term) * r.sensitivity / r.noise_scale; };
    r.per_draw_epsilon = rigorous ? privacy::GaussianMechanism::with_sigma(r.sensitivity, r.noise_scale)
                                        .guarantee(r.delta)
                                        .epsilon()
                                  : classical(std::log(delta_ratio));
    if (!rigorous) r.per_draw_epsilon_as_printed = classical(std::log10(delta_ratio));  // the paper's quirk (Table 1)
    draw_delta = r.delta;
    draw_rho = privacy::gaussian_rho(r.sensitivity, r.noise_scale);
    r.composed_epsilon_gdp =
        privacy::GaussianMechanism::with_sigma(r.sensitivity * std::sqrt(draws), r.noise_scale).guarantee(r.delta).epsilon();
  } else {
    r.per_draw_epsilon = noise_->pure_epsilon();
    if (!rigorous) r.per_draw_epsilon_as_printed = r.per_draw_epsilon;
    draw_rho = privacy::pure_epsilon_rho(r.per_draw_epsilon);
  }
  r.composed_epsilon_basic = draws * r.per_draw_epsilon;
  r.composed_delta_basic = draws * draw_delta;
  r.rho = draws * draw_rho;
  r.composed_epsilon_zcdp = r.delta > 0.0 ? privacy::epsilon_from_rho_cks(r.rho, r.delta) : kInf;

  if (rigorous) {
    // The accountant's figure for this run's one charge, on a ledger of its own.
    privacy::PrivacyAccountant own(o.target);
    charge_rigorous_run(o, *noise_, own, "report");
    const privacy::Spent spent = own.spent();
    r.epsilon_spent = spent.epsilon;
    r.delta_spent = gaussian ? spent.delta : 0.0;
    return r;
  }
  // Faithful: the best composed figure whose δ is within `delta` (conditional on Δf; not proven).
  r.epsilon_spent = r.composed_epsilon_zcdp;
  r.delta_spent = r.delta;
  if (gaussian && r.composed_epsilon_gdp < r.epsilon_spent) r.epsilon_spent = r.composed_epsilon_gdp;
  if (r.composed_delta_basic <= r.delta && r.composed_epsilon_basic <= r.epsilon_spent) {
    r.epsilon_spent = r.composed_epsilon_basic;
    r.delta_spent = r.composed_delta_basic;
  }
  return r;
}

void PrivateAls::check_draws(Index items) const {
  require_at_least("items", items, 1);
  // Rigorous: one draw is a whole release (every item's statistics); faithful: one item's RHS.
  const Index coordinates = is_rigorous(options_) ? items * statistics_stride(options_.rank) : options_.rank;
  if (const auto* laplace = std::get_if<privacy::LaplaceMechanism>(&noise_->mechanism))
    (void)laplace->grid_noise_scale(coordinates);
}

void PrivateAls::charge_run(privacy::PrivacyAccountant& accountant, const std::string& label) const {
  if (!is_rigorous(options_))
    throw InvalidParameter("PrivateAls: faithful mode proves no guarantee, so it charges no accountant");
  charge_rigorous_run(options_, *noise_, accountant, label);
}

AlsResult PrivateAls::train(const RatingsMatrix& train, const privacy::Budget& budget,
                            const std::string& label, const ReleaseObserver& observer) {
  const AlsOptions& o = options_;
  const bool rigorous = is_rigorous(o);
  const Index users = train.users(), items = train.items(), rank = o.rank;
  require_at_least("train.items()", items, 1);
  if (!rigorous && budget.accounted())
    throw InvalidParameter("PrivateAls: faithful mode proves no guarantee, so it cannot charge an accountant; pass "
                           "Budget::unaccounted(why) (or use rigorous mode)");
  check_draws(items);
  if (rigorous && budget.accounted()) charge_run(*budget.accountant(), label);  // before any data is read

  if (rigorous) {
    for (Index i = 0; i < users; ++i) {
      const Index count = entries_of(train.by_user(), i).count;
      if (count > o.max_per_user)
        throw InvalidRow(static_cast<std::uint64_t>(i),
                         "user " + std::to_string(i) + " has " + std::to_string(count) + " ratings, over max_per_user " +
                             std::to_string(o.max_per_user) + " (cap them first: cap_ratings_per_user)");
    }
  }
  TrainingData data = prepare(o, train);

  AlsResult result;
  result.ratings_clipped = data.ratings_clipped;
  result.privacy = privacy_report(items);

  // Factors stored one per column (r × m, r × n): each user's or item's factor is contiguous.
  MatrixXd user_columns = MatrixXd::Zero(rank, users);
  MatrixXd item_columns(rank, items);
  privacy::NoiseSource& algorithm = *algorithm_source_;
  for (Index j = 0; j < items; ++j)
    for (Index a = 0; a < rank; ++a)
      item_columns(a, j) = o.init == AlsInit::uniform ? o.init_scale * algorithm.uniform_open()
                                                      : o.init_scale * algorithm.gaussian();

  const Index stride = statistics_stride(rank);
  const Index rhs_offset = upper_size(rank);
  const bool irls = is_irls(o);
  const int steps = std::max(o.irls_iterations, 1);
  Workspace w(rank, max_entries(data.by_user, data.by_item));
  VectorXd statistics(items * stride);
  MatrixXd observed_items;
  const std::optional<double> gram_floor = rigorous ? std::optional<double>(noise_->gram_floor) : std::nullopt;

  for (int t = 1; t <= o.iterations; ++t) {
    for (Index i = 0; i < users; ++i)  // u-step: each user alone, from the public V
      result.user_factors_clipped +=
          solve_user(o, entries_of(data.by_user, i), item_columns, w, user_columns.col(i)) ? 1 : 0;
    if (irls) {  // Algorithm 3 line 1: a fresh θ̂ ~ N(0, 1) for every item (data-independent)
      for (Index j = 0; j < items; ++j)
        for (Index a = 0; a < rank; ++a) item_columns(a, j) = algorithm.gaussian();
    }
    for (int k = 1; k <= steps; ++k) {
      for (Index j = 0; j < items; ++j)
        item_statistics(o, entries_of(data.by_item, j), user_columns, irls ? item_columns.col(j).data() : nullptr, w,
                        statistics.data() + j * stride);
      if (noise_->active()) {
        if (rigorous) {
          noise_->add(statistics, *mechanism_source_);  // one release: every item's Gram and RHS
        } else {
          for (Index j = 0; j < items; ++j)  // one draw per item, on its RHS only (as printed)
            noise_->add(statistics.segment(j * stride + rhs_offset, rank), *mechanism_source_);
        }
      }
      for (Index j = 0; j < items; ++j)
        result.gram_projections += solve_item(o, statistics.data() + j * stride, gram_floor, w, item_columns.col(j)) ? 1 : 0;
      if (observer) {
        observed_items = item_columns.transpose();
        observer(AlsRelease{t, k, statistics, observed_items});
      }
    }
  }
  result.user_factors = user_columns.transpose();
  result.item_factors = item_columns.transpose();
  return result;
}

}  // namespace dpstream::completion
