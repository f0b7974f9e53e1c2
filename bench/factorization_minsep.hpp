// bench_factorization's (k, b)-participation part: BLTs optimised for n = 1,000, k = 2, b = 5 with 1
// and 2 buffers against jax_privacy's reference BLTs for the same case (its
// tests/matrix_factorization/buffered_toeplitz_test.py), whose loss is computed with this library's
// sensitivity code (BufferedToeplitz::max_loss(n, participation): minsep sensitivity² × max error).
// Acceptance: optimised loss ≤ 1.001 × the reference's, as jax_privacy asks of its own optimiser.
#pragma once

#include <cstdio>
#include <string>

#include <Eigen/Core>

#include "dpstream/stream/blt.hpp"
#include "dpstream/stream/blt_optimizer.hpp"
#include "dpstream/stream/participation.hpp"

namespace bench_factorization {

inline std::string json_array(const Eigen::VectorXd& v) {
  std::string out = "[";
  char buf[40];
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.17g", i ? "," : "", v(i));
    out += buf;
  }
  return out + "]";
}

// Prints the table, appends the JSON fields, and says whether both buffer counts are within 1.001×.
inline bool minsep_figures(std::string& json) {
  using dpstream::stream::BufferedToeplitz;
  constexpr std::uint64_t n = 1000;
  const dpstream::stream::Participation participation{2, 5};
  const BufferedToeplitz references[] = {
      BufferedToeplitz(Eigen::VectorXd{{0.9877027559462715}}, Eigen::VectorXd{{0.10595704738115597}}),
      BufferedToeplitz(Eigen::VectorXd{{0.993433070819512, 0.6342644427247973}},
                       Eigen::VectorXd{{0.07538320617916519, 0.5144060910151949}})};
  std::printf("\nBLT for n = 1000, k = 2 participations, min separation b = 5 (loss = minsep sens^2 x max error)\n");
  std::printf("%7s %14s %14s %14s %10s\n", "buffers", "loss", "reference", "single-opt", "loss/ref");
  bool ok = true;
  for (int buffers = 1; buffers <= 2; ++buffers) {
    const double reference = references[buffers - 1].max_loss(n, participation);
    const auto result = dpstream::stream::optimize_blt_buffers(n, dpstream::stream::BltError::max, buffers, 600,
                                                               participation);
    // The same buffers optimised for one participation, judged by the two-participation loss.
    const double single =
        dpstream::stream::optimize_blt_buffers(n, dpstream::stream::BltError::max, buffers).blt.max_loss(n, participation);
    std::printf("%7d %14.8g %14.8g %14.8g %10.6f\n", buffers, result.loss, reference, single, result.loss / reference);
    ok = ok && result.loss <= 1.001 * reference;
    const std::string key = "blt_minsep_n1000_k2_b5_nbuf" + std::to_string(buffers);
    char buf[200];
    json += ",\"" + key + "\":{\"theta\":" + json_array(result.blt.buf_decay()) +
            ",\"omega\":" + json_array(result.blt.output_scale()) + "}";
    std::snprintf(buf, sizeof buf, ",\"%s_loss\":%.10g,\"%s_reference_loss\":%.10g,\"%s_loss_over_reference\":%.6f",
                  key.c_str(), result.loss, key.c_str(), reference, key.c_str(), result.loss / reference);
    json += buf;
  }
  json += std::string(",\"blt_minsep_within_1_001x_reference\":") + (ok ? "true" : "false");
  return ok;
}

}  // namespace bench_factorization
