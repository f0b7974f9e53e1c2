#include "dpstream/pca/fpl_online_pca.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "linalg/matrix_message.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

const char* to_string(FplMode mode) noexcept {
  switch (mode) {
    case FplMode::follow_the_leader: return "follow_the_leader";
    case FplMode::perturbed_leader: return "perturbed_leader";
    case FplMode::private_tree: return "private_tree";
  }
  return "?";
}

FplMode parse_fpl_mode(const std::string& text) {
  for (const FplMode mode : {FplMode::follow_the_leader, FplMode::perturbed_leader, FplMode::private_tree})
    if (text == to_string(mode)) return mode;
  throw InvalidParameter("FPL mode '" + base::printable(text) + "': expected follow_the_leader, perturbed_leader or private_tree");
}

RefreshOptions fpl_refresh_defaults(FplMode mode) {
  RefreshOptions options;
  options.variance_tolerance = mode == FplMode::follow_the_leader ? 1e-3 : 1e-2;  // why: the header
  return options;
}

double noise_spectral_norm(Index d, double off_diagonal_variance) {
  if (d < 1 || !(off_diagonal_variance >= 0) || !std::isfinite(off_diagonal_variance))
    throw InvalidParameter("noise_spectral_norm: need d >= 1 and a finite variance >= 0, got d = " + std::to_string(d) +
                           ", variance " + std::to_string(off_diagonal_variance));
  return 2.0 * std::sqrt(static_cast<double>(d) * off_diagonal_variance);
}

namespace {

const FplOptions& validated(Index dimension, const FplOptions& options) {
  if (dimension < 1) throw InvalidParameter("FplOnlinePca: dimension must be >= 1, got " + std::to_string(dimension));
  base::require_rank("FplOnlinePca", options.k, dimension);
  if (options.refresh_every < 1) throw InvalidParameter("FplOnlinePca: refresh_every must be >= 1, got 0");
  return options;
}

}  // namespace

FplOnlinePca::FplOnlinePca(Index dimension, const FplOptions& options)
    : dimension_(dimension),
      options_(validated(dimension, options)),
      tracker_(dimension, options.k, options.refresh.value_or(fpl_refresh_defaults(options.mode))),
      basis_(MatrixXd::Identity(dimension, options.k)) {  // V̂_1: data-independent (Algorithm 2, line 1)
  if (options_.mode != FplMode::private_tree) exact_.emplace(dimension);
  if (options_.mode == FplMode::perturbed_leader) {
    perturbation_.emplace(options_.perturbation);  // validates ε, δ, L
    noise_ = options_.perturbation.privacy.noise.make_source();
  }
}

void FplOnlinePca::check_row_length(Index length, const char* where) const {
  if (length != dimension_)
    throw InvalidParameter(std::string("FplOnlinePca::") + where + ": row has " + std::to_string(length) +
                           " entries, the learner's dimension is " + std::to_string(dimension_));
}

double FplOnlinePca::gain(const Eigen::Ref<const VectorXd>& row) const {
  check_row_length(row.size(), "gain");
  return (basis_.transpose() * row).squaredNorm();
}

VectorXd FplOnlinePca::gains(const Eigen::Ref<const MatrixXd>& rows) const {
  check_row_length(rows.cols(), "gains");
  // One GEMM for the block: (rows·V̂) has the projections of every row as its rows.
  return (rows * basis_).rowwise().squaredNorm();
}

void FplOnlinePca::update(const Eigen::Ref<const VectorXd>& row) {
  check_row_length(row.size(), "update");
  ingest(row.transpose());
}

void FplOnlinePca::update_block(const Eigen::Ref<const MatrixXd>& rows) {
  check_row_length(rows.cols(), "update_block");
  ingest(rows);
}

void FplOnlinePca::ingest(const Eigen::Ref<const MatrixXd>& rows) {
  if (!exact_)
    throw InvalidParameter(
        "FplOnlinePca::update: in private_tree mode rows go to the attached ContinualCovariance, not to the learner");
  for (Index r = 0; r < rows.rows(); ++r)
    for (Index c = 0; c < rows.cols(); ++c)
      if (!std::isfinite(rows(r, c)))
        throw InvalidRow(exact_->rows() + static_cast<std::uint64_t>(r),
                         "FplOnlinePca: column " + std::to_string(c) + " is not finite");
  // Split the block at refresh boundaries, so each refresh sees exactly the rows before it.
  Index done = 0;
  while (done < rows.rows()) {
    const std::uint64_t to_boundary = options_.refresh_every - exact_->rows() % options_.refresh_every;
    const Index take = static_cast<Index>(std::min<std::uint64_t>(to_boundary, rows.rows() - done));
    exact_->update_block(rows.middleRows(done, take));
    done += take;
    if (exact_->rows() % options_.refresh_every == 0) follow(exact_->matrix());
  }
}

