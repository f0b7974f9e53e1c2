// libFuzzer target: io::CsvRowReader (include/dpstream/io/csv_rows.hpp) over arbitrary bytes.
//
//  1. every header mode (detect, present, absent) × skip_malformed (false, true): open and read every
//     row. Documented errors: CorruptInput only. Every row has dimension() values.
//  2. property: rows read cleanly (no header) are written with CsvRowWriter and read back; every value
//     must come back bit-identical (the header's "write → read round trip is exact, -0.0 included"),
//     NaN only as a NaN (payloads are documented as not kept).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dpstream/errors.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "fuzz_common.hpp"

using dpstream::CorruptInput;
using dpstream::io::CsvHeader;
using dpstream::io::CsvRowReader;
using dpstream::io::CsvRowWriter;
using dpstream::io::RowRecord;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dpstream_fuzz::write_scratch("input.csv", data, size);

  std::vector<Eigen::VectorXd> clean_rows;
  Eigen::Index clean_dimension = 0;
  bool have_clean = false;
  for (const CsvHeader mode : {CsvHeader::detect, CsvHeader::present, CsvHeader::absent}) {
    for (const bool skip : {false, true}) {
      try {
        CsvRowReader reader(path, mode, skip);
        FUZZ_CHECK(reader.dimension() >= 1);
        if (mode == CsvHeader::absent) FUZZ_CHECK(reader.column_names().empty());
        if (mode == CsvHeader::present)
          FUZZ_CHECK(static_cast<Eigen::Index>(reader.column_names().size()) == reader.dimension());
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
        if (!skip) FUZZ_CHECK(reader.skipped() == 0);
        if (!skip && !have_clean && reader.column_names().empty()) {
          clean_rows = std::move(rows);
          clean_dimension = reader.dimension();
          have_clean = true;
        }
      } catch (const CorruptInput&) {
      }
    }
  }

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
