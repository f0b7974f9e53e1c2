// StreamingPrivatePca: a private top-k estimate refreshed as rows arrive. Every B rows it runs a few
// rounds of the noisy power method (noisy_power_method.hpp) on the exact covariance of all rows so
// far, warm-started from its last release, and hands the new subspace to its subscribers.
//
//   rows ──update()──▶ check ‖a‖ ≤ L ──▶ exact Σaaᵀ ──every B rows──▶ noisy power rounds (warm) ──▶ subscribers
//
// Privacy contract
//  * Neighbouring relation: one row zeroed, its slot kept (privacy::Neighbours::zero_out_row), or one
//    row replaced, of the whole stream; every row ‖a‖₂ ≤ L, checked on entry (InvalidRow naming the
//    row; nothing is clipped: use RowGuard first). As in ContinualSum: the zeroed row stays a zero
//    row in its slot, so the refresh boundaries do not move. (A removal that shifted the later rows would change each later
//    refresh's prefix by two rows, one out and one in, and double Δ; that relation is not covered.)
//  * A row takes part in every refresh after it arrives, and each refresh is R = iterations (+1 with
//    eigenvalues) Gaussian rounds of sensitivity Δ (L², or √2·L² for replace; see the noisy power
//    method). The stream of ⌈horizon/B⌉ refreshes is therefore ⌈horizon/B⌉·R adaptively composed
//    rounds, jointly μ-GDP with μ = Δ√(⌈horizon/B⌉·R)/σ; σ is calibrated once so that this is the
//    target (ε, δ) for the whole stream (tight: analytic Gaussian). Warm starts read only earlier
//    releases: post-processing.
//  * Accounting: one charge at construction, for the whole stream, before any row is seen
//    (BudgetExhausted then, and nothing is built). Rows past the horizon are refused with
//    BudgetExhausted: the calibration covers that many only.
//  * Cost per refresh: R products C·X (d²k) and QRs (dk²); memory O(d²).
//
// Checkpoints (save / load, lib/proto/streaming_pca.proto, in the envelope of base/message_seal.hpp)
// hold the exact Σ a aᵀ of the rows seen (raw data: as sensitive as the rows), the latest release,
// the refresh count, the noise source's state and the accountant's ledger, so that a restored
// estimator continues bit-identically: a refresh published after the last checkpoint is made again
// with the same noise, never a fresh draw. A restore obeys the restore rules (stream/restore_rules.hpp):
// the accountant given takes the checkpoint's ledger and is never lowered (one saved without an
// accountant charges the one given, as construction does), and with options.journal (a release
// journal, base/release_journal.hpp, as ContinualSum's) a restored estimator publishes a refresh the
// journal holds only with the same values: fed other rows it refuses (InvalidParameter, nothing
// published, the estimator unusable after). Keep the checkpoint and its journal together.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/release_journal.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace dpstream::proto {
class StreamingPcaCheckpoint;
}

namespace dpstream::pca {

struct StreamingPrivatePcaOptions {
  std::uint64_t horizon_rows = 0;   // rows the stream is calibrated for, ≥ 1
  std::uint64_t refresh_every = 1;  // B ≥ 1: a refresh after every B rows
  // k, iterations (per refresh; default 2: the warm start is already close), target, calibration,
  // relation, row bound, seed. `runs` is set from horizon_rows and refresh_every.
  NoisyPowerMethodOptions refresh = [] {
    NoisyPowerMethodOptions o;
    o.iterations = 2;
    return o;
  }();
  std::string journal;  // the release journal's path, "" for none (header; as ContinualSumOptions::journal)
};

class StreamingPrivatePca {
 public:
  struct Refresh {
    std::uint64_t index;       // 1, 2, …
    std::uint64_t rows;        // rows it covers
    const PrivateSubspace& subspace;
  };
  using Subscriber = std::function<void(const Refresh&)>;

  // InvalidParameter naming the bad option; BudgetExhausted if `accountant` cannot cover the stream.
  StreamingPrivatePca(Eigen::Index dimension, const StreamingPrivatePcaOptions& options,
                      const privacy::Budget& budget);
  StreamingPrivatePca(StreamingPrivatePca&&) noexcept;
  StreamingPrivatePca& operator=(StreamingPrivatePca&&) noexcept;
  ~StreamingPrivatePca();

  void subscribe(Subscriber subscriber);
  void update(const Eigen::Ref<const Eigen::VectorXd>& row);
  void update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows);  // one row per matrix row

  // The latest release (empty before the first refresh).
  const PrivateSubspace& current() const noexcept { return current_; }
  std::uint64_t rows() const noexcept { return exact_.rows(); }
  std::uint64_t refreshes() const noexcept { return refreshes_; }
  std::uint64_t planned_refreshes() const noexcept { return planned_; }
  double sigma() const noexcept { return method_.sigma(); }
  double mu() const { return method_.mu(); }

  // Checkpoints (header comment; the pattern: base/message_seal.hpp). load takes the dimension,
  // options and budget the estimator was built with (other ones, or corrupt bytes: CorruptInput
  // naming the field); the budget takes the saved ledger through the restore rules, last.
  static constexpr base::SealedKind kSealed{"streaming PCA checkpoint", 1};
  void save(proto::StreamingPcaCheckpoint& out) const;
  static StreamingPrivatePca load(const proto::StreamingPcaCheckpoint& in, Eigen::Index dimension,
                                  const StreamingPrivatePcaOptions& options, const privacy::Budget& budget);
  std::string save() const;
  static StreamingPrivatePca load(const std::string& bytes, Eigen::Index dimension,
                                  const StreamingPrivatePcaOptions& options, const privacy::Budget& budget);

 private:
  struct NoCharge {};
  StreamingPrivatePca(Eigen::Index dimension, const StreamingPrivatePcaOptions& options,
                      const privacy::Budget& budget, NoCharge);
  void charge_stream();
  void check(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index) const;
  void refresh();
  void record_refresh();

  Eigen::Index dimension_;
  StreamingPrivatePcaOptions options_;
  std::uint64_t planned_;
  NoisyPowerMethod method_;
  stream::CovarianceAccumulator exact_;
  PrivateSubspace current_;
  std::uint64_t refreshes_ = 0;
  privacy::Budget budget_;
  base::StreamJournal journal_;  // none unless options' journal names one
  std::vector<Subscriber> subscribers_;
};

}  // namespace dpstream::pca
