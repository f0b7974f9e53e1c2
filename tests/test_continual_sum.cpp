// ContinualSum: releases are exact prefix + strategy noise, blocks, subscribers, the privacy charge,
// the horizon, bad rows, and checkpoints.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "continual_sum.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_continual_sum {

using namespace dpstream;
using namespace dpstream::stream;
using privacy::EpsDelta;

namespace {

// Unit-norm-bounded rows (‖a‖ ≤ 1), as RowGuard would pass them.
Eigen::MatrixXd bounded_rows(Eigen::Index n, Eigen::Index d, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd rows(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) rows(i, j) = normal(gen);
    rows.row(i) /= std::max(1.0, rows.row(i).stableNorm() * 1.25);  // some rows below the bound
  }
  return rows;
}

ContinualSumOptions seeded(std::uint64_t horizon, std::uint64_t block, std::uint64_t seed) {
  ContinualSumOptions options;
  options.horizon = horizon;
  options.block_rows = block;
  options.privacy.noise.seed = seed;
  return options;
}

std::vector<Eigen::MatrixXd> collect(ContinualCovariance& sum) {
  std::vector<Eigen::MatrixXd> releases;
  sum.subscribe([&](const ContinualCovariance::Release& r) { releases.push_back(r.noisy_prefix); });
  return releases;
}

}  // namespace

TEST_CASE("a release is the exact prefix plus data-independent noise", "[continual]") {
  // Same seed, same options: the stream with data and the stream of zero rows draw the same noise,
  // so their releases differ by the exact prefix Σ a aᵀ — up to the snap (≤ g/2 per entry,
  // g ≤ σ_t·2^(1 − kSnapBits)) and the rounding of exact + noise (≤ ulp of the larger magnitude)
  // in each release.
  const Eigen::Index d = 6;
  const Eigen::MatrixXd a = bounded_rows(40, d, 7);
  ContinualCovariance data(d, seeded(40, 1, 99), test_budget::unaccounted()), zero(d, seeded(40, 1, 99), test_budget::unaccounted());
  Eigen::MatrixXd exact = Eigen::MatrixXd::Zero(d, d);
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    data.update(a.row(i).transpose());
    zero.update(Eigen::VectorXd::Zero(d));
    exact += a.row(i).transpose() * a.row(i);
    const Eigen::MatrixXd diff = data.noisy_prefix() - zero.noisy_prefix();
    const double scale = data.noisy_prefix().cwiseAbs().maxCoeff() + zero.noisy_prefix().cwiseAbs().maxCoeff();
    const double tol = 4 * (std::ldexp(std::sqrt(data.release_variance(data.steps())), 1 - privacy::kSnapBits) +
                            scale * std::numeric_limits<double>::epsilon());
    REQUIRE((diff - exact).cwiseAbs().maxCoeff() <= tol);
  }
  CHECK(data.steps() == 40);
}

TEST_CASE("blocks: single rows, update_block across boundaries and batching give the same releases", "[continual]") {
  const Eigen::Index d = 12;
  const Eigen::MatrixXd a = bounded_rows(103, d, 8);
  ContinualSumOptions options = seeded(30, 4, 5);
  ContinualCovariance rows(d, options, test_budget::unaccounted());
  options.batch_rows = 3;
  ContinualCovariance small_batches(d, options, test_budget::unaccounted()), blocks(d, options, test_budget::unaccounted());
  auto r1 = collect(rows);
  std::vector<Eigen::MatrixXd> r2, r3;
  small_batches.subscribe([&](const auto& r) { r2.push_back(r.noisy_prefix); });
  blocks.subscribe([&](const auto& r) { r3.push_back(r.noisy_prefix); });
  std::vector<std::uint64_t> release_rows;
  rows.subscribe([&](const auto& r) { release_rows.push_back(r.rows); });
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    rows.update(a.row(i).transpose());
    small_batches.update(a.row(i).transpose());
  }
  blocks.update_block(a.topRows(10));  // 2.5 blocks
  blocks.update_block(a.middleRows(10, 1));
  blocks.update_block(a.bottomRows(92));
  REQUIRE(r1.size() == 25);  // 103 rows = 25 blocks of 4 + 3 pending
  REQUIRE(r2.size() == 25);
  REQUIRE(r3.size() == 25);
  CHECK(rows.rows_pending() == 3);
  for (std::size_t t = 0; t < r1.size(); ++t) {
    CHECK(release_rows[t] == 4 * (t + 1));
    // Summation order differs (rank-1 vs rank-k); the snap grid is 2^-30σ, far above these ulps,
    // so entries agree to a grid step.
    const double grid = privacy::snap_granularity(std::sqrt(rows.release_variance(t + 1)));
    CHECK((r1[t] - r2[t]).cwiseAbs().maxCoeff() <= grid);
    CHECK((r1[t] - r3[t]).cwiseAbs().maxCoeff() <= grid);
  }
  rows.flush();  // closes the partial block of 3 as step 26
  CHECK(rows.steps() == 26);
  CHECK(release_rows.back() == 103);
  CHECK(rows.rows_pending() == 0);
  rows.flush();  // nothing pending: no release
  CHECK(rows.steps() == 26);
}

