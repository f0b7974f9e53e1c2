// OnlinePcaSession's saved parts (online_pca_session.hpp, "Saving"): save() after drain(), and
// restore() of a session built from them, before its threads start. Each part is one object's own
// save (base/message_seal.hpp): the stream's sealed bytes, the others' messages as bytes.
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/saved_state.hpp"
#include "dpstream/linalg/packed_triangle.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "learner_states.pb.h"

namespace dpstream::session {

namespace {

template <class Message, class Object>
SessionPart part(const char* name, const Object& object) {
  Message m;
  object.save(m);
  return {name, m.SerializeAsString()};
}

// The message of part `name`; CorruptInput if it is absent or does not parse.
template <class Message>
Message parsed(const SessionParts& from, const char* name) {
  const SessionPart* p = from.find(name);
  if (!p) throw CorruptInput(std::string("the saved session has no ") + name + " part");
  Message m;
  if (!m.ParseFromString(p->bytes)) throw CorruptInput(std::string("the saved ") + name + " part does not parse");
  return m;
}

}  // namespace

SessionParts OnlinePcaSession::save() const {
  if (ingesting_ || !ftl_)  // the parts are of a block boundary of the block path, with its whole evaluation
    throw InvalidParameter("online PCA: save() needs a session fed by next_slot/publish with the meter and follow-the-leader");
  SessionParts out;
  out.blocks = produced_;
  if (sum_) {
    out.parts.push_back({"continual_sum", sum_->save()});
    out.parts.push_back(part<proto::FplLearner>("private_learner", *private_));
    if (stationary_) out.parts.push_back(part<proto::StationaryEstimate>("stationary", *stationary_));
    if (nonnegative_) out.parts.push_back(part<proto::DoublyNonnegativeReader>("nonnegative", *nonnegative_));
  }
  out.parts.push_back(part<proto::FplLearner>("ftl", *ftl_));
  out.parts.push_back(part<proto::RegretMeter>("meter", *meter_));
  return out;
}

// Before the threads start: every state and counter as saved at block b (see save()). Each part is
// bytes: its object's refusal of the state (InvalidParameter) is CorruptInput naming the part.
void OnlinePcaSession::restore(const SessionParts& from) {
  using base::from_saved_state;
  const std::uint64_t b = from.blocks;
  from_saved_state("the saved meter part", [&] {
    meter_->load(parsed<proto::RegretMeter>(from, "meter"), "meter");
  });
  from_saved_state("the saved ftl part", [&] {
    ftl_->load(parsed<proto::FplLearner>(from, "ftl"), "ftl");
  });
  std::string progress = "blocks " + std::to_string(b) + ", meter rows " + std::to_string(meter_->rows()) +
                         ", follow-the-leader refreshes " + std::to_string(ftl_->refreshes());
  bool consistent = b >= 1 && meter_->rows() == b * block_ && ftl_->refreshes() == b;
  if (private_) {
    from_saved_state("the saved private_learner part", [&] {
      private_->load(parsed<proto::FplLearner>(from, "private_learner"), "private_learner");
    });
    progress += ", releases " + std::to_string(sum_->steps()) + " of " + std::to_string(sum_->rows()) +
                " rows, private refreshes " + std::to_string(private_->refreshes()) + ", ledger entries " +
                std::to_string(accountant_->ledger().size());
    consistent = consistent && sum_->steps() == b && sum_->rows() == b * block_ && private_->refreshes() == b - 1 &&
                 accountant_->ledger().size() == 1;
  }
  if (!consistent) throw CorruptInput("the saved states are not of one point of the stream (" + progress + ")");
  first_block_ = b;
  produced_ = b;
  for (auto* a : {&produced_signal_, &released_, &ready_, &stream_done_, &learner_done_, &evaluation_done_}) a->store(b);
  release_free_.store(b - 1);
  rows_done_.store(b * block_);
  restore_readers(from, b);
  if (private_) {  // release b, which the learner follows at block b
    const std::uint64_t slot = b % release_buffers_;
    if (in_place_) release_view_[slot] = &sum_->noisy_prefix();
    else copy_followed(sum_->noisy_prefix(), release_copy_[slot]);
    release_noise_[slot] = followed_noise_norm(sum_->latest());
  }
}

// What the private learner reads the releases through: the stationary estimate (separable) and the
// nonnegative reader, each after the releases the saved point had made and read.
void OnlinePcaSession::restore_readers(const SessionParts& from, std::uint64_t b) {
  if (stationary_) {
    base::from_saved_state("stationary estimate", [&] {
      stationary_->load(parsed<proto::StationaryEstimate>(from, "stationary"), "stationary");
    });
    if (stationary_->steps() != b)
      throw CorruptInput("stationary estimate: " + std::to_string(stationary_->steps()) + " releases, expected " +
                         std::to_string(b));
    if (stationary_->state().numerator.size() != packed_release_.size())
      throw CorruptInput("stationary estimate: sums of " + std::to_string(stationary_->state().numerator.size()) +
                         " values, expected the " + std::to_string(packed_release_.size()) +
                         " of a packed " + std::to_string(d_) + " x " + std::to_string(d_) + " covariance");
  }
  if (nonnegative_) {
    if (!from.find("nonnegative"))
      throw CorruptInput("nonnegative reader: no saved state (a checkpoint written before the reader kept its state "
                         "cannot resume --nonnegative)");
    base::from_saved_state("nonnegative reader", [&] {
      nonnegative_->load(parsed<proto::DoublyNonnegativeReader>(from, "nonnegative"), "nonnegative");
    });
    if (nonnegative_->releases() != b - 1)
      throw CorruptInput("nonnegative reader: " + std::to_string(nonnegative_->releases()) +
                         " releases read, expected " + std::to_string(b - 1) +
                         " (a checkpoint written before the reader kept its state cannot resume --nonnegative)");
  }
}

}  // namespace dpstream::session
