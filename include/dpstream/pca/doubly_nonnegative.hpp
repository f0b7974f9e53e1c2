// Reading a noisy second-moment matrix of nonnegative rows: projection toward the doubly
// nonnegative matrices (positive semidefinite and entrywise ≥ 0).
//
// When no row has a negative entry — a public fact about the domain (pixel intensities, counts,
// ratings, histograms), which RowGuardOptions::nonnegative enforces row by row — every matrix a
// continual release estimates (Σ a aᵀ over a prefix, or a weighted mean of block covariances, as
// StationaryEstimate's) is doubly nonnegative: a sum of a aᵀ is positive semidefinite, and each
// entry a_i a_j is ≥ 0. Both sets are closed and convex and hold the truth C, and the Frobenius
// projection P onto a closed convex set holding C never moves an estimate away from it:
// ‖P(Ĉ) − C‖_F ≤ ‖Ĉ − C‖_F. Each round here is two such projections (onto the PSD cone: negative
// eigenvalues set to 0; onto the nonnegative orthant: negative entries set to 0), so the guarantee
// holds after every step. It is post-processing of the release: privacy is unchanged.
//
// Why it matters for PCA: GOE-shaped release noise is orthogonally invariant, so no
// rotation-equivariant reading of a release — eigenvalue shrinkage of any kind — moves its top-k
// eigenvectors, and for a rotation-invariant prior the Bayes choice is among the release's own
// eigenvectors. The sign constraint is tied to the coordinates and does move them. On
// Fashion-MNIST (separable factorization, GOE noise, ε = 1, mean of seeds 1–3) it lowers
// regret/OPT from 5.40% to 5.03%.
//
// Alternating projections converge to a point of the intersection, not to the projection onto it
// (Dykstra's corrections would give that, but their intermediate iterates lose the step-by-step
// guarantee above). One round takes the gain: on Fashion-MNIST (dpstream-replay, separable, GOE,
// seed 1) 1, 2 and 4 rounds gave regret/OPT 5.022%, 5.025% and 5.025%.
//
// Cost: one PSD projection a round (linalg/psd_projection.hpp: the eigenpairs of the smaller side of
// the spectrum by MRRR, still O(d³); 1.8–2.2× faster than the full eigendecomposition at d = 784).
#pragma once

#include <cstdint>
#include <string>

#include <Eigen/Core>

#include "dpstream/linalg/psd_projection.hpp"

namespace dpstream::proto {
class DoublyNonnegativeReader;
}  // namespace dpstream::proto

namespace dpstream::pca {

// Replaces the symmetric matrix c by `rounds` rounds of (PSD projection, then entrywise max(·, 0)).
// The result is entrywise ≥ 0 and exactly symmetric. Throws InvalidParameter if c is not square,
// finite and symmetric (as subspace.hpp's functions), or if rounds < 1.
void project_doubly_nonnegative(Eigen::Ref<Eigen::MatrixXd> c, int rounds = 1);

struct DoublyNonnegativeOptions {
  int rounds = 1;               // rounds of project_doubly_nonnegative at a full solve; ≥ 1
  double refresh_ratio = 1.0 / 3.0;  // α: finite, ≥ 0; 0 = a full solve at every release (exact).
                                     // 1/3: the replay's choice (figures below)
};

// DoublyNonnegativeReader: the reading above applied to a sequence of releases C_1, C_2, … of one
// continual estimate, at a fraction of the cost, by reusing the PSD correction of an earlier release.
//
// What it computes. Release t (the t-th apply()) is a *full* release if t = 1 or t − s > α·s, where s
// is the last full release (α = refresh_ratio); the schedule depends on the release count only. At a
// full release: N = P₊(C_t) − C_t (= −P₋(C_t), the negative part of the spectrum removed; positive
// semidefinite) is kept, and C_t is replaced by project_doubly_nonnegative(C_t, rounds) (N is the
// first round's correction). At any other release: C_t is replaced by max(C_t + N_s, 0) entrywise —
// the stale correction of release s, then the orthant projection. Output: entrywise ≥ 0, exactly
// symmetric (C_t and N are). With α = 0 every release is full: the exact reading above.
//
// Why a stale correction works: a continual estimate after t releases changes by O(1/t) relative
// from one release to the next (the stationary estimate of --mechanism separable is a weighted mean
// of all blocks so far), so its negative eigenspace — which GOE-shaped noise fills with about half
// the spectrum — moves slowly, and a geometric schedule (recompute once the releases since the last
// full solve exceed α × the releases at it; with a release every B rows, the same in rows) keeps the correction's age a bounded fraction of the stream: full
// solves ≈ 1/α early ones + ln(T/(1/α))/ln(1 + α) over T releases, instead of T.
//
// What guarantee is lost. The exact reading is two Frobenius projections onto closed convex sets that
// hold the truth C, so it never moves an estimate away from C. C_t + N_s (s < t) is not a projection:
// it is not even PSD in general, and ‖C_t + N_s − C‖_F can exceed ‖C_t − C‖_F (by at most
// ‖N_s − N_t‖_F, the staleness). Only the final orthant clip is a projection onto a set holding C,
// so at a cheap release the one guarantee that holds is ‖max(X, 0) − C‖_F ≤ ‖X − C‖_F for
// X = C_t + N_s. The full releases keep the exact guarantee. It is post-processing of the releases
// either way: privacy is unchanged.
//
// Cost: a full release is one PSD projection (linalg/psd_projection.hpp, O(d³)) plus O(d²); a cheap
// release is O(d²): the symmetry check, a sum and a clip, two orders of magnitude cheaper at d = 784
// (figures: docs/performance.md, Kernels). Memory: one d × d matrix (N), and once apply() has
// projected a release itself, that projection's d × d and the projector's buffers (~2.5 d²), kept
// for the next: a projection in fresh buffers pays their page faults again.
// How α trades regret against full solves (Fashion-MNIST, seeds 1-3, α from 0 to 1/2) is measured
// in docs/tools.md (--nonnegative).
class DoublyNonnegativeReader {
 public:
  // InvalidParameter naming `rounds` or `refresh_ratio` if out of range, or `d` if < 1.
  explicit DoublyNonnegativeReader(Eigen::Index d, DoublyNonnegativeOptions options = {});

