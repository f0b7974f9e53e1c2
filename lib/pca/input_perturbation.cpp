#include "dpstream/pca/input_perturbation.hpp"

#include <algorithm>
#include <span>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;
using base::format_value;

namespace {

const InputPerturbationOptions& validated(const InputPerturbationOptions& options) {
  if (options.k < 1) throw InvalidParameter("InputPerturbation: k must be >= 1, got " + std::to_string(options.k));
  base::require_open_unit("InputPerturbation: delta", options.privacy.target.delta());
  return options;
}

double calibrated_sigma(double sensitivity, const InputPerturbationOptions& options) {
  if (options.privacy.calibration == privacy::Calibration::tight)
    return privacy::analytic_gaussian_sigma(sensitivity, options.privacy.target);
  // The classical formula without paper_gaussian_sigma's ε < 1 refusal, since the RR comparisons (tests,
  // reference runs) are at ε = 1: its guarantee is checked on the exact profile instead.
  const double sigma = sensitivity * privacy::paper_gaussian_multiplier(options.privacy.target);
  const double exact = privacy::analytic_gaussian_delta(sensitivity, sigma, options.privacy.target.epsilon());
  if (!(exact <= options.privacy.target.delta()))
    throw InvalidParameter("InputPerturbation: calibration paper: the classical sigma " + format_value(sigma) +
                           " is not " + options.privacy.target.to_string() + "-DP (exact delta " + format_value(exact) +
                           "); use calibration tight");
  return sigma;
}

}  // namespace

InputPerturbation::InputPerturbation(const InputPerturbationOptions& options)
    : options_(validated(options)),
      sensitivity_(spec_row_change("InputPerturbation", options.privacy, options.relation)),
      sigma_(calibrated_sigma(sensitivity_, options)) {}

MatrixXd InputPerturbation::perturb(const Eigen::Ref<const MatrixXd>& a, privacy::NoiseSource& noise,
                                    const privacy::Budget& budget, const std::string& label) const {
  check_rows(a, options_.relation, options_.privacy.row_norm_bound);
  if (budget.accounted()) budget.accountant()->charge_gaussian(label, sensitivity_, sigma_, options_.privacy.target);
  MatrixXd released(a.rows(), a.cols());
  noise.fill_gaussian(std::span<double>(released.data(), static_cast<std::size_t>(released.size())), sigma_);
  released += a;
  const double grid = privacy::snap_granularity(sigma_);
  privacy::snap_to_grid(std::span<double>(released.data(), static_cast<std::size_t>(released.size())), grid);
  return released;
}

InputPerturbationResult InputPerturbation::release(const Eigen::Ref<const MatrixXd>& a, privacy::NoiseSource& noise,
                                                   const privacy::Budget& budget,
                                                   const std::string& label) const {
  const Index smaller = std::min(a.rows(), a.cols());
  if (options_.k > smaller)
    throw InvalidParameter("InputPerturbation: k = " + std::to_string(options_.k) + " must be <= min(m, n) = " +
                           std::to_string(smaller));
  InputPerturbationResult out;
  out.approximation = top_k_svd(perturb(a, noise, budget, label), options_.k);
  out.subspace = to_private_subspace(out.approximation, "rr");
  return out;
}

}  // namespace dpstream::pca
