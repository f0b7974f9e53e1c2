#include "dpstream/stream/tree_noise.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "continual_sum.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::stream {

using base::require_positive;

const char* to_string(TreeKind kind) noexcept { return kind == TreeKind::plain ? "plain" : "honaker"; }

TreeKind parse_tree_kind(const std::string& text) {
  for (const TreeKind kind : {TreeKind::plain, TreeKind::honaker})
    if (text == to_string(kind)) return kind;
  throw InvalidParameter("tree kind '" + base::printable(text) + "': expected plain or honaker");
}

std::uint32_t tree_levels(std::uint64_t horizon) {
  if (horizon == 0) throw InvalidParameter("tree horizon must be >= 1 step, got 0");
  return static_cast<std::uint32_t>(std::bit_width(horizon));
}

// ---- ContinualNoise ---------------------------------------------------------------------------

double ContinualNoise::release_covariance(std::uint64_t s, std::uint64_t t) const {
  // Cov(N_s, N_t) = Σ_node w_s(node)·w_t(node): the node noises are independent with unit variance.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, double> weights_s;
  for (const NodeWeight& w : release_weights(s)) weights_s[{w.epoch, w.level, w.index}] += w.weight;
  double covariance = 0.0;
  for (const NodeWeight& w : release_weights(t)) {
    const auto it = weights_s.find({w.epoch, w.level, w.index});
    if (it != weights_s.end()) covariance += it->second * w.weight;
  }
  return covariance;
}

// ---- TreeNoise ----------------------------------------------------------------------------------

namespace {

void require_step(std::uint64_t t, std::uint64_t horizon, const char* what) {
  if (t == 0 || (horizon != 0 && t > horizon))
    throw InvalidParameter(std::string(what) + ": step must be in [1, " +
                           (horizon ? std::to_string(horizon) : std::string("inf")) + "], got " +
                           std::to_string(t));
}

// V_h = 2^h/(2^{h+1} − 1): the inverse-variance weight of a height-h node's own sum (variance 1)
// against its two children's estimates (variance 2·V_{h−1}), and the variance of the resulting
// estimate; V_0 = 1 for a leaf. A plain tree uses its node sums as they are: weight 1.
double own_weight(TreeKind kind, std::uint32_t height) {
  if (kind == TreeKind::plain) return 1.0;
  const double p = std::ldexp(1.0, static_cast<int>(height));
  return p / (2.0 * p - 1.0);
}

TreeKind parse_kind(const std::string& text) {
  if (text == "plain") return TreeKind::plain;
  if (text == "honaker") return TreeKind::honaker;
  throw CorruptInput("tree noise state: unknown kind '" + base::printable(text) + "'");
}

}  // namespace

TreeNoise::TreeNoise(TreeKind kind, std::uint64_t horizon, double node_sigma, double l2_sensitivity,
                     Eigen::Index size, std::uint32_t epoch, std::uint64_t first_step)
    : kind_(kind),
      horizon_(horizon),
      levels_(tree_levels(horizon)),
      node_sigma_(node_sigma),
      l2_sensitivity_(l2_sensitivity),
      size_(size),
      epoch_(epoch),
      first_step_(first_step),
      held_(levels_) {
  require_positive("node_sigma", node_sigma);
  require_positive("l2_sensitivity", l2_sensitivity);
  if (size < 1) throw InvalidParameter("tree noise: size must be >= 1, got " + std::to_string(size));
}

std::string TreeNoise::name() const { return kind_ == TreeKind::plain ? "tree" : "honaker"; }

std::string TreeNoise::describe() const { return kind_ == TreeKind::plain ? "binary tree" : "Honaker tree"; }

double TreeNoise::own_weight(std::uint32_t height) const noexcept { return stream::own_weight(kind_, height); }

