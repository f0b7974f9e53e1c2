// Tests of the noise sources, the Ziggurat and snapping.
//
// Tolerances. Every statistical check is a tail bound with a stated false-alarm probability α under
// the hypothesis that the sampler is exact (helpers in stat_helpers.hpp say which bound):
//  - Seeded source: α = 1e-6 per check. The seeds are fixed, so the outcome is deterministic; α is
//    the chance that a seed picked at random would fail a correct sampler.
//  - Secure source (unseeded, a fresh outcome on every run): α = 1e-7 per check and exactly 10
//    checks (counted in kSecureChecks), so by the union bound the test fails falsely with probability
//    ≤ 1e-6 per run.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/snap.hpp"
#include "stat_helpers.hpp"

namespace test_noise_source {

using dpstream::InvalidParameter;
using dpstream::privacy::NoiseSource;
using dpstream::privacy::SecureNoiseSource;
using dpstream::privacy::SeededNoiseSource;
namespace st = dpstream::testing;

namespace {

constexpr double kSeededAlpha = 1e-6;
constexpr double kSecureAlpha = 1e-7;
// Secure checks: Gaussian mean, second moment, skewness, kurtosis, KS (5); tails beyond R and 4.5
// (2); exponential KS, Laplace KS (2); uniform mean (1). The non-statistical secure checks (two
// keys giving equal streams, repeated words) fail falsely with probability < 2^-100.
[[maybe_unused]] constexpr int kSecureChecks = 10;
static_assert(kSecureChecks * kSecureAlpha <= 1e-6);

const double kR = dpstream::privacy::detail::kZigguratR;

double two_sided_tail(double x) { return std::erfc(x / std::numbers::sqrt2); }  // P(|Z| > x)

std::vector<double> gaussians(NoiseSource& source, std::size_t n, double sigma = 1.0) {
  std::vector<double> xs(n);
  source.fill_gaussian(xs, sigma);
  return xs;
}

// Five checks on n standard normal draws, each with false-alarm probability alpha.
void check_standard_normal(const std::vector<double>& xs, double alpha) {
  const std::size_t n = xs.size();
  const double nd = static_cast<double>(n);
  const double z = st::chernoff_z(alpha);
  const st::Moments m = st::moments(xs);
  INFO("n = " << n << ", mean " << m.mean << ", variance " << m.variance << ", skewness " << m.skewness
              << ", excess kurtosis " << m.excess_kurtosis << ", z = " << z);
  // Mean of n N(0,1) is exactly N(0, 1/n): Chernoff band.
  CHECK(std::fabs(m.mean) <= z / std::sqrt(nd));
  // Σx² about the true mean 0 is exactly χ²_n: Laurent–Massart interval.
  double sum_sq = 0;
  for (double x : xs) sum_sq += x * x;
  const auto [chi_lo, chi_hi] = st::chi_square_interval(nd, alpha);
  CHECK(sum_sq >= chi_lo);
  CHECK(sum_sq <= chi_hi);
  // Sample skewness and excess kurtosis of normals: asymptotic standard errors √(6/n) and √(24/n);
  // chernoff_z leaves ~15× slack for the CLT error at this n.
  CHECK(std::fabs(m.skewness) <= z * std::sqrt(6.0 / nd));
  CHECK(std::fabs(m.excess_kurtosis) <= z * std::sqrt(24.0 / nd));
  // KS against Φ: DKW bound.
  const double d = st::ks_statistic(xs, st::normal_cdf);
  INFO("KS D = " << d << ", p ≈ " << st::ks_p_value(d, n));
  CHECK(d <= st::dkw_epsilon(n, alpha));
}

struct TailCounts {
  double beyond_r = 0, beyond_4_5 = 0, n = 0;
};

TailCounts count_tails(NoiseSource& source, std::size_t n) {
  std::vector<double> chunk(1 << 16);
  TailCounts c;
  for (std::size_t done = 0; done < n; done += chunk.size()) {
    source.fill_gaussian(chunk);
    for (double x : chunk) {
      const double a = std::fabs(x);
      c.beyond_r += a > kR;
      c.beyond_4_5 += a > 4.5;
    }
    c.n += static_cast<double>(chunk.size());
  }
  return c;
}

void check_tails(const TailCounts& c, double alpha) {
  // Each count is Binomial(n, 2Φ(−x)): Chernoff interval.
  const auto [r_lo, r_hi] = st::binomial_interval(c.n, two_sided_tail(kR), alpha);
  const auto [t_lo, t_hi] = st::binomial_interval(c.n, two_sided_tail(4.5), alpha);
  INFO("n = " << c.n << ": |Z| > R: " << c.beyond_r << " in [" << r_lo << ", " << r_hi << "]; |Z| > 4.5: "
              << c.beyond_4_5 << " in [" << t_lo << ", " << t_hi << "]");
  CHECK(c.beyond_r >= r_lo);
  CHECK(c.beyond_r <= r_hi);
  CHECK(c.beyond_4_5 >= t_lo);
  CHECK(c.beyond_4_5 <= t_hi);
}

double exponential_cdf(double x) { return x <= 0 ? 0.0 : -std::expm1(-x); }
double laplace_cdf(double x, double b) {
  return x < 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b);
}

// Replays a fixed list of words (then zeros), to test how words map to samples.
class ScriptedSource final : public NoiseSource {
 public:
  explicit ScriptedSource(std::vector<std::uint64_t> words) : words_(std::move(words)) {}
  bool is_secure() const noexcept override { return false; }

