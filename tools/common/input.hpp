// Opening the rows a tool reads: one policy for every tool.
//
// - No --input: Fashion-MNIST train (Debian's dataset-fashion-mnist), or the file the environment
//   variable DPSTREAM_FASHION_MNIST names; if neither exists, a generated spiked-covariance stream.
// - IDX files of unsigned bytes (images) are read as [0, 1] (scaled by 1/255); other IDX value types
//   as stored. Other formats as stored.
// - --input - reads standard input (a stream of unknown length, read once); --format is required.
// - A file that cannot be opened, or whose header is wrong, is a UsageError (exit 2): nothing read.
#pragma once

#include <memory>
#include <string>

#include "common/cli_fwd.hpp"

#include "dpstream/io/open_rows.hpp"
#include "dpstream/io/row_source.hpp"

namespace dpstream::tools {

// --input, --format, --skip-malformed.
struct InputFlags {
  std::string path;  // "": the default dataset; "-": standard input
  std::string format = "auto";
  std::string header = "auto";  // CSV: auto (refuses a first line it cannot classify), yes, no
  bool skip_malformed = false;
  std::string unit_column;  // CSV: --user-column (common/unit_flags.hpp), "" none
};
void add_input_options(CLI::App& app, InputFlags& flags, const std::string& what = "rows");

// The policy itself is the library's (dpstream/io/open_rows.hpp), shared with the Python package.
using OpenedInput = io::OpenedRows;
using io::default_dataset_path;

// Opens the input by the policy above. UsageError "cannot read the input: …" if it cannot be opened.
OpenedInput open_input(const InputFlags& flags);

// After a read that stopped early (--limit): io::verify_input ("verified", or "none").
using io::verify_input;
// "lines not rows: 1 header, 2 comments, 0 blank" (empty for a binary format).
std::string non_row_lines_text(const io::RowSource& source);

}  // namespace dpstream::tools
