// Throughput of the noise sources: raw 64-bit words/s and Gaussians/s, and their ratio. The Ziggurat
// fast path spends one word per Gaussian, so the word rate is the limit the Gaussian rate is judged
// against (acceptance: secure Gaussian rate ≥ 0.40 × secure word rate). Laplace releases
// (LaplaceMechanism: snap, then exact discrete Laplace from integer draws, ~7 words each) are
// reported the same way, as a fraction of the word rate.
//
// Timing: each measurement repeats the call on a 4096-element buffer for at least 0.5 s and takes
// the best of 5 such repeats, since the machine is shared and noisy. A checksum over every output
// is printed so the compiler cannot drop the work.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/privacy/laplace_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace {

using dpstream::privacy::NoiseSource;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kBatch = 4096;
constexpr double kMinSeconds = 0.5;
constexpr int kRepeats = 5;

std::uint64_t checksum = 0;  // folded from every output, printed at the end

// Best (highest) items/s over kRepeats runs of `batch` (which produces kBatch items per call).
double best_rate(const std::function<void()>& batch) {
  batch();  // warm-up: page in the buffer, fill caches and tables
  double best = 0;
  for (int r = 0; r < kRepeats; ++r) {
    std::uint64_t calls = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      for (int k = 0; k < 64; ++k) batch();  // amortise the clock read
      calls += 64;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < kMinSeconds);
    best = std::max(best, static_cast<double>(calls * kBatch) / elapsed);
  }
  return best;
}

struct Rates {
  double words = 0, gaussians = 0, laplaces = 0;
};

Rates measure(NoiseSource& source) {
  std::vector<std::uint64_t> words(kBatch);
  std::vector<double> gaussians(kBatch);
  Rates rates;
  rates.words = best_rate([&] {
    source.fill_words(words);
    checksum += words[0] ^ words[kBatch - 1];
  });
  rates.gaussians = best_rate([&] {
    source.fill_gaussian(gaussians, 1.0);
    checksum += std::bit_cast<std::uint64_t>(gaussians[0]) ^ std::bit_cast<std::uint64_t>(gaussians[kBatch - 1]);
  });
  const dpstream::privacy::LaplaceMechanism laplace(1.0, 1.0);
  Eigen::VectorXd values = Eigen::VectorXd::Zero(kBatch);
  rates.laplaces = best_rate([&] {
    laplace.add_noise(values, source, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
    checksum += std::bit_cast<std::uint64_t>(values[0]) ^ std::bit_cast<std::uint64_t>(values[kBatch - 1]);
  });
  return rates;
}

}  // namespace

int main() {
  dpstream::privacy::SecureNoiseSource secure;
  dpstream::privacy::SeededNoiseSource seeded(20240611);
  const Rates s = measure(secure);
  const Rates d = measure(seeded);

  std::printf("%-8s %16s %16s %12s %16s %12s\n", "source", "words/s", "gaussians/s", "gauss/word", "laplaces/s",
              "lapl/word");
  for (const auto& [name, r] : {std::pair{"secure", s}, std::pair{"seeded", d}})
    std::printf("%-8s %16.4g %16.4g %12.3f %16.4g %12.3f\n", name, r.words, r.gaussians, r.gaussians / r.words,
                r.laplaces, r.laplaces / r.words);
  std::printf("checksum %016llx\n", static_cast<unsigned long long>(checksum));
  std::printf(
      "{\"bench\":\"noise\",\"batch\":%zu,\"secure_word_rate\":%.6g,\"secure_gaussian_rate\":%.6g,"
      "\"secure_gaussian_over_word_rate\":%.4f,\"seeded_word_rate\":%.6g,\"seeded_gaussian_rate\":%.6g,"
      "\"seeded_gaussian_over_word_rate\":%.4f,\"secure_laplace_rate\":%.6g,\"secure_laplace_over_word_rate\":%.4f}\n",
      kBatch, s.words, s.gaussians, s.gaussians / s.words, d.words, d.gaussians, d.gaussians / d.words, s.laplaces,
      s.laplaces / s.words);
  return 0;
}
