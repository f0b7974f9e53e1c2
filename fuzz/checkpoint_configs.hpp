// The fixed configurations fuzz_checkpoint.cpp restores into, shared with make_corpus.cpp (which
// writes the seed checkpoints with the library's own save). An input's first byte picks the
// configuration (byte % kConfigs); the rest are the checkpoint bytes.
//
//   0-5  ContinualSum::load (vector or covariance sum; plain / Honaker / unbounded trees,
//        square-root Toeplitz, BLT; seeded or secure source; with an accountant the checkpoint's
//        ledger is merged into, never lowering it)
//   6-9  ContinualNoise::load of a proto::ContinualNoiseState (TreeNoise Honaker, EpochTreeNoise,
//        SqrtToeplitzNoise, BltNoise) — the strategies' own restore, without ContinualSum's checks
//        in front of it
#pragma once

#include <cstdint>
#include <memory>

#include <Eigen/Core>

#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/blt.hpp"
#include "dpstream/stream/continual_noise.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/tree_noise.hpp"

namespace dpstream_fuzz {

inline constexpr unsigned kConfigs = 10;
inline constexpr unsigned kFirstNoiseConfig = 6;

inline dpstream::stream::BufferedToeplitz fixed_blt() {
  // The two-buffer BLT of tests/test_blt.cpp (valid for short horizons).
  return dpstream::stream::BufferedToeplitz(Eigen::VectorXd{{0.9999528892, 0.9857068667}},
                                            Eigen::VectorXd{{0.0122853238, 0.1878393665}});
}

struct SumConfig {
  bool covariance = false;
  Eigen::Index dimension = 3;
  dpstream::stream::ContinualSumOptions options;
};

// Configurations 0-5.
inline SumConfig sum_config(unsigned config) {
  using dpstream::stream::NoiseStrategy;
  SumConfig c;
  auto& o = c.options;
  o.privacy.target = dpstream::privacy::EpsDelta(1.0, 1e-6);
  o.privacy.noise.seed = 7;
  switch (config) {
    case 0:  // plain tree, fixed horizon, blocks of 2 rows
      o.strategy = NoiseStrategy::plain_tree;
      o.horizon = 8;
      o.block_rows = 2;
      break;
    case 1:  // Honaker tree, unbounded (doubling epochs)
      o.strategy = NoiseStrategy::honaker_tree;
      o.horizon = 0;
      break;
    case 2:  // square-root Toeplitz
      o.strategy = NoiseStrategy::sqrt_toeplitz;
      o.horizon = 6;
      break;
    case 3:  // BLT with a fixed strategy (no optimiser run per input)
      o.strategy = NoiseStrategy::blt;
      o.horizon = 6;
      o.blt = fixed_blt();
      break;
    case 4:  // covariance, plain tree, GOE shape, replace-one relation
      c.covariance = true;
      c.dimension = 2;
      o.strategy = NoiseStrategy::plain_tree;
      o.horizon = 4;
      o.shape = dpstream::privacy::SymmetricNoiseShape::goe;
      o.privacy.relation = dpstream::privacy::Neighbours::replace_row;
      break;
    default:  // 5: plain tree, unbounded, secure source (no source state in the checkpoint)
      o.strategy = NoiseStrategy::plain_tree;
      o.horizon = 0;
      o.privacy.noise.seed.reset();
      break;
  }
  return c;
}

inline dpstream::privacy::PrivacyAccountant fuzz_accountant() {
  return dpstream::privacy::PrivacyAccountant(dpstream::privacy::EpsDelta(20.0, 1e-5));
}

// Configurations 6-9: a fresh strategy object.
inline constexpr Eigen::Index kNoiseSize = 3;
inline constexpr std::uint64_t kNoiseHorizon = 8;
inline std::unique_ptr<dpstream::stream::ContinualNoise> noise_config(unsigned config) {
  using namespace dpstream::stream;
  switch (config) {
    case 6: return std::make_unique<TreeNoise>(TreeKind::honaker, kNoiseHorizon, 1.5, 1.0, kNoiseSize);
    case 7:
      return std::make_unique<EpochTreeNoise>(TreeKind::plain, 1.0, dpstream::privacy::EpsDelta(1.0, 1e-6),
                                              dpstream::privacy::Calibration::tight, kNoiseSize);
    case 8: return std::make_unique<SqrtToeplitzNoise>(kNoiseHorizon, 2.0, 1.0, kNoiseSize);
    default: return std::make_unique<BltNoise>(fixed_blt(), kNoiseHorizon, 2.0, 1.0, kNoiseSize);
  }
}

}  // namespace dpstream_fuzz