 protected:
  void generate(std::span<std::uint64_t> out) override {
    for (auto& w : out) w = next_ < words_.size() ? words_[next_++] : 0;
  }

 private:
  std::vector<std::uint64_t> words_;
  std::size_t next_ = 0;
};

}  // namespace

// ---- Ziggurat tables ----------------------------------------------------------------------------

TEST_CASE("Ziggurat tables: every layer has area V", "[noise][ziggurat]") {
  const auto& z = dpstream::privacy::detail::kZiggurat;
  const auto f = [](double x) { return std::exp(-0.5 * x * x); };
  const double v = kR * f(kR) + std::sqrt(std::numbers::pi / 2) * std::erfc(kR / std::numbers::sqrt2);
  CHECK(v == Approx(0.00492867323399).epsilon(1e-10));  // Marsaglia & Tsang's published V
  CHECK(z.x[1] == kR);
  CHECK(z.x[256] == 0.0);
  CHECK(z.f[256] == 1.0);
  CHECK(z.x[0] * z.f[1] == Approx(v).epsilon(1e-14));  // base strip's nominal rectangle
  for (std::size_t i = 1; i < 256; ++i) {
    INFO("layer " << i);
    CHECK(z.x[i + 1] < z.x[i]);
    CHECK(z.f[i] == Approx(f(z.x[i])).epsilon(1e-15));
    CHECK(z.ratio[i] == Approx(z.x[i + 1] / z.x[i]).epsilon(1e-15));
    // Rounding in the recursion accumulates; the top layer closes the Ziggurat to ~1e-13.
    CHECK(z.x[i] * (z.f[i + 1] - z.f[i]) == Approx(v).epsilon(1e-11));
  }
}

TEST_CASE("Gaussian word layout: layer from bits 0-7, signed uniform from bits 11-63", "[noise][ziggurat]") {
  const auto& z = dpstream::privacy::detail::kZiggurat;
  // Layer 100's fast path accepts |u| < ratio[100] (≈ 0.99), so u = ±0.5 + ½·2^-52 is accepted.
  const std::uint64_t layer = 100;
  const std::uint64_t half = std::uint64_t{1} << 51;          // k = 2^51 → u = 0.5 + 2^-53
  const std::uint64_t minus_half = std::uint64_t(-(std::int64_t{1} << 51)) & ((std::uint64_t{1} << 53) - 1);
  const std::uint64_t unused_bits = 0x7 << 8;                 // bits 8-10 must not matter
  ScriptedSource src({(half << 11) | layer, (half << 11) | unused_bits | layer, (minus_half << 11) | layer});
  const double u = 0.5 + 0x1.0p-53;
  CHECK(src.gaussian() == u * z.x[layer]);
  CHECK(src.gaussian() == u * z.x[layer]);
  CHECK(src.gaussian() == -(0.5 - 0x1.0p-53) * z.x[layer]);

  // Extreme words: uniform_open stays inside (0, 1).
  ScriptedSource extremes({0, ~std::uint64_t{0}});
  const double lo = extremes.uniform_open(), hi = extremes.uniform_open();
  CHECK(lo == 0x1.0p-54);
  CHECK(hi == 1.0 - 0x1.0p-54);

  // Laplace: sign from bit 0 only.
  ScriptedSource lap({std::uint64_t{1} << 63, (std::uint64_t{1} << 63) | 1});
  const double a = lap.laplace(1.0), b = lap.laplace(1.0);
  CHECK(a == Approx(std::log(2.0)).epsilon(1e-12));
  CHECK(b == -a);
}

