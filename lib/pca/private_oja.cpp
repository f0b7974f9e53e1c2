#include "dpstream/pca/private_oja.hpp"

#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::VectorXd;
using base::format_value;

namespace {

using SparseRows = Eigen::SparseMatrix<double, Eigen::RowMajor>;

// Rows may exceed L by this relative round-off (rows clipped to L elsewhere can land an ulp above).
constexpr double kNormSlack = 1e-12;

double squared_bound(double row_norm_bound) {
  base::require_positive("row_norm_bound", row_norm_bound);
  const double l2 = row_norm_bound * row_norm_bound;
  if (!std::isnormal(l2))
    throw InvalidParameter("PrivateOja: row_norm_bound^2 must be a finite normal number, got row_norm_bound = " +
                           format_value(row_norm_bound));
  return l2;
}

void require_paper_condition(const privacy::EpsDelta& target) {
  // Algorithm 2's input condition (from its zCDP → (ε, δ) conversion).
  const double limit = 2.0 * std::log(1.0 / target.delta());
  if (!(target.epsilon() <= limit))
    throw InvalidParameter("PrivateOja: the paper calibration needs epsilon <= 2 ln(1/delta) = " + format_value(limit) +
                           ", got epsilon = " + format_value(target.epsilon()));
}

const PrivateOjaOptions& validated(const PrivateOjaOptions& options) {
  if (options.iterations < 1)
    throw InvalidParameter("PrivateOja: iterations must be >= 1, got " + std::to_string(options.iterations));
  squared_bound(options.privacy.row_norm_bound);
  options.privacy.validate_gaussian("PrivateOja");
  if (options.privacy.calibration != privacy::Calibration::paper && options.privacy.calibration != privacy::Calibration::tight)
    throw InvalidParameter("PrivateOja: calibration must be paper or tight, got " +
                           std::to_string(static_cast<int>(options.privacy.calibration)));
  if (options.privacy.relation != privacy::Neighbours::add_remove_row && options.privacy.relation != privacy::Neighbours::replace_row)
    throw InvalidParameter("PrivateOja: relation must be add_remove_row or replace_row, got " +
                           std::to_string(static_cast<int>(options.privacy.relation)));
  if (options.privacy.calibration == privacy::Calibration::paper) require_paper_condition(options.privacy.target);
  if (options.components < 1)
    throw InvalidParameter("PrivateOja: components must be >= 1, got " + std::to_string(options.components));
  if (options.components > 1 && options.privacy.calibration == privacy::Calibration::paper)
    throw InvalidParameter("PrivateOja: the paper calibration releases one vector; components > 1 needs tight");
  if (options.sigma) base::require_positive("PrivateOja: sigma", *options.sigma);
  return options;
}

void check_shape(Index rows, Index columns) {
  if (columns < 1 || rows < 0)
    throw InvalidParameter("PrivateOja::run: A must have at least one column, got " + std::to_string(rows) + "x" +
                           std::to_string(columns));
}

void check_norm(std::uint64_t row, double norm, double bound) {
  if (!(norm <= bound * (1.0 + kNormSlack)))
    throw InvalidRow(row, "l2 norm " + format_value(norm) + " exceeds row_norm_bound " + format_value(bound) +
                              " (rows are checked, not clipped)");
}

void check_dense_rows(const Eigen::Ref<const Eigen::MatrixXd>& a, double bound) {
  VectorXd row(a.cols());  // one scratch row: a row of a column-major matrix is strided
  for (Index i = 0; i < a.rows(); ++i) {
    row = a.row(i).transpose();
    for (Index j = 0; j < row.size(); ++j)
      if (!std::isfinite(row(j)))
        throw InvalidRow(static_cast<std::uint64_t>(i),
                         "entry at column " + std::to_string(j) + " is not finite (" + format_value(row(j)) + ")");
    check_norm(static_cast<std::uint64_t>(i), stream::row_norm(row), bound);
  }
}

// [begin, end) of row i's stored entries, compressed or not.
struct RowRange {
  Index begin, end;
};
inline RowRange row_range(const SparseRows& a, Index i) {
  const auto* outer = a.outerIndexPtr();
  const auto* nonzeros = a.innerNonZeroPtr();  // null when compressed
  const Index begin = outer[i];
  return {begin, nonzeros != nullptr ? begin + nonzeros[i] : static_cast<Index>(outer[i + 1])};
}

void check_sparse_rows(const SparseRows& a, double bound) {
  const double* values = a.valuePtr();
  const auto* columns = a.innerIndexPtr();
  for (Index i = 0; i < a.rows(); ++i) {
    const auto [begin, end] = row_range(a, i);
    const auto row_index = static_cast<std::uint64_t>(i);
    for (Index k = begin; k < end; ++k) {
      const Index j = columns[k];
      // Duplicate or unordered indices would make the stored values' norm understate the row's.
      if (j < 0 || j >= a.cols() || (k > begin && j <= columns[k - 1]))
        throw InvalidRow(row_index, "column indices must be strictly increasing and < " + std::to_string(a.cols()) +
                                        ", got " + std::to_string(j));
      if (!std::isfinite(values[k]))
        throw InvalidRow(row_index,
                         "entry at column " + std::to_string(j) + " is not finite (" + format_value(values[k]) + ")");
    }
    const Eigen::Map<const VectorXd> stored(values + begin, end - begin);
    check_norm(row_index, stream::row_norm(stored), bound);
  }
}

// Aᵀ(Av) and ‖Av‖² for dense A: two matrix-vector products, O(m) scratch.
class DenseProduct {
 public:
  explicit DenseProduct(const Eigen::Ref<const Eigen::MatrixXd>& a) : a_(a), image_(a.rows()) {}
  void gram_times(const VectorXd& v, VectorXd& out) const {
    image_.noalias() = a_ * v;
    out.noalias() = a_.transpose() * image_;
  }
  double squared_image_norm(const VectorXd& v) const {
    image_.noalias() = a_ * v;
    return image_.squaredNorm();
  }

