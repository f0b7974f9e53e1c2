// StreamingPrivateOja's centred updates (centred_updates; pca/streaming_oja_centre.hpp): refused
// without a scale share, before anything is drawn; each release is B·c + Σ_{x ≠ 0} clip_r(g − c) plus
// N(0, σ_g²) with σ_g = Δ·σ₁/√(1 − f), Δ = r (zero-out) and 2r (replace), c computed from the
// previous release only; the sparse path equals the dense one; checkpoints carry the option and the
// centre (bit for bit after a restore; a mismatch refused naming centred_updates); the radius falls
// below the uncentred clip where the rows' spread off the spike is small.
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/pca/streaming_oja_centre.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "unaccounted.hpp"

namespace test_streaming_oja_centred {

using namespace dpstream;
using namespace dpstream::pca;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;

namespace {

StreamingPrivateOjaOptions centred_options(std::uint64_t seed) {
  StreamingPrivateOjaOptions o;
  o.k = 2;
  o.batch_rows = 25;
  o.batch_growth = 1.0;  // fixed minibatches: many steps, so the centre moves
  o.scale_share = 0.2;
  o.centred_updates = true;
  // ε = 8: σ₁ = 0.48, so a 25-row release shows the spike (Ritz value ≈ 0.64) above the centre's
  // gate τ = 2·√(2p)·σ_g/B ≈ 0.15·r (p = 6, r ≤ 1): the centre is exercised, not gated to zero.
  o.privacy.target = privacy::EpsDelta(8.0, 1e-3);
  o.privacy.noise.seed = seed;
  return o;
}

// One spike e₁ (x = ±0.8·e₁ + 0.05·ξ) scaled into the unit ball, and every 7th row zero (the
// zero-out relation's empty slot, which contributes c exactly).
MatrixXd low_noise_rows(Index n, Index d, std::uint64_t seed) {
  privacy::SeededNoiseSource source(seed);
  MatrixXd rows(n, d);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < d; ++j) rows(i, j) = 0.05 * source.gaussian();
    rows(i, 0) += source.gaussian() >= 0 ? 0.8 : -0.8;
    if (rows.row(i).norm() > 0.999) rows.row(i) *= 0.999 / rows.row(i).norm();
    if (i % 7 == 3) rows.row(i).setZero();
  }
  return rows;
}

}  // namespace

TEST_CASE("streaming oja centred: refused without a scale share, before any charge", "[streaming_oja]") {
  auto o = centred_options(1);
  o.scale_share = 0.0;
  CHECK_THROWS_NAMING(StreamingPrivateOja(8, o, test_budget::unaccounted()), InvalidParameter,
                      Contains("centred_updates"));
}

