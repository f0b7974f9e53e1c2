// libFuzzer target: io::RowLogReader (include/dpstream/io/row_log.hpp) over arbitrary bytes.
//
//  1. strict reader: open, read every row. Documented errors: CorruptInput only.
//  2. skip_malformed reader: the same; skipped() + rows_returned() must not exceed the rows framed.
//  3. property: a log that reads cleanly is written again with RowLogWriter (same header, every
//     record as read) and read back; every record must be bit-identical (values, NaN payloads and
//     -0.0 included; dense/sparse, indices, id, timestamp) — the header's "bit for bit" promise.
//  4. SparseRows::keep_sparse reader: sparse rows come without a dense copy, dense rows whole; when
//     the strict read was clean it returns the same rows.
#include <cstdint>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/row_log.hpp"
#include "fuzz_common.hpp"

using dpstream::CorruptInput;
using dpstream::io::RowLogReader;
using dpstream::io::RowLogWriter;
using dpstream::io::RowRecord;
using dpstream_fuzz::same_bits;

namespace {

bool same_vector(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  if (a.size() != b.size()) return false;
  for (Eigen::Index i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}

bool same_record(const RowRecord& a, const RowRecord& b) {
  if (a.sparse != b.sparse || a.id != b.id || a.timestamp != b.timestamp || a.row_index != b.row_index) return false;
  if (!same_vector(a.dense, b.dense)) return false;
  if (a.sparse) {
    if (a.indices.size() != b.indices.size() || !(a.indices == b.indices)) return false;
    if (!same_vector(a.values, b.values)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dpstream_fuzz::write_scratch("input.rowlog", data, size);

  // 1 + 3: strict read, then the write → read round trip.
  std::vector<RowRecord> rows;
  dpstream::io::RowLogHeader header;
  bool clean = false;
  try {
    RowLogReader reader(path);
    header = reader.header();
    FUZZ_CHECK(reader.dimension() > 0);
    RowRecord record;
    while (reader.next(record)) {
      FUZZ_CHECK(record.dense.size() == reader.dimension());
      rows.push_back(record);
    }
    FUZZ_CHECK(reader.skipped() == 0);
    FUZZ_CHECK(reader.rows_returned() == rows.size());
    clean = true;
  } catch (const CorruptInput&) {
  }

  if (clean) {
    const std::string copy = dpstream_fuzz::scratch_dir() + "/copy.rowlog";
    {
      RowLogWriter writer(copy, header);
      for (const RowRecord& r : rows) writer.write(r);
      writer.close();
    }
    RowLogReader back(copy);
    FUZZ_CHECK(back.dimension() == header.dimension);
    FUZZ_CHECK(back.header().count == header.count);
    FUZZ_CHECK(back.header().provenance == header.provenance);
    FUZZ_CHECK(back.header().created_by == header.created_by);
    RowRecord record;
    std::size_t i = 0;
    while (back.next(record)) {
      FUZZ_CHECK(i < rows.size());
      FUZZ_CHECK(same_record(record, rows[i]));
      ++i;
    }
    FUZZ_CHECK(i == rows.size());
  }

  // 2: skip_malformed.
  try {
    RowLogReader reader(path, /*skip_malformed=*/true);
    RowRecord record;
    std::uint64_t returned = 0;
    while (reader.next(record)) {
      FUZZ_CHECK(record.dense.size() == reader.dimension());
      ++returned;
    }
    FUZZ_CHECK(reader.rows_returned() == returned);
    if (clean) FUZZ_CHECK(returned == rows.size() && reader.skipped() == 0);
    if (reader.skipped() > 0) FUZZ_CHECK(!reader.first_skip_reason().empty());
  } catch (const CorruptInput&) {
  }

  // 4: keep_sparse.
  try {
    RowLogReader reader(path, /*skip_malformed=*/false, dpstream::io::SparseRows::keep_sparse);
    RowRecord record;
    std::size_t i = 0;
    while (reader.next(record)) {
      FUZZ_CHECK(record.dense.size() == (record.sparse ? 0 : reader.dimension()));
      if (clean) {
        FUZZ_CHECK(i < rows.size());
        RowRecord densified = record;
        if (record.sparse) densified.dense = rows[i].dense;  // compared separately by the strict read
        FUZZ_CHECK(same_record(densified, rows[i]));
      }
      ++i;
    }
    if (clean) FUZZ_CHECK(i == rows.size());
  } catch (const CorruptInput&) {
    FUZZ_CHECK(!clean);
  }
  return 0;
}