void FplOnlinePca::attach(stream::ContinualCovariance& stream) {
  if (options_.mode != FplMode::private_tree)
    throw InvalidParameter(std::string("FplOnlinePca::attach: only private_tree mode follows a stream's releases; mode is ") +
                           to_string(options_.mode));
  if (stream.dimension() != dimension_)
    throw InvalidParameter("FplOnlinePca::attach: the stream's dimension is " + std::to_string(stream.dimension()) +
                           ", the learner's is " + std::to_string(dimension_));
  stream.subscribe([this](const stream::ContinualCovariance::Release& release) {
    if (release.step % options_.refresh_every == 0)
      follow(release.noisy_prefix, noise_spectral_norm(dimension_, release.off_diagonal_noise_variance));
  });
}

// follow, follow_lower and follow_upper: the leader, plus in perturbed_leader mode a fresh E_t
// (Algorithm 2, line 5; for this refresh only, not private over the run), refreshed by the
// tracker's entry point for what the caller holds. E_t is symmetric, so a triangle of leader + E_t
// is that triangle of the leader's matrix + E_t: each entry point reads its own triangle of either.
template <class Leader, class Refresh>
void FplOnlinePca::refresh_from(const char* fn, Leader& leader, double noise_norm, Refresh refresh) {
  const double floor = noise_floor(fn, noise_norm);
  if (!perturbation_) return finish_refresh(refresh(leader, floor));
  leader_ = leader + perturbation_->sample_noise(dimension_, *noise_);
  finish_refresh(refresh(leader_, floor));
}

void FplOnlinePca::follow(const Eigen::Ref<const MatrixXd>& leader, double noise_norm) {
  refresh_from("FplOnlinePca::follow", leader, noise_norm,
               [this](const auto& c, double floor) -> const TopEigen& { return tracker_.refresh(c, floor); });
}

void FplOnlinePca::follow_lower(Eigen::Ref<MatrixXd> lower, double noise_norm) {
  refresh_from("FplOnlinePca::follow_lower", lower, noise_norm,
               [this](auto& c, double floor) -> const TopEigen& { return tracker_.refresh_lower(c, floor); });
}

void FplOnlinePca::follow_upper(const Eigen::Ref<const MatrixXd>& upper, double noise_norm) {
  refresh_from("FplOnlinePca::follow_upper", upper, noise_norm,
               [this](const auto& c, double floor) -> const TopEigen& { return tracker_.refresh_upper(c, floor); });
}

double FplOnlinePca::noise_floor(const char* fn, double noise_norm) const {
  if (!(noise_norm >= 0) || !std::isfinite(noise_norm))
    throw InvalidParameter(std::string(fn) + ": noise_norm must be finite and >= 0, got " + std::to_string(noise_norm));
  return kNoiseFloorShare * static_cast<double>(options_.k) * noise_norm;
}

void FplOnlinePca::finish_refresh(const TopEigen& top) {
  basis_ = top.vectors;
  leader_values_ = top.values;
  ++refreshes_;
}

void FplOnlinePca::follow_solved(const TopEigen& top) {
  if (options_.mode != FplMode::follow_the_leader)
    throw InvalidParameter(std::string("FplOnlinePca::follow_solved: only a follow_the_leader learner takes a solved leader; mode is ") +
                           to_string(options_.mode));
  const Index k = options_.k;
  if (top.vectors.rows() != dimension_ || top.vectors.cols() != k || top.values.size() != k)
    throw InvalidParameter("FplOnlinePca::follow_solved: the top k must be " + std::to_string(dimension_) + " x " +
                           std::to_string(k) + " with " + std::to_string(k) + " values, got " +
                           std::to_string(top.vectors.rows()) + " x " + std::to_string(top.vectors.cols()) + " with " +
                           std::to_string(top.values.size()));
  const double off = (top.vectors.transpose() * top.vectors - MatrixXd::Identity(k, k)).cwiseAbs().maxCoeff();
  if (!(off <= 1e-8) || !top.values.allFinite())
    throw InvalidParameter("FplOnlinePca::follow_solved: the vectors must be orthonormal (max|V^T V - I| = " +
                           std::to_string(off) + ") and the values finite");
  tracker_.set_start(top.vectors);
  basis_ = top.vectors;
  leader_values_ = top.values;
  ++refreshes_;
}

