// dpstream-recommend's memory and work, estimated from the flags and the data's sizes before anything
// grows with them (common/memory.hpp, common/work.hpp): a generated set before it is generated, the
// training's factors, Grams and (Frank–Wolfe) items × items matrices before the training allocates
// them. Over --max-memory: exit 2 naming the size; a long run is announced on stderr.
#pragma once

#include <cstdint>

#include "recommend/settings.hpp"

namespace dpstream::tools::recommend {

// The iteration flags no one can mean (UsageError naming the flag and its cap).
void check_iteration_caps(const RecommendSettings& s);

// Before a generated set is made: its ratings and factors against --max-memory.
void check_generated_set(const RecommendSettings& s);

// Before training on `users` × `items` with `ratings` training ratings: the method's memory against
// --max-memory (exit 2), then its work announced when long.
void check_training(const RecommendSettings& s, Index users, Index items, std::uint64_t ratings);

}  // namespace dpstream::tools::recommend
