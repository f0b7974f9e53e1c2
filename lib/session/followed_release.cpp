#include "dpstream/session/followed_release.hpp"

#include "dpstream/pca/fpl_online_pca.hpp"

namespace dpstream::session {

double followed_noise_norm(Eigen::Index d, const stream::ContinualCovariance::Release& r,
                           std::optional<double> stationary_variance, bool nonnegative) {
  if (nonnegative) return 0;
  double off_diagonal = r.off_diagonal_noise_variance;
  if (stationary_variance) {
    const double ratio = r.noise_variance > 0 ? r.off_diagonal_noise_variance / r.noise_variance : 1.0;
    off_diagonal = *stationary_variance * ratio;
  }
  return pca::noise_spectral_norm(d, off_diagonal);
}


}  // namespace dpstream::session
