#include "dpstream/stream/continual_sum.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>

#include "continual_sum.pb.h"
#include "dpstream/errors.hpp"
#include "dpstream/memory_limit.hpp"
#include "dpstream/io/atomic_file.hpp"
#include "dpstream/io/message_seal.hpp"
#include "io/noise_source_state.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::stream {

using privacy::format_value;

const char* to_string(NoiseStrategy strategy) noexcept {
  switch (strategy) {
    case NoiseStrategy::plain_tree: return "plain";
    case NoiseStrategy::honaker_tree: return "honaker";
    case NoiseStrategy::sqrt_toeplitz: return "sqrt_toeplitz";
    case NoiseStrategy::blt: return "blt";
    case NoiseStrategy::separable: return "separable";
  }
  return "?";
}

NoiseStrategy parse_noise_strategy(const std::string& name) {
  if (name == "plain" || name == "tree") return NoiseStrategy::plain_tree;
  if (name == "honaker") return NoiseStrategy::honaker_tree;
  if (name == "sqrt_toeplitz" || name == "sqrt") return NoiseStrategy::sqrt_toeplitz;
  if (name == "blt") return NoiseStrategy::blt;
  if (name == "separable") return NoiseStrategy::separable;
  throw InvalidParameter("unknown noise strategy '" + name + "' (expected tree, honaker, sqrt, blt or separable)");
}

