#include "convert/convert.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include "common/cli.hpp"
#include "common/json.hpp"
#include "common/memory.hpp"
#include "common/output_paths.hpp"
#include "common/progress.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/row_log.hpp"

// The row log header's created_by (meson: -DDPSTREAM_VERSION on dpstream_tools).
#ifndef DPSTREAM_VERSION
#define DPSTREAM_VERSION "unknown"
#endif

namespace dpstream::tools::convert {

namespace {

// The nonzero entries of `dense` by bit pattern, so -0.0 survives the trip through a sparse row.
void sparsify(const Eigen::VectorXd& dense, Eigen::VectorXi& indices, Eigen::VectorXd& values) {
  Eigen::Index nnz = 0;
  for (Eigen::Index j = 0; j < dense.size(); ++j) nnz += (dense[j] != 0.0 || std::signbit(dense[j]));
  indices.resize(nnz);
  values.resize(nnz);
  for (Eigen::Index j = 0, k = 0; j < dense.size(); ++j) {
    if (dense[j] == 0.0 && !std::signbit(dense[j])) continue;
    indices[k] = static_cast<int>(j);
    values[k++] = dense[j];
  }
}

// One conversion: construction checks and opens everything (UsageError); run() streams the rows.
class Conversion {
 public:
  explicit Conversion(const ConvertSettings& s);
  ConvertReport run();

 private:
  void open_input();
  void open_output();
  bool write(io::RowRecord& row);
  bool finite_after_scaling(const io::RowRecord& row);

  const ConvertSettings& s_;
  ConvertReport report_;
  bool scale_here_ = false;  // the IDX reader scales as it converts bytes; for the others the tool does it
  std::unique_ptr<io::RowSource> source_;
  std::unique_ptr<io::RowLogWriter> log_;
  std::unique_ptr<io::CsvRowWriter> csv_;
};

Conversion::Conversion(const ConvertSettings& s) : s_(s) {
  report_.input = s.input;
  report_.output = s.output;
  report_.sparse = s.sparse;
  report_.scale = s.scale;
  if (!std::isfinite(s.scale) || s.scale <= 0)
    throw UsageError("--scale must be finite and > 0, got " + base::format_value(s.scale));
  memory_limit(s.max_memory);  // bounds the readers' lines too (dpstream/io/line_reader.hpp)
  try {
    const io::RowFormat from = io::parse_row_format(s.from);
    report_.input_format = from == io::RowFormat::automatic ? io::format_from_path(s.input) : from;
    report_.output_format = s.to.empty() ? io::format_from_path(s.output) : io::parse_row_format(s.to);
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());
  }
  if (report_.output_format == io::RowFormat::idx) throw UsageError("--to: IDX output is not supported; use pb or csv");
  if (s.sparse && report_.output_format != io::RowFormat::pb) throw UsageError("--sparse needs row log (pb) output");
  // A CSV output has no unit column: the keys would be lost without a word.
  if (!s.user_column.empty() && report_.output_format != io::RowFormat::pb)
    throw UsageError("--user-column needs row log (pb) output (its rows keep the user in their `unit` field)");
  std::error_code ec;
  if (std::filesystem::equivalent(s.input, s.output, ec)) throw UsageError("--output " + s.output + " is the input file");
  open_input();
  open_output();
}

void Conversion::open_input() {
  io::RowSourceOptions options;
  options.skip_malformed = s_.skip_malformed;
  options.unit_column = s_.user_column;
  if (report_.input_format == io::RowFormat::idx) options.scale = s_.scale;
  scale_here_ = report_.input_format != io::RowFormat::idx && s_.scale != 1.0;
  try {
    source_ = io::open_row_source(s_.input, report_.input_format, options);
  } catch (const std::exception& e) {
    refuse_unusable(std::string("cannot read the input: ") + e.what());
  }
  report_.dimension = source_->dimension();
  // A row in, a row (and its sparse form) out.
  require_memory("a row of dimension " + std::to_string(report_.dimension), 8.0 * 4.0 * static_cast<double>(report_.dimension),
                 memory_limit(s_.max_memory));
}

void Conversion::open_output() {
  refuse_shared_paths({{"--input", s_.input}, {"--output", s_.output}});
  struct stat existing {};
  if (::lstat(s_.output.c_str(), &existing) == 0) {  // any entry, a dangling symlink included
    if (S_ISDIR(existing.st_mode)) throw UsageError("--output " + s_.output + " is a directory");
    if (!s_.force) throw UsageError("--output " + s_.output + " exists: give --force to replace it");
    refuse_non_regular_output("--output", s_.output);  // --force replaces a regular file only
  }
  // The writers stream into a temporary beside the output and rename it into place on close().
  const base::ExistingFile policy = s_.force ? base::ExistingFile::replace : base::ExistingFile::refuse;
  std::optional<std::uint64_t> count = s_.skip_malformed ? std::nullopt : source_->declared_rows();
  if (count && s_.limit != 0 && s_.limit < *count) count = s_.limit;
  std::ostringstream provenance;
  provenance.precision(17);
  provenance << "dpstream-convert from " << s_.input << " (" << io::to_string(report_.input_format) << ")";
  if (s_.scale != 1.0) provenance << ", scaled by " << s_.scale;
  if (s_.limit != 0) provenance << ", first " << s_.limit << " rows";
  try {
    if (report_.output_format == io::RowFormat::pb)
      log_ = std::make_unique<io::RowLogWriter>(
          s_.output,
          io::RowLogHeader{report_.dimension, count.value_or(0), provenance.str(), "dpstream-convert " DPSTREAM_VERSION},
          policy);
    else
      csv_ = std::make_unique<io::CsvRowWriter>(s_.output, report_.dimension, std::vector<std::string>{}, policy);
  } catch (const std::exception& e) {
    refuse_unusable("--output " + s_.output + ": " + e.what());
  }
}

// A value --scale takes out of double range (1e308 × 2 = inf) is not the input's: the row is refused
// (exit 1, naming the row and the flag), or skipped and counted with --skip-malformed.
bool Conversion::finite_after_scaling(const io::RowRecord& row) {
  if (s_.scale == 1.0) return true;
  const Eigen::VectorXd& values = row.sparse ? row.values : row.dense;
  Eigen::Index bad = 0;
  for (; bad < values.size() && std::isfinite(values[bad]); ++bad) {}
  if (bad == values.size()) return true;
  const std::string why = "row " + std::to_string(report_.rows + report_.scale_skipped) + ": a value is " +
                          base::format_value(values[bad]) + " after --scale " + base::format_value(s_.scale) +
                          " (not finite: out of double range)";
  if (!s_.skip_malformed) throw CorruptInput(s_.input + ": " + why);
  if (report_.scale_skipped++ == 0) report_.first_scale_skip = why;
  return false;
}

bool Conversion::write(io::RowRecord& row) {
  if (scale_here_) {
    row.dense *= s_.scale;
    row.values *= s_.scale;
  }
  if (!finite_after_scaling(row)) return false;
  if (csv_) {
    csv_->write(row.dense);
  } else if (s_.sparse && !row.sparse) {
    sparsify(row.dense, row.indices, row.values);
    log_->write_sparse(row.indices, row.values, row.id, row.timestamp);
  } else {
    log_->write(row);
  }
  return true;
}

ConvertReport Conversion::run() {
  const auto start = std::chrono::steady_clock::now();
  io::RowRecord row;
  while ((s_.limit == 0 || report_.rows < s_.limit) && source_->next(row))
    if (write(row)) ++report_.rows;
  if (log_) {
    log_->close();
    report_.bytes = log_->bytes_written();
  } else {
    csv_->close();
    report_.bytes = csv_->bytes_written();
  }
  report_.seconds = seconds_since(start);
  report_.skipped = source_->skipped() + report_.scale_skipped;
  report_.first_skip_reason = source_->skipped() != 0 ? source_->first_skip_reason() : report_.first_scale_skip;
  return report_;
}

double rate(const ConvertReport& r) { return r.seconds > 0 ? static_cast<double>(r.rows) / r.seconds : 0.0; }

}  // namespace

