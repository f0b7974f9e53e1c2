#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/idx_rows.hpp"
#include "dpstream/io/row_log.hpp"
#include "dpstream/io/row_source.hpp"
#include "temp_dir.hpp"

namespace test_row_readers {

using dpstream::CorruptInput;
using dpstream::InvalidParameter;
using dpstream::io::CsvHeader;
using dpstream::io::CsvRowReader;
using dpstream::io::CsvRowWriter;
using dpstream::io::IdxRowReader;
using dpstream::io::RowFormat;
using dpstream::io::RowRecord;
using dpstream::io::RowSource;
using dpstream::io::RowSourceOptions;
using Catch::Matchers::Contains;

using dpstream::testing::TempDir;
using dpstream::testing::read_bytes;
using dpstream::testing::write_bytes;
using dpstream::testing::write_gzip;

namespace {

void put_be32(std::string& s, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
}

// An IDX file: magic 0x0000TTNN, the sizes, then the raw big-endian values.
std::string idx_file(std::uint8_t type, const std::vector<std::uint32_t>& sizes, const std::string& values) {
  std::string s;
  put_be32(s, (std::uint32_t(type) << 8) | std::uint32_t(sizes.size()));
  for (auto size : sizes) put_be32(s, size);
  return s + values;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<RowRecord> read_all(RowSource& source) {
  std::vector<RowRecord> rows;
  RowRecord record;
  while (source.next(record)) rows.push_back(record);
  return rows;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// CSV

TEST_CASE("csv: write → read is exact, with and without a header") {
  TempDir dir;
  std::vector<double> specials = {-0.0,
                                  0.1,
                                  1.0 / 3.0,
                                  std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::min(),
                                  std::numeric_limits<double>::max(),
                                  -std::numeric_limits<double>::max(),
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::nextafter(1.0, 2.0),
                                  123456789012345678.0,
                                  -2.2250738585072014e-308};
  const Eigen::Index dim = 4;
  std::vector<Eigen::VectorXd> rows;
  for (std::size_t i = 0; i + dim <= specials.size(); i += 2)
    rows.push_back(Eigen::Map<Eigen::VectorXd>(specials.data() + i, dim));
  std::srand(11);
  for (int t = 0; t < 200; ++t) rows.push_back(Eigen::VectorXd::Random(dim) * std::pow(10.0, t % 41 - 20));

  for (const bool with_header : {false, true}) {
    DYNAMIC_SECTION("header " << with_header) {
      const std::string path = dir.file(with_header ? "h.csv" : "n.csv");
      {
        std::vector<std::string> names;
        if (with_header) names = {"a", "b", "3", "d"};  // "3" is numeric: the writer quotes it
        CsvRowWriter writer(path, dim, names);
        for (const auto& r : rows) writer.write(r);
        writer.close();
        REQUIRE(writer.rows_written() == rows.size());
        REQUIRE(writer.bytes_written() == std::filesystem::file_size(path));
      }
      CsvRowReader reader(path);
      REQUIRE(reader.dimension() == dim);
      if (with_header) REQUIRE(reader.column_names() == std::vector<std::string>{"a", "b", "3", "d"});
      else REQUIRE(reader.column_names().empty());
      const auto read = read_all(reader);
      REQUIRE(read.size() == rows.size());
      for (std::size_t t = 0; t < rows.size(); ++t) {
        INFO("row " << t);
        REQUIRE(read[t].row_index == t);
        REQUIRE(read[t].line == t + (with_header ? 2 : 1));
        for (Eigen::Index j = 0; j < dim; ++j) REQUIRE(same_bits(read[t].dense[j], rows[t][j]));
      }
    }
  }
}

TEST_CASE("csv: comments, blank lines, CRLF, spaces, signs and special values") {
  TempDir dir;
  const std::string path = dir.file("mixed.csv");
  write_bytes(path,
              "# produced by hand\r\n"
              "\r\n"
              " x , y ,z\r\n"
              "1, +2.5 ,-3e2\r\n"
              "   # an indented comment\n"
              "nan,inf,-Infinity\n"
              "\n"
              "1e999,-1e999,1e-999\n"
              "0x10,1,2");  // no final newline; 0x10 is not a decimal number
  CsvRowReader reader(path);
  REQUIRE(reader.dimension() == 3);
  REQUIRE(reader.column_names() == std::vector<std::string>{"x", "y", "z"});
  RowRecord r;
  REQUIRE(reader.next(r));
  REQUIRE(r.dense == Eigen::Vector3d(1.0, 2.5, -300.0));
  REQUIRE(r.line == 4);
  REQUIRE(r.row_index == 0);
  REQUIRE(reader.next(r));  // NaN and Inf are RowGuard's to reject, not the reader's
  REQUIRE(std::isnan(r.dense[0]));
  REQUIRE(r.dense[1] == std::numeric_limits<double>::infinity());
  REQUIRE(r.dense[2] == -std::numeric_limits<double>::infinity());
  REQUIRE(r.line == 6);
  REQUIRE(reader.next(r));  // out of range magnitudes read as strtod does
  REQUIRE(r.dense[0] == std::numeric_limits<double>::infinity());
  REQUIRE(r.dense[1] == -std::numeric_limits<double>::infinity());
  REQUIRE(r.dense[2] == 0.0);
  REQUIRE_THROWS_WITH(reader.next(r), Contains("line 9") && Contains("row 3") && Contains("field 1 (column 0)") &&
                                          Contains("\"0x10\" is not a number"));
  REQUIRE_FALSE(reader.next(r));
}

TEST_CASE("csv: header detection and the explicit header options") {
  TempDir dir;
  write_bytes(dir.file("numbers.csv"), "1,2\n3,4\n");
  CsvRowReader detected(dir.file("numbers.csv"));
  REQUIRE(detected.column_names().empty());
  REQUIRE(read_all(detected).size() == 2);

  CsvRowReader forced(dir.file("numbers.csv"), CsvHeader::present);
  REQUIRE(forced.column_names() == std::vector<std::string>{"1", "2"});
  REQUIRE(read_all(forced).size() == 1);

  write_bytes(dir.file("named.csv"), "a,b\n1,2\n");
  CsvRowReader absent(dir.file("named.csv"), CsvHeader::absent);
  RowRecord r;
  REQUIRE_THROWS_WITH(absent.next(r), Contains("line 1") && Contains("row 0") && Contains("\"a\" is not a number"));

  write_bytes(dir.file("only_header.csv"), "# c\na,b,c\n");
  CsvRowReader only_header(dir.file("only_header.csv"));
  REQUIRE(only_header.dimension() == 3);
  REQUIRE_FALSE(only_header.next(r));
}

TEST_CASE("csv: bad input names the line, row, column and text") {
  TempDir dir;
  const std::string missing = dir.file("missing.csv");
  REQUIRE_THROWS_WITH(CsvRowReader(missing), Contains(missing) && Contains("cannot open"));
  write_bytes(dir.file("empty.csv"), "");
  REQUIRE_THROWS_WITH(CsvRowReader(dir.file("empty.csv")), Contains("empty.csv") && Contains("empty file"));
  write_bytes(dir.file("comments.csv"), "# one\n\n# two\n");
  REQUIRE_THROWS_WITH(CsvRowReader(dir.file("comments.csv")), Contains("no header or data line"));

  const std::string text =
      "a,b,c\n"      // line 1: header
      "1,2,3\n"      // line 2, row 0
      "4,5\n"        // line 3, row 1: too few
      "# skip me\n"  // line 4
      "6,seven,8\n"  // line 5, row 2: not a number
      "9,10,\n"      // line 6, row 3: empty field
      "11,12,13\n";  // line 7, row 4
  write_bytes(dir.file("bad.csv"), text);
  {
    CsvRowReader reader(dir.file("bad.csv"));
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r),
                        Contains("line 3") && Contains("row 1") && Contains("2 fields, expected 3"));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("line 5") && Contains("row 2") && Contains("field 2 (column 1)") &&
                                            Contains("\"seven\""));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("line 6") && Contains("row 3") && Contains("field 3 (column 2)") &&
                                            Contains("\"\" is not a number"));
    REQUIRE(reader.next(r));
    REQUIRE(r.line == 7);
    REQUIRE(r.row_index == 4);
  }
  {
    CsvRowReader reader(dir.file("bad.csv"), CsvHeader::detect, /*skip_malformed=*/true);
    const auto rows = read_all(reader);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[1].dense == Eigen::Vector3d(11, 12, 13));
    REQUIRE(rows[1].row_index == 4);
    REQUIRE(rows[1].line == 7);
    REQUIRE(reader.skipped() == 3);
    REQUIRE_THAT(reader.first_skip_reason(), Contains("line 3"));
  }
}