TEST_CASE("re-querying a release returns the identical, symmetric matrix; subscribers see the closed form", "[continual]") {
  ContinualSumOptions options = seeded(16, 1, 3);
  options.shape = privacy::SymmetricNoiseShape::goe;
  ContinualCovariance sum(5, options, test_budget::unaccounted());
  std::vector<double> variances, off_variances;
  std::vector<std::uint64_t> steps;
  sum.subscribe([&](const ContinualCovariance::Release& r) {
    steps.push_back(r.step);
    variances.push_back(r.noise_variance);
    off_variances.push_back(r.off_diagonal_noise_variance);
  });
  CHECK_FALSE(sum.has_release());
  CHECK_THROWS_AS(sum.noisy_prefix(), InvalidParameter);
  const Eigen::MatrixXd a = bounded_rows(7, 5, 2);
  for (Eigen::Index i = 0; i < 7; ++i) sum.update(a.row(i).transpose());
  const Eigen::MatrixXd first = sum.noisy_prefix();
  CHECK(sum.noisy_prefix() == first);  // bitwise: nothing re-drawn
  CHECK(sum.latest().noisy_prefix == first);
  CHECK(first == first.transpose());
  const double sigma = sum.noise().release_weights(1).front().weight;  // plain tree: one node, weight σ
  for (std::uint64_t t = 1; t <= 7; ++t) {
    CHECK(steps[t - 1] == t);
    CHECK(variances[t - 1] == Approx(std::popcount(t) * sigma * sigma).epsilon(1e-12));
    CHECK(off_variances[t - 1] == Approx(0.5 * variances[t - 1]).epsilon(1e-12));
  }
}

TEST_CASE("GOE and paper shapes: per-entry variance of a covariance release (seeded Monte Carlo)", "[continual][statistical]") {
  // Zero data, one release of a d = 48 covariance per stream, 60 streams: 60·48 = 2880 diagonal and
  // 60·1128 = 67680 off-diagonal samples. Σx²/Var ~ χ²_N: Laurent–Massart interval at α = 1e-7.
  const Eigen::Index d = 48;
  for (auto shape : {privacy::SymmetricNoiseShape::paper_symmetric, privacy::SymmetricNoiseShape::goe}) {
    double diag_sq = 0, off_sq = 0, var = 0, off_var = 0;
    for (std::uint64_t s = 0; s < 60; ++s) {
      ContinualSumOptions options = seeded(8, 1, 1000 + s);
      options.shape = shape;
      ContinualCovariance sum(d, options, test_budget::unaccounted());
      sum.update(Eigen::VectorXd::Zero(d));
      const auto r = sum.latest();
      var = r.noise_variance;
      off_var = r.off_diagonal_noise_variance;
      diag_sq += r.noisy_prefix.diagonal().squaredNorm();
      off_sq += r.noisy_prefix.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().squaredNorm();
    }
    const double n_diag = 60.0 * d, n_off = 60.0 * d * (d - 1) / 2;
    const auto [dlo, dhi] = dpstream::testing::chi_square_interval(n_diag, 1e-7);
    const auto [olo, ohi] = dpstream::testing::chi_square_interval(n_off, 1e-7);
    CHECK(diag_sq / var >= dlo);
    CHECK(diag_sq / var <= dhi);
    CHECK(off_sq / off_var >= olo);
    CHECK(off_sq / off_var <= ohi);
    CHECK(off_var == Approx(shape == privacy::SymmetricNoiseShape::goe ? 0.5 * var : var).epsilon(1e-12));
  }
}

