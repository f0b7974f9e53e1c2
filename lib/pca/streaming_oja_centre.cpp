// The centre of StreamingPrivateOja's centred updates and a row's centred contribution
// (streaming_oja_centre.hpp derives both).
#include "dpstream/pca/streaming_oja_centre.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"

namespace dpstream::pca {

double centre_threshold(Eigen::Index width, double sigma, double batch) noexcept {
  return 2.0 * std::sqrt(2.0 * static_cast<double>(width)) * sigma / batch;
}

Eigen::MatrixXd step_ritz_matrix(const Eigen::MatrixXd& previous, const Eigen::MatrixXd& noisy_sum) {
  Eigen::MatrixXd rayleigh = previous.transpose() * noisy_sum;
  return 0.5 * (rayleigh + rayleigh.transpose());
}

// Eigenvalues alone: the same bits as with the eigenvectors (the solver's rotations of the
// tridiagonal do not depend on whether it accumulates them).
Eigen::VectorXd step_ritz_values(const Eigen::MatrixXd& previous, const Eigen::MatrixXd& noisy_sum, double batch) {
  const linalg::SymmetricEigenSolver eig(step_ritz_matrix(previous, noisy_sum), Eigen::EigenvaluesOnly);
  return eig.eigenvalues().reverse() / batch;
}

Eigen::MatrixXd update_centre(const Eigen::MatrixXd& iterate, const Eigen::MatrixXd& previous,
                              const Eigen::MatrixXd& noisy_sum, double batch, double sigma, double l2) {
  return update_centre(iterate, previous, noisy_sum, step_ritz_values(previous, noisy_sum, batch), batch, sigma, l2);
}

Eigen::MatrixXd update_centre(const Eigen::MatrixXd& iterate, const Eigen::MatrixXd& previous,
                              const Eigen::MatrixXd& noisy_sum, const Eigen::VectorXd& ritz, double batch,
                              double sigma, double l2) {
  const double threshold = centre_threshold(iterate.cols(), sigma, batch);
  // The gate: H = sym(W_{t−1}ᵀS̃_t)/B, whose noise is G exactly (header). No Ritz value above τ: no
  // signal the release can vouch for, so no centre (the update is the uncentred one).
  if (!(ritz.maxCoeff() > threshold)) return Eigen::MatrixXd::Zero(iterate.rows(), iterate.cols());
  // M = sym(W_tᵀS̃_t·W_{t−1}ᵀW_t)/B, its eigenvalues soft-thresholded at τ and kept below L².
  Eigen::MatrixXd m = iterate.transpose() * noisy_sum * (previous.transpose() * iterate) / batch;
  m = 0.5 * (m + m.transpose()).eval();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(m);
  const Eigen::VectorXd kept = (eig.eigenvalues().array() - threshold).cwiseMax(0.0).cwiseMin(l2);
  return iterate * (eig.eigenvectors() * kept.asDiagonal() * eig.eigenvectors().transpose());
}

// A slot holding x ≠ 0 adds clip_r(g − c) to S and counts ‖g − c‖ in its bin; a zero slot (exactly
// zero, the zero-out relation's absent row) adds nothing and is in no bin. The step adds B·c for
// every slot, so each slot contributes c + clip_r(g − c) or c: the sensitivity r (zero-out), 2r
// (replace).
void StreamingPrivateOja::add_centred(const Eigen::Ref<const Eigen::VectorXd>& row) {
  if (row.isZero(0.0)) return after_row();
  projection_.noalias() = iterate_.transpose() * row;
  deviation_.noalias() = row * projection_.transpose();
  deviation_ -= centre_;
  const double norm = deviation_.norm();
  const double factor = clip_factor(norm);
  if (norm > 0.0)
    histogram_[scale_bin(norm, options_.privacy.row_norm_bound * options_.privacy.row_norm_bound)] += 1.0;
  if (sparse_layout_)
    sum_rows_.noalias() += factor * deviation_;
  else
    sum_.noalias() += factor * deviation_;
  after_row();
}

// g − c is dense: O(d·p) a sparse row, whatever its non-zeros (checked by update_sparse).
void StreamingPrivateOja::add_centred_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices,
                                             const Eigen::Ref<const Eigen::VectorXd>& values) {
  Eigen::VectorXd dense = Eigen::VectorXd::Zero(dimension_);
  for (Eigen::Index i = 0; i < indices.size(); ++i) dense[indices[i]] = values[i];
  add_centred(dense);
}

}  // namespace dpstream::pca
