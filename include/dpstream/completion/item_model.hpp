// ItemModel: the public, item side of a biased matrix-factorisation recommender, and how a user folds
// herself in against it, alone.
//
//   rating(i, j) ≈ clip(μ + b_j + b_i + u_iᵀ v_j, [low, high])
//
// μ, b_j and v_j are public (a private release's post-processing: private_baseline.hpp, dpam.hpp);
// b_i and u_i are the user's own, computed from the public side and her ratings only (fold_in_user).
// That split is what joint differential privacy rests on (Kearns et al. 2014; the "billboard" of Jain,
// Thakkar & Thakurta, ICML 2018): what user i is served depends on others' data only through the public
// release, so it is as private as the release; her own factor is never released.
//
// Rank 0 (no factors) is the baseline alone: μ + b_j + b_i.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>

#include <Eigen/Core>

#include "dpstream/completion/ratings_matrix.hpp"

namespace dpstream::completion {

// The public rating scale [low, high]: ratings are clipped to it before any release (the clipping is
// counted by the caller) and predictions are clipped to it. low < high, both finite.
struct RatingScale {
  double low = 0.5;
  double high = 5.0;

  double center() const noexcept { return 0.5 * (low + high); }
  double half_range() const noexcept { return 0.5 * (high - low); }
  double clip(double x) const noexcept { return x < low ? low : (x > high ? high : x); }
  void validate(const char* field) const;  // InvalidParameter naming `field` when not low < high finite
};

// How a user's own bias and factor are fitted (local ridge regressions, no noise).
struct FoldInOptions {
  double bias_shrinkage = 5.0;          // λ_b ≥ 0: b_i = Σ (x − μ − b_j) / (m_i + λ_b)
  double factor_regularization = 1.0;   // λ_u > 0 of the ridge solve for u_i
  double factor_bound = 1.0;            // B_u > 0: ‖u_i‖₂ clipped to it (the release's sensitivity needs it)
  // Serving: the user keeps her factor only if, fitted on one half of her ratings, it predicts the
  // other half better than her bias alone (two folds, alternate ratings); else u_i = 0 and she is
  // served the baseline. Her own data only (joint DP unchanged). A noise-sized model cannot then make a
  // user's predictions worse than the baseline's on her own evidence. Training (a V-step's
  // contributions) fits without it: a factor switched off contributes nothing, and V would never start.
  bool validate_factor = true;
  // How sure the check must be: her mean held-out gain (held_out_factor_gain) must exceed
  // validation_margin standard errors. 0: any gain. A margin trades users who gain for fewer who lose:
  // on the 10M-shaped set at ε = 1 (seed 1) test RMSE 0.9030 at 0, 0.9051 at 2, 0.9062 at 3; where the
  // factors carry nothing, DpamAls's model gate (dpam_als.hpp) is what keeps the baseline's RMSE.
  double validation_margin = 0.0;
  void validate() const;                // InvalidParameter naming the field
};

// One user's private part.
struct UserModel {
  double bias = 0.0;
  Eigen::VectorXd factor;  // rank entries (empty at rank 0)
  bool factor_clipped = false;
  bool factor_declined = false;  // validate_factor set her factor to 0
};

struct ItemModel {
  RatingScale scale;
  double global_mean = 0.0;         // μ
  Eigen::VectorXd item_bias;        // b_j, items entries
  Eigen::MatrixXd item_factors;     // items × rank (rank 0: baseline only); rows of 0 for items left out
  Eigen::VectorXd item_weight;      // the release's noisy (weighted) count per item, clamped at 0

  Eigen::Index items() const noexcept { return item_bias.size(); }
  Eigen::Index rank() const noexcept { return item_factors.cols(); }
  // μ + b_j (the baseline's item part).
  double item_baseline(Eigen::Index item) const { return global_mean + item_bias[item]; }
  // clip(μ + b_j + b_i + u_iᵀ v_j); an item outside [0, items): InvalidParameter.
  double predict(const UserModel& user, Eigen::Index item) const;
};

// How much her factor helps her, by her own ratings alone: fitted on alternate halves of them (two
// folds), the gain on each held-out rating of her factor over her bias alone (the difference of
// their squared errors). Fewer than 4 ratings: none (no fold to hold out).
struct HeldOutGain {
  double mean = 0.0;            // mean gain per held-out rating
  double standard_error = 0.0;  // of that mean (sample sd / √ratings)
  std::size_t ratings = 0;
};
std::optional<HeldOutGain> held_out_factor_gain(const ItemModel& model, const FoldInOptions& options,
                                                std::span<const std::pair<Eigen::Index, double>> ratings);

// The user's bias (against μ + b_j) and then her factor (ridge regression of the remaining residuals on
// the public v_j, clipped to B_u), from her (item, rating) pairs alone. Ratings are clipped to the scale.
// Items outside [0, items): InvalidParameter naming the item; so is a non-finite rating, and a fit whose
// bias or factor is not finite (an overflowing model: a NaN norm would pass the B_u clip).
UserModel fold_in_user(const ItemModel& model, const FoldInOptions& options,
                       std::span<const std::pair<Eigen::Index, double>> ratings);
// The same for user `user` of a ratings matrix (her row).
UserModel fold_in_user(const ItemModel& model, const FoldInOptions& options, const RatingsMatrix& ratings,
                       Eigen::Index user);

}  // namespace dpstream::completion
