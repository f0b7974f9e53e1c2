// Snapping released values to a grid (mitigation of Mironov 2012, see noise_source.hpp).
#pragma once

#include <span>

namespace dpstream::privacy {

// Grid spacing relative to the noise scale: Λ is the smallest power of two ≥ σ·2^-kSnapBits.
//
// Why 30 (it was 40). Rounding moves a release by ≤ 2^-31 σ: nothing next to the noise.
// What it must hide is the floating-point sampler's uneven support (Mironov 2012). A Gaussian from
// the Ziggurat is u·x_layer with u on a 2^-52 lattice, so a cell of width Λ holds 2^(52-kSnapBits)/x
// support points of each layer, ± 1: the probability of a released cell is off the continuous law's
// by a relative ≲ x·2^-(52-kSnapBits), and that error is what neighbours could be told apart by
// beyond the analysed ε. At 40 bits it was ~2^-10 a coordinate — over the ~3·10^5 entries of one
// covariance release (d = 784) its worst case ran to hundreds; at 30 bits it is ≤ 2^-20 a
// coordinate. The Ziggurat tail (−log of a 53-bit uniform) has gaps wider than Λ only beyond 8.4σ
// (probability 4e-17 a coordinate). Laplace releases do not rely on this: LaplaceMechanism draws
// exact discrete Laplace noise on the grid (tests/test_fp_safety.cpp).
inline constexpr int kSnapBits = 30;

// The grid spacing for noise of standard deviation (or scale) `noise_scale`: the smallest power of
// two ≥ noise_scale · 2^-kSnapBits.
double snap_granularity(double noise_scale);
// Round `value` to the nearest multiple of `granularity` (a power of two).
double snap_to_grid(double value, double granularity);
// The same for every element of `values`, in place, with the same results as the scalar form; a
// branch-free loop the compiler vectorises (releases snap d(d+1)/2 entries per step).
void snap_to_grid(std::span<double> values, double granularity);

}  // namespace dpstream::privacy
