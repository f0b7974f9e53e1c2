// Floating-point safety of released noise (Mironov 2012, "On significance of the least significant
// bits for differential privacy"). A release x + Z computed in doubles has a support that depends
// on x: some outputs of M(x') cannot come from M(x), so seeing one reveals the input, whatever ε
// the continuous analysis claims. Each test builds the exact support of M(0) for a sampler (an
// oracle: binary search over the sampler's uniform input, on which its output is monotone), feeds
// it the outputs of M(x'), and counts the impossible ones:
//   * the naive sampler x + b·(−log u)                   — fails (most outputs impossible);
//   * snapping its output to the grid Λ ≈ b·2^-30 alone  — fails in the tail beyond ≈ 16b;
//   * LaplaceMechanism (snap x, add Λ·discrete Laplace)  — passes: never an impossible output, and
//     its exact likelihood ratio is bounded by e^ε for every output;
// and, for the Huber mechanism's tail, exponential_fine leaves no grid cell of the tail unreachable
// where exponential (the 53-bit uniform's −log) leaves most of them.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>

#include "dpstream/privacy/laplace_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/snap.hpp"
#include "unaccounted.hpp"

namespace test_fp_safety {

using dpstream::privacy::LaplaceMechanism;
using dpstream::privacy::SeededNoiseSource;
using dpstream::privacy::snap_granularity;
using dpstream::privacy::snap_to_grid;

namespace {

// Is value(i) == target for some i in [lo, hi)? `value` must be non-increasing in i: the first i
// with value(i) ≤ target is found by bisection and is the only candidate.
bool attained(const std::function<double(std::uint64_t)>& value, std::uint64_t lo, std::uint64_t hi, double target) {
  std::uint64_t first = lo, last = hi;  // answer in [first, last]
  while (first < last) {
    const std::uint64_t mid = first + (last - first) / 2;
    if (value(mid) <= target) last = mid;
    else first = mid + 1;
  }
  return first < hi && value(first) == target;
}

// NoiseSource::laplace's magnitude for word index k: b·(−log((k + ½)·2^-53)), k ∈ [0, 2^53).
double coarse_magnitude(double b, std::uint64_t k) {
  return -b * std::log((static_cast<double>(k) + 0.5) * 0x1.0p-53);
}
constexpr std::uint64_t kCoarseWords = std::uint64_t{1} << 53;

// Could the naive release 0 + Z, Z = ±coarse_magnitude, be `output`?
bool naive_support_of_zero(double b, double output) {
  return attained([&](std::uint64_t k) { return coarse_magnitude(b, k); }, 0, kCoarseWords, std::fabs(output));
}
// Could snap(0 + Z) be `output`? (snap is odd and non-decreasing, so |output| = snap(magnitude).)
bool snapped_support_of_zero(double b, double grid, double output) {
  return attained([&](std::uint64_t k) { return snap_to_grid(coarse_magnitude(b, k), grid); }, 0, kCoarseWords,
                  std::fabs(output));
}

}  // namespace

TEST_CASE("Mironov: the naive Laplace sampler's low-order bits reveal the input", "[fp-safety]") {
  // M(x) = x + laplace(b), no snapping. x = 0 and x' = 1/3 (|x − x'| = 1/3 ≤ Δ₁ = 1, b = Δ₁/ε = 1).
  // An output of M(x') outside the support of M(0) identifies x' with certainty (ε = ∞). Most are:
  // near |v| the sampler reaches only about 1 double in e^{|v|}·2^-53/ulp(v), and x' + Z rounds onto
  // doubles of its own. 2,000 draws: the assertion (≥ 25% impossible) is far below what the
  // construction gives (measured 0.6-0.9 by the bracket of |v|), so it cannot fail by chance.
  const double b = 1.0, x_prime = 1.0 / 3.0;
  SeededNoiseSource source(2012);
  int impossible = 0;
  const int draws = 2000;
  for (int i = 0; i < draws; ++i) {
    const double output = x_prime + source.laplace(b);
    if (!naive_support_of_zero(b, output)) ++impossible;
  }
  INFO(impossible << " of " << draws << " outputs of M(1/3) are impossible under M(0)");
  CHECK(impossible >= draws / 4);
  // The oracle is sound: every output of M(0) itself is in the support of M(0).
  for (int i = 0; i < 200; ++i) REQUIRE(naive_support_of_zero(b, 0.0 + source.laplace(b)));
}

TEST_CASE("Mironov: snapping the naive sampler's output to a fine grid leaves its tail readable", "[fp-safety]") {
  // Snapping alone, as LaplaceMechanism released before its floating-point hardening:
  // snap(x + laplace(b)) on the grid Λ = 2^-30 (b = 1; it was 2^-40 then, with gaps from 9b).
  // Near |v| the sampler's support is spaced e^{|v|}·2^-53, wider than Λ beyond |v| = 23 ln 2 ≈ 15.9: there some cells are
  // unreachable, and which ones depends on x. Conditioned on |Z| > 17 (probability e^-17 = 4e-8;
  // sampled exactly by drawing the word index k uniformly below 2^53·e^-17), an expected
  // 1 − Λ/spacing ≈ 50-70% of outputs of M(1/3) are impossible under M(0); 500 draws and an
  // assertion at 20% (binomial sd ≈ 2.2%) cannot fail by chance. Such a path is at best (ε, δ)-DP
  // with δ the tail's mass, whatever its ε: LaplaceMechanism now draws discrete noise instead.
  const double b = 1.0, x_prime = 1.0 / 3.0;
  const double grid = snap_granularity(b);
  REQUIRE(grid == 0x1.0p-30);
  const auto tail_words = static_cast<std::uint64_t>(std::ldexp(std::exp(-17.0), 53));
  SeededNoiseSource source(12);
  int impossible = 0;
  const int draws = 500;
  for (int i = 0; i < draws; ++i) {
    const double magnitude = coarse_magnitude(b, source.uniform_below(tail_words));
    const double z = (source.next_word() & 1) ? -magnitude : magnitude;
    if (!snapped_support_of_zero(b, grid, snap_to_grid(x_prime + z, grid))) ++impossible;
  }
  INFO(impossible << " of " << draws << " tail outputs of snap(1/3 + Z) are impossible under snap(0 + Z)");
  CHECK(impossible >= draws / 5);
  // In the bulk (|Z| < 12) the same path has no impossible output: the grid is coarser than the
  // support there. This is why the tail, not the bulk, is what a test must look at.
  for (int i = 0; i < 200; ++i) {
    const double z = source.laplace(b);
    if (std::fabs(z) < 12.0) REQUIRE(snapped_support_of_zero(b, grid, snap_to_grid(x_prime + z, grid)));
  }
}

TEST_CASE("LaplaceMechanism: every output is possible under every input, with likelihood ratio <= e^eps",
          "[fp-safety]") {
  // M(x) = snap(x) + Λ·Y, Y ~ discrete Laplace(t): the support of M(x) is snap(x) + ΛZ, the same
  // lattice for every x (snap(x) is on it), so no output is impossible under a neighbour; and the
  // exact probability ratio of an output o is exp((|o − snap(x')| − |o − snap(x)|)/(tΛ)), which the
  // choice of t bounds by e^ε. Checked on 20,000 outputs of M(1/3) and on tail outputs (|o| > 10b,
  // about 1 in 22,000 draws: 400,000 draws give ~18 of them), against x = 0.
  const LaplaceMechanism mech(1.0, 1.0);
  const double b = mech.scale(), grid = snap_granularity(b);
  const std::uint64_t t = mech.grid_noise_scale(1);
  const double x = 0.0, x_prime = 1.0 / 3.0;
  const double lattice_x = snap_to_grid(x, grid), lattice_x_prime = snap_to_grid(x_prime, grid);
  SeededNoiseSource source(77);
  auto check_output = [&](double o) {
    const double steps_from_x = (o - lattice_x) / grid;
    REQUIRE(steps_from_x == std::nearbyint(steps_from_x));  // on the lattice of M(0): possible
    const double log_ratio = (std::fabs(o - lattice_x_prime) - std::fabs(o - lattice_x)) / (static_cast<double>(t) * grid);
    REQUIRE(std::fabs(log_ratio) <= mech.epsilon());
  };
  for (int i = 0; i < 20000; ++i) check_output(mech.release(x_prime, source, test_budget::unaccounted()));
  int tail = 0;
  for (int i = 0; i < 400000; ++i) {
    const double o = mech.release(x_prime, source, test_budget::unaccounted());
    if (std::fabs(o) > 10.0 * b) {
      ++tail;
      check_output(o);
    }
  }
  INFO(tail << " tail outputs checked");
  CHECK(tail >= 5);  // Poisson(18): P(< 5) ≈ 1e-4
}

TEST_CASE("exponential_fine reaches every grid cell of the tail; exponential does not", "[fp-safety]") {
  // The Huber mechanism's tail is α + E/α, snapped to the grid Λ = 2^-30 (unit scale here). For
  // 300 random cells at E ∈ [17, 40] ask whether some draw of the sampler lands in the cell:
  // exponential() = −log((k + ½)·2^-53) is spaced e^E·2^-53 ≥ 2.8 Λ there, so most cells are
  // missed (the fraction reached is about Λ·2^53·e^-E); exponential_fine() draws u from every
  // double of (0, 1), so its −log is spaced about 2^-52 (the doubles' own spacing near E, ≤ 2^-47),
  // far below Λ: every cell is hit.
  const double grid = snap_granularity(1.0);
  SeededNoiseSource source(40);
  int coarse_missed = 0;
  const int cells = 300;
  for (int i = 0; i < cells; ++i) {
    const double cell = snap_to_grid(17.0 + 23.0 * source.uniform_open(), grid);
    // Fine: u over the bit patterns of the doubles in (0, 1), on which −log u is non-increasing.
    const bool fine_hit = attained(
        [&](std::uint64_t bits) { return snap_to_grid(-std::log(std::bit_cast<double>(bits)), grid); },
        std::bit_cast<std::uint64_t>(0x1.0p-1074), std::bit_cast<std::uint64_t>(1.0), cell);
    REQUIRE(fine_hit);
    if (!attained([&](std::uint64_t k) { return snap_to_grid(coarse_magnitude(1.0, k), grid); }, 0, kCoarseWords,
                  cell))
      ++coarse_missed;
  }
  INFO(coarse_missed << " of " << cells << " tail cells unreachable by exponential()");
  CHECK(coarse_missed >= cells / 2);  // expected ≥ 1 − 1/2.8 = 64% at E = 17, → 100% by E = 25
}

TEST_CASE("uniform_open_fine: binade frequencies and full mantissas", "[fp-safety]") {
  // P(u < 2^-j) = 2^-j; 200,000 draws, each frequency within 5 binomial sd (Bonferroni over 12
  // checks: false alarm < 1e-5). Low mantissa bits are fair (parity of the last bit ~ ½).
  SeededNoiseSource source(3);
  const int draws = 200000;
  int below[13] = {};
  int odd = 0;
  double smallest = 1.0;
  for (int i = 0; i < draws; ++i) {
    const double u = source.uniform_open_fine();
    REQUIRE(u > 0.0);
    REQUIRE(u < 1.0);
    for (int j = 1; j <= 12; ++j) below[j] += u < std::ldexp(1.0, -j);
    odd += static_cast<int>(std::bit_cast<std::uint64_t>(u) & 1);
    smallest = std::min(smallest, u);
  }
  for (int j = 1; j <= 12; ++j) {
    const double p = std::ldexp(1.0, -j), sd = std::sqrt(draws * p * (1 - p));
    INFO("P(u < 2^-" << j << ")");
    CHECK(std::fabs(below[j] - draws * p) <= 5 * sd);
  }
  CHECK(std::fabs(odd - draws / 2.0) <= 5 * std::sqrt(draws / 4.0));
  CHECK(smallest < 1e-4);  // P(min ≥ 1e-4) = (1 − 1e-4)^200000 ≈ 2e-9
}

}  // namespace test_fp_safety
