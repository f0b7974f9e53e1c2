// The 256-layer Ziggurat for the standard normal (Marsaglia & Tsang 2000): tables and slow path.
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::privacy {
namespace detail {
namespace {

double unnormalised_density(double x) { return std::exp(-0.5 * x * x); }

// Tables computed once at static initialisation from R. V (the common strip area) is derived from R
// as the exact area of the base strip, R·f(R) + ∫_R^∞ f = R·f(R) + √(π/2)·erfc(R/√2), rather than
// typed in: it agrees with Marsaglia & Tsang's V = 0.00492867323399 to 3e-12 relative, and with it
// the top layer closes (x[255]·(1 − f(x[255])) = V) to ~1e-13 instead of ~1e-9, so every layer has
// the same area as uniform layer selection assumes.
ZigguratTables make_tables() {
  constexpr double r = kZigguratR;
  const double f_r = unnormalised_density(r);
  const double v = r * f_r + std::sqrt(std::numbers::pi / 2) * std::erfc(r / std::numbers::sqrt2);

  ZigguratTables t{};
  t.x[0] = v / f_r;
  t.x[1] = r;
  // Layer i ≥ 1 is [0, x[i]] × [f(x[i]), f(x[i+1])] with area V: f(x[i+1]) = V/x[i] + f(x[i]).
  for (std::size_t i = 1; i < 255; ++i) {
    t.x[i + 1] = std::sqrt(-2.0 * std::log(v / t.x[i] + unnormalised_density(t.x[i])));
  }
  t.x[256] = 0.0;
  for (std::size_t i = 0; i < 257; ++i) t.f[i] = unnormalised_density(t.x[i]);
  for (std::size_t i = 0; i < 256; ++i) t.ratio[i] = t.x[i + 1] / t.x[i];
  return t;
}

}  // namespace

// Dynamic initialisation: do not draw Gaussians from other translation units' static initialisers.
const ZigguratTables kZiggurat = make_tables();

}  // namespace detail

double NoiseSource::gaussian_slow(unsigned layer, double u) {
  const auto& z = detail::kZiggurat;
  if (layer == 0) {
    // The point fell beyond R in the base strip: draw from the tail x > R exactly (Marsaglia 1964):
    // with e1 = −ln(U1)/R and e2 = −ln(U2), R + e1 has the tail's law conditioned on 2·e2 > e1².
    // The sign is u's, which is uniform and independent of |u| ≥ ratio[0].
    constexpr double r = detail::kZigguratR;
    for (;;) {
      const double e1 = -std::log(uniform_open()) / r;
      const double e2 = -std::log(uniform_open());
      if (2.0 * e2 > e1 * e1) return u < 0 ? -(r + e1) : r + e1;
    }
  }
  // Wedge: x ∈ [x[i+1], x[i]]; the point (x, y) with y uniform on [f[i], f[i+1]] lies under the
  // density with probability (f(x) − f[i])/(f[i+1] − f[i]).
  const double x = u * z.x[layer];
  const double y = z.f[layer] + uniform_open() * (z.f[layer + 1] - z.f[layer]);
  if (y < detail::unnormalised_density(x)) return x;
  return std::numeric_limits<double>::quiet_NaN();  // rejected: the caller draws a new word
}

}  // namespace dpstream::privacy
