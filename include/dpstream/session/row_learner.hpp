// One private learner of an online-PCA session fed the guarded rows themselves (row_learners.hpp
// runs them side by side): what a learner must do to be one, and the table of those the session
// knows. Adding a learner: one file, lib/session/learners/<stem>.cpp, that defines its class and
// its entry `const RowLearnerKind <stem>_learner{.name = …, …, .make = make_learner<Class>}`, and
// its stem in lib/meson.build's list `row_learners`, from which the build writes the table. The
// front ends read the table (known_learners, describe_learners: online_pca_options.hpp): their
// --learner / learner= lists, checks and help come from it, with nothing to add there.
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
  const char* name;     // as listed in OnlinePcaOptions::learners
  const char* label;    // its name in a report and a plot's legend (session_labels.hpp)
  const char* summary;  // what it is, in a few words, for the front ends' help
  bool needs_length;    // calibrated for the stream's length (OnlinePcaOptions::known_rows)
  double memory_matrices;  // d × d matrices it holds at most, for a front end's memory estimate
  std::unique_ptr<RowLearner> (*make)(const RowLearnerSetup&);  // checks its options before any noise
};
// A kind's maker: the learner built from its setup.
template <class Learner>
std::unique_ptr<RowLearner> make_learner(const RowLearnerSetup& setup) {
  return std::make_unique<Learner>(setup);
}
// The row-fed learners, in the order they are built, stepped and numbered for their seeds (the
// order of lib/meson.build's list; the build writes this table from it).
const std::vector<RowLearnerKind>& row_learner_kinds();

}  // namespace dpstream::session