// A NUL byte in a field must not cut the message short (what() is a C string): the problem's name,
// after the field's text, is still there, and the byte is shown as \x00.
TEST_CASE("csv: a NUL byte in a field is shown, and the message keeps its end") {
  using namespace std::string_literals;
  TempDir dir;
  write_bytes(dir.file("nul.csv"), "a,b\n1,2\n3,x\0y\n"s);
  CsvRowReader reader(dir.file("nul.csv"));
  RowRecord r;
  REQUIRE(reader.next(r));
  REQUIRE_THROWS_WITH(reader.next(r), Contains("\"x\\x00y\"") && Contains("not a number"));
}

TEST_CASE("csv: header auto takes a line of names or of numbers and refuses the ambiguous ones") {
  TempDir dir;
  RowRecord r;
  auto rows_yes_no = [&](const std::string& name) {  // what yes and no make of an ambiguous file
    CsvRowReader yes(dir.file(name), CsvHeader::present);
    CsvRowReader no(dir.file(name), CsvHeader::absent, /*skip_malformed=*/true);
    const auto with_header = read_all(yes), without = read_all(no);
    return std::make_pair(with_header.size(), without.size() + no.skipped());
  };

  SECTION("names only: a header, counted") {
    write_bytes(dir.file("names.csv"), "x1, \"y 2\" ,z\n1,2,3\n");
    CsvRowReader reader(dir.file("names.csv"));
    REQUIRE(reader.column_names() == std::vector<std::string>{"x1", "y 2", "z"});
    REQUIRE(reader.non_row_lines().header == 1);
    REQUIRE(read_all(reader).size() == 1);
  }
  SECTION("numbers only: a row") {
    write_bytes(dir.file("numbers.csv"), "1,2,3\n4,5,6\n");
    CsvRowReader reader(dir.file("numbers.csv"));
    REQUIRE(reader.column_names().empty());
    REQUIRE(reader.non_row_lines().header == 0);
    REQUIRE(read_all(reader).size() == 2);
  }
  SECTION("a typo in the first row: refused, not dropped as a header") {
    write_bytes(dir.file("typo.csv"), "# made by hand\n1.5,2x,3,4\n5,6,7,8\n");
    const std::string path = dir.file("typo.csv");
    REQUIRE_THROWS_WITH(CsvRowReader(path), Contains("csv " + path) && Contains("line 2") &&
                                                Contains("cannot tell whether this first line (comments and blank lines aside) is a header or a row") &&
                                                Contains("field 2 (\"2x\") is not a number") &&
                                                Contains("fields 1, 3, 4 (\"1.5\", \"3\", \"4\") are") &&
                                                Contains("--header yes") && Contains("--header no"));
    // Also with skip_malformed: the first line decides the dimension, it is never skipped.
    REQUIRE_THROWS_AS(CsvRowReader(path, CsvHeader::detect, true), CorruptInput);
    REQUIRE(rows_yes_no("typo.csv") == std::make_pair(std::size_t{1}, std::size_t{2}));
    CsvRowReader no(path, CsvHeader::absent);
    REQUIRE_THROWS_WITH(no.next(r), Contains("line 2 (row 0), field 2 (column 1)") && Contains("\"2x\" is not a number"));
  }
  SECTION("a header with a numeric name mixed in: refused, names listed") {
    write_bytes(dir.file("mixed.csv"), "id,1,2,3,4,5,x\n");
    REQUIRE_THROWS_WITH(CsvRowReader(dir.file("mixed.csv")),
                        Contains("line 1") && Contains("fields 1, 7 (\"id\", \"x\") are not numbers") &&
                            Contains("fields 2, 3, 4, 5 and 1 more (\"1\", \"2\", \"3\", \"4\", ...) are"));
    CsvRowReader yes(dir.file("mixed.csv"), CsvHeader::present);
    REQUIRE(yes.column_names() == std::vector<std::string>{"id", "1", "2", "3", "4", "5", "x"});
  }
  SECTION("pandas' numeric header 0,1,...,d-1: refused under auto, read with --header yes") {
    write_bytes(dir.file("pandas.csv"), "0,1,2\n0.5,1.5,2.5\n3,4,5\n");
    REQUIRE_THROWS_WITH(CsvRowReader(dir.file("pandas.csv")),
                        Contains("line 1") && Contains("its fields are 0,1,2,") && Contains("pandas") && Contains("--header yes"));
    write_bytes(dir.file("pandas6.csv"), "0, 1,2,3,4,5\n");
    REQUIRE_THROWS_WITH(CsvRowReader(dir.file("pandas6.csv")), Contains("its fields are 0,1,...,5,"));
    CsvRowReader yes(dir.file("pandas.csv"), CsvHeader::present);
    REQUIRE(yes.column_names() == std::vector<std::string>{"0", "1", "2"});
    const auto rows = read_all(yes);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[0].dense == Eigen::Vector3d(0.5, 1.5, 2.5));
    REQUIRE(rows[0].line == 2);
    REQUIRE(yes.non_row_lines().header == 1);
    CsvRowReader no(dir.file("pandas.csv"), CsvHeader::absent);
    REQUIRE(read_all(no).size() == 3);
    // Only that exact sequence: 1,2,3 or 0,1,3 or a single 0 are rows.
    for (const std::string text : {"1,2,3\n", "0,1,3\n", "0\n", "0.0,1,2\n"}) {
      write_bytes(dir.file("row.csv"), text);
      CsvRowReader reader(dir.file("row.csv"));
      REQUIRE(read_all(reader).size() == 1);
    }
  }
  SECTION("quoted numbers: read as numbers; a first line of quoted numbers only is ambiguous") {
    write_bytes(dir.file("quoted.csv"), "\"1.5\",\"-2\"\n\"3\",4e1\n");
    REQUIRE_THROWS_WITH(CsvRowReader(dir.file("quoted.csv")),
                        Contains("every field is a quoted number") && Contains("\"\"1.5\"\", \"\"-2\"\"") &&
                            Contains("--header no"));
    CsvRowReader no(dir.file("quoted.csv"), CsvHeader::absent);
    auto rows = read_all(no);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[0].dense == Eigen::Vector2d(1.5, -2));
    REQUIRE(rows[1].dense == Eigen::Vector2d(3, 40));
    // Every field quoted, names included (Python's csv.QUOTE_ALL): the names make it a header.
    write_bytes(dir.file("quote_all.csv"), "\"a\",\"b\"\n\"1.5\",\"2.5\"\n");
    CsvRowReader all(dir.file("quote_all.csv"));
    REQUIRE(all.column_names() == std::vector<std::string>{"a", "b"});
    rows = read_all(all);
    REQUIRE(rows.size() == 1);
    REQUIRE(rows[0].dense == Eigen::Vector2d(1.5, 2.5));
    // Unquoted and quoted numbers: a row. Nothing else may be inside the quotes.
    write_bytes(dir.file("some.csv"), "1,\"2\"\n\"3 \",4\n\"x\",5\n\"\",6\n");
    CsvRowReader some(dir.file("some.csv"));
    REQUIRE(some.next(r));
    REQUIRE(r.dense == Eigen::Vector2d(1, 2));
    REQUIRE_THROWS_WITH(some.next(r), Contains("line 2 (row 1), field 1 (column 0)") && Contains("\"\"3 \"\" is not a number"));
    REQUIRE_THROWS_WITH(some.next(r), Contains("line 3 (row 2), field 1 (column 0)") && Contains("\"\"x\"\" is not a number"));
    REQUIRE_THROWS_WITH(some.next(r), Contains("line 4 (row 3), field 1 (column 0)") && Contains("is not a number"));
    // The writer quotes numeric names: a header of numeric names only is read back with present.
    {
      CsvRowWriter writer(dir.file("numeric_names.csv"), 2, {"1", "2"});
      writer.write(Eigen::Vector2d(5, 6));
      writer.close();
    }
    REQUIRE_THROWS_WITH(CsvRowReader(dir.file("numeric_names.csv")), Contains("every field is a quoted number"));
    CsvRowReader present(dir.file("numeric_names.csv"), CsvHeader::present);
    REQUIRE(present.column_names() == std::vector<std::string>{"1", "2"});
    REQUIRE(read_all(present).size() == 1);
  }
  SECTION("empty fields say nothing: pandas' unnamed index column is a header") {
    write_bytes(dir.file("index.csv"), ",a,b\n0,1.5,2.5\n");
    CsvRowReader reader(dir.file("index.csv"));
    REQUIRE(reader.column_names() == std::vector<std::string>{"", "a", "b"});
    REQUIRE(read_all(reader).size() == 1);
  }
}

