// Random users' rating rows for the recommender tests: on the half-star scale, with some ratings
// outside it (-0.5 and 5.5), each item rated with probability `density`; a user left without any
// rating gets item 0 at 3. Seeded (data, not noise).
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::testing {

inline std::vector<std::vector<std::pair<Eigen::Index, double>>> random_rating_rows(Eigen::Index users, Eigen::Index items,
                                                                                    double density, std::uint64_t seed) {
  privacy::SeededNoiseSource source(seed);
  std::vector<std::vector<std::pair<Eigen::Index, double>>> rows(static_cast<std::size_t>(users));
  for (auto& row : rows) {
    for (Eigen::Index j = 0; j < items; ++j)
      if (source.uniform_open() < density) row.emplace_back(j, std::round(source.uniform_open() * 12.0) / 2.0 - 0.5);
    if (row.empty()) row.emplace_back(0, 3.0);
  }
  return rows;
}

}  // namespace dpstream::testing