void TreeNoise::advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) {
  if (release_noise.size() != size_)
    throw InvalidParameter("tree noise: release noise has size " + std::to_string(release_noise.size()) +
                           ", expected " + std::to_string(size_));
  if (steps_ >= horizon_)
    throw InvalidParameter("tree noise: the horizon of " + std::to_string(horizon_) +
                           " releases is reached; a further release would exceed the privacy calibration");
  const std::uint64_t t = steps_ + 1;
  const auto top = static_cast<std::uint32_t>(std::countr_zero(t));
  // Bits 0..top−1 of t−1 are set and are cleared in t: their nodes leave the prefix.
  for (std::uint32_t j = 0; j < top; ++j) release_noise -= held_[j];
  auto notify = [&](std::uint32_t level) {
    if (observer_) observer_(epoch_, level, first_step_ + t - (std::uint64_t{1} << level), first_step_ + t - 1);
  };
  Eigen::VectorXd& node = held_[top];
  node.resize(size_);
  if (kind_ == TreeKind::plain) {
    source.fill_gaussian({node.data(), static_cast<std::size_t>(size_)}, node_sigma_);
    notify(top);
  } else {
    // The completed subtree's right spine, bottom up: e_0 = leaf, e_j = w_j·z_j + (1−w_j)(left_{j−1} +
    // e_{j−1}), where left_{j−1} = held_[j−1] is the left sibling completed 2^{j−1} steps ago.
    chain_.resize(size_);
    draw_.resize(size_);
    source.fill_gaussian({chain_.data(), static_cast<std::size_t>(size_)}, node_sigma_);
    notify(0);
    for (std::uint32_t j = 1; j <= top; ++j) {
      source.fill_gaussian({draw_.data(), static_cast<std::size_t>(size_)}, node_sigma_);
      notify(j);
      const double w = own_weight(j);
      chain_ = w * draw_ + (1.0 - w) * (held_[j - 1] + chain_);
    }
    node.swap(chain_);
  }
  release_noise += node;
  // Levels below `top` are no longer needed; their buffers are kept for reuse (no allocation per step).
  steps_ = t;
}

double TreeNoise::release_variance(std::uint64_t t) const {
  require_step(t, horizon_, "tree noise release_variance");
  double factor = 0.0;
  for (std::uint64_t bits = t; bits != 0; bits &= bits - 1)
    factor += own_weight(static_cast<std::uint32_t>(std::countr_zero(bits)));
  return factor * node_sigma_ * node_sigma_;
}

void TreeNoise::append_weights(std::uint32_t level, std::uint64_t index, double scale,
                               std::vector<NodeWeight>& out) const {
  const double w = own_weight(level);
  out.push_back({epoch_, level, index, scale * w * node_sigma_});
  if (kind_ == TreeKind::honaker && level > 0) {
    append_weights(level - 1, 2 * index - 1, scale * (1.0 - w), out);
    append_weights(level - 1, 2 * index, scale * (1.0 - w), out);
  }
}

std::vector<NodeWeight> TreeNoise::release_weights(std::uint64_t t) const {
  require_step(t, horizon_, "tree noise release_weights");
  std::vector<NodeWeight> out;
  for (std::uint64_t bits = t; bits != 0; bits &= bits - 1) {
    const auto level = static_cast<std::uint32_t>(std::countr_zero(bits));
    append_weights(level, t >> level, 1.0, out);  // the level-j node of t's digits has index t >> j
  }
  return out;
}

double TreeNoise::mu() const {
  return l2_sensitivity_ * std::sqrt(static_cast<double>(levels_)) / node_sigma_;
}

void TreeNoise::save(proto::ContinualNoiseState& out) const {
  out.set_strategy(name());
  out.set_steps(steps_);
  proto::TreeNoiseState& tree = *out.mutable_tree();
  tree.set_kind(to_string(kind_));
  tree.set_horizon(horizon_);
  tree.set_node_sigma(node_sigma_);
  tree.set_steps(steps_);
  tree.set_epoch(epoch_);
  tree.set_first_step(first_step_);
  for (std::uint32_t j = 0; j < levels_; ++j) {
    if (((steps_ >> j) & 1U) == 0) continue;  // held exactly at the set bits of steps_
    proto::TreeLevelNoise& level = *tree.add_held();
    level.set_level(j);
    level.mutable_values()->Add(held_[j].data(), held_[j].data() + held_[j].size());
  }
}

