#include "dpstream/pca/subspace.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/text.hpp"
#include "krylov_refresh.hpp"
#include "matrix_checks.hpp"
#include "symmetric_input.hpp"
#include "linalg/matrix_message.hpp"

namespace dpstream::pca {

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using base::format_value;
using detail::check_symmetric;
using detail::expand_lower_in_place;
using detail::expand_upper;
using detail::expand_upper_single;
using detail::MatrixSummary;
using detail::DoubleMatrix;
using detail::float_copy;
using detail::full_top;
using detail::krylov_refresh;

// Orthonormality tolerance of a basis: max|VᵀV − I| (see the header).
constexpr double kOrthonormalityTolerance = 1e-8;

void check_k(const char* fn, Index k, Index d) {
  base::require_rank(fn, k, d, " (the dimension)");
}

void check_finite(const char* fn, const char* name, const Eigen::Ref<const MatrixXd>& v) {
  for (Index j = 0; j < v.cols(); ++j)
    for (Index i = 0; i < v.rows(); ++i)
      if (!std::isfinite(v(i, j)))
        throw InvalidParameter(std::string(fn) + ": " + name + "(" + std::to_string(i) + "," + std::to_string(j) +
                               ") is not finite, got " + format_value(v(i, j)));
}

// d × m with 1 ≤ m ≤ d, finite, orthonormal columns within kOrthonormalityTolerance.
void check_basis(const char* fn, const char* name, const Eigen::Ref<const MatrixXd>& v, Index d) {
  if (v.rows() != d || v.cols() < 1 || v.cols() > d)
    throw InvalidParameter(std::string(fn) + ": " + name + " must be " + std::to_string(d) +
                           " x m with 1 <= m <= " + std::to_string(d) + ", got " + detail::dims(v.rows(), v.cols()));
  check_finite(fn, name, v);
  const double err =
      (v.transpose() * v - MatrixXd::Identity(v.cols(), v.cols())).cwiseAbs().maxCoeff();
  if (!(err <= kOrthonormalityTolerance))
    throw InvalidParameter(std::string(fn) + ": " + name + " must have orthonormal columns: max|" + name +
                           "^T " + name + " - I| = " + format_value(err) + " exceeds 1e-8");
}

void check_options(const RefreshOptions& o) {
  if (o.oversample < 0)
    throw InvalidParameter("refresh options: oversample must be >= 0, got " + std::to_string(o.oversample));
  if (o.max_blocks < 2)
    throw InvalidParameter("refresh options: max_blocks must be >= 2, got " + std::to_string(o.max_blocks));
  if (o.max_iterations < 1)
    throw InvalidParameter("refresh options: max_iterations must be >= 1, got " +
                           std::to_string(o.max_iterations));
  if (!(o.tolerance > 0 && o.tolerance < 1))
    throw InvalidParameter("refresh options: tolerance must be in (0, 1), got " + format_value(o.tolerance));
  if (!(o.variance_tolerance >= 0 && o.variance_tolerance < 1))
    throw InvalidParameter("refresh options: variance_tolerance must be in [0, 1), got " +
                           format_value(o.variance_tolerance));
}

// Validation of a start basis: d × m, m ≥ 1, finite (any quality: it is orthonormalised).
void check_start(const char* fn, const Eigen::Ref<const MatrixXd>& start, Index d) {
  if (start.rows() != d || start.cols() < 1)
    throw InvalidParameter(std::string(fn) + ": start basis must be " + std::to_string(d) +
                           " x m with m >= 1, got " + detail::dims(start.rows(), start.cols()));
  check_finite(fn, "start", start);
}

}  // namespace

void require_symmetric(const char* where, const Eigen::Ref<const MatrixXd>& c) { check_symmetric(where, c); }

TopEigen top_k_eigen(const Eigen::Ref<const MatrixXd>& c, Index k) {
  check_symmetric("top_k_eigen", c);
  check_k("top_k_eigen", k, c.rows());
  return full_top(c, k);
}