TEST_CASE("the accountant is charged once, for the whole stream, before any row", "[continual][privacy]") {
  privacy::PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
  ContinualSumOptions options = seeded(1024, 1, 1);
  ContinualCovariance sum(4, options, accountant);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK(accountant.spent().epsilon <= 1.0 + 1e-9);
  CHECK(accountant.spent().epsilon >= 1.0 - 1e-6);
  // ρ = μ²/2 with μ = Δ√L/σ.
  const double sigma = privacy::tree_node_sigma(11, 1.0, options.privacy.target, options.privacy.calibration);
  CHECK(accountant.ledger()[0].rho.value() == Approx(11.0 / (2 * sigma * sigma)).epsilon(1e-12));
  for (int i = 0; i < 50; ++i) sum.update(Eigen::VectorXd::Constant(4, 0.5));
  CHECK(accountant.ledger().size() == 1);  // releases are post-processing: no further charge
  // A second stream does not fit the budget: refused at construction, nothing charged.
  CHECK_THROWS_AS(ContinualCovariance(4, options, accountant), BudgetExhausted);
  CHECK(accountant.ledger().size() == 1);
  // Replace-one neighbours double the covariance sensitivity to √2 L².
  options.privacy.relation = privacy::Neighbours::replace_row;
  options.privacy.row_norm_bound = 2.0;
  CHECK(ContinualCovariance(4, options, test_budget::unaccounted()).l2_sensitivity() == Approx(std::sqrt(2.0) * 4.0));
  CHECK(ContinualVectorSum(4, options, test_budget::unaccounted()).l2_sensitivity() == Approx(4.0));
}

TEST_CASE("a stream refuses add_remove_row (its releases depend on each row's slot) before charging",
          "[continual]") {
  ContinualSumOptions options;
  options.horizon = 4;
  CHECK(options.privacy.relation == privacy::Neighbours::zero_out_row);  // the default states what holds
  options.privacy.relation = privacy::Neighbours::add_remove_row;
  privacy::PrivacyAccountant accountant(EpsDelta(5.0, 1e-6));
  for (int covariance = 0; covariance < 2; ++covariance) {
    INFO("covariance " << covariance);
    auto make = [&] {
      if (covariance) ContinualCovariance(3, options, accountant);
      else ContinualVectorSum(3, options, accountant);
    };
    CHECK_THROWS_NAMING(make(), InvalidParameter,
                        Catch::Contains("relation add_remove_row is not a stream's guarantee") &&
                            Catch::Contains("zero_out_row (a row zeroed, its slot kept)"));
  }
  CHECK(accountant.ledger().empty());
}

TEST_CASE("a checkpoint written before zero_out_row existed (relation add_remove_row) still restores",
          "[continual]") {
  ContinualSumOptions options = seeded(8, 2, 3);
  ContinualVectorSum sum(3, options, test_budget::unaccounted());
  sum.update_block(bounded_rows(5, 3, 8));
  proto::ContinualSumCheckpoint msg;
  REQUIRE(msg.ParseFromString(sum.save()));
  REQUIRE(msg.relation() == "zero_out_row");
  msg.set_relation("add_remove_row");  // what the streams wrote for the same relation before the name
  msg.clear_crc32();
  const std::string old = base::seal_message(msg.SerializeAsString());
  ContinualVectorSum back = ContinualVectorSum::load(old, 3, options, test_budget::unaccounted());
  CHECK(back.rows() == 5);
  CHECK(back.options().privacy.relation == privacy::Neighbours::zero_out_row);
  options.privacy.relation = privacy::Neighbours::replace_row;  // another relation: still refused
  CHECK_THROWS_WITH(ContinualVectorSum::load(old, 3, options, test_budget::unaccounted()),
                    Catch::Contains("relation is zero_out_row, the stream being restored has replace_row"));
}

