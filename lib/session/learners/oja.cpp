// "oja": streaming private Oja (DP-PCA, Jain, Kothari, Thakurta 2012 / pca/streaming_private_oja.hpp),
// one step a minibatch of OnlinePcaOptions::minibatch rows.
#include <cstdio>

#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/session/row_learner.hpp"

namespace dpstream::session {

namespace {

class OjaLearner final : public RowLearner {
 public:
  explicit OjaLearner(const RowLearnerSetup& s) : oja_(s.d, options(s), s.budget) {}
  void update(const Eigen::Ref<const Eigen::MatrixXd>& rows) override { oja_.update_block(rows); }
  void finish(const eval::RegretMeter&) override { oja_.flush(); }
  const Eigen::MatrixXd& basis() const override { return oja_.basis(); }
  std::string describe(const std::string& share) const override {
    char line[320];
    std::snprintf(line, sizeof line,
                  "streaming private Oja (DP-PCA), minibatches of %llu rows, %llu steps; %s, μ = %.4g, "
                  "σ per unit sensitivity %.4g",
                  (unsigned long long)oja_.options().batch_rows, (unsigned long long)oja_.steps(), share.c_str(),
                  oja_.mu(), oja_.unit_sigma());
    return line;
  }

 private:
  static pca::StreamingPrivateOjaOptions options(const RowLearnerSetup& s) {
    pca::StreamingPrivateOjaOptions o;
    o.k = s.options.k;
    o.batch_rows = s.options.minibatch;
    // The replay scores an estimate every --minibatch rows: fixed minibatches with the 1/t Oja step
    // (the power step and the geometric plan are dpstream-pca's one-pass defaults).
    o.batch_growth = 1.0;
    o.step_rule = pca::StepRule::oja;
    o.oversampling = 0;
    // The fixed clip C = L²: the derived clip share (streaming_oja_plan.hpp) is derived and measured for
    // the plan's minibatches (the first σ₁√d rows or more); --minibatch may be far smaller, and then the
    // histogram's noise would swamp its counts.
    o.scale_share = 0.0;
    o.privacy.row_norm_bound = s.options.stream.privacy.row_norm_bound;
    o.privacy.target = s.share;
    o.privacy.calibration = s.options.stream.privacy.calibration;
    o.privacy.noise.seed = s.seed;
    return o;
  }
  pca::StreamingPrivateOja oja_;
};

}  // namespace

extern const RowLearnerKind oja_learner;  // the table's entry (row_learner.hpp)
const RowLearnerKind oja_learner{.name = "oja",
                                 .label = "streaming private Oja (DP-PCA)",
                                 .summary = "streaming private Oja, DP-PCA",
                                 .needs_length = false,
                                 .memory_matrices = 0,
                                 .make = make_learner<OjaLearner>};

}  // namespace dpstream::session