TEST_CASE("csv: a UTF-8 byte-order mark is dropped, a UTF-16 one refused") {
  TempDir dir;
  const std::string bom = "\xEF\xBB\xBF";
  write_bytes(dir.file("bom_header.csv"), bom + "a,b\n1,2\n");
  {
    CsvRowReader reader(dir.file("bom_header.csv"));
    REQUIRE(reader.column_names() == std::vector<std::string>{"a", "b"});  // not "\xEF\xBB\xBF" "a"
    REQUIRE(read_all(reader).size() == 1);
  }
  // Before: the mark made the first field of the first row a name, and the row was lost as a header.
  write_bytes(dir.file("bom_rows.csv"), bom + "1,2\n3,4\n");
  for (const CsvHeader mode : {CsvHeader::detect, CsvHeader::absent}) {
    CsvRowReader reader(dir.file("bom_rows.csv"), mode);
    const auto rows = read_all(reader);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[0].dense == Eigen::Vector2d(1, 2));
    REQUIRE(rows[0].line == 1);
    REQUIRE(reader.skipped() == 0);
    REQUIRE(reader.non_row_lines().total() == 0);
  }
  write_bytes(dir.file("bom_comment.csv"), bom + "# made by Excel\n1,2\n");
  {
    CsvRowReader reader(dir.file("bom_comment.csv"));
    REQUIRE(read_all(reader).size() == 1);
    REQUIRE(reader.non_row_lines().comment == 1);
  }
  write_bytes(dir.file("bom_only.csv"), bom);
  REQUIRE_THROWS_WITH(CsvRowReader(dir.file("bom_only.csv")), Contains("no header or data line"));
  // Only at the start of the file.
  write_bytes(dir.file("bom_late.csv"), "1,2\n" + bom + "3,4\n");
  {
    CsvRowReader reader(dir.file("bom_late.csv"));
    RowRecord r;
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("line 2 (row 1), field 1 (column 0)"));
  }
  write_bytes(dir.file("utf16.csv"), std::string("\xFF\xFE" "a\0,\0b\0\n\0", 10));
  REQUIRE_THROWS_WITH(CsvRowReader(dir.file("utf16.csv"), CsvHeader::present),
                      Contains("utf16.csv") && Contains("UTF-16 byte-order mark"));
}

