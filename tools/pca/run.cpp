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
#include "dpstream/base/errors.hpp"
#include "dpstream/pca/private_pca_method.hpp"
#include "common/work.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/pca/find_and_project.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/input_perturbation.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/params.hpp"
#include "pca/pca.hpp"

namespace dpstream::tools::pca_tool {

using Eigen::Index;
using Eigen::MatrixXd;
using Accountant = privacy::PrivacyAccountant;

namespace {

constexpr std::uint64_t kGeneratedRows = 20000;  // the generated stream is endless: its default --limit

privacy::Neighbours method_relation(const PcaSettings& s) { return pca::private_pca_relation(s.method); }

// streaming-oja, said before the pass: the smallest eigengap (a share of L²) one pass over these rows
// resolves, and Analyze Gauss's on the same rows (from n, d, ε, δ only). Above 0.1·L² only the
// strongest directions of unit rows are within one pass's reach: a warning names gauss.
void say_streaming_reach(const pca::ResolvableGap& gap, std::uint64_t rows, Index d, Index k) {
  std::printf("streaming-oja reach: one pass over %llu rows (d = %lld, k = %lld) resolves eigengaps "
              "lambda_k - lambda_k+1 >= %.3g L^2 (estimate, angle tan <= 0.3, worst case of the private clip: it stays "
              "at L^2); Analyze Gauss (--method gauss, "
              "d x d memory) resolves >= %.3g L^2 from the same rows\n",
              (unsigned long long)rows, (long long)d, (long long)k, gap.one_pass, gap.analyze_gauss);
  if (gap.one_pass >= 0.1)
    std::printf("warning: at this n, d and epsilon one pass reaches only directions with an eigengap of %.2g L^2 or "
                "more, where Analyze Gauss reaches %.2g L^2: for less separated directions use --method gauss "
                "(or more rows: one pass needs about %.0f rows for a gap of 0.1 L^2)\n",
                gap.one_pass, gap.analyze_gauss, double(rows) * gap.one_pass / 0.1);
  std::fflush(stdout);
}

// The floating-point work of the release and the non-private reference (common/work.hpp): the
// reference's AᵀA (n d²) and eigendecomposition (~10 d³), and the method's passes over the rows.
double pca_flops(const PcaSettings& s, double n, double d) {
  const double k = static_cast<double>(s.k), reference = n * d * d + 10 * d * d * d;
  if (s.method == "gauss" || s.method == "rr") return 2 * reference;
  if (s.method == "power") return reference + s.iterations * (4 * n * d * k + d * k * k);
  if (s.method == "oja") return reference + k * (s.iterations_given ? s.iterations : 100) * 4 * n * d;
  return reference + 4 * n * d * k + d * k * k;  // streaming-oja, pfp: one pass
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

// The library's method (pca/private_pca_method.hpp) from the flags.
pca::PrivatePcaMethod built_method(const PcaSettings& s, Index dimension) {
  pca::PrivatePcaMethodOptions o;
  o.method = s.method;
  o.k = s.k;
  o.iterations = s.iterations;
  o.iterations_given = s.iterations_given;
  o.batch = s.batch;
  o.learning_rate = s.learning_rate;
  o.privacy.target = s.privacy.target();
  o.privacy.calibration = s.privacy.calibration_value();
  o.privacy.relation = pca::private_pca_relation(s.method);
  o.privacy.noise.seed = s.privacy.seed;
  o.privacy.row_norm_bound = s.normalize.norm_bound();
  o.max_rows_per_unit = s.unit.max_rows_per_user;
  return pca::PrivatePcaMethod(o, dimension);
}

PcaMethod::PcaMethod(const PcaSettings& s, Index dimension) try : method_(built_method(s, dimension)) {
} catch (const InvalidParameter& e) {  // e.g. the paper calibration refuses ε ≥ 1
  std::string others = "--method " + s.method + ", --k " + std::to_string(s.k) + ", the row norm bound " +
                       base::format_value(s.normalize.norm_bound()) + " (--normalize, --clip-norm)";
  if (s.method == "power" || s.method == "oja") others += ", --iterations " + std::to_string(s.iterations);
  throw calibration_refused(s.privacy, others, e.what());
}

pca::PrivateSubspace PcaMethod::release(const MatrixXd& rows, Accountant& accountant) const {
  return method_.release(rows, accountant);
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
  std::printf("input: %s — %s\n", printable(source.path()).c_str(), printable(input.note).c_str());
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
  announce_work("dpstream-pca", "--method " + s.method + " on " + std::to_string(buf.rows) + " rows of dimension " +
                                    std::to_string(d) + ", --k " + std::to_string(s.k),
                pca_flops(s, static_cast<double>(buf.rows), static_cast<double>(d)));

  // ---- the private subspace, and the non-private reference ----
  if (const auto reach = method.one_pass_reach(buf.rows)) say_streaming_reach(*reach, buf.rows, d, s.k);
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
  r.budget = privacy::Budget(accountant).describe();
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
                base::format_value(p.epsilon).c_str(), base::format_value(p.delta).c_str(), p.calibration.c_str(),
                p.seed ? ", seeded noise (reproducible, NOT secure)" : ", secure noise") +
         unit_neighbours_line(s.unit, method_relation(s), "||a|| <= " + base::format_value(s.normalize.norm_bound()) +
                                                 " after the guard") +
         (r.unit_text.empty() ? std::string() : "      " + r.unit_text + "\n") +
         "      private: the released subspace\n" + budget_line(r.budget) +
         format("captured variance: %.6g of the non-private top-%lld's %.6g (ratio %.4f); projector distance %.4f\n",
                r.captured, (long long)s.k, r.opt, r.captured_ratio, r.proj_dist) +
         not_private_line("the row counts (used, clipped, rejected, skipped), the captured variance, OPT, their "
                          "ratio and the projector distance (against the exact top k), timings") +
         format("privacy charged: ε = %.4g at δ = %s (zCDP ρ = %.4g); method %.2f s, total %.2f s\n", r.spent.epsilon,
                base::format_value(r.spent.delta).c_str(), r.spent.rho, r.method_seconds, r.seconds);
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
  add_unit_privacy_labels(j, s.unit, &relation, not_private);
  return add_budget_label(j, r.budget).text();
}

}  // namespace dpstream::tools::pca_tool
