// Pipeline's checkpoints (pipeline.hpp, "Checkpoints"): save() after drain(), and restore() of a
// pipeline built from a checkpoint, before its threads start.
#include <string>

#include "dpstream/base/errors.hpp"
#include "replay/pipeline.hpp"

namespace dpstream::tools::replay {

void Pipeline::save(pb::ReplayCheckpoint& out) const {
  out.set_blocks(produced_);
  if (sum_) {
    out.set_continual_sum(sum_->serialize());
    pca::save(private_->state(), *out.mutable_private_learner());
    if (stationary_) stream::save(stationary_->state(), *out.mutable_stationary());
    if (nonnegative_) pca::save(nonnegative_->state(), *out.mutable_nonnegative());
  }
  pca::save(ftl_->state(), *out.mutable_ftl());
  eval::save(meter_->state(), *out.mutable_meter());
}

// Before the threads start: every state and counter as saved at block b (see save()).
void Pipeline::restore(const pb::ReplayCheckpoint& from) {
  const std::uint64_t b = from.blocks();
  meter_->restore(eval::load(from.meter(), "meter"));
  ftl_->restore(pca::load(from.ftl(), pca::FplMode::follow_the_leader, "ftl"));
  std::string progress = "blocks " + std::to_string(b) + ", meter rows " + std::to_string(meter_->rows()) +
                         ", follow-the-leader refreshes " + std::to_string(ftl_->refreshes());
  bool consistent = b >= 1 && meter_->rows() == b * block_ && ftl_->refreshes() == b;
  if (private_) {
    private_->restore(pca::load(from.private_learner(), pca::FplMode::private_tree, "private_learner"));
    progress += ", releases " + std::to_string(sum_->steps()) + " of " + std::to_string(sum_->rows()) +
                " rows, private refreshes " + std::to_string(private_->refreshes()) + ", ledger entries " +
                std::to_string(accountant_->ledger().size());
    consistent = consistent && sum_->steps() == b && sum_->rows() == b * block_ && private_->refreshes() == b - 1 &&
                 accountant_->ledger().size() == 1;
  }
  if (!consistent) throw CorruptInput("the saved states are not of one point of the stream (" + progress + ")");
  first_block_ = b;
  produced_ = b;
  for (auto* a : {&produced_signal_, &released_, &ready_, &s_done_, &l_done_, &e_done_}) a->store(b);
  release_free_.store(b - 1);
  rows_done_.store(b * block_);
  if (stationary_) {
    try {
      stationary_->restore(stream::load(from.stationary(), "stationary"));
    } catch (const InvalidParameter& e) {
      throw CorruptInput(std::string("stationary estimate: ") + e.what());
    }
    if (stationary_->steps() != b)
      throw CorruptInput("stationary estimate: " + std::to_string(stationary_->steps()) + " releases, expected " +
                         std::to_string(b));
    if (stationary_->state().numerator.size() != packed_release_.size())
      throw CorruptInput("stationary estimate: sums of " + std::to_string(stationary_->state().numerator.size()) +
                         " values, expected the " + std::to_string(packed_release_.size()) +
                         " of a packed " + std::to_string(d_) + " x " + std::to_string(d_) + " covariance");
  }
  if (nonnegative_) {
    try {
      nonnegative_->restore(pca::load(from.nonnegative(), "nonnegative"));
    } catch (const InvalidParameter& e) {
      throw CorruptInput(std::string("nonnegative reader: ") + e.what());
    }
    if (nonnegative_->releases() != b - 1)
      throw CorruptInput("nonnegative reader: " + std::to_string(nonnegative_->releases()) +
                         " releases read, expected " + std::to_string(b - 1) +
                         " (a checkpoint written before the reader kept its state cannot resume --nonnegative)");
  }
  if (private_) {  // release b, which L follows at block b
    const std::uint64_t slot = b % release_buffers_;
    if (in_place_) release_view_[slot] = &sum_->noisy_prefix();
    else copy_followed(sum_->noisy_prefix(), release_copy_[slot]);
    release_noise_[slot] = followed_noise_norm(sum_->latest());
  }
}

}  // namespace dpstream::tools::replay
