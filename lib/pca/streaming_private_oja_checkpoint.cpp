// StreamingPrivateOja's checkpoints (save / load; the header states what they hold and why).
#include "dpstream/pca/streaming_private_oja.hpp"

#include "streaming_oja.pb.h"

#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/stream/restore_rules.hpp"
#include "privacy/noise_source_state.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/privacy/spec_record.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;


namespace {

const char* step_rule_name(StepRule rule) { return rule == StepRule::power ? "power" : "oja"; }

void put_matrix(const MatrixXd& m, google::protobuf::RepeatedField<double>* out) { out->Add(m.data(), m.data() + m.size()); }

void get_matrix(const google::protobuf::RepeatedField<double>& from, Index rows, Index cols, const char* field,
                MatrixXd& out) {
  if (from.size() != rows * cols)
    throw CorruptInput(std::string("streaming Oja checkpoint: ") + field + " holds " + std::to_string(from.size()) +
                       " values, expected " + std::to_string(rows * cols));
  out = Eigen::Map<const MatrixXd>(from.data(), rows, cols);
  if (!out.allFinite()) throw CorruptInput(std::string("streaming Oja checkpoint: ") + field + " is not finite");
}

}  // namespace

std::string StreamingPrivateOja::save() const {
  proto::StreamingOjaCheckpoint msg;
  save(msg);
  return base::seal(std::move(msg), kSealed);
}

StreamingPrivateOja StreamingPrivateOja::load(const std::string& bytes, Index dimension,
                                              const StreamingPrivateOjaOptions& options) {
  return load(base::unseal<proto::StreamingOjaCheckpoint>(bytes, kSealed), dimension, options);
}

void StreamingPrivateOja::save(proto::StreamingOjaCheckpoint& msg) const {
  journal_.require_usable("streaming Oja");
  msg.set_format_version(kSealed.format_version);
  msg.set_dimension(dimension_);
  msg.set_k(options_.k);
  msg.set_batch_rows(options_.batch_rows);
  privacy::put_spec(options_.privacy, msg);
  msg.set_batch_growth(options_.batch_growth);
  msg.set_horizon(options_.horizon);
  msg.set_step_rule(step_rule_name(options_.step_rule));
  msg.set_learning_rate(options_.learning_rate);
  msg.set_rate_offset(options_.rate_offset);
  msg.set_initial_clip(options_.initial_clip);
  msg.set_scale_share(scale_share());
  msg.set_clip_quantile(options_.clip_quantile);
  msg.set_rows(rows_);
  msg.set_pending_rows(pending_rows_);
  msg.set_steps(steps_);
  msg.set_clip(clip_);
  msg.mutable_histogram()->Add(histogram_.data(), histogram_.data() + histogram_.size());
  put_matrix(iterate_, msg.mutable_basis());  // column-major on disk, as before
  put_matrix(basis_, msg.mutable_published());
  msg.set_oversampling(options_.oversampling);
  put_matrix(pending_sum(), msg.mutable_sum());
  msg.set_final_step(final_step_);
  msg.set_final_rows(final_rows_);
  msg.set_last_clip(last_clip_);
  msg.set_centred_updates(options_.centred_updates);
  put_matrix(centre_, msg.mutable_centre());
  privacy::put_noise_source(*source_, msg);  // a secure source as ratcheted at the last step: later noise only
  msg.set_journal_id(journal_.id());
}

