// Seeded index sampling for data preparation (splits, caps, synthetic sets). Internal to lib/.
// Data preparation, not noise: the draws come from a SeededNoiseSource so results are identical on
// every platform (std::shuffle and std::uniform_int_distribution are not specified bit for bit).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::completion::detail {

// Fisher–Yates shuffle driven by NoiseSource::uniform_below.
template <class T>
void shuffle(std::vector<T>& values, privacy::NoiseSource& source) {
  for (std::size_t i = values.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(source.uniform_below(i));
    std::swap(values[i - 1], values[j]);
  }
}

}  // namespace dpstream::completion::detail
