// StreamingPrivateOja (pca/streaming_private_oja.hpp): the options and the rows refused before anything
// is taken or drawn, the one charge for the pass, the release = the exact clipped sum at W_{t−1} plus
// N(0, σ_g²), the budget split with a scale share, convergence on planted spiked streams (k = 1, 3),
// the sparse path against the dense one, and checkpoints: a restored estimator continues bit for bit,
// and a secure one re-makes a step with the same noise.
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "streaming_oja.pb.h"
#include "unaccounted.hpp"

namespace test_streaming_private_oja {

using namespace dpstream;
using namespace dpstream::pca;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::EpsDelta;

namespace {

StreamingPrivateOjaOptions seeded_options(Index k, std::uint64_t batch, std::uint64_t seed) {
  StreamingPrivateOjaOptions o;
  o.k = k;
  o.batch_rows = batch;
  o.batch_growth = 1.0;  // fixed minibatches and the 1/t Oja step: the defaults are
  o.step_rule = StepRule::oja;  // test_streaming_oja_plan.cpp's
  o.oversampling = 0;
  o.privacy.noise.seed = seed;
  return o;
}

// n rows of a spiked model in d dimensions: x = Σ_j √s_j·z_j·u_j + 0.1·ξ/√d (z, ξ standard normal,
// u_j = e_j), scaled into the unit ball (rows longer than 0.999 scaled to 0.999). E[xxᵀ]'s top k
// eigenvectors are e_1..e_k for the spikes s (decreasing) well above the 0.01/d floor.
MatrixXd spiked_rows(Index n, Index d, const std::vector<double>& spikes, std::uint64_t seed) {
  privacy::SeededNoiseSource source(seed);
  MatrixXd rows(n, d);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < d; ++j) rows(i, j) = 0.1 * source.gaussian() / std::sqrt(double(d));
    for (std::size_t j = 0; j < spikes.size(); ++j) rows(i, Index(j)) += std::sqrt(spikes[j]) * source.gaussian();
    const double norm = rows.row(i).norm();
    if (norm > 0.999) rows.row(i) *= 0.999 / norm;  // under 1 after the division's round-off
  }
  return rows;
}

// tr(WᵀCW) / (sum of C's top-k eigenvalues): the captured share of the best k-subspace's variance.
double captured_ratio(const MatrixXd& basis, const MatrixXd& rows) {
  const MatrixXd c = rows.transpose() * rows;
  const dpstream::linalg::SymmetricEigenSolver eig(c);
  const double best = eig.eigenvalues().tail(basis.cols()).sum();
  return (basis.transpose() * c * basis).trace() / best;
}

}  // namespace

TEST_CASE("streaming oja: bad options are refused naming the option", "[streaming_oja]") {
  auto o = seeded_options(1, 10, 1);
  CHECK_THROWS_NAMING(StreamingPrivateOja(0, o, test_budget::unaccounted()), InvalidParameter, Contains("dimension"));
  o.k = 6;
  CHECK_THROWS_NAMING(StreamingPrivateOja(5, o, test_budget::unaccounted()), InvalidParameter, Contains("k must be"));
  o = seeded_options(1, 10, 1);  // batch_rows 0 is the derived first minibatch (test_streaming_oja_plan)
  o.batch_growth = 0.5;
  CHECK_THROWS_NAMING(StreamingPrivateOja(5, o, test_budget::unaccounted()), InvalidParameter, Contains("batch_growth"));
  o = seeded_options(1, 10, 1);
  o.oversampling = -1;
  CHECK_THROWS_NAMING(StreamingPrivateOja(5, o, test_budget::unaccounted()), InvalidParameter, Contains("oversampling"));
  o = seeded_options(1, 10, 1);
  o.scale_share = 1.0;
  CHECK_THROWS_NAMING(StreamingPrivateOja(5, o, test_budget::unaccounted()), InvalidParameter, Contains("scale_share"));
  o = seeded_options(1, 10, 1);
  o.initial_clip = 2.0;  // above L² = 1
  CHECK_THROWS_NAMING(StreamingPrivateOja(5, o, test_budget::unaccounted()), InvalidParameter, Contains("initial_clip"));
  o = seeded_options(1, 10, 1);
  o.learning_rate = 0.0;
  CHECK_THROWS_AS(StreamingPrivateOja(5, o, test_budget::unaccounted()), InvalidParameter);
}

