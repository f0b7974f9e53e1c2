#include "privacy_demo/demo.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include <Eigen/Core>

#include "common/json.hpp"
#include "common/memory.hpp"
#include "common/work.hpp"
#include "common/privacy_labels.hpp"
#include "common/text.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"

namespace dpstream::tools::privacy_demo {

using Eigen::MatrixXd;
using Mechanism = privacy::SymmetricGaussianMechanism;

namespace {

const char* shape_name(privacy::SymmetricNoiseShape shape) {
  return shape == privacy::SymmetricNoiseShape::goe ? "goe" : "paper_symmetric";
}

// Top-k eigenvectors by algebraic eigenvalue (never |λ|: Ĉ is indefinite; Dwork, Talwar, Thakurta & Zhang 2014, Algorithm 1).
MatrixXd top_k(const MatrixXd& c, int k) {
  linalg::SymmetricEigenSolver es(c);
  return es.eigenvectors().rightCols(k);  // eigenvalues ascend
}

// The table's mechanisms, each calibration × shape; nullopt where the paper calibration refuses ε ≥ 1.
struct Plan {
  std::vector<std::pair<ReleaseRow, std::optional<Mechanism>>> table;
  std::optional<Mechanism> accounted;  // the release the accountant charges (and then refuses)
};

Plan plan(const DemoSettings& s) {
  Plan p;
  try {
    for (auto calibration : {privacy::Calibration::paper, privacy::Calibration::tight}) {
      for (auto shape : {privacy::SymmetricNoiseShape::paper_symmetric, privacy::SymmetricNoiseShape::goe}) {
        ReleaseRow row{privacy::to_string(calibration), shape_name(shape)};
        if (calibration == privacy::Calibration::paper && s.privacy.epsilon >= 1.0) {
          row.refused = true;
          p.table.emplace_back(row, std::nullopt);
          continue;
        }
        Mechanism::Options o;
        o.privacy.target = s.privacy.target();
        o.privacy.calibration = calibration;
        o.shape = shape;
        p.table.emplace_back(row, Mechanism(o));
      }
    }
    Mechanism::Options o;
    o.privacy.target = s.privacy.target();
    p.accounted.emplace(o);
  } catch (const InvalidParameter& e) {
    throw calibration_refused(s.privacy, "--dim " + std::to_string(s.dim) + ", -k " + std::to_string(s.k), e.what());
  }
  return p;
}

// The stream: rows = signal in a rank-r subspace + isotropic noise, some over the norm bound; returns AᵀA.
MatrixXd stream_covariance(const DemoSettings& s, stream::RowGuardCounts& counts) {
  privacy::SeededNoiseSource data_rng(s.data_seed());
  MatrixXd basis(s.dim, s.rank);
  for (Eigen::Index i = 0; i < basis.size(); ++i) basis.data()[i] = data_rng.gaussian();
  linalg::HouseholderQr qr(basis);
  basis = qr.q(s.rank);
  stream::RowGuard guard({s.dim, 1.0, stream::OverNormPolicy::clip});
  MatrixXd cov = MatrixXd::Zero(s.dim, s.dim);
  Eigen::VectorXd row(s.dim), coeff(s.rank);
  for (int t = 0; t < s.rows; ++t) {
    for (int j = 0; j < s.rank; ++j) coeff[j] = data_rng.gaussian() * 0.5 / (1.0 + j);
    for (int i = 0; i < s.dim; ++i) row[i] = 0.05 * data_rng.gaussian();
    row += basis * coeff;
    guard.admit(row);
    cov.selfadjointView<Eigen::Lower>().rankUpdate(row);
  }
  counts = guard.counts();
  return cov.selfadjointView<Eigen::Lower>();
}

}  // namespace

std::string DemoSettings::noise_text() const {
  if (!seeded_noise()) return PrivacyFlags{}.noise_text();  // the secure source's text
  return privacy.noise_text();
}

void add_demo_options(CLI::App& app, DemoSettings& s) {
  app.add_option("--dim", s.dim, "row dimension")->check(at_least(1))->capture_default_str();
  app.add_option("--rows", s.rows, "number of rows in the stream")->check(at_least(1))->capture_default_str();
  app.add_option("--rank", s.rank, "rank of the planted signal")->check(at_least(1))->capture_default_str();
  app.add_option("-k", s.k, "subspace dimension to recover")->check(at_least(1))->capture_default_str();
  app.add_option("--epsilon", s.privacy.epsilon, "privacy budget epsilon")->capture_default_str();
  app.add_option("--delta", s.privacy.delta, "privacy budget delta, in (0, 1)")->capture_default_str();
  app.add_option("--seed", s.privacy.seed,
                 "seed the synthetic data (default 42) and the noise (seed + 1): reproducible, NOT secure "
                 "(default: the secure noise source, OS-keyed ChaCha20)")
      ->check(at_least(0));
  app.add_flag("--secure", s.secure,
               "the secure noise source even with --seed (which then seeds the data only); the default without --seed");
  add_memory_option(app, s.max_memory);
}

void validate(const DemoSettings& s) {
  validate(s.privacy);
  if (s.k > s.dim) throw UsageError("-k " + std::to_string(s.k) + " must be <= --dim " + std::to_string(s.dim));
  if (s.rank > s.dim) throw UsageError("--rank " + std::to_string(s.rank) + " must be <= --dim " + std::to_string(s.dim));
  // d × d matrices at once: the exact covariance, a release, its difference to the exact one, and the
  // eigensolvers' copies and eigenvectors (~8); the rows are made one at a time.
  const double d = s.dim;
  require_memory("--dim " + std::to_string(s.dim) + " (d x d covariances and their eigendecompositions)", 8.0 * 8 * d * d,
                 memory_limit(s.max_memory));
}

namespace {

// The floating-point work (common/work.hpp): the rows' outer products (d² each) and eleven d × d
// eigendecompositions (~10 d³ each: the exact one, and per release its top k and its error's norm).
double demo_flops(const DemoSettings& s) {
  const double d = s.dim;
  return static_cast<double>(s.rows) * d * (d + s.rank) + 11 * 10 * d * d * d;
}

}  // namespace

DemoReport run_demo(const DemoSettings& s) {
  validate(s);
  Plan p = plan(s);
  announce_work("dpstream-privacy-demo", std::to_string(s.rows) + " rows of dimension " + std::to_string(s.dim),
                demo_flops(s));
  std::unique_ptr<privacy::NoiseSource> noise =
      s.seeded_noise() ? std::make_unique<privacy::SeededNoiseSource>(s.data_seed() + 1) : privacy::make_secure_noise_source();
  DemoReport r;
  const MatrixXd cov = stream_covariance(s, r.counts);
  linalg::SymmetricEigenSolver exact(cov, Eigen::EigenvaluesOnly);
  r.opt = exact.eigenvalues().tail(s.k).sum();
  r.trace = cov.trace();
  for (auto& [row, mech] : p.table) {
    if (mech) {
      const MatrixXd released =
          mech->release(cov, *noise, privacy::Budget::unaccounted("the comparison table; the accounted release follows"));
      const MatrixXd v_hat = top_k(released, s.k);
      linalg::SymmetricEigenSolver en(released - cov, Eigen::EigenvaluesOnly);
      row.sigma = mech->sigma();
      row.e_norm = en.eigenvalues().cwiseAbs().maxCoeff();
      row.captured = (v_hat.transpose() * cov * v_hat).trace();
      row.loss = r.opt - row.captured;
      row.bound = 2.0 * s.k * row.e_norm;
    }
    r.releases.push_back(row);
  }
  privacy::PrivacyAccountant accountant(s.privacy.target());
  p.accounted->release(cov, *noise, accountant, "covariance release 1");
  r.spent = accountant.spent();
  try {
    p.accounted->release(cov, *noise, accountant, "covariance release 2");
  } catch (const BudgetExhausted& e) {
    r.refusal = e.what();
    return r;
  }
  throw std::runtime_error("the accountant accepted a second release past its budget");
}

std::string summary_text(const DemoSettings& s, const DemoReport& r) {
  std::string t = format("stream: %d rows of dimension %d; RowGuard accepted %llu, clipped %llu, rejected %llu\n",
                         s.rows, s.dim, (unsigned long long)r.counts.accepted, (unsigned long long)r.counts.clipped,
                         (unsigned long long)r.counts.rejected);
  t += format("non-private: top-%d captured variance (OPT) = %.3f of trace %.3f\n", s.k, r.opt, r.trace);
  t += "noise: " + s.noise_text() + "\n\n";
  t += format("%-8s %-16s %10s %10s %12s %10s %12s\n", "calib", "shape", "sigma", "||E||_2", "captured", "loss",
              "2k||E||_2");
  for (const ReleaseRow& row : r.releases) {
    if (row.refused)
      t += format("%-8s %-16s  refused: the classical calibration needs epsilon < 1\n", row.calibration.c_str(),
                  row.shape.c_str());
    else
      t += format("%-8s %-16s %10.4f %10.3f %12.3f %10.4f %12.3f\n", row.calibration.c_str(), row.shape.c_str(),
                  row.sigma, row.e_norm, row.captured, row.loss, row.bound);
  }
  t += "\n" + neighbours_line(Mechanism::Options{}.privacy.relation, "one row of the synthetic stream, ||a|| <= 1 after the guard");
  t += not_private_line("the guard's counts, OPT and the table's ||E||_2, captured, loss and bound (each compares "
                        "a release with the exact covariance: what the demo shows, not what a user would publish)");
  t += "accounting: budget " + s.privacy.target().to_string() + "\n";
  t += format("after one release: epsilon spent %.6f (basic %.6f, zCDP %.6f, GDP %.6f, rho %.6g)\n", r.spent.epsilon,
              r.spent.basic_epsilon, r.spent.zcdp_epsilon, r.spent.gdp_epsilon, r.spent.rho);
  return t + "second release refused: " + r.refusal + "\n";
}

std::string json_line(const DemoSettings& s, const DemoReport& r) {
  std::string releases = "[";
  for (const ReleaseRow& row : r.releases) {
    JsonLine j;
    j.add("calibration", row.calibration).add("shape", row.shape).add("refused", row.refused);
    if (!row.refused)
      j.add("sigma", row.sigma).add("e_norm", row.e_norm).add("captured", row.captured).add("loss", row.loss).add(
          "bound", row.bound);
    releases += (releases.size() > 1 ? "," : "") + j.text();
  }
  JsonLine j;
  j.add("tool", "dpstream-privacy-demo")
      .add("rows", static_cast<std::int64_t>(s.rows))
      .add("dim", static_cast<std::int64_t>(s.dim))
      .add("rank", static_cast<std::int64_t>(s.rank))
      .add("k", static_cast<std::int64_t>(s.k))
      .add("epsilon", s.privacy.epsilon)
      .add("delta", s.privacy.delta)
      .add("data_seed", s.data_seed())
      .add("secure_noise", !s.seeded_noise())
      .add("rows_clipped", r.counts.clipped)
      .add("opt", r.opt)
      .add_raw("releases", releases + "]")
      .add("epsilon_spent", r.spent.epsilon)
      .add("second_release_refused", !r.refusal.empty());
  const privacy::Neighbours relation = Mechanism::Options{}.privacy.relation;  // the releases' (one-shot)
  return add_privacy_labels(j, &relation,
                            {"rows_clipped", "opt", "releases.*.e_norm", "releases.*.captured", "releases.*.loss",
                             "releases.*.bound"})
      .text();
}

}  // namespace dpstream::tools::privacy_demo
