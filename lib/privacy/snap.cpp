// Snapping released values to a power-of-two grid (see snap.hpp).
#include "dpstream/privacy/snap.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "dpstream/base/errors.hpp"

namespace dpstream::privacy {

namespace {

// A positive finite power of two, normal or subnormal: a bit test, cheap enough for per-element use.
bool is_power_of_two(double g) {
  const auto bits = std::bit_cast<std::uint64_t>(g);
  const std::uint64_t exponent = bits >> 52;  // includes the sign bit, so negatives fail below
  const std::uint64_t mantissa = bits & ((std::uint64_t{1} << 52) - 1);
  if (exponent == 0) return mantissa != 0 && (mantissa & (mantissa - 1)) == 0;  // subnormal
  return exponent < 0x7FF && mantissa == 0;
}

}  // namespace

double snap_granularity(double noise_scale) {
  if (!(std::isfinite(noise_scale) && noise_scale > 0.0)) {
    std::ostringstream msg;
    msg << "snap_granularity: noise_scale must be finite and > 0, got " << noise_scale;
    throw InvalidParameter(msg.str());
  }
  // noise_scale = m·2^e with m ∈ [1, 2); the smallest power of two ≥ noise_scale·2^-B (B = kSnapBits)
  // is 2^(e−B) when m = 1 and 2^(e−B+1) otherwise. Working from the exponent avoids rounding.
  const int e = std::ilogb(noise_scale);
  const bool exact_power = std::scalbn(1.0, e) == noise_scale;
  const int k = e - kSnapBits + (exact_power ? 0 : 1);
  // Below 2^-1074 no double is finer than the grid already; the smallest subnormal is the answer.
  constexpr int kMinExponent = std::numeric_limits<double>::min_exponent - std::numeric_limits<double>::digits;
  return std::ldexp(1.0, k < kMinExponent ? kMinExponent : k);
}

double snap_to_grid(double value, double granularity) {
  if (!is_power_of_two(granularity)) {
    std::ostringstream msg;
    msg << "snap_to_grid: granularity must be a positive power of two, got " << granularity;
    throw InvalidParameter(msg.str());
  }
  // |value| ≥ 2^52·g: the ulp of value is ≥ g, so value is already on the grid (and value/g could
  // overflow). Infinities pass through here too; NaN falls through and stays NaN.
  if (std::fabs(value) >= 0x1.0p52 * granularity) return value;
  // value/g and the product are exact (g is a power of two, the quotient has < 2^52 magnitude);
  // nearbyint rounds half to even in the default rounding mode. Adding +0 turns −0 into +0, so the
  // sign of a value that snaps to zero (information below the grid) is not released.
  return std::nearbyint(value / granularity) * granularity + 0.0;
}

void snap_to_grid(std::span<double> values, double granularity) {
  snap_to_grid(0.0, granularity);  // validates the granularity once
  const double inverse = 1.0 / granularity;  // exact: granularity is a power of two
  if (!std::isfinite(inverse)) {  // granularity below 2^-1023 (σ < 2^-983): the scalar form divides
    for (double& v : values) v = snap_to_grid(v, granularity);
    return;
  }
  // Round half to even without a libm call: for |q| < 2^52, q ± 2^52 (sign of q) lies where the
  // spacing of doubles is exactly 1, so the addition rounds q to an integer in the current
  // (nearest-even) mode and the subtraction is exact — nearbyint, branch-free. It yields +0 for every
  // q that rounds to zero, as the scalar form's "+ 0.0" does. |q| ≥ 2^52 is already on the grid (or
  // inf/NaN) and passes through, as in the scalar form.
  for (double& v : values) {
    const double q = v * inverse;
    const double magic = std::copysign(0x1.0p52, q);
    const double snapped = ((q + magic) - magic) * granularity;
    v = std::fabs(q) < 0x1.0p52 ? snapped : v;
  }
}

}  // namespace dpstream::privacy
