// Unit keys as the readers deliver them: a CSV's unit column and a row log's `unit` field.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "check_throws.hpp"
#include "temp_dir.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/row_log.hpp"
#include "dpstream/io/row_source.hpp"

namespace test_unit_keys {

using dpstream::CorruptInput;
using dpstream::InvalidParameter;
using dpstream::io::RowFormat;
using dpstream::io::RowRecord;
using dpstream::io::RowSourceOptions;
using dpstream::testing::TempDir;
using dpstream::testing::write_bytes;
using Catch::Matchers::Contains;

RowSourceOptions keyed(const std::string& column, bool skip = false) {
  RowSourceOptions o;
  o.unit_column = column;
  o.skip_malformed = skip;
  return o;
}

TEST_CASE("csv: the unit column is taken out of the values, by name or by index", "[units]") {
  TempDir dir;
  const std::string path = dir.file("events.csv");
  write_bytes(path, "x,user,y\n1,ann,2\n3,\"bob smith\",4\n5,ann,6\n");
  for (const std::string column : {"user", "1"}) {
    auto source = dpstream::io::open_row_source(path, RowFormat::csv, keyed(column));
    REQUIRE(source->dimension() == 2);
    CHECK(static_cast<dpstream::io::CsvRowReader&>(*source).column_names() == std::vector<std::string>{"x", "y"});
    RowRecord r;
    std::vector<std::string> units;
    std::vector<double> values;
    while (source->next(r)) {
      REQUIRE(r.has_unit);
      units.push_back(r.unit);
      values.insert(values.end(), {r.dense[0], r.dense[1]});
    }
    CHECK(units == std::vector<std::string>{"ann", "bob smith", "ann"});
    CHECK(values == std::vector<double>{1, 2, 3, 4, 5, 6});
  }
  // Without a unit column the same file is three columns, one of them not numbers: no key is made up.
  auto plain = dpstream::io::open_row_source(path, RowFormat::csv);
  CHECK(plain->dimension() == 3);
}

TEST_CASE("csv: a missing, empty or impossible unit column is refused naming it", "[units]") {
  TempDir dir;
  const std::string path = dir.file("events.csv");
  write_bytes(path, "user,x,y\nann,1,2\n,3,4\nbob,5,zz\ncy,7,8\n");
  CHECK_THROWS_NAMING(dpstream::io::open_row_source(path, RowFormat::csv, keyed("uid")), CorruptInput,
                      Contains("unit column \"uid\"") && Contains("\"user\", \"x\", \"y\""));
  CHECK_THROWS_NAMING(dpstream::io::open_row_source(path, RowFormat::csv, keyed("3")), CorruptInput,
                      Contains("past the last column"));
  {
    auto source = dpstream::io::open_row_source(path, RowFormat::csv, keyed("user"));
    RowRecord r;
    REQUIRE(source->next(r));
    CHECK_THROWS_WITH(source->next(r), Contains("line 3 (row 1)") && Contains("empty unit key"));
  }
  {
    // Skipped and counted with skip_malformed; a bad value after the key column names its field (3).
    auto source = dpstream::io::open_row_source(path, RowFormat::csv, keyed("user", true));
    RowRecord r;
    std::vector<std::string> units;
    while (source->next(r)) units.push_back(r.unit);
    CHECK(units == std::vector<std::string>{"ann", "cy"});
    CHECK(source->skipped() == 2);
    CHECK_THAT(source->first_skip_reason(), Contains("empty unit key"));
  }
  {
    auto source = dpstream::io::open_row_source(path, RowFormat::csv, keyed("0"));
    RowRecord r;
    REQUIRE(source->next(r));
    REQUIRE_THROWS_AS(source->next(r), CorruptInput);  // the empty key of row 1
    CHECK_THROWS_WITH(source->next(r), Contains("field 3 (column 1)") && Contains("\"zz\""));
  }
  const std::string single = dir.file("one.csv");
  write_bytes(single, "user\nann\n");
  CHECK_THROWS_NAMING(dpstream::io::open_row_source(single, RowFormat::csv, keyed("user")), CorruptInput,
                      Contains("only column"));
  CHECK_THROWS_NAMING(dpstream::io::open_row_source(dir.file("rows.pb"), RowFormat::pb, keyed("user")),
                      InvalidParameter, Contains("CSV reader only"));
}

TEST_CASE("row log: the unit field round-trips, and rows without one read as such", "[units]") {
  TempDir dir;
  const std::string path = dir.file("rows.pb");
  dpstream::io::RowLogHeader header;
  header.dimension = 2;
  {
    dpstream::io::RowLogWriter writer(path, header);
    RowRecord r;
    r.dense = Eigen::Vector2d(1, 2);
    r.unit = std::string("k\0\xff", 3);  // bytes: any key, not only UTF-8 text
    r.has_unit = true;
    writer.write(r);
    writer.write_dense(Eigen::Vector2d(3, 4));  // no unit: as logs written before the field
    r.unit = "42";
    writer.write(r);
    writer.close();
  }
  auto source = dpstream::io::open_row_source(path);
  RowRecord r;
  REQUIRE(source->next(r));
  CHECK(r.has_unit);
  CHECK(r.unit == std::string("k\0\xff", 3));
  REQUIRE(source->next(r));
  CHECK_FALSE(r.has_unit);
  REQUIRE(source->next(r));
  CHECK(r.has_unit);
  CHECK(r.unit == "42");
  CHECK_FALSE(source->next(r));
}

}  // namespace test_unit_keys