double sum_top_k_eigenvalues(const Eigen::Ref<const MatrixXd>& c, Index k) {
  check_symmetric("sum_top_k_eigenvalues", c);
  check_k("sum_top_k_eigenvalues", k, c.rows());
  const linalg::SymmetricEigenSolver es(c, Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success)
    throw std::runtime_error("sum_top_k_eigenvalues: SelfAdjointEigenSolver did not converge");
  return es.eigenvalues().tail(k).sum();
}

double captured_variance(const Eigen::Ref<const MatrixXd>& c, const Eigen::Ref<const MatrixXd>& v) {
  check_symmetric("captured_variance", c);
  check_basis("captured_variance", "V", v, c.rows());
  const MatrixXd cv = c * v;
  return (v.array() * cv.array()).sum();  // tr(VᵀCV) without the k × k product
}

Eigen::VectorXd principal_angles(const Eigen::Ref<const MatrixXd>& v, const Eigen::Ref<const MatrixXd>& w) {
  check_basis("principal_angles", "V", v, v.rows());
  check_basis("principal_angles", "W", w, v.rows());
  if (w.cols() != v.cols())
    throw InvalidParameter("principal_angles: V and W must have the same number of columns, got " +
                           std::to_string(v.cols()) + " and " + std::to_string(w.cols()));
  const Index k = v.cols();
  const MatrixXd m = v.transpose() * w;
  // Cosines, descending → angles ascending; sines of W − V·VᵀW, descending → reversed to ascending.
  const VectorXd cosines = linalg::singular_values(m);
  const MatrixXd residual = w - v * m;
  const VectorXd sines = linalg::singular_values(residual).reverse();
  VectorXd angles(k);
  for (Index i = 0; i < k; ++i) {
    // Each formula where it is well conditioned: arcsin below π/4, arccos above (Knyazev & Argentati).
    const double s = std::min(1.0, sines(i));
    angles(i) = s < std::sqrt(0.5) ? std::asin(s) : std::acos(std::min(1.0, cosines(i)));
  }
  std::sort(angles.begin(), angles.end());  // the two formulas can disagree in the last bits at π/4
  return angles;
}

const char* to_string(ProjectorNorm norm) noexcept {
  return norm == ProjectorNorm::spectral ? "spectral" : "frobenius";
}

ProjectorNorm parse_projector_norm(const std::string& text) {
  for (const ProjectorNorm norm : {ProjectorNorm::spectral, ProjectorNorm::frobenius})
    if (text == to_string(norm)) return norm;
  throw InvalidParameter("projector norm '" + base::printable(text) + "': expected spectral or frobenius");
}

double projector_distance(const Eigen::Ref<const MatrixXd>& v, const Eigen::Ref<const MatrixXd>& w,
                          ProjectorNorm norm) {
  check_basis("projector_distance", "V", v, v.rows());
  check_basis("projector_distance", "W", w, v.rows());
  if (v.cols() != w.cols()) {
    if (norm == ProjectorNorm::spectral) return 1.0;
    const double cross = (v.transpose() * w).squaredNorm();
    return std::sqrt(std::max(0.0, static_cast<double>(v.cols() + w.cols()) - 2.0 * cross));
  }
  // The nonzero eigenvalues of VVᵀ − WWᵀ are ±sin θᵢ, each once (Stewart & Sun, Thm I.5.5).
  const VectorXd sines = principal_angles(v, w).array().sin();
  return norm == ProjectorNorm::spectral ? sines.maxCoeff() : std::sqrt(2.0) * sines.norm();
}

TopEigen refresh_top_k(const Eigen::Ref<const MatrixXd>& c, const Eigen::Ref<const MatrixXd>& start, Index k,
                       const RefreshOptions& options, RefreshStats* stats) {
  check_options(options);
  KrylovWorkspace workspace;
  const MatrixSummary summary = check_symmetric("refresh_top_k", c, float_copy(options, workspace, false));
  check_k("refresh_top_k", k, c.rows());
  check_start("refresh_top_k", start, c.rows());
  RefreshStats local;
  MatrixXd block;
  return krylov_refresh(DoubleMatrix(c), summary.frobenius, start, k, options, stats != nullptr ? *stats : local, block, workspace);
}

