#include "dpstream/eval/regret.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "linalg/matrix_message.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/aligned_reduction.hpp"

namespace dpstream::eval {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

Index checked_k(Index dimension, Index k) {
  if (dimension < 1) throw InvalidParameter("RegretMeter: dimension must be >= 1, got " + std::to_string(dimension));
  base::require_rank("RegretMeter", k, dimension);
  return k;
}

std::vector<std::string> checked_names(std::vector<std::string> names) {
  if (names.empty()) throw InvalidParameter("RegretMeter: at least one learner name is needed");
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (name.empty()) throw InvalidParameter("RegretMeter: learner names must be non-empty");
    if (!seen.insert(name).second) throw InvalidParameter("RegretMeter: learner name '" + name + "' appears twice");
  }
  return names;
}

// leader() and the curve's OPT_t: the exact C_t is PSD and moves little between blocks, so a warm
// refresh certified to kLeaderTolerance of the captured variance (the header) serves both.
pca::RefreshOptions leader_refresh() {
  pca::RefreshOptions options;
  options.variance_tolerance = kLeaderTolerance;
  return options;
}

}  // namespace

RegretMeter::RegretMeter(Index dimension, Index k, std::vector<std::string> learners, std::uint64_t sample_every)
    : k_(checked_k(dimension, k)),
      names_(checked_names(std::move(learners))),
      sample_every_(sample_every),
      exact_(dimension),
      gains_(names_.size(), 0.0),
      scored_(names_.size(), 0),
      opt_tracker_(dimension, k, leader_refresh()) {}

std::size_t RegretMeter::learner(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return i;
  throw InvalidParameter("RegretMeter: no learner named '" + name + "'");
}

void RegretMeter::check_learner(std::size_t learner, const char* where) const {
  if (learner >= names_.size())
    throw InvalidParameter(std::string("RegretMeter::") + where + ": learner index " + std::to_string(learner) +
                           " out of range (" + std::to_string(names_.size()) + " learners)");
}

void RegretMeter::score(std::size_t learner, const Eigen::Ref<const MatrixXd>& rows,
                        const Eigen::Ref<const MatrixXd>& basis) {
  check_learner(learner, "score");
  if (rows.cols() != dimension() || basis.rows() != dimension() || basis.cols() != k_)
    throw InvalidParameter("RegretMeter::score: rows must have " + std::to_string(dimension()) +
                           " columns and the basis must be " + std::to_string(dimension()) + " x " +
                           std::to_string(k_) + "; got rows with " + std::to_string(rows.cols()) +
                           " columns and a " + std::to_string(basis.rows()) + " x " +
                           std::to_string(basis.cols()) + " basis");
  add_gains(learner, (rows * basis).rowwise().squaredNorm());
}

void RegretMeter::add_gains(std::size_t learner, const Eigen::Ref<const VectorXd>& gains) {
  check_learner(learner, "add_gains");
  if (scored_[learner] != rows())
    throw std::logic_error("RegretMeter: learner '" + names_[learner] + "' was already scored on rows " +
                           std::to_string(rows()) + ".." + std::to_string(scored_[learner]) +
                           ", which the meter has not observed yet (score every learner, then observe)");
  for (Index i = 0; i < gains.size(); ++i)
    if (!std::isfinite(gains(i)) || gains(i) < 0)
      throw InvalidParameter("RegretMeter::add_gains: gain of row " + std::to_string(rows() + i) +
                             " for learner '" + names_[learner] + "' is not a finite non-negative number");
  gains_[learner] += linalg::aligned_sum(gains);  // gains.sum() would follow the caller's address
  scored_[learner] += static_cast<std::uint64_t>(gains.size());
}

// observe()'s checks: the rows' width and values, and every learner scored on exactly them.
void RegretMeter::check_observe(const Eigen::Ref<const MatrixXd>& rows_in) const {
  if (rows_in.cols() != dimension())
    throw InvalidParameter("RegretMeter::observe: rows have " + std::to_string(rows_in.cols()) +
                           " columns, the meter's dimension is " + std::to_string(dimension()));
  if (!rows_in.allFinite()) throw InvalidParameter("RegretMeter::observe: a row has a NaN or infinite entry");
  const std::uint64_t after = rows() + static_cast<std::uint64_t>(rows_in.rows());
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (scored_[i] != after)
      throw std::logic_error("RegretMeter::observe: learner '" + names_[i] + "' was scored on " +
                             std::to_string(scored_[i]) + " rows, but these rows bring the stream to " +
                             std::to_string(after));
}

