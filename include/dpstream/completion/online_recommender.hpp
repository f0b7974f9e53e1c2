// Recommender: an online private recommender. Users arrive one at a time; each is served at once
// against the latest public ItemModel (folding herself in locally: joint DP, no budget), then her
// item-side statistics join one continual release, from which the public model is re-solved every
// `release_every` users. No retrain, one charge for the whole stream.
//
//   user i ─serve()─▶ fold_in_user against the serving model ─▶ her bias, factor, top-N (never released)
//          ─add()───▶ one packed row a_i ─▶ ContinualVectorSum (tree or BLT) ─every B users─▶ noisy prefix
//                                                   ─▶ baseline_model + solve_item_factor ─▶ ItemModel
//
// The row (dimension D = 2 + n·(2 + s), n items, s = statistics_stride(r)):
//   a_i = [ g·(1, (x̄_i − c)/B) | β·(w_i, w_i(x_ij − c)/B) per item | V-step terms per item ]
// the first two blocks are user i's terms of the private baseline's global and item blocks
// (add_user_baseline_terms, private_baseline.hpp), the third her terms of a DPAM V-step
// (add_user_v_step_terms, dpam_als.hpp: w_ij·upper(u uᵀ) and w_ij·r_ij·u, u her training fold-in,
// training_fold_in) against the current
// TRAINING model: the latest release's μ̂, b̂_j, ĉ_j and item factors, solved where the item is active
// and a data-independent N(0, init_sd²) draw elsewhere (so that factors can start). The serving model
// is the same with 0 for inactive items (served by the baseline). Before the first release both use
// the prior: μ = the scale's centre, no biases, counts 0 (training: the random init, serving: 0).
//
// Release t (noise sd σ_t per coordinate, from the stream): the blocks are rescaled, σ_global = σ_t/g,
// σ_item = σ_t/β, σ_V = σ_t; μ̂, b̂_j, ĉ_j = baseline_model(global/g, items/β, σ_item); item j is active
// when ĉ_j ≥ min_item_count_sds·σ_item, then v_j = solve_item_factor(its V-step block, σ_V).
//
// Privacy contract
//  * Unit: one user, all her ratings, and she takes part once (one user = one row of the stream).
//    Neighbours: the stream's rows are by position — one user's row zeroed, her slot kept (a user
//    with no ratings adds a zero row). Removing a user so that every later user moves up one slot
//    is NOT covered at this ε (each later block changes), except for the last arrival. The catalogue,
//    the scale, the arrival schedule's length and every option are public.
//  * Non-finite input is refused (InvalidParameter) before it reaches the stream: a rating, a
//    fold-in whose factor overflows, a row whose norm is NaN — nothing is added then.
//  * Sensitivity: ‖a_i‖₂ ≤ L = √(2g² + 2β² + Δ_a²), Δ_a = B_u√(B_u² + B_r²). Derivation: the global
//    block's two terms are 1 and |x̄ − c|/B ≤ 1 (ratings clipped to the scale, counted), so its norm²
//    ≤ 2g²; the item block has Σ_j w_i²(1 + ((x−c)/B)²) ≤ 2 with Σ_j w_i² = 1 (w_i = 1/√m_i), so ≤ 2β²;
//    the V-step block ≤ Δ_a² (dpam_als.hpp: Σ_j w_ij² = 1, ‖upper(uuᵀ)‖² ≤ B_u⁴, ‖r u‖² ≤ B_r²B_u²).
//    Nobody else's row moves when user i is removed: each row is a function of its user's ratings and
//    of earlier releases only (adaptively chosen rows; below). A user's items must be distinct
//    (InvalidParameter otherwise: a repeated item would break Σ w² = 1).
//  * Round-off: the stream is calibrated for L' = L(1 + 10⁻¹²) so that rows at the bound up to
//    rounding pass; a row above L' (impossible by the derivation) is scaled to L and counted
//    (RecommenderCounts::rows_clipped), never skipped.
//  * Shares: g and β are chosen so that 2g² : 2β² : Δ_a² = global_share : baseline_share : rest, i.e.
//    g = Δ_a√(global_share/(2·rest)), β = Δ_a√(baseline_share/(2·rest)), L = Δ_a/√rest: the μ² of
//    each release splits like DpamAls's.
//  * Mechanism and accounting: one ContinualVectorSum (continual_sum.hpp) with add/remove-row
//    neighbours and bound L', plain tree (unbounded) or BLT (fixed horizon of releases), Gaussian:
//    μ-GDP for the whole stream of releases, calibrated to the target (ε, δ), so the run is
//    (ε, δ)-DP whatever its length (a tree) or for its horizon (a BLT: more users are refused with
//    BudgetExhausted). Rows chosen adaptively from earlier releases are covered for Gaussian tree and
//    matrix-factorization mechanisms (Denisov, McMahan, Rush, Smith & Thakurta, NeurIPS 2022). The
//    budget's accountant (if accounted) is charged once, at construction, before any user is read.
//  * Joint DP: serve() reads the public serving model and the user's ratings only; her bias, factor,
//    predictions and top-N list are hers, never released.
//  * Ingestion: each block of users' sparse rows is summed here into one dense vector and given to
//    the stream with add_aggregate (block_aggregate.hpp), with the counts of a guard of bound L' that
//    every row passed (checked above) — the same sum update() would make, one dense O(D) pass per
//    block instead of per user.
//  * Noise: options.als.seed set → seeded (reproducible, NOT secure); unset → the secure source.
//
// Cost: add() O(m_i·s) plus the fold-in; a release O(D) (the stream) + O(n·r³) (the item solves);
// serve() the fold-in, top_n() O(n·r). Memory O(D·log T) for a tree, O(D·buffers) for a BLT.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/dpam_als.hpp"
#include "dpstream/completion/item_model.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/continual_sum.hpp"