// The release's residual against the exact centred sum, in units of the claimed σ_g: N(0, 1) if
// the noise is Δ·σ₁/√(1 − f) with Δ = r (zero-out) or 2r (replace). d·p = 12·6 = 72 entries a step,
// 30 steps: 2160 residuals; the sample variance's relative standard deviation is √(2/2160) = 3%, so
// 5 of those (15%) separates 1 from 4 (noise at half the sensitivity would read 4 in these units
// under the other relation's Δ, and 0.25 at r/2). The mean: 5/√2160 = 0.11.
TEST_CASE("streaming oja centred: each release is B·c + the clipped deviations + N(0, sigma_g^2)", "[streaming_oja]") {
  const Index d = 12;
  const std::uint64_t batch = 25;
  const MatrixXd rows = low_noise_rows(Index(batch) * 30, d, 5);
  for (const auto relation : {privacy::Neighbours::zero_out_row, privacy::Neighbours::replace_row}) {
    auto o = centred_options(11);
    o.privacy.relation = relation;
    StreamingPrivateOja oja(d, o, test_budget::unaccounted());
    std::vector<double> residuals;
    MatrixXd earlier_iterate, earlier_sum;  // W_{t−2} and S̃_{t−1}: the previous release's
    double earlier_sigma = 0;               // and its σ_g
    int centred_steps = 0;
    oja.subscribe([&](const StreamingPrivateOja::Release& r) {
      // c_t from the previous release (W_{t−1} is this release's `previous`), never from this minibatch.
      if (r.step == 1) CHECK(r.centre.isZero(0.0));
      else CHECK(r.centre == update_centre(r.previous, earlier_iterate, earlier_sum, double(batch), earlier_sigma, 1.0));
      earlier_iterate = r.previous;
      earlier_sum = r.noisy_sum;
      earlier_sigma = (relation == privacy::Neighbours::replace_row ? 2 * r.clip : r.clip) * oja.unit_sigma() /
                      std::sqrt(1.0 - oja.scale_share());
      centred_steps += r.centre.norm() > 0.3 ? 1 : 0;
      MatrixXd exact = double(batch) * r.centre;
      for (Index i = Index((r.step - 1) * batch); i < Index(r.step * batch); ++i) {
        if (rows.row(i).isZero(0.0)) continue;
        const MatrixXd dev = rows.row(i).transpose() * (rows.row(i) * r.previous) - r.centre;
        exact += dev * std::min(1.0, r.clip / dev.norm());
      }
      const double delta = relation == privacy::Neighbours::replace_row ? 2 * r.clip : r.clip;
      const MatrixXd z = (r.noisy_sum - exact) / (delta * oja.unit_sigma() / std::sqrt(1.0 - oja.scale_share()));
      residuals.insert(residuals.end(), z.data(), z.data() + z.size());
    });
    oja.update_block(rows);
    REQUIRE(residuals.size() == 30 * 72);
    CHECK(centred_steps >= 20);  // the spike found, c ≈ 0.64·e₁·(e₁ᵀW): the centring is exercised
    double mean = 0, sq = 0;
    for (double z : residuals) mean += z;
    mean /= double(residuals.size());
    for (double z : residuals) sq += (z - mean) * (z - mean);
    CHECK(std::abs(mean) < 0.11);
    CHECK(sq / double(residuals.size() - 1) == Approx(1.0).margin(0.15));
  }
}

// The pass's gate reads the Ritz values its published basis solved for (p > k) or solves them (p = k);
// either way each centre is, bit for bit, update_centre of the previous release alone, which solves
// them itself (step_ritz_values).
TEST_CASE("streaming oja centred: the centre is the previous release's, with p > k and p = k", "[streaming_oja]") {
  const Index d = 12;
  const std::uint64_t batch = 25;
  const MatrixXd rows = low_noise_rows(Index(batch) * 20, d, 9);
  for (const Index oversampling : {Index(4), Index(0)}) {
    INFO("oversampling " << oversampling);
    auto o = centred_options(13);
    o.oversampling = oversampling;
    o.privacy.relation = privacy::Neighbours::zero_out_row;  // Δ = r
    StreamingPrivateOja oja(d, o, test_budget::unaccounted());
    MatrixXd earlier_iterate, earlier_sum;
    double earlier_sigma = 0;
    int centred = 0;
    oja.subscribe([&](const StreamingPrivateOja::Release& r) {
      CHECK(r.previous.cols() == 2 + oversampling);
      if (r.step > 1) {
        const MatrixXd expected = update_centre(r.previous, earlier_iterate, earlier_sum, double(batch), earlier_sigma, 1.0);
        CHECK(r.centre == expected);
        CHECK(r.centre == update_centre(r.previous, earlier_iterate, earlier_sum,
                                        step_ritz_values(earlier_iterate, earlier_sum, double(batch)),
                                        double(batch), earlier_sigma, 1.0));
        centred += r.centre.isZero(0.0) ? 0 : 1;
      }
      earlier_iterate = r.previous;
      earlier_sum = r.noisy_sum;
      earlier_sigma = r.clip * oja.unit_sigma() / std::sqrt(1.0 - oja.scale_share());
    });
    oja.update_block(rows);
    CHECK(oja.steps() == 20);
    CHECK(centred >= 10);  // the spike clears the gate (centred_options): the centre is exercised
  }
}

