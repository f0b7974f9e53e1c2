#include "dpstream/io/state_codecs.hpp"

#include <cmath>
#include <cstdint>
#include <string>

#include "dpstream/base/errors.hpp"
#include "learner_states.pb.h"

namespace dpstream::io {

void put(const Eigen::MatrixXd& m, proto::Matrix& out) {
  out.set_rows(m.rows());
  out.set_cols(m.cols());
  out.mutable_values()->Add(m.data(), m.data() + m.size());
}

Eigen::MatrixXd get(const proto::Matrix& m, const std::string& field) {
  if (m.rows() < 0 || m.cols() < 0 || m.values_size() != m.rows() * m.cols())
    throw CorruptInput(field + ": " + std::to_string(m.values_size()) + " values for a " + std::to_string(m.rows()) +
                       " x " + std::to_string(m.cols()) + " matrix");
  return Eigen::Map<const Eigen::MatrixXd>(m.values().data(), m.rows(), m.cols());
}

namespace {
Eigen::VectorXd values_of(const google::protobuf::RepeatedField<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size());
}
}  // namespace

void put(const pca::SubspaceTracker::State& s, proto::SubspaceTracker& out) {
  put(s.block, *out.mutable_block());
  put(s.current.vectors, *out.mutable_current_vectors());
  out.mutable_current_values()->Add(s.current.values.data(), s.current.values.data() + s.current.values.size());
  auto& st = *out.mutable_stats();
  st.set_refreshes(s.stats.refreshes);
  st.set_iterations(s.stats.iterations);
  st.set_matvecs(s.stats.matvecs);
  st.set_restarts(s.stats.restarts);
  st.set_fallbacks(s.stats.fallbacks);
  st.set_full_solves(s.stats.full_solves);
  st.set_last_iterations(s.stats.last_iterations);
  st.set_last_residual(s.stats.last_residual);
}

pca::SubspaceTracker::State get(const proto::SubspaceTracker& m, const std::string& field) {
  pca::SubspaceTracker::State s;
  s.block = get(m.block(), field + ".block");
  s.current.vectors = get(m.current_vectors(), field + ".current_vectors");
  s.current.values = values_of(m.current_values());
  const auto& st = m.stats();
  s.stats.refreshes = st.refreshes();
  s.stats.iterations = st.iterations();
  s.stats.matvecs = st.matvecs();
  s.stats.restarts = st.restarts();
  s.stats.fallbacks = st.fallbacks();
  s.stats.full_solves = st.full_solves();
  s.stats.last_iterations = st.last_iterations();
  s.stats.last_residual = st.last_residual();
  return s;
}

void pack_lower(const Eigen::MatrixXd& m, Eigen::Ref<Eigen::VectorXd> out) {
  const Eigen::Index d = m.rows();
  if (m.cols() != d || out.size() != d * (d + 1) / 2)
    throw InvalidParameter("pack_lower: a " + std::to_string(d) + " x " + std::to_string(m.cols()) + " matrix into " +
                           std::to_string(out.size()) + " values (a d x d matrix needs d(d+1)/2)");
  for (Eigen::Index j = 0, offset = 0; j < d; offset += d - j, ++j) out.segment(offset, d - j) = m.col(j).tail(d - j);
}

Eigen::Index packed_side(Eigen::Index n, const std::string& what) {
  // d(d+1)/2 = n  ⇒  d = (√(8n+1) − 1)/2, checked exactly below (n < 0 first: its root is NaN, and
  // casting NaN to an integer is undefined).
  const auto fail = [&] {
    return InvalidParameter(what + ": " + std::to_string(n) + " values are no packed triangle d(d+1)/2");
  };
  if (n < 0) throw fail();
  const auto d = static_cast<Eigen::Index>((std::sqrt(8.0 * static_cast<double>(n) + 1.0) - 1.0) / 2.0 + 0.5);
  if (d * (d + 1) / 2 != n) throw fail();
  return d;
}

namespace {

// A packed triangle's values, as they are (their count checked against the size).
Eigen::Map<const Eigen::VectorXd> lower_of(const proto::SymmetricMatrix& m, const std::string& field) {
  const std::int64_t n = m.size();
  if (n < 0 || m.lower_size() != n * (n + 1) / 2)
    throw CorruptInput(field + ": " + std::to_string(m.lower_size()) + " values for the lower triangle of a " +
                       std::to_string(n) + " x " + std::to_string(n) + " matrix");
  return {m.lower().data(), m.lower_size()};
}

void put_lower(const Eigen::Ref<const Eigen::VectorXd>& packed, proto::SymmetricMatrix& out, const std::string& what) {
  out.set_size(packed_side(packed.size(), what));
  out.mutable_lower()->Add(packed.data(), packed.data() + packed.size());
}

// The packed field if written, else an earlier version's full matrix, packed (exactly symmetric only).
Eigen::VectorXd get_lower(const proto::SymmetricMatrix& packed, const proto::Matrix& full, bool has_packed,
                          const std::string& field) {
  if (has_packed) return lower_of(packed, field);
  const Eigen::MatrixXd m = get(full, field);
  if (m.rows() != m.cols() || m != m.transpose())
    throw CorruptInput(field + ": a " + std::to_string(m.rows()) + " x " + std::to_string(m.cols()) +
                       " matrix that is not exactly symmetric: the estimate is kept as packed lower triangles, "
                       "which would lose its upper triangle");
  Eigen::VectorXd out(m.rows() * (m.rows() + 1) / 2);
  pack_lower(m, out);
  return out;
}

}  // namespace

