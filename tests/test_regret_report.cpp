// SyntheticRowSource (the replay's fallback stream) and the regret report writers (CSV, SVG).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/eval/regret_report.hpp"
#include "dpstream/io/synthetic_rows.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "temp_dir.hpp"

namespace test_regret_report {

using dpstream::io::RowRecord;
using dpstream::io::SyntheticRowSource;
using dpstream::io::SyntheticRowsOptions;
using Eigen::MatrixXd;

using dpstream::testing::TempDir;
namespace linalg = dpstream::linalg;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}


MatrixXd read_all(SyntheticRowSource& source) {
  MatrixXd rows(static_cast<Eigen::Index>(*source.declared_rows()), source.dimension());
  RowRecord r;
  Eigen::Index i = 0;
  while (source.next(r)) rows.row(i++) = r.dense.transpose();
  REQUIRE(i == rows.rows());
  return rows;
}

}  // namespace

TEST_CASE("SyntheticRowSource: defaults, determinism, row count") {
  SyntheticRowSource source;
  REQUIRE(source.dimension() == 256);
  REQUIRE(source.declared_rows() == 20000u);
  REQUIRE(source.format() == dpstream::io::RowFormat::synthetic);
  REQUIRE(source.path() == "synthetic(d=256, rows=20000, seed=1)");
  const MatrixXd u = source.spikes();
  REQUIRE(u.cols() == 5);
  REQUIRE((u.transpose() * u - MatrixXd::Identity(5, 5)).cwiseAbs().maxCoeff() < 1e-12);

  SyntheticRowsOptions o;
  o.dimension = 16;
  o.rows = 50;
  SyntheticRowSource a(o), b(o);
  const MatrixXd ra = read_all(a), rb = read_all(b);
  REQUIRE(ra == rb);  // a pure function of the options and the seed
  RowRecord r;
  REQUIRE_FALSE(a.next(r));
  REQUIRE(a.rows_returned() == 50u);
  o.seed = 2;
  SyntheticRowSource c(o);
  REQUIRE(read_all(c) != ra);
}

TEST_CASE("SyntheticRowSource: the sample covariance has the spikes on top") {
  SyntheticRowsOptions o;
  o.dimension = 32;
  o.rows = 40000;
  o.shares = {0.4, 0.2};
  o.isotropic = 0.4;
  SyntheticRowSource source(o);
  const MatrixXd rows = read_all(source);
  const MatrixXd c = rows.transpose() * rows / static_cast<double>(o.rows);
  const MatrixXd expected = source.expected_covariance();
  // E‖a‖² = Σ shares + isotropic = 1; entries within a few standard errors.
  REQUIRE(std::abs(c.trace() - 1.0) < 0.02);
  REQUIRE((c - expected).cwiseAbs().maxCoeff() < 0.02);
  linalg::SymmetricEigenSolver es(c);
  const double iso = o.isotropic / 32;
  REQUIRE(es.eigenvalues()(31) == Approx(0.4 + iso).epsilon(0.05));
  REQUIRE(es.eigenvalues()(30) == Approx(0.2 + iso).epsilon(0.05));
  REQUIRE(es.eigenvalues()(29) < 0.05);
}

TEST_CASE("SyntheticRowSource: bad options are refused by name") {
  SyntheticRowsOptions o;
  o.dimension = 0;
  REQUIRE_THROWS_AS(SyntheticRowSource(o), dpstream::InvalidParameter);
  o = {};
  o.shares = {0.1, -0.2};
  REQUIRE_THROWS_WITH(SyntheticRowSource(o), Catch::Contains("shares[1]"));
  o = {};
  o.dimension = 3;
  REQUIRE_THROWS_WITH(SyntheticRowSource(o), Catch::Contains("5 spikes"));
  o = {};
  o.isotropic = -1;
  REQUIRE_THROWS_WITH(SyntheticRowSource(o), Catch::Contains("isotropic"));
}

TEST_CASE("regret reports: CSV lines, atomic files") {
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

  const std::string csv = dpstream::eval::regret_csv(meter);
  REQUIRE(csv == "rows,opt,gain_private,regret_private,gain_ftl,regret_ftl\n"
                 "2,1,1,0,1,0\n"
                 "4,2,2,0,2,0\n"
                 "6,3,3,0,3,0\n");

  TempDir dir;
  const auto csv_path = dir.path / "regret.csv";
  dpstream::eval::write_regret_csv(meter, csv_path.string());
  REQUIRE(slurp(csv_path) == csv);
  struct stat st {};
  REQUIRE(::stat(csv_path.c_str(), &st) == 0);
  REQUIRE((st.st_mode & 0777) == 0600);
  // No temporary file left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path)) files += entry.is_regular_file();
  REQUIRE(files == 1);
  // A write that cannot happen names the path.
  const std::string bad = (dir.path / "no-such-dir" / "regret.csv").string();
  REQUIRE_THROWS_WITH(dpstream::eval::write_regret_csv(meter, bad), Catch::Contains(bad));
}

TEST_CASE("regret reports: a meter without samples gives the header line") {
  dpstream::eval::RegretMeter meter(3, 1, {"ftl"});
  REQUIRE(dpstream::eval::regret_csv(meter) == "rows,opt,gain_ftl,regret_ftl\n");
}

}  // namespace test_regret_report