// A sample when the block reaches or crosses a multiple of sample_every, taken at the block's end
// so that OPT_t and every gain cover exactly the same rows.
void RegretMeter::after_observe(std::uint64_t before) {
  if (sample_every_ > 0 && rows() / sample_every_ > before / sample_every_) take_sample();
}

void RegretMeter::observe(const Eigen::Ref<const MatrixXd>& rows_in) {
  check_observe(rows_in);
  const std::uint64_t before = rows();
  exact_.update_block(rows_in);
  after_observe(before);
}

// A given sum's diagonal against the meter's plus these rows' squares (the header: within 1e-10 relative).
void RegretMeter::check_sum_diagonal(const Eigen::Ref<const MatrixXd>& rows_in, const VectorXd& given) const {
  const VectorXd old_diagonal = exact_.diagonal();
  const VectorXd squares = rows_in.colwise().squaredNorm().transpose();
  for (Index j = 0; j < dimension(); ++j) {
    const double expected = old_diagonal(j) + squares(j);
    if (!(std::abs(given(j) - expected) <= 1e-10 * (std::abs(given(j)) + std::abs(expected))))
      throw InvalidParameter("RegretMeter::observe: the packed sum is not the meter's plus these rows: its "
                             "diagonal entry " + std::to_string(j) + " is " + base::format_value(given(j)) +
                             ", the rows make it " + base::format_value(expected));
  }
}

void RegretMeter::observe(const Eigen::Ref<const MatrixXd>& rows_in, const Eigen::Ref<const VectorXd>& packed_sum) {
  check_observe(rows_in);
  if (packed_sum.size() != exact_.packed_size())
    throw InvalidParameter("RegretMeter::observe: the packed sum holds " + std::to_string(packed_sum.size()) +
                           " values, a meter of dimension " + std::to_string(dimension()) + " needs " +
                           std::to_string(exact_.packed_size()));
  VectorXd given(dimension());
  for (Index j = 0; j < dimension(); ++j) given(j) = packed_sum(j * (j + 1) / 2 + j);
  check_sum_diagonal(rows_in, given);
  const std::uint64_t before = rows();
  exact_.unpack(packed_sum, before + static_cast<std::uint64_t>(rows_in.rows()));
  after_observe(before);
}

void RegretMeter::observe(const Eigen::Ref<const MatrixXd>& rows_in, const stream::CovarianceAccumulator& sum) {
  check_observe(rows_in);
  const std::uint64_t before = rows(), after = before + static_cast<std::uint64_t>(rows_in.rows());
  if (sum.dimension() != dimension() || sum.rows() != after)
    throw InvalidParameter("RegretMeter::observe: the sum is of " + std::to_string(sum.rows()) + " rows of dimension " +
                           std::to_string(sum.dimension()) + ", the meter's rows and these are " +
                           std::to_string(after) + " of dimension " + std::to_string(dimension()));
  check_sum_diagonal(rows_in, sum.diagonal());
  exact_.copy_value(sum);
  after_observe(before);
}

void RegretMeter::take_sample() {
  RegretSample sample;
  sample.rows = exact_.rows();
  sample.opt = leader().values.sum();
  sample.gains = gains_;
  curve_.push_back(std::move(sample));
}

void RegretMeter::finish() {
  if (sample_every_ > 0 && (curve_.empty() || curve_.back().rows != exact_.rows())) take_sample();
  if (!curve_.empty() && curve_.back().rows == exact_.rows()) curve_.back().opt = opt();
}

const pca::TopEigen& RegretMeter::leader() {
  if (exact_.rows() == 0) throw std::logic_error("RegretMeter::leader: no rows observed yet");
  if (leader_rows_ != exact_.rows()) {
    opt_tracker_.refresh_upper(exact_.upper_triangle());  // the refresh mirrors it itself, once
    leader_rows_ = exact_.rows();
  }
  return opt_tracker_.current();
}

double RegretMeter::opt() const {
  if (opt_cache_rows_ != exact_.rows()) {
    opt_cache_ = exact_.rows() == 0 ? 0.0 : pca::sum_top_k_eigenvalues(hindsight_covariance(), k_);
    opt_cache_rows_ = exact_.rows();
  }
  return opt_cache_;
}

