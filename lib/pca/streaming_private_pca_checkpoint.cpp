// StreamingPrivatePca's checkpoints (save / load; the header states what they hold and why).
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/saved_state.hpp"
#include "dpstream/pca/streaming_private_pca.hpp"
#include "dpstream/stream/restore_rules.hpp"
#include "dpstream/privacy/spec_record.hpp"
#include "linalg/matrix_message.hpp"
#include "streaming_pca.pb.h"

namespace dpstream::pca {

namespace {

constexpr const char* kWhat = "streaming PCA checkpoint";

// CorruptInput unless the checkpoint was made with the dimension and options of the estimator being
// restored (a field at a time, naming it).
void expect_built_alike(const proto::StreamingPcaCheckpoint& msg, Eigen::Index dimension,
                        const StreamingPrivatePcaOptions& options) {
  auto expect = [](const char* field, const std::string& got, const std::string& want) {
    if (got != want)
      throw CorruptInput(std::string(kWhat) + ": " + field + " is " + got + ", the estimator being restored has " +
                         want + " (checkpoint made with other parameters)");
  };
  const NoisyPowerMethodOptions& r = options.refresh;
  expect("dimension", std::to_string(msg.dimension()), std::to_string(dimension));
  expect("horizon_rows", std::to_string(msg.horizon_rows()), std::to_string(options.horizon_rows));
  expect("refresh_every", std::to_string(msg.refresh_every()), std::to_string(options.refresh_every));
  expect("k", std::to_string(msg.k()), std::to_string(r.k));
  expect("iterations", std::to_string(msg.iterations()), std::to_string(r.iterations));
  expect("release_values", msg.release_values() ? "true" : "false", r.release_values ? "true" : "false");
  privacy::expect_spec(msg, msg.relation(), r.privacy, expect);
  expect("max_rows_per_unit", std::to_string(msg.max_rows_per_unit()), std::to_string(r.max_rows_per_unit));
}

// The refreshes update() makes by `rows` rows: one every B rows, and one at the horizon.
std::uint64_t refreshes_by(std::uint64_t rows, const StreamingPrivatePcaOptions& o) {
  return rows / o.refresh_every + (rows == o.horizon_rows && rows % o.refresh_every != 0 ? 1 : 0);
}

}  // namespace

std::string StreamingPrivatePca::save() const {
  proto::StreamingPcaCheckpoint msg;
  save(msg);
  return base::seal(std::move(msg), kSealed);
}

StreamingPrivatePca StreamingPrivatePca::load(const std::string& bytes, Eigen::Index dimension,
                                              const StreamingPrivatePcaOptions& options,
                                              const privacy::Budget& budget) {
  return load(base::unseal<proto::StreamingPcaCheckpoint>(bytes, kSealed), dimension, options, budget);
}

void StreamingPrivatePca::save(proto::StreamingPcaCheckpoint& msg) const {
  journal_.require_usable("streaming private PCA");
  const NoisyPowerMethodOptions& r = options_.refresh;
  msg.set_format_version(kSealed.format_version);
  msg.set_dimension(dimension_);
  msg.set_horizon_rows(options_.horizon_rows);
  msg.set_refresh_every(options_.refresh_every);
  msg.set_k(r.k);
  msg.set_iterations(r.iterations);
  msg.set_release_values(r.release_values);
  privacy::put_spec(r.privacy, msg);
  msg.set_max_rows_per_unit(r.max_rows_per_unit);
  msg.set_rows(exact_.rows());
  Eigen::VectorXd packed(exact_.packed_size());
  exact_.pack(packed);
  msg.mutable_exact_sum()->Add(packed.data(), packed.data() + packed.size());
  msg.set_refreshes(refreshes_);
  linalg::save(current_.vectors, *msg.mutable_current_vectors());
  msg.mutable_current_values()->Add(current_.values.data(), current_.values.data() + current_.values.size());
  msg.set_current_method(current_.method);
  method_.save(*msg.mutable_method());
  if (budget_.accounted()) msg.set_ledger(budget_.accountant()->save());
  msg.set_journal_id(journal_.id());
}

StreamingPrivatePca StreamingPrivatePca::load(const proto::StreamingPcaCheckpoint& msg, Eigen::Index dimension,
                                              const StreamingPrivatePcaOptions& options,
                                              const privacy::Budget& budget) {
  if (msg.format_version() != kSealed.format_version)
    base::refuse_format_version(kWhat, msg.format_version(), kSealed.format_version);
  expect_built_alike(msg, dimension, options);
  StreamingPrivatePca pca(dimension, options, budget, NoCharge{});  // the options' checks (InvalidParameter)
  if (msg.rows() > options.horizon_rows || msg.refreshes() != refreshes_by(msg.rows(), options) ||
      msg.method().runs_done() != static_cast<std::int64_t>(msg.refreshes()))
    throw CorruptInput(std::string(kWhat) + ": inconsistent progress (rows " + std::to_string(msg.rows()) +
                       ", refreshes " + std::to_string(msg.refreshes()) + ", runs " +
                       std::to_string(msg.method().runs_done()) + ")");
  // From here every value is the bytes' (base/saved_state.hpp).
  base::from_saved_state(kWhat, [&] {
    if (msg.exact_sum_size() != pca.exact_.packed_size())
      throw CorruptInput(std::string(kWhat) + ": exact_sum holds " + std::to_string(msg.exact_sum_size()) +
                         " values, expected " + std::to_string(pca.exact_.packed_size()));
    pca.exact_.unpack(Eigen::Map<const Eigen::VectorXd>(msg.exact_sum().data(), msg.exact_sum_size()), msg.rows());
    PrivateSubspace current;
    current.vectors = linalg::load(msg.current_vectors(), std::string(kWhat) + ": current_vectors");
    current.values = linalg::values_of(msg.current_values());
    current.method = msg.current_method();
    const bool released = msg.refreshes() > 0;
    if ((released && (current.vectors.rows() != dimension || current.vectors.cols() != options.refresh.k ||
                      !current.vectors.allFinite() || !current.values.allFinite())) ||
        (!released && (current.vectors.size() != 0 || current.values.size() != 0)))
      throw CorruptInput(std::string(kWhat) + ": the latest release is a " + std::to_string(current.vectors.rows()) +
                         " x " + std::to_string(current.vectors.cols()) + " basis after " +
                         std::to_string(msg.refreshes()) + " refreshes");
    pca.current_ = std::move(current);
    pca.method_.load(msg.method(), kWhat);
    pca.refreshes_ = msg.refreshes();
  });
  // Last, once everything else is known good: the restore rules (stream/restore_rules.hpp).
  pca.journal_ = stream::restore_publication({msg.refreshes(), msg.journal_id(), msg.ledger()}, options.journal,
                                             budget, [&pca] { pca.charge_stream(); }, kWhat);
  return pca;
}

}  // namespace dpstream::pca
