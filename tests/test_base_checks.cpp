// The base layer's shared checks and number formatting: the exact texts every layer's errors quote.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "dpstream/base/format.hpp"
#include "dpstream/base/text.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/base/errors.hpp"

namespace test_base_checks {

using namespace dpstream::base;
using dpstream::InvalidParameter;
using Catch::Contains;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("require_positive names the parameter and the value", "[base]") {
  REQUIRE_NOTHROW(require_positive("sigma", 1e-300));
  REQUIRE_THROWS_WITH(require_positive("sigma", 0.0), "sigma must be finite and > 0, got 0");
  REQUIRE_THROWS_WITH(require_positive("l2_sensitivity", -3.5), "l2_sensitivity must be finite and > 0, got -3.5");
  REQUIRE_THROWS_WITH(require_positive("sigma", kNaN), Contains("sigma") && Contains("nan"));
  REQUIRE_THROWS_WITH(require_positive("sigma", kInf), Contains("sigma") && Contains("inf"));
  REQUIRE_THROWS_AS(require_positive("x", -1.0), InvalidParameter);
}

TEST_CASE("require_nonnegative: 0 allowed, negatives, inf and NaN refused", "[base]") {
  REQUIRE_NOTHROW(require_nonnegative("bias_shrinkage", 0.0));
  REQUIRE_THROWS_WITH(require_nonnegative("bias_shrinkage", -0.5), "bias_shrinkage must be finite and >= 0, got -0.5");
  REQUIRE_THROWS_WITH(require_nonnegative("margin", kInf), "margin must be finite and >= 0, got inf");
  REQUIRE_THROWS_WITH(require_nonnegative("margin", kNaN), "margin must be finite and >= 0, got nan");
}

TEST_CASE("require_open_unit: (0, 1) open at both ends, NaN refused", "[base]") {
  REQUIRE_NOTHROW(require_open_unit("delta", 1e-300));
  REQUIRE_NOTHROW(require_open_unit("delta", std::nextafter(1.0, 0.0)));
  REQUIRE_THROWS_WITH(require_open_unit("InputPerturbation: delta", 0.0),
                      "InputPerturbation: delta must be in (0, 1), got 0");
  REQUIRE_THROWS_WITH(require_open_unit("delta", 1.0), "delta must be in (0, 1), got 1");
  REQUIRE_THROWS_WITH(require_open_unit("delta", kNaN), "delta must be in (0, 1), got nan");
  REQUIRE_THROWS_WITH(require_open_unit("delta", -kInf), "delta must be in (0, 1), got -inf");
  REQUIRE_THROWS_AS(require_open_unit("delta", 2.0), InvalidParameter);
}

TEST_CASE("require_at_least and require_in_range quote the bounds and the value", "[base]") {
  REQUIRE_NOTHROW(require_at_least("iterations", 1, 1));
  REQUIRE_THROWS_WITH(require_at_least("NoisyPowerMethod: runs", 0, 1), "NoisyPowerMethod: runs must be >= 1, got 0");
  REQUIRE_THROWS_WITH(require_at_least("rows", -5, 2), "rows must be >= 2, got -5");
  REQUIRE_NOTHROW(require_in_range("step", 1, 1, 1));
  REQUIRE_THROWS_WITH(require_in_range("tree: step", 9, 1, 8), "tree: step must be in [1, 8], got 9");
  REQUIRE_THROWS_WITH(require_in_range("step", 0, 1, 8, " (the horizon)"), "step must be in [1, 8] (the horizon), got 0");
}

TEST_CASE("require_rank: k in [1, limit], the owner named first", "[base]") {
  REQUIRE_NOTHROW(require_rank("GaussianPca", 1, 1));
  REQUIRE_NOTHROW(require_rank("GaussianPca", 3, 3));
  REQUIRE_THROWS_WITH(require_rank("GaussianPca", 4, 3), "GaussianPca: k must be in [1, 3], got 4");
  REQUIRE_THROWS_WITH(require_rank("GaussianPca", 0, 3), "GaussianPca: k must be in [1, 3], got 0");
  REQUIRE_THROWS_WITH(require_rank("top_k_eigen", -1, 10, " (the dimension)"),
                      "top_k_eigen: k must be in [1, 10] (the dimension), got -1");
  // A dimension of 0 leaves no valid k.
  REQUIRE_THROWS_AS(require_rank("RegretMeter", 1, 0), InvalidParameter);
}

TEST_CASE("format_value prints the shortest round-trip text", "[base]") {
  CHECK(format_value(0.1) == "0.1");
  CHECK(format_value(-1.0) == "-1");
  CHECK(format_value(1e-6) == "1e-06");
  CHECK(format_value(48.4481) == "48.4481");
  CHECK(format_value(kInf) == "inf");
  CHECK(format_value(-kInf) == "-inf");
  CHECK(format_value(kNaN) == "nan");
  // Round trip: the text reads back as the same double.
  for (double v : {1.0 / 3.0, 5.298802527, 1e-300, 2.2250738585072014e-308}) {
    CHECK(std::stod(format_value(v)) == v);
  }
}

// Input text in a message: an exception's what() is a C string, so a NUL byte left in it would cut the
// message short at that byte, losing what follows (the problem's name).
TEST_CASE("quote_input escapes control bytes and cuts between UTF-8 sequences", "[base]") {
  using namespace std::string_literals;
  const std::string with_nul = "ab\0cd"s;
  REQUIRE(with_nul.size() == 5);
  CHECK(quote_input(with_nul) == "\"ab\\x00cd\"");
  CHECK(quote_input(with_nul).find('\0') == std::string::npos);
  CHECK(quote_input("\x1b[2J") == "\"\\x1b[2J\"");  // a terminal's escape sequence, made visible
  CHECK(quote_input("caf\xc3\xa9") == "\"caf\xc3\xa9\"");  // well-formed UTF-8 kept as it is
  CHECK(quote_input("\xff") == "\"\\xff\"");                // a byte that is no UTF-8
  CHECK(quote_input(std::string(41, 'x')) == "\"" + std::string(40, 'x') + "\"...");
  CHECK(quote_input(std::string(40, 'x')) == "\"" + std::string(40, 'x') + "\"");
  // 39 ASCII bytes and a 2-byte sequence: the sequence would end past byte 40, so it is left out whole.
  CHECK(quote_input(std::string(39, 'x') + "\xc3\xa9") == "\"" + std::string(39, 'x') + "\"...");
  CHECK(quote_input("abc", 0) == "\"\"...");
  CHECK(printable(printable(with_nul)) == printable(with_nul));  // idempotent: quoted text stays as it is
}

}  // namespace test_base_checks
