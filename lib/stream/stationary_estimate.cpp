// StationaryEstimate's save / load pair (stationary_estimate.hpp): its sums as packed lower
// triangles, or an earlier version's full matrices.
#include "dpstream/stream/stationary_estimate.hpp"

#include <string>

#include "dpstream/base/errors.hpp"
#include "linalg/matrix_message.hpp"

namespace dpstream::stream {

namespace {

// The packed field if written, else an earlier version's full matrix, packed (exactly symmetric only).
Eigen::VectorXd load_lower(const proto::SymmetricMatrix& packed, const proto::Matrix& full, bool has_packed,
                           const std::string& field) {
  if (has_packed) return linalg::load_packed(packed, field);
  const Eigen::MatrixXd m = linalg::load(full, field);
  if (m.rows() != m.cols() || m != m.transpose())
    throw CorruptInput(field + ": a " + std::to_string(m.rows()) + " x " + std::to_string(m.cols()) +
                       " matrix that is not exactly symmetric: the estimate is kept as packed lower triangles, "
                       "which would lose its upper triangle");
  Eigen::VectorXd out(m.rows() * (m.rows() + 1) / 2);
  linalg::pack_lower(m, out);
  return out;
}

}  // namespace

template <>
void StationaryEstimate<Eigen::VectorXd>::State::save(proto::StationaryEstimate& out) const {
  const State& s = *this;
  out.set_steps(s.steps);
  linalg::save_packed(s.weighted_increments, *out.mutable_packed_weighted_increments(),
                      "StationaryEstimate weighted_increments");
  linalg::save_packed(s.previous_release, *out.mutable_packed_previous_release(),
                      "StationaryEstimate previous_release");
  linalg::save_packed(s.numerator, *out.mutable_packed_numerator(), "StationaryEstimate numerator");
  out.set_denominator(s.denominator);
}

template <>
StationaryEstimate<Eigen::VectorXd>::State StationaryEstimate<Eigen::VectorXd>::State::load(
    const proto::StationaryEstimate& m, const std::string& field) {
  State s;
  s.steps = m.steps();
  s.weighted_increments = load_lower(m.packed_weighted_increments(), m.weighted_increments(),
                                     m.has_packed_weighted_increments(), field + ".weighted_increments");
  s.previous_release = load_lower(m.packed_previous_release(), m.previous_release(), m.has_packed_previous_release(),
                                  field + ".previous_release");
  s.numerator = load_lower(m.packed_numerator(), m.numerator(), m.has_packed_numerator(), field + ".numerator");
  s.denominator = m.denominator();
  return s;
}

}  // namespace dpstream::stream
