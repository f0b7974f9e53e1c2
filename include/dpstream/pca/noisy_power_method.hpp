// NoisyPowerMethod: private top-k eigenvectors of the covariance AᵀA by the noisy block power method
// (Hardt & Price 2014, "The noisy power method"; the rank-k, QR-orthonormalised form of private power
// iteration). Row-level privacy, for PCA of records; HR13's single-vector PPI with its coherence
// gate is entry-level (pca/private_power_iteration.hpp).
//
//   X_0: d × k orthonormal — data-independent (Gaussian, QR), or a given start (an earlier private
//        estimate: post-processing, so warm starts cost nothing);
//   for t = 1..T:  Y_t = C·X_{t−1} + G_t,  G_t ~ N(0, σ²)^{d×k};  X_t = QR(Y_t);
//   then, if asked, λ̂ᵢ = x_iᵀ C x_i + N(0, σ²) for the k columns of X_T.
//
// Privacy contract
//  * Neighbouring relation: add/remove one row, or replace one row; every row ‖a‖₂ ≤ L, checked
//    (InvalidRow naming the row).
//  * Sensitivity of one round, for any orthonormal X: ‖(C − C′)X‖_F ≤ ‖C − C′‖_F·‖X‖₂ = ‖aaᵀ‖_F = ‖a‖²
//    ≤ L² (add/remove), ‖aaᵀ − bbᵀ‖_F ≤ √2·L² (replace): Δ = privacy::covariance_sensitivity. The
//    eigenvalue vector (x_iᵀCx_i)ᵢ moves by (x_iᵀa)² ≥ 0 with Σᵢ (x_iᵀa)² ≤ ‖a‖², so by ≤ L² in l2
//    (add/remove) and ≤ √2·L² (replace, a difference of two such vectors): the same Δ.
//  * Accounting: the R = T (+1 with eigenvalues) releases are adaptively chosen Gaussian mechanisms
//    with the same Δ/σ, jointly μ-GDP with μ = Δ√R/σ (Dong, Roth & Su 2019, Cor 3.3). `tight`
//    (default): σ = analytic_gaussian_sigma(Δ√R, target), exactly the target. `paper`: HR13's PPI
//    formula σ = Δ·2ε⁻¹√(4R ln(1/δ)) with R rounds (valid and about 4× conservative by the exact
//    Gaussian profile, Balle & Wang 2018).
//    One Gaussian charge for the whole run, before any data is touched.
//  * Error (Hardt & Price Thm 1.1): with gap λ_k − λ_{k+1}, the noise must satisfy
//    ‖G‖ ≲ ε_err(λ_k − λ_{k+1}) for T ≈ λ_k/(λ_k − λ_{k+1})·log(d/ε_err) rounds; each extra round
//    raises σ by √R, so T trades convergence against noise. On Fashion-MNIST (60000 unit rows, d = 784,
//    k = 10, ε = 1, δ = 1e-6, dpstream-pca) the captured-variance ratio was 0.954 (T = 2), 0.974 (4),
//    0.973 (6), 0.964 (10), 0.947 (20): dpstream-pca's default is 5.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace dpstream::proto {
class NoisyPowerProgress;
}

namespace dpstream::pca {

struct NoisyPowerMethodOptions {
  Eigen::Index k = 1;        // 1 ≤ k ≤ d
  int iterations = 10;       // T ≥ 1
  bool release_values = true;
  // Target, calibration, relation (add_remove_row or replace_row), L and the noise's seed.
  privacy::PrivacySpec privacy;
  // Runs the calibration covers: σ is set for runs × R rounds (a stream of refreshes of one growing
  // dataset, each row in every run: StreamingPrivatePca). With runs > 1, run() refuses a run past
  // them (BudgetExhausted) and the caller charges the accountant once for all of them; with runs = 1
  // every run is a separate release, charged to the accountant it is given.
  int runs = 1;
  // 0: row level; k ≥ 1: unit level, all rows of one unit (at most k of them) added, removed or
  // replaced together: her rows change C by at most k·Δ (triangle inequality), so every round is
  // calibrated for k·Δ; rows are still checked against L. Bounding each unit to k rows is the
  // caller's (stream/contribution_bound.hpp).
  std::uint32_t max_rows_per_unit = 0;
};

// σ for `releases` adaptively composed rounds of sensitivity `sensitivity` at the target (see above).
double noisy_power_sigma(double sensitivity, int releases, const privacy::EpsDelta& target,
                         privacy::Calibration calibration);

class NoisyPowerMethod {
 public:
  // InvalidParameter naming the bad option.
  NoisyPowerMethod(Eigen::Index dimension, const NoisyPowerMethodOptions& options);

  // The rows of A (m × d): checked against L, then the run. `start` (d × k', any k' ≥ 1, orthonormalised
  // and padded with data-independent columns) must itself be private or data-independent.
  PrivateSubspace run(const Eigen::Ref<const Eigen::MatrixXd>& rows, const privacy::Budget& budget,
                      const Eigen::MatrixXd* start = nullptr);
  // From an exact Σ aaᵀ whose rows the caller vouches had ‖a‖ ≤ L.
  PrivateSubspace run(const stream::CovarianceAccumulator& exact, const privacy::Budget& budget,
                      const Eigen::MatrixXd* start = nullptr);

  double sigma() const noexcept { return sigma_; }
  double sensitivity() const noexcept { return sensitivity_; }
  // The Gaussian-DP μ = Δ√(runs·R)/σ of all the runs the calibration covers.
  double mu() const;
  int runs_done() const noexcept { return runs_done_; }
  const NoisyPowerMethodOptions& options() const noexcept { return options_; }

  // Its progress over the runs its calibration covers, for the checkpoint of the stream it serves
  // (StreamingPrivatePca), as its save / load pair (base/message_seal.hpp): the runs made and the
  // noise source's state (a secure one's key as ratcheted: later noise only). load onto a method
  // built with the same options; CorruptInput naming `what` for more runs than it covers, or a
  // source that is malformed or of the other kind (seeded / secure) than the options'.
  void save(proto::NoisyPowerProgress& out) const;
  void load(const proto::NoisyPowerProgress& in, const std::string& what);

 private:
  PrivateSubspace iterate(const Eigen::Ref<const Eigen::MatrixXd>& covariance, const privacy::Budget& budget,
                          const Eigen::MatrixXd* start);

  Eigen::Index dimension_;
  NoisyPowerMethodOptions options_;
  double sensitivity_;
  double sigma_;
  int runs_done_ = 0;
  std::unique_ptr<privacy::NoiseSource> noise_;
};

}  // namespace dpstream::pca