TEST_CASE("streaming oja: a noise scale that vanishes at the smallest clip is refused at construction",
          "[streaming_oja]") {
  // L = 1e-150, ε = 1e150: the unit σ ≈ 1e-150 times the clip, L²·2^-47 ≈ 1e-314, underflows to 0, found
  // before at the first release (snap_granularity), after noise was drawn.
  auto o = seeded_options(1, 10, 1);
  o.privacy.row_norm_bound = 1e-150;
  o.privacy.target = privacy::EpsDelta(1e150, 1e-6);
  CHECK_THROWS_NAMING(StreamingPrivateOja(5, o, test_budget::unaccounted()), InvalidParameter, Contains("gradient noise sigma"));
  o.privacy.row_norm_bound = 1.0;
  CHECK_NOTHROW(StreamingPrivateOja(5, o, test_budget::unaccounted()));
}

TEST_CASE("streaming oja: a bad row is refused before it is taken or any noise is drawn", "[streaming_oja]") {
  const MatrixXd rows = spiked_rows(8, 4, {0.5}, 3);
  StreamingPrivateOja oja(4, seeded_options(1, 4, 7), test_budget::unaccounted()), twin(4, seeded_options(1, 4, 7), test_budget::unaccounted());
  oja.update_block(rows.topRows(3));
  twin.update_block(rows.topRows(3));
  // The 4th row would close the minibatch: each refusal must leave it open and the source untouched.
  VectorXd too_long = VectorXd::Zero(4);
  too_long(0) = 1.5;
  CHECK_THROWS_NAMING(oja.update(too_long), InvalidRow, Contains("norm"));
  VectorXd not_finite = rows.row(3).transpose();
  not_finite(2) = std::nan("");
  CHECK_THROWS_AS(oja.update(not_finite), InvalidRow);
  CHECK_THROWS_AS(oja.update(VectorXd::Zero(5)), InvalidRow);
  const Eigen::VectorXi bad_indices = (Eigen::VectorXi(2) << 2, 1).finished();
  CHECK_THROWS_AS(oja.update_sparse(bad_indices, VectorXd::Constant(2, 0.1)), InvalidRow);
  MatrixXd block = rows.bottomRows(5);
  block(2, 0) = 2.0;  // a bad row inside a block: none of the block is taken
  CHECK_THROWS_AS(oja.update_block(block), InvalidRow);
  CHECK(oja.rows() == 3);
  CHECK(oja.steps() == 0);
  oja.update_block(rows.bottomRows(5));
  twin.update_block(rows.bottomRows(5));
  CHECK(oja.steps() == 2);
  CHECK(oja.basis() == twin.basis());  // bit for bit: nothing was drawn for the refused rows
}

TEST_CASE("streaming oja: one charge for the whole pass, before any row; too small a budget builds nothing",
          "[streaming_oja]") {
  auto o = seeded_options(2, 10, 1);
  o.privacy.target = EpsDelta(1.0, 1e-6);
  privacy::PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
  StreamingPrivateOja oja(6, o, accountant);
  REQUIRE(accountant.ledger().size() == 1);
  // The pass is one Gaussian mechanism of sensitivity 1 and σ₁: ρ = 1/(2σ₁²), whatever the length.
  const double sigma1 = privacy::analytic_gaussian_sigma(1.0, o.privacy.target);
  CHECK(oja.unit_sigma() == sigma1);
  CHECK(*accountant.ledger()[0].rho == Approx(1.0 / (2 * sigma1 * sigma1)).epsilon(1e-12));
  oja.update_block(spiked_rows(100, 6, {0.5, 0.2}, 2));
  CHECK(accountant.ledger().size() == 1);
  privacy::PrivacyAccountant small(EpsDelta(0.5, 1e-6));
  CHECK_THROWS_AS(StreamingPrivateOja(6, o, small), BudgetExhausted);
  CHECK(small.ledger().empty());
}