TEST_CASE("a fixed horizon refuses rows it could not release; an unbounded stream goes on", "[continual]") {
  ContinualVectorSum sum(3, seeded(4, 2, 1), test_budget::unaccounted());
  const Eigen::MatrixXd a = bounded_rows(9, 3, 4);
  sum.update_block(a.topRows(5));
  CHECK_THROWS_AS(sum.update_block(a.bottomRows(4)), BudgetExhausted);  // 5 + 4 > 4·2
  CHECK(sum.rows() == 5);  // the refused block left the stream unchanged
  sum.update_block(a.middleRows(5, 3));
  CHECK(sum.steps() == 4);
  CHECK_THROWS_WITH(sum.update(a.row(8).transpose()), Catch::Contains("calibrated for 4 releases"));

  ContinualVectorSum unbounded(3, seeded(0, 1, 2), test_budget::unaccounted());
  for (int i = 0; i < 300; ++i) unbounded.update(a.row(i % 9).transpose());
  CHECK(unbounded.steps() == 300);
  CHECK(unbounded.noise().name() == "tree-epochs");
  CHECK(unbounded.release_variance(300) > unbounded.release_variance(256));
}

TEST_CASE("bad rows are refused with their index, and the stream is unchanged", "[continual]") {
  ContinualCovariance sum(3, seeded(100, 2, 1), test_budget::unaccounted());
  sum.update(Eigen::Vector3d(0.1, 0.2, 0.3));
  CHECK_THROWS_WITH(sum.update(Eigen::Vector4d(0, 0, 0, 0)), Catch::Contains("row 1: dimension 4, expected 3"));
  CHECK_THROWS_WITH(sum.update(Eigen::Vector3d(1.0, 0.0, 0.1)), Catch::Contains("row 1: l2 norm") && Catch::Contains("over the bound 1"));
  CHECK_THROWS_AS(sum.update(Eigen::Vector3d(std::nan(""), 0.0, 0.0)), InvalidRow);
  Eigen::MatrixXd block = Eigen::MatrixXd::Zero(3, 3);
  block(2, 0) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(sum.update_block(block), Catch::Contains("row 3:"));
  CHECK(sum.rows() == 1);
  CHECK(sum.steps() == 0);
  // update_block's `checked` (a session scoring the rows elsewhere first) runs only for a block that
  // passed, and before any of its rows is taken; if it throws, nothing is taken.
  ContinualCovariance fed(3, seeded(100, 8, 1), test_budget::unaccounted());
  int calls = 0;
  CHECK_THROWS_AS(fed.update_block(block, [&] { ++calls; }), InvalidRow);
  CHECK(calls == 0);
  Eigen::MatrixXd good = Eigen::MatrixXd::Constant(3, 3, 0.5);
  CHECK_THROWS_AS(fed.update_block(good, [] { throw std::runtime_error("the caller's own failure"); }),
                  std::runtime_error);
  CHECK(fed.rows() == 0);
  fed.update_block(good, [&] {
    ++calls;
    CHECK(fed.rows() == 0);
  });
  CHECK(calls == 1);
  CHECK(fed.rows() == 3);
  // A row RowGuard clipped passes (the guard and the sum use the same norm).
  stream::RowGuard guard({3, 1.0, stream::OverNormPolicy::clip});
  Eigen::VectorXd big = Eigen::Vector3d(3.0, 4.0, 12.0);
  guard.admit(big);
  sum.update(big);
  CHECK(sum.steps() == 1);
  // Bad options.
  ContinualSumOptions options;
  options.block_rows = 0;
  CHECK_THROWS_AS(ContinualCovariance(3, options, test_budget::unaccounted()), InvalidParameter);
  options = ContinualSumOptions{};
  options.privacy.row_norm_bound = -1;
  CHECK_THROWS_AS(ContinualCovariance(3, options, test_budget::unaccounted()), InvalidParameter);
  options = ContinualSumOptions{};
  options.privacy.calibration = privacy::Calibration::paper;  // ε = 1 is outside the classical formula's domain
  CHECK_THROWS_AS(ContinualCovariance(3, options, test_budget::unaccounted()), InvalidParameter);
  CHECK_THROWS_AS(ContinualCovariance(0, ContinualSumOptions{}, test_budget::unaccounted()), InvalidParameter);
  CHECK(ContinualCovariance(3, ContinualSumOptions{}, test_budget::unaccounted()).is_secure());  // secure noise by default
}