 private:
  const Eigen::Ref<const Eigen::MatrixXd>& a_;
  mutable VectorXd image_;
};

// The same for A·P, P = I − VVᵀ with V (n × j) orthonormal and public: rows a_iᵀP, norms ≤ ‖a_i‖.
class DeflatedDenseProduct {
 public:
  DeflatedDenseProduct(const Eigen::Ref<const Eigen::MatrixXd>& a, const Eigen::MatrixXd& v) : a_(a), v_(v), image_(a.rows()) {}
  void gram_times(const VectorXd& x, VectorXd& out) const {
    image_.noalias() = a_ * project(x);
    out.noalias() = a_.transpose() * image_;
    out = project(out);
  }
  double squared_image_norm(const VectorXd& x) const {
    image_.noalias() = a_ * project(x);
    return image_.squaredNorm();
  }
  VectorXd project(const VectorXd& x) const { return v_.cols() == 0 ? x : VectorXd(x - v_ * (v_.transpose() * x)); }

 private:
  const Eigen::Ref<const Eigen::MatrixXd>& a_;
  const Eigen::MatrixXd& v_;
  mutable VectorXd image_;
};

// Σ_i a_i (a_iᵀ v) over stored entries: O(nnz) per call, no scratch beyond `out`.
class SparseProduct {
 public:
  explicit SparseProduct(const SparseRows& a) : a_(a) {}
  void gram_times(const VectorXd& v, VectorXd& out) const {
    out.setZero();
    const double* values = a_.valuePtr();
    const auto* columns = a_.innerIndexPtr();
    for (Index i = 0; i < a_.rows(); ++i) {
      const auto [begin, end] = row_range(a_, i);
      double dot = 0.0;
      for (Index k = begin; k < end; ++k) dot += values[k] * v[columns[k]];
      for (Index k = begin; k < end; ++k) out[columns[k]] += values[k] * dot;
    }
  }
  double squared_image_norm(const VectorXd& v) const {
    const double* values = a_.valuePtr();
    const auto* columns = a_.innerIndexPtr();
    double total = 0.0;
    for (Index i = 0; i < a_.rows(); ++i) {
      const auto [begin, end] = row_range(a_, i);
      double dot = 0.0;
      for (Index k = begin; k < end; ++k) dot += values[k] * v[columns[k]];
      total += dot * dot;
    }
    return total;
  }

