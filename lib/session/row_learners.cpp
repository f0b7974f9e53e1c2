#include "dpstream/session/row_learners.hpp"

#include <algorithm>
#include <cstdio>

#include "dpstream/base/errors.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/calibration.hpp"

namespace dpstream::session {

using Eigen::Index;
using Eigen::MatrixXd;

const std::vector<std::string>& known_learners() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all{"fpl"};
    for (const RowLearnerKind& kind : row_learner_kinds()) all.emplace_back(kind.name);
    return all;
  }();
  return names;
}

std::string describe_learners() {
  std::string out = "fpl (follow-the-perturbed-leader on the continual covariance release)";
  for (const RowLearnerKind& kind : row_learner_kinds()) out += std::string(", ") + kind.name + " (" + kind.summary + ")";
  return out;
}

namespace {
bool listed(const std::vector<std::string>& learners, const char* name) {
  return std::find(learners.begin(), learners.end(), name) != learners.end();
}
}  // namespace

bool row_learners_need_length(const std::vector<std::string>& learners) {
  for (const RowLearnerKind& kind : row_learner_kinds())
    if (kind.needs_length && listed(learners, kind.name)) return true;
  return false;
}

double row_learner_matrices(const std::vector<std::string>& learners) {
  double matrices = 0;
  for (const RowLearnerKind& kind : row_learner_kinds())
    if (listed(learners, kind.name)) matrices += kind.memory_matrices;
  return matrices;
}

Eigen::VectorXd RowLearner::gains(const Eigen::Ref<const Eigen::MatrixXd>& rows) const {
  return (rows * basis()).rowwise().squaredNorm();
}

bool OnlinePcaOptions::has_learner(const char* name) const {
  return std::find(learners.begin(), learners.end(), name) != learners.end();
}

bool OnlinePcaOptions::fixed_horizon() const {
  return private_stream() && stream::needs_fixed_horizon(stream.strategy);
}

void check_learners(const std::vector<std::string>& learners) {
  if (learners.empty()) throw InvalidParameter("online PCA: no learner listed");
  const std::vector<std::string>& known = known_learners();
  for (auto it = learners.begin(); it != learners.end(); ++it) {
    if (std::find(known.begin(), known.end(), *it) == known.end())
      throw InvalidParameter("online PCA: unknown learner '" + *it + "'");
    if (std::find(learners.begin(), it, *it) != it)
      throw InvalidParameter("online PCA: learner '" + *it + "' is listed twice");
  }
}

privacy::EpsDelta learner_share(const privacy::EpsDelta& total, std::size_t learners) {
  if (learners <= 1) return total;  // one learner: the whole target, calibrated as before
  return privacy::gdp_share_target(total, static_cast<long>(learners));  // every learner is Gaussian
}

std::optional<std::uint64_t> learner_seed(const std::optional<std::uint64_t>& seed, std::size_t index) {
  if (!seed) return std::nullopt;
  return *seed + 0x9E3779B97F4A7C15ull * index;  // golden-ratio stride: distinct for every index
}

RowLearners::RowLearners(Index d, const OnlinePcaOptions& o, const privacy::Budget& budget)
    : k_(o.k), share_(learner_share(o.stream.privacy.target, o.learners.size())) {
  // Built in the table's order, not the list's: each charges its own share, and the charges commute.
  const std::vector<std::string>& known = known_learners();
  for (const RowLearnerKind& kind : row_learner_kinds()) {
    if (!o.has_learner(kind.name)) continue;
    // A learner's seed index is its place among all the learner names (fpl 0: the run's own seed).
    const auto index = static_cast<std::size_t>(std::find(known.begin(), known.end(), kind.name) - known.begin());
    const RowLearnerSetup setup{d, o, share_, learner_seed(o.stream.privacy.noise.seed, index), budget};
    learners_.push_back({kind.name, kind.make(setup)});
  }
}

RowLearners::~RowLearners() = default;

std::vector<std::string> RowLearners::meter_names() const {
  std::vector<std::string> names;
  for (const Entry& e : learners_)
    if (e.learner->online()) names.push_back(e.name);
  return names;
}

void RowLearners::step(const Eigen::Ref<const MatrixXd>& rows, eval::RegretMeter& meter) {
  for (const Entry& e : learners_) {
    if (!e.learner->online()) continue;
    meter.add_gains(meter.learner(e.name), e.learner->gains(rows));
    e.learner->update(rows);
  }
}

void RowLearners::finish(const eval::RegretMeter& meter) {
  for (const Entry& e : learners_) e.learner->finish(meter);
}

std::vector<LearnerFigures> RowLearners::figures(const eval::RegretMeter& meter) const {
  const MatrixXd& c = meter.hindsight_covariance();
  const double opt = meter.opt();
  std::vector<LearnerFigures> out;
  for (const Entry& e : learners_) {
    LearnerFigures f{e.name, 0, 0, share_.epsilon(), share_.delta()};
    const MatrixXd& basis = e.learner->basis();
    f.captured_ratio = basis.cols() == k_ ? pca::captured_variance(c, basis) / opt : 0.0;
    f.regret_over_opt = e.learner->online() ? meter.regret_over_opt(meter.learner(e.name)) : 1.0 - f.captured_ratio;
    out.push_back(f);
  }
  return out;
}

std::string RowLearners::describe() const {
  char share[96];
  std::snprintf(share, sizeof share, "(ε, δ) share (%.4g, %.3g)", share_.epsilon(), share_.delta());
  std::string t;
  for (const Entry& e : learners_) t += e.name + ": " + e.learner->describe(share) + "\n";
  return t;
}

}  // namespace dpstream::session
