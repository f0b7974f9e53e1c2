#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "dpstream/errors.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace test_row_guard {

using dpstream::InvalidParameter;
using dpstream::InvalidRow;
using dpstream::stream::OverNormPolicy;
using dpstream::stream::RowGuard;
using dpstream::stream::RowGuardOptions;
using Catch::Matchers::Contains;

TEST_CASE("RowGuard validates its options") {
  REQUIRE_THROWS_WITH(RowGuard(RowGuardOptions{0, 1.0, OverNormPolicy::clip}), Contains("dimension"));
  REQUIRE_THROWS_WITH(RowGuard(RowGuardOptions{3, 0.0, OverNormPolicy::clip}), Contains("norm_bound"));
  REQUIRE_THROWS_WITH(RowGuard(RowGuardOptions{3, std::nan(""), OverNormPolicy::clip}),
                      Contains("norm_bound"));
}

TEST_CASE("RowGuard passes rows within the bound unchanged") {
  RowGuard guard({3, 1.0, OverNormPolicy::reject});
  Eigen::VectorXd row(3);
  row << 0.6, 0.0, -0.8;  // norm exactly 1: on the bound is inside it
  const Eigen::VectorXd before = row;
  guard.admit(row);
  REQUIRE(row == before);
  REQUIRE(guard.counts().accepted == 1);
  REQUIRE(guard.counts().clipped == 0);
}

TEST_CASE("RowGuard clips over-norm rows to exactly the bound and counts them") {
  RowGuard guard({4, 2.0, OverNormPolicy::clip});
  Eigen::VectorXd row(4);
  row << 3.0, 4.0, 0.0, 12.0;  // norm 13
  guard.admit(row);
  REQUIRE(row.norm() <= 2.0);
  REQUIRE(row.norm() == Approx(2.0).epsilon(1e-14));
  REQUIRE(row[1] / row[0] == Approx(4.0 / 3.0));  // direction kept
  REQUIRE(guard.counts().clipped == 1);
  REQUIRE(guard.counts().accepted == 1);

  // Huge finite entries: a naive norm overflows to inf and the row would become 0.
  Eigen::VectorXd huge = Eigen::VectorXd::Constant(4, 1e300);
  guard.admit(huge);
  REQUIRE(huge.norm() <= 2.0);
  REQUIRE(huge.norm() == Approx(2.0).epsilon(1e-14));
  REQUIRE(guard.counts().clipped == 2);

  // Many random rows: never a single ulp over the bound, by the norm every check uses (row_norm;
  // a differently rounded norm such as Eigen's stableNorm may differ from it by an ulp).
  for (int i = 0; i < 2000; ++i) {
    Eigen::VectorXd r = Eigen::VectorXd::Random(4) * (1.0 + i);
    guard.admit(r);
    REQUIRE(dpstream::stream::row_norm(r) <= 2.0);
  }
  REQUIRE(guard.counts().seen == 2002);
  REQUIRE(guard.counts().accepted == 2002);
}

TEST_CASE("RowGuard rejects over-norm rows under reject, naming the row index") {
  RowGuard guard({2, 1.0, OverNormPolicy::reject});
  Eigen::VectorXd ok(2), bad(2);
  ok << 0.1, 0.2;
  bad << 1.0, 1.0;
  guard.admit(ok);
  guard.admit(ok);
  try {
    guard.admit(bad);
    FAIL("an over-norm row was accepted");
  } catch (const InvalidRow& e) {
    REQUIRE(e.row_index() == 2);
    REQUIRE_THAT(e.what(), Contains("row 2") && Contains("exceeds the bound"));
  }
  REQUIRE(guard.counts().rejected == 1);
  REQUIRE(guard.counts().accepted == 2);
  REQUIRE(guard.counts().seen == 3);
}

TEST_CASE("RowGuard rejects NaN, Inf and wrong dimension with the column or sizes") {
  RowGuard guard({3, 1.0, OverNormPolicy::clip});
  Eigen::VectorXd nan_row(3), inf_row(3), short_row(2);
  nan_row << 0.1, std::numeric_limits<double>::quiet_NaN(), 0.0;
  inf_row << 0.0, 0.0, -std::numeric_limits<double>::infinity();
  short_row << 0.1, 0.2;
  REQUIRE_THROWS_WITH(guard.admit(nan_row), Contains("row 0") && Contains("column 1"));
  REQUIRE_THROWS_WITH(guard.admit(inf_row), Contains("row 1") && Contains("column 2"));
  REQUIRE_THROWS_WITH(guard.admit(short_row), Contains("row 2") && Contains("dimension 2, expected 3"));
  REQUIRE(guard.counts().rejected == 3);
  REQUIRE(guard.counts().accepted == 0);
}

