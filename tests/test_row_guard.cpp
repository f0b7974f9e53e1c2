#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
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

namespace {

// The tools' reader before RowGuard scaled rows itself (GuardedReader::fill, --normalize
// unit): the arithmetic RowScaling::unit must reproduce bit for bit.
struct ToolsUnitNormalisation {
  RowGuard guard;
  std::uint64_t zero = 0;
  explicit ToolsUnitNormalisation(Eigen::Index d) : guard({d, 1.0, OverNormPolicy::clip}) {}
  void admit(Eigen::VectorXd& row) {
    if (row.allFinite()) {
      double norm = row.norm();
      if (!(norm > 0 && norm < std::numeric_limits<double>::infinity())) norm = row.stableNorm();
      if (norm > 0) row /= norm;
      else ++zero;
    }
    guard.admit(row);
  }
};

RowGuardOptions unit_options(Eigen::Index d) {
  RowGuardOptions options{d, 1.0, OverNormPolicy::clip};
  options.scaling = dpstream::stream::RowScaling::unit;
  return options;
}

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

// splitmix64 → uniform in [0, 1).
struct Uniform {
  std::uint64_t state;
  double operator()() {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
};

}  // namespace

TEST_CASE("RowGuard unit scaling gives the tools' a/||a|| bit for bit, clips its ulp excess and counts zero rows") {
  using dpstream::stream::row_norm;
  Uniform next{2024};
  for (const Eigen::Index d : {Eigen::Index{1}, Eigen::Index{3}, Eigen::Index{8}, Eigen::Index{33}, Eigen::Index{784}}) {
    ToolsUnitNormalisation tools(d);
    RowGuard guard(unit_options(d));
    // Scales 1e±160 take the stableNorm path (norm() under- or overflows); every 7th row is zero.
    for (const double scale : {1.0, 255.0, 1e-160, 1e160}) {
      for (int r = 0; r < 300; ++r) {
        Eigen::VectorXd row(d);
        for (Eigen::Index i = 0; i < d; ++i) row(i) = (next() - (r % 2 ? 0.5 : 0.0)) * scale;
        if (r % 7 == 0) row.setZero();
        if (r % 11 == 0 && d > 1) row(d / 2) = 0.0;
        Eigen::VectorXd old_way = row, new_way = row;
        tools.admit(old_way);
        guard.admit(new_way);
        INFO("d = " << d << ", scale " << scale << ", row " << r);
        REQUIRE(same_bits(old_way, new_way));
        REQUIRE(row_norm(new_way) <= 1.0);
      }
    }
    CHECK(guard.counts().zero == tools.zero);
    CHECK(guard.counts().zero == 4 * 43);  // rows 0, 7, …, 294 of each scale
    CHECK(guard.counts().clipped == tools.guard.counts().clipped);
    CHECK(guard.counts().accepted == 1200);
    CHECK(guard.counts().rejected == 0);
  }
  // The division leaves ‖a‖ above 1 for some rows: clipped to the bound and counted.
  RowGuard guard(unit_options(5));
  bool found = false;
  for (int r = 0; r < 100000 && !found; ++r) {
    Eigen::VectorXd row(5);
    for (Eigen::Index i = 0; i < 5; ++i) row(i) = next();
    Eigen::VectorXd divided = row / row.norm();
    if (row_norm(divided) <= 1.0) continue;
    found = true;
    const auto clipped = guard.counts().clipped;
    guard.admit(row);
    CHECK(guard.counts().clipped == clipped + 1);
    CHECK(row_norm(row) <= 1.0);
    CHECK(row_norm(row) >= 1.0 - 1e-15);
  }
  REQUIRE(found);
}

TEST_CASE("RowGuard unit scaling: zero rows stay zero, NaN and Inf are named as read, the bound must be 1 under clip") {
  RowGuard guard(unit_options(3));
  Eigen::VectorXd zero = Eigen::VectorXd::Zero(3);
  guard.admit(zero);
  CHECK(zero.isZero(0));
  CHECK(guard.counts().zero == 1);
  CHECK(guard.counts().accepted == 1);
  // Not scaled before the check, so the message names the column and the row is left as read.
  Eigen::VectorXd nan_row(3), inf_row(3);
  nan_row << 3.0, std::numeric_limits<double>::quiet_NaN(), 4.0;
  inf_row << 3.0, 0.0, -std::numeric_limits<double>::infinity();
  REQUIRE_THROWS_WITH(guard.admit(nan_row), Contains("row 1") && Contains("column 1 is nan"));
  REQUIRE_THROWS_WITH(guard.admit(inf_row), Contains("row 2") && Contains("column 2 is -inf"));
  CHECK(nan_row(0) == 3.0);
  CHECK(guard.counts().rejected == 2);
  CHECK(guard.counts().zero == 1);
  // ‖a‖ past the largest double: a direction, not the zero row a/inf would give.
  Eigen::VectorXd huge = Eigen::VectorXd::Constant(3, 1.5e308);
  guard.admit(huge);
  CHECK(huge(0) == Approx(1.0 / std::sqrt(3.0)).epsilon(1e-15));
  CHECK(dpstream::stream::row_norm(huge) <= 1.0);
  CHECK(guard.counts().zero == 1);
  // Options: unit needs L = 1 and clip.
  RowGuardOptions options = unit_options(3);
  options.norm_bound = 2.0;
  REQUIRE_THROWS_AS(RowGuard(options), InvalidParameter);
  REQUIRE_THROWS_WITH(RowGuard(options), Contains("unit scaling needs norm_bound = 1, got 2"));
  options.norm_bound = 1.0 + 0x1.0p-52;
  REQUIRE_THROWS_AS(RowGuard(options), InvalidParameter);
  options = unit_options(3);
  options.over_norm = OverNormPolicy::reject;
  REQUIRE_THROWS_WITH(RowGuard(options), Contains("unit scaling needs over_norm = clip"));
  // Without scaling nothing changes and nothing is counted as zero.
  RowGuard plain({3, 1.0, OverNormPolicy::clip});
  Eigen::VectorXd small(3);
  small << 0.1, 0.2, 0.2;
  const Eigen::VectorXd before = small;
  plain.admit(small);
  plain.admit(zero);
  CHECK(small == before);
  CHECK(plain.counts().zero == 0);
}

TEST_CASE("RowGuard unit scaling of sparse rows: the values as the dense row's, zero rows counted") {
  RowGuard sparse(unit_options(100));
  RowGuard dense(unit_options(3));
  Eigen::VectorXi idx(3);
  idx << 2, 50, 99;
  Eigen::VectorXd values(3);
  values << 0.3, 7.0, -1e-3;
  Eigen::VectorXd as_dense = values;
  sparse.admit_sparse(idx, values);
  dense.admit(as_dense);
  CHECK(same_bits(values, as_dense));
  CHECK(dpstream::stream::row_norm(values) <= 1.0);
  Eigen::VectorXd zeros = Eigen::VectorXd::Zero(3);
  sparse.admit_sparse(idx, zeros);
  Eigen::VectorXi none(0);
  Eigen::VectorXd empty(0);
  sparse.admit_sparse(none, empty);  // a row with no stored entry is a zero row
  CHECK(zeros.isZero(0));
  CHECK(sparse.counts().zero == 2);
  CHECK(sparse.counts().accepted == 3);
  values << 0.3, std::nan(""), 1.0;
  REQUIRE_THROWS_WITH(sparse.admit_sparse(idx, values), Contains("row 3") && Contains("column 50 is nan"));
}

TEST_CASE("parse_over_norm_policy and parse_row_scaling: inverses of to_string; other names refused") {
  using namespace dpstream::stream;
  for (const OverNormPolicy policy : {OverNormPolicy::clip, OverNormPolicy::reject})
    CHECK(parse_over_norm_policy(to_string(policy)) == policy);
  for (const RowScaling scaling : {RowScaling::none, RowScaling::unit}) CHECK(parse_row_scaling(to_string(scaling)) == scaling);
  CHECK(std::string(to_string(RowScaling::unit)) == "unit");
  REQUIRE_THROWS_AS(parse_over_norm_policy("none"), InvalidParameter);
  REQUIRE_THROWS_WITH(parse_over_norm_policy("none"), Contains("over-norm policy 'none': expected clip or reject"));
  REQUIRE_THROWS_AS(parse_row_scaling("clip"), InvalidParameter);
  REQUIRE_THROWS_WITH(parse_row_scaling("clip"), Contains("row scaling 'clip': expected none or unit"));
}

}  // namespace test_row_guard
