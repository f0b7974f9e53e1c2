#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/row_log.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "row_log.pb.h"
#include "temp_dir.hpp"

namespace test_row_log {

using dpstream::CorruptInput;
using dpstream::InvalidParameter;
using dpstream::io::RowLogHeader;
using dpstream::io::RowLogReader;
using dpstream::io::RowLogWriter;
using dpstream::io::RowRecord;
using Catch::Matchers::Contains;

using dpstream::testing::TempDir;
using dpstream::testing::write_bytes;

namespace {

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

double nan_with_payload(std::uint64_t payload) {
  std::uint64_t bits = 0x7ff8000000000000ULL | (payload & 0x0007ffffffffffffULL);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// A log written message by message with protobuf's own delimited writer: how another program (or a
// test of bad input) produces one.
struct RawLog {
  std::string bytes;
  void add(const google::protobuf::MessageLite& msg) {
    std::string framed;
    {
      google::protobuf::io::StringOutputStream out(&framed);
      REQUIRE(google::protobuf::util::SerializeDelimitedToZeroCopyStream(msg, &out));
    }
    bytes += framed;
  }
  void header(std::uint64_t dimension, std::uint64_t count = 0, std::uint32_t version = 1) {
    dpstream::proto::RowLogHeader h;
    h.set_magic("dpstream-rowlog");
    h.set_format_version(version);
    h.set_dimension(dimension);
    h.set_count(count);
    add(h);
  }
  void dense(std::initializer_list<double> values) {
    dpstream::proto::Row r;
    for (double v : values) r.add_values(v);
    add(r);
  }
  void sparse(std::initializer_list<std::uint32_t> indices, std::initializer_list<double> values) {
    dpstream::proto::Row r;
    r.set_sparse(true);
    for (auto i : indices) r.add_indices(i);
    for (double v : values) r.add_values(v);
    add(r);
  }
};

std::vector<RowRecord> read_all(RowLogReader& reader) {
  std::vector<RowRecord> rows;
  RowRecord record;
  while (reader.next(record)) rows.push_back(record);
  return rows;
}

}  // namespace

TEST_CASE("row log: dense and sparse rows, ids and timestamps round-trip bit for bit") {
  TempDir dir;
  const std::string path = dir.file("rows.pb");
  const Eigen::Index dim = 6;
  std::vector<Eigen::VectorXd> dense;
  std::srand(7);
  for (int t = 0; t < 50; ++t) dense.push_back(Eigen::VectorXd::Random(dim) * std::pow(10.0, t % 7 - 3));
  // Values a text format or a careless copy would change.
  dense[3] << -0.0, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
      -std::numeric_limits<double>::infinity(), nan_with_payload(0x1234), 1.0 / 3.0;
  Eigen::VectorXi sp_idx(3);
  Eigen::VectorXd sp_val(3);
  sp_idx << 0, 2, 5;
  sp_val << -0.0, nan_with_payload(77), 0.1;

  RowLogHeader header;
  header.dimension = dim;
  header.count = 53;
  header.provenance = "synthetic, seed 7";
  header.created_by = "test_row_log";
  {
    RowLogWriter writer(path, header);
    for (int t = 0; t < 50; ++t) {
      if (t % 2 == 0) writer.write_dense(dense[t], std::uint64_t(1000 + t), std::int64_t(-5) * t);
      else writer.write_dense(dense[t]);
    }
    writer.write_sparse(sp_idx, sp_val, std::uint64_t(std::numeric_limits<std::uint64_t>::max()),
                        std::numeric_limits<std::int64_t>::min());
    writer.write_sparse(Eigen::VectorXi(0), Eigen::VectorXd(0));  // an all-zero row stays sparse
    RowRecord as_read;
    as_read.sparse = true;
    as_read.indices = sp_idx;
    as_read.values = sp_val;
    as_read.id = 5;
    writer.write(as_read);
    REQUIRE(writer.rows_written() == 53);
    writer.close();
    REQUIRE(writer.bytes_written() == std::filesystem::file_size(path));
  }

  RowLogReader reader(path);
  REQUIRE(reader.dimension() == dim);
  REQUIRE(reader.header().provenance == "synthetic, seed 7");
  REQUIRE(reader.header().created_by == "test_row_log");
  REQUIRE(reader.declared_rows() == std::optional<std::uint64_t>(53));
  const auto rows = read_all(reader);
  REQUIRE(rows.size() == 53);
  REQUIRE(reader.rows_returned() == 53);
  REQUIRE(reader.skipped() == 0);
  for (int t = 0; t < 50; ++t) {
    INFO("row " << t);
    REQUIRE_FALSE(rows[t].sparse);
    REQUIRE(same_bits(rows[t].dense, dense[t]));
    REQUIRE(rows[t].row_index == std::uint64_t(t));
    REQUIRE(rows[t].line == 0);
    if (t % 2 == 0) {
      REQUIRE(rows[t].id == std::optional<std::uint64_t>(1000 + t));
      REQUIRE(rows[t].timestamp == std::optional<std::int64_t>(-5 * t));
    } else {
      REQUIRE_FALSE(rows[t].id.has_value());
      REQUIRE_FALSE(rows[t].timestamp.has_value());
    }
  }
  const RowRecord& s = rows[50];
  REQUIRE(s.sparse);
  REQUIRE(s.indices == sp_idx);
  REQUIRE(same_bits(s.values, sp_val));
  Eigen::VectorXd densified = Eigen::VectorXd::Zero(dim);
  for (int i = 0; i < 3; ++i) densified[sp_idx[i]] = sp_val[i];
  REQUIRE(same_bits(s.dense, densified));
  REQUIRE(s.id == std::optional<std::uint64_t>(std::numeric_limits<std::uint64_t>::max()));
  REQUIRE(s.timestamp == std::optional<std::int64_t>(std::numeric_limits<std::int64_t>::min()));
  REQUIRE(rows[51].sparse);
  REQUIRE(rows[51].indices.size() == 0);
  REQUIRE(rows[51].dense == Eigen::VectorXd::Zero(dim));
  REQUIRE(rows[52].id == std::optional<std::uint64_t>(5));
  REQUIRE_FALSE(rows[52].timestamp.has_value());

  // A sparse record goes straight into RowGuard's sparse check.
  dpstream::stream::RowGuard guard({dim, 1.0, dpstream::stream::OverNormPolicy::clip});
  RowRecord sparse_row = rows[52];
  sparse_row.values[1] = 0.5;  // the NaN would (rightly) be rejected
  guard.admit_sparse(sparse_row.indices, sparse_row.values);
  REQUIRE(guard.counts().accepted == 1);
}

TEST_CASE("row log: the framing is protobuf's delimited format both ways") {
  TempDir dir;
  // Written by protobuf's util, read by RowLogReader.
  RawLog raw;
  raw.header(3);
  raw.dense({1.0, 2.0, 3.0});
  raw.sparse({1}, {4.5});
  write_bytes(dir.file("raw.pb"), raw.bytes);
  RowLogReader reader(dir.file("raw.pb"));
  REQUIRE_FALSE(reader.declared_rows().has_value());
  const auto rows = read_all(reader);
  REQUIRE(rows.size() == 2);
  REQUIRE(rows[0].dense == Eigen::Vector3d(1.0, 2.0, 3.0));
  REQUIRE(rows[1].dense == Eigen::Vector3d(0.0, 4.5, 0.0));

  // Written by RowLogWriter, read by protobuf's util.
  {
    RowLogWriter writer(dir.file("ours.pb"), RowLogHeader{2, 0, "p", "c"});
    writer.write_dense(Eigen::Vector2d(-1.0, 0.25), 9);
    writer.close();
  }
  std::ifstream in(dir.file("ours.pb"), std::ios::binary);
  google::protobuf::io::IstreamInputStream zin(&in);
  google::protobuf::io::CodedInputStream coded(&zin);
  dpstream::proto::RowLogHeader h;
  dpstream::proto::Row r;
  bool clean_eof = false;
  REQUIRE(google::protobuf::util::ParseDelimitedFromCodedStream(&h, &coded, &clean_eof));
  REQUIRE(h.magic() == "dpstream-rowlog");
  REQUIRE(h.dimension() == 2);
  REQUIRE(google::protobuf::util::ParseDelimitedFromCodedStream(&r, &coded, &clean_eof));
  REQUIRE(r.values_size() == 2);
  REQUIRE(r.values(1) == 0.25);
  REQUIRE(r.id() == 9);
  REQUIRE_FALSE(google::protobuf::util::ParseDelimitedFromCodedStream(&r, &coded, &clean_eof));
  REQUIRE(clean_eof);
}

TEST_CASE("row log writer refuses bad rows and a wrong count, naming the row") {
  TempDir dir;
  REQUIRE_THROWS_AS(RowLogWriter(dir.file("a.pb"), RowLogHeader{0, 0, "", ""}), InvalidParameter);
  RowLogWriter writer(dir.file("b.pb"), RowLogHeader{4, 3, "", ""});
  writer.write_dense(Eigen::VectorXd::Zero(4));
  REQUIRE_THROWS_WITH(writer.write_dense(Eigen::VectorXd::Zero(3)),
                      Contains("row 1") && Contains("dimension 3, expected 4"));
  Eigen::VectorXi idx(2);
  idx << 2, 1;
  REQUIRE_THROWS_WITH(writer.write_sparse(idx, Eigen::VectorXd::Ones(2)), Contains("row 1") && Contains("increasing"));
  idx << 1, 4;
  REQUIRE_THROWS_WITH(writer.write_sparse(idx, Eigen::VectorXd::Ones(2)), Contains("index 4"));
  REQUIRE_THROWS_WITH(writer.write_sparse(idx, Eigen::VectorXd::Ones(3)), Contains("2 indices but 3 values"));
  REQUIRE(writer.rows_written() == 1);
  REQUIRE_THROWS_WITH(writer.close(), Contains("declares 3 rows but 1 were written"));
  REQUIRE_THROWS_WITH(RowLogWriter(dir.file("no/such/dir.pb"), RowLogHeader{1, 0, "", ""}),
                      Contains("no/such/dir.pb") && Contains("cannot create"));
}

TEST_CASE("row log reader: unreadable files and bad headers name the file") {
  TempDir dir;
  const std::string missing = dir.file("missing.pb");
  REQUIRE_THROWS_WITH(RowLogReader(missing), Contains(missing) && Contains("cannot open") &&
                                                 Contains("No such file"));
  write_bytes(dir.file("empty.pb"), "");
  REQUIRE_THROWS_WITH(RowLogReader(dir.file("empty.pb")), Contains("empty.pb") && Contains("empty file"));
  write_bytes(dir.file("text.pb"), "1.0,2.0,3.0\n4.0,5.0,6.0\n");
  REQUIRE_THROWS_WITH(RowLogReader(dir.file("text.pb")), Contains("not a dpstream row log"));
  RawLog v2;
  v2.header(3, 0, 2);
  write_bytes(dir.file("v2.pb"), v2.bytes);
  REQUIRE_THROWS_WITH(RowLogReader(dir.file("v2.pb")), Contains("format_version 2"));
  RawLog zero;
  zero.header(0);
  write_bytes(dir.file("zero.pb"), zero.bytes);
  REQUIRE_THROWS_WITH(RowLogReader(dir.file("zero.pb")), Contains("dimension 0"));
  dpstream::proto::Row not_header;
  not_header.add_values(1.0);
  RawLog wrong;
  wrong.add(not_header);
  write_bytes(dir.file("wrong.pb"), wrong.bytes);
  REQUIRE_THROWS_WITH(RowLogReader(dir.file("wrong.pb")), Contains("not a dpstream row log"));
}

TEST_CASE("row log reader: truncation names the row and the byte offset") {
  TempDir dir;
  RawLog raw;
  raw.header(4);
  raw.dense({1, 2, 3, 4});
  raw.dense({5, 6, 7, 8});
  const std::size_t two_rows = raw.bytes.size();
  raw.dense({9, 10, 11, 12});
  const std::string off = "byte offset " + std::to_string(two_rows);

  SECTION("cut inside a message") {
    write_bytes(dir.file("cut.pb"), raw.bytes.substr(0, raw.bytes.size() - 5));
    RowLogReader reader(dir.file("cut.pb"));
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 2") && Contains(off) && Contains("truncated message"));
  }
  SECTION("cut inside a varint length prefix") {
    write_bytes(dir.file("varint.pb"), raw.bytes.substr(0, two_rows) + std::string(1, '\x80'));
    RowLogReader reader(dir.file("varint.pb"), /*skip_malformed=*/true);  // truncation is never skipped
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 2") && Contains(off) && Contains("truncated varint"));
  }
  SECTION("a length prefix of absurd size") {
    write_bytes(dir.file("huge.pb"), raw.bytes.substr(0, two_rows) + std::string("\xff\xff\xff\xff\x7f", 5));
    RowLogReader reader(dir.file("huge.pb"));
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 2") && Contains(off));
  }
  SECTION("fewer rows than the header declares") {
    RawLog counted;
    counted.header(4, 5);
    counted.dense({1, 2, 3, 4});
    write_bytes(dir.file("few.pb"), counted.bytes);
    RowLogReader reader(dir.file("few.pb"));
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("ends after 1 rows") && Contains("declares 5"));
  }
  SECTION("more rows than the header declares") {
    RawLog counted;
    counted.header(4, 1);
    counted.dense({1, 2, 3, 4});
    counted.dense({1, 2, 3, 4});
    write_bytes(dir.file("more.pb"), counted.bytes);
    RowLogReader reader(dir.file("more.pb"));
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 1") && Contains("declares 1 rows, the file has more"));
  }
}

TEST_CASE("row log reader: malformed rows throw, or are counted under skip_malformed") {
  TempDir dir;
  RawLog raw;
  raw.header(4);
  raw.dense({1, 2, 3, 4});                // row 0: good
  raw.dense({1, 2, 3});                   // row 1: too short
  const std::size_t garbage_offset = raw.bytes.size();
  raw.bytes += std::string("\x02\x0f\x00", 3);  // row 2: a 2-byte message with an invalid wire type
  raw.sparse({0, 3}, {1.0, 2.0});         // row 3: good
  raw.sparse({3, 1}, {1.0, 2.0});         // row 4: not increasing
  raw.sparse({0, 4}, {1.0, 2.0});         // row 5: index out of range
  raw.sparse({0, 1}, {1.0});              // row 6: count mismatch
  dpstream::proto::Row mixed;             // row 7: dense with indices
  for (double v : {1.0, 2.0, 3.0, 4.0}) mixed.add_values(v);
  mixed.add_indices(0);
  raw.add(mixed);
  raw.dense({5, 6, 7, 8});                // row 8: good
  write_bytes(dir.file("bad.pb"), raw.bytes);

  {
    RowLogReader reader(dir.file("bad.pb"));
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 1") && Contains("3 values") && Contains("expected dimension 4"));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 2") &&
                                            Contains("byte offset " + std::to_string(garbage_offset)) &&
                                            Contains("does not parse"));
    REQUIRE(reader.next(r));
    REQUIRE(r.row_index == 3);
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 4") && Contains("strictly increasing"));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 5") && Contains("index 4"));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 6") && Contains("2 indices but 1 values"));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 7") && Contains("1 indices"));
    REQUIRE(reader.next(r));
    REQUIRE(r.row_index == 8);
    REQUIRE_FALSE(reader.next(r));
  }
  {
    RowLogReader reader(dir.file("bad.pb"), /*skip_malformed=*/true);
    const auto rows = read_all(reader);
    REQUIRE(rows.size() == 3);
    REQUIRE(rows[0].row_index == 0);
    REQUIRE(rows[1].row_index == 3);
    REQUIRE(rows[1].sparse);
    REQUIRE(rows[2].row_index == 8);
    REQUIRE(rows[2].dense == Eigen::Vector4d(5, 6, 7, 8));
    REQUIRE(reader.skipped() == 6);
    REQUIRE(reader.rows_returned() == 3);
    REQUIRE_THAT(reader.first_skip_reason(), Contains("row 1") && Contains("expected dimension 4"));
  }
}

