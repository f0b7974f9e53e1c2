// The regret plot of dpstream-replay (tools/common/regret_plot.hpp): a complete, self-contained,
// escaped SVG; the labels checked; a meter without samples still plotted; the file written whole.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>

#include <Eigen/Core>

#include "common/regret_plot.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "temp_dir.hpp"

namespace test_regret_plot {

using dpstream::tools::regret_svg;
using Eigen::MatrixXd;

// Two learners over three blocks of two rows, both scored on the first axis.
dpstream::eval::RegretMeter small_meter() {
  dpstream::eval::RegretMeter meter(4, 1, {"private", "ftl"}, 2);
  MatrixXd rows(6, 4);
  rows.setZero();
  for (int i = 0; i < 6; ++i) rows(i, i % 2) = 1.0;
  const MatrixXd axis0 = MatrixXd::Identity(4, 1);
  for (int b = 0; b < 3; ++b) {
    meter.score(0, rows.middleRows(2 * b, 2), axis0);
    meter.score(1, rows.middleRows(2 * b, 2), axis0);
    meter.observe(rows.middleRows(2 * b, 2));
  }
  meter.finish();
  return meter;
}

TEST_CASE("regret plot: SVG content, escaping, labels, the file") {
  const dpstream::eval::RegretMeter meter = small_meter();
  const std::string svg = regret_svg(meter, "T <&> \"x\"", "sub", {"private FPL", "FTL"});
  REQUIRE(svg.rfind("<?xml", 0) == 0);
  REQUIRE(svg.find("</svg>") != std::string::npos);
  REQUIRE(svg.find("T &lt;&amp;&gt; &quot;x&quot;") != std::string::npos);  // escaped title
  REQUIRE(svg.find("private FPL: regret 0.00% of OPT") != std::string::npos);
  REQUIRE(svg.find("OPT (best fixed k-subspace in hindsight)") != std::string::npos);
  REQUIRE(svg.find("<script") == std::string::npos);
  REQUIRE(svg.find("href") == std::string::npos);  // self-contained
  REQUIRE_THROWS_AS(regret_svg(meter, "t", "s", {"only one"}), dpstream::InvalidParameter);

  dpstream::testing::TempDir dir;
  const std::string path = dir.file("regret.svg");
  dpstream::tools::write_regret_svg(meter, path, "t", "s");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  REQUIRE(text.str() == regret_svg(meter, "t", "s"));
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  REQUIRE((st.st_mode & 0777) == 0600);
  REQUIRE_THROWS_WITH(dpstream::tools::write_regret_svg(meter, dir.file("no-such-dir/r.svg"), "t", "s"),
                      Catch::Contains("no-such-dir/r.svg"));
}

TEST_CASE("regret plot: a meter without samples still gives a valid plot") {
  dpstream::eval::RegretMeter meter(3, 1, {"ftl"});
  const std::string svg = regret_svg(meter, "t", "s");
  REQUIRE(svg.find("no curve samples") != std::string::npos);
  REQUIRE(svg.find("</svg>") != std::string::npos);
}

}  // namespace test_regret_plot