void TreeNoise::load(const proto::ContinualNoiseState& in) {
  if (!in.has_tree()) throw CorruptInput("tree noise state: no tree");
  const proto::TreeNoiseState& tree = in.tree();
  auto mismatch = [](const std::string& field, const std::string& got, const std::string& expected) {
    return CorruptInput("tree noise state: " + field + " is " + got + ", this stream has " + expected);
  };
  if (parse_kind(tree.kind()) != kind_) throw mismatch("kind", tree.kind(), to_string(kind_));
  if (tree.horizon() != horizon_)
    throw mismatch("horizon", std::to_string(tree.horizon()), std::to_string(horizon_));
  if (tree.node_sigma() != node_sigma_)
    throw mismatch("node_sigma", base::format_value(tree.node_sigma()), base::format_value(node_sigma_));
  if (tree.epoch() != epoch_ || tree.first_step() != first_step_)
    throw mismatch("epoch", std::to_string(tree.epoch()), std::to_string(epoch_));
  if (tree.steps() > horizon_)
    throw CorruptInput("tree noise state: " + std::to_string(tree.steps()) + " steps exceed the horizon " +
                       std::to_string(horizon_));
  // The tree's own count must be the stream's (offset by the epoch's first step): a tree behind the
  // stream would draw again the noise of nodes already released, one ahead would skip releases.
  if (tree.steps() + first_step_ - 1 != in.steps())
    throw CorruptInput("tree noise state: the tree is at step " + std::to_string(tree.steps() + first_step_ - 1) +
                       ", the stream at step " + std::to_string(in.steps()));
  std::vector<Eigen::VectorXd> held(levels_);
  for (const proto::TreeLevelNoise& level : tree.held()) {
    if (level.level() >= levels_ || held[level.level()].size() != 0)
      throw CorruptInput("tree noise state: level " + std::to_string(level.level()) + " is out of range or repeated");
    if (level.values_size() != size_)
      throw CorruptInput("tree noise state: level " + std::to_string(level.level()) + " holds " +
                         std::to_string(level.values_size()) + " values, expected " + std::to_string(size_));
    held[level.level()] = Eigen::Map<const Eigen::VectorXd>(level.values().data(), size_);
  }
  // Exactly the levels of the set bits of steps must be held: they are the nodes the latest release
  // sums, and a missing one could only be re-drawn, which would release the same node twice.
  for (std::uint32_t j = 0; j < levels_; ++j)
    if (((tree.steps() >> j) & 1U) != (held[j].size() != 0 ? 1U : 0U))
      throw CorruptInput("tree noise state: level " + std::to_string(j) + " does not match step " +
                         std::to_string(tree.steps()));
  held_ = std::move(held);
  steps_ = tree.steps();
}

// ---- EpochTreeNoise -----------------------------------------------------------------------------

namespace {
// Epoch of a 1-based global step: epoch e covers [2^e, 2^{e+1}).
std::uint32_t epoch_of(std::uint64_t t) { return static_cast<std::uint32_t>(std::bit_width(t) - 1); }
constexpr std::uint32_t kMaxEpoch = 63;  // steps are 64-bit
}  // namespace

EpochTreeNoise::EpochTreeNoise(TreeKind kind, double l2_sensitivity, privacy::EpsDelta target,
                               privacy::Calibration calibration, Eigen::Index size, double unit_factor)
    : kind_(kind), l2_sensitivity_(l2_sensitivity), target_(target), calibration_(calibration), size_(size),
      unit_factor_(unit_factor) {
  require_positive("l2_sensitivity", l2_sensitivity);
  if (!(std::isfinite(unit_factor) && unit_factor >= 1))
    throw InvalidParameter("tree noise: unit_factor must be finite and >= 1, got " + base::format_value(unit_factor));
  if (size < 1) throw InvalidParameter("tree noise: size must be >= 1, got " + std::to_string(size));
  epoch_sigma(0);  // validates the calibration (e.g. paper with ε ≥ 1) at construction
}

std::string EpochTreeNoise::name() const {
  return std::string(kind_ == TreeKind::plain ? "tree" : "honaker") + "-epochs";
}

std::string EpochTreeNoise::describe() const {
  return kind_ == TreeKind::plain ? "binary tree" : "Honaker tree";
}

double EpochTreeNoise::draw_sigma() const {
  return epoch_sigma(epoch_of(std::max<std::uint64_t>(1, steps_)));
}

double EpochTreeNoise::epoch_sigma(std::uint32_t epoch) const {
  if (epoch > kMaxEpoch) throw InvalidParameter("tree noise: epoch " + std::to_string(epoch) + " is past 2^64 steps");
  // Calibration is a bisection; every release asks for the σ of all past epochs, so keep them.
  while (sigma_cache_.size() <= epoch)
    sigma_cache_.push_back(privacy::tree_node_sigma(static_cast<long>(sigma_cache_.size()) + 1,
                                                    l2_sensitivity_ * unit_factor_, target_, calibration_));
  return sigma_cache_[epoch];
}

std::unique_ptr<TreeNoise> EpochTreeNoise::make_epoch(std::uint32_t epoch) const {
  if (epoch > kMaxEpoch) throw InvalidParameter("tree noise: the stream exceeds 2^64 - 1 steps");
  auto tree = std::make_unique<TreeNoise>(kind_, std::uint64_t{1} << epoch, epoch_sigma(epoch),
                                          l2_sensitivity_, size_, epoch, std::uint64_t{1} << epoch);
  tree->set_observer(observer_);
  return tree;
}

