// libFuzzer target: io::IdxRowReader (include/dpstream/io/idx_rows.hpp) over arbitrary bytes, plain
// or gzipped (the reader tells them apart itself; the bytes are written as they are).
//
// Scales 1 and 1/255 (the decode loop has a separate path for each). Documented errors:
// CorruptInput only (InvalidParameter is for a bad scale, never given here). Checks: every row has
// dimension() values; no more rows than declared_rows(); with scale 1, float64 values come back with
// their exact bits (the header: "a float64 NaN keeps its payload") — checked against the bytes for
// plain files. Integrity: a clean end is verified for gzip, no_checksum for plain files; before the
// end a gzip read is unverified. verify_rest() after the first row succeeds exactly when reading
// every row does (the reader has no other reason to refuse a row than the stream), and leaves
// nothing to read.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/idx_rows.hpp"
#include "fuzz_common.hpp"

using dpstream::CorruptInput;
using dpstream::io::IdxRowReader;
using dpstream::io::Integrity;
using dpstream::io::RowRecord;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dpstream_fuzz::write_scratch("input.idx", data, size);
  bool read_through = false;  // scale 1: opened and every row read without an error
  for (const double scale : {1.0, 1.0 / 255.0}) {
    try {
      IdxRowReader reader(path, scale);
      FUZZ_CHECK(reader.dimension() >= 1);
      FUZZ_CHECK(reader.declared_rows().has_value());
      FUZZ_CHECK(reader.integrity() == (reader.gzipped() ? Integrity::unverified : Integrity::no_checksum));
      const std::uint64_t declared = *reader.declared_rows();
      // Plain float64 files: the bytes of row r start at header + r·dimension·8.
      const bool check_bits = scale == 1.0 && !reader.gzipped() && reader.type_code() == 0x0E;
      const std::size_t header_bytes = 4 + 4 * (reader.item_shape().size() + 1);
      RowRecord record;
      std::uint64_t rows = 0;
      while (reader.next(record)) {
        FUZZ_CHECK(rows < declared);
        FUZZ_CHECK(record.dense.size() == reader.dimension());
        FUZZ_CHECK(!record.sparse && record.row_index == rows);
        if (check_bits) {
          for (Eigen::Index j = 0; j < reader.dimension(); ++j) {
            const std::size_t at = header_bytes + (static_cast<std::size_t>(rows * reader.dimension() + j)) * 8;
            FUZZ_CHECK(at + 8 <= size);
            std::uint64_t be = 0;
            std::memcpy(&be, data + at, 8);
            const double want = std::bit_cast<double>(__builtin_bswap64(be));
            FUZZ_CHECK(dpstream_fuzz::same_bits(want, record.dense[j]));
          }
        }
        ++rows;
      }
      FUZZ_CHECK(rows == declared);  // a clean end means every declared row was delivered
      FUZZ_CHECK(!reader.next(record));
      FUZZ_CHECK(reader.integrity() == (reader.gzipped() ? Integrity::verified : Integrity::no_checksum));
      if (scale == 1.0) read_through = true;
    } catch (const CorruptInput&) {
    }
  }

  bool verified = false;
  try {
    IdxRowReader reader(path);
    RowRecord record;
    const bool first = reader.next(record);
    reader.verify_rest();
    if (reader.gzipped()) {
      FUZZ_CHECK(reader.integrity() == Integrity::verified);
      FUZZ_CHECK(!reader.next(record));
      FUZZ_CHECK(reader.rows_returned() == (first ? 1u : 0u));
    } else {
      FUZZ_CHECK(reader.integrity() == Integrity::no_checksum);
    }
    verified = true;
  } catch (const CorruptInput&) {
  }
  FUZZ_CHECK(verified == read_through);
  return 0;
}
