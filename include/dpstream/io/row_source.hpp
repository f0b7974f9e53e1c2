// RowSource: the one interface every reader of stored rows implements (protobuf row log, CSV, IDX),
// and open_row_source, which picks the reader from a file's name or an explicit format.
//
// Readers stream: they hold one row at a time, never the whole file. They check the file's structure
// (framing, dimension, numbers that parse) and throw CorruptInput naming the file and the position:
// the 0-based row index, and the 1-based line number for text formats or the byte offset for binary
// ones. NaN and ±Inf are passed through: whether a row is admissible is RowGuard's decision, not the
// reader's. With skip_malformed a row that is malformed but whose extent is known (a CSV line, a
// length-delimited message) is counted in skipped() and the reader goes on; a stream that cannot be
// followed past the damage (a truncated message, a gzip error) always throws.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <Eigen/Core>

namespace dpstream::io {

// One row as read. `dense` holds the full row (sparse rows are densified — except from a
// RowLogReader opened with SparseRows::keep_sparse, where `dense` of a sparse row is empty); a row
// stored sparse also keeps its (indices, values) as stored, so a sparse consumer
// (RowGuard::admit_sparse, a sparse accumulator) need not scan the dense copy.
struct RowRecord {
  Eigen::VectorXd dense;
  bool sparse = false;
  Eigen::VectorXi indices;   // sparse rows only: strictly increasing, < dimension
  Eigen::VectorXd values;    // sparse rows only: one per index
  std::optional<std::uint64_t> id;
  std::optional<std::int64_t> timestamp;
  // The row's privacy unit (a user): an opaque key (integers as decimal text), when the source has
  // one (a CSV's unit column, a row log's `unit` field). Kept in a string whose capacity is reused.
  std::string unit;
  bool has_unit = false;
  std::uint64_t row_index = 0;  // 0-based position among the rows of the file (skipped ones count)
  std::uint64_t line = 0;       // 1-based line number for text formats, 0 for binary ones

  // Marks the record as a dense row (its values already in `dense`) at this position, clearing what
  // a previous sparse or tagged row left: the readers reuse one record across rows.
  void set_dense_position(std::uint64_t index, std::uint64_t line_number) {
    sparse = false;
    indices.resize(0);
    values.resize(0);
    id.reset();
    timestamp.reset();
    has_unit = false;
    row_index = index;
    line = line_number;
  }
};

// synthetic: a generated stream (io::SyntheticRowSource), never read from a file: parse_row_format
// and open_row_source do not take it.
enum class RowFormat { automatic, pb, csv, idx, synthetic };

// Whether the first (non-comment, non-blank) CSV line is a header. `present` / `absent` say so;
// `detect` (a command line's "auto") decides only when the line is unambiguous, and refuses it
// otherwise (csv_rows.hpp: a line of names is a header, a line of numbers is a row, a mix of the two,
// a line of quoted numbers only, or pandas' default header 0,1,…,d−1 is CorruptInput asking for
// --header yes or --header no).
enum class CsvHeader { detect, present, absent };
const char* to_string(CsvHeader header) noexcept;  // "detect" | "present" | "absent"
// The inverse, also taking auto, yes and no (a command line's words); any other text:
// InvalidParameter naming it and the accepted names.
CsvHeader parse_csv_header(std::string_view text);

struct RowSourceOptions {
  bool skip_malformed = false;  // count and skip malformed rows instead of throwing
  double scale = 1.0;           // IDX only: every value is multiplied by it (1/255 maps bytes to [0, 1])
  CsvHeader csv_header = CsvHeader::detect;
  // CSV only: the column holding each row's unit key, by header name or 0-based index ("" none); it
  // is not a value column (csv_rows.hpp). Other formats refuse it (a row log has a field instead).
  std::string unit_column;
};

// The lines of a text file that are not rows, as counted so far (all 0 for binary formats). A line
// that is a malformed row is not one of them: it is counted in RowSource::skipped() (or thrown). At
// the end of a CSV file, rows_returned() + skipped() + non_row_lines().total() is its line count.
struct NonRowLines {
  std::uint64_t header = 0;   // 0 or 1
  std::uint64_t comment = 0;  // lines whose first non-blank character is '#'
  std::uint64_t blank = 0;    // empty, or spaces, tabs and a carriage return only
  std::uint64_t total() const noexcept { return header + comment + blank; }
};

// What the reader knows of the input's integrity: whether a checksum covering the bytes read was
// checked.
enum class Integrity {
  no_checksum,  // the format carries none (CSV, plain IDX, row log): there is nothing to check
  unverified,   // there is one (gzip's CRC-32 and length, at the end of the stream), but the read has
                // not reached it: the rows delivered may differ from those written, unnoticed
  verified,     // checked and matched: every byte of the stream was read and is as written
};
const char* to_string(Integrity integrity) noexcept;  // "none" | "unverified" | "verified"

class RowSource {
 public:
  virtual ~RowSource() = default;
  RowSource(const RowSource&) = delete;
  RowSource& operator=(const RowSource&) = delete;

