// FplOnlinePca: online PCA by follow-the-perturbed-leader (Dwork, Talwar, Thakurta & Zhang, "Analyze
// Gauss", STOC 2014, §4: Algorithm 2 and the private tree version behind Theorem 8).
//
// Protocol (Analyze Gauss §4): before row t arrives the learner holds a k-dimensional subspace
// V̂_t (a d × k orthonormal basis), chosen from rows 1..t−1 only; row t then earns the gain
// ‖V̂_tᵀa_t‖² ∈ [0, ‖a_t‖²]. Regret = OPT − Σ gains, OPT = Σ top-k eigenvalues of Σ a aᵀ
// (eval/regret.hpp). V̂_1 is data-independent: the first k coordinate axes (Algorithm 2, line 1).
// A refresh sets V̂ to the top k of a leader matrix Ĉ by *algebraic* eigenvalue (never an SVD or
// largest |λ|: Ĉ is indefinite), warm-started from the previous basis (subspace.hpp).
//
// Modes — where Ĉ comes from:
//  * follow_the_leader: Ĉ = C_t = Σ_{τ≤t} a_τ a_τᵀ exactly. NOT private: the non-private baseline
//    (its regret is linear on an adversarial stream).
//  * perturbed_leader: Algorithm 2 as printed: Ĉ = C_t + E_t with a FRESH symmetric Gaussian E_t
//    (Algorithm 1's shape and σ for `perturbation`) at every refresh. Each refresh alone is an
//    (ε, δ)-DP release of C_t, but the run as a whole is NOT differentially private: m refreshes of
//    nested prefixes compose to about (m·ε, m·δ) (§4: "overall it is not"). Here ε is a regularisation knob (Theorem 9:
//    E[Regret] ≤ (1 − e^{−ε})·OPT + E S_k(E) + m·δ + 1 on oblivious streams).
//  * private_tree: Ĉ is a release of a ContinualCovariance (stream/continual_sum.hpp) the learner
//    is attached to: tree noise, each node drawn once. The product.
//
// Privacy contract (private_tree)
//  * Neighbouring relation, sensitivity, calibration and (ε, δ): those of the attached
//    ContinualCovariance (one row zeroed in its slot, or replaced — a removal that shifts later rows
//    is not covered; ‖a‖ ≤ L, Δ = L² per step, Δ·√levels for the
//    tree; one accountant charge for the whole stream). The learner reads nothing but its releases,
//    so V̂_1, …, V̂_m are post-processing: the whole sequence of subspaces is (ε, δ)-DP for the
//    stream's target, and this object spends nothing of its own (privacy_spent() says so).
//  * Adaptivity: rows may depend on earlier subspaces (the tree is a causal factorization and GDP
//    composes adaptively); the regret bounds, however, are stated for oblivious streams.
//
// Cost: a refresh is a warm block-Krylov top-k (a few products Ĉ·Q, Q of k + p columns) instead of
// an O(d³) eigendecomposition; scoring a row is O(dk). follow/perturbed modes also keep the exact
// Σ a aᵀ (a CovarianceAccumulator: O(d²) memory, GEMM-speed updates).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/accumulators.hpp"
#include "dpstream/stream/continual_sum.hpp"

namespace dpstream::proto {
class FplLearner;
}  // namespace dpstream::proto

