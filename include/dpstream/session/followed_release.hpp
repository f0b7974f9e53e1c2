// What the private follow-the-perturbed-leader learner of an online-PCA session follows at each
// release of the continual covariance: the release itself, the stationary estimate built from the
// releases (--mechanism separable), or either read doubly nonnegative (rows without negative
// entries). All three are post-processing of the releases; this header holds the constants of the
// reading and the noise floor of what is followed, which every front end shares.
#pragma once

#include <optional>

#include <Eigen/Core>

#include "dpstream/stream/continual_sum.hpp"

namespace dpstream::session {

// nonnegative: rounds of (PSD, nonnegative) projection at a full release (doubly_nonnegative.hpp).
// One: on Fashion-MNIST (separable, GOE, seed 1) 1, 2 and 4 rounds gave regret/OPT 5.022%, 5.025%, 5.025%.
constexpr int kNonnegativeRounds = 1;
// nonnegative: the reader's refresh ratio α (pca::DoublyNonnegativeReader): a full PSD solve once
// the releases since the last one exceed α × the releases at it; the others reuse its correction.
// 1/3 kept regret/OPT within 0.1 point of the exact reading on every seed measured, at under 1.5×
// the plain run's wall time; 1/4 went over that (measurements: docs/tools.md, --nonnegative).
constexpr double kNonnegativeRefreshRatio = 1.0 / 3.0;

// ‖E‖₂ of the noise in what the private learner follows for release r (pca::noise_spectral_norm: the
// mechanism's parameters only, for the noise floor of its refresh): the release's; under separable
// the stationary estimate's, whose diagonal entries have variance stationary_variance
// (StationaryEstimate::prefix_variance; off the diagonal, the release's ratio of the two). Under
// nonnegative 0, no floor: the reading is a projection onto a convex set holding C, which bounds
// its error by the noise's in Frobenius norm but not in spectral norm, the one the floor needs.
double followed_noise_norm(Eigen::Index d, const stream::ContinualCovariance::Release& r,
                           std::optional<double> stationary_variance, bool nonnegative);

}  // namespace dpstream::session