TEST_CASE("streaming oja: add_remove_row refused (minibatches are slots), before any charge", "[streaming_oja]") {
  auto o = seeded_options(1, 10, 1);
  CHECK(StreamingPrivateOjaOptions{}.privacy.relation == privacy::Neighbours::zero_out_row);
  o.privacy.relation = privacy::Neighbours::add_remove_row;
  privacy::PrivacyAccountant accountant(EpsDelta(5.0, 1e-6));
  CHECK_THROWS_NAMING(StreamingPrivateOja(5, o, accountant), InvalidParameter,
                      Contains("StreamingPrivateOja: relation add_remove_row is not a stream's guarantee"));
  CHECK(accountant.ledger().empty());
}

TEST_CASE("streaming oja: a checkpoint written before zero_out_row (add_remove_row) still restores",
          "[streaming_oja]") {
  const auto o = seeded_options(1, 10, 1);
  StreamingPrivateOja oja(4, o, test_budget::unaccounted());
  oja.update_block(spiked_rows(25, 4, {0.5}, 3));
  dpstream::proto::StreamingOjaCheckpoint msg;
  REQUIRE(msg.ParseFromString(oja.save()));
  REQUIRE(msg.relation() == "zero_out_row");
  msg.set_relation("add_remove_row");  // the old name of the same relation
  msg.clear_crc32();
  const std::string old = base::seal_message(msg.SerializeAsString());
  CHECK(StreamingPrivateOja::load(old, 4, o).rows() == 25);
  auto replace = o;
  replace.privacy.relation = privacy::Neighbours::replace_row;
  CHECK_THROWS_AS(StreamingPrivateOja::load(old, 4, replace), CorruptInput);
}

TEST_CASE("streaming oja: the noise split keeps the minibatch at mu = 1/sigma1; replace scales both",
          "[streaming_oja]") {
  auto o = seeded_options(1, 10, 1);
  o.scale_share = 0.2;
  const StreamingPrivateOja add_remove(5, o, test_budget::unaccounted());
  const double s1 = add_remove.unit_sigma();
  const double c = add_remove.clip();  // L² = 1 at the start
  // Δ_g = C, Δ_h = 1 (add/remove); 2C and √2 (replace): each pair is one mechanism of μ = 1/σ₁ or
  // a valid bound on it (replace: (2C/σ_g)² + (√2/σ_h)² = 1/σ₁² with σ's scaled accordingly).
  CHECK(std::pow(c / add_remove.gradient_sigma(), 2) + std::pow(1.0 / add_remove.histogram_sigma(), 2) ==
        Approx(1.0 / (s1 * s1)).epsilon(1e-12));
  o.privacy.relation = privacy::Neighbours::replace_row;
  const StreamingPrivateOja replace(5, o, test_budget::unaccounted());
  CHECK(replace.gradient_sigma() == Approx(2.0 * add_remove.gradient_sigma()).epsilon(1e-15));
  CHECK(replace.histogram_sigma() == Approx(std::sqrt(2.0) * add_remove.histogram_sigma()).epsilon(1e-15));
  o.scale_share = 0.0;
  CHECK(std::isinf(StreamingPrivateOja(5, o, test_budget::unaccounted()).histogram_sigma()));
}

