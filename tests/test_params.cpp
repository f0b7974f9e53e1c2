// Privacy parameters: domains, messages, to_string.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"

namespace test_params {

using namespace dpstream::privacy;
using dpstream::InvalidParameter;
using Catch::Contains;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("EpsDelta keeps valid values", "[params]") {
  const EpsDelta p(0.5, 1e-6);
  CHECK(p.epsilon() == 0.5);
  CHECK(p.delta() == 1e-6);
  CHECK(p.to_string() == "(epsilon=0.5, delta=1e-06)");

  // δ = 0 is pure ε-DP; δ just below 1 and very large finite ε are in the domain.
  CHECK(EpsDelta(1.0, 0.0).delta() == 0.0);
  CHECK(EpsDelta(1.0, std::nextafter(1.0, 0.0)).delta() < 1.0);
  CHECK(EpsDelta(1e300, 0.0).epsilon() == 1e300);
  CHECK(EpsDelta(std::numeric_limits<double>::denorm_min(), 0.0).epsilon() > 0.0);
}

TEST_CASE("EpsDelta rejects epsilon outside (0, inf) naming epsilon and the value", "[params]") {
  REQUIRE_THROWS_WITH(EpsDelta(-1.0, 1e-6), "epsilon must be finite and > 0, got -1");
  REQUIRE_THROWS_WITH(EpsDelta(0.0, 1e-6), "epsilon must be finite and > 0, got 0");
  REQUIRE_THROWS_WITH(EpsDelta(-0.0, 1e-6), Contains("epsilon") && Contains("got -0"));
  REQUIRE_THROWS_WITH(EpsDelta(kNaN, 1e-6), Contains("epsilon") && Contains("nan"));
  REQUIRE_THROWS_WITH(EpsDelta(kInf, 1e-6), Contains("epsilon") && Contains("inf"));
  REQUIRE_THROWS_WITH(EpsDelta(-kInf, 1e-6), Contains("epsilon") && Contains("-inf"));
  REQUIRE_THROWS_AS(EpsDelta(-1.0, 1e-6), InvalidParameter);
}

TEST_CASE("EpsDelta rejects delta outside [0, 1) naming delta and the value", "[params]") {
  REQUIRE_THROWS_WITH(EpsDelta(1.0, -1e-9), "delta must be in [0, 1), got -1e-09");
  REQUIRE_THROWS_WITH(EpsDelta(1.0, 1.0), "delta must be in [0, 1), got 1");
  REQUIRE_THROWS_WITH(EpsDelta(1.0, 1.5), Contains("delta") && Contains("1.5"));
  REQUIRE_THROWS_WITH(EpsDelta(1.0, kNaN), Contains("delta") && Contains("nan"));
  REQUIRE_THROWS_WITH(EpsDelta(1.0, kInf), Contains("delta") && Contains("inf"));
  REQUIRE_THROWS_AS(EpsDelta(1.0, 1.0), InvalidParameter);
  // When both are bad, epsilon is reported (checked first).
  REQUIRE_THROWS_WITH(EpsDelta(-1.0, 2.0), Contains("epsilon"));
}

TEST_CASE("Zcdp requires finite rho > 0", "[params]") {
  CHECK(Zcdp(0.25).rho() == 0.25);
  CHECK(Zcdp(0.25).to_string() == "rho=0.25");
  REQUIRE_THROWS_WITH(Zcdp(0.0), "rho must be finite and > 0, got 0");
  REQUIRE_THROWS_WITH(Zcdp(-2.0), Contains("rho") && Contains("-2"));
  REQUIRE_THROWS_WITH(Zcdp(kNaN), Contains("rho") && Contains("nan"));
  REQUIRE_THROWS_WITH(Zcdp(kInf), Contains("rho") && Contains("inf"));
  REQUIRE_THROWS_AS(Zcdp(0.0), InvalidParameter);
}

TEST_CASE("enum to_string", "[params]") {
  CHECK(std::string(to_string(Calibration::paper)) == "paper");
  CHECK(std::string(to_string(Calibration::tight)) == "tight");
  CHECK(std::string(to_string(Neighbours::add_remove_row)) == "add_remove_row");
  CHECK(std::string(to_string(Neighbours::replace_row)) == "replace_row");
  CHECK(std::string(to_string(Neighbours::zero_out_row)) == "zero_out_row");
}

TEST_CASE("parse_calibration and parse_neighbours: inverses of to_string; other names refused") {
  for (const Calibration c : {Calibration::paper, Calibration::tight}) CHECK(parse_calibration(to_string(c)) == c);
  for (const Neighbours n : {Neighbours::add_remove_row, Neighbours::replace_row, Neighbours::zero_out_row})
    CHECK(parse_neighbours(to_string(n)) == n);
  CHECK_THROWS_AS(parse_calibration("Tight"), InvalidParameter);
  CHECK_THROWS_WITH(parse_calibration("x"), Contains("calibration 'x': expected paper or tight"));
  CHECK_THROWS_AS(parse_neighbours("replace"), InvalidParameter);
  CHECK_THROWS_WITH(parse_neighbours("replace"), Contains("neighbours 'replace': expected add_remove_row, replace_row or zero_out_row"));
}

TEST_CASE("describe: each relation in words, as the tools and Python print it") {
  CHECK(std::string(describe(Neighbours::add_remove_row)) == "one row added or removed");
  CHECK(std::string(describe(Neighbours::replace_row)) == "one row replaced by another in the same slot");
  CHECK(std::string(describe(Neighbours::zero_out_row)) ==
        "one row zeroed, its slot kept (a removal that shifts later rows is not covered)");
}

TEST_CASE("require_stream_relation: zero-out and replace pass; add/remove refused, naming what holds") {
  CHECK_NOTHROW(require_stream_relation("s", Neighbours::zero_out_row));
  CHECK_NOTHROW(require_stream_relation("s", Neighbours::replace_row));
  CHECK_THROWS_AS(require_stream_relation("s", Neighbours::add_remove_row), InvalidParameter);
  CHECK_THROWS_WITH(require_stream_relation("s", Neighbours::add_remove_row),
                    Contains("s: relation add_remove_row is not a stream's guarantee") &&
                        Contains("expected zero_out_row (a row zeroed, its slot kept) or replace_row"));
}

TEST_CASE("stream checkpoints written before zero_out_row read their add_remove_row as zero_out_row") {
  // The streams only ever implemented the zero-out relation under the old name.
  CHECK(stream_relation_from_checkpoint("add_remove_row") == "zero_out_row");
  CHECK(stream_relation_from_checkpoint("replace_row") == "replace_row");
  CHECK(stream_relation_from_checkpoint("zero_out_row") == "zero_out_row");
}

}  // namespace test_params
