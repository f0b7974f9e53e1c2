// Private power iteration and rank-k deflation (Hardt & Roth, "Beyond worst-case
// analysis in private singular vector computation", STOC 2013 (HR13), Figs 2 and 3), and
// the private doubling search over C declared in coherence.hpp (it needs PPI's plan and runner).
#include "dpstream/pca/private_power_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>


#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "matrix_checks.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/coherence.hpp"
#include "dpstream/pca/subspace.hpp"  // kSymmetryTolerance
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/laplace_mechanism.hpp"
#include "dpstream/privacy/snap.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::Calibration;
using privacy::EpsDelta;
using base::format_value;

namespace {

using Apply = std::function<void(const VectorXd&, VectorXd&)>;

// Upper confidence margin for ‖A‖₁ + Lap(b): P(Lap(b) < −b ln 500) = ½·e^{−ln 500} = 1e-3.
const double kL1Margin = std::log(500.0);

void check_finite(const char* fn, const Eigen::Ref<const MatrixXd>& a) { detail::require_finite_matrix(fn, a); }

void check_square_symmetric(const char* fn, const Eigen::Ref<const MatrixXd>& a) {
  if (a.rows() != a.cols())
    throw InvalidParameter(std::string(fn) + ": matrix must be square (symmetric), got " + detail::dims(a.rows(), a.cols()) +
                           "; use the _rectangular variant for a rectangular matrix");
  check_finite(fn, a);
  const double max_abs = a.cwiseAbs().maxCoeff();
  Index ai = 0, aj = 0;
  const double max_asym = (a - a.transpose()).cwiseAbs().maxCoeff(&ai, &aj);
  if (max_asym > kSymmetryTolerance * max_abs)
    throw InvalidParameter(std::string(fn) + ": matrix is not symmetric: |A(" + std::to_string(ai) + "," +
                           std::to_string(aj) + ") - A(" + std::to_string(aj) + "," + std::to_string(ai) +
                           ")| = " + format_value(max_asym) + " exceeds 1e-10 * max|A_ij| = " +
                           format_value(kSymmetryTolerance * max_abs));
}

void require_share(const char* fn, const char* name, double share) {
  if (!(share > 0.0 && share < 1.0))
    throw InvalidParameter(std::string(fn) + ": " + name + " must be in (0, 1), got " + format_value(share));
}

// Validates the options a call reads. needs_c: false for the doubling search (it sets C).
void validate(const char* fn, const PpiOptions& o, bool needs_c, bool rank_k) {
  const double delta = o.target.delta();
  if (o.calibration == Calibration::paper) {
    if (!(delta > 0.0 && delta < 0.5))
      throw InvalidParameter(std::string(fn) + ": target.delta must be in (0, 1/2) for the paper calibration (HR13 Thm 2.6), got " +
                             format_value(delta));
  } else if (!(delta > 0.0)) {
    throw InvalidParameter(std::string(fn) + ": target.delta must be > 0 (Gaussian noise), got " + format_value(delta));
  }
  if (o.iterations.has_value()) {
    if (*o.iterations < 1)
      throw InvalidParameter(std::string(fn) + ": iterations must be >= 1, got " + std::to_string(*o.iterations));
  } else {
    require_share(fn, "iteration_share", o.iteration_share);
  }
  if (needs_c && !(std::isfinite(o.coherence_bound) && o.coherence_bound > 0.0))
    throw InvalidParameter(std::string(fn) + ": coherence_bound must be finite and > 0, got " + format_value(o.coherence_bound));
  if (rank_k) {
    if (o.k < 1) throw InvalidParameter(std::string(fn) + ": k must be >= 1, got " + std::to_string(o.k));
    if (o.calibration == Calibration::tight) require_share(fn, "value_share", o.value_share);
  }
}

double unit_factor(EntryChange unit) { return unit == EntryChange::mirrored_pair ? std::sqrt(2.0) : 1.0; }

// Everything the noise and the accounting need, fixed before the data is read.
struct Plan {
  long iterations = 0;
  long runs = 1;             // planned PPI runs composed in one GDP charge (k, or R for the search)
  double unit = 1.0;         // s
  double sigma = 0.0;        // Fig 2's σ, × s
  EpsDelta gaussian_claim{1.0, 0.5};  // single-release claim of the whole Gaussian part
  long value_releases = 0;   // σ̂ releases (Laplace, l1 sensitivity 1)
  double value_epsilon = 0.0;
  // Set per C:
  double coherence_bound = 0.0, round_sensitivity = 0.0, noise_std = 0.0;