  // The length of every row, known once the source is open.
  virtual Eigen::Index dimension() const = 0;
  // Reads the next row into `out` (its buffers are reused) and returns true, or returns false at the
  // end of the file. Throws CorruptInput as described above.
  virtual bool next(RowRecord& out) = 0;
  // Rows in the file if the format records it (row log header, IDX), else nullopt.
  virtual std::optional<std::uint64_t> declared_rows() const { return std::nullopt; }
  virtual RowFormat format() const = 0;

  // See Integrity. unverified only for a gzipped input whose end has not been read yet (a read
  // stopped early, as with a row limit); reading to the end (next() returning false) or verify_rest()
  // makes it verified, or throws.
  virtual Integrity integrity() const { return Integrity::no_checksum; }
  // Reads the rest of the input without delivering rows (for gzip: decompresses it, the cost of
  // reading it) and checks what reading to the end would: the checksum, the size the header
  // declares, no trailing data. Throws CorruptInput as next() would, naming the file and the
  // position. Afterwards integrity() is verified and next() returns false: rows not yet read are
  // skipped, not counted. Formats without a checksum: does nothing (and next() reads on).
  virtual void verify_rest() {}

  const std::string& path() const noexcept { return path_; }
  std::uint64_t rows_returned() const noexcept { return returned_; }
  std::uint64_t skipped() const noexcept { return skipped_; }
  // Why the first skipped row was skipped (the message the reader would have thrown), or "".
  const std::string& first_skip_reason() const noexcept { return first_skip_reason_; }
  // Header, comment and blank lines read so far (text formats; zeros otherwise).
  const NonRowLines& non_row_lines() const noexcept { return non_row_; }

 protected:
  RowSource(std::string path, bool skip_malformed) : path_(std::move(path)), skip_malformed_(skip_malformed) {}
  // A malformed row: throws CorruptInput(message) unless skipping, in which case it is counted.
  void malformed(const std::string& message);

  std::string path_;
  bool skip_malformed_;
  std::uint64_t returned_ = 0;
  std::uint64_t skipped_ = 0;
  std::string first_skip_reason_;
  NonRowLines non_row_;
};

// "pb", "csv", "idx" (or "auto") to the enum; InvalidParameter naming the text otherwise.
RowFormat parse_row_format(std::string_view name);
const char* to_string(RowFormat format);
// The format a file name implies: .pb / .rowlog → pb; .csv → csv; .idx, .idxN, -ubyte, .ubyte →
// idx, also with .gz appended (the IDX reader reads gzip transparently; the others do not, so a
// gzipped log or CSV is refused here). InvalidParameter naming the path when the name says nothing.
RowFormat format_from_path(const std::string& path);

// Opens `path` with the reader of `format` (automatic: format_from_path). Throws CorruptInput for a
// file that cannot be opened or whose header is wrong, InvalidParameter for bad options.
std::unique_ptr<RowSource> open_row_source(const std::string& path, RowFormat format = RowFormat::automatic,
                                           const RowSourceOptions& options = {});

}  // namespace dpstream::io
