// The range finder's calibration (pca/range_finder_calibration.hpp): the mixture bound over the χ_K
// law of ‖eᵀΩ‖ and the σ it certifies, the paper's union bound beside it.
#include "dpstream/pca/range_finder_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <boost/math/special_functions/gamma.hpp>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"

namespace dpstream::pca {

using Eigen::Index;
using privacy::Calibration;
using privacy::EpsDelta;

namespace {

// The χ_K law cut into cells for the mixture bound: P(x_{i−1} < X ≤ x_i) for x_i = i·h, i = 1..N,
// and the mass beyond x_N. Weights are differences of the upper tail Q, accurate where δ_G matters
// (the tail), and the masses sum to 1 up to rounding.
struct ChiCells {
  std::vector<double> right_end, mass;
  double beyond = 0;
};

ChiCells chi_cells(Index columns) {
  constexpr int kCells = 2000;
  constexpr double kBeyond = 1e-30;  // far below any δ worth configuring; counted as δ_G = 1 anyway
  const double half_k = 0.5 * static_cast<double>(columns);
  const double x_max = std::sqrt(2.0 * boost::math::gamma_q_inv(half_k, kBeyond));
  ChiCells cells;
  cells.right_end.reserve(kCells);
  cells.mass.reserve(kCells);
  double upper_prev = 1.0;
  for (int i = 1; i <= kCells; ++i) {
    const double x = x_max * i / kCells;
    const double upper = boost::math::gamma_q(half_k, 0.5 * x * x);  // P(X > x), X ~ χ_K
    cells.right_end.push_back(x);
    cells.mass.push_back(std::max(0.0, upper_prev - upper));
    upper_prev = upper;
  }
  cells.beyond = upper_prev;
  return cells;
}

// Σ_i mass_i·δ_G(ε; Δ·x_i/σ) + P(X > x_N): an upper bound on E[δ_G(ε; ΔX/σ)] since δ_G increases
// with the shift and δ_G ≤ 1.
double mixture_delta(const ChiCells& cells, double row_change, double sigma, double epsilon) {
  double sum = cells.beyond;
  for (std::size_t i = 0; i < cells.mass.size(); ++i) {
    if (cells.mass[i] == 0.0) continue;
    sum += cells.mass[i] * privacy::analytic_gaussian_delta(row_change * cells.right_end[i], sigma, epsilon);
  }
  return std::min(sum, 1.0);
}

double union_bound(Index columns, double row_change, double delta) {
  const double k = static_cast<double>(columns);
  return row_change * std::sqrt(2.0 * k * std::log(4.0 * k / delta));
}

}  // namespace

double range_finder_certified_delta(Index columns, double row_change, double sigma, double epsilon) {
  if (columns < 1) throw InvalidParameter("range finder: columns must be >= 1, got " + std::to_string(columns));
  base::require_positive("row_change", row_change);
  base::require_positive("sigma", sigma);
  base::require_nonnegative("epsilon", epsilon);
  return mixture_delta(chi_cells(columns), row_change, sigma, epsilon);
}

double range_finder_sigma_two_part(Index columns, double row_change, const EpsDelta& target) {
  base::require_open_unit("range finder: delta", target.delta());
  base::require_positive("row_change", row_change);
  return union_bound(columns, row_change, target.delta()) * std::sqrt(2.0 * std::log(2.5 / target.delta())) /
         target.epsilon();
}

RangeFinderCalibration range_finder_calibration(Index columns, double row_change, const EpsDelta& target,
                                                Calibration calibration) {
  if (columns < 1) throw InvalidParameter("range finder: columns must be >= 1, got " + std::to_string(columns));
  base::require_positive("row_change", row_change);
  base::require_open_unit("range finder: delta", target.delta());
  const double eps = target.epsilon(), delta = target.delta();
  const ChiCells cells = chi_cells(columns);
  RangeFinderCalibration out;
  out.paper_bound = union_bound(columns, row_change, delta);
  if (calibration == Calibration::paper) {
    out.sigma = 2.0 * out.paper_bound / eps;  // Fig 2: ρ = 2ε⁻¹√(2K log(4K/δ)), times Δ
  } else {
    // Smallest σ the mixture bound certifies: it decreases in σ, so bracket by doubling or halving,
    // then bisect in log σ to a relative 1e-10 and keep the certified end.
    double hi = row_change, lo;
    if (mixture_delta(cells, row_change, hi, eps) > delta) {
      while (mixture_delta(cells, row_change, hi, eps) > delta) hi *= 2.0;
      lo = hi / 2.0;
    } else {
      lo = hi / 2.0;
      while (mixture_delta(cells, row_change, lo, eps) <= delta) lo /= 2.0;
      hi = 2.0 * lo;
    }
    while (hi - lo > 1e-10 * hi) {
      const double mid = std::sqrt(lo * hi);
      (mixture_delta(cells, row_change, mid, eps) > delta ? lo : hi) = mid;
    }
    out.sigma = hi;
  }
  out.paper_conditional_delta = privacy::analytic_gaussian_delta(out.paper_bound, out.sigma, eps);
  out.certified_delta = mixture_delta(cells, row_change, out.sigma, eps);
  return out;
}

}  // namespace dpstream::pca