 private:
  const SparseRows& a_;
};

std::span<double> as_span(VectorXd& v) { return {v.data(), static_cast<std::size_t>(v.size())}; }

// v ← v / ‖v‖. A zero or non-finite norm cannot come from finite rows and finite noise.
void normalise(VectorXd& v) {
  const double norm = v.norm();
  if (!(norm > 0.0 && std::isfinite(norm)))
    throw std::runtime_error("PrivateOja: iterate norm is " + format_value(norm) + "; cannot normalise");
  v /= norm;
}

}  // namespace

double oja_release_sensitivity(privacy::Neighbours relation, double row_norm_bound) {
  // L² under both relations: see the header (‖aaᵀ − bbᵀ‖₂ ≤ max(‖a‖², ‖b‖²) for the replacement).
  (void)relation;
  return squared_bound(row_norm_bound);
}

double paper_oja_sigma(double row_norm_bound, int iterations, const privacy::EpsDelta& target) {
  if (iterations < 1) throw InvalidParameter("PrivateOja: iterations must be >= 1, got " + std::to_string(iterations));
  const double l2 = squared_bound(row_norm_bound);
  if (!(target.delta() > 0.0))
    throw InvalidParameter("PrivateOja: target.delta must be > 0, got " + format_value(target.delta()));
  require_paper_condition(target);
  return l2 * std::sqrt(256.0 * iterations * std::log(2.0 / target.delta())) / target.epsilon();
}

PrivateSubspace PrivateOjaResult::to_subspace() const {
  PrivateSubspace subspace;
  subspace.vectors = vector;  // n × 1
  subspace.values = eigenvalue ? VectorXd::Constant(1, *eigenvalue) : VectorXd();
  subspace.method = "oja";
  return subspace;
}

PrivateOja::PrivateOja(const PrivateOjaOptions& options)
    : options_(validated(options)),
      release_sensitivity_(oja_release_sensitivity(options.privacy.relation, options.privacy.row_norm_bound)),
      sigma_(options.sigma ? *options.sigma  // expert override: the caller accounts for it
             : options.privacy.calibration == privacy::Calibration::paper
                 ? paper_oja_sigma(options.privacy.row_norm_bound, options.iterations, options.privacy.target)
                 : privacy::analytic_gaussian_sigma(joint_sensitivity(), options.privacy.target)) {
  if (!(std::isfinite(sigma_) && sigma_ > 0.0))
    throw InvalidParameter("PrivateOja: calibrated sigma is " + format_value(sigma_) + " for target " +
                           options_.privacy.target.to_string());
  noise_ = options_.privacy.noise.make_source();
}

PrivateOja::~PrivateOja() = default;
PrivateOja::PrivateOja(PrivateOja&&) noexcept = default;
PrivateOja& PrivateOja::operator=(PrivateOja&&) noexcept = default;

int PrivateOja::releases() const noexcept { return options_.iterations + (options_.release_eigenvalue ? 1 : 0); }

double PrivateOja::joint_sensitivity() const noexcept {
  // Adaptive composition of components·releases Gaussians of sensitivity L² and one σ: μ² = Σ (L²/σ)².
  return release_sensitivity_ * std::sqrt(static_cast<double>(options_.components * releases()));
}

double PrivateOja::step_size(Index columns) const {
  if (columns < 1) throw InvalidParameter("PrivateOja: columns must be >= 1, got " + std::to_string(columns));
  return 1.0 / (sigma_ * std::sqrt(static_cast<double>(columns) * options_.iterations));
}

bool PrivateOja::secure() const noexcept { return noise_->is_secure(); }

