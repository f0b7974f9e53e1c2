// dpstream-privacy-demo: the privacy core end to end on a synthetic stream.
//
// Rows from a seeded low-rank-plus-noise source pass through RowGuard (clipped to ‖a‖ ≤ 1, counted),
// their covariance AᵀA is released once with Analyze Gauss Algorithm 1 under each calibration, and
// the top-k subspace of each release is scored against the exact covariance (Theorem 3's
// deterministic bound 2k‖E‖₂ is printed beside the loss). The accountant then refuses a second
// release past its budget.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "dpstream/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/row_guard.hpp"

using namespace dpstream;

namespace {

// Top-k eigenvectors by algebraic eigenvalue (never |λ|: Ĉ is indefinite, digest §10).
Eigen::MatrixXd top_k(const Eigen::MatrixXd& c, int k) {
  linalg::SymmetricEigenSolver es(c);
  return es.eigenvectors().rightCols(k);  // eigenvalues ascend
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dpstream privacy-core demo: private covariance release on a synthetic stream"};
  int dim = 30, rows = 20000, rank = 3, k = 3;
  double epsilon = 0.5, delta = 1e-6;
  std::uint64_t seed = 42;
  bool secure = false;
  app.add_option("--dim", dim, "row dimension")->check(CLI::PositiveNumber);
  app.add_option("--rows", rows, "number of rows in the stream")->check(CLI::PositiveNumber);
  app.add_option("--rank", rank, "rank of the planted signal")->check(CLI::PositiveNumber);
  app.add_option("-k", k, "subspace dimension to recover")->check(CLI::PositiveNumber);
  app.add_option("--epsilon", epsilon, "privacy budget epsilon");
  app.add_option("--delta", delta, "privacy budget delta");
  app.add_option("--seed", seed, "seed of the synthetic data and of the (non-secure) noise");
  app.add_flag("--secure", secure, "draw noise from the secure source (ChaCha20, OS-keyed)");
  CLI11_PARSE(app, argc, argv);

  try {
    if (k > dim || rank > dim) throw InvalidParameter("k and --rank must be <= --dim");
    const privacy::EpsDelta budget(epsilon, delta);

    // --- the stream: rows = signal in a rank-r subspace + isotropic noise, some over the norm bound.
    privacy::SeededNoiseSource data_rng(seed);
    Eigen::MatrixXd basis(dim, rank);
    for (Eigen::Index i = 0; i < basis.size(); ++i) basis.data()[i] = data_rng.gaussian();
    linalg::HouseholderQr qr(basis);
    basis = qr.q(rank);
    stream::RowGuard guard({dim, 1.0, stream::OverNormPolicy::clip});
    Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(dim, dim);
    Eigen::VectorXd row(dim), coeff(rank);
    for (int t = 0; t < rows; ++t) {
      for (int j = 0; j < rank; ++j) coeff[j] = data_rng.gaussian() * 0.5 / (1.0 + j);
      for (int i = 0; i < dim; ++i) row[i] = 0.05 * data_rng.gaussian();
      row += basis * coeff;
      guard.admit(row);
      cov.selfadjointView<Eigen::Lower>().rankUpdate(row);
    }
    cov = cov.selfadjointView<Eigen::Lower>();
    const auto& counts = guard.counts();
    std::printf("stream: %d rows of dimension %d; RowGuard accepted %llu, clipped %llu, rejected %llu\n",
                rows, dim, (unsigned long long)counts.accepted, (unsigned long long)counts.clipped,
                (unsigned long long)counts.rejected);

    linalg::SymmetricEigenSolver exact(cov, Eigen::EigenvaluesOnly);
    const double opt = exact.eigenvalues().tail(k).sum();
    std::printf("non-private: top-%d captured variance (OPT) = %.3f of trace %.3f\n\n", k, opt, cov.trace());

    std::unique_ptr<privacy::NoiseSource> noise;
    if (secure) noise = privacy::make_secure_noise_source();
    else noise = std::make_unique<privacy::SeededNoiseSource>(seed + 1);

    std::printf("%-8s %-16s %10s %10s %12s %10s %12s\n", "calib", "shape", "sigma", "||E||_2",
                "captured", "loss", "2k||E||_2");
    for (auto calibration : {privacy::Calibration::paper, privacy::Calibration::tight}) {
      for (auto shape : {privacy::SymmetricNoiseShape::paper_symmetric, privacy::SymmetricNoiseShape::goe}) {
        privacy::SymmetricGaussianMechanism::Options options;
        options.target = budget;
        options.calibration = calibration;
        options.shape = shape;
        if (calibration == privacy::Calibration::paper && epsilon >= 1.0) {
          std::printf("%-8s %-16s  refused: the classical calibration needs epsilon < 1\n", "paper",
                      shape == privacy::SymmetricNoiseShape::goe ? "goe" : "paper_symmetric");
          continue;
        }
        const privacy::SymmetricGaussianMechanism mech(options);
        const Eigen::MatrixXd released = mech.release(cov, *noise);
        const Eigen::MatrixXd v_hat = top_k(released, k);
        const double captured = (v_hat.transpose() * cov * v_hat).trace();
        linalg::SymmetricEigenSolver en(released - cov, Eigen::EigenvaluesOnly);
        const double e_norm = en.eigenvalues().cwiseAbs().maxCoeff();
        std::printf("%-8s %-16s %10.4f %10.3f %12.3f %10.4f %12.3f\n", privacy::to_string(calibration),
                    shape == privacy::SymmetricNoiseShape::goe ? "goe" : "paper_symmetric", mech.sigma(),
                    e_norm, captured, opt - captured, 2.0 * k * e_norm);
      }
    }

    std::printf("\naccounting: budget %s\n", budget.to_string().c_str());
    privacy::PrivacyAccountant accountant(budget);
    privacy::SymmetricGaussianMechanism::Options options;
    options.target = budget;
    const privacy::SymmetricGaussianMechanism mech(options);
    mech.release(cov, *noise, &accountant, "covariance release 1");
    const auto spent = accountant.spent();
    std::printf("after one release: epsilon spent %.6f (basic %.6f, zCDP %.6f, rho %.6g)\n", spent.epsilon,
                spent.basic_epsilon, spent.zcdp_epsilon, spent.rho);
    try {
      mech.release(cov, *noise, &accountant, "covariance release 2");
      std::printf("second release accepted (unexpected)\n");
      return 1;
    } catch (const BudgetExhausted& e) {
      std::printf("second release refused: %s\n", e.what());
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dpstream-privacy-demo: error: " << e.what() << "\n";
    return 2;
  }
}