TEST_CASE("kept_releases: release t stays where it was for that many releases, with the values of a stream keeping one", "[continual]") {
  const Eigen::Index d = 6;
  const Eigen::MatrixXd a = bounded_rows(60, d, 21);
  ContinualSumOptions options = seeded(20, 3, 9);
  options.strategy = NoiseStrategy::blt;
  ContinualCovariance one(d, options, test_budget::unaccounted());
  options.kept_releases = 3;
  ContinualCovariance three(d, options, test_budget::unaccounted());
  auto reference = collect(one);  // filled by the subscription, as in the tests above
  std::vector<const Eigen::MatrixXd*> where;  // the address each release of `three` was given at
  three.subscribe([&](const ContinualCovariance::Release& r) { where.push_back(&r.noisy_prefix); });
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    one.update(a.row(i).transpose());
    three.update(a.row(i).transpose());
    const std::size_t t = where.size();
    // Releases t, t − 1 and t − 2 are still readable where they were given, bitwise as released by
    // the stream that keeps only its latest (same seed: the same noise).
    for (std::size_t back = 0; back < 3 && back < t; ++back) REQUIRE(*where[t - 1 - back] == reference[t - 1 - back]);
    if (t >= 4) CHECK(where[t - 1] == where[t - 4]);  // three buffers, in turn
  }
  REQUIRE(where.size() == 20);
  // A checkpoint restores the latest release into the buffer the step maps to.
  ContinualCovariance restored = ContinualCovariance::load(three.save(), d, options, test_budget::unaccounted());
  CHECK(restored.noisy_prefix() == three.noisy_prefix());
  for (std::uint32_t bad : {0u, 65u}) {
    options.kept_releases = bad;
    CHECK_THROWS_NAMING(ContinualCovariance(d, options, test_budget::unaccounted()), InvalidParameter, Catch::Contains("kept_releases"));
  }
}

TEST_CASE("checkpoint mid-block: the restored stream continues bit-identically", "[continual][checkpoint]") {
  const Eigen::Index d = 7;
  const Eigen::MatrixXd a = bounded_rows(200, d, 11);
  for (NoiseStrategy strategy : {NoiseStrategy::plain_tree, NoiseStrategy::honaker_tree, NoiseStrategy::sqrt_toeplitz,
                                 NoiseStrategy::blt, NoiseStrategy::separable}) {
    for (std::uint64_t horizon : {std::uint64_t{64}, std::uint64_t{0}}) {
      const bool tree = strategy == NoiseStrategy::plain_tree || strategy == NoiseStrategy::honaker_tree;
      if (horizon == 0 && !tree) continue;  // factorizations need a fixed horizon
      INFO("strategy " << to_string(strategy) << ", horizon " << horizon);
      ContinualSumOptions options = seeded(horizon, 3, 42);
      options.strategy = strategy;
      privacy::PrivacyAccountant accountant(EpsDelta(2.0, 1e-5));
      ContinualCovariance original(d, options, accountant);
      for (Eigen::Index i = 0; i < 95; ++i) original.update(a.row(i).transpose());  // 31 steps + 2 pending
      const std::string bytes = original.save();
      privacy::PrivacyAccountant fresh(EpsDelta(2.0, 1e-5));
      ContinualCovariance restored = ContinualCovariance::load(bytes, d, options, fresh);
      CHECK(fresh.ledger().size() == 1);  // the ledger came back; restoring charged nothing new
      CHECK(restored.steps() == 31);
      CHECK(restored.rows_pending() == 2);
      CHECK(restored.noisy_prefix() == original.noisy_prefix());
      for (Eigen::Index i = 95; i < 190; ++i) {
        original.update(a.row(i).transpose());
        restored.update(a.row(i).transpose());
        REQUIRE(restored.noisy_prefix() == original.noisy_prefix());  // bitwise
      }
    }
  }
}