TEST_CASE("streaming oja: the scale bins and the clip set to the quantile's edge", "[streaming_oja]") {
  CHECK(StreamingPrivateOja::scale_bin(1.0, 1.0) == 0);
  CHECK(StreamingPrivateOja::scale_bin(0.7, 1.0) == 0);
  CHECK(StreamingPrivateOja::scale_bin(0.5, 1.0) == 1);
  CHECK(StreamingPrivateOja::scale_bin(0.3, 1.0) == 1);
  CHECK(StreamingPrivateOja::scale_bin(1e-300, 1.0) == StreamingPrivateOja::kScaleBins - 1);
  CHECK(StreamingPrivateOja::scale_bin(1.0 + 1e-15, 1.0) == 0);
  // Every row 0.999·e₁ in d = 1000: all updates share the norm 0.999²·|W_{t−1}(0)|, i.e. one bin; the
  // histogram noise (σ_h = σ₁/√0.5 ≈ 6.2 a bin, ≈ 43 even over all 48) is far from moving the count
  // above an edge across 0.1·1000 (20 standard deviations), so C_{t+1} is the bin's upper edge.
  auto o = seeded_options(1, 1000, 3);
  o.scale_share = 0.5;
  StreamingPrivateOja oja(1000, o, test_budget::unaccounted());
  VectorXd row = VectorXd::Zero(1000);
  row(0) = 0.999;
  int checked = 0;
  oja.subscribe([&](const StreamingPrivateOja::Release& r) {
    const double g = 0.999 * 0.999 * std::abs(r.previous(0, 0));
    CHECK(oja.clip() == std::ldexp(1.0, -int(StreamingPrivateOja::scale_bin(g, 1.0))));
    CHECK(r.noisy_histogram.size() == StreamingPrivateOja::kScaleBins);
    ++checked;
  });
  for (int i = 0; i < 3000; ++i) oja.update(row);
  CHECK(checked == 3);
}

TEST_CASE("streaming oja: each release is the exact clipped sum at W_{t-1} plus N(0, sigma_g^2)", "[streaming_oja]") {
  // d·k = 100 entries a step, 40 steps: 4000 residuals. Their sample variance has relative standard
  // deviation √(2/4000) = 2.2%; 5 of those (11%) is the tolerance. The mean: 5σ/√4000 = 0.08σ.
  const Index d = 50, k = 2;
  const std::uint64_t batch = 25;
  auto o = seeded_options(k, batch, 11);
  o.initial_clip = 0.05;  // clips most rows, so the clipping is exercised too
  StreamingPrivateOja oja(d, o, test_budget::unaccounted());
  const MatrixXd rows = spiked_rows(Index(batch) * 40, d, {0.5, 0.2}, 5);
  std::vector<double> residuals;
  oja.subscribe([&](const StreamingPrivateOja::Release& r) {
    MatrixXd exact = MatrixXd::Zero(d, k);
    for (Index i = Index((r.step - 1) * batch); i < Index(r.step * batch); ++i) {
      const Eigen::RowVectorXd p = rows.row(i) * r.previous;
      const MatrixXd g = rows.row(i).transpose() * p;
      exact += g * std::min(1.0, r.clip / g.norm());
    }
    // σ_g at this minibatch's clip (the default private clip scale moves it after the step).
    const MatrixXd z = (r.noisy_sum - exact) / (r.clip * oja.unit_sigma() / std::sqrt(1.0 - oja.scale_share()));
    residuals.insert(residuals.end(), z.data(), z.data() + z.size());
  });
  oja.update_block(rows);
  REQUIRE(residuals.size() == 4000);
  double mean = 0, sq = 0;
  for (double z : residuals) mean += z;
  mean /= double(residuals.size());
  for (double z : residuals) sq += (z - mean) * (z - mean);
  CHECK(std::abs(mean) < 0.08);
  CHECK(sq / double(residuals.size() - 1) == Approx(1.0).margin(0.11));
}

TEST_CASE("streaming oja: converges on planted spiked streams at epsilon = 1", "[streaming_oja]") {
  // n = 40,000 rows, d = 40, B = 1000: 40 steps. Per step the noise on the minibatch mean has norm
  // ν = σ₁·C·√(dk)/B ≈ 4.4·√40/1000 = 0.028 (k = 1, C = L² = 1) against the gap λ₁ − λ₂ ≈ 0.3 of
  // E[xxᵀ]. With the 1/t step the iterate averages the minibatch means: its angle to the top
  // eigenvector settles at sin²θ ≈ η_T·ν²/(2·gap) = (8/41)·0.028²/0.6 ≈ 3e-4, plus the sampling error
  // of 40,000 rows, sin²θ ≈ d·λ₁/(n·gap²) = 40·0.4/(40000·0.09) ≈ 4e-3; the captured share loses
  // about sin²θ·gap/λ₁ ≈ 3e-3 (k = 3: the smaller gaps 0.1, ~3x that). 0.95 leaves a margin of 5x or
  // more; measured 0.996 (k = 1), 0.989 (k = 3).
  const Index d = 40;
  for (const Index k : {Index(1), Index(3)}) {
    const std::vector<double> spikes = k == 1 ? std::vector<double>{0.4} : std::vector<double>{0.4, 0.25, 0.15};
    const MatrixXd rows = spiked_rows(40000, d, spikes, 21 + std::uint64_t(k));
    auto o = seeded_options(k, 1000, 99 + std::uint64_t(k));
    o.privacy.target = EpsDelta(1.0, 1e-6);
    StreamingPrivateOja oja(d, o, test_budget::unaccounted());
    std::uint64_t published = 0;
    oja.subscribe([&](const StreamingPrivateOja::Release& r) {
      published = r.step;
      CHECK((r.basis.transpose() * r.basis - MatrixXd::Identity(k, k)).norm() < 1e-12);
    });
    oja.update_block(rows);
    CHECK(published == 40);
    INFO("k = " << k);
    CHECK(captured_ratio(oja.basis(), rows) > 0.95);
  }
}

