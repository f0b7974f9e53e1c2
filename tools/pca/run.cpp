// dpstream-pca's run: the method built and checked, the rows read through the guard, the subspace
// released and scored; the summary and the JSON line (pca.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "common/guarded_reader.hpp"
#include "common/json.hpp"
#include "common/memory.hpp"
#include "common/privacy_labels.hpp"
#include "common/progress.hpp"
#include "common/row_buffer.hpp"
#include "common/text.hpp"
#include "dpstream/errors.hpp"
#include "dpstream/pca/find_and_project.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/input_perturbation.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "pca/pca.hpp"

namespace dpstream::tools::pca_tool {

using Eigen::Index;
using Eigen::MatrixXd;
using Accountant = privacy::PrivacyAccountant;

namespace {

constexpr std::uint64_t kGeneratedRows = 20000;  // the generated stream is endless: its default --limit

std::unique_ptr<privacy::NoiseSource> noise_source(const PrivacyFlags& p) {
  if (p.seed) return std::make_unique<privacy::SeededNoiseSource>(*p.seed);
  return privacy::make_secure_noise_source();
}

// streaming-oja's default minibatch: n/32 rows (at least 100), i.e. about 32 Oja steps. Fewer,
// larger minibatches have less noise on each mean (σ√(dk)/B) but fewer steps to converge in; on
// Fashion-MNIST (ε = 1) 16–64 steps were best.
std::uint64_t streaming_oja_batch(std::uint64_t rows) { return std::max<std::uint64_t>(100, rows / 32); }

// streaming-oja is a stream over minibatch slots (zero-out); the others release a function of the
// set of rows (pfp/rr: MatrixNeighbours::add_remove_row, the same relation).
privacy::Neighbours method_relation(const PcaSettings& s) {
  return s.method == "streaming-oja" ? privacy::Neighbours::zero_out_row : privacy::Neighbours::add_remove_row;
}

// The methods that draw their own noise (from options.seed).
std::function<pca::PrivateSubspace(const MatrixXd&, Accountant&)> own_noise_method(const PcaSettings& s, Index d,
                                                                                   double bound) {
  const PrivacyFlags& p = s.privacy;
  if (s.method == "gauss") {
    pca::GaussianPcaOptions o;
    o.k = s.k;
    o.seed = p.seed;
    o.mechanism.target = p.target();
    o.mechanism.calibration = p.calibration_value();
    o.mechanism.row_norm_bound = bound;
    o.mechanism.relation = method_relation(s);
    o.max_rows_per_unit = s.unit.max_rows_per_user;
    auto m = std::make_shared<pca::GaussianPca>(d, o);
    return [m](const MatrixXd& rows, Accountant& a) { return m->release(rows, &a).subspace; };
  }
  if (s.method == "power") {
    pca::NoisyPowerMethodOptions o;
    o.k = s.k;
    o.iterations = s.iterations;
    o.seed = p.seed;
    o.target = p.target();
    o.calibration = p.calibration_value();
    o.row_norm_bound = bound;
    o.relation = method_relation(s);
    auto m = std::make_shared<pca::NoisyPowerMethod>(d, o);
    return [m](const MatrixXd& rows, Accountant& a) { return m->run(rows, &a); };
  }
  if (s.method == "streaming-oja") {
    // One pass, each row once, in the file's order; the budget is the pass's (parallel composition).
    pca::StreamingPrivateOjaOptions o;
    o.k = s.k;
    o.seed = p.seed;
    o.target = p.target();
    o.calibration = p.calibration_value();
    o.row_norm_bound = bound;
    o.relation = method_relation(s);
    if (s.learning_rate > 0) o.learning_rate = s.learning_rate;
    const pca::StreamingPrivateOja probe(d, o);  // the options checked before any row is read
    const std::uint64_t batch = s.batch;
    return [o, d, batch](const MatrixXd& rows, Accountant& a) mutable {
      o.batch_rows = batch != 0 ? batch : streaming_oja_batch(static_cast<std::uint64_t>(rows.rows()));
      pca::StreamingPrivateOja oja(d, o, &a);
      for (Index i = 0; i < rows.rows(); ++i) oja.update(rows.row(i).transpose());
      oja.flush();
      return oja.current();
    };
  }
  // oja: Algorithm 2 releases the top vector; k > 1 by deflation (PrivateOjaOptions::components).
  pca::PrivateOjaOptions o;
  o.components = s.k;
  o.iterations = s.iterations_given ? s.iterations : 100;
  o.seed = p.seed;
  o.target = p.target();
  o.calibration = p.calibration_value();
  o.row_norm_bound = bound;
  o.relation = method_relation(s);
  auto m = std::make_shared<pca::PrivateOja>(o);
  const bool one = s.k == 1;
  return [m, one](const MatrixXd& rows, Accountant& a) {
    return one ? m->run(rows, &a).to_subspace() : m->run_components(rows, &a);
  };
}

// pfp / rr: HR12's row unit for records (a row added or removed, ‖a‖ ≤ L); the noise is the tool's.
std::function<pca::PrivateSubspace(const MatrixXd&, Accountant&)> shared_noise_method(const PcaSettings& s,
                                                                                      double bound) {
  const PrivacyFlags& p = s.privacy;
  std::shared_ptr<privacy::NoiseSource> noise = noise_source(p);
  if (s.method == "pfp") {
    pca::FindAndProjectOptions o;
    o.k = s.k;
    o.oversampling = 2;
    o.target = p.target();
    o.calibration = p.calibration_value();
    o.relation = pca::MatrixNeighbours::add_remove_row;
    o.row_norm_bound = bound;
    auto m = std::make_shared<pca::PrivateFindAndProject>(o);
    return [m, noise](const MatrixXd& rows, Accountant& a) { return m->release(rows, *noise, &a).subspace; };
  }
  pca::InputPerturbationOptions o;  // rr
  o.k = s.k;
  o.target = p.target();
  o.calibration = p.calibration_value();
  o.relation = pca::MatrixNeighbours::add_remove_row;
  o.row_norm_bound = bound;
  auto m = std::make_shared<pca::InputPerturbation>(o);
  return [m, noise](const MatrixXd& rows, Accountant& a) { return m->release(rows, *noise, &a).subspace; };
}

// The rows are held twice (as read, and as the matrix the methods take) beside a few d × d matrices
// (AᵀA, its eigenvectors, the method's). A file that declares its rows is refused now if they would
// not fit in --max-memory; otherwise the buffer stops growing at the limit (exit 1, naming it).
void hold_rows(const PcaSettings& s, const io::RowSource& source, std::uint64_t limit, RowBuffer& buf) {
  const double d = static_cast<double>(source.dimension());
  const std::uint64_t max_bytes = memory_limit(s.max_memory);
  const double fixed = 8.0 * 4.0 * d * d;
  std::optional<std::uint64_t> rows = source.declared_rows();
  if (rows && limit != 0) rows = std::min(*rows, limit);
  const std::string what = "private PCA of " + (rows ? std::to_string(*rows) + " rows" : std::string("rows")) +
                           " of dimension " + std::to_string(source.dimension());
  require_memory(what, fixed + (rows ? 2.0 * 8.0 * d * static_cast<double>(*rows) : 0.0), max_bytes);
  buf.limit_bytes(static_cast<std::size_t>((static_cast<double>(max_bytes) - fixed) / 2));
  if (rows) buf.reserve(*rows);
}

}  // namespace

PcaMethod::PcaMethod(const PcaSettings& s, Index dimension) {
  const double bound = s.normalize.norm_bound();
  try {
    release_ = s.method == "pfp" || s.method == "rr" ? shared_noise_method(s, bound)
                                                     : own_noise_method(s, dimension, bound);
  } catch (const InvalidParameter& e) {  // e.g. the paper calibration refuses ε ≥ 1
    std::string others = "--method " + s.method + ", --k " + std::to_string(s.k) + ", the row norm bound " +
                         privacy::format_value(bound) + " (--normalize, --clip-norm)";
    if (s.method == "power" || s.method == "oja") others += ", --iterations " + std::to_string(s.iterations);
    throw calibration_refused(s.privacy, others, e.what());
  }
}

pca::PrivateSubspace PcaMethod::release(const MatrixXd& rows, Accountant& accountant) const {
  return release_(rows, accountant);
}

PcaReport run_pca(const PcaSettings& s, OpenedInput input) {
  const auto start = std::chrono::steady_clock::now();
  validate(s);
  io::RowSource& source = *input.source;
  const Index d = source.dimension();
  if (s.k > d) throw UsageError("--k " + std::to_string(s.k) + " is larger than the input's dimension " + std::to_string(d));
  // pfp sketches k + 2 directions (its oversampling) of the d columns: refused now, not at the release.
  if (s.method == "pfp" && s.k + 2 > d)
    throw UsageError("--method pfp needs --k + 2 <= the input's dimension " + std::to_string(d) + " (it sketches k + 2 "
                     "directions), got --k " + std::to_string(s.k));
  // pfp and rr need that many rows too; --limit bounds the rows, so a smaller one is refused now.
  const long long min_rows = s.method == "pfp" ? s.k + 2 : s.method == "rr" ? s.k : 0;
  if (s.limit != 0 && s.limit < static_cast<std::uint64_t>(min_rows))
    throw UsageError("--method " + s.method + " needs at least " + std::to_string(min_rows) + " rows (--k " +
                     std::to_string(s.k) + (s.method == "pfp" ? " + 2" : "") + "), got --limit " + std::to_string(s.limit));
  const PcaMethod method(s, d);
  const bool generated = source.format() == io::RowFormat::synthetic;
  const std::uint64_t limit = s.limit != 0 ? s.limit : generated ? kGeneratedRows : 0;
  RowBuffer buf(d);
  hold_rows(s, source, limit, buf);
  std::printf("input: %s — %s\n", source.path().c_str(), input.note.c_str());
  if (d >= 4096)  // said before the work starts: the user may stop it now rather than wait
    std::printf("note: dimension %lld: the release and the non-private reference each take a full "
                "eigendecomposition of a %lld x %lld matrix (about 9·d³ = %.1e floating-point operations): this can "
                "take hours\n",
                (long long)d, (long long)d, (long long)d, 9.0 * std::pow(static_cast<double>(d), 3));
  std::fflush(stdout);  // seen now, also through a pipe

  // ---- rows through normalisation and the guard ----
  ReadOptions read_options;
  read_options.normalize = s.normalize;
  read_options.skip_malformed = s.input.skip_malformed;
  read_options.limit = limit;
  read_options.bound = bound_options(s.unit);  // source → bound → guard (row level: none)
  GuardedReader reader(source, read_options);
  reader.fill(buf, UINT64_MAX);
  if (buf.rows == 0) throw std::runtime_error(source.path() + ": no usable rows");
  const std::string integrity = verify_input(source);  // before the noise: a damaged input spends nothing
  const MatrixXd rows = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      buf.row(0), static_cast<Index>(buf.rows), d);