  double gdp_mu() const { return std::sqrt(static_cast<double>(runs * iterations)) * unit / sigma; }
  void set_coherence(double c, Index n) {
    coherence_bound = c;
    const double scale = std::sqrt(c / static_cast<double>(n));
    round_sensitivity = unit * scale;
    noise_std = scale * sigma;
  }
};

EpsDelta exact_claim(double mu, double delta) {
  // ε = 0 is not an EpsDelta; a μ that small (δ(0) ≤ δ) is (tiny, δ)-DP all the same.
  return EpsDelta(std::max(gaussian_dp_epsilon(mu, delta), std::numeric_limits<double>::min()), delta);
}

// The calibration of a call: `runs` PPI runs of T rounds each (all composed into one GDP charge) and
// `value_releases` σ̂ releases, within (epsilon, δ).
Plan make_plan(const PpiOptions& o, long iterations, double unit, long runs, long value_releases, double epsilon) {
  Plan p;
  p.iterations = iterations;
  p.runs = runs;
  p.unit = unit;
  p.value_releases = value_releases;
  const double delta = o.target.delta();
  if (o.calibration == Calibration::paper) {
    if (value_releases > 0) {
      // Fig 3: ε' = ε/√(4k ln(1/δ)), δ' = δ/k for each PPI call and Laplace(1/ε') for each σ̂.
      const double k = static_cast<double>(value_releases);
      const double eps_prime = epsilon / std::sqrt(4.0 * k * std::log(1.0 / delta));
      p.sigma = ppi_sigma(iterations, EpsDelta(eps_prime, delta / k), Calibration::paper, unit);
      p.value_epsilon = eps_prime;
    } else {
      p.sigma = ppi_sigma(iterations, EpsDelta(epsilon, delta), Calibration::paper, unit);
    }
    // All runs are charged together at their exact GDP ε at δ (the σ̂ charges have δ = 0).
    p.gaussian_claim = exact_claim(p.gdp_mu(), delta);
  } else {
    const double gaussian_eps = value_releases > 0 ? (1.0 - o.value_share) * epsilon : epsilon;
    p.sigma = ppi_sigma(runs * iterations, EpsDelta(gaussian_eps, delta), Calibration::tight, unit);
    p.value_epsilon = value_releases > 0 ? o.value_share * epsilon / static_cast<double>(value_releases) : 0.0;
    p.gaussian_claim = EpsDelta(gaussian_eps, delta);
  }
  return p;
}

// The Gaussian charge in scale-free units (sensitivity s·√(rounds), noise σ): the same ρ and profile as
// (√rounds·round_sensitivity, noise_std) for every C.
void charge_plan(privacy::PrivacyAccountant& acc, const Plan& p, const std::string& what) {
  acc.charge_gaussian(what + ": " + std::to_string(p.runs * p.iterations) + " Gaussian rounds (GDP)",
                      p.unit * std::sqrt(static_cast<double>(p.runs * p.iterations)), p.sigma, p.gaussian_claim);
  for (long i = 1; i <= p.value_releases; ++i)
    acc.charge_pure(what + ": sigma_hat " + std::to_string(i) + " (Laplace)", p.value_epsilon);
}

// The iteration count of a call: given, or released from ‖A‖₁ (after charging). Returns the ε left.
struct IterationChoice {
  long iterations;
  double epsilon_left;
  std::optional<IterationCount> released;
};

double l1_sensitivity(EntryChange unit) { return unit == EntryChange::mirrored_pair ? 2.0 : 1.0; }

// Charges everything a call will charge on a copy first, so that a refusal leaves the ledger as it
// was and nothing is read. The Gaussian charge's amounts do not depend on T (μ is fixed by the
// budget), so a nominal T = 1 stands for the T to be released.
template <class ChargeMain>
void precheck(const privacy::Budget& budget, double l1_epsilon, ChargeMain charge_main) {
  if (!budget.accounted()) return;
  privacy::PrivacyAccountant trial = *budget.accountant();
  if (l1_epsilon > 0.0) trial.charge_pure("ppi: ||A||_1 for T (Laplace)", l1_epsilon);
  charge_main(trial);
}

IterationChoice choose_iterations(const PpiOptions& o, const Eigen::Ref<const MatrixXd>* dense, EntryChange unit,
                                  privacy::NoiseSource& noise, const privacy::Budget& budget, const char* fn) {
  if (o.iterations.has_value()) return {*o.iterations, o.target.epsilon(), std::nullopt};
  if (dense == nullptr)
    throw InvalidParameter(std::string(fn) + ": iterations must be set for a linear operator (||A||_1 is not available)");
  const double eps0 = o.iteration_share * o.target.epsilon();
  IterationCount count = private_iteration_count(*dense, eps0, unit, noise, budget);
  return {count.iterations, o.target.epsilon() - eps0, count};
}

// One PPI run (Fig 2) on `apply`, dimension n.
struct RunOutput {
  VectorXd x, previous;  // x_T and x_{T−1} (empty on failure)
  PpiTrace trace;
};

RunOutput run_ppi(const Apply& apply, Index n, long iterations, double coherence_bound, double noise_std,
                  privacy::NoiseSource& noise) {
  RunOutput out;
  const double dn = static_cast<double>(n);
  const double limit = coherence_bound / dn;  // (a): ‖x‖∞² > C/n fails
  const double grid = privacy::snap_granularity(noise_std);
  VectorXd x(n), y(n), g(n), previous;
  noise.fill_gaussian(std::span<double>(x.data(), static_cast<std::size_t>(n)), 1.0 / std::sqrt(dn));  // x_0 = g_0
  out.trace.coherence.reserve(static_cast<std::size_t>(iterations) + 1);
  out.trace.norms.reserve(static_cast<std::size_t>(iterations));
  for (long t = 1; t <= iterations; ++t) {
    // (a) on x_{t−1}, before A touches it: x_0 or a normalised release.
    const double inf2 = x.cwiseAbs2().maxCoeff();
    out.trace.coherence.push_back(dn * inf2);
    if (inf2 > limit) {
      out.trace.failed = true;
      out.trace.failed_round = t;
      return out;
    }
    apply(x, y);  // (c), the only place the data is read
    if (!y.allFinite()) throw InvalidParameter("private power iteration: the operator returned a non-finite value");
    noise.fill_gaussian(std::span<double>(g.data(), static_cast<std::size_t>(n)), noise_std);  // (b)
    y += g;
    privacy::snap_to_grid(std::span<double>(y.data(), static_cast<std::size_t>(n)), grid);
    const double norm = y.norm();
    out.trace.norms.push_back(norm);
    previous.swap(x);
    x = y / norm;  // (d)
  }
  out.trace.coherence.push_back(dn * x.cwiseAbs2().maxCoeff());
  out.x = std::move(x);
  out.previous = std::move(previous);
  return out;
}

// Orthonormalised, |σ̂|-ordered copy for PrivateSubspace.
PrivateSubspace make_subspace(const MatrixXd& vectors, const VectorXd& values) {
  PrivateSubspace s;
  s.method = "ppi";
  const Index k = vectors.cols();
  std::vector<Index> order(static_cast<std::size_t>(k));
  std::iota(order.begin(), order.end(), Index{0});
  if (values.size() == k)
    std::stable_sort(order.begin(), order.end(), [&](Index i, Index j) { return std::abs(values(i)) > std::abs(values(j)); });
  MatrixXd ordered(vectors.rows(), k);
  for (Index j = 0; j < k; ++j) ordered.col(j) = vectors.col(order[static_cast<std::size_t>(j)]);
  if (k > 0) {
    // Each column keeps its sign (Gram–Schmidt order: column j spans the first j + 1).
    s.vectors = linalg::HouseholderQr(ordered).q_nonnegative_r(k);
  } else {
    s.vectors = MatrixXd(vectors.rows(), 0);
  }
  if (values.size() == k) {
    s.values.resize(k);
    for (Index j = 0; j < k; ++j) s.values(j) = values(order[static_cast<std::size_t>(j)]) * values(order[static_cast<std::size_t>(j)]);
  }
  return s;
}

void record_plan(PpiResult& r, const Plan& p) {
  r.iterations = p.iterations;
  r.coherence_bound = p.coherence_bound;
  r.sigma = p.sigma;
  r.round_sensitivity = p.round_sensitivity;
  r.noise_std = p.noise_std;
  r.gdp_mu = p.gdp_mu();
  r.value_epsilon = p.value_epsilon;
}

void record_failure(PpiResult& r, const PpiTrace& trace, long component) {
  r.failed = true;
  r.failed_component = component;
  r.failed_round = trace.failed_round;
}

// Symmetric: k components by deflation (release_values) or one PPI run (!release_values).
PpiResult run_symmetric(const Apply& base, Index n, const Plan& plan, long k, bool release_values,
                        SingularValueEstimate estimate, privacy::NoiseSource& noise) {
  PpiResult r;
  record_plan(r, plan);
  MatrixXd v(n, 0);
  VectorXd values(0);
  // A_{i−1}x = Ax − Σ_j σ̂_j v_j (v_jᵀx): deflation by released values only.
  const Apply deflated = [&](const VectorXd& x, VectorXd& y) {
    base(x, y);
    if (v.cols() > 0) y.noalias() -= v * values.cwiseProduct(v.transpose() * x);
  };
  const privacy::LaplaceMechanism laplace(1.0, release_values ? plan.value_epsilon : 1.0);
  for (long i = 1; i <= k; ++i) {
    RunOutput run = run_ppi(deflated, n, plan.iterations, plan.coherence_bound, plan.noise_std, noise);
    r.traces.push_back(run.trace);
    if (run.trace.failed) {
      record_failure(r, run.trace, i);
      break;
    }
    if (release_values) {
      VectorXd av(n);
      deflated(run.x, av);
      const double exact = estimate == SingularValueEstimate::norm ? av.norm() : run.x.dot(av);
      const double released = laplace.release(exact, noise, privacy::Budget::unaccounted("charged in the run's plan"));
      v.conservativeResize(Eigen::NoChange, v.cols() + 1);
      v.col(v.cols() - 1) = run.x;
      values.conservativeResize(values.size() + 1);
      values(values.size() - 1) = released;
    } else {
      v.conservativeResize(Eigen::NoChange, v.cols() + 1);
      v.col(v.cols() - 1) = run.x;
    }
  }
  r.vectors = std::move(v);
  r.releases_values = release_values;
  if (release_values) r.values = std::move(values);
  r.subspace = make_subspace(r.vectors, r.values);
  return r;
}

// Rectangular m × d: PPI on the dilation of A_{i−1}; A itself is deflated with σ̂ û v̂ᵀ.
PpiResult run_rectangular(const Eigen::Ref<const MatrixXd>& a, const Plan& plan, long k, bool release_values,
                          HalfVectors halves, privacy::NoiseSource& noise) {
  const Index m = a.rows(), d = a.cols(), n = m + d;
  PpiResult r;
  record_plan(r, plan);
  MatrixXd u(m, 0), v(d, 0);
  VectorXd values(0);
  const auto times_a = [&](const VectorXd& z) -> VectorXd {  // A_{i−1} z
    VectorXd out = a * z;
    if (v.cols() > 0) out.noalias() -= u * values.cwiseProduct(v.transpose() * z);
    return out;
  };
  const Apply deflated_dilation = [&](const VectorXd& x, VectorXd& y) {
    const auto top = x.head(m);
    const auto bottom = x.tail(d);
    y.head(m).noalias() = a * bottom;
    y.tail(d).noalias() = a.transpose() * top;
    if (v.cols() > 0) {
      y.head(m).noalias() -= u * values.cwiseProduct(v.transpose() * bottom);
      y.tail(d).noalias() -= v * values.cwiseProduct(u.transpose() * top);
    }
  };
  const privacy::LaplaceMechanism laplace(1.0, release_values ? plan.value_epsilon : 1.0);
  for (long i = 1; i <= k; ++i) {
    RunOutput run = run_ppi(deflated_dilation, n, plan.iterations, plan.coherence_bound, plan.noise_std, noise);
    r.traces.push_back(run.trace);
    if (run.trace.failed) {
      record_failure(r, run.trace, i);
      break;
    }
    VectorXd uh, vh;
    if (halves == HalfVectors::last_two_iterates && plan.iterations >= 2) {  // x_0 is pure noise
      // top(x'_T) = A_{i−1}·bottom(x_{T−1}) + noise and bottom(x'_T) = A_{i−1}ᵀ·top(x_{T−1}) + noise:
      // (top x_T, bottom x_{T−1}) and (top x_{T−1}, bottom x_T) are two (û, v̂) pairs with ûᵀAv̂ > 0
      // and swapped amplitudes. Align the second pair's sign with the first, then weight every half
      // by its norm (its amplitude): the combined amplitude is ≈ √(a² + b²) = 1.
      const VectorXd t_now = run.x.head(m), b_now = run.x.tail(d);
      const VectorXd t_prev = run.previous.head(m), b_prev = run.previous.tail(d);
      const double align = t_now.dot(t_prev) + b_prev.dot(b_now) >= 0 ? 1.0 : -1.0;
      uh = t_now.norm() * t_now + align * t_prev.norm() * t_prev;
      vh = b_prev.norm() * b_prev + align * b_now.norm() * b_now;
    } else {
      uh = run.x.head(m);
      vh = run.x.tail(d);
    }
    uh /= uh.norm();
    vh /= vh.norm();
    if (release_values) {
      // Signed bilinear estimate (sensitivity |û_s v̂_t| ≤ 1); its sign fixes û's relative sign.
      double released = laplace.release(uh.dot(times_a(vh)), noise, privacy::Budget::unaccounted("charged in the run's plan"));
      if (released < 0) {
        released = -released;
        uh = -uh;
      }
      values.conservativeResize(values.size() + 1);
      values(values.size() - 1) = released;
    }
    u.conservativeResize(Eigen::NoChange, u.cols() + 1);
    u.col(u.cols() - 1) = uh;
    v.conservativeResize(Eigen::NoChange, v.cols() + 1);
    v.col(v.cols() - 1) = vh;
  }
  r.vectors = std::move(v);
  r.left_vectors = std::move(u);
  r.releases_values = release_values;
  if (release_values) r.values = std::move(values);
  r.subspace = make_subspace(r.vectors, r.values);
  return r;
}

Apply dense_apply(const Eigen::Ref<const MatrixXd>& a) {
  return [&a](const VectorXd& x, VectorXd& y) { y.noalias() = a * x; };
}

void check_operator(const char* fn, const SymmetricOperator& op) {
  if (op.dimension < 1) throw InvalidParameter(std::string(fn) + ": operator dimension must be >= 1, got " + std::to_string(op.dimension));
  if (!op.apply) throw InvalidParameter(std::string(fn) + ": operator apply must be set");
}

// The shared body of every public PPI / rank-k call.
// dense: the matrix when dense (for ‖A‖₁), else nullptr. rectangular: dense is m × d.
PpiResult ppi_call(const char* fn, const PpiOptions& o, bool rank_k, const Eigen::Ref<const MatrixXd>* dense,
                   const Apply* symmetric_apply, Index n, bool rectangular, privacy::NoiseSource& noise,
                   const privacy::Budget& budget) {
  const EntryChange l1_unit = rectangular ? EntryChange::single_entry : o.unit;
  const double unit = rectangular ? std::sqrt(2.0) : unit_factor(o.unit);
  const long k = rank_k ? o.k : 1;
  const long values = rank_k ? o.k : 0;
  const double eps0 = o.iterations.has_value() ? 0.0 : o.iteration_share * o.target.epsilon();
  precheck(budget, eps0, [&](privacy::PrivacyAccountant& trial) {
    charge_plan(trial, make_plan(o, 1, unit, k, values, o.target.epsilon() - eps0), fn);
  });
  const IterationChoice choice = choose_iterations(o, dense, l1_unit, noise, budget, fn);
  Plan plan = make_plan(o, choice.iterations, unit, k, values, choice.epsilon_left);
  plan.set_coherence(o.coherence_bound, n);
  if (budget.accounted()) charge_plan(*budget.accountant(), plan, fn);
  PpiResult r = rectangular ? run_rectangular(*dense, plan, k, rank_k, o.halves, noise)
                            : run_symmetric(*symmetric_apply, n, plan, k, rank_k, o.estimate, noise);
  r.iteration_count = choice.released;
  return r;
}

long planned_search_runs(Index n) {
  long r = 0;  // ⌈log₂ n⌉
  while ((Index{1} << r) < n) ++r;
  return r + 1;
}

CoherenceSearchResult search(const char* fn, const PpiOptions& o, const Eigen::Ref<const MatrixXd>& a, bool rectangular,
                             privacy::NoiseSource& noise, const privacy::Budget& budget) {
  validate(fn, o, false, false);
  if (rectangular) check_finite(fn, a); else check_square_symmetric(fn, a);
  const Index n = rectangular ? a.rows() + a.cols() : a.rows();
  const double unit = rectangular ? std::sqrt(2.0) : unit_factor(o.unit);
  const long runs = planned_search_runs(n);
  const double eps0 = o.iterations.has_value() ? 0.0 : o.iteration_share * o.target.epsilon();
  // paper: each run is PPI(ε/R, δ/R), charged when it starts; tight: R·T rounds in one GDP charge.
  const auto plan_for = [&](long iterations, double epsilon) {
    if (o.calibration == Calibration::paper) {
      PpiOptions per_run = o;
      per_run.target = EpsDelta(epsilon / static_cast<double>(runs), o.target.delta() / static_cast<double>(runs));
      return make_plan(per_run, iterations, unit, 1, 0, per_run.target.epsilon());
    }
    return make_plan(o, iterations, unit, runs, 0, epsilon);
  };
  const auto charge_search = [&](privacy::PrivacyAccountant& target, const Plan& plan, long times) {
    for (long i = 0; i < times; ++i) charge_plan(target, plan, std::string(fn) + " run " + std::to_string(i + 1));
  };
  const bool paper = o.calibration == Calibration::paper;
  precheck(budget, eps0, [&](privacy::PrivacyAccountant& trial) { charge_search(trial, plan_for(1, o.target.epsilon() - eps0), paper ? runs : 1); });
  const IterationChoice choice = choose_iterations(o, &a, rectangular ? EntryChange::single_entry : o.unit, noise, budget, fn);
  Plan plan = plan_for(choice.iterations, choice.epsilon_left);
  if (budget.accounted() && !paper) charge_plan(*budget.accountant(), plan, std::string(fn) + " (all " + std::to_string(runs) + " runs)");

  CoherenceSearchResult result;
  result.planned_runs = static_cast<int>(runs);
  const Apply apply = dense_apply(a);
  for (long i = 0; i < runs; ++i) {
    const double c = std::ldexp(1.0, static_cast<int>(i));
    plan.set_coherence(c, n);
    if (budget.accounted() && paper) charge_plan(*budget.accountant(), plan, std::string(fn) + " run " + std::to_string(i + 1));
    PpiResult r = rectangular ? run_rectangular(a, plan, 1, false, o.halves, noise)
                              : run_symmetric(apply, n, plan, 1, false, o.estimate, noise);
    r.iteration_count = choice.released;
    ++result.runs;
    result.run = std::move(r);
    result.coherence_bound = c;
    if (!result.run.failed) {
      result.found = true;
      break;
    }
    result.failed_bounds.push_back(c);
  }
  return result;
}

}  // namespace