void put(const stream::StationaryEstimate<Eigen::VectorXd>::State& s, proto::StationaryEstimate& out) {
  out.set_steps(s.steps);
  put_lower(s.weighted_increments, *out.mutable_packed_weighted_increments(), "StationaryEstimate weighted_increments");
  put_lower(s.previous_release, *out.mutable_packed_previous_release(), "StationaryEstimate previous_release");
  put_lower(s.numerator, *out.mutable_packed_numerator(), "StationaryEstimate numerator");
  out.set_denominator(s.denominator);
}

stream::StationaryEstimate<Eigen::VectorXd>::State get(const proto::StationaryEstimate& m, const std::string& field) {
  stream::StationaryEstimate<Eigen::VectorXd>::State s;
  s.steps = m.steps();
  s.weighted_increments = get_lower(m.packed_weighted_increments(), m.weighted_increments(),
                                    m.has_packed_weighted_increments(), field + ".weighted_increments");
  s.previous_release = get_lower(m.packed_previous_release(), m.previous_release(), m.has_packed_previous_release(),
                                 field + ".previous_release");
  s.numerator = get_lower(m.packed_numerator(), m.numerator(), m.has_packed_numerator(), field + ".numerator");
  s.denominator = m.denominator();
  return s;
}

// A learner that draws perturbations has a source state that has no place in the message.
void put(const pca::FplOnlinePca::State& s, proto::FplLearner& out) {
  if (s.perturbation_source) throw InvalidParameter("FplLearner: a perturbed_leader learner's state has no message");
  out.set_mode(pca::to_string(s.mode));
  put(s.basis, *out.mutable_basis());
  out.mutable_leader_values()->Add(s.leader_values.data(), s.leader_values.data() + s.leader_values.size());
  out.set_refreshes(s.refreshes);
  put(s.tracker, *out.mutable_tracker());
  out.set_rows(s.rows);
  out.mutable_exact_sum()->Add(s.exact_sum.data(), s.exact_sum.data() + s.exact_sum.size());
}

pca::FplOnlinePca::State get(const proto::FplLearner& m, pca::FplMode mode, const std::string& field) {
  if (m.mode() != pca::to_string(mode))
    throw CorruptInput(field + ".mode is '" + m.mode() + "', expected " + pca::to_string(mode));
  pca::FplOnlinePca::State s;
  s.mode = mode;
  s.basis = get(m.basis(), field + ".basis");
  s.leader_values = values_of(m.leader_values());
  s.refreshes = m.refreshes();
  s.tracker = get(m.tracker(), field + ".tracker");
  s.rows = m.rows();
  s.exact_sum = values_of(m.exact_sum());
  return s;
}

void put(const eval::RegretMeter::State& s, proto::RegretMeter& out) {
  out.set_rows(s.rows);
  out.mutable_exact_sum()->Add(s.exact_sum.data(), s.exact_sum.data() + s.exact_sum.size());
  out.mutable_gains()->Add(s.gains.begin(), s.gains.end());
  out.mutable_scored()->Add(s.scored.begin(), s.scored.end());
  for (const eval::RegretSample& sample : s.curve) {
    auto* c = out.add_curve();
    c->set_rows(sample.rows);
    c->set_opt(sample.opt);
    c->mutable_gains()->Add(sample.gains.begin(), sample.gains.end());
  }
  put(s.opt_tracker, *out.mutable_opt_tracker());
  out.set_leader_rows(s.leader_rows);
}

eval::RegretMeter::State get(const proto::RegretMeter& m, const std::string& field) {
  eval::RegretMeter::State s;
  s.rows = m.rows();
  s.exact_sum = values_of(m.exact_sum());
  s.gains.assign(m.gains().begin(), m.gains().end());
  s.scored.assign(m.scored().begin(), m.scored().end());
  for (const auto& c : m.curve()) s.curve.push_back({c.rows(), c.opt(), {c.gains().begin(), c.gains().end()}});
  s.opt_tracker = get(m.opt_tracker(), field + ".opt_tracker");
  s.leader_rows = m.leader_rows();
  return s;
}

// The correction is exactly symmetric (pca/doubly_nonnegative.hpp), so it always goes packed.
void put(const pca::DoublyNonnegativeReader::State& s, proto::DoublyNonnegativeReader& out) {
  out.set_releases(s.releases);
  out.set_full_solves(s.full_solves);
  out.set_last_full(s.last_full);
  const Eigen::MatrixXd& n = s.correction;
  if (n.rows() != n.cols() || n != n.transpose())
    throw InvalidParameter("DoublyNonnegativeReader state: the correction is not exactly symmetric");
  auto& c = *out.mutable_correction();
  c.set_size(n.rows());
  c.mutable_lower()->Resize(static_cast<int>(n.rows() * (n.rows() + 1) / 2), 0.0);
  pack_lower(n, Eigen::Map<Eigen::VectorXd>(c.mutable_lower()->mutable_data(), c.lower_size()));
}

pca::DoublyNonnegativeReader::State get(const proto::DoublyNonnegativeReader& m, const std::string& field) {
  pca::DoublyNonnegativeReader::State s;
  s.releases = m.releases();
  s.full_solves = m.full_solves();
  s.last_full = m.last_full();
  unpack_lower(lower_of(m.correction(), field + ".correction"), s.correction);
  return s;
}

}  // namespace dpstream::io
