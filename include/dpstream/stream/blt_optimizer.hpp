// The BLT optimiser: chooses a BufferedToeplitz strategy (blt.hpp) for a horizon and an error
// (max or mean) by minimising sensitivity² × error, growing the number of buffers while it pays.
#pragma once

#include <cstdint>
#include <vector>

#include "dpstream/stream/blt.hpp"

namespace dpstream::stream {

struct BltOptimizeOptions {
  std::uint64_t horizon = 0;  // n ≥ 1: the releases the strategy is optimised for
  BltError error = BltError::max;
  int min_buffers = 0;        // 0 = start from C = I
  int max_buffers = 10;       // ≤ 15 (beyond that the closed forms lose precision)
  double rtol = 1.01;         // add buffers while the loss improves by more than this factor
  int max_iterations = 600;   // iterations of one L-BFGS run (see optimize_blt_buffers)
  // The sensitivity optimised for: (k, b)-participation (participation.hpp), closed form
  // BufferedToeplitz::sensitivity_squared(n, participation) — exact on the optimiser's domain (its
  // coefficients are positive and decreasing). The default is single participation.
  Participation participation;
};

struct BltOptimizeResult {
  BufferedToeplitz blt = BufferedToeplitz::identity();
  double loss = 0;                  // sensitivity² (under the participation) × error (max or mean) at the horizon
  std::vector<double> loss_by_buffers;  // the loss reached with min_buffers, min_buffers + 1, …
};

// Minimises loss(C) = sensitivity²(n, participation)·error(n) over BLTs with a given number of buffers by L-BFGS
// (LBFGS++) on the pole pair (log(1 − θ), log(1 − θ̂)), with exact gradients (forward-mode
// automatic differentiation of the closed forms) and the log-barrier penalties (strength 1e-8 on
// the loss normalised by (1 + ln n/π)² + 1) that keep C in the well-behaved class of arXiv
// 2504.21413 Thm 1: 0 < θ, θ̂ < 1, ω > 0 > ω̂, Σω < 1, Σω/θ < 1, distinct poles. Those are the
// choices of jax_privacy's optimize(), whose golden parameters the tests reproduce; the start is the
// rational_approximation_blt (blt.hpp). When the line search gives
// up, L-BFGS restarts from the best point so far (up to 50 runs, while the loss improves): one run
// from the start stalls short of the near-optimality targets at 4 buffers. Throws
// std::runtime_error if no finite loss is reached.
BltOptimizeResult optimize_blt_buffers(std::uint64_t horizon, BltError error, int buffers, int max_iterations = 600,
                                       const Participation& participation = {});
// Grows the number of buffers from min_buffers until the loss improves by less than rtol; returns
// the last BLT that improved enough.
BltOptimizeResult optimize_blt(const BltOptimizeOptions& options);

}  // namespace dpstream::stream