TEST_CASE("streaming oja centred: sparse rows give the dense path's releases bit for bit", "[streaming_oja]") {
  const Index d = 10;
  const MatrixXd rows = low_noise_rows(200, d, 7);
  StreamingPrivateOja dense(d, centred_options(3), test_budget::unaccounted());
  StreamingPrivateOja sparse(d, centred_options(3), test_budget::unaccounted());
  dense.update_block(rows);
  for (Index i = 0; i < rows.rows(); ++i) {
    std::vector<int> at;
    std::vector<double> values;
    for (Index j = 0; j < d; ++j)
      if (rows(i, j) != 0.0) at.push_back(int(j)), values.push_back(rows(i, j));
    sparse.update_sparse(Eigen::Map<const Eigen::VectorXi>(at.data(), Index(at.size())),
                         Eigen::Map<const Eigen::VectorXd>(values.data(), Index(values.size())));
  }
  CHECK(sparse.steps() == 8);
  CHECK(sparse.basis() == dense.basis());
  CHECK(sparse.clip() == dense.clip());
}

TEST_CASE("streaming oja centred: checkpoints carry the option and the centre", "[streaming_oja][checkpoint]") {
  const Index d = 10;
  const MatrixXd rows = low_noise_rows(230, d, 9);
  const auto o = centred_options(17);
  StreamingPrivateOja whole(d, o, test_budget::unaccounted());
  whole.update_block(rows);
  StreamingPrivateOja first(d, o, test_budget::unaccounted());
  first.update_block(rows.topRows(113));  // mid-minibatch, after 4 steps: a centre and a partial sum
  const std::string bytes = first.save();
  StreamingPrivateOja resumed = StreamingPrivateOja::load(bytes, d, o);
  resumed.update_block(rows.bottomRows(230 - 113));
  CHECK(resumed.steps() == whole.steps());
  CHECK(resumed.clip() == whole.clip());
  CHECK(resumed.basis() == whole.basis());

  auto off = o;
  off.centred_updates = false;
  CHECK_THROWS_NAMING(StreamingPrivateOja::load(bytes, d, off), CorruptInput, Contains("centred_updates"));
  StreamingPrivateOja plain(d, off, test_budget::unaccounted());
  plain.update_block(rows.topRows(113));
  const std::string plain_bytes = plain.save();  // as a checkpoint written before the option
  CHECK_THROWS_NAMING(StreamingPrivateOja::load(plain_bytes, d, o), CorruptInput, Contains("centred_updates"));
  CHECK(StreamingPrivateOja::load(plain_bytes, d, off).steps() == 4);
}

// Where the rows' randomness off the spike is small the radius falls below the uncentred clip: rows
// x = ±0.8·e₁ + 0.02·ξ (d = 50, unit ball) have ‖g‖ ≈ ‖x‖² ≈ 0.66, so the default clip sits on the
// edge L² = 1, while the spread around the mean update, ‖g − Σ̂W‖ ≈ 0.8·0.02·(√d + √p) ≈ 0.15, plus
// the centre's bias (the iterate's own error, a few hundredths once settled) stays under the edge
// 0.25 — the radius must end at most half the clip (one edge lower leaves a margin of 2×).
TEST_CASE("streaming oja centred: the radius falls below the clip when the rows' spread is small", "[streaming_oja]") {
  const Index d = 50;
  privacy::SeededNoiseSource source(21);
  MatrixXd rows(4000, d);
  for (Index i = 0; i < rows.rows(); ++i) {
    for (Index j = 0; j < d; ++j) rows(i, j) = 0.02 * source.gaussian();
    rows(i, 0) += source.gaussian() >= 0 ? 0.8 : -0.8;
    if (rows.row(i).norm() > 0.999) rows.row(i) *= 0.999 / rows.row(i).norm();
  }
  double clip[2] = {0, 0};
  for (const bool centred : {false, true}) {
    StreamingPrivateOjaOptions o;
    o.horizon = 4000;
    o.centred_updates = centred;
    o.privacy.noise.seed = 5;
    StreamingPrivateOja oja(d, o, test_budget::unaccounted());
    oja.subscribe([&](const StreamingPrivateOja::Release& r) { clip[centred] = r.clip; });
    oja.update_block(rows);
    CHECK(std::abs(oja.basis()(0, 0)) > 0.99);  // both find the spike
  }
  CHECK(clip[0] == 1.0);
  CHECK(clip[1] <= 0.5 * clip[0]);
}