SubspaceTracker::SubspaceTracker(Index dimension, Index k, const RefreshOptions& options)
    : dimension_(dimension), k_(k), options_(options), workspace_(std::make_unique<KrylovWorkspace>()) {
  if (dimension < 1)
    throw InvalidParameter("SubspaceTracker: dimension must be >= 1, got " + std::to_string(dimension));
  check_k("SubspaceTracker", k, dimension);
  check_options(options);
}

SubspaceTracker::~SubspaceTracker() = default;
SubspaceTracker::SubspaceTracker(SubspaceTracker&&) noexcept = default;
SubspaceTracker& SubspaceTracker::operator=(SubspaceTracker&&) noexcept = default;
SubspaceTracker::SubspaceTracker(const SubspaceTracker& other)
    : dimension_(other.dimension_),
      k_(other.k_),
      options_(other.options_),
      block_(other.block_),
      current_(other.current_),
      stats_(other.stats_),
      workspace_(std::make_unique<KrylovWorkspace>()) {}
SubspaceTracker& SubspaceTracker::operator=(const SubspaceTracker& other) {
  if (this != &other) {
    SubspaceTracker copy(other);
    *this = std::move(copy);
  }
  return *this;
}

const TopEigen& SubspaceTracker::refresh(const Eigen::Ref<const MatrixXd>& c, double residual_floor) {
  check_refresh_arguments("SubspaceTracker::refresh", c, residual_floor);
  const MatrixSummary summary =
      check_symmetric("SubspaceTracker::refresh", c, float_copy(options_, *workspace_, cold_full_solve()));
  return refresh_checked(c, Held::full, summary.frobenius, residual_floor);
}

const TopEigen& SubspaceTracker::refresh_upper(const Eigen::Ref<const MatrixXd>& upper, double residual_floor) {
  const char* fn = "SubspaceTracker::refresh_upper";
  check_refresh_arguments(fn, upper, residual_floor);
  if (Eigen::MatrixXf* single = float_copy(options_, *workspace_, cold_full_solve())) {
    // The products read the float copy; the certificate reads `upper` where it is. Why not the
    // double copy too: writing it was a third of the pass's traffic (d² doubles; 32 MB at d = 2048).
    const MatrixSummary summary = expand_upper_single(fn, upper, *single);
    return refresh_checked(upper, Held::upper, summary.frobenius, residual_floor);
  }
  MatrixXd& full = workspace_->c_full;
  const MatrixSummary summary = expand_upper(fn, upper, full, nullptr);
  return refresh_checked(full, Held::full, summary.frobenius, residual_floor);
}

const TopEigen& SubspaceTracker::refresh_lower(Eigen::Ref<MatrixXd> c, double residual_floor) {
  const char* fn = "SubspaceTracker::refresh_lower";
  check_refresh_arguments(fn, c, residual_floor);
  const MatrixSummary summary =
      expand_lower_in_place(fn, c, float_copy(options_, *workspace_, cold_full_solve()));
  return refresh_checked(c, Held::full, summary.frobenius, residual_floor);
}

bool SubspaceTracker::cold_full_solve() const noexcept {
  return !has_basis() && dimension_ <= options_.cold_full_solve_max_dimension;
}

void SubspaceTracker::check_refresh_arguments(const char* fn, const Eigen::Ref<const MatrixXd>& c,
                                              double residual_floor) const {
  if (!(residual_floor >= 0) || !std::isfinite(residual_floor))
    throw InvalidParameter(std::string(fn) + ": residual_floor must be finite and >= 0, got " +
                           format_value(residual_floor));
  if (c.rows() != dimension_ || c.cols() != dimension_)
    throw InvalidParameter(std::string(fn) + ": matrix must be " + detail::dims(dimension_, dimension_) + ", got " +
                           detail::dims(c.rows(), c.cols()));
}

