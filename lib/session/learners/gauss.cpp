// "gauss": Analyze Gauss (Dwork, Talwar, Thakurta, Zhang 2014 / pca/gaussian_pca.hpp), offline: one
// release after the last row, from the meter's exact covariance of every guarded row, so it has no
// online regret, only the regret of its fixed subspace in hindsight.
#include <cstdio>

#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/stream/accumulators.hpp"
#include "dpstream/session/row_learner.hpp"

namespace dpstream::session {

namespace {

class GaussLearner final : public RowLearner {
 public:
  explicit GaussLearner(const RowLearnerSetup& s)
      : d_(s.d), budget_(s.budget), gauss_(s.d, options(s)) {}  // its options checked now, before any noise
  bool online() const override { return false; }
  void finish(const eval::RegretMeter& meter) override {
    // The meter's exact Σ aaᵀ of every guarded row (each ‖a‖ ≤ L: RowGuard checked them).
    stream::CovarianceAccumulator exact(d_);
    exact.unpack(meter.state().exact_sum, meter.rows());
    basis_ = gauss_.release(exact, budget_).subspace.vectors;
  }
  const Eigen::MatrixXd& basis() const override { return basis_; }
  std::string describe(const std::string& share) const override {
    char line[320];
    std::snprintf(line, sizeof line,
                  "Analyze Gauss, offline, one release of the exact covariance of all rows; %s, σ %.4g",
                  share.c_str(), gauss_.sigma());
    return line;
  }

 private:
  static pca::GaussianPcaOptions options(const RowLearnerSetup& s) {
    pca::GaussianPcaOptions o;
    o.k = s.options.k;
    o.mechanism.privacy.target = s.share;
    o.mechanism.privacy.calibration = s.options.stream.privacy.calibration;
    o.mechanism.privacy.row_norm_bound = s.options.stream.privacy.row_norm_bound;
    o.mechanism.shape = s.options.stream.shape;
    o.mechanism.privacy.noise.seed = s.seed;
    return o;
  }
  Eigen::Index d_;
  privacy::Budget budget_;
  pca::GaussianPca gauss_;
  Eigen::MatrixXd basis_;
};

}  // namespace

extern const RowLearnerKind gauss_learner;  // the table's entry (row_learner.hpp)
const RowLearnerKind gauss_learner{.name = "gauss",
                                   .label = "Analyze Gauss (offline)",
                                   .summary = "Analyze Gauss, offline on all rows: hindsight only",
                                   .needs_length = false,
                                   .memory_matrices = 3,  // Ĉ and its eigensolve at the release
                                   .make = make_learner<GaussLearner>};

}  // namespace dpstream::session