void EpochTreeNoise::set_observer(NodeObserver observer) {
  observer_ = std::move(observer);
  if (current_) current_->set_observer(observer_);
}

void EpochTreeNoise::advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) {
  const std::uint64_t t = steps_ + 1;
  if (t == 0) throw InvalidParameter("tree noise: the stream exceeds 2^64 - 1 steps");
  // A new epoch starts at t = 2^e; release_noise keeps the completed epochs' final noise, and the new
  // tree adds and removes only its own nodes.
  if (!current_ || std::has_single_bit(t)) current_ = make_epoch(epoch_of(t));
  current_->advance(source, release_noise);
  steps_ = t;
}

double EpochTreeNoise::release_variance(std::uint64_t t) const {
  require_step(t, 0, "tree noise release_variance");
  const std::uint32_t e = epoch_of(t);
  double variance = 0.0;
  for (std::uint32_t past = 0; past < e; ++past) {
    // A completed epoch ends on its root alone: own_weight(root) = V_past (Honaker) or 1, times σ².
    const double sigma = epoch_sigma(past);
    variance += own_weight(kind_, past) * sigma * sigma;
  }
  const std::uint64_t local = t - (std::uint64_t{1} << e) + 1;
  if (current_ && current_->epoch_ == e) return variance + current_->release_variance(local);
  return variance + make_epoch(e)->release_variance(local);
}

std::vector<NodeWeight> EpochTreeNoise::release_weights(std::uint64_t t) const {
  require_step(t, 0, "tree noise release_weights");
  const std::uint32_t e = epoch_of(t);
  std::vector<NodeWeight> out;
  for (std::uint32_t past = 0; past < e; ++past) {
    const auto w = make_epoch(past)->release_weights(std::uint64_t{1} << past);
    out.insert(out.end(), w.begin(), w.end());
  }
  const auto w = make_epoch(e)->release_weights(t - (std::uint64_t{1} << e) + 1);
  out.insert(out.end(), w.begin(), w.end());
  return out;
}

double EpochTreeNoise::mu() const {
  // Parallel composition over epochs: the worst epoch. Tight calibration gives every epoch the same
  // μ; paper's μ_e falls with e. Epochs past 63 cannot occur.
  double worst = 0.0;
  for (std::uint32_t e = 0; e <= kMaxEpoch; ++e)
    worst = std::max(worst, l2_sensitivity_ * std::sqrt(e + 1.0) / epoch_sigma(e));
  return worst;
}

void EpochTreeNoise::save(proto::ContinualNoiseState& out) const {
  if (current_) current_->save(out);
  out.set_strategy(name());
  out.set_steps(steps_);
}

void EpochTreeNoise::load(const proto::ContinualNoiseState& in) {
  if (in.strategy() != name())
    throw CorruptInput("tree noise state: strategy is '" + in.strategy() + "', this stream has '" + name() + "'");
  if (in.steps() == 0) {
    if (in.has_tree()) throw CorruptInput("tree noise state: a tree before the first step");
    current_.reset();
    steps_ = 0;
    return;
  }
  const std::uint32_t e = epoch_of(in.steps());
  auto tree = make_epoch(e);
  tree->load(in);  // checks kind, σ, epoch, and that its local steps (from 2^e) reach in.steps()
  current_ = std::move(tree);
  steps_ = in.steps();
}

std::unique_ptr<ContinualNoise> make_tree_noise(const TreeNoiseOptions& options, Eigen::Index size) {
  check_participation(options.participation);
  if (options.horizon == 0)
    return std::make_unique<EpochTreeNoise>(options.kind, options.l2_sensitivity, options.target, options.calibration,
                                            size, static_cast<double>(options.participation.max_rows));
  const std::uint32_t levels = tree_levels(options.horizon);
  double unit_factor = 1.0;
  if (feasible_steps(options.horizon, options.participation) > 1) {
    const TreeParticipation bound = tree_participation(options.horizon, options.participation);
    unit_factor = options.calibration == privacy::Calibration::paper ? std::sqrt(bound.max_level_squared)
                                                                     : std::sqrt(bound.squared / levels);
  }
  const double sigma = privacy::tree_node_sigma(levels, options.l2_sensitivity * unit_factor, options.target,
                                                options.calibration);
  return std::make_unique<TreeNoise>(options.kind, options.horizon, sigma, options.l2_sensitivity, size);
}

}  // namespace dpstream::stream
