// ContinualSum's checkpoints (continual_sum.hpp, "Checkpoints"): save, and the load that checks
// every field, then the restore rules (the release journal, the accountant) last.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "continual_sum.pb.h"
#include "dpstream/base/atomic_file.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/saved_state.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/restore_rules.hpp"
#include "dpstream/privacy/spec_record.hpp"
#include "privacy/noise_source_state.hpp"

namespace dpstream::stream {


namespace {

const char* shape_name(privacy::SymmetricNoiseShape shape) {
  return shape == privacy::SymmetricNoiseShape::goe ? "goe" : "paper_symmetric";
}

void copy_packed(const google::protobuf::RepeatedField<double>& from, Eigen::Index expected,
                 const char* field, Eigen::VectorXd& to) {
  if (from.size() != expected)
    throw CorruptInput(std::string("continual sum checkpoint: ") + field + " holds " + std::to_string(from.size()) +
                       " values, expected " + std::to_string(expected));
  to = Eigen::Map<const Eigen::VectorXd>(from.data(), expected);
}

}  // namespace

template <class Accumulator>
std::string ContinualSum<Accumulator>::save() const {
  proto::ContinualSumCheckpoint msg;
  save(msg);
  return base::seal(std::move(msg), kSealed);
}

template <class Accumulator>
ContinualSum<Accumulator> ContinualSum<Accumulator>::load(const std::string& bytes, Eigen::Index dimension,
                                                          const ContinualSumOptions& options,
                                                          const privacy::Budget& budget) {
  return load(base::unseal<proto::ContinualSumCheckpoint>(bytes, kSealed), dimension, options, budget);
}

template <class Accumulator>
void ContinualSum<Accumulator>::save(proto::ContinualSumCheckpoint& msg) const {
  journal_.require_usable("continual sum");
  msg.set_format_version(kSealed.format_version);
  msg.set_value_kind(Accumulator::kKind);
  msg.set_dimension(dimension_);
  msg.set_horizon(options_.horizon);
  msg.set_block_rows(options_.block_rows);
  privacy::put_spec(options_.privacy, msg);
  msg.set_strategy(to_string(options_.strategy));
  msg.set_shape(shape_name(options_.shape));
  msg.set_rows(rows());
  msg.set_rows_released(rows_released_);
  msg.set_steps(steps_);
  Eigen::VectorXd packed(exact_.packed_size());
  exact_.pack(packed);
  msg.mutable_exact_sum()->Add(packed.data(), packed.data() + packed.size());
  msg.mutable_release_noise()->Add(release_noise_.data(), release_noise_.data() + release_noise_.size());
  if (steps_ > 0) {
    Accumulator::pack_value(noisy_prefix(), packed);
    msg.mutable_last_release()->Add(packed.data(), packed.data() + packed.size());
  }
  noise_->save(*msg.mutable_noise());
  privacy::put_noise_source(*source_, msg);  // a secure source as ratcheted at the last release: later noise only
  if (budget_.accounted()) msg.set_ledger(budget_.accountant()->save());
  msg.set_journal_id(journal_.id());
}

template <class Accumulator>
ContinualSum<Accumulator> ContinualSum<Accumulator>::load(const proto::ContinualSumCheckpoint& msg,
                                                          Eigen::Index dimension, const ContinualSumOptions& options,
                                                          const privacy::Budget& budget) {
  if (msg.format_version() != kSealed.format_version)
    base::refuse_format_version(kSealed.name, msg.format_version(), kSealed.format_version);
  auto expect = [](const char* field, const std::string& got, const std::string& want) {
    if (got != want)
      throw CorruptInput(std::string("continual sum checkpoint: ") + field + " is " + got +
                         ", the stream being restored has " + want + " (checkpoint made with other parameters)");
  };
  expect("value_kind", msg.value_kind(), Accumulator::kKind);
  expect("dimension", std::to_string(msg.dimension()), std::to_string(dimension));
  expect("horizon", std::to_string(msg.horizon()), std::to_string(options.horizon));
  expect("block_rows", std::to_string(msg.block_rows()), std::to_string(options.block_rows));
  privacy::expect_spec(msg, privacy::stream_relation_from_checkpoint(msg.relation()), options.privacy, expect);
  expect("strategy", msg.strategy(), to_string(options.strategy));
  expect("shape", msg.shape(), shape_name(options.shape));
  privacy::expect_noise(msg, options.privacy.noise, expect);

  ContinualSum sum(dimension, options, budget, NoCharge{});
  const Eigen::Index p = sum.exact_.packed_size();
  if (msg.rows_released() > msg.rows() || (msg.steps() == 0) != (msg.rows_released() == 0) ||
      msg.rows() - msg.rows_released() >= options.block_rows || msg.noise().steps() != msg.steps())
    throw CorruptInput("continual sum checkpoint: inconsistent progress (rows " + std::to_string(msg.rows()) +
                       ", released " + std::to_string(msg.rows_released()) + ", steps " +
                       std::to_string(msg.steps()) + ", noise steps " + std::to_string(msg.noise().steps()) + ")");
  // The options were the caller's (InvalidParameter above); from here every value is the bytes'.
  base::from_saved_state("continual sum checkpoint", [&] {
    Eigen::VectorXd packed;
    copy_packed(msg.exact_sum(), p, "exact_sum", packed);
    sum.exact_.unpack(packed, msg.rows());
    copy_packed(msg.release_noise(), p, "release_noise", sum.release_noise_);
    if (msg.steps() > 0) {
      copy_packed(msg.last_release(), p, "last_release", packed);
      Accumulator::unpack_value(packed, sum.released_[msg.steps() % sum.released_.size()]);
    } else if (msg.last_release_size() != 0) {
      throw CorruptInput("continual sum checkpoint: a last_release before the first step");
    }
    sum.noise_->load(msg.noise());
    sum.steps_ = msg.steps();
    sum.rows_released_ = msg.rows_released();
    sum.source_ = privacy::get_noise_source(msg, "continual sum checkpoint");
  });
  // Last, once everything else is known good: the restore rules (restore_rules.hpp).
  sum.journal_ = restore_publication({msg.steps(), msg.journal_id(), msg.ledger()}, options.journal, budget,
                                     [&sum] { sum.charge_stream(); }, "continual sum checkpoint");
  return sum;
}

// The other members are instantiated in continual_sum.cpp; these here.
template void ContinualSum<VectorAccumulator>::save(proto::ContinualSumCheckpoint&) const;
template std::string ContinualSum<VectorAccumulator>::save() const;
template ContinualSum<VectorAccumulator> ContinualSum<VectorAccumulator>::load(const proto::ContinualSumCheckpoint&, Eigen::Index, const ContinualSumOptions&,
                                        const privacy::Budget&);
template ContinualSum<VectorAccumulator> ContinualSum<VectorAccumulator>::load(const std::string&, Eigen::Index, const ContinualSumOptions&, const privacy::Budget&);
template void ContinualSum<CovarianceAccumulator>::save(proto::ContinualSumCheckpoint&) const;
template std::string ContinualSum<CovarianceAccumulator>::save() const;
template ContinualSum<CovarianceAccumulator> ContinualSum<CovarianceAccumulator>::load(const proto::ContinualSumCheckpoint&, Eigen::Index, const ContinualSumOptions&,
                                        const privacy::Budget&);
template ContinualSum<CovarianceAccumulator> ContinualSum<CovarianceAccumulator>::load(const std::string&, Eigen::Index, const ContinualSumOptions&, const privacy::Budget&);

}  // namespace dpstream::stream