TEST_CASE("checkpoint files are 0600 and atomic; corrupt or mismatched checkpoints are refused", "[continual][checkpoint]") {
  const auto dir = std::filesystem::temp_directory_path() / ("dpstream_ckpt_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "stream.ckpt").string();
  ContinualSumOptions options = seeded(32, 2, 8);
  ContinualVectorSum sum(4, options, test_budget::unaccounted());
  for (int i = 0; i < 9; ++i) sum.update(Eigen::Vector4d(0.1 * i, 0.1, -0.2, 0.3));
  base::save_file(path, sum);
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  ContinualVectorSum back = base::load_file<ContinualVectorSum>(path, 4, options, test_budget::unaccounted());
  CHECK(back.noisy_prefix() == sum.noisy_prefix());

  const std::string bytes = sum.save();
  CHECK_THROWS_AS(ContinualVectorSum::load(bytes.substr(0, bytes.size() / 2), 4, options, test_budget::unaccounted()), CorruptInput);
  CHECK_THROWS_AS(ContinualVectorSum::load("", 4, options, test_budget::unaccounted()), CorruptInput);
  CHECK_THROWS_AS(ContinualVectorSum::load("not a checkpoint at all", 4, options, test_budget::unaccounted()), CorruptInput);
  CHECK_THROWS_WITH(ContinualVectorSum::load(bytes, 5, options, test_budget::unaccounted()), Catch::Contains("dimension is 4"));
  ContinualSumOptions other = options;
  other.privacy.target = EpsDelta(0.5, 1e-6);
  CHECK_THROWS_WITH(ContinualVectorSum::load(bytes, 4, other, test_budget::unaccounted()), Catch::Contains("epsilon is 1"));
  other = options;
  other.privacy.noise.seed.reset();
  CHECK_THROWS_WITH(ContinualVectorSum::load(bytes, 4, other, test_budget::unaccounted()), Catch::Contains("noise source is seeded"));
  CHECK_THROWS_WITH(ContinualCovariance::load(bytes, 4, options, test_budget::unaccounted()), Catch::Contains("value_kind"));
  // Tampered messages are sealed again (resealed) so the checks behind the seal are what refuses them.
  auto resealed = [](proto::ContinualSumCheckpoint m) {
    m.clear_crc32();
    return base::seal_message(m.SerializeAsString());
  };
  // A checkpoint whose live node noise was removed would force a re-draw: refused.
  proto::ContinualSumCheckpoint msg;
  REQUIRE(msg.ParseFromString(bytes));
  msg.mutable_noise()->mutable_tree()->mutable_held()->RemoveLast();
  CHECK_THROWS_AS(ContinualVectorSum::load(resealed(msg), 4, options, test_budget::unaccounted()), CorruptInput);
  REQUIRE(msg.ParseFromString(bytes));
  msg.set_format_version(2);
  CHECK_THROWS_WITH(ContinualVectorSum::load(resealed(msg), 4, options, test_budget::unaccounted()), Catch::Contains("format_version 2"));
  REQUIRE(msg.ParseFromString(bytes));
  msg.mutable_exact_sum()->RemoveLast();
  CHECK_THROWS_WITH(ContinualVectorSum::load(resealed(msg), 4, options, test_budget::unaccounted()), Catch::Contains("exact_sum"));
  // Any cut or any single flipped bit is refused by the seal (a cut just before the ledger used to
  // restore the stream without its ledger: fuzz and bad-input finding).
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("cut to " << n << " of " << bytes.size() << " bytes");
    REQUIRE_THROWS_AS(ContinualVectorSum::load(bytes.substr(0, n), 4, options, test_budget::unaccounted()), CorruptInput);
  }
  for (std::size_t bit = 0; bit < 8 * bytes.size(); bit += 7) {
    std::string flipped = bytes;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    INFO("bit " << bit << " flipped");
    REQUIRE_THROWS_AS(ContinualVectorSum::load(flipped, 4, options, test_budget::unaccounted()), CorruptInput);
  }
  REQUIRE(msg.ParseFromString(bytes));  // parsed and sealed again unchanged: accepted, same stream
  REQUIRE(ContinualVectorSum::load(resealed(msg), 4, options, test_budget::unaccounted()).noisy_prefix() == sum.noisy_prefix());
  // A secure stream's checkpoint must carry its source state (without it a restart would draw the
  // noise of releases made after the checkpoint again: tests/audit).
  ContinualSumOptions secure_options = options;
  secure_options.privacy.noise.seed.reset();
  ContinualVectorSum secure(4, secure_options, test_budget::unaccounted());
  secure.update(Eigen::VectorXd::Constant(4, 0.1));
  REQUIRE(msg.ParseFromString(secure.save()));
  REQUIRE(msg.secure_source().key().size() == 32);
  msg.clear_secure_source();
  CHECK_THROWS_WITH(ContinualVectorSum::load(resealed(msg), 4, secure_options, test_budget::unaccounted()), Catch::Contains("source key"));
  CHECK_THROWS_WITH(base::load_file<ContinualVectorSum>((dir / "missing").string(), 4, options, test_budget::unaccounted()), Catch::Contains("missing"));
  std::filesystem::remove_all(dir);
}

}  // namespace test_continual_sum