const char* to_string(EntryChange unit) noexcept {
  switch (unit) {
    case EntryChange::single_entry: return "single_entry";
    case EntryChange::mirrored_pair: return "mirrored_pair";
  }
  return "unknown";
}

double PpiResult::max_coherence() const {
  double m = 0.0;
  for (const PpiTrace& t : traces)
    for (double c : t.coherence) m = std::max(m, c);
  return m;
}

MatrixXd PpiResult::approximation() const {
  if (!releases_values)
    throw InvalidParameter("PpiResult::approximation: no singular values were released (a single PPI run); use private_rank_k");
  const bool rectangular = left_vectors.rows() > 0;
  return (rectangular ? left_vectors : vectors) * values.asDiagonal() * vectors.transpose();
}

double ppi_sigma(long rounds, const EpsDelta& target, Calibration calibration, double unit_sensitivity) {
  if (rounds < 1) throw InvalidParameter("ppi_sigma: rounds must be >= 1, got " + std::to_string(rounds));
  base::require_positive("unit_sensitivity", unit_sensitivity);
  const double t = static_cast<double>(rounds);
  if (calibration == Calibration::paper) {
    if (!(target.delta() > 0.0 && target.delta() < 0.5))
      throw InvalidParameter("ppi_sigma: delta must be in (0, 1/2) for the paper calibration (HR13 Thm 2.6), got " +
                             format_value(target.delta()));
    return unit_sensitivity * 2.0 / target.epsilon() * std::sqrt(4.0 * t * std::log(1.0 / target.delta()));
  }
  return unit_sensitivity * std::sqrt(t) * privacy::analytic_gaussian_sigma(1.0, target);
}