const Eigen::MatrixXd& RegretMeter::hindsight_covariance() const {
  if (covariance_cache_rows_ != exact_.rows()) {
    exact_.matrix(covariance_cache_);
    covariance_cache_rows_ = exact_.rows();
  }
  return covariance_cache_;
}

RegretMeter::State RegretMeter::state() const {
  State s;
  s.rows = exact_.rows();
  s.exact_sum.resize(exact_.packed_size());
  exact_.pack(s.exact_sum);
  s.gains = gains_;
  s.scored = scored_;
  s.curve = curve_;
  s.opt_tracker = opt_tracker_.state();
  s.leader_rows = leader_rows_;
  return s;
}

void RegretMeter::restore(const State& s) {
  auto fail = [](const std::string& what) { throw InvalidParameter("RegretMeter::restore: " + what); };
  if (s.exact_sum.size() != exact_.packed_size())
    fail("the exact sum holds " + std::to_string(s.exact_sum.size()) + " values, a meter of dimension " +
         std::to_string(dimension()) + " needs " + std::to_string(exact_.packed_size()));
  if (s.gains.size() != names_.size() || s.scored.size() != names_.size())
    fail("gains for " + std::to_string(s.gains.size()) + " and counts for " + std::to_string(s.scored.size()) +
         " learners, the meter has " + std::to_string(names_.size()));
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (s.scored[i] < s.rows || !std::isfinite(s.gains[i]))
      fail("learner '" + names_[i] + "' has " + std::to_string(s.scored[i]) + " rows scored (of " +
           std::to_string(s.rows) + " observed) and gain " + std::to_string(s.gains[i]));
  for (const RegretSample& sample : s.curve)
    if (sample.gains.size() != names_.size() || sample.rows > s.rows)
      fail("a curve sample at row " + std::to_string(sample.rows) + " does not fit");
  if (s.leader_rows > s.rows || (s.leader_rows > 0 && s.opt_tracker.current.vectors.cols() != k_))
    fail("the leader is of " + std::to_string(s.leader_rows) + " rows (of " + std::to_string(s.rows) +
         " observed) with " + std::to_string(s.opt_tracker.current.vectors.cols()) + " vectors");
  opt_tracker_.restore(s.opt_tracker);
  exact_.unpack(s.exact_sum, s.rows);
  gains_ = s.gains;
  scored_ = s.scored;
  curve_ = s.curve;
  leader_rows_ = s.leader_rows;
  covariance_cache_rows_ = UINT64_MAX;
  opt_cache_rows_ = UINT64_MAX;
}

double RegretMeter::gain(std::size_t learner) const {
  check_learner(learner, "gain");
  return gains_[learner];
}

double RegretMeter::regret_over_opt(std::size_t learner) const {
  const double o = opt();
  return o > 0 ? regret(learner) / o : 0.0;
}

void RegretMeter::State::save(proto::RegretMeter& out) const {
  const State& s = *this;
  out.set_rows(s.rows);
  out.mutable_exact_sum()->Add(s.exact_sum.data(), s.exact_sum.data() + s.exact_sum.size());
  out.mutable_gains()->Add(s.gains.begin(), s.gains.end());
  out.mutable_scored()->Add(s.scored.begin(), s.scored.end());
  for (const RegretSample& sample : s.curve) {
    auto* c = out.add_curve();
    c->set_rows(sample.rows);
    c->set_opt(sample.opt);
    c->mutable_gains()->Add(sample.gains.begin(), sample.gains.end());
  }
  s.opt_tracker.save(*out.mutable_opt_tracker());
  out.set_leader_rows(s.leader_rows);
}

RegretMeter::State RegretMeter::State::load(const proto::RegretMeter& m, const std::string& field) {
  State s;
  s.rows = m.rows();
  s.exact_sum = linalg::values_of(m.exact_sum());
  s.gains.assign(m.gains().begin(), m.gains().end());
  s.scored.assign(m.scored().begin(), m.scored().end());
  for (const auto& c : m.curve()) s.curve.push_back({c.rows(), c.opt(), {c.gains().begin(), c.gains().end()}});
  s.opt_tracker = pca::SubspaceTracker::State::load(m.opt_tracker(), field + ".opt_tracker");
  s.leader_rows = m.leader_rows();
  return s;
}

}  // namespace dpstream::eval