TEST_CASE("row log reader: sparse rows of a huge dimension are refused densified, read sparse") {
  // fuzz_row_log finding (fuzz/regressions/fuzz_row_log/huge_dimension_sparse_row.rowlog): a header
  // of dimension 2^31 - 1 and one sparse row made the reader allocate 16 GiB for its dense copy.
  TempDir dir;
  const Eigen::Index huge = std::numeric_limits<int>::max();
  for (Eigen::Index dimension : {huge, dpstream::io::kMaxDensifiedDimension + 1}) {
    INFO("dimension " << dimension);
    {
      RowLogWriter writer(dir.file("huge.pb"), RowLogHeader{dimension, 0, "", ""});
      writer.write_sparse(Eigen::Vector2i(3, static_cast<int>(dimension - 1)), Eigen::Vector2d(0.5, -2.0), 7);
      writer.close();
    }
    {
      RowLogReader reader(dir.file("huge.pb"));
      RowRecord r;
      try {
        reader.next(r);
        FAIL("a sparse row of dimension " << dimension << " was densified");
      } catch (const CorruptInput& e) {
        REQUIRE_THAT(e.what(), Contains("row 0") && Contains("sparse row in dimension " + std::to_string(dimension)) &&
                                   Contains("SparseRows::keep_sparse"));
      }
    }
    RowLogReader reader(dir.file("huge.pb"), false, dpstream::io::SparseRows::keep_sparse);
    RowRecord r;
    REQUIRE(reader.next(r));
    CHECK(r.sparse);
    CHECK(r.dense.size() == 0);
    CHECK(r.indices == Eigen::Vector2i(3, static_cast<int>(dimension - 1)));
    CHECK(r.values == Eigen::Vector2d(0.5, -2.0));
    CHECK(r.id == std::optional<std::uint64_t>(7));
    REQUIRE_FALSE(reader.next(r));
  }
  // At or under the limit both modes give the same row; a dense row is whole in both.
  {
    RowLogWriter writer(dir.file("small.pb"), RowLogHeader{1000, 0, "", ""});
    writer.write_sparse(Eigen::Vector2i(3, 999), Eigen::Vector2d(0.5, -2.0));
    writer.write_dense(Eigen::VectorXd::LinSpaced(1000, 0, 1));
    writer.close();
  }
  RowLogReader densify(dir.file("small.pb")), keep(dir.file("small.pb"), false, dpstream::io::SparseRows::keep_sparse);
  RowRecord a, b;
  REQUIRE((densify.next(a) && keep.next(b)));
  CHECK(a.dense.size() == 1000);
  CHECK(a.dense[999] == -2.0);
  CHECK(b.dense.size() == 0);
  CHECK((a.indices == b.indices && a.values == b.values));
  REQUIRE((densify.next(a) && keep.next(b)));
  CHECK(a.dense == b.dense);
  CHECK(b.dense.size() == 1000);
}

TEST_CASE("row log: a few thousand image-sized rows stream through quickly") {
  TempDir dir;
  const Eigen::Index dim = 784;
  const int n = 2000;
  {
    RowLogWriter writer(dir.file("big.pb"), RowLogHeader{dim, n, "", ""});
    Eigen::VectorXd row(dim);
    for (int t = 0; t < n; ++t) {
      for (Eigen::Index j = 0; j < dim; ++j) row[j] = double((t * 31 + j) % 256) / 255.0;
      writer.write_dense(row, std::uint64_t(t));
    }
    writer.close();
  }
  RowLogReader reader(dir.file("big.pb"));
  RowRecord r;
  int count = 0;
  double checksum = 0;
  while (reader.next(r)) {
    REQUIRE(r.id == std::optional<std::uint64_t>(count));
    checksum += r.dense[count % dim];
    ++count;
  }
  REQUIRE(count == n);
  double expected = 0;
  for (int t = 0; t < n; ++t) expected += double((t * 31 + t % dim) % 256) / 255.0;
  REQUIRE(checksum == expected);
}

}  // namespace test_row_log
