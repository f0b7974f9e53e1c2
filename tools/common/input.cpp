#include "common/input.hpp"

#include <cstdlib>
#include <exception>
#include <filesystem>

#include "common/cli.hpp"
#include "dpstream/io/idx_rows.hpp"
#include "dpstream/io/synthetic_rows.hpp"

namespace dpstream::tools {

namespace {

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
constexpr std::uint8_t kIdxUnsignedByte = 0x08;

OpenedInput open_default() {
  OpenedInput in;
  in.is_default = true;
  const std::string fashion = default_dataset_path();
  if (std::filesystem::exists(fashion)) {
    io::RowSourceOptions o;
    o.scale = 1.0 / 255.0;
    in.source = io::open_row_source(fashion, io::RowFormat::idx, o);
    in.note = "Fashion-MNIST train (default; pixels scaled by 1/255)";
    in.title = "Fashion-MNIST train";
  } else {
    in.source = std::make_unique<io::SyntheticRowSource>();
    in.note = "generated spiked-covariance stream (default; " + fashion +
              " not found: apt-get install dataset-fashion-mnist)";
    in.title = "synthetic stream";
  }
  return in;
}

OpenedInput open_file(const InputFlags& flags) {
  OpenedInput in;
  const bool stdin_input = flags.path == "-";
  const std::string path = stdin_input ? "/dev/stdin" : flags.path;
  const io::RowFormat format = flags.format == "auto" ? io::format_from_path(path) : io::parse_row_format(flags.format);
  io::RowSourceOptions o;
  o.skip_malformed = flags.skip_malformed;
  o.csv_header = io::parse_csv_header(flags.header);
  o.unit_column = flags.unit_column;
  in.title = stdin_input ? "standard input" : std::filesystem::path(path).filename().string();
  if (format != io::RowFormat::idx) {
    in.source = io::open_row_source(path, format, o);
    in.note = io::to_string(format);
    return in;
  }
  // The header says the value type: bytes are images, read as [0, 1].
  o.scale = 1.0 / 255.0;
  in.source = io::open_row_source(path, format, o);
  if (static_cast<const io::IdxRowReader&>(*in.source).type_code() == kIdxUnsignedByte) {
    in.note = "IDX, unsigned bytes scaled by 1/255";
    return in;
  }
  if (stdin_input) throw UsageError("--input -: an IDX stream of another value type than bytes cannot be read twice");
  o.scale = 1.0;
  in.source = io::open_row_source(path, format, o);
  in.note = "IDX";
  return in;
}

}  // namespace

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

std::string default_dataset_path() {
  const char* env = std::getenv("DPSTREAM_FASHION_MNIST");
  return env && *env ? env : kFashionMnist;
}

OpenedInput open_input(const InputFlags& flags) {
  if (flags.path.empty() && flags.format != "auto") throw UsageError("--format needs --input");
  if (flags.path == "-" && flags.format == "auto")
    throw UsageError("--input - (standard input) has no name to tell its format from: give --format");
  try {
    return flags.path.empty() ? open_default() : open_file(flags);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot read the input: ") + e.what());
  }
}

std::string verify_input(io::RowSource& source) {
  if (source.integrity() == io::Integrity::unverified) source.verify_rest();
  return io::to_string(source.integrity());
}

std::string non_row_lines_text(const io::RowSource& source) {
  const io::NonRowLines& n = source.non_row_lines();
  if (n.total() == 0) return {};
  return "lines not rows: " + std::to_string(n.header) + " header, " + std::to_string(n.comment) + " comment" +
         (n.comment == 1 ? "" : "s") + ", " + std::to_string(n.blank) + " blank";
}

}  // namespace dpstream::tools
