// dpstream-convert: converts stored rows between formats — IDX (MNIST, Fashion-MNIST; gzipped or
// not), CSV and protobuf row logs — streaming, one row in memory at a time.
//
// The main use is IDX → row log, so that replays read one format with ids and a header that records
// where the rows came from. Values are converted as stored (times --scale): unlike the other tools'
// inputs (common/input.hpp), IDX bytes are not scaled to [0, 1] unless --scale says so.
//
// The output is written under a temporary name beside it and renamed into place once complete
// (the library's writers do this: dpstream/base/staged_file.hpp): a failed run leaves no output, and
// an existing file is refused unless --force, and then replaced only by a complete conversion. A half-written log without a declared
// count would otherwise read as a complete, shorter stream.
#pragma once

#include <cstdint>
#include <string>

#include "common/cli_fwd.hpp"
#include <Eigen/Core>

#include "dpstream/io/row_source.hpp"

namespace dpstream::tools::convert {

struct ConvertSettings {
  std::string input, output, from = "auto", to;
  double scale = 1.0;
  std::uint64_t limit = 0;
  bool sparse = false, skip_malformed = false, force = false;
  std::string max_memory;  // --max-memory: bounds the readers' lines (common/memory.hpp)
  std::string user_column;  // CSV input: the column of unit keys, kept in the row log's `unit` field
};

void add_convert_options(CLI::App& app, ConvertSettings& s);

// What a finished conversion reports.
struct ConvertReport {
  std::string input, output;
  io::RowFormat input_format = io::RowFormat::automatic, output_format = io::RowFormat::automatic;
  Eigen::Index dimension = 0;
  std::uint64_t rows = 0, skipped = 0, bytes = 0;
  std::string first_skip_reason;
  std::uint64_t scale_skipped = 0;  // of `skipped`: rows --scale took out of double range
  std::string first_scale_skip;
  bool sparse = false;
  double scale = 1.0, seconds = 0.0;
};

// Checks the settings, opens the input and creates the temporary output (UsageError, exit 2: nothing
// read or written); then converts (an error there, e.g. a malformed row: exit 1, no output) and moves
// the output into place.
ConvertReport convert(const ConvertSettings& s);

std::string summary_text(const ConvertReport& r);
std::string json_line(const ConvertReport& r);

}  // namespace dpstream::tools::convert
