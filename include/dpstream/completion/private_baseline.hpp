// PrivateBaseline: privately estimated global and item means, shrunk by their noisy counts, with each
// user's own bias computed locally — the model a private recommender has to beat, and the centring of
// the private ALS that fits what it leaves (dpam.hpp).
//
// Released, ratings first clipped to the public scale [low, high] (counted), c = its centre, B = its
// half range, m_i = user i's number of ratings, w_i = 1/√m_i:
//   global block: (Σ_i 1, Σ_i (x̄_i − c)/B)                — every user once, x̄_i her mean rating;
//   item block:   for every item j, (Σ_{i rated j} w_i, Σ_{i rated j} w_i (x_ij − c)/B).
// Each block gets N(0, σ²) on every coordinate (its own σ), snapped (snap.hpp).
//
// Privacy contract
//  * Unit: one user, all her ratings. Neighbours: add/remove one user. The item catalogue and the
//    rating scale are public.
//  * Sensitivity, ℓ2, of each block: √2. Global: the count moves by 1 and the sum by |x̄_i − c|/B ≤ 1.
//    Items: she moves, in each item she rated, the count by w_i and the sum by ≤ w_i; Σ_j w_i² = 1, so
//    ‖Δ‖₂² ≤ Σ_j 2w_i² = 2. The weights need no cap on her number of ratings: they normalise her
//    contribution whatever it is (a heavy user's ratings each count less).
//  * Together the two blocks are one Gaussian mechanism, μ-GDP with μ² = 2/σ_g² + 2/σ_b² (Dong, Roth
//    & Su 2019), which is exactly (ε, δ)-DP for the analytic Gaussian's (ε, δ) at μ (Balle & Wang
//    2018). PrivateBaseline calibrates μ to its target and splits μ² between the blocks
//    (global_share); it charges its accountant once, as one Gaussian release of sensitivity μ at
//    σ = 1, before reading any data.
//  * Post-processing (free): μ̂ = c + B·Ŝ/N̂ (N̂ floored at 1, μ̂ clipped to the scale);
//    b̂_j = ĉ_j R_j / (ĉ_j (ĉ_j + λ) + B²σ_b²/τ²) with ĉ_j = max(noisy weighted count, 0) and
//    R_j = B·ŝ_j − ĉ_j (μ̂ − c) the noisy weighted residual sum: the posterior mean of b_j under a
//    N(0, τ²) prior when R_j ≈ ĉ_j b_j plus noise of variance λτ²ĉ_j (the ratings' own spread) +
//    B²σ_b² (the release's) — an item whose count is lost in the noise gets b̂_j → 0, never a
//    noise-sized bias.
//  * Joint DP: user i's own bias b_i (item_model.hpp, fold_in_user) reads the release and her ratings
//    only; predictions served to her are as private, for everybody else, as the release.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <Eigen/Core>

#include "dpstream/completion/item_model.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::completion {

struct BaselineOptions {
  RatingScale scale;
  double item_shrinkage = 2.0;      // λ > 0, in weighted-count units (w_i = 1/√m_i)
  double item_bias_prior_sd = 0.5;  // τ > 0: the spread of item biases the shrinkage assumes
  void validate() const;            // InvalidParameter naming the field
};

// The noise of one release: σ of the global and of the item block (each of ℓ2 sensitivity √2).
struct BaselineNoise {
  double global_sigma = 0.0;
  double item_sigma = 0.0;
  double mu() const;  // √(2/σ_g² + 2/σ_b²): the release's GDP parameter
};

// The two blocks (header layout): global (2 entries) and items (2 per item: weighted count, weighted
// centred sum / B).
struct BaselineStatistics {
  Eigen::VectorXd global;
  Eigen::VectorXd items;
  std::uint64_t ratings_clipped = 0;  // ratings outside the scale, clipped first
};

// The exact blocks of a ratings matrix (no noise): what a release noises.
BaselineStatistics baseline_statistics(const RatingsMatrix& train, const RatingScale& scale);

// One user's terms of the two blocks, added into `global` and `items`: the only place a user's data
// enters the baseline (the batch release, the online Recommender and the audits use it). Returns her
// ratings clipped to the scale.
std::uint64_t add_user_baseline_terms(const RatingScale& scale, std::span<const std::pair<Eigen::Index, double>> ratings,
                                      Eigen::Ref<Eigen::VectorXd> global, Eigen::Ref<Eigen::VectorXd> items);

// The post-processing of released (noisy) blocks: μ̂, b̂_j and ĉ_j (header), rank 0. item_sigma is the
// noise σ of the item block (the shrinkage's B²σ_b² term).
ItemModel baseline_model(const Eigen::Ref<const Eigen::VectorXd>& global, const Eigen::Ref<const Eigen::VectorXd>& items,
                         const BaselineOptions& options, double item_sigma);

struct BaselineRelease {
  ItemModel model;                    // rank 0
  BaselineStatistics released;        // the noisy blocks the model is computed from
};

// One release of the two blocks with the given σ's (both > 0), and its post-processing. Charges
// nothing: a caller that composes it with more (dpam.hpp) accounts for the whole.
BaselineRelease release_baseline(const RatingsMatrix& train, const BaselineOptions& options,
                                 const BaselineNoise& noise, privacy::NoiseSource& source);

// The GDP μ that is exactly (ε, δ)-DP for a target: 1/σ of the analytic Gaussian at sensitivity 1.
double gdp_mu_for_target(const privacy::EpsDelta& target);

class PrivateBaseline {
 public:
  // global_share ∈ (0, 1): the part of μ² the global block gets. Seeded: reproducible, NOT secure;
  // unset: the secure source. InvalidParameter naming the field.
  PrivateBaseline(const BaselineOptions& options, const privacy::EpsDelta& target, double global_share = 0.25,
                  std::optional<std::uint64_t> seed = std::nullopt);
  ~PrivateBaseline();

  const BaselineNoise& noise() const noexcept { return noise_; }
  bool secure() const noexcept;
  // Charges `budget` once, then releases. BudgetExhausted: nothing read or drawn.
  BaselineRelease train(const RatingsMatrix& train, const privacy::Budget& budget,
                        const std::string& label = "private baseline");

 private:
  BaselineOptions options_;
  privacy::EpsDelta target_;
  BaselineNoise noise_;
  std::unique_ptr<privacy::NoiseSource> source_;
};

}  // namespace dpstream::completion