// ---- Seeded source ------------------------------------------------------------------------------

TEST_CASE("Seeded: xoshiro256++ known answers, determinism, seeds differ", "[noise][seeded]") {
  // Reference values from an independent implementation of splitmix64 + xoshiro256++.
  SeededNoiseSource zero(0);
  CHECK(zero.next_word() == 0x53175d61490b23dfULL);
  CHECK(zero.next_word() == 0x61da6f3dc380d507ULL);
  CHECK(zero.next_word() == 0x5c0fdf91ec9a7bfcULL);
  SeededNoiseSource other(20240611);
  std::vector<std::uint64_t> words(1003);
  other.fill_words(words);
  CHECK(words[0] == 0x790dba27dfd2a40eULL);
  CHECK(words[1002] == 0x10faceb27d97e717ULL);
  CHECK(other.seed() == 20240611);

  SeededNoiseSource a(42), b(42), c(43);
  int equal_ac = 0;
  for (int i = 0; i < 2000; ++i) {
    const auto wa = a.next_word(), wb = b.next_word(), wc = c.next_word();
    REQUIRE(wa == wb);
    equal_ac += wa == wc;
  }
  CHECK(equal_ac == 0);
  CHECK(gaussians(a, 5000) == gaussians(b, 5000));
}

TEST_CASE("Seeded: fill_words is the next_word stream", "[noise][seeded]") {
  SeededNoiseSource by_word(7), by_fill(7);
  // Sizes that start mid-buffer, cross buffers, and take the direct bulk path (≥ 512).
  for (std::size_t len : {1u, 5u, 511u, 512u, 513u, 3000u, 0u, 1024u, 77u, 4096u}) {
    std::vector<std::uint64_t> filled(len);
    by_fill.fill_words(filled);
    for (std::size_t i = 0; i < len; ++i) REQUIRE(filled[i] == by_word.next_word());
    REQUIRE(by_fill.next_word() == by_word.next_word());  // interleaving keeps them in step
  }
}

TEST_CASE("Seeded: fill_gaussian equals sigma * gaussian() and scales", "[noise][seeded]") {
  // 2·10^5 draws take ~2400 slow paths (about 1.2% per word) across ~400 buffer refills, so this
  // exercises the cursor hand-over between fill_gaussian's loop and the slow path.
  SeededNoiseSource by_one(11), by_fill(11);
  const double sigma = 3.25;
  for (std::size_t len : {200000u, 1u, 700u, 513u}) {
    std::vector<double> filled(len);
    by_fill.fill_gaussian(filled, sigma);
    for (std::size_t i = 0; i < len; ++i) REQUIRE(filled[i] == sigma * by_one.gaussian());
    REQUIRE(by_fill.next_word() == by_one.next_word());
  }

  // Scaling: the sample standard deviation of sigma·Z. Σ(x/σ)² ~ χ²_n (Laurent–Massart).
  SeededNoiseSource src(12);
  const std::size_t n = 200000;
  const auto xs = gaussians(src, n, 2.5);
  double sum_sq = 0;
  for (double x : xs) sum_sq += (x / 2.5) * (x / 2.5);
  const auto [lo, hi] = st::chi_square_interval(static_cast<double>(n), kSeededAlpha);
  CHECK(sum_sq >= lo);
  CHECK(sum_sq <= hi);

  std::vector<double> zeros(100, 1.0);
  src.fill_gaussian(zeros, 0.0);
  CHECK(std::all_of(zeros.begin(), zeros.end(), [](double x) { return x == 0.0; }));
  CHECK_THROWS_AS(src.fill_gaussian(zeros, -1.0), InvalidParameter);
  CHECK_THROWS_AS(src.fill_gaussian(zeros, std::nan("")), InvalidParameter);
  CHECK_THROWS_AS(src.fill_gaussian(zeros, std::numeric_limits<double>::infinity()), InvalidParameter);
}

