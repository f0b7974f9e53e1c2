// Seeded index sampling for data preparation (splits, caps, synthetic sets). Internal to lib/.
// Data preparation, not noise: the draws come from a SeededNoiseSource so results are identical on
// every platform (std::shuffle and std::uniform_int_distribution are not specified bit for bit).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::completion::detail {

__extension__ using uint128 = unsigned __int128;  // GCC/Clang; __extension__ keeps -Wpedantic quiet

// Uniform on {0, …, bound − 1}, bound ≥ 1, without modulo bias (Lemire 2019, multiply and reject).
inline std::uint64_t uniform_below(privacy::NoiseSource& source, std::uint64_t bound) {
  for (;;) {
    const uint128 product = static_cast<uint128>(source.next_word()) * bound;
    const auto low = static_cast<std::uint64_t>(product);
    if (low >= bound || low >= (-bound) % bound) return static_cast<std::uint64_t>(product >> 64);
  }
}

// Fisher–Yates shuffle driven by uniform_below.
template <class T>
void shuffle(std::vector<T>& values, privacy::NoiseSource& source) {
  for (std::size_t i = values.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(source, i));
    std::swap(values[i - 1], values[j]);
  }
}

}  // namespace dpstream::completion::detail
