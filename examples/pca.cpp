// dpstream-pca: private PCA of a dataset file by one of the library's private singular-vector methods,
// scored against the non-private top k of the same rows.
//
//   rows (pb/csv/idx) ─▶ normalise + RowGuard ─▶ method (gauss | power | oja | pfp | rr) ─▶ V̂ (d × k)
//                                                                    exact AᵀA ─▶ V_k ─┘ scores
//
// Prints the captured variance tr(V̂ᵀAᵀAV̂)/Σ_{i≤k} λᵢ(AᵀA) and the projector distance ‖V̂V̂ᵀ − V_kV_kᵀ‖₂,
// the privacy actually charged (an accountant holding the target budget), and a final JSON line
// {method, k, epsilon, delta, captured_ratio, proj_dist, epsilon_spent, seconds}. The scores use the
// raw rows: they are for evaluation, not for release.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include "dpstream/errors.hpp"
#include "dpstream/io/row_source.hpp"
#include "dpstream/io/synthetic_rows.hpp"
#include "dpstream/pca/find_and_project.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/input_perturbation.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "guarded_reader.hpp"
#include "json_text.hpp"
#include "tool_main.hpp"

using namespace dpstream;
using Eigen::Index;
using Eigen::MatrixXd;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";

using tools::UsageError;

struct Settings {
  std::string input, format = "auto", method = "gauss", calibration = "tight", normalize = "unit";
  Index k = 10;
  double epsilon = 1.0, delta = 1e-6, clip_norm = 1.0;
  // power: 5, the best of 2–20 on Fashion-MNIST (noisy_power_method.hpp); oja: Γ = 100 unless given.
  int iterations = 5;
  bool iterations_given = false;
  std::uint64_t limit = 0;
  std::optional<std::uint64_t> seed;
  bool skip_malformed = false;
};

privacy::Calibration calibration_of(const Settings& s) {
  return s.calibration == "paper" ? privacy::Calibration::paper : privacy::Calibration::tight;
}

// The private subspace by the chosen method; every charge goes to `accountant`.
pca::PrivateSubspace run_method(const Settings& s, const MatrixXd& rows, double row_norm_bound,
                                privacy::PrivacyAccountant& accountant) {
  const Index d = rows.cols();
  const privacy::EpsDelta target(s.epsilon, s.delta);
  if (s.method == "gauss") {
    pca::GaussianPcaOptions o;
    o.k = s.k;
    o.seed = s.seed;
    o.mechanism.target = target;
    o.mechanism.calibration = calibration_of(s);
    o.mechanism.row_norm_bound = row_norm_bound;
    return pca::GaussianPca(d, o).release(rows, &accountant).subspace;
  }
  if (s.method == "power") {
    pca::NoisyPowerMethodOptions o;
    o.k = s.k;
    o.iterations = s.iterations;
    o.seed = s.seed;
    o.target = target;
    o.calibration = calibration_of(s);
    o.row_norm_bound = row_norm_bound;
    return pca::NoisyPowerMethod(d, o).run(rows, &accountant);
  }
  if (s.method == "oja") {
    // Algorithm 2 releases the top vector; k > 1 by deflation (PrivateOjaOptions::components).
    pca::PrivateOjaOptions o;
    o.components = s.k;
    o.iterations = s.iterations_given ? s.iterations : 100;
    o.seed = s.seed;
    o.target = target;
    o.calibration = calibration_of(s);
    o.row_norm_bound = row_norm_bound;
    pca::PrivateOja oja(o);
    return s.k == 1 ? oja.run(rows, &accountant).to_subspace() : oja.run_components(rows, &accountant);
  }
  // pfp / rr: HR12's row unit for records (a row added or removed, ‖a‖ ≤ L).
  const std::unique_ptr<privacy::NoiseSource> noise =
      s.seed ? std::unique_ptr<privacy::NoiseSource>(std::make_unique<privacy::SeededNoiseSource>(*s.seed))
             : privacy::make_secure_noise_source();
  if (s.method == "pfp") {
    pca::FindAndProjectOptions o;
    o.k = s.k;
    o.oversampling = 2;
    o.target = target;
    o.calibration = calibration_of(s);
    o.relation = pca::MatrixNeighbours::add_remove_row;
    o.row_norm_bound = row_norm_bound;
    return pca::PrivateFindAndProject(o).release(rows, *noise, &accountant).subspace;
  }
  pca::InputPerturbationOptions o;  // rr
  o.k = s.k;
  o.target = target;
  o.calibration = calibration_of(s);
  o.relation = pca::MatrixNeighbours::add_remove_row;
  o.row_norm_bound = row_norm_bound;
  return pca::InputPerturbation(o).release(rows, *noise, &accountant).subspace;
}