double gaussian_dp_epsilon(double mu, double delta) {
  base::require_positive("mu", mu);
  base::require_open_unit("gaussian_dp_epsilon: delta", delta);
  const double sigma = 1.0 / mu;
  const auto ok = [&](double eps) { return privacy::analytic_gaussian_delta(1.0, sigma, eps) <= delta; };
  if (ok(0.0)) return 0.0;
  double lo = 0.0, hi = std::max(mu, 1e-12);
  while (!ok(hi)) {
    lo = hi;
    hi *= 2.0;
  }
  // Invariant: δ(lo) > delta ≥ δ(hi).
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ok(mid) ? hi : lo) = mid;
  }
  return hi;
}

long paper_iteration_count(double sigma1_upper) {
  base::require_positive("sigma1_upper", sigma1_upper);
  return std::max(1L, static_cast<long>(std::ceil(4.0 * std::log(sigma1_upper))));
}

long proof_iteration_count(double sigma1_upper, long k, double gap) {
  base::require_positive("sigma1_upper", sigma1_upper);
  if (k < 1) throw InvalidParameter("proof_iteration_count: k must be >= 1, got " + std::to_string(k));
  if (!(gap > 0.0 && gap < 1.0)) throw InvalidParameter("proof_iteration_count: gap must be in (0, 1), got " + format_value(gap));
  return std::max(1L, static_cast<long>(std::ceil(16.0 * static_cast<double>(k) / gap * std::log(sigma1_upper))));
}