TEST_CASE("csv: a trailing comma is refused, naming the line and the column") {
  TempDir dir;
  RowRecord r;
  // Before: the empty last field made the first row a header, and it was lost.
  write_bytes(dir.file("rows.csv"), "1,2,3,\n4,5,6,\n");
  {
    CsvRowReader reader(dir.file("rows.csv"));
    REQUIRE(reader.column_names().empty());
    REQUIRE(reader.dimension() == 4);
    REQUIRE_THROWS_WITH(reader.next(r), Contains("line 1 (row 0), field 4 (column 3)") &&
                                            Contains("\"\" is not a number (an empty field: the line ends with a comma)"));
  }
  write_bytes(dir.file("one.csv"), "1,2,3\n4,5,6,\n7,8,9\n");
  {
    CsvRowReader reader(dir.file("one.csv"));
    REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("line 2 (row 1): 4 fields, expected 3") &&
                                            Contains("the line ends with a comma"));
    REQUIRE(reader.next(r));
  }
  write_bytes(dir.file("header.csv"), "a,b,\n1,2\n");
  {
    CsvRowReader reader(dir.file("header.csv"));
    REQUIRE(reader.column_names() == std::vector<std::string>{"a", "b", ""});
    REQUIRE_THROWS_WITH(reader.next(r), Contains("line 2 (row 0): 2 fields, expected 3") &&
                                            Contains("the header's count, whose line ends with a comma"));
  }
  write_bytes(dir.file("middle.csv"), "1,,3\n");
  {
    CsvRowReader reader(dir.file("middle.csv"));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("line 1 (row 0), field 2 (column 1)") && Contains("(an empty field)"));
  }
}

TEST_CASE("csv: every line that is not a row is counted") {
  TempDir dir;
  const std::string path = dir.file("counted.csv");
  write_bytes(path,
              "# a comment\n"  // 1 comment
              "\n"             // 2 blank
              "x,y\n"          // 3 header
              "1,2\n"          // 4 row 0
              " \t\r\n"        // 5 blank
              "  # another\n"  // 6 comment
              "3,4\n"          // 7 row 1
              "5,five\n"       // 8 row 2, malformed
              "\n");           // 9 blank
  CsvRowReader reader(path, CsvHeader::detect, /*skip_malformed=*/true);
  REQUIRE(reader.non_row_lines().header == 1);  // what was read to learn the dimension
  REQUIRE(reader.non_row_lines().comment == 1);
  REQUIRE(reader.non_row_lines().blank == 1);
  REQUIRE(read_all(reader).size() == 2);
  const dpstream::io::NonRowLines& lines = reader.non_row_lines();
  CHECK(lines.header == 1);
  CHECK(lines.comment == 2);
  CHECK(lines.blank == 3);
  CHECK(lines.total() == 6);
  CHECK(reader.skipped() == 1);
  CHECK(reader.rows_returned() + reader.skipped() + lines.total() == 9);

  // Binary formats have none; nor does a CSV without header, comments or blank lines.
  write_bytes(dir.file("plain.csv"), "1,2\n3,4");
  write_bytes(dir.file("r-idx3-ubyte"), idx_file(0x08, {1, 1, 2}, std::string("\x01\x02", 2)));
  for (const std::string name : {"plain.csv", "r-idx3-ubyte"}) {
    auto source = dpstream::io::open_row_source(dir.file(name));
    read_all(*source);
    CHECK(source->non_row_lines().total() == 0);
  }
}