namespace dpstream::pca {

enum class FplMode { follow_the_leader, perturbed_leader, private_tree };
const char* to_string(FplMode mode) noexcept;  // "follow_the_leader" | "perturbed_leader" | "private_tree"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
FplMode parse_fpl_mode(const std::string& text);

// The refresh settings FPL uses by default in each mode. Besides the residual rule, a refresh stops
// as soon as the captured variance tr(V̂ᵀĈV̂) is certified within variance_tolerance (relative) of
// Ĉ's best k-subspace (subspace.hpp, RefreshOptions::variance_tolerance): the gain depends on V̂
// only through the variance it captures, and inside a cluster of eigenvalues (the edge of the noise
// bulk) the basis is ill-determined anyway; the certificate is what the regret needs.
//  * follow_the_leader: 1e-3. The baseline's regret is small (0.24% of OPT on Fashion-MNIST), so
//    its leader must be solved well below that.
//  * perturbed_leader, private_tree: 1e-2, an approximate leader within 1% of the perturbed
//    objective. The perturbation itself moves that objective by far more: the top-k sum of Ĉ = C + E
//    differs from C's by up to k·‖E‖₂ (≈ k·2σ√d, e.g. ~35% of OPT at the end of the Fashion-MNIST
//    replay of dpstream-replay's defaults), so solving it to 0.1% buys nothing: on that replay the
//    regret moves by far less than its spread across noise seeds, for half the block products
//    (docs/performance.md).
//  Both stop earlier where the leader's noise makes the rest pointless (kNoiseFloorShare).
RefreshOptions fpl_refresh_defaults(FplMode mode);

// The noise floor of a refresh of a noisy leader Ĉ = C + E. Even the exact top k of Ĉ captures up to
// S_k(E) + S_k(−E) ≤ 2k·‖E‖₂ less of C than C's own best (Ky Fan, Weyl), and a basis whose certified
// shortfall on Ĉ is δ loses at most δ more. So follow(Ĉ, ‖E‖₂) also stops once δ ≤
// kNoiseFloorShare·k·‖E‖₂: 2.5% of that bound, whatever variance_tolerance would still ask. It
// binds where the noise dominates — early in a stream, at large d (at d = 2048, 8,192 rows, ε = 1
// the releases are mostly noise and the 1e-2 rule took 15 block products a refresh, the floor 7) —
// and not where the signal does (the 1e-2 rule stops first there). Why 0.05: on Fashion-MNIST
// (dpstream-replay, seeds 1–3) regret/OPT moved by −0.02 (blt) and +0.02 points (separable) against
// no floor, within the seeds' spread; 0.1 moved them by −0.11 and +0.07 (docs/performance.md).
inline constexpr double kNoiseFloorShare = 0.05;
// ‖E‖₂ of a d × d symmetric Gaussian matrix whose off-diagonal entries have variance v: ≈ 2√(d·v),
// the edge of the semicircle (the diagonal's variance does not move it). Public: it depends on the
// mechanism's parameters only. InvalidParameter for d < 1 or v < 0 / not finite.
double noise_spectral_norm(Eigen::Index d, double off_diagonal_variance);

struct FplOptions {
  Eigen::Index k = 1;                    // 1 ≤ k ≤ dimension
  FplMode mode = FplMode::private_tree;
  // private_tree: refresh on every refresh_every-th release of the attached stream (its block B sets
  // the rows between releases). follow_the_leader / perturbed_leader: refresh every refresh_every
  // rows (B). ≥ 1.
  std::uint64_t refresh_every = 1;
  // perturbed_leader only: E_t is Algorithm 1's noise for these parameters; perturbation.privacy.noise
  // is its source (seed set: reproducible, NOT secure; unset: the secure source).
  privacy::SymmetricGaussianMechanism::Options perturbation;
  // Unset: fpl_refresh_defaults(mode).
  std::optional<RefreshOptions> refresh;
};

class FplOnlinePca {
 public:
  // InvalidParameter naming the bad option (dimension < 1, k out of [1, d], refresh_every = 0, bad
  // refresh or perturbation options).
  FplOnlinePca(Eigen::Index dimension, const FplOptions& options);
  // attach() registers a callback that points at this object: it is neither copied nor moved.
  FplOnlinePca(const FplOnlinePca&) = delete;
  FplOnlinePca& operator=(const FplOnlinePca&) = delete;

  // V̂_t, d × k orthonormal: the subspace the next row is scored against.
  const Eigen::MatrixXd& basis() const noexcept { return basis_; }
  // ‖V̂ᵀa‖² for one row (InvalidParameter for a wrong length), and for rows (one per matrix row).
  double gain(const Eigen::Ref<const Eigen::VectorXd>& row) const;
  Eigen::VectorXd gains(const Eigen::Ref<const Eigen::MatrixXd>& rows) const;

  // follow_the_leader / perturbed_leader: the rows, after they were scored. Refreshes each time
  // refresh_every rows have accumulated (a block may span several refreshes; each sees exactly the
  // rows before its boundary). InvalidParameter in private_tree mode (rows go to the stream) or for
  // a wrong length; InvalidRow naming the row and column of a non-finite entry. The norm bound is
  // the caller's (RowGuard's) business here: these modes promise no privacy.
  void update(const Eigen::Ref<const Eigen::VectorXd>& row);
  void update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows);

  // private_tree: subscribe to `stream`'s releases (the stream must have this dimension and must
  // not release after this object is gone). InvalidParameter in the other modes.
  void attach(stream::ContinualCovariance& stream);

  // One refresh from a leader matrix Ĉ (d × d, symmetric): V̂ ← its algebraic top k. update() and
  // the attached stream call it; a caller with releases from elsewhere (a checkpointed stream, a
  // log of releases) may too. In perturbed_leader mode the fresh E_t is added first.
  // noise_norm: ‖E‖₂ of the noise the leader carries (noise_spectral_norm), for the noise floor
  // (kNoiseFloorShare); 0 = none or unknown, the refresh then stops by its tolerance alone. attach()
  // passes the release's. InvalidParameter if negative or not finite.
  void follow(const Eigen::Ref<const Eigen::MatrixXd>& leader, double noise_norm = 0);
  // The same from the leader's lower triangle (SubspaceTracker::refresh_lower): same result, bit for
  // bit. The strict upper triangle is not read; outside perturbed_leader mode it is overwritten with
  // the mirror.
  void follow_lower(Eigen::Ref<Eigen::MatrixXd> lower, double noise_norm = 0);
  // The same from the leader's upper triangle (SubspaceTracker::refresh_upper), read in place: same
  // result, bit for bit; the strict lower triangle is neither read nor written. For a caller whose
  // leader is symmetric by construction (a stream's release): it skips follow()'s symmetry check.
  void follow_upper(const Eigen::Ref<const Eigen::MatrixXd>& upper, double noise_norm = 0);
  // follow_the_leader only: the same refresh when the caller already holds the leader's top k —
  // eval::RegretMeter::leader(), the top k of the same exact Σ a aᵀ — instead of solving it again.
  // The next follow() starts from it. InvalidParameter in the other modes (a private learner reads
  // only its releases; a perturbed one must add its noise) and for a top k of the wrong shape or
  // without orthonormal columns (within 1e-8).
  void follow_solved(const TopEigen& top);

