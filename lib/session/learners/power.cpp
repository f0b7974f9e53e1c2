// "power": the streaming noisy power method (pca/streaming_private_pca.hpp), a refresh every
// OnlinePcaOptions::minibatch rows, calibrated for the stream's length (known_rows). It scores zero
// until its first refresh (it has no estimate before).
#include <cstdio>

#include "dpstream/pca/streaming_private_pca.hpp"
#include "dpstream/session/row_learner.hpp"

namespace dpstream::session {

namespace {

class PowerLearner final : public RowLearner {
 public:
  explicit PowerLearner(const RowLearnerSetup& s)
      : k_(s.options.k), minibatch_(s.options.minibatch), power_(s.d, options(s), s.budget) {}
  Eigen::VectorXd gains(const Eigen::Ref<const Eigen::MatrixXd>& rows) const override {
    if (basis().cols() != k_) return Eigen::VectorXd::Zero(rows.rows());  // no estimate yet
    return RowLearner::gains(rows);
  }
  void update(const Eigen::Ref<const Eigen::MatrixXd>& rows) override { power_.update_block(rows); }
  const Eigen::MatrixXd& basis() const override { return power_.current().vectors; }
  std::string describe(const std::string& share) const override {
    char line[320];
    std::snprintf(line, sizeof line,
                  "streaming noisy power method, a refresh every %llu rows, %llu of %llu refreshes; %s, "
                  "μ = %.4g, σ %.4g",
                  (unsigned long long)minibatch_, (unsigned long long)power_.refreshes(),
                  (unsigned long long)power_.planned_refreshes(), share.c_str(), power_.mu(), power_.sigma());
    return line;
  }

 private:
  static pca::StreamingPrivatePcaOptions options(const RowLearnerSetup& s) {
    pca::StreamingPrivatePcaOptions o;
    o.horizon_rows = s.options.known_rows.value_or(0);
    o.refresh_every = s.options.minibatch;
    o.refresh.k = s.options.k;
    o.refresh.release_values = false;  // only the subspace is used: no round spent on the values
    o.refresh.privacy.target = s.share;
    o.refresh.privacy.calibration = s.options.stream.privacy.calibration;
    o.refresh.privacy.row_norm_bound = s.options.stream.privacy.row_norm_bound;
    o.refresh.privacy.noise.seed = s.seed;
    return o;
  }
  Eigen::Index k_;
  std::uint64_t minibatch_;
  pca::StreamingPrivatePca power_;
};

}  // namespace

extern const RowLearnerKind power_learner;  // the table's entry (row_learner.hpp)
const RowLearnerKind power_learner{.name = "power",
                                   .label = "streaming noisy power method",
                                   .summary = "streaming noisy power method; needs the stream's length",
                                   .needs_length = true,
                                   .memory_matrices = 2,  // its own exact Σ and workspace
                                   .make = make_learner<PowerLearner>};

}  // namespace dpstream::session
