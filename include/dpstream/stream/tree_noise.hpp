// Binary-tree noise for continual release (Analyze Gauss §4; Dwork, Naor, Pitassi & Rothblum 2010;
// Chan, Shi & Song 2011), the Honaker variance-reduced streaming tree, and unbounded streams by
// doubling epochs.
//
// Privacy contract (for a sum whose one-row l2 sensitivity is Δ, e.g. L² for AᵀA with ‖a‖ ≤ L)
//  * Neighbouring relation: streams that differ in one row (zeroed in its slot, or replaced — Δ says
//    which; a removal that shifts later rows is not covered), single participation: a row enters one step and stays in every later prefix.
//    A unit in up to k steps ≥ b apart: participation.hpp (a proven upper bound here).
//  * Sensitivity: the tree over T steps has L = bit_width(T) levels (1 + log₂ T for T a power of
//    two). A row's step lies in at most L noised nodes, one per level, each moved by ≤ Δ: the vector
//    of node sums has l2 sensitivity Δ·√L.
//  * Noise: each noised node gets N(0, σ²) per coordinate, drawn once when the node completes and
//    reused by every later release; σ from privacy::tree_node_sigma (paper: basic composition over the
//    levels; tight: analytic Gaussian on Δ√L, the default).
//  * Guarantee: μ = Δ√L/σ Gaussian DP for the whole stream of T releases, i.e. the target (ε, δ).
//    Releases are post-processing of the node sums. One accountant charge covers the whole stream.
//
// Plain tree: release t sums the nodes of the binary digits of t (popcount(t) nodes), so
//   Var(N_t) = popcount(t)·σ², Cov(N_s, N_t) = (#shared nodes)·σ². Only nodes some release uses are
//   drawn: one node a step (the level-ctz(t) node; its lower right-hand descendants never appear in a
//   prefix). A row therefore lies in ≤ L drawn nodes (exactly L for step 1).
// Honaker (TensorFlow Privacy's EfficientTreeAggregator; Honaker 2015): every node of a completed
//   subtree is drawn, and a completed node of height h is replaced by the minimum-variance unbiased
//   combination of its own noisy sum and its children's estimates,
//     est_h = w_h·node_h + (1 − w_h)·(est_left + est_right),  w_h = V_h = 2^h/(2^{h+1} − 1),
//   whose variance is V_h·σ² (→ σ²/2). Var(N_t) = σ²·Σ_{bits h of t} V_h. Each step draws
//   ctz(t) + 1 nodes (2 amortized) and every step lies in exactly L drawn nodes. Same sensitivity.
// Unbounded streams (horizon 0): epoch e = 0, 1, 2, … covers steps [2^e, 2^{e+1}) with a fresh tree
//   of 2^e steps (e + 1 levels) calibrated to the same target. A row lies in one epoch only, and the
//   epochs' trees draw independent noise, so neighbouring streams change one epoch's input: the
//   stream is as private as the worst epoch (parallel composition), μ = max_e μ_e. Release t adds
//   the final (root) noise of every completed epoch; the price is σ_e growing like √(e+1).
//
// Cost: advance() is O(size) amortized (plain: one node draw and ~2 vector updates a step; Honaker:
// ~2 node draws). Memory: one noise vector per level, O(size·log T).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/continual_noise.hpp"

namespace dpstream::stream {

enum class TreeKind { plain, honaker };
const char* to_string(TreeKind kind) noexcept;  // "plain" | "honaker"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
TreeKind parse_tree_kind(const std::string& text);

// Called once for each node whose noise is drawn, with the global 1-based steps it covers
// (instrumentation for tests; never sees data or noise).
using NodeObserver = std::function<void(std::uint32_t epoch, std::uint32_t level,
                                        std::uint64_t first_step, std::uint64_t last_step)>;

// Number of levels of a tree over `horizon` steps: bit_width(horizon) (levels j with 2^j ≤ T).
std::uint32_t tree_levels(std::uint64_t horizon);

// A tree over a fixed horizon with a given per-node σ (draw_sigma() = node_sigma()).
class TreeNoise final : public ContinualNoise {
 public:
  // horizon ≥ 1; node_sigma finite > 0; l2_sensitivity finite > 0 (for mu()); size ≥ 1.
  TreeNoise(TreeKind kind, std::uint64_t horizon, double node_sigma, double l2_sensitivity,
            Eigen::Index size, std::uint32_t epoch = 0, std::uint64_t first_step = 1);

  std::string name() const override;
  std::string describe() const override;  // "binary tree" | "Honaker tree"
  double draw_sigma() const override { return node_sigma_; }
  std::uint64_t horizon() const noexcept override { return horizon_; }
  std::uint64_t steps() const noexcept override { return steps_; }
  Eigen::Index size() const noexcept override { return size_; }
  void advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) override;
  double release_variance(std::uint64_t t) const override;
  std::vector<NodeWeight> release_weights(std::uint64_t t) const override;
  double mu() const override;
  // Upper bound (participation.hpp): √(tree_participation(horizon).squared / levels).
  ParticipationBound participation_bound(const Participation& participation) const override;
  void save(proto::ContinualNoiseState& out) const override;
  void load(const proto::ContinualNoiseState& in) override;