TEST_CASE("RowGuard checks sparse rows") {
  RowGuard guard({10, 1.0, OverNormPolicy::clip});
  Eigen::VectorXi idx(3);
  Eigen::VectorXd val(3);
  idx << 1, 4, 9;
  val << 3.0, 0.0, 4.0;
  guard.admit_sparse(idx, val);
  REQUIRE(val.norm() == Approx(1.0).epsilon(1e-14));
  REQUIRE(guard.counts().clipped == 1);

  Eigen::VectorXi out_of_range(2), unsorted(2);
  Eigen::VectorXd two(2), nan_val(3);
  out_of_range << 1, 10;
  unsorted << 5, 5;
  two << 0.1, 0.1;
  nan_val << 0.1, std::nan(""), 0.1;
  REQUIRE_THROWS_WITH(guard.admit_sparse(out_of_range, two), Contains("row 1") && Contains("index 10"));
  REQUIRE_THROWS_WITH(guard.admit_sparse(unsorted, two), Contains("row 2") && Contains("increasing"));
  REQUIRE_THROWS_WITH(guard.admit_sparse(idx, two), Contains("row 3") && Contains("3 indices but 2 values"));
  // The NaN is reported at its column in the full row (4), not its position in the sparse list (1).
  REQUIRE_THROWS_WITH(guard.admit_sparse(idx, nan_val), Contains("row 4") && Contains("column 4"));
  REQUIRE(guard.counts().rejected == 4);
}

TEST_CASE("RowGuard with a nonnegative domain refuses a negative entry, naming its column") {
  RowGuardOptions options{4, 1.0, OverNormPolicy::clip};
  options.nonnegative = true;
  RowGuard guard(options);
  Eigen::VectorXd row(4), signed_zero(4), negative(4);
  row << 0.5, 0.0, 0.5, 0.5;
  signed_zero << 0.5, -0.0, 0.5, 0.5;  // −0 is not negative
  negative << 0.5, 0.1, -0.25, 0.5;
  guard.admit(row);
  guard.admit(signed_zero);
  REQUIRE_THROWS_WITH(guard.admit(negative), Contains("row 2") && Contains("column 2 is -0.25") &&
                                                 Contains("no negative entry"));
  Eigen::VectorXi idx(2);
  Eigen::VectorXd val(2);
  idx << 1, 3;
  val << 0.2, -0.1;
  REQUIRE_THROWS_WITH(guard.admit_sparse(idx, val), Contains("row 3") && Contains("column 3"));
  // A non-finite entry is named before an earlier negative one: finiteness is checked first.
  Eigen::VectorXd negative_then_nan(4);
  negative_then_nan << -0.5, 0.1, std::nan(""), 0.5;
  REQUIRE_THROWS_WITH(guard.admit(negative_then_nan), Contains("row 4") && Contains("column 2 is nan"));
  REQUIRE(guard.counts().accepted == 2);
  REQUIRE(guard.counts().rejected == 3);
  // The default domain is signed: the same row passes.
  RowGuard signed_guard({4, 1.0, OverNormPolicy::clip});
  signed_guard.admit(negative);
  REQUIRE(signed_guard.counts().accepted == 1);
}

TEST_CASE("row_norm is the same number wherever the row sits in memory, so ContinualSum accepts what RowGuard passed") {
  // Regression: with -march=native, Eigen's stableNorm of the same values differed by an ulp between
  // an aligned and an 8-byte-offset copy (6104 of 20000 unit rows), and a row RowGuard passed at
  // ‖a‖ = 1 was refused downstream at 1 + 1 ulp. row_norm must agree bit for bit.
  using dpstream::stream::row_norm;
  const Eigen::Index d = 784;
  std::vector<double> storage(d + 1);
  std::uint64_t state = 12345;
  auto next = [&state] {  // splitmix64 → uniform in [0, 1): any fixed data will do
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  RowGuard guard({d, 1.0, OverNormPolicy::clip});
  int mismatches = 0;
  for (int r = 0; r < 2000; ++r) {
    Eigen::VectorXd aligned(d);
    for (Eigen::Index i = 0; i < d; ++i) aligned(i) = next();
    aligned /= aligned.norm();  // ‖a‖ = 1 up to rounding: the case that used to disagree
    guard.admit(aligned);
    Eigen::Map<Eigen::VectorXd> offset(storage.data() + 1, d);  // 8 bytes off a 16/64-byte boundary
    offset = aligned;
    if (row_norm(aligned) != row_norm(offset)) ++mismatches;
    REQUIRE(row_norm(offset) <= 1.0);
  }
  REQUIRE(mismatches == 0);
  // Edge cases: zero, huge entries (no overflow), NaN and Inf.
  REQUIRE(row_norm(Eigen::VectorXd::Zero(3)) == 0.0);
  Eigen::VectorXd huge(2);
  huge << 3e300, 4e300;
  REQUIRE(row_norm(huge) == Approx(5e300));
  huge(1) = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(std::isnan(row_norm(huge)));
  huge(1) = std::numeric_limits<double>::infinity();
  REQUIRE(std::isinf(row_norm(huge)));
}

}  // namespace test_row_guard
