// dpstream-convert: converts stored rows between formats — IDX (MNIST, Fashion-MNIST; gzipped or
// not), CSV and protobuf row logs — streaming, one row in memory at a time.
//
// The main use is IDX → row log, so that replays read one format with ids and a header that records
// where the rows came from. Prints a one-line summary and, last, one line of JSON for scripts. On any
// error the partial output is removed: a half-written log without a declared count would otherwise
// read as a complete, shorter stream.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "json_text.hpp"
#include "dpstream/errors.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/row_log.hpp"
#include "dpstream/io/row_source.hpp"

#ifndef DPSTREAM_VERSION
#define DPSTREAM_VERSION "unknown"
#endif

using namespace dpstream;

namespace {

using tools::json_string;

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dpstream-convert: convert stored rows between IDX, CSV and protobuf row logs"};
  std::string input, output, from = "auto", to;
  double scale = 1.0;
  std::uint64_t limit = 0;
  bool sparse = false, skip_malformed = false;
  app.add_option("--input", input, "file to read (IDX plain or .gz, CSV, or row log)")->required();
  app.add_option("--format", from, "input format; by default from the file name")
      ->check(CLI::IsMember({"auto", "pb", "csv", "idx"}));
  app.add_option("--output", output, "file to write (created with mode 0600)")->required();
  app.add_option("--to", to, "output format; by default from the file name (.pb/.rowlog, .csv)")
      ->check(CLI::IsMember({"pb", "csv"}));
  app.add_option("--scale", scale, "multiply every value by S (1/255 maps image bytes to [0, 1])");
  app.add_option("--limit", limit, "convert at most N rows (0: all)");
  app.add_flag("--sparse", sparse, "row log output: store every row sparse (its nonzero entries)");
  app.add_flag("--skip-malformed", skip_malformed, "skip and count malformed input rows instead of stopping");
  CLI11_PARSE(app, argc, argv);

  bool output_created = false;
  try {
    if (!std::isfinite(scale) || scale <= 0) throw InvalidParameter("--scale must be finite and > 0");
    const io::RowFormat in_format = io::parse_row_format(from);
    const io::RowFormat out_format = to.empty() ? io::format_from_path(output) : io::parse_row_format(to);
    if (out_format == io::RowFormat::idx) throw InvalidParameter("--to: IDX output is not supported; use pb or csv");
    if (sparse && out_format != io::RowFormat::pb) throw InvalidParameter("--sparse needs row log (pb) output");
    std::error_code ec;
    if (std::filesystem::equivalent(input, output, ec))
      throw InvalidParameter("--output " + output + " is the input file");

    const auto start = std::chrono::steady_clock::now();
    io::RowSourceOptions options;
    options.skip_malformed = skip_malformed;
    const io::RowFormat resolved = in_format == io::RowFormat::automatic ? io::format_from_path(input) : in_format;
    // The IDX reader scales as it converts bytes; for the others the tool does it.
    if (resolved == io::RowFormat::idx) options.scale = scale;
    const bool scale_here = resolved != io::RowFormat::idx && scale != 1.0;
    auto source = io::open_row_source(input, resolved, options);
    const Eigen::Index dim = source->dimension();

    std::optional<std::uint64_t> count = skip_malformed ? std::nullopt : source->declared_rows();
    if (count && limit != 0 && limit < *count) count = limit;
    std::ostringstream provenance;
    provenance.precision(17);
    provenance << "dpstream-convert from " << input << " (" << io::to_string(resolved) << ")";
    if (scale != 1.0) provenance << ", scaled by " << scale;
    if (limit != 0) provenance << ", first " << limit << " rows";

    std::unique_ptr<io::RowLogWriter> log;
    std::unique_ptr<io::CsvRowWriter> csv;
    if (out_format == io::RowFormat::pb)
      log = std::make_unique<io::RowLogWriter>(
          output, io::RowLogHeader{dim, count.value_or(0), provenance.str(), "dpstream-convert " DPSTREAM_VERSION});
    else
      csv = std::make_unique<io::CsvRowWriter>(output, dim);
    output_created = true;

    io::RowRecord row;
    std::uint64_t rows = 0;
    while ((limit == 0 || rows < limit) && source->next(row)) {
      if (scale_here) {
        row.dense *= scale;
        row.values *= scale;
      }
      if (csv) {
        csv->write(row.dense);
      } else if (sparse && !row.sparse) {
        sparsify(row.dense, row.indices, row.values);
        log->write_sparse(row.indices, row.values, row.id, row.timestamp);
      } else {
        log->write(row);
      }
      ++rows;
    }
    std::uint64_t bytes = 0;
    if (log) {
      log->close();
      bytes = log->bytes_written();
    } else {
      csv->close();
      bytes = csv->bytes_written();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double rate = seconds > 0 ? rows / seconds : 0.0;

    std::printf("dpstream-convert: %llu rows of dimension %lld, %s -> %s, %.3f s (%.0f rows/s), %llu skipped, "
                "%llu bytes written\n",
                (unsigned long long)rows, (long long)dim, io::to_string(resolved), io::to_string(out_format), seconds,
                rate, (unsigned long long)source->skipped(), (unsigned long long)bytes);
    if (source->skipped() != 0)
      std::printf("first skipped row: %s\n", source->first_skip_reason().c_str());
    std::printf("{\"tool\":\"dpstream-convert\",\"input\":%s,\"input_format\":\"%s\",\"output\":%s,"
                "\"output_format\":\"%s\",\"rows\":%llu,\"dimension\":%lld,\"skipped\":%llu,\"sparse\":%s,"
                "\"scale\":%.17g,\"seconds\":%.6f,\"rows_per_second\":%.1f,\"bytes_written\":%llu}\n",
                json_string(input).c_str(), io::to_string(resolved), json_string(output).c_str(),
                io::to_string(out_format), (unsigned long long)rows, (long long)dim,
                (unsigned long long)source->skipped(), sparse ? "true" : "false", scale, seconds, rate,
                (unsigned long long)bytes);
    return 0;
  } catch (const std::exception& e) {
    if (output_created) ::unlink(output.c_str());
    std::cerr << "dpstream-convert: error: " << e.what() << "\n";
    return 2;
  }
}
