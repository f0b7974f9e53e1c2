// Snapping released values to a grid (mitigation of Mironov 2012, see noise_source.hpp).
#pragma once

#include <span>

namespace dpstream::privacy {

// The grid spacing for noise of standard deviation (or scale) `noise_scale`: the smallest power of
// two ≥ noise_scale · 2^-40. Rounding to it changes a release by far less than the noise
// (≤ 2^-41 σ) while removing the low-order bits an attacker would read.
double snap_granularity(double noise_scale);
// Round `value` to the nearest multiple of `granularity` (a power of two).
double snap_to_grid(double value, double granularity);
// The same for every element of `values`, in place, with the same results as the scalar form; a
// branch-free loop the compiler vectorises (releases snap d(d+1)/2 entries per step).
void snap_to_grid(std::span<double> values, double granularity);

}  // namespace dpstream::privacy