  TreeKind kind() const noexcept { return kind_; }
  std::uint32_t levels() const noexcept { return levels_; }
  double node_sigma() const noexcept { return node_sigma_; }
  void set_observer(NodeObserver observer) { observer_ = std::move(observer); }

 private:
  friend class EpochTreeNoise;
  // Weight of a node of height h in its Honaker estimate's own noisy sum (V_h), 1 for plain trees.
  double own_weight(std::uint32_t height) const noexcept;
  void append_weights(std::uint32_t level, std::uint64_t index, double scale,
                      std::vector<NodeWeight>& out) const;

  TreeKind kind_;
  std::uint64_t horizon_;
  std::uint32_t levels_;
  double node_sigma_;
  double l2_sensitivity_;
  Eigen::Index size_;
  std::uint32_t epoch_;
  std::uint64_t first_step_;  // global step of this tree's step 1 (epochs)
  std::uint64_t steps_ = 0;
  // held_[j]: the noise estimate of the latest completed level-j node. It is live exactly at the set
  // bits of steps_ (the nodes of the latest release, each the left sibling of a future parent); other
  // levels hold stale buffers kept for reuse.
  std::vector<Eigen::VectorXd> held_;
  Eigen::VectorXd chain_, draw_;  // scratch for the Honaker recursion
  NodeObserver observer_;
};

// Unbounded stream: doubling epochs of trees, each calibrated to the same target (see above).
class EpochTreeNoise final : public ContinualNoise {
 public:
  // unit_factor ≥ 1: every epoch is calibrated for sensitivity Δ·unit_factor (k for a unit with k
  // steps, participation.hpp), while mu() stays the one-row value.
  EpochTreeNoise(TreeKind kind, double l2_sensitivity, privacy::EpsDelta target,
                 privacy::Calibration calibration, Eigen::Index size, double unit_factor = 1.0);

  std::string name() const override;
  // "binary tree" | "Honaker tree", as for a fixed horizon: the tools' summaries and plots said so
  // before this existed and still do (horizon() = 0 tells the doubling epochs apart).
  std::string describe() const override;
  // epoch_sigma of the latest release's epoch, e = bit_width(max(1, steps())) − 1: its nodes are the
  // ones drawn now. steps() is the owning ContinualSum's steps() (it counts a release only once
  // advance() has returned, and a checkpoint restores both to the same count).
  double draw_sigma() const override;
  std::uint64_t horizon() const noexcept override { return 0; }
  std::uint64_t steps() const noexcept override { return steps_; }
  Eigen::Index size() const noexcept override { return size_; }
  void advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) override;
  double release_variance(std::uint64_t t) const override;
  std::vector<NodeWeight> release_weights(std::uint64_t t) const override;
  double mu() const override;
  // {k, upper bound}: the supremum over epochs (participation.hpp), not attained.
  ParticipationBound participation_bound(const Participation& participation) const override;
  void save(proto::ContinualNoiseState& out) const override;
  void load(const proto::ContinualNoiseState& in) override;

  // σ of every node of epoch e.
  double epoch_sigma(std::uint32_t epoch) const;
  void set_observer(NodeObserver observer);

 private:
  std::unique_ptr<TreeNoise> make_epoch(std::uint32_t epoch) const;

  TreeKind kind_;
  double l2_sensitivity_;
  privacy::EpsDelta target_;
  privacy::Calibration calibration_;
  Eigen::Index size_;
  double unit_factor_;
  std::uint64_t steps_ = 0;
  std::unique_ptr<TreeNoise> current_;  // the epoch of step steps_ (null before the first step)
  NodeObserver observer_;
  mutable std::vector<double> sigma_cache_;  // epoch_sigma(e) for e < size
};

struct TreeNoiseOptions {
  TreeKind kind = TreeKind::plain;
  std::uint64_t horizon = 0;  // releases; 0 = unbounded (doubling epochs)
  // A strategy is calibrated to a sensitivity, not a PrivacySpec: its owner (ContinualSum) turns its
  // spec's relation and L into l2_sensitivity, and draws from the source the spec makes.
  double l2_sensitivity = 1.0;
  privacy::EpsDelta target{1.0, 1e-6};
  privacy::Calibration calibration = privacy::Calibration::tight;
  // The privacy unit's participation (participation.hpp); the default is one row, one step.
  Participation participation;
};

// Calibrates and builds the strategy: TreeNoise with σ = tree_node_sigma(levels, Δ', target,
// calibration) for a fixed horizon, EpochTreeNoise for horizon 0. Δ' = Δ for one step (k = 1);
// for a unit, tight: Δ·participation_bound().factor (the whole tree's bound), paper (basic
// composition over levels): Δ·√(the largest level's bound); unbounded: Δ·k. Then unit_mu() is the
// target's μ (tight) or below it (paper), and mu() the one-row value.
std::unique_ptr<ContinualNoise> make_tree_noise(const TreeNoiseOptions& options, Eigen::Index size);

}  // namespace dpstream::stream
