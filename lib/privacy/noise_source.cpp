// NoiseSource buffering and bulk sampling; the ChaCha20 (secure) and xoshiro256++ (seeded) generators.
#include "dpstream/privacy/noise_source.hpp"

#include <sodium.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "dpstream/base/errors.hpp"

namespace dpstream::privacy {

void NoiseSource::refill() {
  generate(buffer_);
  pos_ = 0;
}

std::vector<std::uint64_t> NoiseSource::pending_words() const {
  return {buffer_.begin() + static_cast<std::ptrdiff_t>(pos_), buffer_.end()};
}

void NoiseSource::set_pending_words(std::span<const std::uint64_t> words) {
  if (words.size() > kBufferWords)
    throw InvalidParameter("noise source: " + std::to_string(words.size()) +
                           " pending words exceed the buffer of " + std::to_string(kBufferWords));
  // Keep them at the end of the buffer, so the next refill happens exactly when it would have.
  pos_ = kBufferWords - words.size();
  std::copy(words.begin(), words.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
}

void NoiseSource::fill_words(std::span<std::uint64_t> out) {
  // Hand out the buffered words first, so the stream is the same as out.size() calls to next_word().
  const std::size_t buffered = std::min(kBufferWords - pos_, out.size());
  std::copy_n(buffer_.begin() + static_cast<std::ptrdiff_t>(pos_), buffered, out.begin());
  pos_ += buffered;
  std::size_t done = buffered;
  if (done == out.size()) return;

  // The buffer is empty: generate whole buffer-sized blocks straight into `out` (no copy). Whole
  // blocks keep the keystream alignment identical to successive refills.
  const std::size_t bulk = (out.size() - done) / kBufferWords * kBufferWords;
  if (bulk > 0) {
    generate(out.subspan(done, bulk));
    done += bulk;
  }
  const std::size_t rest = out.size() - done;
  if (rest > 0) {
    refill();
    std::copy_n(buffer_.begin(), rest, out.begin() + static_cast<std::ptrdiff_t>(done));
    pos_ = rest;
  }
}

void NoiseSource::fill_gaussian(std::span<double> out, double sigma) {
  if (!(std::isfinite(sigma) && sigma >= 0.0)) {
    std::ostringstream msg;
    msg << "fill_gaussian: sigma must be finite and >= 0, got " << sigma;
    throw InvalidParameter(msg.str());
  }
  const auto& z = detail::kZiggurat;
  const std::size_t n = out.size();
  std::size_t i = 0;
  // The fast path of gaussian(), run over the buffer with a local cursor so the loop carries no
  // refill check per sample; pos_ is synchronised only around the rare slow path (which draws words).
  while (i < n) {
    if (pos_ == kBufferWords) refill();
    std::size_t p = pos_;
    const std::size_t stop = std::min(kBufferWords, p + (n - i));
    bool took_slow_path = false;
    while (p < stop) {
      const std::uint64_t w = buffer_[p++];
      const unsigned layer = static_cast<unsigned>(w & 0xFF);
      const double u = (static_cast<double>(static_cast<std::int64_t>(w) >> 11) + 0.5) * 0x1.0p-52;
      if (std::fabs(u) < z.ratio[layer]) {
        out[i++] = sigma * (u * z.x[layer]);
        continue;
      }
      pos_ = p;
      const double slow = gaussian_slow(layer, u);
      if (slow == slow) out[i++] = sigma * slow;  // NaN: rejected, the next word starts afresh
      took_slow_path = true;
      break;  // the slow path may have moved pos_ (or refilled): continue from there
    }
    if (!took_slow_path) pos_ = p;
  }
}

double NoiseSource::exponential() { return -std::log(uniform_open()); }

double NoiseSource::uniform_open_fine() {
  // The binade index e ≥ 1 is 1 + the number of leading zero bits of an endless fair bit stream.
  int e = 1;
  std::uint64_t word = next_word();
  while (word == 0) {
    e += 64;
    if (e > 1074) return 0x1.0p-1074;  // probability 2^-1088: the smallest subnormal stands for it
    word = next_word();
  }
  e += std::countl_zero(word);
  const std::uint64_t mantissa = next_word() >> 12;  // 52 bits
  // (1 + m·2^-52)·2^-e is exact for e ≤ 1022; below, ldexp rounds into the subnormals (still > 0).
  return std::ldexp(1.0 + static_cast<double>(mantissa) * 0x1.0p-52, -e);
}

double NoiseSource::exponential_fine() { return -std::log(uniform_open_fine()); }

double NoiseSource::laplace(double b) {
  if (!(std::isfinite(b) && b > 0.0)) {
    std::ostringstream msg;
    msg << "laplace: scale b must be finite and > 0, got " << b;
    throw InvalidParameter(msg.str());
  }
  // One word: bit 0 is the sign, bits 11-63 the open uniform of the exponential (disjoint bits, so
  // independent). ±b·Exp(1) has exactly the Laplace law.
  const std::uint64_t w = next_word();
  const double magnitude = -b * std::log((static_cast<double>(w >> 11) + 0.5) * 0x1.0p-53);
  return (w & 1) ? -magnitude : magnitude;
}

void NoiseSource::throw_zero_bound() { throw InvalidParameter("uniform_below: bound must be >= 1, got 0"); }

namespace {
// Bernoulli(exp(−γ)) for γ = numerator/denominator ∈ [0, 1]: draw A_k ~ Bernoulli(γ/k) until the
// first 0; P(it comes at an odd k) = exp(−γ) (the alternating series). Bernoulli(γ/k) is drawn as
// Bernoulli(γ)·Bernoulli(1/k), independent, so no product k·denominator can overflow.
bool bernoulli_exp_minus_unit(NoiseSource& source, std::uint64_t numerator, std::uint64_t denominator) {
  std::uint64_t k = 1;
  while (source.uniform_below(denominator) < numerator && source.uniform_below(k) == 0) ++k;
  return (k & 1) == 1;
}
}  // namespace

bool NoiseSource::bernoulli_exp_minus(std::uint64_t numerator, std::uint64_t denominator) {
  if (denominator == 0) throw InvalidParameter("bernoulli_exp_minus: denominator must be >= 1, got 0");
  // γ > 1: exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)), independent factors.
  for (std::uint64_t whole = numerator / denominator; whole > 0; --whole)
    if (!bernoulli_exp_minus_unit(*this, 1, 1)) return false;
  return bernoulli_exp_minus_unit(*this, numerator % denominator, denominator);
}

std::int64_t NoiseSource::discrete_laplace(std::uint64_t t) {
  if (t == 0 || t > (std::uint64_t{1} << 62))
    throw InvalidParameter("discrete_laplace: t must be in [1, 2^62], got " + std::to_string(t));
  for (;;) {
    // X = U + t·V with U ~ uniform{0..t−1} kept with probability exp(−U/t) and V ~ Geometric(1 −
    // e^{−1}) is Geometric(1 − e^{−1/t}); a random sign, rejecting −0, makes it discrete Laplace.
    const std::uint64_t u = uniform_below(t);
    if (!bernoulli_exp_minus(u, t)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp_minus(1, 1)) ++v;
    // t·v overflows int64 only for v ≥ 2 (t ≤ 2^62) with v ≥ 2^62/t: probability e^{−2^62/t}, nil
    // for any t a mechanism uses (≤ 2^42); such a draw is rejected rather than wrapped.
    if (v > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - u) / t) continue;
    const std::uint64_t x = u + t * v;
    const bool negative = (next_word() & 1) != 0;
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

// ---- SecureNoiseSource --------------------------------------------------------------------------

SecureNoiseSource::SecureNoiseSource() {
  if (sodium_init() < 0) throw std::runtime_error("SecureNoiseSource: libsodium failed to initialise");
  randombytes_buf(key_.data(), key_.size());
}

SecureNoiseSource::~SecureNoiseSource() { sodium_memzero(key_.data(), key_.size()); }

SecureNoiseSource::State SecureNoiseSource::state() const { return State{key_, block_counter_, pending_words()}; }

std::unique_ptr<SecureNoiseSource> SecureNoiseSource::from_state(const State& state) {
  auto source = std::make_unique<SecureNoiseSource>();
  source->key_ = state.key;
  source->block_counter_ = state.block_counter;
  source->set_pending_words(state.pending);
  return source;
}

void SecureNoiseSource::ratchet() {
  std::array<unsigned char, 32> next{};
  crypto_generichash(next.data(), next.size(), key_.data(), key_.size(), nullptr, 0);
  key_ = next;
  sodium_memzero(next.data(), next.size());
  block_counter_ = 0;
  set_pending_words({});
}

void SecureNoiseSource::generate(std::span<std::uint64_t> out) {
  // The keystream is the encryption of zeros; xor_ic lets us continue from block_counter_, so no
  // block is ever produced twice under this key. Chunks of 64 blocks bound the zero input's size.
  static constexpr std::size_t kChunkBytes = 4096;
  static constexpr std::size_t kBlockBytes = 64;
  static const std::array<unsigned char, kChunkBytes> zeros{};
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  std::size_t remaining = out.size_bytes();
  while (remaining > 0) {
    const std::size_t len = std::min(remaining, kChunkBytes);
    const std::uint64_t blocks = (len + kBlockBytes - 1) / kBlockBytes;  // a partial block is discarded
    if (block_counter_ > std::numeric_limits<std::uint64_t>::max() - blocks) {
      throw std::runtime_error("SecureNoiseSource: ChaCha20 block counter exhausted");  // after 2^70 bytes
    }
    crypto_stream_chacha20_xor_ic(bytes, zeros.data(), len, nonce_.data(), block_counter_, key_.data());
    block_counter_ += blocks;
    bytes += len;
    remaining -= len;
  }
}

// ---- SeededNoiseSource --------------------------------------------------------------------------

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

SeededNoiseSource::SeededNoiseSource(std::uint64_t seed) : seed_(seed) {
  // splitmix64 is a bijection of its counter, so the four words are never all zero (xoshiro's one
  // forbidden state).
  std::uint64_t sm = seed;
  for (auto& s : state_) s = splitmix64(sm);
}

void SeededNoiseSource::generate(std::span<std::uint64_t> out) {
  // xoshiro256++ (Blackman & Vigna 2019), with the state in locals so it stays in registers.
  std::uint64_t s0 = state_[0], s1 = state_[1], s2 = state_[2], s3 = state_[3];
  for (auto& word : out) {
    word = rotl(s0 + s3, 23) + s0;
    const std::uint64_t t = s1 << 17;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 45);
  }
  state_ = {s0, s1, s2, s3};
}

SeededNoiseSource::State SeededNoiseSource::state() const {
  return State{seed_, state_, pending_words()};
}

std::unique_ptr<SeededNoiseSource> SeededNoiseSource::from_state(const State& state) {
  if (state.generator == std::array<std::uint64_t, 4>{})
    throw InvalidParameter("seeded noise source: the generator state is all zero (not a xoshiro256++ state)");
  auto source = std::make_unique<SeededNoiseSource>(state.seed);
  source->state_ = state.generator;
  source->set_pending_words(state.pending);
  return source;
}

std::unique_ptr<NoiseSource> make_secure_noise_source() { return std::make_unique<SecureNoiseSource>(); }

}  // namespace dpstream::privacy