// Before the pass has found anything its releases are mostly noise; a centre computed from them would
// sit ~ν = √(2p)·σ_g/B from every row's update and raise the radius — hence the noise — above the
// uncentred clip. Rows of the textbook spiked covariance (x ~ N(0, diag(10, 5, 0.025², …)), d = 200,
// ε = 1, δ = 0.01, n = 500: three minibatches, none of whose releases shows the spikes above the gate
// τ = 2ν). The rule (streaming_oja_centre.hpp): a release with no Ritz value above τ gives c = 0
// exactly, so every step's radius is the uncentred pass's clip (the same histogram of ‖g‖, the same
// noise draws: equal edges, not merely close). Before the gate, the second step's centre had norm
// ~20 (‖g‖ ≈ 3) and the last radius was 2–4× the uncentred clip on these seeds.
TEST_CASE("streaming oja centred: a release that shows no signal gives no centre", "[streaming_oja]") {
  const Index d = 200, n = 500;
  const double bound = std::sqrt(10.0 * 2.0 * std::log(1e6)) + 0.025 * std::sqrt(d + 6.0 * std::sqrt(2.0 * d));
  for (const std::uint64_t seed : {1, 2, 3}) {
    privacy::SeededNoiseSource source(300 + seed);
    MatrixXd rows(n, d);
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < d; ++j) rows(i, j) = 0.025 * source.gaussian();
      rows(i, 0) += std::sqrt(10.0) * source.gaussian();
      rows(i, 1) += std::sqrt(5.0) * source.gaussian();
      if (rows.row(i).norm() > bound) rows.row(i) *= bound * (1.0 - 1e-12) / rows.row(i).norm();
    }
    std::vector<double> clips[2];
    int gated = 0;
    for (const bool centred : {false, true}) {
      StreamingPrivateOjaOptions o;
      o.k = 2;
      o.horizon = n;
      o.centred_updates = centred;
      o.privacy.row_norm_bound = bound;
      o.privacy.target = privacy::EpsDelta(1.0, 0.01);
      o.privacy.noise.seed = seed;
      StreamingPrivateOja oja(d, o, test_budget::unaccounted());
      bool no_signal = true;  // the previous release's Ritz values all ≤ τ (c_1 = 0 by definition)
      oja.subscribe([&](const StreamingPrivateOja::Release& r) {
        clips[centred].push_back(r.clip);
        if (!centred) return;
        if (no_signal) {
          CHECK(r.centre.isZero(0.0));
          ++gated;
        }
        const double batch = double(oja.planned_rows(r.step));
        MatrixXd ritz = r.previous.transpose() * r.noisy_sum / batch;
        ritz = 0.5 * (ritz + ritz.transpose()).eval();
        const double sigma = r.clip * oja.unit_sigma() / std::sqrt(1.0 - oja.scale_share());
        no_signal = Eigen::SelfAdjointEigenSolver<MatrixXd>(ritz).eigenvalues().maxCoeff() <=
                    centre_threshold(r.previous.cols(), sigma, batch);
      });
      oja.update_block(rows);
    }
    REQUIRE(clips[0].size() == 3);
    CHECK(gated == 3);  // no release of these seeds clears the gate: the case this test is about
    CHECK(clips[1] == clips[0]);
  }
}

}  // namespace test_streaming_oja_centred
