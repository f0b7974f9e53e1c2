#include "common/input.hpp"

#include <cstdlib>
#include <exception>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"

namespace dpstream::tools {

void add_input_options(CLI::App& app, InputFlags& flags, const std::string& what) {
  app.add_option("--input", flags.path,
                 what + ": a row log (.pb/.rowlog), CSV (.csv) or IDX (.idx, -ubyte, .gz); default: Fashion-MNIST "
                        "train if installed (DPSTREAM_FASHION_MNIST overrides where), else a generated stream");
  app.add_option("--format", flags.format, "input format (default: from the file name)")
      ->check(CLI::IsMember({"auto", "pb", "csv", "idx"}));
  app.add_option("--header", flags.header,
                 "CSV: is the first line a header? auto (names: a header; numbers: a row; anything else is "
                 "refused, as is 0,1,...,d-1, pandas' column names), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
  app.add_flag("--skip-malformed", flags.skip_malformed,
               "count and skip malformed rows (reader errors, rows the guard rejects) instead of stopping");
}

OpenedInput open_input(const InputFlags& flags) {
  if (flags.path.empty() && flags.format != "auto") throw UsageError("--format needs --input");
  if (flags.path == "-" && flags.format == "auto")
    throw UsageError("--input - (standard input) has no name to tell its format from: give --format");
  try {
    return io::open_rows({flags.path, flags.format, flags.header, flags.skip_malformed, flags.unit_column});
  } catch (const std::exception& e) {
    refuse_unusable(std::string("cannot read the input: ") + e.what());
  }
}

std::string non_row_lines_text(const io::RowSource& source) {
  const io::NonRowLines& n = source.non_row_lines();
  if (n.total() == 0) return {};
  return "lines not rows: " + std::to_string(n.header) + " header, " + std::to_string(n.comment) + " comment" +
         (n.comment == 1 ? "" : "s") + ", " + std::to_string(n.blank) + " blank";
}

}  // namespace dpstream::tools
