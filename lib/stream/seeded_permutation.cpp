#include "dpstream/stream/seeded_permutation.hpp"

#include <bit>
#include <utility>

#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::stream {

// Fisher–Yates driven by xoshiro256++ (SeededNoiseSource's words), with rejection sampling for
// unbiased bounded integers. Unlike std::shuffle with a standard distribution, the result is the same
// with every standard library.
std::vector<std::uint64_t> seeded_permutation(std::uint64_t n, std::uint64_t seed) {
  std::vector<std::uint64_t> p(n);
  for (std::uint64_t i = 0; i < n; ++i) p[i] = i;
  privacy::SeededNoiseSource words(seed);
  for (std::uint64_t i = n; i > 1; --i) {
    const std::uint64_t mask = ~std::uint64_t{0} >> std::countl_zero(i - 1);  // smallest 2^b − 1 ≥ i − 1
    std::uint64_t j;
    do j = words.next_word() & mask;
    while (j >= i);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

}  // namespace dpstream::stream
