// One private learner of an online-PCA session fed the guarded rows themselves (row_learners.hpp
// runs them side by side): what a learner must do to be one, and the table of those the session
// knows. Adding a learner: one file in lib/session/learners/ that defines its class and its maker,
// and its line in row_learner_kinds() (row_learner_kinds.cpp); the front ends list the name.
//
// A learner is built with its share of the budget (RowLearnerSetup::share) and its own noise seed,
// and must charge every release to the session's accountant within that share (Gaussian
// mechanisms only: the shares compose as row_learners.hpp says). Online learners are scored on each
// block with their estimate from the rows before it (gains), then fed it (update); an offline one
// releases once at finish(), from the meter's exact covariance of every guarded row.
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

namespace dpstream::session {

struct RowLearnerSetup {
  Eigen::Index d;
  const OnlinePcaOptions& options;      // k, minibatch, known_rows, stream (calibration, norm bound, shape)
  privacy::EpsDelta share;              // this learner's share of options.stream.target
  std::optional<std::uint64_t> seed;    // its own noise seed (learner_seed), none: the secure source
  privacy::Budget budget;               // every charge goes here
};

class RowLearner {
 public:
  virtual ~RowLearner() = default;
  // false: offline (no gains, no update; one release at finish(), scored in hindsight only).
  virtual bool online() const { return true; }
  // The squared norms of `rows` projected on the current estimate.
  virtual Eigen::VectorXd gains(const Eigen::Ref<const Eigen::MatrixXd>& rows) const;
  virtual void update(const Eigen::Ref<const Eigen::MatrixXd>& rows) { (void)rows; }
  // After the last row (a partial minibatch's last step, an offline release).
  virtual void finish(const eval::RegretMeter& meter) { (void)meter; }
  // The current estimate, d × k (fewer columns before the first).
  virtual const Eigen::MatrixXd& basis() const = 0;
  // One line for a summary: the method, `share` (its (ε, δ) share as text) and its noise.
  virtual std::string describe(const std::string& share) const = 0;
};

struct RowLearnerKind {
  const char* name;  // as listed in OnlinePcaOptions::learners
  std::unique_ptr<RowLearner> (*make)(const RowLearnerSetup&);  // checks its options before any noise
};
// The row-fed learners, in the order they are built, stepped and numbered for their seeds.
const std::vector<RowLearnerKind>& row_learner_kinds();

}  // namespace dpstream::session
