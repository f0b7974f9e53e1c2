// The replay order of a shuffled stream (dpstream-replay --shuffle, Python's replay(shuffle=)): a
// permutation of 0..n-1 from a public seed, the same with every standard library.
#pragma once

#include <cstdint>
#include <vector>

namespace dpstream::stream {

std::vector<std::uint64_t> seeded_permutation(std::uint64_t n, std::uint64_t seed);

}  // namespace dpstream::stream
