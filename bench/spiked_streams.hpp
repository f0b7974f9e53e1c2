// The generated spiked streams the streaming-Oja benches share (docs/streaming-oja.md): spikes
// share·0.5^j, j < 10, on an isotropic bulk (SyntheticRowSource), rows scaled into the ball of
// radius 0.999 so that the unit bound L = 1 holds with room for round-off.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <Eigen/Core>

#include "dpstream/io/synthetic_rows.hpp"

namespace bench_streams {

inline Eigen::MatrixXd spiked_unit_rows(Eigen::Index d, std::uint64_t n, double share, std::uint64_t seed) {
  dpstream::io::SyntheticRowsOptions g;
  g.dimension = d;
  g.rows = n;
  g.shares.clear();
  double total = 0;
  for (int j = 0; j < 10; ++j) g.shares.push_back(share * std::ldexp(1.0, -j)), total += g.shares.back();
  g.isotropic = std::max(0.0, 1.0 - total);
  g.seed = seed;
  dpstream::io::SyntheticRowSource source(g);
  Eigen::MatrixXd rows(Eigen::Index(n), d);
  dpstream::io::RowRecord r;
  for (Eigen::Index i = 0; source.next(r); ++i) {
    const double norm = r.dense.norm();
    rows.row(i) = (norm > 0.999 ? r.dense * (0.999 / norm) : r.dense).transpose();
  }
  return rows;
}

}  // namespace bench_streams
