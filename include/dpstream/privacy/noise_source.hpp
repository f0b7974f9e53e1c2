// Sources of randomness for noise. All noise in dpstream is drawn through a NoiseSource.
//
//  SecureNoiseSource (the default): the ChaCha20 keystream of libsodium, keyed with 256 bits from the
//    operating system (randombytes_buf). Its output is computationally indistinguishable from
//    uniform, so no adversary can predict or reconstruct the noise.
//  SeededNoiseSource: xoshiro256++ seeded through splitmix64. Deterministic and fast, for tests and
//    reproducible replay. It is NOT secure: anyone who knows the seed knows the noise.
//
// Gaussians come from a 256-layer Ziggurat (Marsaglia & Tsang 2000) that uses one 64-bit word per
// sample on its fast path (bits 0-7 pick the layer, bits 11-63 are a signed 53-bit uniform: sign and
// abscissa; bits 8-10 are unused), so the Gaussian rate is bounded by the raw word rate. Never
// std::normal_distribution over mt19937.
//
// A NoiseSource is not thread-safe: give each thread its own.
//
// Floating-point attack (Mironov 2012): a released value x + Z, with Z a double produced by a
// transformation of uniforms, has gaps in its support whose position depends on x; the low-order bits
// of the output can then reveal x exactly. The sampler alone cannot fix this. dpstream's mechanisms
// therefore snap every released value to a grid of spacing 2^k ≥ σ·2^-30 (snap.hpp gives why 30
// and what remains), so the released bits carry no information below the grid beyond what the noise
// already allows; Laplace releases go further and draw exact discrete Laplace noise on the grid
// (discrete_laplace); tails use exponential_fine. Tests: tests/test_fp_safety.cpp.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace dpstream::privacy {

namespace detail {
// Ziggurat tables for the standard normal, 256 layers (lib/privacy/ziggurat.cpp).
// Layer i (0..255) is a strip of area V: for i ≥ 1 the rectangle [0, x[i]] × [f[i], f[i+1]];
// layer 0 is the base rectangle [0, R] × [0, f(R)] plus the tail beyond R, sampled as if it were a
// rectangle of width x[0] = V/f(R).
struct ZigguratTables {
  std::array<double, 257> x;   // layer abscissae, x[0] = V/f(R) (base strip), x[1] = R, x[256] = 0
  std::array<double, 256> ratio;  // x[i+1]/x[i]: |u| < ratio[i] accepts without evaluating f
  std::array<double, 257> f;   // exp(-x²/2) at each abscissa (f[256] = 1)
};
inline constexpr double kZigguratR = 3.6541528853610088;  // start of the tail (Marsaglia & Tsang)
extern const ZigguratTables kZiggurat;
}  // namespace detail

class NoiseSource {
 public:
  virtual ~NoiseSource() = default;
  NoiseSource(const NoiseSource&) = delete;
  NoiseSource& operator=(const NoiseSource&) = delete;

  // True only for sources fit for releasing private data.
  virtual bool is_secure() const noexcept = 0;
  // Forward secrecy after a release: a source whose saved state could regenerate the noise just
  // drawn makes that impossible (SecureNoiseSource); the others have nothing secret and do nothing.
  // A virtual call rather than a dynamic_cast on every release (ContinualSum, StreamingPrivateOja).
  virtual void ratchet() {}

  // Raw uniform 64-bit words (buffered; refills call the source's generator in bulk).
  std::uint64_t next_word() {
    if (pos_ == kBufferWords) refill();
    return buffer_[pos_++];
  }
  void fill_words(std::span<std::uint64_t> out);

  // Uniform on the open interval (0, 1), 53-bit resolution.
  double uniform_open() { return (static_cast<double>(next_word() >> 11) + 0.5) * 0x1.0p-53; }

  // Standard normal N(0, 1). Fast path inline: one word, one table look-up, one multiply.
  double gaussian() {
    for (;;) {
      const std::uint64_t w = next_word();
      const unsigned layer = static_cast<unsigned>(w & 0xFF);  // bits 0-7
      // Bits 11-63 as a signed 53-bit integer k ∈ [−2^52, 2^52): u = (k + ½)·2^-52 is exact and
      // symmetric in (−1, 1), and never shares a bit with the layer (bits 8-10 are unused).
      const double u = (static_cast<double>(static_cast<std::int64_t>(w) >> 11) + 0.5) * 0x1.0p-52;
      if (std::fabs(u) < detail::kZiggurat.ratio[layer]) return u * detail::kZiggurat.x[layer];
      const double slow = gaussian_slow(layer, u);
      if (slow == slow) return slow;  // NaN means "rejected, draw again"
    }
  }
  // out[i] = sigma · N(0, 1), independent; the same values as sigma·gaussian() called out.size()
  // times. Throws InvalidParameter unless sigma is finite and ≥ 0.
  void fill_gaussian(std::span<double> out, double sigma = 1.0);

  // Exponential with rate 1 (ziggurat-free inversion: −log of an open uniform).
  double exponential();
  // Uniform on (0, 1) at full precision: the binade [2^-e, 2^(1-e)) with probability 2^-e, then one
  // of its 2^52 doubles uniformly, so every double ≥ 2^-1074 in (0, 1) is reachable (uniform_open
  // stops at 2^-54 and spaces its values 2^-53 apart). Two words a draw, usually.
  double uniform_open_fine();
  // −log(uniform_open_fine()): Exponential(1) whose support has no gap wider than 2^-52 up to 744
  // (exponential()'s gaps widen as e^x·2^-53: wider than a snapping grid beyond x ≈ 9, where they
  // would show a release's unnoised value — Mironov 2012). For noise in released values.
  double exponential_fine();
  // Laplace with scale b: density exp(−|x|/b)/(2b). Throws InvalidParameter unless b is finite, > 0.
  // A floating-point transform of a uniform: NOT for releases (Mironov's attack reads x from the
  // support of x + laplace(b)); LaplaceMechanism releases through discrete_laplace on a grid.
  double laplace(double b);