namespace dpstream::completion {

struct RecommenderOptions {
  Eigen::Index items = 0;               // the public catalogue, ≥ 1
  // rank, baseline (scale, shrinkage), fold_in, residual_bound, item_regularization,
  // gram_noise_multiplier, item_weight_exponent, min_item_count_sds, init_sd, global_share,
  // baseline_share, target and seed as DpamAls; `iterations` and the model gate (gate_*) are not used
  // (one row per user; no gate: a user is served before the data to judge the factors exists).
  DpamAlsOptions als;
  std::uint64_t release_every = 50;     // B ≥ 1: users per release
  stream::NoiseStrategy strategy = stream::NoiseStrategy::plain_tree;  // plain_tree or blt
  std::uint64_t horizon = 0;            // releases; 0 = unbounded (plain_tree only); blt needs ≥ 1
};

// What the curator counts (never released).
struct RecommenderCounts {
  std::uint64_t users = 0;                 // rows added
  std::uint64_t ratings_clipped = 0;       // ratings outside the scale, clipped
  std::uint64_t residuals_clipped = 0;     // V-step residuals over B_r
  std::uint64_t user_factors_clipped = 0;  // training fold-ins with ‖u‖ > B_u
  std::uint64_t rows_clipped = 0;          // rows above L' scaled to L (the derivation says 0)
};

struct Recommendation {
  Eigen::Index item = 0;
  double prediction = 0.0;
};

using UserRatings = std::span<const std::pair<Eigen::Index, double>>;

class Recommender {
 public:
  // Validates (InvalidParameter naming the field), calibrates the stream and charges `budget`
  // (if accounted) once for the whole stream (BudgetExhausted: nothing built). The accountant must
  // outlive this object (the stream keeps it for its checkpoints' ledger).
  explicit Recommender(const RecommenderOptions& options, const privacy::Budget& budget);
  ~Recommender();
  Recommender(const Recommender&) = delete;  // the stream's subscriber holds `this`
  Recommender& operator=(const Recommender&) = delete;

  // Her model against the latest serving model (fold_in_user); no budget, nothing recorded.
  UserModel serve(UserRatings ratings) const;
  // Her `n` best items by prediction (ties: the lower index), excluding the items in `rated`.
  std::vector<Recommendation> top_n(const UserModel& user, UserRatings rated, Eigen::Index n) const;
  double predict(const UserModel& user, Eigen::Index item) const { return serving_->predict(user, item); }

  // Her row joins the stream (single participation: call once per user). Releases and re-solves the
  // model when the block of release_every users completes. Items outside the catalogue or repeated:
  // InvalidParameter; past a BLT's horizon: BudgetExhausted; nothing changes then.
  void add(UserRatings ratings);
  // Releases the pending users now as a shorter block (no-op without any).
  void flush();

  // The packed row add() would put in the stream for these ratings now (dense, D entries), before
  // the norm check: for tests and audits.
  Eigen::VectorXd packed_row(UserRatings ratings) const;

  const ItemModel& model() const noexcept { return *serving_; }            // public: what serve() uses
  const ItemModel& training_model() const noexcept { return *training_; }  // public: what add() uses
  std::uint64_t releases() const noexcept;
  // The latest release (the noisy prefix, D entries, public) and its per-entry noise sd; throws
  // before the first.
  const Eigen::VectorXd& released() const;
  double release_sigma() const;
  std::uint64_t pending_users() const noexcept { return pending_; }
  const RecommenderCounts& counts() const noexcept { return counts_; }
  Eigen::Index items_left_out() const noexcept { return items_left_out_; }  // of the latest release
  Eigen::Index dimension() const noexcept { return dimension_; }
  double global_scale() const noexcept { return global_scale_; }      // g
  double baseline_scale() const noexcept { return baseline_scale_; }  // β
  double row_norm_bound() const noexcept { return row_bound_; }       // L (the stream's is L(1+1e-12))
  double mu() const;                                                  // the whole stream's GDP μ
  const privacy::EpsDelta& guarantee() const noexcept { return options_.als.target; }
  const RecommenderOptions& options() const noexcept { return options_; }
  bool secure() const noexcept;

 private:
  struct Sparse;
  void sparse_row(UserRatings ratings, Sparse& out) const;
  void on_release(const Eigen::VectorXd& prefix, double noise_variance);
  void push_block();

  RecommenderOptions options_;
  Eigen::Index dimension_ = 0;
  double global_scale_ = 0.0, baseline_scale_ = 0.0, row_bound_ = 0.0;
  std::unique_ptr<stream::ContinualVectorSum> stream_;
  std::unique_ptr<ItemModel> serving_, training_;
  Eigen::MatrixXd init_factors_;  // the data-independent N(0, init_sd²) draw
  Eigen::VectorXd block_sum_;     // pending users' rows, summed
  mutable Eigen::VectorXd scratch_;  // one user's terms (zero outside her entries between calls)
  std::uint64_t pending_ = 0;
  RecommenderCounts counts_;
  Eigen::Index items_left_out_ = 0;
};

}  // namespace dpstream::completion