// c validated (check_symmetric or an expansion, which also left its float copy in the workspace when
// the refresh runs in single precision); `frobenius` = ‖c‖_F. Held::upper: c is the upper triangle
// of the matrix (refresh_upper in single precision).
const TopEigen& SubspaceTracker::refresh_checked(const Eigen::Ref<const MatrixXd>& c, Held held, double frobenius,
                                                 double residual_floor) {
  const DoubleMatrix matrix = held == Held::upper ? DoubleMatrix(c, workspace_->c_full) : DoubleMatrix(c);
  if (cold_full_solve()) {
    // Cold start: the exact answer, once; later refreshes start from it.
    ++stats_.refreshes;
    ++stats_.full_solves;
    stats_.last_iterations = 0;
    stats_.last_residual = 0;
    const TopEigen all = matrix.top(std::min(dimension_, k_ + options_.oversample));
    block_ = all.vectors;
    current_ = TopEigen{all.vectors.leftCols(k_), all.values.head(k_)};
    return current_;
  }
  // A cold start at large d is the iteration from the first coordinate axis (the rest of its block
  // is pseudo-random), not an O(d³) full solve (RefreshOptions::cold_full_solve_max_dimension).
  const MatrixXd axis = has_basis() ? MatrixXd() : MatrixXd::Identity(dimension_, 1);
  MatrixXd next;
  current_ = krylov_refresh(matrix, frobenius, has_basis() ? Eigen::Ref<const MatrixXd>(block_) : Eigen::Ref<const MatrixXd>(axis),
                            k_, options_, stats_, next, *workspace_, residual_floor);
  block_ = std::move(next);
  return current_;
}

void SubspaceTracker::set_start(const Eigen::Ref<const MatrixXd>& basis) {
  check_start("SubspaceTracker::set_start", basis, dimension_);
  block_ = basis;
}

void SubspaceTracker::restore(const State& state) {
  if (state.block.size() > 0) check_start("SubspaceTracker::restore", state.block, dimension_);
  const TopEigen& c = state.current;
  if (c.vectors.size() > 0 || c.values.size() > 0) {
    if (c.vectors.rows() != dimension_ || c.vectors.cols() != k_ || c.values.size() != k_)
      throw InvalidParameter("SubspaceTracker::restore: the last result must be " + detail::dims(dimension_, k_) +
                             " with " + std::to_string(k_) + " values, got " + detail::dims(c.vectors.rows(), c.vectors.cols()) +
                             " with " + std::to_string(c.values.size()));
    check_finite("SubspaceTracker::restore", "last result", c.vectors);
  }
  block_ = state.block;
  current_ = state.current;
  stats_ = state.stats;
}

void SubspaceTracker::reset() {
  block_.resize(0, 0);
  current_ = TopEigen{};
}

void SubspaceTracker::State::save(proto::SubspaceTracker& out) const {
  const State& s = *this;
  linalg::save(s.block, *out.mutable_block());
  linalg::save(s.current.vectors, *out.mutable_current_vectors());
  out.mutable_current_values()->Add(s.current.values.data(), s.current.values.data() + s.current.values.size());
  auto& st = *out.mutable_stats();
  st.set_refreshes(s.stats.refreshes);
  st.set_iterations(s.stats.iterations);
  st.set_matvecs(s.stats.matvecs);
  st.set_restarts(s.stats.restarts);
  st.set_fallbacks(s.stats.fallbacks);
  st.set_full_solves(s.stats.full_solves);
  st.set_last_iterations(s.stats.last_iterations);
  st.set_last_residual(s.stats.last_residual);
}

SubspaceTracker::State SubspaceTracker::State::load(const proto::SubspaceTracker& m, const std::string& field) {
  State s;
  s.block = linalg::load(m.block(), field + ".block");
  s.current.vectors = linalg::load(m.current_vectors(), field + ".current_vectors");
  s.current.values = linalg::values_of(m.current_values());
  const auto& st = m.stats();
  s.stats.refreshes = st.refreshes();
  s.stats.iterations = st.iterations();
  s.stats.matvecs = st.matvecs();
  s.stats.restarts = st.restarts();
  s.stats.fallbacks = st.fallbacks();
  s.stats.full_solves = st.full_solves();
  s.stats.last_iterations = st.last_iterations();
  s.stats.last_residual = st.last_residual();
  return s;
}

}  // namespace dpstream::pca