TEST_CASE("Seeded: Gaussian moments and KS, n = 10^6", "[noise][seeded][stat]") {
  SeededNoiseSource src(2024);
  check_standard_normal(gaussians(src, 1'000'000), kSeededAlpha);
  // The inline gaussian() path too.
  std::vector<double> one_by_one(1'000'000);
  for (double& x : one_by_one) x = src.gaussian();
  check_standard_normal(one_by_one, kSeededAlpha);
}

TEST_CASE("Seeded: Gaussian tails and per-layer histogram", "[noise][seeded][stat]") {
  SeededNoiseSource src(99);
  // 10^8 draws: ~25,800 expected beyond R and ~680 beyond 4.5.
  check_tails(count_tails(src, 100'000'000), kSeededAlpha);

  // Histogram of |Z| over the Ziggurat's own abscissae (bin i = [x[i+1], x[i]), bin 0 = [R, ∞)) and
  // of the sign: a wrong wedge test or layer table shows up in the bins of that layer. Pearson's
  // statistic is asymptotically χ²_255 (every bin expects > 10^4 here); Laurent–Massart upper bound.
  const auto& z = dpstream::privacy::detail::kZiggurat;
  const std::size_t n = 100'000'000;
  std::vector<double> counts(256, 0.0);
  double positive = 0;
  std::vector<double> chunk(1 << 16);
  for (std::size_t done = 0; done < n; done += chunk.size()) {
    src.fill_gaussian(chunk);
    for (double x : chunk) {
      positive += x > 0;
      const double a = std::fabs(x);
      // x[1..256] is decreasing: the bin is the last i ≥ 1 with x[i] > a, i.e. a ∈ [x[i+1], x[i]).
      const auto it = std::partition_point(z.x.begin() + 1, z.x.end(), [a](double xi) { return xi > a; });
      const auto bin = static_cast<std::size_t>(it - (z.x.begin() + 1));  // a ≥ R gives 0
      counts[bin] += 1;
    }
  }
  const double total = static_cast<double>((n + chunk.size() - 1) / chunk.size() * chunk.size());
  double pearson = 0, min_expected = total;
  for (std::size_t bin = 0; bin < 256; ++bin) {
    const double p = bin == 0 ? two_sided_tail(kR) : two_sided_tail(z.x[bin + 1]) - two_sided_tail(z.x[bin]);
    const double expected = total * p;
    min_expected = std::min(min_expected, expected);
    pearson += (counts[bin] - expected) * (counts[bin] - expected) / expected;
  }
  const double bound = st::chi_square_upper(255, kSeededAlpha);
  INFO("Pearson " << pearson << " vs bound " << bound << "; smallest expected count " << min_expected);
  CHECK(min_expected > 10000);
  CHECK(pearson <= bound);
  const auto [pos_lo, pos_hi] = st::binomial_interval(total, 0.5, kSeededAlpha);
  CHECK(positive >= pos_lo);
  CHECK(positive <= pos_hi);
}

TEST_CASE("Seeded: exponential and Laplace moments and KS", "[noise][seeded][stat]") {
  SeededNoiseSource src(5);
  const std::size_t n = 1'000'000;
  const double nd = static_cast<double>(n);
  // Moments: asymptotically normal with the standard errors below; chernoff_z band (see helper).
  const double z = st::chernoff_z(kSeededAlpha);

  std::vector<double> e(n);
  for (double& x : e) x = src.exponential();
  CHECK(*std::min_element(e.begin(), e.end()) > 0.0);
  const st::Moments me = st::moments(e);
  INFO("exponential: mean " << me.mean << ", variance " << me.variance);
  CHECK(std::fabs(me.mean - 1.0) <= z * std::sqrt(1.0 / nd));       // Var X = 1
  CHECK(std::fabs(me.variance - 1.0) <= z * std::sqrt(8.0 / nd));   // (μ4 − σ⁴)/n = (9 − 1)/n
  CHECK(st::ks_statistic(e, exponential_cdf) <= st::dkw_epsilon(n, kSeededAlpha));

  const double b = 2.0;
  std::vector<double> l(n);
  for (double& x : l) x = src.laplace(b);
  const st::Moments ml = st::moments(l);
  INFO("Laplace(2): mean " << ml.mean << ", variance " << ml.variance);
  CHECK(std::fabs(ml.mean) <= z * std::sqrt(2.0 * b * b / nd));                // Var X = 2b²
  CHECK(std::fabs(ml.variance - 2 * b * b) <= z * std::sqrt(20.0 * b * b * b * b / nd));  // (24 − 4)b⁴/n
  CHECK(st::ks_statistic(l, [b](double x) { return laplace_cdf(x, b); }) <= st::dkw_epsilon(n, kSeededAlpha));

  CHECK_THROWS_AS(src.laplace(0.0), InvalidParameter);
  CHECK_THROWS_AS(src.laplace(-1.0), InvalidParameter);
  CHECK_THROWS_AS(src.laplace(std::nan("")), InvalidParameter);
}