void PrivateOja::require_single_component() const {
  if (options_.components != 1)
    throw InvalidParameter("PrivateOja::run releases one vector; with components = " +
                           std::to_string(options_.components) + " use run_components");
}

void PrivateOja::charge(const privacy::Budget& budget, const std::string& label) const {
  if (!budget.accounted()) return;
  // An overridden σ carries no (ε, δ) claim of ours: only its ρ is charged (options.sigma).
  if (options_.sigma) budget.accountant()->charge_gaussian(label, joint_sensitivity(), sigma_);
  else budget.accountant()->charge_gaussian(label, joint_sensitivity(), sigma_, options_.privacy.target);
}

template <class Product>
PrivateOjaResult PrivateOja::iterate(Index columns, const Product& product, const StepObserver& observer) {
  PrivateOjaResult result;
  result.sigma = sigma_;
  result.step_size = step_size(columns);
  const double grid = privacy::snap_granularity(sigma_);

  VectorXd current(columns), noisy(columns), noise(columns);
  noise_->fill_gaussian(as_span(current), sigma_);  // v̂_0: data-independent
  normalise(current);                               // unit, so every product has sensitivity L²
  VectorXd previous;
  if (observer) previous.resize(columns);
  for (int step = 1; step <= options_.iterations; ++step) {
    product.gram_times(current, noisy);
    noise_->fill_gaussian(as_span(noise), sigma_);
    noisy += noise;
    privacy::snap_to_grid(as_span(noisy), grid);  // y_τ: the τ-th Gaussian release
    if (observer) previous = current;
    current += result.step_size * noisy;
    normalise(current);
    if (observer) observer(step, previous, noisy, current);
  }
  if (options_.release_eigenvalue) {
    const double released = product.squared_image_norm(current) + sigma_ * noise_->gaussian();
    result.eigenvalue = privacy::snap_to_grid(released, grid);
  }
  result.vector = std::move(current);
  return result;
}

PrivateSubspace PrivateOja::run_components(const Eigen::Ref<const Eigen::MatrixXd>& a,
                                           const privacy::Budget& budget, const std::string& label) {
  check_shape(a.rows(), a.cols());
  if (options_.components > a.cols())
    throw InvalidParameter("PrivateOja::run_components: components " + std::to_string(options_.components) +
                           " exceeds the " + std::to_string(a.cols()) + " columns");
  charge(budget, label);  // once for all k runs, before any data is read
  check_dense_rows(a, options_.privacy.row_norm_bound);
  PrivateSubspace out;
  out.method = "oja";
  out.vectors.resize(a.cols(), 0);
  VectorXd values(options_.components);
  for (Index j = 0; j < options_.components; ++j) {
    const DeflatedDenseProduct product(a, out.vectors);
    PrivateOjaResult r = iterate(a.cols(), product, {});
    // Post-processing of released quantities: v_j = P v̂ / ‖P v̂‖, orthogonal to the earlier ones.
    VectorXd v = product.project(r.vector);
    normalise(v);
    out.vectors.conservativeResize(Eigen::NoChange, j + 1);
    out.vectors.col(j) = v;
    values(j) = r.eigenvalue.value_or(0.0);
  }
  if (options_.release_eigenvalue) out.values = values;
  return out;
}

PrivateOjaResult PrivateOja::run(const Eigen::Ref<const Eigen::MatrixXd>& a, const privacy::Budget& budget,
                                 const std::string& label, const StepObserver& observer) {
  require_single_component();
  check_shape(a.rows(), a.cols());
  charge(budget, label);  // before any data is read
  check_dense_rows(a, options_.privacy.row_norm_bound);
  return iterate(a.cols(), DenseProduct(a), observer);
}

PrivateOjaResult PrivateOja::run(const SparseRows& a, const privacy::Budget& budget, const std::string& label,
                                 const StepObserver& observer) {
  require_single_component();
  check_shape(a.rows(), a.cols());
  charge(budget, label);  // before any data is read
  check_sparse_rows(a, options_.privacy.row_norm_bound);
  return iterate(a.cols(), SparseProduct(a), observer);
}

}  // namespace dpstream::pca