IterationCount private_iteration_count(const Eigen::Ref<const MatrixXd>& a, double epsilon, EntryChange unit,
                                       privacy::NoiseSource& noise, const privacy::Budget& budget) {
  check_finite("private_iteration_count", a);
  base::require_positive("epsilon", epsilon);
  const double sensitivity = l1_sensitivity(unit);
  const privacy::LaplaceMechanism laplace(sensitivity, epsilon);
  if (budget.accounted()) budget.accountant()->charge_pure("ppi: ||A||_1 for T (Laplace)", epsilon);
  IterationCount c;
  c.epsilon = epsilon;
  c.l1_release = laplace.release(a.cwiseAbs().sum(), noise, privacy::Budget::unaccounted("charged above"));
  c.sigma1_upper = c.l1_release + laplace.scale() * kL1Margin;
  c.iterations = c.sigma1_upper > 1.0 ? paper_iteration_count(c.sigma1_upper) : 1;
  return c;
}

MatrixXd dilation(const Eigen::Ref<const MatrixXd>& a) {
  const Index m = a.rows(), d = a.cols();
  MatrixXd b = MatrixXd::Zero(m + d, m + d);
  b.topRightCorner(m, d) = a;
  b.bottomLeftCorner(d, m) = a.transpose();
  return b;
}

