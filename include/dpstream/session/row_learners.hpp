// The private learners of an online-PCA session beside FPL (OnlinePcaOptions::learners): those fed
// the guarded rows themselves rather than the continual covariance release, and their share of the
// budget.
//
//   guarded block b ─┬─▶ ContinualCovariance ─▶ FPL       (online_pca_session.hpp, if "fpl")
//                    ├─▶ StreamingPrivateOja   (scored, then updated)   "oja"
//                    ├─▶ StreamingPrivatePca   (scored, then updated)   "power"
//                    └─▶ RegretMeter's exact Σ ─(end)─▶ GaussianPca      "gauss" (offline)
//
// Budget: the run's one accountant holds the target (ε, δ); each of the n private learners is
// calibrated to gdp_share_target(target, n) (calibration.hpp): the Gaussian DP μ of the target split
// equally in μ², μ_s = μ/√n with μ = gdp_mu_for_budget(target), expressed as the (ε_s, δ_s) whose
// analytic Gaussian σ is at least Δ/μ_s. Every learner here is one (adaptively composed) Gaussian
// mechanism charged with charge_gaussian, so the accountant's GDP bound composes the n charges to
// √(Σ μ_s²) ≤ μ, i.e. within the target — exactly, where a zCDP split (ρ/n each, converted by CKS)
// would leave ~7% of the noise's worth unspent (composed μ 0.2207 against 0.2367 at (1, 1e-6)).
// One learner alone gets the whole target (the run as before).
//
// Scoring: on the evaluation thread, block b is scored with each learner's estimate from the rows
// before block b (its gains go to the meter before observe(b)), then fed to it. "power" scores zero
// until its first refresh (it has no estimate before). "gauss" is offline: its one release is made
// after the last row, from all rows, so it has no online regret; its figure is the regret of that
// fixed subspace in hindsight, OPT − tr(V̂ᵀCV̂), over OPT (= 1 − its captured ratio).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/eval/regret.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/session/online_pca_options.hpp"
#include "dpstream/session/row_learner.hpp"

namespace dpstream::session {

// A learner's figures at the end of the run.
struct LearnerFigures {
  std::string name;          // "fpl", "oja", "power", "gauss"
  double regret_over_opt;    // online (gauss: of its fixed subspace in hindsight)
  double captured_ratio;     // tr(V̂ᵀCV̂) / Σ top-k eigenvalues of C, C the exact Σ aaᵀ of all rows
  double epsilon_share;      // the ε of its share (at δ_share)
  double delta_share;
};

class RowLearners {
 public:
  // Builds (and charges `accountant` for) each row-fed learner listed in o.learners, its options
  // checked by the library before any noise (InvalidParameter); `meter` gets their names from
  // meter_names() when it is built.
  RowLearners(Eigen::Index d, const OnlinePcaOptions& o, const privacy::Budget& budget);
  ~RowLearners();

  // The meter's names of the online learners here, in the table's order (row_learner_kinds()).
  std::vector<std::string> meter_names() const;
  // Evaluation thread: scores block `rows` with each learner's current estimate into `meter`, then
  // feeds it to them.
  void step(const Eigen::Ref<const Eigen::MatrixXd>& rows, eval::RegretMeter& meter);
  // After the last row: each learner's finish() (oja's partial minibatch, gauss's one release,
  // charged to the accountant now, within its share).
  void finish(const eval::RegretMeter& meter);
  // Each learner's figures, in the table's order (after finish()).
  std::vector<LearnerFigures> figures(const eval::RegretMeter& meter) const;
  // One line per learner for the summary (the method, its share and noise).
  std::string describe() const;

 private:
  struct Entry {
    std::string name;
    std::unique_ptr<RowLearner> learner;
  };
  Eigen::Index k_;
  privacy::EpsDelta share_;
  std::vector<Entry> learners_;
};

}  // namespace dpstream::session
