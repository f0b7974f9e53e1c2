// GuardedRows' errors keep their class (base/errors.hpp, rethrow_with_message): a row the guard
// refuses is an InvalidRow with the file's row index, the bound's refusals stay InvalidRow or
// ResourceLimit — each named by file, row and line — so that a tool's exit status and Python's
// exception class can tell a memory refusal from bad data.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "check_throws.hpp"
#include "temp_dir.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/io/guarded_rows.hpp"
#include "dpstream/io/row_source.hpp"

namespace test_guarded_rows {

using namespace dpstream;
using Catch::Matchers::Contains;
using testing::TempDir;
using testing::write_bytes;

// rethrow_with_message on `thrown`, caught as the type it came out as.
template <class Thrown>
void rethrown(const Thrown& thrown) {
  try {
    throw thrown;
  } catch (const std::exception&) {
    rethrow_with_message("where: it");
  }
}

TEST_CASE("rethrow_with_message keeps each dpstream error's class, and InvalidRow its row") {
  CHECK_THROWS_NAMING(rethrown(InvalidParameter("p")), InvalidParameter, Catch::Equals("where: it"));
  CHECK_THROWS_NAMING(rethrown(CorruptInput("c")), CorruptInput, Catch::Equals("where: it"));
  CHECK_THROWS_NAMING(rethrown(BudgetExhausted("b")), BudgetExhausted, Catch::Equals("where: it"));
  CHECK_THROWS_NAMING(rethrown(ResourceLimit("r")), ResourceLimit, Catch::Equals("where: it"));
  try {
    rethrown(InvalidRow(7, "r"));
    FAIL("no exception");
  } catch (const InvalidRow& e) {
    CHECK(e.row_index() == 7);
    CHECK(std::string(e.what()) == "where: it");
  }
  // Anything else: the fallback class, a std::runtime_error unless given.
  CHECK_THROWS_NAMING(rethrown(std::out_of_range("o")), std::runtime_error, Catch::Equals("where: it"));
  CHECK_THROWS_AS([] {
    try {
      throw std::out_of_range("o");
    } catch (const std::exception&) {
      rethrow_with_message<InvalidParameter>("x");
    }
  }(), InvalidParameter);
}

// A caller that names a row its own way (a part's place in the stream, a file's row and line) takes
// the error's typed reason: a reason holding ": " or starting with "row ", and an error whose message
// the caller wrote whole (no "row N: " to strip), come through intact, which cutting what() at its
// first ": " would not do.
TEST_CASE("a row's reason is typed: renumbered and rethrown intact") {
  const std::string tricky = "row 9 of the part: a: b";
  const InvalidRow plain(4, tricky);
  CHECK(plain.row_index() == 4);
  CHECK(plain.reason() == tricky);
  CHECK(std::string(plain.at_row(12).what()) == "row 12: " + tricky);
  // Whole message (a file's row and line): renumbering keeps the reason, not the file's text.
  const InvalidRow whole = InvalidRow::with_message(3, "rows.csv: row 3 (line 4): " + tricky, tricky);
  CHECK(std::string(whole.what()) == "rows.csv: row 3 (line 4): " + tricky);
  const InvalidRow moved = whole.at_row(7);
  CHECK(moved.row_index() == 7);
  CHECK(moved.reason() == tricky);
  CHECK(std::string(moved.what()) == "row 7: " + tricky);
  try {
    rethrown(InvalidRow(7, tricky));
    FAIL("no exception");
  } catch (const InvalidRow& e) {
    CHECK(e.row_index() == 7);
    CHECK(e.reason() == tricky);
    CHECK(reason_without_row(e) == tricky);
  }
  // A limit met at a row keeps its row through rethrowing; one met at none is its whole message.
  try {
    rethrown(ResourceLimit(5, tricky));
    FAIL("no exception");
  } catch (const ResourceLimit& e) {
    CHECK(std::string(e.what()) == "where: it");
    CHECK(e.row_index() == std::optional<std::uint64_t>(5));
    CHECK(reason_without_row(e) == tricky);
  }
  const ResourceLimit unrowed("row budget: a state of 10 B");
  CHECK_FALSE(unrowed.row_index().has_value());
  CHECK(reason_without_row(unrowed) == "row budget: a state of 10 B");
  CHECK(std::string(ResourceLimit(5, "r").what()) == "row 5: r");
}

io::GuardedRowsOptions options(bool bounded) {
  io::GuardedRowsOptions o;
  o.guard.dimension = 2;
  o.guard.over_norm = stream::OverNormPolicy::reject;
  if (bounded) {
    stream::ContributionBoundOptions b;
    b.participation = {1, 0};
    b.max_state_bytes = 2 * stream::ContributionBound::kBytesPerUnit;  // room for two users
    o.bound = b;
    o.block_rows = 4;
  }
  return o;
}

TEST_CASE("GuardedRows: a refused row is an InvalidRow, the units' state budget a ResourceLimit") {
  TempDir dir;
  const std::string path = dir.file("rows.csv");
  // Line 4 (row 2) is over the bound 1; users a, b, c: the third user exceeds the budget of two.
  write_bytes(path, "x,y,user\n0.1,0.2,a\n0.3,0.1,b\n3,4,a\n0.2,0.2,c\n");
  {
    io::RowSourceOptions plain;
    plain.unit_column = "user";
    auto source = io::open_row_source(path, io::RowFormat::csv, plain);
    io::GuardedRows rows(*source, options(false));
    REQUIRE(rows.next());
    REQUIRE(rows.next());
    try {
      rows.next();
      FAIL("the row over the bound was admitted");
    } catch (const InvalidRow& e) {
      CHECK(e.row_index() == 2);
      CHECK_THAT(e.what(), Contains(path + ": row 2 (line 4)") && Contains("exceeds the bound") &&
                               Contains("--skip-malformed"));
      CHECK_THAT(e.reason(), Catch::StartsWith("l2 norm") && Contains("exceeds the bound") &&
                                 !Contains(path) && !Contains("--skip-malformed"));
    }
  }
  {
    io::RowSourceOptions keyed;
    keyed.unit_column = "user";
    auto source = io::open_row_source(path, io::RowFormat::csv, keyed);
    io::GuardedRows rows(*source, options(true));
    REQUIRE(rows.next());  // a
    REQUIRE(rows.next());  // b; row 2 is user a's second row: dropped by the bound (k = 1), counted
    try {
      rows.next();
      FAIL("a third user was admitted past the budget of two");
    } catch (const ResourceLimit& e) {
      CHECK_THAT(e.what(), Contains(path + ": row 3 (line 5): its unit is distinct unit number 3"));
      CHECK(e.row_index() == std::optional<std::uint64_t>(3));
    }
  }
}

}  // namespace test_guarded_rows