TEST_CASE("streaming oja: the Oja step is a share of the clip: scaled rows and clip give one pass",
          "[streaming_oja]") {
  // Rows x/2 at the fixed clip C = L²/4 against rows x at C = L² (no row clipped in either): every
  // update, noise draw and snap grid is the first pass's /4 exactly (powers of two), so with
  // η_t = α/(C·(t₀ + t)) the iterates agree bit for bit; with α/L², the second pass's steps would be
  // a quarter of the first's.
  const Index d = 20;
  const MatrixXd rows = spiked_rows(600, d, {0.4}, 31);
  auto full = seeded_options(1, 100, 5);
  full.scale_share = 0.0;
  auto quarter = full;
  quarter.initial_clip = 0.25;
  StreamingPrivateOja a(d, full, test_budget::unaccounted()), b(d, quarter, test_budget::unaccounted());
  a.update_block(rows);
  b.update_block(rows * 0.5);
  REQUIRE(a.steps() == 6);
  REQUIRE(b.steps() == 6);
  CHECK(b.clip() == 0.25);
  CHECK(a.basis() == b.basis());
}

TEST_CASE("streaming oja: the sparse path agrees with the dense one", "[streaming_oja]") {
  const Index d = 30;
  MatrixXd rows = spiked_rows(300, d, {0.5}, 8);
  for (Index i = 0; i < rows.rows(); ++i)
    for (Index j = 0; j < d; ++j)
      if ((i + j) % 3 != 0) rows(i, j) = 0.0;  // a third of the entries stored
  StreamingPrivateOja dense(d, seeded_options(1, 50, 4), test_budget::unaccounted()), sparse(d, seeded_options(1, 50, 4), test_budget::unaccounted());
  dense.update_block(rows);
  for (Index i = 0; i < rows.rows(); ++i) {
    std::vector<int> idx;
    std::vector<double> val;
    for (Index j = 0; j < d; ++j)
      if (rows(i, j) != 0.0) idx.push_back(int(j)), val.push_back(rows(i, j));
    sparse.update_sparse(Eigen::Map<Eigen::VectorXi>(idx.data(), Index(idx.size())),
                         Eigen::Map<VectorXd>(val.data(), Index(val.size())));
  }
  REQUIRE(sparse.steps() == 6);
  // Same noise; only the summation order of xᵀW differs (round-off, then snapped to 2^-30·σ_g).
  CHECK((sparse.basis() - dense.basis()).norm() < 1e-9);
}