namespace {

const char* shape_name(privacy::SymmetricNoiseShape shape) {
  return shape == privacy::SymmetricNoiseShape::goe ? "goe" : "paper_symmetric";
}

std::unique_ptr<privacy::NoiseSource> make_source(const ContinualSumOptions& options) {
  if (options.seed) return std::make_unique<privacy::SeededNoiseSource>(*options.seed);
  return privacy::make_secure_noise_source();
}

const ContinualSumOptions& validated(const ContinualSumOptions& options) {
  if (options.block_rows < 1) throw InvalidParameter("continual sum: block_rows must be >= 1, got 0");
  privacy::require_positive("row_norm_bound", options.row_norm_bound);
  if (options.batch_rows < 0)
    throw InvalidParameter("continual sum: batch_rows must be >= 0, got " + std::to_string(options.batch_rows));
  if (options.kept_releases < 1 || options.kept_releases > 64)
    throw InvalidParameter("continual sum: kept_releases must be in [1, 64], got " +
                           std::to_string(options.kept_releases));
  if (options.horizon != 0 && options.horizon > UINT64_MAX / options.block_rows)
    throw InvalidParameter("continual sum: horizon × block_rows overflows 64 bits");
  if (needs_fixed_horizon(options.strategy) && options.horizon == 0)
    throw InvalidParameter(std::string("continual sum: the ") + to_string(options.strategy) +
                           " strategy is built for a fixed horizon; horizon must be >= 1 (0 = unbounded is for trees)");
  if (options.blt && options.strategy != NoiseStrategy::blt)
    throw InvalidParameter(std::string("continual sum: blt parameters given, but the strategy is ") +
                           to_string(options.strategy));
  return options;
}

// The state a stream will hold, in doubles: the exact sum (a covariance keeps a full d × d upper
// triangle and its row batch), the kept noisy releases and the latest's noise, and the strategy's own state —
// a tree's levels, a BLT's buffers, one previous draw and the α of every step (separable), or every
// past draw (the square-root Toeplitz reference). Refused, before anything is allocated, over the
// memory limit (memory_limit.hpp).
template <class Accumulator>
void require_stream_memory(Eigen::Index dimension, const ContinualSumOptions& options) {
  const double d = static_cast<double>(std::max<Eigen::Index>(dimension, 1));
  const bool covariance = std::is_same_v<Accumulator, CovarianceAccumulator>;
  const double packed = covariance ? d * (d + 1) / 2 : d;
  const double exact = covariance ? d * d + d * (options.batch_rows > 0 ? options.batch_rows : 128) : d;
  const double value = covariance ? d * d : d;
  const double steps = options.horizon ? static_cast<double>(options.horizon) : 1.0;
  double held = packed;  // what the strategy keeps
  switch (options.strategy) {
    case NoiseStrategy::plain_tree:
    case NoiseStrategy::honaker_tree: held = packed * (std::ceil(std::log2(steps + 1)) + 2); break;
    case NoiseStrategy::blt: held = packed * (options.blt ? static_cast<double>(options.blt->buffers()) + 1 : 16); break;
    case NoiseStrategy::separable: held = 2 * packed + 4 * steps; break;
    case NoiseStrategy::sqrt_toeplitz: held = packed * (steps + 1) + steps; break;
  }
  require_memory(std::string("a continual ") + Accumulator::kKind + " sum of dimension " + std::to_string(dimension) +
                     " (" + to_string(options.strategy) + ", " +
                     (options.horizon ? std::to_string(options.horizon) : std::string("unbounded")) + " releases)",
                 8.0 * (exact + value * options.kept_releases + 2 * packed + held));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptInput("checkpoint " + path + ": cannot open: " + std::strerror(errno));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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
ContinualSum<Accumulator>::ContinualSum(Eigen::Index dimension, const ContinualSumOptions& options,
                                        privacy::PrivacyAccountant* accountant, NoCharge)
    : dimension_((require_stream_memory<Accumulator>(dimension, validated(options)), dimension)),
      options_(validated(options)),
      l2_sensitivity_(Accumulator::sensitivity(options.relation, options.row_norm_bound)),
      accountant_(accountant),
      source_(make_source(options)),
      exact_(dimension, options.batch_rows),
      released_(options.kept_releases) {
  if (options.strategy == NoiseStrategy::plain_tree || options.strategy == NoiseStrategy::honaker_tree) {
    TreeNoiseOptions tree;
    tree.kind = options.strategy == NoiseStrategy::plain_tree ? TreeKind::plain : TreeKind::honaker;
    tree.horizon = options.horizon;
    tree.l2_sensitivity = l2_sensitivity_;
    tree.target = options.target;
    tree.calibration = options.calibration;
    noise_ = make_tree_noise(tree, exact_.packed_size());
  } else {
    FactorizationNoiseOptions f;
    f.kind = options.strategy == NoiseStrategy::blt         ? FactorizationKind::blt
             : options.strategy == NoiseStrategy::separable ? FactorizationKind::separable
                                                            : FactorizationKind::sqrt_toeplitz;
    f.horizon = options.horizon;
    f.l2_sensitivity = l2_sensitivity_;
    f.target = options.target;
    f.calibration = options.calibration;
    f.blt = options.blt;
    f.error = options.blt_error;
    noise_ = make_factorization_noise(f, exact_.packed_size());
  }
  release_noise_ = Eigen::VectorXd::Zero(exact_.packed_size());
  // The release buffers are written at every release: allocated and written once here, so that the
  // stream does not fault their pages in as it goes (15 µs a 4 KiB page on the 2-core VM: 19 ms for
  // a value at d = 784). The memory check above counts them already.
  for (Value& value : released_) Accumulator::unpack_value(release_noise_, value);
}

template <class Accumulator>
ContinualSum<Accumulator>::ContinualSum(Eigen::Index dimension, const ContinualSumOptions& options,
                                        privacy::PrivacyAccountant* accountant)
    : ContinualSum(dimension, options, accountant, NoCharge{}) {
  if (accountant_ != nullptr) {
    // One charge for the whole stream: it is one Gaussian mechanism with GDP parameter μ, i.e. the
    // Gaussian mechanism with sensitivity μ and σ = 1 (ρ = μ²/2), whose (ε, δ) is the target.
    const std::string label = std::string("continual ") + Accumulator::kKind + " sum (" + noise_->name() +
                              ", " + (options_.horizon ? std::to_string(options_.horizon) : std::string("unbounded")) +
                              " releases of " + std::to_string(options_.block_rows) + " rows)";
    accountant_->charge_gaussian(label, noise_->mu(), 1.0, options_.target);
  }
}

template <class Accumulator>
void ContinualSum<Accumulator>::subscribe(Subscriber subscriber) {
  if (!subscriber) throw InvalidParameter("continual sum: subscriber is empty");
  subscribers_.push_back(std::move(subscriber));
}

template <class Accumulator>
void ContinualSum<Accumulator>::check_row(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index) const {
  // row_norm, as RowGuard uses: a row it passed or clipped passes here too, bit for bit, wherever it
  // sits in memory. NaN fails the comparison too.
  require_bounded_row(row, index, dimension_, options_.row_norm_bound);
}

template <class Accumulator>
void ContinualSum<Accumulator>::check_capacity(std::uint64_t more_rows) const {
  if (options_.horizon == 0) return;
  const std::uint64_t capacity = (options_.horizon - steps_) * options_.block_rows - rows_pending();
  if (more_rows > capacity)
    throw BudgetExhausted("continual sum: the stream was calibrated for " + std::to_string(options_.horizon) +
                          " releases of " + std::to_string(options_.block_rows) + " rows; " +
                          std::to_string(more_rows) + " more rows at row " + std::to_string(rows()) +
                          " exceed the " + std::to_string(capacity) + " it can still release");
}

template <class Accumulator>
void ContinualSum<Accumulator>::update(const Eigen::Ref<const Eigen::VectorXd>& row) {
  check_row(row, rows());
  check_capacity(1);
  exact_.update(row);
  if (rows_pending() == options_.block_rows) release_step();
}

template <class Accumulator>
void ContinualSum<Accumulator>::update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
  if (rows.cols() != dimension_)
    throw InvalidRow(this->rows(), "block of dimension " + std::to_string(rows.cols()) + ", expected " +
                                       std::to_string(dimension_));
  for (Eigen::Index i = 0; i < rows.rows(); ++i) check_row(rows.row(i).transpose(), this->rows() + static_cast<std::uint64_t>(i));
  check_capacity(static_cast<std::uint64_t>(rows.rows()));
  Eigen::Index done = 0;
  while (done < rows.rows()) {
    const auto room = static_cast<Eigen::Index>(options_.block_rows - rows_pending());
    const Eigen::Index take = std::min(room, rows.rows() - done);
    exact_.update_block(rows.middleRows(done, take));
    done += take;
    if (rows_pending() == options_.block_rows) release_step();
  }
}

template <class Accumulator>
void ContinualSum<Accumulator>::add_aggregate(const BlockAggregate& part) {
  check_aggregate(part, {Accumulator::kKind, dimension_, exact_.packed_size(), options_.block_rows,
                         options_.row_norm_bound, rows(), options_.block_rows - rows_pending()});
  check_capacity(part.rows);
  Accumulator summed(dimension_, options_.batch_rows);
  summed.unpack(part.packed_sum, part.rows);
  exact_.merge(summed);
  if (rows_pending() == options_.block_rows) release_step();
}

template <class Accumulator>
void ContinualSum<Accumulator>::flush() {
  if (rows_pending() > 0) release_step();
}

template <class Accumulator>
double ContinualSum<Accumulator>::off_diagonal_scale() const noexcept {
  return options_.shape == privacy::SymmetricNoiseShape::goe ? std::sqrt(0.5) : 1.0;
}

template <class Accumulator>
void ContinualSum<Accumulator>::release_step() {
  noise_->advance(*source_, release_noise_);
  // Forward secrecy of checkpoints: from now on the secure source's state cannot regenerate the
  // noise just drawn (noise_source.hpp, SecureNoiseSource::ratchet).
  source_->ratchet();
  ++steps_;
  rows_released_ = rows();
  const double variance = noise_->release_variance(steps_);
  exact_.release(release_noise_, off_diagonal_scale(), privacy::snap_granularity(std::sqrt(variance)),
                 released_[steps_ % released_.size()]);
  const Release release = latest();
  for (const Subscriber& subscriber : subscribers_) subscriber(release);
}

template <class Accumulator>
const typename ContinualSum<Accumulator>::Value& ContinualSum<Accumulator>::noisy_prefix() const {
  if (steps_ == 0) throw InvalidParameter("continual sum: no release yet (" + std::to_string(rows()) + " rows pending)");
  return released_[steps_ % released_.size()];
}

template <class Accumulator>
typename ContinualSum<Accumulator>::Release ContinualSum<Accumulator>::latest() const {
  const Value& value = noisy_prefix();
  const double variance = noise_->release_variance(steps_);
  const double scale = off_diagonal_scale();
  return Release{steps_, rows_released_, value, variance, scale * scale * variance};
}

// ---- checkpoints ----------------------------------------------------------------------------------

template <class Accumulator>
std::string ContinualSum<Accumulator>::serialize() const {
  proto::ContinualSumCheckpoint msg;
  msg.set_format_version(1);
  msg.set_value_kind(Accumulator::kKind);
  msg.set_dimension(dimension_);
  msg.set_horizon(options_.horizon);
  msg.set_block_rows(options_.block_rows);
  msg.set_row_norm_bound(options_.row_norm_bound);
  msg.set_relation(privacy::to_string(options_.relation));
  msg.set_epsilon(options_.target.epsilon());
  msg.set_delta(options_.target.delta());
  msg.set_calibration(privacy::to_string(options_.calibration));
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
  io::put_noise_source(*source_, msg);  // a secure source as ratcheted at the last release: later noise only
  if (accountant_ != nullptr) msg.set_ledger(accountant_->serialize());
  return io::seal_message(msg.SerializeAsString());
}

template <class Accumulator>
ContinualSum<Accumulator> ContinualSum<Accumulator>::deserialize(const std::string& bytes, Eigen::Index dimension,
                                                                 const ContinualSumOptions& options,
                                                                 privacy::PrivacyAccountant* accountant) {
  proto::ContinualSumCheckpoint msg;
  io::check_message_seal(bytes, "continual sum checkpoint");  // a cut at a field boundary would parse
  if (bytes.empty() || !msg.ParseFromString(bytes))
    throw CorruptInput("continual sum checkpoint: " + std::to_string(bytes.size()) +
                       " bytes do not parse (truncated or not a checkpoint)");
  if (msg.format_version() != 1)
    throw CorruptInput("continual sum checkpoint: format_version " + std::to_string(msg.format_version()) +
                       ", this build reads 1");
  auto expect = [](const char* field, const std::string& got, const std::string& want) {
    if (got != want)
      throw CorruptInput(std::string("continual sum checkpoint: ") + field + " is " + got +
                         ", the stream being restored has " + want + " (checkpoint made with other parameters)");
  };
  expect("value_kind", msg.value_kind(), Accumulator::kKind);
  expect("dimension", std::to_string(msg.dimension()), std::to_string(dimension));
  expect("horizon", std::to_string(msg.horizon()), std::to_string(options.horizon));
  expect("block_rows", std::to_string(msg.block_rows()), std::to_string(options.block_rows));
  expect("row_norm_bound", format_value(msg.row_norm_bound()), format_value(options.row_norm_bound));
  expect("relation", privacy::stream_relation_from_checkpoint(msg.relation()), privacy::to_string(options.relation));
  expect("epsilon", format_value(msg.epsilon()), format_value(options.target.epsilon()));
  expect("delta", format_value(msg.delta()), format_value(options.target.delta()));
  expect("calibration", msg.calibration(), privacy::to_string(options.calibration));
  expect("strategy", msg.strategy(), to_string(options.strategy));
  expect("shape", msg.shape(), shape_name(options.shape));
  expect("noise source", msg.seeded() ? "seeded" : "secure", options.seed ? "seeded" : "secure");
  if (msg.seeded()) expect("seed", std::to_string(msg.source().seed()), std::to_string(*options.seed));

  ContinualSum sum(dimension, options, accountant, NoCharge{});
  const Eigen::Index p = sum.exact_.packed_size();
  if (msg.rows_released() > msg.rows() || (msg.steps() == 0) != (msg.rows_released() == 0) ||
      msg.rows() - msg.rows_released() >= options.block_rows || msg.noise().steps() != msg.steps())
    throw CorruptInput("continual sum checkpoint: inconsistent progress (rows " + std::to_string(msg.rows()) +
                       ", released " + std::to_string(msg.rows_released()) + ", steps " +
                       std::to_string(msg.steps()) + ", noise steps " + std::to_string(msg.noise().steps()) + ")");
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
  sum.source_ = io::get_noise_source(msg, "continual sum checkpoint");
  if (accountant != nullptr && !msg.ledger().empty()) *accountant = privacy::PrivacyAccountant::deserialize(msg.ledger());
  return sum;
}

template <class Accumulator>
void ContinualSum<Accumulator>::save_checkpoint(const std::string& path) const {
  io::write_file_atomically(path, serialize());
  // Temporaries of earlier writes a crash interrupted hold raw data too, and their random names are
  // never reused: with the new checkpoint in place they are only a liability.
  io::remove_atomic_leftovers(path);
}

template <class Accumulator>
ContinualSum<Accumulator> ContinualSum<Accumulator>::load_checkpoint(const std::string& path, Eigen::Index dimension,
                                                                     const ContinualSumOptions& options,
                                                                     privacy::PrivacyAccountant* accountant) {
  std::string bytes = read_file(path);  // names the path itself
  try {
    return deserialize(bytes, dimension, options, accountant);
  } catch (const CorruptInput& e) {
    throw CorruptInput("checkpoint " + path + ": " + e.what());
  }
}

template class ContinualSum<VectorAccumulator>;
template class ContinualSum<CovarianceAccumulator>;

}  // namespace dpstream::stream