  // ---- the private subspace, and the non-private reference ----
  Accountant accountant(s.privacy.target());
  const auto m0 = std::chrono::steady_clock::now();
  const pca::PrivateSubspace released = method.release(rows, accountant);
  PcaReport r;
  r.method_seconds = seconds_since(m0);
  const MatrixXd covariance = rows.transpose() * rows;
  const pca::TopEigen exact = pca::top_k_eigen(covariance, s.k);
  r.captured = pca::captured_variance(covariance, released.vectors);
  r.opt = exact.values.sum();
  r.captured_ratio = r.captured / r.opt;
  r.proj_dist = pca::projector_distance(released.vectors, exact.vectors);
  r.released = released;
  r.spent = accountant.spent();
  r.input_path = source.path();
  r.input_note = input.note;
  r.input_integrity = integrity;
  r.non_row_lines = non_row_lines_text(source);
  r.dimension = d;
  r.rows = buf.rows;
  r.skipped = source.skipped();
  r.guard = reader.guard_counts();
  if (reader.bound() != nullptr) r.bound = reader.bound()->counts();
  r.unit_text = unit_summary_text(reader.bound());
  r.seconds = seconds_since(start);
  return r;
}

std::string summary_text(const PcaSettings& s, const PcaReport& r) {
  const PrivacyFlags& p = s.privacy;
  return format("rows: %llu used (dimension %lld; %llu clipped, %llu rejected, %llu skipped%s)\n",
                (unsigned long long)r.rows, (long long)r.dimension, (unsigned long long)r.guard.clipped,
                (unsigned long long)r.guard.rejected, (unsigned long long)r.skipped,
                r.unit_text.empty() ? "" : format(", %llu dropped by the per-user bound",
                                                  (unsigned long long)r.bound.dropped()).c_str()) +
         (r.non_row_lines.empty() ? std::string() : "      " + r.non_row_lines + "\n") +
         "      input integrity: " + (r.input_integrity == "verified" ? "verified (gzip CRC-32)" : "no checksum in this format") +
         "\n" +
         format("method: %s, k = %lld, (ε, δ) = (%s, %s), %s calibration%s\n", s.method.c_str(), (long long)s.k,
                privacy::format_value(p.epsilon).c_str(), privacy::format_value(p.delta).c_str(), p.calibration.c_str(),
                p.seed ? ", seeded noise (reproducible, NOT secure)" : ", secure noise") +
         unit_neighbours_line(s.unit, method_relation(s),
                              "||a|| <= " + privacy::format_value(s.normalize.norm_bound()) + " after the guard") +
         (r.unit_text.empty() ? std::string() : "      " + r.unit_text + "\n") +
         "      private: the released subspace\n" +
         format("captured variance: %.6g of the non-private top-%lld's %.6g (ratio %.4f); projector distance %.4f\n",
                r.captured, (long long)s.k, r.opt, r.captured_ratio, r.proj_dist) +
         not_private_line("the row counts (used, clipped, rejected, skipped), the captured variance, OPT, their "
                          "ratio and the projector distance (against the exact top k), timings") +
         format("privacy charged: ε = %.4g at δ = %s (zCDP ρ = %.4g); method %.2f s, total %.2f s\n", r.spent.epsilon,
                privacy::format_value(r.spent.delta).c_str(), r.spent.rho, r.method_seconds, r.seconds);
}