TEST_CASE("streaming oja: a restored estimator continues bit for bit (seeded)", "[streaming_oja][checkpoint]") {
  const Index d = 12;
  const MatrixXd rows = spiked_rows(530, d, {0.5, 0.2}, 13);
  auto o = seeded_options(2, 40, 17);
  o.scale_share = 0.1;
  o.initial_clip = 0.3;
  StreamingPrivateOja whole(d, o, test_budget::unaccounted());
  whole.update_block(rows);
  whole.flush();
  StreamingPrivateOja first(d, o, test_budget::unaccounted());
  first.update_block(rows.topRows(253));  // mid-minibatch: the partial sum is in the checkpoint
  const std::string bytes = first.save();
  StreamingPrivateOja resumed = StreamingPrivateOja::load(bytes, d, o);
  CHECK(resumed.rows() == 253);
  CHECK(resumed.rows_pending() == 253 % 40);
  resumed.update_block(rows.bottomRows(530 - 253));
  resumed.flush();
  CHECK(resumed.steps() == whole.steps());
  CHECK(resumed.clip() == whole.clip());
  CHECK(resumed.basis() == whole.basis());

  auto other = o;
  other.batch_rows = 41;
  CHECK_THROWS_NAMING(StreamingPrivateOja::load(bytes, d, other), CorruptInput, Contains("batch_rows"));
  other = o;
  other.privacy.noise.seed = 18;
  CHECK_THROWS_NAMING(StreamingPrivateOja::load(bytes, d, other), CorruptInput, Contains("seed"));
  CHECK_THROWS_AS(StreamingPrivateOja::load(bytes.substr(0, bytes.size() / 2), d, o), CorruptInput);
  CHECK_THROWS_AS(StreamingPrivateOja::load(bytes, d + 1, o), CorruptInput);
}

// The iterate and the sum change layout at the first sparse row (the header): the switch must be
// invisible — a restore after it (the sum back in the dense layout) continues bit for bit, and a
// mixed stream agrees with the all-dense one up to xᵀW's summation order (as the sparse test above).
TEST_CASE("streaming oja: dense and sparse rows mixed, restored after the layout switch, bit for bit",
          "[streaming_oja][checkpoint]") {
  const Index d = 12;
  const MatrixXd rows = spiked_rows(400, d, {0.5, 0.2}, 21);
  auto o = seeded_options(2, 40, 23);
  o.oversampling = 2;  // p = 4 > k: the published Ritz directions read the iterate too
  auto feed = [&](StreamingPrivateOja& oja, Index from, Index to) {
    for (Index i = from; i < to; ++i) {
      if ((i / 50) % 2 == 0) {  // rows 0-49 dense, 50-99 sparse, 100-149 dense, ...
        oja.update(rows.row(i).transpose());
        continue;
      }
      std::vector<int> idx;
      std::vector<double> val;
      for (Index j = 0; j < d; ++j)
        if (rows(i, j) != 0.0) idx.push_back(int(j)), val.push_back(rows(i, j));
      oja.update_sparse(Eigen::Map<Eigen::VectorXi>(idx.data(), Index(idx.size())),
                        Eigen::Map<VectorXd>(val.data(), Index(val.size())));
    }
  };
  StreamingPrivateOja whole(d, o, test_budget::unaccounted()), dense(d, o, test_budget::unaccounted()), first(d, o, test_budget::unaccounted());
  feed(whole, 0, 400);
  dense.update_block(rows);
  feed(first, 0, 75);  // mid-minibatch, after the first sparse rows
  StreamingPrivateOja resumed = StreamingPrivateOja::load(first.save(), d, o);
  feed(resumed, 75, 400);
  REQUIRE(whole.steps() == 10);
  CHECK(resumed.steps() == whole.steps());
  CHECK(resumed.basis() == whole.basis());
  CHECK((whole.basis() - dense.basis()).norm() < 1e-9);
}

TEST_CASE("streaming oja: two restarts from one secure checkpoint publish the same step (no fresh draw)",
          "[streaming_oja][checkpoint]") {
  const Index d = 8;
  const MatrixXd rows = spiked_rows(60, d, {0.5}, 19);
  StreamingPrivateOjaOptions o;  // secure source
  o.batch_rows = 20;
  StreamingPrivateOja oja(d, o, test_budget::unaccounted());
  REQUIRE(oja.is_secure());
  oja.update_block(rows.topRows(30));
  const std::string bytes = oja.save();
  auto restart = [&] {
    StreamingPrivateOja r = StreamingPrivateOja::load(bytes, d, o);
    r.update_block(rows.bottomRows(30));
    return MatrixXd(r.basis());
  };
  const MatrixXd once = restart();
  CHECK(restart() == once);
  oja.update_block(rows.bottomRows(30));
  CHECK(oja.basis() == once);  // the crashed process's own step, too
}

}  // namespace test_streaming_private_oja