  Eigen::Index dimension() const noexcept { return dimension_; }
  Eigen::Index k() const noexcept { return options_.k; }
  const FplOptions& options() const noexcept { return options_; }
  std::uint64_t refreshes() const noexcept { return refreshes_; }
  // Rows given to update() (follow/perturbed modes).
  std::uint64_t rows() const noexcept { return exact_ ? exact_->rows() : 0; }
  // The top-k eigenvalues of the last leader Ĉ, descending (empty before the first refresh).
  const Eigen::VectorXd& leader_values() const noexcept { return leader_values_; }
  const RefreshStats& refresh_stats() const noexcept { return tracker_.stats(); }
  // Whether the sequence of subspaces is differentially private as a whole (private_tree only).
  bool is_private() const noexcept { return options_.mode == FplMode::private_tree; }

  // Checkpoints (dpstream-replay --checkpoint): everything later calls depend on, so that a learner
  // restored onto a new object built with the same dimension and options continues bit-identically
  // (same bases, same refresh counts). A plain value: the caller chooses the file format. In
  // follow/perturbed modes it holds the exact Σ a aᵀ of the rows given to update(): raw data, as
  // sensitive as the rows. A private_tree learner holds only post-processing of releases.
  struct State {
    FplMode mode = FplMode::private_tree;
    Eigen::MatrixXd basis;                    // V̂: d × k
    Eigen::VectorXd leader_values;            // empty before the first refresh
    std::uint64_t refreshes = 0;
    SubspaceTracker::State tracker;           // warm start and refresh counters
    std::uint64_t rows = 0;                   // follow/perturbed: rows given to update()
    Eigen::VectorXd exact_sum;                // follow/perturbed: their Σ a aᵀ, packed (empty: no rows)
    // perturbed_leader with a seeded source: its state. With the secure source it is unset and a
    // restored learner draws its (fresh, per-refresh) perturbations from a new secure source.
    std::optional<privacy::SeededNoiseSource::State> perturbation_source;

    // Its checkpoint message (lib/proto/learner_states.proto; the pattern: base/message_seal.hpp).
    // A perturbed_leader learner's state holds a perturbation source, which has no place in the
    // message: save refuses it (InvalidParameter). load refuses a message of a mode other than
    // `mode`, the caller's learner's, and a matrix that does not fit its shape (CorruptInput naming
    // `field`); restore() checks the rest.
    void save(proto::FplLearner& out) const;
    static State load(const proto::FplLearner& in, FplMode mode, const std::string& field);
  };
  State state() const;
  // InvalidParameter naming what does not fit this learner (mode, shapes, non-finite values, a
  // seeded source state for a learner built with the secure one or the other way round).
  void restore(const State& state);
  // The learner's save / load pair: state() and restore() through State's, in this learner's mode.
  void save(proto::FplLearner& out) const { state().save(out); }
  void load(const proto::FplLearner& in, const std::string& field) {
    restore(State::load(in, options_.mode, field));
  }

 private:
  void ingest(const Eigen::Ref<const Eigen::MatrixXd>& rows);
  void check_row_length(Eigen::Index length, const char* where) const;
  double noise_floor(const char* fn, double noise_norm) const;  // the refresh's residual floor, checked
  template <class Leader, class Refresh>
  void refresh_from(const char* fn, Leader& leader, double noise_norm, Refresh refresh);
  void finish_refresh(const TopEigen& top);

  Eigen::Index dimension_;
  FplOptions options_;
  SubspaceTracker tracker_;
  Eigen::MatrixXd basis_;
  Eigen::VectorXd leader_values_;
  std::uint64_t refreshes_ = 0;
  std::optional<stream::CovarianceAccumulator> exact_;                  // follow/perturbed modes
  std::optional<privacy::SymmetricGaussianMechanism> perturbation_;     // perturbed mode
  std::unique_ptr<privacy::NoiseSource> noise_;                         // perturbed mode
  Eigen::MatrixXd leader_;                                              // scratch: C (+ E)
};

}  // namespace dpstream::pca