TEST_CASE("Seeded: uniform_open is in (0, 1) with mean 1/2", "[noise][seeded][stat]") {
  SeededNoiseSource src(3);
  const std::size_t n = 1'000'000;
  double sum = 0, lo = 1, hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double u = src.uniform_open();
    sum += u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  CHECK(lo > 0.0);
  CHECK(hi < 1.0);
  CHECK(std::fabs(sum / static_cast<double>(n) - 0.5) <= st::hoeffding_t(n, kSeededAlpha));
}

// ---- Secure source ------------------------------------------------------------------------------

TEST_CASE("Seeded: uniform_below is uniform and unbiased at awkward bounds", "[noise][seeded][stat]") {
  // bound 3: 2^64 mod 3 = 1, so plain modulo would be biased (invisibly); chi-square-free check:
  // each count within 5 binomial sd of n/3 (false alarm ~1e-6). bound 1 always gives 0.
  SeededNoiseSource source(31);
  const int n = 300000;
  int counts[3] = {};
  for (int i = 0; i < n; ++i) ++counts[source.uniform_below(3)];
  for (int c : counts) CHECK(std::fabs(c - n / 3.0) <= 5 * std::sqrt(n * (1.0 / 3) * (2.0 / 3)));
  for (int i = 0; i < 100; ++i) REQUIRE(source.uniform_below(1) == 0);
  const std::uint64_t big = (std::uint64_t{1} << 63) + 12345;
  for (int i = 0; i < 1000; ++i) REQUIRE(source.uniform_below(big) < big);
  REQUIRE_THROWS_AS(source.uniform_below(0), InvalidParameter);
}

TEST_CASE("Seeded: bernoulli_exp_minus has probability exp(-n/d) exactly", "[noise][seeded][stat]") {
  // 200,000 draws per γ; frequency within 5 binomial sd of e^-γ (6 checks: false alarm < 4e-6).
  // A sampler off by one term of the series would be off by ≥ γ²/2·e^-γ: tens of sd here.
  SeededNoiseSource source(32);
  const int n = 200000;
  for (auto [num, den] : {std::pair<std::uint64_t, std::uint64_t>{0, 1}, {1, 3}, {1, 1}, {5, 2}, {7, 1},
                          {(std::uint64_t{1} << 40) - 1, std::uint64_t{1} << 40}}) {
    const double p = std::exp(-static_cast<double>(num) / static_cast<double>(den));
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += source.bernoulli_exp_minus(num, den);
    INFO("gamma = " << num << "/" << den);
    CHECK(std::fabs(hits - n * p) <= 5 * std::sqrt(n * p * (1 - p)) + 1e-9);
  }
  REQUIRE_THROWS_AS(source.bernoulli_exp_minus(1, 0), InvalidParameter);
}