TEST_CASE("csv writer refuses a wrong dimension and bad names") {
  TempDir dir;
  REQUIRE_THROWS_AS(CsvRowWriter(dir.file("a.csv"), 0), InvalidParameter);
  REQUIRE_THROWS_WITH(CsvRowWriter(dir.file("b.csv"), 2, {"x"}), Contains("1 column names for dimension 2"));
  REQUIRE_THROWS_WITH(CsvRowWriter(dir.file("c.csv"), 2, {"x", "y,z"}), Contains("column name 2"));
  CsvRowWriter writer(dir.file("d.csv"), 2);
  REQUIRE_THROWS_WITH(writer.write(Eigen::Vector3d::Zero()), Contains("row 0") && Contains("dimension 3, expected 2"));
}

// ---------------------------------------------------------------------------------------------------
// IDX

namespace {

// 5 images of 3 × 4 bytes, value (7t + j) mod 256 with a few 0 and 255.
std::string ubyte_images(std::uint32_t items = 5) {
  std::string values;
  for (std::uint32_t t = 0; t < items; ++t)
    for (int j = 0; j < 12; ++j) values += static_cast<char>((t == 0 && j == 0) ? 255 : (7 * t + 40 * j) % 256);
  return idx_file(0x08, {items, 3, 4}, values);
}

double ubyte_value(std::uint32_t t, int j) { return (t == 0 && j == 0) ? 255 : (7 * t + 40 * j) % 256; }

}  // namespace

TEST_CASE("idx: ubyte images, plain and gzipped, with and without scale") {
  TempDir dir;
  write_bytes(dir.file("images-idx3-ubyte"), ubyte_images());
  write_gzip(dir.file("images-idx3-ubyte.gz"), ubyte_images());
  for (const std::string name : {"images-idx3-ubyte", "images-idx3-ubyte.gz"}) {
    for (const double scale : {1.0, 1.0 / 255}) {
      DYNAMIC_SECTION(name << " scale " << scale) {
        IdxRowReader reader(dir.file(name), scale);
        REQUIRE(reader.gzipped() == (name.back() == 'z'));
        REQUIRE(reader.dimension() == 12);
        REQUIRE(reader.declared_rows() == std::optional<std::uint64_t>(5));
        REQUIRE(reader.type_code() == 0x08);
        REQUIRE(reader.item_shape() == std::vector<std::uint32_t>{3, 4});
        const auto rows = read_all(reader);
        REQUIRE(rows.size() == 5);
        for (std::uint32_t t = 0; t < 5; ++t) {
          REQUIRE(rows[t].row_index == t);
          for (int j = 0; j < 12; ++j) REQUIRE(rows[t].dense[j] == ubyte_value(t, j) * scale);
        }
        if (scale != 1.0) {
          REQUIRE(rows[0].dense.maxCoeff() == 1.0);
          REQUIRE(rows[0].dense.minCoeff() >= 0.0);
        }
      }
    }
  }
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("images-idx3-ubyte"), 0.0), Contains("scale"));
}

TEST_CASE("idx: every value type, big-endian") {
  TempDir dir;
  auto check = [&](std::uint8_t type, const std::string& values, std::vector<double> expected) {
    const std::string path = dir.file("t" + std::to_string(type) + ".idx");
    write_bytes(path, idx_file(type, {2, 2}, values));
    IdxRowReader reader(path);
    REQUIRE(reader.dimension() == 2);
    const auto rows = read_all(reader);
    REQUIRE(rows.size() == 2);
    for (int i = 0; i < 4; ++i) REQUIRE(same_bits(rows[i / 2].dense[i % 2], expected[i]));
  };
  check(0x08, std::string("\x00\x01\x80\xff", 4), {0, 1, 128, 255});
  check(0x09, std::string("\x00\x01\x80\xff", 4), {0, 1, -128, -1});
  check(0x0B, std::string("\x00\x01\x01\x00\x80\x00\xff\xff", 8), {1, 256, -32768, -1});
  check(0x0C, std::string("\x00\x00\x00\x01\x00\x01\x00\x00\x80\x00\x00\x00\xff\xff\xff\xfe", 16),
        {1, 65536, -2147483648.0, -2});
  // float32: 1.0f = 3F800000, -2.5f = C0200000, +inf = 7F800000, 0.1f = 3DCCCCCD
  check(0x0D, std::string("\x3f\x80\x00\x00\xc0\x20\x00\x00\x7f\x80\x00\x00\x3d\xcc\xcc\xcd", 16),
        {1.0, -2.5, std::numeric_limits<double>::infinity(), double(0.1f)});
  // float64: 1/3 = 3FD5555555555555, -0.0, denorm_min = 1, a NaN with a payload kept bit for bit
  std::string f64("\x3f\xd5\x55\x55\x55\x55\x55\x55\x80\x00\x00\x00\x00\x00\x00\x00"
                  "\x00\x00\x00\x00\x00\x00\x00\x01\x7f\xf8\x00\x00\x00\x00\x12\x34",
                  32);
  std::uint64_t nan_bits = 0x7ff8000000001234ULL;
  double nan_payload;
  std::memcpy(&nan_payload, &nan_bits, 8);
  check(0x0E, f64, {1.0 / 3.0, -0.0, std::numeric_limits<double>::denorm_min(), nan_payload});
}