PpiResult private_power_iteration(const Eigen::Ref<const MatrixXd>& a, const PpiOptions& options,
                                  privacy::NoiseSource& noise, const privacy::Budget& budget) {
  const char* fn = "private_power_iteration";
  validate(fn, options, true, false);
  check_square_symmetric(fn, a);
  const Apply apply = dense_apply(a);
  return ppi_call(fn, options, false, &a, &apply, a.rows(), false, noise, budget);
}

PpiResult private_power_iteration(const SymmetricOperator& a, const PpiOptions& options, privacy::NoiseSource& noise,
                                  const privacy::Budget& budget) {
  const char* fn = "private_power_iteration";
  validate(fn, options, true, false);
  check_operator(fn, a);
  return ppi_call(fn, options, false, nullptr, &a.apply, a.dimension, false, noise, budget);
}

PpiResult private_power_iteration_rectangular(const Eigen::Ref<const MatrixXd>& a, const PpiOptions& options,
                                              privacy::NoiseSource& noise, const privacy::Budget& budget) {
  const char* fn = "private_power_iteration_rectangular";
  validate(fn, options, true, false);
  check_finite(fn, a);
  return ppi_call(fn, options, false, &a, nullptr, a.rows() + a.cols(), true, noise, budget);
}

PpiResult private_rank_k(const Eigen::Ref<const MatrixXd>& a, const PpiOptions& options, privacy::NoiseSource& noise,
                         const privacy::Budget& budget) {
  const char* fn = "private_rank_k";
  validate(fn, options, true, true);
  check_square_symmetric(fn, a);
  base::require_rank(fn, options.k, a.rows());
  const Apply apply = dense_apply(a);
  return ppi_call(fn, options, true, &a, &apply, a.rows(), false, noise, budget);
}

