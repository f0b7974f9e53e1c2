// libFuzzer target: io::CsvRowReader (include/dpstream/io/csv_rows.hpp) over arbitrary bytes.
//
//  1. every header mode (detect, present, absent) × skip_malformed (false, true): open and read every
//     row. Documented errors: CorruptInput only. Every row has dimension() values. Every line is
//     accounted for: at a clean end, rows + skipped + non_row_lines() is the file's line count, and
//     non_row_lines().header is 1 exactly when there is a header. No checksum: integrity() is
//     no_checksum.
//  1b. detect only chooses: with skip_malformed, when it opens the file it reads exactly what present
//     or absent reads (same names, rows, skips and counts), never a third reading.
//  2. property: rows read cleanly (no header) are written with CsvRowWriter and read back; every value
//     must come back bit-identical (the header's "write → read round trip is exact, -0.0 included"),
//     NaN only as a NaN (payloads are documented as not kept).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "fuzz_common.hpp"

using dpstream::CorruptInput;
using dpstream::io::CsvHeader;
using dpstream::io::CsvRowReader;
using dpstream::io::CsvRowWriter;
using dpstream::io::Integrity;
using dpstream::io::RowRecord;

namespace {

// What a reader opened with skip_malformed made of the file (rows compared bit for bit).
struct Reading {
  bool opened = false;
  std::vector<std::string> names;
  std::vector<Eigen::VectorXd> rows;
  std::uint64_t skipped = 0, header = 0, comment = 0, blank = 0;
};

bool same(const Reading& a, const Reading& b) {
  if (a.names != b.names || a.rows.size() != b.rows.size() || a.skipped != b.skipped || a.header != b.header ||
      a.comment != b.comment || a.blank != b.blank)
    return false;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    if (a.rows[i].size() != b.rows[i].size()) return false;
    for (Eigen::Index j = 0; j < a.rows[i].size(); ++j)
      if (!dpstream_fuzz::same_bits(a.rows[i][j], b.rows[i][j])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dpstream_fuzz::write_scratch("input.csv", data, size);
  // Lines as getline(3) splits them: one per '\n', and a last one without it.
  std::uint64_t lines = 0;
  for (std::size_t i = 0; i < size; ++i) lines += data[i] == '\n';
  if (size > 0 && data[size - 1] != '\n') ++lines;

  std::vector<Eigen::VectorXd> clean_rows;
  Eigen::Index clean_dimension = 0;
  bool have_clean = false;
  Reading skipping[3];  // detect, present, absent, with skip_malformed
  for (const CsvHeader mode : {CsvHeader::detect, CsvHeader::present, CsvHeader::absent}) {
    for (const bool skip : {false, true}) {
      try {
        CsvRowReader reader(path, mode, skip);
        FUZZ_CHECK(reader.dimension() >= 1);
        if (mode == CsvHeader::absent) FUZZ_CHECK(reader.column_names().empty());
        if (mode == CsvHeader::present)
          FUZZ_CHECK(static_cast<Eigen::Index>(reader.column_names().size()) == reader.dimension());
        FUZZ_CHECK(reader.non_row_lines().header == (reader.column_names().empty() ? 0u : 1u));
        FUZZ_CHECK(reader.integrity() == Integrity::no_checksum);
        RowRecord record;
        std::vector<Eigen::VectorXd> rows;
        std::uint64_t last_line = 0;
        while (reader.next(record)) {
          FUZZ_CHECK(record.dense.size() == reader.dimension());
          FUZZ_CHECK(record.line > last_line);  // lines increase strictly
          last_line = record.line;
          rows.push_back(record.dense);
        }
        FUZZ_CHECK(reader.rows_returned() == rows.size());
        FUZZ_CHECK(reader.rows_returned() + reader.skipped() + reader.non_row_lines().total() == lines);
        if (!skip) FUZZ_CHECK(reader.skipped() == 0);
        if (skip) {
          Reading& r = skipping[static_cast<int>(mode)];
          r.opened = true;
          r.names = reader.column_names();
          r.rows = rows;
          r.skipped = reader.skipped();
          r.header = reader.non_row_lines().header;
          r.comment = reader.non_row_lines().comment;
          r.blank = reader.non_row_lines().blank;
        }
        if (!skip && !have_clean && reader.column_names().empty()) {
          clean_rows = std::move(rows);
          clean_dimension = reader.dimension();
          have_clean = true;
        }
      } catch (const CorruptInput&) {
      }
    }
  }

  if (skipping[0].opened) FUZZ_CHECK(same(skipping[0], skipping[1]) || same(skipping[0], skipping[2]));

  if (have_clean && !clean_rows.empty()) {
    const std::string copy = dpstream_fuzz::scratch_dir() + "/copy.csv";
    {
      CsvRowWriter writer(copy, clean_dimension);
      for (const Eigen::VectorXd& row : clean_rows) writer.write(row);
      writer.close();
    }
    CsvRowReader back(copy, CsvHeader::absent);
    FUZZ_CHECK(back.dimension() == clean_dimension);
    RowRecord record;
    std::size_t i = 0;
    while (back.next(record)) {
      FUZZ_CHECK(i < clean_rows.size());
      for (Eigen::Index j = 0; j < clean_dimension; ++j) {
        const double want = clean_rows[i][j], got = record.dense[j];
        if (std::isnan(want)) FUZZ_CHECK(std::isnan(got));
        else FUZZ_CHECK(dpstream_fuzz::same_bits(want, got));
      }
      ++i;
    }
    FUZZ_CHECK(i == clean_rows.size());
  }
  return 0;
}
