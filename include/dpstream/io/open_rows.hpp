// Opening the rows to read, one policy for every front end (the tools' --input/--format, Python's
// replay(input=, format=)):
// - No path: Fashion-MNIST train (Debian's dataset-fashion-mnist), or the file the environment
//   variable DPSTREAM_FASHION_MNIST names; if neither exists, a generated spiked-covariance stream.
// - IDX files of unsigned bytes (images) are read as [0, 1] (scaled by 1/255); other IDX value types
//   as stored. Other formats as stored; format "auto" tells it from the file name.
// - Path "-" reads standard input (read once): its format must be given.
// Errors (a file that cannot be opened, a wrong header, a bad format name) propagate as thrown by the
// readers (row_source.hpp); the front end says which of its settings named the input.
#pragma once

#include <memory>
#include <string>

#include "dpstream/io/row_source.hpp"

namespace dpstream::io {

struct RowsRequest {
  std::string path;             // "": the default dataset; "-": standard input
  std::string format = "auto";  // auto | pb | csv | idx
  std::string header = "auto";  // CSV: auto, yes, no (parse_csv_header)
  bool skip_malformed = false;
  std::string unit_column;      // CSV: the column of unit keys (RowSourceOptions::unit_column), "" none
};

struct OpenedRows {
  std::unique_ptr<RowSource> source;
  std::string note;   // how it is read, for a summary ("IDX, unsigned bytes scaled by 1/255")
  std::string title;  // a short name for plots ("Fashion-MNIST train", a file name)
  bool is_default = false;
};

// The Fashion-MNIST train images: $DPSTREAM_FASHION_MNIST if set, else Debian's path.
std::string default_dataset_path();

// Opens the input by the policy above.
OpenedRows open_rows(const RowsRequest& request);

// After a read that stopped early (a row limit): a gzipped input's checksum is at its end, so the
// rest is read (without decoding rows) to verify it; CorruptInput if it is damaged. Returns the
// input's integrity as reports give it: "verified", or "none" for a format without a checksum.
std::string verify_input(RowSource& source);

}  // namespace dpstream::io