  // Uniform on {0, …, bound − 1}, bound ≥ 1, without modulo bias (Lemire 2019: multiply, reject).
  // Inline: the discrete Laplace sampler calls it several times a draw.
  std::uint64_t uniform_below(std::uint64_t bound) {
    if (bound == 0) throw_zero_bound();
    __extension__ using uint128 = unsigned __int128;  // GCC/Clang; __extension__ keeps -Wpedantic quiet
    // The high word of word·bound is uniform on {0..bound−1} except for the (−bound mod bound) low
    // values that would bias it; those are rejected.
    for (;;) {
      const uint128 product = static_cast<uint128>(next_word()) * bound;
      const auto low = static_cast<std::uint64_t>(product);
      if (low >= bound || low >= (-bound) % bound) return static_cast<std::uint64_t>(product >> 64);
    }
  }
  // Bernoulli(exp(−numerator/denominator)) exactly, from integer draws only (Canonne, Kamath &
  // Steinke 2020, Algorithm 1). denominator ≥ 1; any numerator.
  bool bernoulli_exp_minus(std::uint64_t numerator, std::uint64_t denominator);
  // Discrete Laplace on the integers, P(Y = y) ∝ exp(−|y|/t), t ≥ 1, exactly (CKS 2020,
  // Algorithm 2: no floating point, so its support and probabilities are exact). ~7 words a draw.
  std::int64_t discrete_laplace(std::uint64_t t);

 protected:
  // The words generated but not yet consumed, oldest first (for checkpoints of a seeded source).
  std::vector<std::uint64_t> pending_words() const;
  // Replace the buffer by `words` (at most the buffer size), to be consumed before the next refill.
  void set_pending_words(std::span<const std::uint64_t> words);

  NoiseSource() = default;
  // Fill `out` entirely with fresh uniform words.
  virtual void generate(std::span<std::uint64_t> out) = 0;

 private:
  static constexpr std::size_t kBufferWords = 512;
  void refill();
  [[noreturn]] static void throw_zero_bound();
  // The rare Ziggurat cases: the tail beyond R (layer 0) or the wedge test (layers 1-255). Returns
  // NaN when the point is rejected and the caller must draw a fresh word.
  double gaussian_slow(unsigned layer, double u);

  std::array<std::uint64_t, kBufferWords> buffer_{};
  std::size_t pos_ = kBufferWords;
};

class SecureNoiseSource final : public NoiseSource {
 public:
  SecureNoiseSource();  // throws std::runtime_error if libsodium cannot initialise
  ~SecureNoiseSource() override;
  bool is_secure() const noexcept override { return true; }

  // The state of a secure source, for crash safety: a stream restored after a crash must make the
  // releases the crashed process may already have published with the SAME noise, or an observer
  // could average two draws of one release (found by the privacy audit, tests/audit). As sensitive
  // as the raw data a checkpoint holds beside it; ratchet() keeps it from revealing earlier noise.
  struct State {
    std::array<unsigned char, 32> key{};
    std::uint64_t block_counter = 0;
    std::vector<std::uint64_t> pending;  // generated, not yet consumed
  };
  State state() const;
  // A source that draws exactly what the saved one would have drawn next. InvalidParameter for too
  // many pending words.
  static std::unique_ptr<SecureNoiseSource> from_state(const State& state);
  // Forward secrecy: key ← BLAKE2b-256(key), counter 0, buffered words dropped (never used, so the
  // law is unchanged). A state saved after a ratchet cannot regenerate noise drawn before it (the
  // hash is one-way); ContinualSum ratchets after every release.
  void ratchet() override;

 protected:
  void generate(std::span<std::uint64_t> out) override;

 private:
  std::array<unsigned char, 32> key_{};    // fresh from randombytes_buf; wiped in the destructor
  std::array<unsigned char, 8> nonce_{};   // zero: the key is never reused, so one nonce suffices
  std::uint64_t block_counter_ = 0;        // next 64-byte keystream block; never goes back
};

class SeededNoiseSource final : public NoiseSource {
 public:
  explicit SeededNoiseSource(std::uint64_t seed);
  bool is_secure() const noexcept override { return false; }
  std::uint64_t seed() const noexcept { return seed_; }

  // Everything needed to continue the exact same sequence: the generator's four words and the
  // buffered words not yet consumed. A source restored from it draws what the original would have.
  struct State {
    std::uint64_t seed = 0;
    std::array<std::uint64_t, 4> generator{};
    std::vector<std::uint64_t> pending;
  };
  State state() const;
  // Throws InvalidParameter for an all-zero generator (xoshiro's forbidden state) or too many
  // pending words.
  static std::unique_ptr<SeededNoiseSource> from_state(const State& state);

 protected:
  void generate(std::span<std::uint64_t> out) override;

 private:
  std::uint64_t seed_;
  std::array<std::uint64_t, 4> state_{};
};

// The library default: a SecureNoiseSource.
std::unique_ptr<NoiseSource> make_secure_noise_source();

}  // namespace dpstream::privacy
