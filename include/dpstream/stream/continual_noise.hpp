// ContinualNoise: the noise strategy of a continual-release sum, behind one interface.
//
// Every strategy is a factorization mechanism (Denisov et al. 2022): the release at
// step t is the exact prefix sum S_t plus noise N_t = Σ_nodes w_t(node)·z_node, where the z_node are
// independent N(0, σ_node²) vectors drawn once and kept. Equivalently the strategy releases
// noisy node sums (a Gaussian mechanism on the data, "C x + z") and every S_t + N_t is a fixed linear
// function of them (post-processing). So a strategy only has to say
//   * which node noise a step adds, drawn once (advance), never re-drawn;
//   * its closed-form per-coordinate variance Var(N_t) and covariance Cov(N_s, N_t);
//   * its privacy: the whole mechanism's Gaussian-DP parameter μ for one row of l2 sensitivity Δ;
//   * for reports: the σ of its draws and itself in words, so callers need not know the concrete class.
// The data never enters a strategy, so its state holds no raw data and the noise it produces is
// independent of the stream. The binary tree and the Honaker tree are in tree_noise.hpp;
// matrix-factorization strategies (square-root Toeplitz, BLT) fit the same interface.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/stream/participation.hpp"

namespace dpstream::proto {
class ContinualNoiseState;
}

namespace dpstream::stream {

// One raw noise draw of a strategy and its weight in a release: N_t = Σ weight·z_node, with z_node a
// unit-variance node noise (the weight includes σ_node). Nodes are named (epoch, level, index): the
// node of `level` with 1-based `index` covers steps ((index−1)·2^level, index·2^level] of its epoch.
struct NodeWeight {
  std::uint32_t epoch = 0;
  std::uint32_t level = 0;
  std::uint64_t index = 0;
  double weight = 0.0;
};

class ContinualNoise {
 public:
  virtual ~ContinualNoise() = default;

  virtual std::string name() const = 0;
  // The strategy in words, for summaries and plots ("binary tree", "BLT (4 buffers)", …); name() is
  // the identifier checkpoints record.
  virtual std::string describe() const = 0;
  // σ of each raw noise draw z_node (per coordinate): a tree's node σ, a factorization's per-step σ.
  // Where σ varies over the stream (EpochTreeNoise) it is that of the latest release's newest draws,
  // or of the first release before any is made: the σ a report of the stream's current state gives.
  // It says how large each draw is; release_variance(t) says how noisy release t is.
  virtual double draw_sigma() const = 0;
  // Number of releases the strategy can make; 0 means unbounded.
  virtual std::uint64_t horizon() const noexcept = 0;
  // Releases made so far.
  virtual std::uint64_t steps() const noexcept = 0;
  // Length of the noise vector (the value's coordinates).
  virtual Eigen::Index size() const noexcept = 0;

  // Moves to release steps()+1: draws the node noise that completes there (once; it is kept) and
  // turns `release_noise` from N_{t−1} (zero before the first step) into N_t. Throws InvalidParameter
  // past the horizon or for a vector of the wrong size.
  virtual void advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) = 0;

  // Closed forms, per coordinate, for 1-based steps (no draw needed): Var(N_t) and Cov(N_s, N_t).
  virtual double release_variance(std::uint64_t t) const = 0;
  double release_covariance(std::uint64_t s, std::uint64_t t) const;
  // The linear map from node noise to N_t (tests and documentation; release_covariance uses it).
  virtual std::vector<NodeWeight> release_weights(std::uint64_t t) const = 0;

  // Privacy of the whole stream of releases: the mechanism is μ-GDP for neighbouring streams that
  // differ in one row of l2 sensitivity Δ (the Δ it was built with). Its (ε, δ) profile is the
  // Gaussian mechanism's with sensitivity μ and σ = 1 (Balle & Wang 2018).
  virtual double mu() const = 0;
  // Privacy for a unit under (k, b)-participation (participation.hpp: a unit's rows in at most k
  // steps, two of them ≥ b apart, each row of sensitivity Δ): the factor by which her sensitivity
  // exceeds one row's, and whether it is exact or a proven upper bound (the strategy's header says
  // which). k = 1: {1, exact}.
  virtual ParticipationBound participation_bound(const Participation& participation) const = 0;
  // μ for neighbouring streams that differ in one unit's rows: mu() × participation_bound().factor
  // (mu() itself for k = 1).
  double unit_mu(const Participation& participation) const;

  // Checkpoint: the drawn node noise still needed and the position. load() refuses a state made
  // with other parameters (CorruptInput naming the field).
  virtual void save(proto::ContinualNoiseState& out) const = 0;
  virtual void load(const proto::ContinualNoiseState& in) = 0;
};

}  // namespace dpstream::stream