FplOnlinePca::State FplOnlinePca::state() const {
  State s;
  s.mode = options_.mode;
  s.basis = basis_;
  s.leader_values = leader_values_;
  s.refreshes = refreshes_;
  s.tracker = tracker_.state();
  if (exact_ && exact_->rows() > 0) {  // none yet (or a learner that only follow()s): nothing to keep
    s.rows = exact_->rows();
    s.exact_sum.resize(exact_->packed_size());
    exact_->pack(s.exact_sum);
  }
  if (const auto* seeded = dynamic_cast<const privacy::SeededNoiseSource*>(noise_.get()))
    s.perturbation_source = seeded->state();
  return s;
}

void FplOnlinePca::restore(const State& s) {
  auto fail = [](const std::string& what) { throw InvalidParameter("FplOnlinePca::restore: " + what); };
  if (s.mode != options_.mode)
    fail(std::string("the state is of a ") + to_string(s.mode) + " learner, this one is " + to_string(options_.mode));
  if (s.basis.rows() != dimension_ || s.basis.cols() != options_.k || !s.basis.allFinite())
    fail("the basis must be a finite " + std::to_string(dimension_) + " x " + std::to_string(options_.k) +
         " matrix, got " + std::to_string(s.basis.rows()) + " x " + std::to_string(s.basis.cols()));
  if (s.leader_values.size() != 0 && s.leader_values.size() != options_.k)
    fail("leader_values holds " + std::to_string(s.leader_values.size()) + " values, expected 0 or " +
         std::to_string(options_.k));
  const bool no_rows = s.rows == 0 && s.exact_sum.size() == 0;
  if (exact_ && !no_rows && s.exact_sum.size() != exact_->packed_size())
    fail("the exact sum holds " + std::to_string(s.exact_sum.size()) + " values, expected " +
         std::to_string(exact_->packed_size()));
  if (!exact_ && (s.exact_sum.size() != 0 || s.rows != 0)) fail("an exact sum for a private_tree learner");
  const bool seeded = options_.mode == FplMode::perturbed_leader && options_.perturbation.privacy.noise.seed.has_value();
  if (s.perturbation_source.has_value() != seeded)
    fail(std::string("the state ") + (s.perturbation_source ? "has" : "has no") +
         " seeded perturbation source, this learner " + (seeded ? "has one" : "has none"));
  if (s.perturbation_source && s.perturbation_source->seed != *options_.perturbation.privacy.noise.seed)
    fail("the state's perturbation source was seeded with " + std::to_string(s.perturbation_source->seed) +
         ", this learner with " + std::to_string(*options_.perturbation.privacy.noise.seed));
  SubspaceTracker tracker = tracker_;
  tracker.restore(s.tracker);  // validates before anything changes
  std::unique_ptr<privacy::NoiseSource> noise;
  if (s.perturbation_source) noise = privacy::SeededNoiseSource::from_state(*s.perturbation_source);
  tracker_ = std::move(tracker);
  if (noise) noise_ = std::move(noise);
  if (exact_ && no_rows) exact_.emplace(dimension_);
  else if (exact_) exact_->unpack(s.exact_sum, s.rows);
  basis_ = s.basis;
  leader_values_ = s.leader_values;
  refreshes_ = s.refreshes;
}

void FplOnlinePca::State::save(proto::FplLearner& out) const {
  const State& s = *this;
  if (s.perturbation_source) throw InvalidParameter("FplLearner: a perturbed_leader learner's state has no message");
  out.set_mode(to_string(s.mode));
  linalg::save(s.basis, *out.mutable_basis());
  out.mutable_leader_values()->Add(s.leader_values.data(), s.leader_values.data() + s.leader_values.size());
  out.set_refreshes(s.refreshes);
  s.tracker.save(*out.mutable_tracker());
  out.set_rows(s.rows);
  out.mutable_exact_sum()->Add(s.exact_sum.data(), s.exact_sum.data() + s.exact_sum.size());
}

FplOnlinePca::State FplOnlinePca::State::load(const proto::FplLearner& m, FplMode mode, const std::string& field) {
  if (m.mode() != to_string(mode))
    throw CorruptInput(field + ".mode is '" + m.mode() + "', expected " + to_string(mode));
  State s;
  s.mode = mode;
  s.basis = linalg::load(m.basis(), field + ".basis");
  s.leader_values = linalg::values_of(m.leader_values());
  s.refreshes = m.refreshes();
  s.tracker = SubspaceTracker::State::load(m.tracker(), field + ".tracker");
  s.rows = m.rows();
  s.exact_sum = linalg::values_of(m.exact_sum());
  return s;
}

}  // namespace dpstream::pca
