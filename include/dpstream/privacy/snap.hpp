// Snapping released values to a grid (mitigation of Mironov 2012, see noise_source.hpp).
#pragma once

namespace dpstream::privacy {

// The grid spacing for noise of standard deviation (or scale) `noise_scale`: the smallest power of
// two ≥ noise_scale · 2^-40. Rounding to it changes a release by far less than the noise
// (≤ 2^-41 σ) while removing the low-order bits an attacker would read.
double snap_granularity(double noise_scale);
// Round `value` to the nearest multiple of `granularity` (a power of two).
double snap_to_grid(double value, double granularity);

}  // namespace dpstream::privacy