int run(const Settings& s) {
  const auto start = Clock::now();
  if (s.k < 1) throw UsageError("--k must be >= 1, got " + std::to_string(s.k));
  if (!std::isfinite(s.epsilon) || s.epsilon <= 0)
    throw UsageError("--epsilon must be finite and > 0, got " + privacy::format_value(s.epsilon));
  if (!(s.delta > 0 && s.delta < 1)) throw UsageError("--delta must be in (0, 1), got " + privacy::format_value(s.delta));
  if (!std::isfinite(s.clip_norm) || s.clip_norm <= 0)
    throw UsageError("--clip-norm must be finite and > 0, got " + privacy::format_value(s.clip_norm));
  if (s.iterations < 1) throw UsageError("--iterations must be >= 1, got " + std::to_string(s.iterations));

  std::unique_ptr<io::RowSource> source;
  std::string input_note;
  try {
    io::RowSourceOptions o;
    o.skip_malformed = s.skip_malformed;
    if (s.input.empty()) {
      if (std::filesystem::exists(kFashionMnist)) {
        o.scale = 1.0 / 255.0;
        source = io::open_row_source(kFashionMnist, io::RowFormat::idx, o);
        input_note = "Fashion-MNIST train (default; pixels scaled by 1/255)";
      } else {
        source = std::make_unique<io::SyntheticRowSource>();
        input_note = "generated spiked-covariance stream (default; apt-get install dataset-fashion-mnist for Fashion-MNIST)";
      }
    } else {
      const io::RowFormat format = s.format == "auto" ? io::format_from_path(s.input) : io::parse_row_format(s.format);
      if (format == io::RowFormat::idx) o.scale = 1.0 / 255.0;  // IDX images: bytes read as [0, 1]
      source = io::open_row_source(s.input, format, o);
      input_note = io::to_string(format);
    }
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot read the input: ") + e.what());
  }
  const Index d = source->dimension();
  if (s.k > d) throw UsageError("--k " + std::to_string(s.k) + " is larger than the input's dimension " + std::to_string(d));
  std::printf("input: %s — %s\n", source->path().c_str(), input_note.c_str());

  // ---- rows through normalisation and the guard ----
  tools::GuardedReader reader(*source, {s.normalize, s.clip_norm, s.skip_malformed,
                                        s.limit != 0 ? s.limit : (source->format() == io::RowFormat::synthetic ? 20000 : 0)});
  tools::RowBuffer buf(d);
  if (auto n = source->declared_rows()) buf.reserve(*n);
  reader.fill(buf, UINT64_MAX);
  if (buf.rows == 0) throw std::runtime_error(source->path() + ": no usable rows");
  const MatrixXd rows = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      buf.row(0), static_cast<Index>(buf.rows), d);
  const double row_norm_bound = s.normalize == "unit" ? 1.0 : s.clip_norm;

  // ---- the private subspace, and the non-private reference ----
  privacy::PrivacyAccountant accountant(privacy::EpsDelta(s.epsilon, s.delta));
  const auto m0 = Clock::now();
  pca::PrivateSubspace released;
  try {
    released = run_method(s, rows, row_norm_bound, accountant);
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());  // e.g. the paper calibration refuses ε ≥ 1
  }
  const double method_seconds = std::chrono::duration<double>(Clock::now() - m0).count();
  const MatrixXd covariance = rows.transpose() * rows;
  const pca::TopEigen exact = pca::top_k_eigen(covariance, s.k);
  const double captured = pca::captured_variance(covariance, released.vectors);
  const double captured_ratio = captured / exact.values.sum();
  const double proj_dist = pca::projector_distance(released.vectors, exact.vectors);
  const privacy::Spent spent = accountant.spent();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  const auto& counts = reader.guard_counts();
  std::printf("rows: %llu used (dimension %lld; %llu clipped, %llu rejected, %llu skipped)\n",
              (unsigned long long)buf.rows, (long long)d, (unsigned long long)counts.clipped,
              (unsigned long long)counts.rejected, (unsigned long long)source->skipped());
  std::printf("method: %s, k = %lld, (ε, δ) = (%s, %s), %s calibration%s\n", s.method.c_str(), (long long)s.k,
              privacy::format_value(s.epsilon).c_str(), privacy::format_value(s.delta).c_str(), s.calibration.c_str(),
              s.seed ? ", seeded noise (reproducible, NOT secure)" : ", secure noise");
  std::printf("captured variance: %.6g of the non-private top-%lld's %.6g (ratio %.4f); projector distance %.4f\n",
              captured, (long long)s.k, exact.values.sum(), captured_ratio, proj_dist);
  std::printf("privacy charged: ε = %.4g at δ = %s (zCDP ρ = %.4g); method %.2f s, total %.2f s\n", spent.epsilon,
              privacy::format_value(spent.delta).c_str(), spent.rho, method_seconds, seconds);
  std::string j = "{\"method\":" + tools::json_string(s.method);
  j += ",\"k\":" + std::to_string(s.k);
  j += ",\"epsilon\":" + privacy::format_value(s.epsilon);
  j += ",\"delta\":" + privacy::format_value(s.delta);
  j += ",\"captured_ratio\":" + privacy::format_value(captured_ratio);
  j += ",\"proj_dist\":" + privacy::format_value(proj_dist);
  j += ",\"epsilon_spent\":" + privacy::format_value(spent.epsilon);
  j += ",\"seconds\":" + privacy::format_value(std::round(seconds * 1000) / 1000);
  j += ",\"rows\":" + std::to_string(buf.rows);
  j += ",\"dim\":" + std::to_string(d);
  j += ",\"calibration\":" + tools::json_string(s.calibration);
  j += ",\"input\":" + tools::json_string(source->path());
  j += "}";
  std::printf("%s\n", j.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "dpstream-pca: private PCA of a dataset (Analyze Gauss, noisy power method, private Oja, private\n"
      "find-and-project, randomized response), scored against the non-private top k of the same rows.");
  Settings s;
  app.add_option("--input", s.input, "rows: a row log (.pb/.rowlog), CSV (.csv) or IDX (.idx, -ubyte, .gz); default Fashion-MNIST train");
  app.add_option("--format", s.format, "input format (default: from the file name)")
      ->check(CLI::IsMember({"auto", "pb", "csv", "idx"}));
  app.add_option("--method", s.method, "gauss | power | oja | pfp | rr")
      ->check(CLI::IsMember({"gauss", "power", "oja", "pfp", "rr"}))
      ->capture_default_str();
  app.add_option("--k", s.k, "dimension of the subspace")->capture_default_str();
  app.add_option("--epsilon", s.epsilon, "privacy: epsilon")->capture_default_str();
  app.add_option("--delta", s.delta, "privacy: delta, in (0, 1)")->capture_default_str();
  app.add_option("--calibration", s.calibration, "tight (default) or paper (the formulas as printed)")
      ->check(CLI::IsMember({"tight", "paper"}))
      ->capture_default_str();
  app.add_option("--normalize", s.normalize, "unit: a/|a|; clip: scale rows over --clip-norm down; none: reject rows over it")
      ->check(CLI::IsMember({"unit", "clip", "none"}))
      ->capture_default_str();
  app.add_option("--clip-norm", s.clip_norm, "row norm bound L for clip / none")->capture_default_str();
  app.add_option("--iterations", s.iterations, "power: rounds (default 5); oja: Γ (default 100)");
  app.add_option("--seed", s.seed, "seed the noise: reproducible, NOT secure (default: the secure source)");
  app.add_option("--limit", s.limit, "use the first N valid rows (0: all; the generated stream: 20000)");
  app.add_flag("--skip-malformed", s.skip_malformed, "count and skip malformed rows instead of stopping");
  if (const auto status = tools::parse_command_line(app, argc, argv, "dpstream-pca")) return *status;
  s.iterations_given = app.count("--iterations") > 0;
  return tools::run_reporting_errors("dpstream-pca", [&] { return run(s); });
}
