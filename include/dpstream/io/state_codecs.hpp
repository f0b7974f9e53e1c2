// The learners' and the regret meter's states (plain State values) to and from their Protobuf
// messages (lib/proto/learner_states.proto), for checkpoints of whatever embeds them. The
// ContinualSum has its own serialize(); these cover what sits beside it in a pipeline:
// FplOnlinePca, SubspaceTracker, RegretMeter, the separable strategy's StationaryEstimate and the
// --nonnegative reading's DoublyNonnegativeReader.
//
// Every reading function throws CorruptInput naming the field that does not fit (a matrix whose
// values do not match its shape, a learner of another mode); the states' own restore() checks the
// rest. A learner with a perturbation source (FplMode::perturbed_leader) has no message here: put()
// refuses it with InvalidParameter.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/eval/regret.hpp"
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

void put(const pca::SubspaceTracker::State& s, proto::SubspaceTracker& out);
pca::SubspaceTracker::State get(const proto::SubspaceTracker& m, const std::string& field);

void put(const pca::FplOnlinePca::State& s, proto::FplLearner& out);
// `mode`: the mode the caller's learner has; a message of another mode is refused.
pca::FplOnlinePca::State get(const proto::FplLearner& m, pca::FplMode mode, const std::string& field);

void put(const eval::RegretMeter::State& s, proto::RegretMeter& out);
eval::RegretMeter::State get(const proto::RegretMeter& m, const std::string& field);

void put(const stream::StationaryEstimate<Eigen::MatrixXd>::State& s, proto::StationaryEstimate& out);
stream::StationaryEstimate<Eigen::MatrixXd>::State get(const proto::StationaryEstimate& m, const std::string& field);

void put(const pca::DoublyNonnegativeReader::State& s, proto::DoublyNonnegativeReader& out);
pca::DoublyNonnegativeReader::State get(const proto::DoublyNonnegativeReader& m, const std::string& field);

}  // namespace dpstream::io