TEST_CASE("Seeded: discrete_laplace matches its probability mass function", "[noise][seeded][stat]") {
  // P(Y = y) = (1 − q)/(1 + q)·q^|y|, q = e^{−1/t}. t = 3 (small: the lattice matters), 300,000
  // draws: each y in [−12, 12] within 5 binomial sd (25 bins: false alarm < 2e-5); a sampler with
  // the wrong zero mass (the classic "−0 counted twice" bug) is off by ~0.08·n·P(0): 50 sd.
  // t = 2^40 (the order of LaplaceMechanism's t, b/Λ ≈ 2^30, and beyond): variance 2e^{-1/t}/(1 − e^{-1/t})² ≈ 2t² within 4%
  // (sd of a sample variance of a Laplace, n = 200,000: √(5/n)·2t² ≈ 0.5%, so 8 sd).
  SeededNoiseSource source(33);
  const std::uint64_t t = 3;
  const double q = std::exp(-1.0 / t);
  const int n = 300000;
  std::vector<int> counts(25, 0);
  for (int i = 0; i < n; ++i) {
    const std::int64_t y = source.discrete_laplace(t);
    if (y >= -12 && y <= 12) ++counts[static_cast<std::size_t>(y + 12)];
  }
  for (int y = -12; y <= 12; ++y) {
    const double p = (1 - q) / (1 + q) * std::pow(q, std::abs(y));
    INFO("y = " << y);
    CHECK(std::fabs(counts[static_cast<std::size_t>(y + 12)] - n * p) <= 5 * std::sqrt(n * p * (1 - p)));
  }
  const std::uint64_t big = std::uint64_t{1} << 40;
  double sum_sq = 0;
  const int m = 200000;
  for (int i = 0; i < m; ++i) {
    const double y = static_cast<double>(source.discrete_laplace(big));
    sum_sq += y * y;
  }
  CHECK(sum_sq / m / (2.0 * std::ldexp(1.0, 80)) == Approx(1.0).epsilon(0.04));
  REQUIRE_THROWS_AS(source.discrete_laplace(0), InvalidParameter);
}

TEST_CASE("Secure: a saved state continues the same keystream; ratchet moves on for good", "[noise][secure]") {
  SecureNoiseSource source;
  for (int i = 0; i < 700; ++i) source.next_word();  // mid-buffer: pending words matter
  const SecureNoiseSource::State saved = source.state();
  auto restored = SecureNoiseSource::from_state(saved);
  REQUIRE(restored->is_secure());
  for (int i = 0; i < 2000; ++i) REQUIRE(restored->next_word() == source.next_word());

  // Two copies ratcheted alike stay alike; the ratcheted key is neither the old one nor reachable
  // back (BLAKE2b is one-way: tested here only as "different"), and the old buffer is dropped.
  auto a = SecureNoiseSource::from_state(saved), b = SecureNoiseSource::from_state(saved);
  a->ratchet();
  b->ratchet();
  CHECK(a->state().key != saved.key);
  CHECK(a->state().block_counter == 0);
  CHECK(a->state().pending.empty());
  for (int i = 0; i < 100; ++i) REQUIRE(a->next_word() == b->next_word());
  auto c = SecureNoiseSource::from_state(saved);
  CHECK(c->next_word() != a->next_word());  // 2^-64 chance of a false alarm
}

TEST_CASE("Secure: flags, independence of instances, no repeated keystream", "[noise][secure]") {
  SecureNoiseSource a, b;
  CHECK(a.is_secure());
  CHECK_FALSE(SeededNoiseSource(1).is_secure());
  const auto def = dpstream::privacy::make_secure_noise_source();
  REQUIRE(def != nullptr);
  CHECK(def->is_secure());

  // Two keys: equal 64-bit words at the same position have probability 2^-64 each.
  int equal = 0;
  for (int i = 0; i < 1000; ++i) equal += a.next_word() == b.next_word();
  CHECK(equal == 0);

  // Mixed next_word / fill_words (buffered, bulk and tail paths): a repeated keystream block would
  // repeat words; 40,000 distinct 64-bit words collide by chance with probability < 2^-34.
  std::set<std::uint64_t> seen;
  std::size_t drawn = 0;
  for (std::size_t len : {3u, 512u, 4096u, 700u, 1u, 9000u, 513u, 20000u}) {
    std::vector<std::uint64_t> words(len);
    a.fill_words(words);
    seen.insert(words.begin(), words.end());
    seen.insert(a.next_word());
    drawn += len + 1;
  }
  CHECK(seen.size() == drawn);
}

TEST_CASE("Secure: Gaussian moments, KS and tails", "[noise][secure][stat]") {
  SecureNoiseSource src;
  check_standard_normal(gaussians(src, 1'000'000), kSecureAlpha);  // 5 checks
  // 5·10^7 draws: ~12,900 expected beyond R and ~340 beyond 4.5.
  check_tails(count_tails(src, 50'000'000), kSecureAlpha);         // 2 checks
}

