// The learners' and the regret meter's states (plain State values) to and from their Protobuf
// messages (lib/proto/learner_states.proto), for checkpoints of whatever embeds them. The
// ContinualSum has its own serialize(); these cover what sits beside it in a pipeline:
// FplOnlinePca, SubspaceTracker, RegretMeter, the separable strategy's StationaryEstimate (run on
// packed covariances) and the --nonnegative reading's DoublyNonnegativeReader.
//
// Every reading function throws CorruptInput naming the field that does not fit (a matrix whose
// values do not match its shape, a learner of another mode); the states' own restore() checks the
// rest. A learner with a perturbation source (FplMode::perturbed_leader) has no message here: put()
// refuses it with InvalidParameter.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/eval/regret.hpp"
#include "dpstream/linalg/mirror.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/stream/stationary_estimate.hpp"

namespace dpstream::proto {
class Matrix;
class SubspaceTracker;
class FplLearner;
class RegretMeter;
class StationaryEstimate;
class DoublyNonnegativeReader;
}  // namespace dpstream::proto

namespace dpstream::io {

void put(const Eigen::MatrixXd& m, proto::Matrix& out);
Eigen::MatrixXd get(const proto::Matrix& m, const std::string& field);

// A symmetric matrix by its lower triangle, column by column (d(d+1)/2 values): the layout of
// proto::SymmetricMatrix. The replay runs its StationaryEstimate on releases in this form, so that
// its checkpoint is a copy of the state.
// pack_lower: out (sized d(d+1)/2 by the caller; InvalidParameter otherwise) ← m's lower triangle.
void pack_lower(const Eigen::MatrixXd& m, Eigen::Ref<Eigen::VectorXd> out);
// d for d(d+1)/2 = n values; InvalidParameter naming `what` if n is no such number.
Eigen::Index packed_side(Eigen::Index n, const std::string& what);
// out (resized to d × d) ← the lower triangle only; the strict upper one is left as it was, for a
// reader of one triangle (pca::FplOnlinePca::follow_lower). `packed` may be an Eigen expression (the
// stationary estimate's prefix): it is evaluated column by column, without a temporary.
template <class Packed>
void unpack_lower_triangle(const Eigen::MatrixBase<Packed>& packed, Eigen::MatrixXd& out) {
  const Eigen::Index d = packed_side(packed.size(), "unpack_lower");
  out.resize(d, d);
  for (Eigen::Index j = 0, offset = 0; j < d; offset += d - j, ++j)
    out.col(j).tail(d - j) = packed.segment(offset, d - j);
}
// out ← the d × d matrix, both triangles, exactly symmetric.
template <class Packed>
void unpack_lower(const Eigen::MatrixBase<Packed>& packed, Eigen::MatrixXd& out) {
  unpack_lower_triangle(packed, out);
  linalg::mirror_lower(out);
}

void put(const pca::SubspaceTracker::State& s, proto::SubspaceTracker& out);
pca::SubspaceTracker::State get(const proto::SubspaceTracker& m, const std::string& field);

void put(const pca::FplOnlinePca::State& s, proto::FplLearner& out);
// `mode`: the mode the caller's learner has; a message of another mode is refused.
pca::FplOnlinePca::State get(const proto::FplLearner& m, pca::FplMode mode, const std::string& field);

void put(const eval::RegretMeter::State& s, proto::RegretMeter& out);
eval::RegretMeter::State get(const proto::RegretMeter& m, const std::string& field);

// The estimate's sums as packed lower triangles (pack_lower), written to the packed fields as they
// are. Reading takes them, or the full matrices an earlier version wrote, packed (CorruptInput naming
// the field if one is not exactly symmetric: its upper triangle would be lost).
void put(const stream::StationaryEstimate<Eigen::VectorXd>::State& s, proto::StationaryEstimate& out);
stream::StationaryEstimate<Eigen::VectorXd>::State get(const proto::StationaryEstimate& m, const std::string& field);

void put(const pca::DoublyNonnegativeReader::State& s, proto::DoublyNonnegativeReader& out);
pca::DoublyNonnegativeReader::State get(const proto::DoublyNonnegativeReader& m, const std::string& field);

}  // namespace dpstream::io