  // Reads the next release in place (see above). As project_psd, only c's lower triangle is read (a
  // release is exactly symmetric; within subspace.hpp's tolerance is accepted); both are written.
  // InvalidParameter if c is not d × d, finite and symmetric (then nothing changes).
  void apply(Eigen::Ref<Eigen::MatrixXd> c);
  // The same for a full release whose projection was computed elsewhere (full_projection(c),
  // e.g. ahead of time on another thread: it depends on c alone): c is read with it, bit for bit
  // as apply(c) would. InvalidParameter, nothing changed, if the next release is not full or the
  // shapes differ, and as apply() for a bad c.
  void apply_projected(Eigen::Ref<Eigen::MatrixXd> c, const Eigen::MatrixXd& projected);
  // The same two for a release given by its lower triangle (a caller that keeps one triangle: the
  // replay). The strict upper triangle is not read, and after a cheap release it holds no part of
  // the result: the reading is c's lower triangle (a full release writes both). No symmetry check
  // and no mirror, which were most of a cheap release's cost (figures above); InvalidParameter,
  // nothing changed, for a wrong size or a non-finite entry in the lower triangle.
  void apply_lower(Eigen::Ref<Eigen::MatrixXd> c);
  void apply_projected_lower(Eigen::Ref<Eigen::MatrixXd> c, const Eigen::MatrixXd& projected);
  // What a full release's reading starts from: the PSD projection of c's lower triangle, mirrored
  // (linalg::project_psd, by `projector`: one per thread), into `out`. c is not validated here
  // (apply_projected does).
  static void full_projection(const Eigen::Ref<const Eigen::MatrixXd>& c, Eigen::MatrixXd& out,
                              linalg::PsdProjector& projector);

  // Whether release `t` (1-based) is a full release when the last full one was `last_full` (0: none).
  static bool full_release(std::uint64_t t, std::uint64_t last_full, double refresh_ratio);
  // Whether the next apply() is a full release.
  bool next_is_full() const { return full_release(releases_ + 1, last_full_, options_.refresh_ratio); }

  std::uint64_t releases() const { return releases_; }        // apply() calls so far
  std::uint64_t full_solves() const { return full_solves_; }  // of them, full releases
  std::uint64_t cheap_steps() const { return releases_ - full_solves_; }
  std::uint64_t last_full() const { return last_full_; }      // the latest full release, 0 if none
  const DoublyNonnegativeOptions& options() const { return options_; }

  // Everything a continuation needs: a reader restored from state() reads the next releases exactly
  // as this one would (the correction N bit for bit).
  struct State {
    std::uint64_t releases = 0;
    std::uint64_t full_solves = 0;
    std::uint64_t last_full = 0;
    Eigen::MatrixXd correction;  // N of release last_full (d × d; empty before the first release)

    // Its checkpoint message (lib/proto/learner_states.proto; the pattern: base/message_seal.hpp).
    // The correction is exactly symmetric, so it goes as a packed lower triangle: save refuses one
    // that is not (InvalidParameter); load throws CorruptInput naming `field` for a triangle whose
    // values do not fit its size; restore() checks the rest.
    void save(proto::DoublyNonnegativeReader& out) const;
    static State load(const proto::DoublyNonnegativeReader& in, const std::string& field);
  };
  State state() const;
  // InvalidParameter if the state does not fit (shape, counts, a correction without a full release).
  void restore(const State& s);
  // The reader's save / load pair: state() and restore() through State's.
  void save(proto::DoublyNonnegativeReader& out) const { state().save(out); }
  void load(const proto::DoublyNonnegativeReader& in, const std::string& field) { restore(State::load(in, field)); }

 private:
  void check_release(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& c, bool lower_only) const;
  void read(const char* fn, Eigen::Ref<Eigen::MatrixXd> c, bool lower_only);
  void read_projected(const char* fn, Eigen::Ref<Eigen::MatrixXd> c, const Eigen::MatrixXd& projected,
                      bool lower_only);
  void read_full(Eigen::Ref<Eigen::MatrixXd> c, const Eigen::MatrixXd& projected);

  Eigen::Index d_;
  DoublyNonnegativeOptions options_;
  std::uint64_t releases_ = 0, full_solves_ = 0, last_full_ = 0;
  Eigen::MatrixXd correction_;
  linalg::PsdProjector projector_;  // the full releases apply() projects itself, and later rounds
  Eigen::MatrixXd projected_;        // apply()'s projection of a full release (its buffer reused)
};

}  // namespace dpstream::pca