StreamingPrivateOja StreamingPrivateOja::load(const proto::StreamingOjaCheckpoint& msg, Index dimension,
                                              const StreamingPrivateOjaOptions& options) {
  if (msg.format_version() != kSealed.format_version)
    base::refuse_format_version(kSealed.name, msg.format_version(), kSealed.format_version);
  auto expect = [](const char* field, const std::string& got, const std::string& want) {
    if (got != want)
      throw CorruptInput(std::string("streaming Oja checkpoint: ") + field + " is " + got +
                         ", the estimator being restored has " + want);
  };
  using base::format_value;
  expect("dimension", std::to_string(msg.dimension()), std::to_string(dimension));
  expect("k", std::to_string(msg.k()), std::to_string(options.k));
  expect("batch_rows", std::to_string(msg.batch_rows()), std::to_string(options.batch_rows));
  privacy::expect_spec(msg, privacy::stream_relation_from_checkpoint(msg.relation()), options.privacy, expect);
  expect("oversampling", std::to_string(msg.oversampling()), std::to_string(options.oversampling));
  expect("batch_growth", format_value(msg.batch_growth() == 0.0 ? 1.0 : msg.batch_growth()),
         format_value(options.batch_growth));
  expect("horizon", std::to_string(msg.horizon()), std::to_string(options.horizon));
  expect("step_rule", msg.step_rule().empty() ? "oja" : msg.step_rule(), step_rule_name(options.step_rule));
  expect("learning_rate", format_value(msg.learning_rate()), format_value(options.learning_rate));
  expect("rate_offset", format_value(msg.rate_offset()), format_value(options.rate_offset));
  expect("initial_clip", format_value(msg.initial_clip()), format_value(options.initial_clip));
  // γ first: the derived share follows it, so a checkpoint written with the default before (0.9) is
  // refused naming clip_quantile, and options that set it resolve the checkpoint's share.
  expect("clip_quantile", format_value(msg.clip_quantile()), format_value(options.clip_quantile));
  // The share as the options resolve it (unset: derived), so a checkpoint written with f = 0 — the
  // default before the derived share — is refused here, naming scale_share, unless the options set 0.
  const StreamingPrivateOja probe(dimension, options, NoCharge{});
  if (msg.scale_share() != probe.scale_share())
    throw CorruptInput("streaming Oja checkpoint: scale_share is " + format_value(msg.scale_share()) +
                       ", the estimator being restored has " + format_value(probe.scale_share()) +
                       (options.scale_share ? std::string() : " (derived: options without scale_share)") +
                       "; restore with options whose scale_share is the checkpoint's");
  auto on_off = [](bool on) { return std::string(on ? "on" : "off"); };
  expect("centred_updates", on_off(msg.centred_updates()), on_off(options.centred_updates));
  privacy::expect_noise(msg, options.privacy.noise, expect);

  StreamingPrivateOja oja(dimension, options, NoCharge{});
  const double l2 = options.privacy.row_norm_bound * options.privacy.row_norm_bound;
  // The rest's minibatch: decided after a step, so it is at most the next one, and ends by the horizon.
  const bool final_ok = msg.final_step() == 0
                            ? msg.final_rows() == 0
                            : msg.final_step() >= 2 && msg.final_step() <= msg.steps() + 1 && msg.final_rows() > 0 &&
                                  msg.final_rows() <= options.horizon;
  oja.final_step_ = final_ok ? msg.final_step() : 0;
  oja.final_rows_ = final_ok ? msg.final_rows() : 0;
  if (!final_ok || msg.pending_rows() >= oja.planned_rows(msg.steps() + 1) || msg.pending_rows() > msg.rows() ||
      msg.steps() > msg.rows() || !(msg.clip() > 0.0 && msg.clip() <= l2) ||
      !(msg.last_clip() >= 0.0 && msg.last_clip() <= l2) || msg.histogram_size() != oja.histogram_.size())
    throw CorruptInput("streaming Oja checkpoint: inconsistent progress (rows " + std::to_string(msg.rows()) +
                       ", pending " + std::to_string(msg.pending_rows()) + ", steps " + std::to_string(msg.steps()) +
                       ", clip " + format_value(msg.clip()) + ", last clip " + format_value(msg.last_clip()) +
                       ", final step " + std::to_string(msg.final_step()) + " of " +
                       std::to_string(msg.final_rows()) + " rows, histogram bins " +
                       std::to_string(msg.histogram_size()) + ")");
  oja.last_clip_ = msg.last_clip();
  MatrixXd read;
  get_matrix(msg.basis(), dimension, oja.width_, "basis", read);
  oja.iterate_ = read;
  get_matrix(msg.sum(), dimension, oja.width_, "sum", read);
  oja.sum_ = read;
  // Before oversampling the iterate was the published basis.
  if (msg.published_size() == 0) oja.basis_ = oja.iterate_;
  else get_matrix(msg.published(), dimension, options.k, "published", oja.basis_);
  oja.source_ = privacy::get_noise_source(msg, "streaming Oja checkpoint");
  oja.previous_ = oja.iterate_;
  oja.rows_ = msg.rows();
  oja.pending_rows_ = msg.pending_rows();
  oja.steps_ = msg.steps();
  oja.clip_ = msg.clip();
  if (options.centred_updates) get_matrix(msg.centre(), dimension, oja.width_, "centre", oja.centre_);
  else if (msg.centre_size() != 0) throw CorruptInput("streaming Oja checkpoint: a centre without centred_updates");
  for (Index i = 0; i < oja.histogram_.size(); ++i) {
    const double c = msg.histogram(static_cast<int>(i));
    if (!(c >= 0.0 && c <= double(msg.pending_rows())))
      throw CorruptInput("streaming Oja checkpoint: histogram bin " + std::to_string(i) + " holds " + format_value(c));
    oja.histogram_[i] = c;
  }
  // The pass was charged when the estimator was first built: no ledger (restore_rules.hpp).
  oja.journal_ = stream::restore_publication({msg.steps(), msg.journal_id(), {}}, options.journal,
                                             privacy::Budget::unaccounted("the pass was charged when first built"), {},
                                             "streaming Oja checkpoint");
  return oja;
}

}  // namespace dpstream::pca
