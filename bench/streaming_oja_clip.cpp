// StreamingPrivateOja's default clip (C = L², scale_share 0) against the private clip scale
// (scale_share 0.1: the 0.9-quantile of the update norms from each minibatch's noisy histogram) on
// real rows: an IDX image file (Fashion-MNIST by default) scaled to unit rows, the first `limit` rows
// (0: all), k = 1 and 10, ε = 1, δ = 1e-6, horizon declared, seeds 1..S. Printed per k and seed: the
// captured variance Σ‖Wᵀx‖² as a share of the exact top k's, for both clips and Analyze Gauss
// (GaussianPca) on the same rows. Arguments (optional): the IDX path, the row limit (7840), seeds (3), the private clip's
// quantile γ (0: the library's default).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "dpstream/privacy/budget.hpp"
#include "dpstream/io/row_source.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
namespace pca = dpstream::pca;
namespace privacy = dpstream::privacy;

MatrixXd unit_rows(const std::string& path, long limit) {
  auto source = dpstream::io::open_row_source(path, dpstream::io::RowFormat::idx);
  dpstream::io::RowRecord record;
  std::vector<Eigen::VectorXd> rows;
  while ((limit == 0 || long(rows.size()) < limit) && source->next(record)) {
    const double norm = record.dense.norm();
    if (norm > 0) record.dense *= (1.0 - 1e-12) / norm;  // under 1 after round-off
    rows.push_back(record.dense);
  }
  MatrixXd out(Index(rows.size()), rows.empty() ? 0 : rows[0].size());
  for (Index i = 0; i < out.rows(); ++i) out.row(i) = rows[std::size_t(i)].transpose();
  return out;
}

double one_pass(const MatrixXd& rows, Index k, std::optional<double> scale_share, double clip_quantile,
                std::uint64_t seed) {
  pca::StreamingPrivateOjaOptions o;
  o.k = k;
  o.horizon = std::uint64_t(rows.rows());
  o.privacy.noise.seed = seed;
  o.scale_share = scale_share;
  if (clip_quantile > 0) o.clip_quantile = clip_quantile;
  pca::StreamingPrivateOja oja(rows.cols(), o, privacy::Budget::unaccounted("a benchmark: nothing is published"));
  oja.update_block(rows);
  oja.flush();
  return (rows * oja.basis()).squaredNorm();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
  const long limit = argc > 2 ? std::stol(argv[2]) : 7840;
  const int seeds = argc > 3 ? std::stoi(argv[3]) : 3;
  const double clip_quantile = argc > 4 ? std::stod(argv[4]) : 0.0;
  const double gamma = clip_quantile > 0 ? clip_quantile : pca::StreamingPrivateOjaOptions{}.clip_quantile;
  const MatrixXd rows = unit_rows(path, limit);
  const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(rows.transpose() * rows);
  std::printf("%s: %ld rows, d = %ld, clip quantile %.3f\n", path.c_str(), long(rows.rows()), long(rows.cols()), gamma);
  for (const Index k : {Index(1), Index(10)}) {
    const double best = eig.eigenvalues().tail(k).sum();
    for (int s = 1; s <= seeds; ++s) {
      pca::GaussianPcaOptions g;
      g.k = k;
      g.mechanism.privacy.noise.seed = 100 + std::uint64_t(s);
      const double gauss = (rows * pca::GaussianPca(rows.cols(), g).release(rows, privacy::Budget::unaccounted("a benchmark: nothing is published")).subspace.vectors).squaredNorm();
      std::printf("k=%-2ld seed=%d  C=L^2 %.4f  default (derived scale_share %.4f) %.4f  Analyze Gauss %.4f\n",
                  long(k), s, one_pass(rows, k, 0.0, gamma, std::uint64_t(s)) / best,
                  pca::derived_scale_share(rows.cols(), gamma),
                  one_pass(rows, k, std::nullopt, gamma, std::uint64_t(s)) / best, gauss / best);
      std::fflush(stdout);
    }
  }
  return 0;
}
