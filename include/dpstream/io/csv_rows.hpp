// CSV rows: one row per line, comma-separated numbers.
//
// Reading: lines whose first non-blank character is '#' and blank lines are skipped (they are not
// rows; RowSource::non_row_lines() counts them, and the header). A UTF-8 byte-order mark at the start
// of the file is dropped; a UTF-16 one is refused. The first other line is a header when CsvHeader
// says so; the dimension is its field count, or that of the first data line. Every data line must
// have that many fields. Fields are trimmed of spaces and tabs; a number is what std::from_chars
// reads (decimal or scientific, "nan", "inf", "infinity", any case) with an optional leading '+', or
// such a number wrapped in double quotes ("1.5", as written by tools quoting every field; nothing
// else may be inside the quotes, and a quoted field cannot hold a comma). An empty field — a
// trailing comma — is not a number. Magnitudes beyond double range read as ±inf or 0, as strtod
// does. A line longer than max_line_bytes() (a share of the memory limit) is refused, whatever
// skip_malformed says. Errors name the 1-based line, the 0-based row index and, for a bad field, its
// 1-based column and text.
//
// CsvHeader::detect ("--header auto") looks at the kinds of the first line's fields, empty fields
// aside: only names (not numbers; quoted numbers may be among them) → a header; only numbers
// (quoted or not) → a row; all empty → a row (then refused). It refuses the line — CorruptInput naming
// the file, the line, the fields and asking for --header yes or --header no — when it is ambiguous:
// names and numbers mixed (a typo in a row, or a header with a numeric name), quoted numbers only (a
// fully quoted row, or a header of numeric names), or exactly 0,1,…,d−1 with d ≥ 2 (pandas' header for
// unnamed columns, or a row).
//
// A unit column (use_unit_column, RowSourceOptions::unit_column): one column, named by its header
// name or its 0-based index, holds each row's unit key (a user: any text, trimmed and unquoted like a
// name); it is not a value, so the dimension is one less than the field count. An empty key is a
// malformed row (CorruptInput naming the line, row and field, or skipped and counted).
//
// Writing: each value in the shortest form that reads back to the same double (std::to_chars), so a
// write → read round trip is exact, -0.0 included; NaN payloads are not kept (use a row log).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "dpstream/base/staged_file.hpp"
#include "dpstream/io/line_reader.hpp"
#include "dpstream/io/row_source.hpp"

namespace dpstream::io {

class CsvRowReader final : public RowSource {
 public:
  // Opens `path` and reads up to the first data line to learn the dimension. CorruptInput naming the
  // path for a file that cannot be opened, is empty, starts with a UTF-16 byte-order mark, or has no
  // header or data line, and (detect) for an ambiguous first line, whatever skip_malformed says.
  explicit CsvRowReader(const std::string& path, CsvHeader header = CsvHeader::detect, bool skip_malformed = false);
  ~CsvRowReader() override;

  Eigen::Index dimension() const override { return dimension_; }
  // CorruptInput naming the line and row for a line with another number of fields, and the column
  // and text for a field that is not a number. Both can be skipped.
  bool next(RowRecord& out) override;
  RowFormat format() const override { return RowFormat::csv; }

  // Takes the column named `name_or_index` (a header name, else a 0-based index) as the unit key,
  // before the first row is read. CorruptInput naming the column and the header's names when there is
  // no such column, or when it is the only one; InvalidParameter after a row was read.
  void use_unit_column(const std::string& name_or_index);

  // The header's fields, trimmed and unquoted; empty when the file has no header.
  const std::vector<std::string>& column_names() const noexcept { return column_names_; }

 private:
  bool read_line();  // the next line into line_ (without its end of line); false at the end
  bool non_row_line();  // line_ is blank or a comment: counts it in non_row_ and returns true
  bool detect_header() const;  // CsvHeader::detect on fields_ (the first line): see above
  std::string where(std::uint64_t row_index) const;

  struct FileCloser {
    void operator()(std::FILE* f) const noexcept;
  };
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::unique_ptr<LineReader> lines_;  // a line at most max_line_bytes() long (line_reader.hpp)
  std::string_view line_;
  std::uint64_t line_number_ = 0;
  std::uint64_t row_index_ = 0;
  Eigen::Index dimension_ = 0;
  bool pending_ = false;  // line_ holds the first data line, read while learning the dimension
  std::vector<std::string> column_names_;
  bool header_ends_with_comma_ = false;  // its last name is empty: named in field-count errors
  std::vector<std::string_view> fields_;
  // The unit column (csv_unit_column.cpp): its field index (-1: none) and the current row's key.
  std::ptrdiff_t unit_field_ = -1;
  bool take_unit_field(std::uint64_t row_index);  // moves the key out of fields_; false: malformed
  std::string unit_text_;
};

class CsvRowWriter {
 public:
  // Starts the file (a base::StagedFile beside `path`, mode 0600: nothing appears at `path`, and a file
  // there is not touched, until close() succeeds) and writes the header line if `column_names` is not
  // empty (it must then have `dimension` names; a name that reads as a number is written quoted, so
  // that detect still takes the line for a header when another name is not numeric — a header of
  // numeric names only is read back with CsvHeader::present). std::runtime_error naming the path if it cannot be
  // created there (or exists and `existing` is refuse); InvalidParameter for dimension ≤ 0 or a
  // header of another length.
  CsvRowWriter(const std::string& path, Eigen::Index dimension, const std::vector<std::string>& column_names = {},
               base::ExistingFile existing = base::ExistingFile::replace);
  ~CsvRowWriter();
  CsvRowWriter(const CsvRowWriter&) = delete;
  CsvRowWriter& operator=(const CsvRowWriter&) = delete;

  // InvalidParameter naming the row if its length is not the dimension.
  void write(const Eigen::Ref<const Eigen::VectorXd>& row);
  // Flushes and puts the file in place; std::runtime_error naming the path on an I/O error (nothing
  // is written at the path then).
  void close();

  std::uint64_t rows_written() const noexcept { return rows_; }
  std::uint64_t bytes_written() const noexcept { return bytes_; }

 private:
  std::string path_;
  Eigen::Index dimension_;
  std::unique_ptr<base::StagedFile> staged_;
  std::FILE* file_ = nullptr;
  std::string line_;
  std::uint64_t rows_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace dpstream::io