TEST_CASE("idx: bad files name the problem, the row and the byte counts") {
  TempDir dir;
  const std::string missing = dir.file("missing-idx3-ubyte");
  REQUIRE_THROWS_WITH(IdxRowReader(missing), Contains(missing) && Contains("cannot open"));
  write_bytes(dir.file("empty.idx"), "");
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("empty.idx")), Contains("empty file"));
  write_bytes(dir.file("labels-idx1-ubyte"), idx_file(0x08, {3}, std::string("\x01\x02\x03", 3)));
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("labels-idx1-ubyte")), Contains("0x00000801") && Contains("label file"));
  write_bytes(dir.file("png.idx"), "\x89PNG\r\n\x1a\n....");
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("png.idx")), Contains("bad magic 0x89504E47"));
  write_bytes(dir.file("type.idx"), idx_file(0x0A, {1, 1}, "x"));
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("type.idx")), Contains("bad magic 0x00000A02"));
  write_bytes(dir.file("header.idx"), ubyte_images().substr(0, 10));
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("header.idx")), Contains("the header") && Contains("short file"));

  const std::string full = ubyte_images();  // 16 + 5 × 12 = 76 bytes
  write_bytes(dir.file("short.idx"), full.substr(0, 70));
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("short.idx")),
                      Contains("short file: 70 bytes, expected 76") && Contains("5 items × 12 values"));
  write_bytes(dir.file("long.idx"), full + "xy");
  REQUIRE_THROWS_WITH(IdxRowReader(dir.file("long.idx")), Contains("trailing bytes: 78 bytes, expected 76"));

  // Gzipped, the size is only known as the data comes: rows before the cut are delivered.
  write_gzip(dir.file("short.idx.gz"), full.substr(0, 70));
  {
    IdxRowReader reader(dir.file("short.idx.gz"));
    RowRecord r;
    for (int t = 0; t < 4; ++t) REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("row 4") && Contains("uncompressed byte offset 64") &&
                                            Contains("ends after 70 bytes, expected 76"));
  }
  write_gzip(dir.file("long.idx.gz"), full + "xy");
  {
    IdxRowReader reader(dir.file("long.idx.gz"));
    RowRecord r;
    for (int t = 0; t < 5; ++t) REQUIRE(reader.next(r));
    REQUIRE_THROWS_WITH(reader.next(r), Contains("trailing data past the 5 items"));
  }
}