PpiResult private_rank_k(const SymmetricOperator& a, const PpiOptions& options, privacy::NoiseSource& noise,
                         const privacy::Budget& budget) {
  const char* fn = "private_rank_k";
  validate(fn, options, true, true);
  check_operator(fn, a);
  base::require_rank(fn, options.k, a.dimension);
  return ppi_call(fn, options, true, nullptr, &a.apply, a.dimension, false, noise, budget);
}

PpiResult private_rank_k_rectangular(const Eigen::Ref<const MatrixXd>& a, const PpiOptions& options,
                                     privacy::NoiseSource& noise, const privacy::Budget& budget) {
  const char* fn = "private_rank_k_rectangular";
  validate(fn, options, true, true);
  check_finite(fn, a);
  base::require_rank(fn, options.k, std::min(a.rows(), a.cols()));
  return ppi_call(fn, options, true, &a, nullptr, a.rows() + a.cols(), true, noise, budget);
}

CoherenceSearchResult private_coherence_search(const Eigen::Ref<const MatrixXd>& a, const PpiOptions& options,
                                               privacy::NoiseSource& noise, const privacy::Budget& budget) {
  return search("private_coherence_search", options, a, false, noise, budget);
}

CoherenceSearchResult private_coherence_search_rectangular(const Eigen::Ref<const MatrixXd>& a, const PpiOptions& options,
                                                           privacy::NoiseSource& noise,
                                                           const privacy::Budget& budget) {
  return search("private_coherence_search_rectangular", options, a, true, noise, budget);
}

}  // namespace dpstream::pca