void add_convert_options(CLI::App& app, ConvertSettings& s) {
  app.add_option("--input", s.input, "file to read (IDX plain or .gz, CSV, or row log)")->required();
  app.add_option("--format", s.from, "input format; by default from the file name")
      ->check(CLI::IsMember({"auto", "pb", "csv", "idx"}));
  app.add_option("--output", s.output,
                 "file to write (mode 0600); written beside it under a temporary name and renamed into place "
                 "once complete, so a failed run leaves no output. Refused if it exists, unless --force")
      ->required();
  app.add_flag("--force", s.force,
               "replace an existing --output (only once the conversion is complete: on failure it is left as it was)");
  app.add_option("--to", s.to, "output format; by default from the file name (.pb/.rowlog, .csv)")
      ->check(CLI::IsMember({"pb", "csv"}));
  app.add_option("--scale", s.scale, "multiply every value by S (1/255 maps image bytes to [0, 1])");
  app.add_option("--limit", s.limit, "convert at most N rows (0: all)")->check(at_least(0));
  app.add_flag("--sparse", s.sparse, "row log output: store every row sparse (its nonzero entries)");
  app.add_flag("--skip-malformed", s.skip_malformed,
               "skip and count malformed input rows (and rows --scale takes out of double range) instead of stopping");
  add_memory_option(app, s.max_memory);
  app.add_option("--user-column", s.user_column,
                 "CSV input: the column of user keys (header name or 0-based index), written to each row's unit field");
}

ConvertReport convert(const ConvertSettings& s) {
  Conversion conversion(s);
  return conversion.run();
}

std::string summary_text(const ConvertReport& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "dpstream-convert: %llu rows of dimension %lld, %s -> %s, %.3f s (%.0f rows/s), %llu skipped, "
                "%llu bytes written\n",
                (unsigned long long)r.rows, (long long)r.dimension, io::to_string(r.input_format),
                io::to_string(r.output_format), r.seconds, rate(r), (unsigned long long)r.skipped,
                (unsigned long long)r.bytes);
  std::string text = buf;
  if (r.skipped != 0) text += "first skipped row: " + r.first_skip_reason + "\n";
  return text;
}

std::string json_line(const ConvertReport& r) {
  return JsonLine()
      .add("tool", "dpstream-convert")
      .add("input", r.input)
      .add("input_format", io::to_string(r.input_format))
      .add("output", r.output)
      .add("output_format", io::to_string(r.output_format))
      .add("rows", r.rows)
      .add("dimension", static_cast<std::int64_t>(r.dimension))
      .add("skipped", r.skipped)
      .add("sparse", r.sparse)
      .add("scale", r.scale)
      .add("seconds", std::round(r.seconds * 1e6) / 1e6)
      .add("rows_per_second", std::round(rate(r) * 10) / 10)
      .add("bytes_written", r.bytes)
      .text();
}

}  // namespace dpstream::tools::convert