// Peak resident set of this process so far, in bytes (Linux reports kilobytes).
std::uint64_t peak_rss_bytes() {
  struct rusage usage {};
  REQUIRE(::getrusage(RUSAGE_SELF, &usage) == 0);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

TEST_CASE("idx: a gzipped header declaring huge items costs only the bytes actually read") {
  // fuzz_idx_rows findings (fuzz/regressions/fuzz_idx_rows/): the reader sized its buffer to the
  // declared item (up to 2 GiB) before reading it; a gzipped file has no size to check it against.
  // Here an item of 2^27 float32 values (512 MiB) is declared and 40 bytes follow. Resizing first
  // touched all 512 MiB, so a 64 MiB bound on the growth of the peak RSS separates the two.
  TempDir dir;
  write_gzip(dir.file("huge-idx3-float.gz"), idx_file(0x0D, {2, 1U << 14, 1U << 13}, std::string(40, '\x01')));
  const std::uint64_t before = peak_rss_bytes();
  IdxRowReader reader(dir.file("huge-idx3-float.gz"));
  CHECK(reader.dimension() == (Eigen::Index{1} << 27));
  RowRecord r;
  REQUIRE_THROWS_WITH(reader.next(r), Contains("row 0") && Contains("ends after 56 bytes"));
  CHECK(peak_rss_bytes() - before < (std::uint64_t{64} << 20));
}

TEST_CASE("idx: a damaged gzip stream is an error, never short data") {
  TempDir dir;
  // Enough incompressible-ish rows that the cut lands inside the deflate data.
  std::string values;
  std::uint32_t x = 12345;
  for (int i = 0; i < 200 * 64; ++i) {
    x = x * 1664525u + 1013904223u;
    values += static_cast<char>(x >> 24);
  }
  const std::string plain = idx_file(0x08, {200, 8, 8}, values);
  write_gzip(dir.file("ok.gz"), plain);
  const std::string gz = read_bytes(dir.file("ok.gz"));

  SECTION("truncated") {
    write_bytes(dir.file("cut-idx3-ubyte.gz"), gz.substr(0, gz.size() / 2));
    IdxRowReader reader(dir.file("cut-idx3-ubyte.gz"));
    RowRecord r;
    std::uint64_t rows = 0;
    try {
      while (reader.next(r)) ++rows;
      FAIL("a truncated gzip file read to the end");
    } catch (const CorruptInput& e) {
      REQUIRE_THAT(e.what(), Contains("row " + std::to_string(rows)) && Contains("gzip stream truncated"));
    }
    REQUIRE(rows < 200);
  }
  SECTION("CRC mismatch") {
    std::string bad = gz;
    bad[bad.size() - 8] = static_cast<char>(bad[bad.size() - 8] ^ 0x01);  // the trailer's CRC-32
    write_bytes(dir.file("crc-idx3-ubyte.gz"), bad);
    // zlib inflates ahead of the reader, so the damage may surface at any row, or at the header.
    auto read_through = [&] {
      IdxRowReader reader(dir.file("crc-idx3-ubyte.gz"));
      RowRecord r;
      while (reader.next(r)) {}
    };
    REQUIRE_THROWS_WITH(read_through(), Contains("crc-idx3-ubyte.gz") && Contains("CRC") &&
                                            Contains("incorrect data check"));
  }
  SECTION("corrupt deflate data") {
    std::string bad = gz;
    for (std::size_t i = gz.size() / 3; i < gz.size() / 3 + 16; ++i) bad[i] = static_cast<char>(~bad[i]);
    write_bytes(dir.file("flip-idx3-ubyte.gz"), bad);
    auto read_through = [&] {
      IdxRowReader reader(dir.file("flip-idx3-ubyte.gz"));
      RowRecord r;
      while (reader.next(r)) {}
    };
    REQUIRE_THROWS_WITH(read_through(), Contains("flip-idx3-ubyte.gz") && Contains("gzip data corrupt"));
  }
}

TEST_CASE("idx: a gzip read stopped early is unverified; verify_rest checks the CRC") {
  using dpstream::io::Integrity;
  TempDir dir;
  // 2000 items of 28 × 28 pseudo-random bytes (1.5 MB): far more than zlib inflates ahead of a few
  // rows (its output buffer is 256 KiB), and incompressible, so deflate stores them: a flipped byte
  // changes one value and nothing else, and only the CRC-32 at the end tells.
  constexpr std::uint32_t kItems = 2000;
  std::string values;
  std::uint32_t x = 2024;
  for (std::uint32_t i = 0; i < kItems * 784; ++i) {
    x = x * 1664525u + 1013904223u;
    values += static_cast<char>(x >> 24);
  }
  const std::string plain = idx_file(0x08, {kItems, 28, 28}, values);
  write_bytes(dir.file("plain-idx3-ubyte"), plain);
  write_gzip(dir.file("ok-idx3-ubyte.gz"), plain);
  const std::string gz = read_bytes(dir.file("ok-idx3-ubyte.gz"));
  std::string bad = gz;
  const std::size_t flip = gz.size() - 5000;  // in the last rows' data, before the 8-byte trailer
  bad[flip] = static_cast<char>(bad[flip] ^ 0x10);
  write_bytes(dir.file("bad-idx3-ubyte.gz"), bad);
  RowRecord r;

  CHECK(std::string(dpstream::io::to_string(Integrity::no_checksum)) == "none");
  CHECK(std::string(dpstream::io::to_string(Integrity::unverified)) == "unverified");
  CHECK(std::string(dpstream::io::to_string(Integrity::verified)) == "verified");

  SECTION("a plain file has no checksum; verify_rest does nothing") {
    IdxRowReader reader(dir.file("plain-idx3-ubyte"));
    REQUIRE(reader.next(r));
    CHECK(reader.integrity() == Integrity::no_checksum);
    reader.verify_rest();
    CHECK(reader.integrity() == Integrity::no_checksum);
    REQUIRE(reader.next(r));  // reading goes on
    CHECK(r.row_index == 1);
  }
  SECTION("an intact stream: unverified until its end, then verified") {
    IdxRowReader reader(dir.file("ok-idx3-ubyte.gz"));
    CHECK(reader.integrity() == Integrity::unverified);
    for (int t = 0; t < 10; ++t) REQUIRE(reader.next(r));
    CHECK(reader.integrity() == Integrity::unverified);
    reader.verify_rest();
    CHECK(reader.integrity() == Integrity::verified);
    CHECK_FALSE(reader.next(r));  // the rest was read, not delivered
    CHECK(reader.rows_returned() == 10);
    reader.verify_rest();  // again: nothing to do
    CHECK(reader.integrity() == Integrity::verified);

    IdxRowReader whole(dir.file("ok-idx3-ubyte.gz"));
    REQUIRE(read_all(whole).size() == kItems);
    CHECK(whole.integrity() == Integrity::verified);
  }
  SECTION("a flipped byte: the first rows read as before and unverified; verify_rest throws") {
    // What was reported: the rows before the damage are delivered, and nothing tells.
    IdxRowReader reader(dir.file("bad-idx3-ubyte.gz"));
    for (std::uint32_t t = 0; t < 10; ++t) {
      REQUIRE(reader.next(r));
      for (int j = 0; j < 784; ++j) REQUIRE(r.dense[j] == static_cast<unsigned char>(values[t * 784 + j]));
    }
    CHECK(reader.integrity() == Integrity::unverified);
    const std::string path = dir.file("bad-idx3-ubyte.gz");
    REQUIRE_THROWS_WITH(reader.verify_rest(), Contains("IDX " + path) && Contains("gzip data corrupt") &&
                                                  Contains("after 10 rows read"));
    CHECK(reader.integrity() == Integrity::unverified);
  }
  SECTION("a flipped byte: reading to the end throws, naming the file") {
    IdxRowReader reader(dir.file("bad-idx3-ubyte.gz"));
    std::uint64_t rows = 0;
    try {
      while (reader.next(r)) ++rows;
      FAIL("a damaged gzip file read to the end");
    } catch (const CorruptInput& e) {
      REQUIRE_THAT(e.what(), Contains("bad-idx3-ubyte.gz") && Contains("gzip data corrupt"));
    }
    CHECK(rows > 10);
    CHECK(reader.integrity() == Integrity::unverified);
  }
  SECTION("through open_row_source, as the tools read") {
    auto source = dpstream::io::open_row_source(dir.file("bad-idx3-ubyte.gz"));
    REQUIRE(source->next(r));
    CHECK(source->integrity() == Integrity::unverified);
    CHECK_THROWS_AS(source->verify_rest(), CorruptInput);
    write_bytes(dir.file("r.csv"), "1,2\n");
    auto csv = dpstream::io::open_row_source(dir.file("r.csv"));
    CHECK(csv->integrity() == Integrity::no_checksum);
  }
}

// ---------------------------------------------------------------------------------------------------
// The factory

TEST_CASE("row formats from names, and open_row_source") {
  using dpstream::io::format_from_path;
  REQUIRE(format_from_path("a/b.pb") == RowFormat::pb);
  REQUIRE(format_from_path("x.rowlog") == RowFormat::pb);
  REQUIRE(format_from_path("x.CSV") == RowFormat::csv);
  REQUIRE(format_from_path("/d/train-images-idx3-ubyte") == RowFormat::idx);
  REQUIRE(format_from_path("/d/train-images-idx3-ubyte.gz") == RowFormat::idx);
  REQUIRE(format_from_path("t10k.idx3") == RowFormat::idx);
  REQUIRE(format_from_path("t10k.idx.gz") == RowFormat::idx);
  REQUIRE_THROWS_WITH(format_from_path("rows.csv.gz"), Contains("decompress the CSV"));
  REQUIRE_THROWS_WITH(format_from_path("dir.pb/rows.txt"), Contains("rows.txt") && Contains("cannot tell"));
  REQUIRE(dpstream::io::parse_row_format("idx") == RowFormat::idx);
  REQUIRE_THROWS_WITH(dpstream::io::parse_row_format("parquet"), Contains("\"parquet\""));

  TempDir dir;
  write_bytes(dir.file("r.csv"), "1,2,3\n");
  write_bytes(dir.file("r-idx3-ubyte"), ubyte_images());
  {
    dpstream::io::RowLogWriter writer(dir.file("r.pb"), {3, 1, "", ""});
    writer.write_dense(Eigen::Vector3d(1, 2, 3));
    writer.close();
  }
  for (const std::string name : {"r.csv", "r.pb", "r-idx3-ubyte"}) {
    auto source = dpstream::io::open_row_source(dir.file(name));
    RowRecord r;
    REQUIRE(source->next(r));
    REQUIRE(source->path() == dir.file(name));
  }
  REQUIRE(dpstream::io::open_row_source(dir.file("r.csv"))->format() == RowFormat::csv);
  REQUIRE(dpstream::io::open_row_source(dir.file("r.pb"))->format() == RowFormat::pb);
  RowSourceOptions scaled;
  scaled.scale = 0.5;
  auto idx = dpstream::io::open_row_source(dir.file("r-idx3-ubyte"), RowFormat::automatic, scaled);
  RowRecord r;
  REQUIRE(idx->next(r));
  REQUIRE(r.dense[0] == 127.5);
  REQUIRE_THROWS_WITH(dpstream::io::open_row_source(dir.file("r.csv"), RowFormat::automatic, scaled),
                      Contains("IDX reader only"));
  // An explicit format wins over the name.
  write_bytes(dir.file("rows.txt"), "4,5\n");
  REQUIRE(dpstream::io::open_row_source(dir.file("rows.txt"), RowFormat::csv)->dimension() == 2);
  REQUIRE_THROWS_WITH(dpstream::io::open_row_source(dir.file("r.csv"), RowFormat::pb),
                      Contains("not a dpstream row log"));
}

TEST_CASE("Fashion-MNIST train images, when the dataset is installed") {
  const std::string images = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
  const std::string labels = "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(images)) {
    WARN("skipped: " << images << " is not installed (apt-get install dataset-fashion-mnist)");
    return;
  }
  RowSourceOptions options;
  options.scale = 1.0 / 255;
  auto source = dpstream::io::open_row_source(images, RowFormat::automatic, options);
  REQUIRE(source->format() == RowFormat::idx);
  REQUIRE(source->dimension() == 784);
  REQUIRE(source->declared_rows() == std::optional<std::uint64_t>(60000));
  RowRecord r;
  double total = 0;
  for (int t = 0; t < 100; ++t) {
    REQUIRE(source->next(r));
    REQUIRE(r.row_index == std::uint64_t(t));
    REQUIRE(r.dense.minCoeff() >= 0.0);
    REQUIRE(r.dense.maxCoeff() <= 1.0);
    for (Eigen::Index j = 0; j < 784; ++j) {
      const double byte = r.dense[j] * 255;
      REQUIRE(std::abs(byte - std::round(byte)) < 1e-9);  // a byte, scaled
    }
    total += r.dense.sum();
  }
  REQUIRE(total > 100 * 10.0);  // images are not blank: mean intensity ≈ 0.29 × 784 ≈ 225 per image
  if (std::filesystem::exists(labels))
    REQUIRE_THROWS_WITH(dpstream::io::open_row_source(labels), Contains("label file"));
}

TEST_CASE("parse_csv_header: the inverse of to_string, also auto/yes/no; other names refused") {
  for (const CsvHeader header : {CsvHeader::detect, CsvHeader::present, CsvHeader::absent})
    CHECK(dpstream::io::parse_csv_header(dpstream::io::to_string(header)) == header);
  CHECK(std::string(dpstream::io::to_string(CsvHeader::detect)) == "detect");
  CHECK(dpstream::io::parse_csv_header("auto") == CsvHeader::detect);
  CHECK(dpstream::io::parse_csv_header("yes") == CsvHeader::present);
  CHECK(dpstream::io::parse_csv_header("no") == CsvHeader::absent);
  CHECK_THROWS_AS(dpstream::io::parse_csv_header("true"), InvalidParameter);
  CHECK_THROWS_WITH(dpstream::io::parse_csv_header("true"),
                    Contains("CSV header 'true': expected detect, present or absent"));
}

}  // namespace test_row_readers