TEST_CASE("Secure: exponential, Laplace and uniform", "[noise][secure][stat]") {
  SecureNoiseSource src;
  const std::size_t n = 1'000'000;
  std::vector<double> e(n), l(n);
  for (double& x : e) x = src.exponential();
  for (double& x : l) x = src.laplace(0.5);
  CHECK(st::ks_statistic(e, exponential_cdf) <= st::dkw_epsilon(n, kSecureAlpha));  // 1 check
  CHECK(st::ks_statistic(l, [](double x) { return laplace_cdf(x, 0.5); }) <=
        st::dkw_epsilon(n, kSecureAlpha));  // 1 check
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += src.uniform_open();
  CHECK(std::fabs(sum / static_cast<double>(n) - 0.5) <= st::hoeffding_t(n, kSecureAlpha));  // 1 check
}

// ---- Snapping -----------------------------------------------------------------------------------

TEST_CASE("snap_granularity: smallest power of two >= scale * 2^-30", "[snap]") {
  using dpstream::privacy::snap_granularity;
  static_assert(dpstream::privacy::kSnapBits == 30);
  CHECK(snap_granularity(1.0) == 0x1.0p-30);
  CHECK(snap_granularity(1.5) == 0x1.0p-29);
  CHECK(snap_granularity(std::nextafter(1.0, 2.0)) == 0x1.0p-29);
  CHECK(snap_granularity(std::nextafter(1.0, 0.0)) == 0x1.0p-30);
  CHECK(snap_granularity(0x1.0p-30) == 0x1.0p-60);
  CHECK(snap_granularity(1000.0) == 0x1.0p-20);  // 1000·2^-30 ∈ (2^-21, 2^-20]
  CHECK(snap_granularity(std::numeric_limits<double>::max()) == 0x1.0p994);
  CHECK(snap_granularity(std::numeric_limits<double>::denorm_min()) == std::numeric_limits<double>::denorm_min());
  for (double s : {1e-300, 3.7, 12345.678, 1e200}) {
    const double g = snap_granularity(s);
    INFO("scale " << s);
    CHECK(g >= std::ldexp(s, -30));
    CHECK(g / 2 < std::ldexp(s, -30));
  }
  for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    CHECK_THROWS_AS(snap_granularity(bad), InvalidParameter);
  }
  CHECK_THROWS_WITH(snap_granularity(-2.5), Catch::Contains("-2.5"));
}

TEST_CASE("snap_to_grid: nearest multiple of a power of two", "[snap]") {
  using dpstream::privacy::snap_to_grid;
  CHECK(snap_to_grid(0.3, 0.25) == 0.25);
  CHECK(snap_to_grid(0.375, 0.25) == 0.5);   // tie: 1.5 → 2 (half to even)
  CHECK(snap_to_grid(0.625, 0.25) == 0.5);   // tie: 2.5 → 2
  CHECK(snap_to_grid(-0.3, 0.25) == -0.25);
  const double snapped_zero = snap_to_grid(-0.1, 1.0);
  CHECK(snapped_zero == 0.0);
  CHECK_FALSE(std::signbit(snapped_zero));  // the sign below the grid is not released
  CHECK(snap_to_grid(1e300, std::numeric_limits<double>::denorm_min()) == 1e300);  // no overflow
  CHECK(std::isinf(snap_to_grid(std::numeric_limits<double>::infinity(), 1.0)));
  CHECK(std::isnan(snap_to_grid(std::nan(""), 1.0)));

  SeededNoiseSource src(8);
  const double g = 0x1.0p-20;
  for (int i = 0; i < 10000; ++i) {
    const double v = 100.0 * src.gaussian();
    const double s = snap_to_grid(v, g);
    REQUIRE(std::fabs(s - v) <= g / 2);
    REQUIRE(std::fmod(s, g) == 0.0);
  }
  for (double bad : {0.0, -0.25, 0.3, std::nan(""), std::numeric_limits<double>::infinity()}) {
    CHECK_THROWS_AS(snap_to_grid(1.0, bad), InvalidParameter);
  }
  CHECK_THROWS_WITH(snap_to_grid(1.0, 0.3), Catch::Contains("0.3"));
}

}  // namespace test_noise_source
