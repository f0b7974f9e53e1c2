#include "dpstream/io/open_rows.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/idx_rows.hpp"
#include "dpstream/io/synthetic_rows.hpp"

namespace dpstream::io {

namespace {

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
constexpr std::uint8_t kIdxUnsignedByte = 0x08;

OpenedRows open_default() {
  OpenedRows in;
  in.is_default = true;
  const std::string fashion = default_dataset_path();
  if (std::filesystem::exists(fashion)) {
    RowSourceOptions o;
    o.scale = 1.0 / 255.0;
    in.source = open_row_source(fashion, RowFormat::idx, o);
    in.note = "Fashion-MNIST train (default; pixels scaled by 1/255)";
    in.title = "Fashion-MNIST train";
  } else {
    in.source = std::make_unique<SyntheticRowSource>();
    in.note = "generated spiked-covariance stream (default; " + fashion +
              " not found: apt-get install dataset-fashion-mnist)";
    in.title = "synthetic stream";
  }
  return in;
}

OpenedRows open_file(const RowsRequest& request) {
  OpenedRows in;
  const bool stdin_input = request.path == "-";
  const std::string path = stdin_input ? "/dev/stdin" : request.path;
  const RowFormat format = request.format == "auto" ? format_from_path(path) : parse_row_format(request.format);
  RowSourceOptions o;
  o.skip_malformed = request.skip_malformed;
  o.csv_header = parse_csv_header(request.header);
  o.unit_column = request.unit_column;
  in.title = stdin_input ? "standard input" : std::filesystem::path(path).filename().string();
  if (format != RowFormat::idx) {
    in.source = open_row_source(path, format, o);
    in.note = to_string(format);
    return in;
  }
  // The header says the value type: bytes are images, read as [0, 1].
  o.scale = 1.0 / 255.0;
  in.source = open_row_source(path, format, o);
  if (static_cast<const IdxRowReader&>(*in.source).type_code() == kIdxUnsignedByte) {
    in.note = "IDX, unsigned bytes scaled by 1/255";
    return in;
  }
  if (stdin_input)
    throw InvalidParameter("--input -: an IDX stream of another value type than bytes cannot be read twice");
  o.scale = 1.0;
  in.source = open_row_source(path, format, o);
  in.note = "IDX";
  return in;
}

}  // namespace

std::string default_dataset_path() {
  const char* env = std::getenv("DPSTREAM_FASHION_MNIST");
  return env && *env ? env : kFashionMnist;
}

OpenedRows open_rows(const RowsRequest& request) {
  return request.path.empty() ? open_default() : open_file(request);
}

std::string verify_input(RowSource& source) {
  if (source.integrity() == Integrity::unverified) source.verify_rest();
  return to_string(source.integrity());
}

}  // namespace dpstream::io