std::string json_line(const PcaSettings& s, const PcaReport& r) {
  JsonLine j;
  j.add("method", s.method)
      .add("k", static_cast<std::int64_t>(s.k))
      .add("epsilon", s.privacy.epsilon)
      .add("delta", s.privacy.delta)
      .add("captured_ratio", r.captured_ratio)
      .add("proj_dist", r.proj_dist)
      .add("epsilon_spent", r.spent.epsilon)
      .add("seconds", std::round(r.seconds * 1000) / 1000)
      .add("rows", r.rows)
      .add("dim", static_cast<std::int64_t>(r.dimension))
      .add("calibration", s.privacy.calibration)
      .add("input", r.input_path)
      .add("input_integrity", r.input_integrity)
      .add("privacy_unit", s.unit.max_rows_per_user ? "user" : "row");
  std::vector<std::string> not_private = {"captured_ratio", "proj_dist", "seconds", "rows"};
  if (s.unit.max_rows_per_user) {
    j.add("users", r.bound.units).add("rows_dropped_by_bound", r.bound.dropped());
    not_private.insert(not_private.end(), {"users", "rows_dropped_by_bound"});
  }
  const privacy::Neighbours relation = method_relation(s);
  return add_unit_privacy_labels(j, s.unit, &relation, not_private).text();
}

}  // namespace dpstream::tools::pca_tool
