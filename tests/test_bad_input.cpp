// Bad-input table of the README ("Bad input"): one test case a row, tagged [bad-input][<row>]. Each
// feeds that bad input to every public entry point where it can arrive and checks the exception type
// and that the message names what was wrong and where (row index, column, parameter, path, field).
//
// The cases headed "Found here" are defects this table turned up (a truncated checkpoint or ledger
// accepted, δ = 0 on a paper-calibrated Gaussian, an unknown item with a one-round model); they were
// fixed, and the cases stay as their regression tests.
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <Eigen/Core>

#include "continual_sum.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/completion/metrics.hpp"
#include "dpstream/completion/private_als.hpp"
#include "dpstream/completion/private_frank_wolfe.hpp"
#include "dpstream/completion/ratings_io.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/completion/streaming_completion.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/idx_rows.hpp"
#include "dpstream/io/row_log.hpp"
#include "dpstream/io/row_source.hpp"
#include "dpstream/pca/find_and_project.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/input_perturbation.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/pca/private_power_iteration.hpp"
#include "dpstream/pca/streaming_private_pca.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"
#include "dpstream/privacy/huber.hpp"
#include "dpstream/privacy/laplace_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/accumulators.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "row_log.pb.h"
#include "temp_dir.hpp"
#include "unaccounted.hpp"

namespace test_bad_input {

using namespace dpstream;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using Catch::Matchers::Contains;
using dpstream::testing::read_bytes;
using dpstream::testing::write_gzip;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// EXPECT_THROWS_NAMING(Type, expr, "word", ...): `expr` throws exactly `Type` (or a subclass) and
// its message contains every word. Another exception type, or none, fails the check.
#define EXPECT_THROWS_NAMING(Type, expr, ...)                                                          \
  do {                                                                                                 \
    bool threw_ = false;                                                                               \
    try {                                                                                              \
      static_cast<void>(expr);                                                                         \
    } catch (const Type& e_) {                                                                         \
      threw_ = true;                                                                                   \
      INFO(#expr << "\n  threw: " << e_.what());                                                       \
      for (const std::string& word_ : std::vector<std::string>{__VA_ARGS__})                           \
        CHECK_THAT(std::string(e_.what()), Contains(word_));                                           \
    } catch (const std::exception& e_) {                                                               \
      threw_ = true;                                                                                   \
      FAIL_CHECK(#expr << "\n  threw another type than " #Type ": " << e_.what());                     \
    }                                                                                                  \
    if (!threw_) FAIL_CHECK(#expr << "\n  did not throw (want " #Type ")");                            \
  } while (false)

// ---- small fixtures -------------------------------------------------------------------------------

VectorXd small_row(Index d, double value = 0.1) { return VectorXd::Constant(d, value); }

MatrixXd small_rows(Index m, Index d) {
  MatrixXd a(m, d);
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < d; ++j) a(i, j) = 0.3 * std::sin(1.0 + static_cast<double>(i * d + j));
  for (Index i = 0; i < m; ++i) a.row(i) /= std::max(1.0, 1.01 * a.row(i).norm());  // ‖a‖ < 1
  return a;
}

MatrixXd small_symmetric(Index d) {
  const MatrixXd a = small_rows(d + 2, d);
  return a.transpose() * a;
}

void write_text(const std::string& path, const std::string& text) { testing::write_bytes(path, text); }

void truncate_file(const std::string& path, std::size_t keep) {
  std::filesystem::resize_file(path, keep);
}

// A row log of `rows` dense rows of dimension d (count declared in the header when `declare`).
void write_row_log(const std::string& path, Index d, const std::vector<VectorXd>& rows, bool declare = true) {
  io::RowLogHeader h;
  h.dimension = d;
  h.count = declare ? rows.size() : 0;
  io::RowLogWriter w(path, h);
  for (const VectorXd& r : rows) w.write_dense(r);
  w.close();
}

// A length-delimited protobuf message (the row log's framing).
std::string delimited(const google::protobuf::MessageLite& msg) {
  const std::string body = msg.SerializeAsString();
  std::string out;
  std::uint64_t n = body.size();
  while (n >= 0x80) {
    out += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  out += static_cast<char>(n);
  return out + body;
}

std::string row_log_header_bytes(Index d, std::uint64_t count) {
  proto::RowLogHeader h;
  h.set_magic(io::kRowLogMagic);
  h.set_format_version(io::kRowLogFormatVersion);
  h.set_dimension(static_cast<std::uint64_t>(d));
  h.set_count(count);
  return delimited(h);
}

std::string dense_row_bytes(const std::vector<double>& values) {
  proto::Row r;
  for (double v : values) r.add_values(v);
  return delimited(r);
}

std::string sparse_row_bytes(const std::vector<std::uint32_t>& indices, const std::vector<double>& values,
                             std::optional<std::uint64_t> id = std::nullopt) {
  proto::Row r;
  r.set_sparse(true);
  for (auto i : indices) r.add_indices(i);
  for (double v : values) r.add_values(v);
  if (id) r.set_id(*id);
  return delimited(r);
}

// A plain IDX file of float64 items (3-dimensional header: count × rows × cols).
std::string idx_float64_bytes(std::uint32_t count, std::uint32_t rows, std::uint32_t cols, const std::vector<double>& values) {
  std::string out;
  auto be32 = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out += static_cast<char>((v >> s) & 0xff);
  };
  be32(0x00000E03);
  be32(count);
  be32(rows);
  be32(cols);
  for (double v : values) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int s = 56; s >= 0; s -= 8) out += static_cast<char>((bits >> s) & 0xff);
  }
  return out;
}

stream::ContinualSumOptions sum_options() {
  stream::ContinualSumOptions o;
  o.horizon = 8;
  o.block_rows = 2;
  o.privacy.noise.seed = 7;
  return o;
}

// A small ratings matrix: 3 users × 4 items.
completion::RatingsMatrix small_ratings() {
  return completion::RatingsMatrix(3, 4, {{0, 0, 4}, {0, 1, 3}, {1, 1, 5}, {1, 2, 2}, {2, 0, 1}, {2, 3, 4}});
}

completion::AlsOptions als_options() {
  completion::AlsOptions o;
  o.rank = 2;
  o.iterations = 2;
  o.seed = 3;
  return o;
}

completion::FrankWolfeOptions fw_options() {
  completion::FrankWolfeOptions o;
  o.iterations = 3;
  o.nuclear_norm_bound = 5;
  o.privacy.row_norm_bound = 10;
  o.privacy.noise.seed = 3;
  return o;
}

// An accountant with nothing left: (ε = 1, δ = 1e-6), all of ε spent by one pure charge.
privacy::PrivacyAccountant spent_accountant() {
  privacy::PrivacyAccountant acc(privacy::EpsDelta(1.0, 1e-6));
  acc.charge_pure("everything", 1.0);
  return acc;
}

}  // namespace

// =================================================================================================
// NaN
// =================================================================================================

TEST_CASE("bad input: NaN in a row, a value or a parameter", "[bad-input][nan]") {
  testing::TempDir dir;

  // RowGuard: the row index and the column.
  stream::RowGuard guard({3, 1.0, stream::OverNormPolicy::clip});
  VectorXd good = small_row(3);
  guard.admit(good);
  VectorXd bad = small_row(3);
  bad[1] = kNaN;
  EXPECT_THROWS_NAMING(InvalidRow, guard.admit(bad), "row 1", "column 1", "nan", "must be finite");
  CHECK(guard.counts().rejected == 1);
  Eigen::VectorXi idx(2);
  idx << 0, 2;
  VectorXd vals(2);
  vals << 0.1, kNaN;
  EXPECT_THROWS_NAMING(InvalidRow, guard.admit_sparse(idx, vals), "row 2", "column 2", "nan");
  EXPECT_THROWS_NAMING(InvalidRow, stream::require_bounded_row(bad, 7, 3, 1.0), "row 7", "l2 norm nan");
  try {
    guard.admit(bad);
  } catch (const InvalidRow& e) {
    CHECK(e.row_index() == 3);
  }

  // ContinualSum (vector and covariance), row by row and by block: the stream is unchanged.
  stream::ContinualVectorSum vsum(3, sum_options(), test_budget::unaccounted());
  vsum.update(good);
  EXPECT_THROWS_NAMING(InvalidRow, vsum.update(bad), "row 1", "nan", "over the bound");
  stream::ContinualCovariance csum(3, sum_options(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, csum.update(bad), "row 0", "nan");
  MatrixXd block = small_rows(3, 3);
  block(2, 0) = kNaN;
  EXPECT_THROWS_NAMING(InvalidRow, vsum.update_block(block), "row 3", "nan");
  CHECK(vsum.rows() == 1);

  // Readers pass NaN through (documented: admissibility is RowGuard's call); RowGuard then names it.
  const std::string csv = dir.file("nan.csv");
  write_text(csv, "0.1,0.2,0.3\n0.1,nan,0.3\n");
  {
    io::CsvRowReader reader(csv);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    REQUIRE(reader.next(rec));
    CHECK(std::isnan(rec.dense[1]));
    CHECK(rec.line == 2);
    stream::RowGuard g({3, 1.0});
    VectorXd first = rec.dense;
    first[1] = 0.2;
    g.admit(first);
    EXPECT_THROWS_NAMING(InvalidRow, g.admit(rec.dense), "row 1", "column 1", "nan");
  }
  {  // One convention: the reader names the same position column 1 (and, in the text, field 2).
    const std::string typo = dir.file("typo.csv");
    write_text(typo, "0.1,0.2,0.3\n0.1,nan?,0.3\n");
    io::CsvRowReader reader(typo);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), "line 2 (row 1), field 2 (column 1)", "\"nan?\"");
  }
  const std::string log = dir.file("nan.pb");
  write_row_log(log, 3, {small_row(3), bad});
  {
    io::RowLogReader reader(log);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    REQUIRE(reader.next(rec));
    CHECK(std::isnan(rec.dense[1]));
  }
  const std::string idx_path = dir.file("nan.idx");
  testing::write_bytes(idx_path, idx_float64_bytes(1, 1, 3, {0.1, kNaN, 0.2}));
  {
    io::IdxRowReader reader(idx_path);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    CHECK(std::isnan(rec.dense[1]));
  }

  // Mechanisms: the value's index; nothing is charged.
  privacy::SeededNoiseSource noise(1);
  privacy::PrivacyAccountant acc(privacy::EpsDelta(10.0, 1e-6));
  const privacy::GaussianMechanism gauss(1.0, privacy::EpsDelta(1.0, 1e-6));
  EXPECT_THROWS_NAMING(InvalidParameter, gauss.release(bad, noise, acc), "gaussian mechanism", "value[1]", "not finite");
  EXPECT_THROWS_NAMING(InvalidParameter, gauss.release(kNaN, noise, acc), "value[0]", "not finite");
  const privacy::LaplaceMechanism laplace(1.0, 1.0);
  EXPECT_THROWS_NAMING(InvalidParameter, laplace.release(kNaN, noise, acc), "laplace mechanism", "value[0]", "nan");
  const privacy::HuberMechanism huber(1.0, 1.0);
  EXPECT_THROWS_NAMING(InvalidParameter, huber.release(kNaN, noise, acc), "huber mechanism", "value[0]", "nan");
  const privacy::SymmetricGaussianMechanism sym({});
  MatrixXd cov = small_symmetric(3);
  cov(0, 1) = cov(1, 0) = kNaN;
  EXPECT_THROWS_NAMING(InvalidParameter, sym.release(cov, noise, acc), "covariance(1,0)", "not finite");
  CHECK(acc.ledger().empty());

  // PCA estimators: the row index.
  MatrixXd rows = small_rows(4, 3);
  rows(2, 1) = kNaN;
  pca::GaussianPcaOptions gpo;
  gpo.mechanism.privacy.noise.seed = 1;
  pca::GaussianPca gpca(3, gpo);
  EXPECT_THROWS_NAMING(InvalidRow, gpca.release(rows, test_budget::unaccounted()), "row 2", "nan");
  pca::NoisyPowerMethodOptions npo;
  npo.privacy.noise.seed = 1;
  pca::NoisyPowerMethod npm(3, npo);
  EXPECT_THROWS_NAMING(InvalidRow, npm.run(rows, test_budget::unaccounted()), "row 2", "nan");
  pca::StreamingPrivatePcaOptions spo;
  spo.horizon_rows = 10;
  spo.refresh_every = 5;
  spo.refresh.privacy.noise.seed = 1;
  pca::StreamingPrivatePca spca(3, spo, test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, spca.update(bad), "row 0", "nan");
  EXPECT_THROWS_NAMING(InvalidRow, spca.update_block(rows), "row 2", "nan");
  pca::FplOptions fpo;
  fpo.mode = pca::FplMode::follow_the_leader;
  pca::FplOnlinePca fpl(3, fpo);
  EXPECT_THROWS_NAMING(InvalidRow, fpl.update(bad), "row 0", "column 1", "not finite");
  pca::PrivateOjaOptions opo;
  opo.iterations = 2;
  opo.privacy.noise.seed = 1;
  pca::PrivateOja oja(opo);
  EXPECT_THROWS_NAMING(InvalidRow, oja.run(rows, test_budget::unaccounted()), "row 2", "column 1", "nan");
  pca::InputPerturbationOptions ipo;
  const pca::InputPerturbation ip(ipo);
  EXPECT_THROWS_NAMING(InvalidRow, ip.perturb(rows, noise, test_budget::unaccounted()), "row 2", "column 1", "nan");
  pca::FindAndProjectOptions fpp;
  fpp.oversampling = 0;
  const pca::PrivateFindAndProject pfp(fpp);
  EXPECT_THROWS_NAMING(InvalidRow, pfp.release(rows, noise, test_budget::unaccounted()), "row 2", "column 1", "nan");
  pca::PpiOptions ppo;
  ppo.iterations = 2;
  ppo.coherence_bound = 3;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::private_power_iteration(cov, ppo, noise, test_budget::unaccounted()), "(1,0)", "not finite");
  EXPECT_THROWS_NAMING(InvalidParameter, pca::top_k_eigen(cov, 1), "(1,0)", "nan");
  EXPECT_THROWS_NAMING(InvalidParameter, pca::top_k_svd(rows, 1), "top_k_svd", "non-finite");

  // Ratings: the rating's position, the file's line or row.
  EXPECT_THROWS_NAMING(InvalidParameter, completion::RatingsMatrix(2, 2, {{0, 0, 1}, {1, 1, kNaN}}), "rating 1",
                       "user 1", "item 1", "value is nan");
  const std::string ratings_csv = dir.file("nan_ratings.csv");
  write_text(ratings_csv, "1,10,4\n2,11,nan\n");
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(ratings_csv), ratings_csv + ":2", "rating", "not finite");
  const std::string ratings_pb = dir.file("nan_ratings.pb");
  testing::write_bytes(ratings_pb, row_log_header_bytes(4, 0) + sparse_row_bytes({0, 1}, {4, kNaN}));
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(ratings_pb), ratings_pb + ": row 0", "item 1", "nan",
                       "not finite");
  completion::StreamingCompletionOptions sco;
  sco.items = 4;
  sco.refresh_every = 10;
  completion::StreamingCompletion sc(sco, [](const completion::RatingsMatrix&, const completion::RefreshBudget&,
                                             privacy::PrivacyAccountant&) {
    return completion::RatingPredictor([](Index, Index) { return 0.0; });
  });
  EXPECT_THROWS_NAMING(InvalidParameter, sc.add_user({{0, 4.0}, {2, kNaN}}), "user 0", "item 2", "not finite");
  CHECK(sc.users() == 0);

  // Parameters: the parameter's name and the value.
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::EpsDelta(kNaN, 1e-6), "epsilon", "got nan");
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::EpsDelta(1.0, kNaN), "delta", "got nan");
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::LaplaceMechanism(1.0, kNaN), "epsilon", "got nan");
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::GaussianMechanism(kNaN, privacy::EpsDelta(1, 1e-6)),
                       "l2_sensitivity", "nan");
  EXPECT_THROWS_NAMING(InvalidParameter, stream::RowGuard({3, kNaN}), "norm_bound", "nan");
  stream::ContinualSumOptions so = sum_options();
  so.privacy.row_norm_bound = kNaN;
  EXPECT_THROWS_NAMING(InvalidParameter, stream::ContinualVectorSum(3, so, test_budget::unaccounted()), "row_norm_bound", "nan");
  EXPECT_THROWS_NAMING(InvalidParameter, acc.charge_pure("x", kNaN), "epsilon", "nan");
}

// =================================================================================================
// ±Inf
// =================================================================================================

TEST_CASE("bad input: +Inf or -Inf in a row, a value or a parameter", "[bad-input][inf]") {
  testing::TempDir dir;
  VectorXd pos = small_row(3), neg = small_row(3);
  pos[2] = kInf;
  neg[0] = -kInf;

  stream::RowGuard guard({3, 1.0});
  EXPECT_THROWS_NAMING(InvalidRow, guard.admit(pos), "row 0", "column 2", "inf", "must be finite");
  EXPECT_THROWS_NAMING(InvalidRow, guard.admit(neg), "row 1", "column 0", "-inf");
  Eigen::VectorXi idx(1);
  idx << 1;
  VectorXd vals(1);
  vals << -kInf;
  EXPECT_THROWS_NAMING(InvalidRow, guard.admit_sparse(idx, vals), "row 2", "column 1", "-inf");
  CHECK(guard.counts().rejected == 3);

  stream::ContinualVectorSum vsum(3, sum_options(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, vsum.update(pos), "row 0", "l2 norm inf");
  stream::ContinualCovariance csum(3, sum_options(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, csum.update(neg), "row 0", "l2 norm inf");

  // Readers pass ±inf through ("inf", "-Infinity", huge magnitudes), RowGuard refuses it.
  const std::string csv = dir.file("inf.csv");
  write_text(csv, "inf,0,0\n0,-Infinity,0\n1e999,0,0\n");
  {
    io::CsvRowReader reader(csv);
    io::RowRecord rec;
    stream::RowGuard g({3, 1.0});
    for (int r = 0; r < 3; ++r) {
      REQUIRE(reader.next(rec));
      CHECK(std::isinf(rec.dense.sum()));
      EXPECT_THROWS_NAMING(InvalidRow, g.admit(rec.dense), "row " + std::to_string(r), "inf");
    }
  }
  const std::string idx_path = dir.file("inf.idx");
  testing::write_bytes(idx_path, idx_float64_bytes(1, 1, 2, {-kInf, 0.0}));
  {
    io::IdxRowReader reader(idx_path);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    CHECK(rec.dense[0] == -kInf);
  }

  privacy::SeededNoiseSource noise(1);
  privacy::PrivacyAccountant acc(privacy::EpsDelta(10.0, 1e-6));
  const privacy::GaussianMechanism gauss(1.0, privacy::EpsDelta(1.0, 1e-6));
  EXPECT_THROWS_NAMING(InvalidParameter, gauss.release(pos, noise, acc), "value[2]", "not finite");
  const privacy::LaplaceMechanism laplace(1.0, 1.0);
  EXPECT_THROWS_NAMING(InvalidParameter, laplace.release(-kInf, noise, acc), "value[0]", "-inf");
  CHECK(acc.ledger().empty());

  MatrixXd rows = small_rows(3, 3);
  rows(1, 1) = -kInf;
  pca::GaussianPcaOptions gpo;
  gpo.mechanism.privacy.noise.seed = 1;
  pca::GaussianPca gpca(3, gpo);
  EXPECT_THROWS_NAMING(InvalidRow, gpca.release(rows, test_budget::unaccounted()), "row 1", "inf");
  pca::PrivateOjaOptions opo;
  opo.iterations = 2;
  opo.privacy.noise.seed = 1;
  pca::PrivateOja oja(opo);
  EXPECT_THROWS_NAMING(InvalidRow, oja.run(rows, test_budget::unaccounted()), "row 1", "column 1", "-inf");
  const pca::InputPerturbation ip(pca::InputPerturbationOptions{});
  EXPECT_THROWS_NAMING(InvalidRow, ip.perturb(rows, noise, test_budget::unaccounted()), "row 1", "column 1", "-inf");

  EXPECT_THROWS_NAMING(InvalidParameter, completion::RatingsMatrix(1, 1, {{0, 0, kInf}}), "rating 0", "value is inf");
  const std::string ratings_tsv = dir.file("inf.data");
  write_text(ratings_tsv, "1\t10\t4\t0\n1\t11\t-inf\t0\n");
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(ratings_tsv), ratings_tsv + ":2", "-inf", "not finite");

  EXPECT_THROWS_NAMING(InvalidParameter, privacy::EpsDelta(kInf, 1e-6), "epsilon", "got inf");
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::EpsDelta(1.0, -kInf), "delta", "got -inf");
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::LaplaceMechanism(kInf, 1.0), "l1_sensitivity", "got inf");
  EXPECT_THROWS_NAMING(InvalidParameter, stream::RowGuard({3, kInf}), "norm_bound", "inf");
}

// =================================================================================================
// Wrong dimension
// =================================================================================================

TEST_CASE("bad input: a row of the wrong dimension", "[bad-input][dimension]") {
  testing::TempDir dir;
  VectorXd short_row = small_row(2);

  stream::RowGuard guard({3, 1.0});
  EXPECT_THROWS_NAMING(InvalidRow, guard.admit(short_row), "row 0", "dimension 2, expected 3");
  Eigen::VectorXi idx(2);
  idx << 0, 5;
  VectorXd vals = small_row(2);
  EXPECT_THROWS_NAMING(InvalidRow, guard.admit_sparse(idx, vals), "row 1", "sparse index 5", "outside [0, 3)");
  EXPECT_THROWS_NAMING(InvalidRow, stream::require_bounded_row(short_row, 4, 3, 1.0), "row 4", "dimension 2, expected 3");

  stream::ContinualVectorSum vsum(3, sum_options(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, vsum.update(short_row), "row 0", "dimension 2, expected 3");
  EXPECT_THROWS_NAMING(InvalidRow, vsum.update_block(small_rows(2, 4)), "row 0", "block of dimension 4, expected 3");
  stream::ContinualCovariance csum(3, sum_options(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, csum.update(small_row(4)), "row 0", "dimension 4, expected 3");

  // Readers: the file, the line or byte offset, the row.
  const std::string csv = dir.file("dim.csv");
  write_text(csv, "# comment\n0.1,0.2,0.3\n0.1,0.2\n");
  {
    io::CsvRowReader reader(csv);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), csv, "line 3 (row 1)", "2 fields, expected 3");
  }
  const std::string log = dir.file("dim.pb");
  testing::write_bytes(log, row_log_header_bytes(3, 0) + dense_row_bytes({0.1, 0.2, 0.3}) + dense_row_bytes({0.1, 0.2}));
  {
    io::RowLogReader reader(log);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), log, "row 1 at byte offset", "dense row has 2 values",
                         "expected dimension 3");
  }
  const std::string sparse_log = dir.file("dim_sparse.pb");
  testing::write_bytes(sparse_log, row_log_header_bytes(3, 0) + sparse_row_bytes({1, 3}, {0.1, 0.2}));
  {
    io::RowLogReader reader(sparse_log);
    io::RowRecord rec;
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), "row 0", "sparse index 3", "outside [0, 3)");
  }
  io::RowLogHeader h;
  h.dimension = 3;
  io::RowLogWriter writer(dir.file("w.pb"), h);
  EXPECT_THROWS_NAMING(InvalidParameter, writer.write_dense(short_row), "row 0", "dimension 2, expected 3");
  io::CsvRowWriter csv_writer(dir.file("w.csv"), 3);
  EXPECT_THROWS_NAMING(InvalidParameter, csv_writer.write(short_row), "row 0", "dimension 2, expected 3");

  // PCA estimators (a matrix of rows: InvalidParameter naming both widths).
  pca::GaussianPcaOptions gpo;
  gpo.mechanism.privacy.noise.seed = 1;
  pca::GaussianPca gpca(3, gpo);
  EXPECT_THROWS_NAMING(InvalidParameter, gpca.release(small_rows(4, 2), test_budget::unaccounted()), "rows have 2 columns", "dimension is 3");
  EXPECT_THROWS_NAMING(InvalidParameter, gpca.release(stream::CovarianceAccumulator(4), test_budget::unaccounted()), "dimension is 4");
  pca::NoisyPowerMethodOptions npo;
  npo.privacy.noise.seed = 1;
  pca::NoisyPowerMethod npm(3, npo);
  EXPECT_THROWS_NAMING(InvalidParameter, npm.run(small_rows(4, 2), test_budget::unaccounted()), "rows have 2 columns", "dimension is 3");
  pca::StreamingPrivatePcaOptions spo;
  spo.horizon_rows = 10;
  spo.refresh.privacy.noise.seed = 1;
  pca::StreamingPrivatePca spca(3, spo, test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, spca.update(short_row), "row 0", "dimension 2, expected 3");
  pca::FplOptions fpo;
  fpo.mode = pca::FplMode::follow_the_leader;
  pca::FplOnlinePca fpl(3, fpo);
  EXPECT_THROWS_NAMING(InvalidParameter, fpl.update(short_row), "update", "row has 2 entries", "dimension is 3");
  EXPECT_THROWS_NAMING(InvalidParameter, fpl.gain(short_row), "gain", "row has 2 entries");
  pca::FplOptions tree_fpo;
  pca::FplOnlinePca tree_fpl(3, tree_fpo);
  stream::ContinualCovariance other(4, sum_options(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidParameter, tree_fpl.attach(other), "attach", "dimension is 4");
  privacy::SeededNoiseSource noise(1);
  const privacy::SymmetricGaussianMechanism sym({});
  EXPECT_THROWS_NAMING(InvalidParameter, sym.release(MatrixXd::Zero(3, 2), noise, test_budget::unaccounted()), "must be square", "3x2");
  pca::PpiOptions ppo;
  ppo.iterations = 2;
  ppo.coherence_bound = 3;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::private_power_iteration(MatrixXd::Zero(3, 2), ppo, noise, test_budget::unaccounted()), "square");

  // Ratings: a line of another number of fields.
  const std::string ratings = dir.file("dim.csv.ratings");
  write_text(ratings, "1,10,4\n2,11\n");
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(ratings, {completion::RatingsFormat::csv}),
                       ratings + ":2", "expected 3 or 4 fields", "got 2");
  const std::string dense_ratings = dir.file("dense.pb");
  write_row_log(dense_ratings, 3, {small_row(3)});
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(dense_ratings), dense_ratings + ": row 0", "dense row");
}

// =================================================================================================
// Norm over the bound
// =================================================================================================

TEST_CASE("bad input: a row whose l2 norm is over the bound", "[bad-input][norm]") {
  VectorXd big = VectorXd::Zero(3);
  big[0] = 2.0;

  // RowGuard: reject names the row and the norm; clip scales it down and counts it.
  stream::RowGuard reject({3, 1.0, stream::OverNormPolicy::reject});
  EXPECT_THROWS_NAMING(InvalidRow, reject.admit(big), "row 0", "l2 norm 2", "exceeds the bound 1", "policy: reject");
  CHECK(reject.counts().rejected == 1);
  stream::RowGuard clip({3, 1.0, stream::OverNormPolicy::clip});
  VectorXd clipped = big;
  clip.admit(clipped);
  CHECK(clip.counts().clipped == 1);
  CHECK(stream::row_norm(clipped) <= 1.0);
  EXPECT_THROWS_NAMING(InvalidRow, stream::require_bounded_row(big, 9, 3, 1.0), "row 9", "l2 norm 2",
                       "over the bound 1");

  stream::ContinualVectorSum vsum(3, sum_options(), test_budget::unaccounted());
  vsum.update(small_row(3));
  EXPECT_THROWS_NAMING(InvalidRow, vsum.update(big), "row 1", "l2 norm 2", "over the bound 1");
  stream::ContinualCovariance csum(3, sum_options(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, csum.update(big), "row 0", "over the bound");

  MatrixXd rows = small_rows(4, 3);
  rows.row(3) = big.transpose();
  pca::GaussianPcaOptions gpo;
  gpo.mechanism.privacy.noise.seed = 1;
  pca::GaussianPca gpca(3, gpo);
  EXPECT_THROWS_NAMING(InvalidRow, gpca.release(rows, test_budget::unaccounted()), "row 3", "over the bound");
  pca::NoisyPowerMethodOptions npo;
  npo.privacy.noise.seed = 1;
  pca::NoisyPowerMethod npm(3, npo);
  EXPECT_THROWS_NAMING(InvalidRow, npm.run(rows, test_budget::unaccounted()), "row 3", "over the bound");
  pca::StreamingPrivatePcaOptions spo;
  spo.horizon_rows = 10;
  spo.refresh_every = 5;
  spo.refresh.privacy.noise.seed = 1;
  pca::StreamingPrivatePca spca(3, spo, test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidRow, spca.update(big), "row 0", "over the bound");
  pca::PrivateOjaOptions opo;
  opo.iterations = 2;
  opo.privacy.noise.seed = 1;
  pca::PrivateOja oja(opo);
  EXPECT_THROWS_NAMING(InvalidRow, oja.run(rows, test_budget::unaccounted()), "row 3", "exceeds row_norm_bound 1");
  privacy::SeededNoiseSource noise(1);
  const pca::InputPerturbation ip(pca::InputPerturbationOptions{});
  EXPECT_THROWS_NAMING(InvalidRow, ip.perturb(rows, noise, test_budget::unaccounted()), "row 3", "over row_norm_bound 1");
  pca::FindAndProjectOptions fpp;
  fpp.oversampling = 0;
  const pca::PrivateFindAndProject pfp(fpp);
  EXPECT_THROWS_NAMING(InvalidRow, pfp.release(rows, noise, test_budget::unaccounted()), "row 3", "over row_norm_bound");

  // Completion: a user's ratings over L (refused when not clipping), a user over ξ ratings.
  const completion::RatingsMatrix ratings = small_ratings();
  completion::FrankWolfeOptions fo = fw_options();
  fo.privacy.row_norm_bound = 1.0;
  fo.clip_user_rows = false;
  EXPECT_THROWS_NAMING(InvalidRow, completion::FrankWolfeUser(fo, ratings, 1), "user 1", "exceeds row_norm_bound 1");
  completion::PrivateFrankWolfe fw(fo);
  EXPECT_THROWS_NAMING(InvalidRow, fw.train(ratings, test_budget::unaccounted()), "user 0", "exceeds row_norm_bound");
  fo.clip_user_rows = true;
  completion::PrivateFrankWolfe fw_clip(fo);
  CHECK(fw_clip.train(ratings, test_budget::unaccounted()).users_clipped == 3);
  completion::AlsOptions ao = als_options();
  ao.mode = completion::AlsMode::rigorous;
  ao.mechanism = completion::AlsMechanism::gaussian;
  ao.max_per_user = 1;
  completion::PrivateAls als(ao);
  EXPECT_THROWS_NAMING(InvalidRow, als.train(ratings, test_budget::unaccounted()), "user 0 has 2 ratings", "over max_per_user 1");
}

// =================================================================================================
// Empty file
// =================================================================================================

TEST_CASE("bad input: an empty file", "[bad-input][empty-file]") {
  testing::TempDir dir;
  const std::string csv = dir.file("empty.csv"), pb = dir.file("empty.pb"), idx = dir.file("empty.idx"),
                    data = dir.file("empty.data"), ckpt = dir.file("empty.ckpt");
  for (const std::string& p : {csv, pb, idx, data, ckpt}) write_text(p, "");

  EXPECT_THROWS_NAMING(CorruptInput, io::CsvRowReader{csv}, "csv " + csv, "empty file (0 bytes)");
  EXPECT_THROWS_NAMING(CorruptInput, io::RowLogReader{pb}, "row log " + pb, "empty file (0 bytes)");
  EXPECT_THROWS_NAMING(CorruptInput, io::IdxRowReader{idx}, "IDX " + idx, "empty file (0 bytes)");
  for (const std::string& p : {csv, pb, idx})
    EXPECT_THROWS_NAMING(CorruptInput, io::open_row_source(p), p, "empty file (0 bytes)");
  // Not empty, but nothing in it: comments and blank lines only.
  const std::string comments = dir.file("comments.csv");
  write_text(comments, "# nothing\n\n  \n");
  EXPECT_THROWS_NAMING(CorruptInput, io::CsvRowReader{comments}, comments, "no header or data line");
  // A header and no row: a source of no rows, not an error.
  const std::string header_only = dir.file("header.csv");
  write_text(header_only, "a,b,c\n");
  {
    io::CsvRowReader reader(header_only);
    io::RowRecord rec;
    CHECK(reader.dimension() == 3);
    CHECK_FALSE(reader.next(rec));
  }

  using completion::RatingsFormat;
  for (const RatingsFormat f : {RatingsFormat::automatic, RatingsFormat::csv, RatingsFormat::tsv, RatingsFormat::double_colon})
    EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(data, {f}), data, "empty file (0 bytes)");
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(pb, {RatingsFormat::row_log}), pb, "empty file (0 bytes)");
  write_text(comments, "# nothing\nuserId,movieId,rating\n");
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(comments), comments, "no rating");

  EXPECT_THROWS_NAMING(CorruptInput, base::load_file<stream::ContinualVectorSum>(ckpt, 3, sum_options(), test_budget::unaccounted()),
                       "checkpoint " + ckpt, "0 bytes without the CRC-32 trailer");
  EXPECT_THROWS_NAMING(CorruptInput, stream::ContinualVectorSum::load("", 3, sum_options(), test_budget::unaccounted()), "0 bytes");
  EXPECT_THROWS_NAMING(CorruptInput, privacy::PrivacyAccountant::load(""), "privacy ledger",
                       "0 bytes without the CRC-32 trailer");
}

// =================================================================================================
// Truncated log
// =================================================================================================

TEST_CASE("bad input: a truncated row log, CSV, IDX or ratings file", "[bad-input][truncated]") {
  testing::TempDir dir;
  const Index d = 20;  // a row is over 127 bytes: its length prefix takes two bytes
  std::vector<VectorXd> rows;
  for (int i = 0; i < 3; ++i) rows.push_back(small_row(d, 0.01 * (i + 1)));

  // Row log cut inside the last message: the rows before it are delivered, then the cut is named.
  const std::string full = dir.file("full.pb");
  write_row_log(full, d, rows, /*declare=*/false);
  const std::string bytes = read_bytes(full);
  const std::string cut = dir.file("cut.pb");
  testing::write_bytes(cut, bytes.substr(0, bytes.size() - 10));
  {
    io::RowLogReader reader(cut);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    REQUIRE(reader.next(rec));
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), "row log " + cut, "row 2 at byte offset", "truncated message");
  }
  // Cut inside a length prefix.
  const std::size_t header = row_log_header_bytes(d, 0).size();
  const std::size_t row_bytes = dense_row_bytes(std::vector<double>(d, 0.1)).size();
  testing::write_bytes(cut, bytes.substr(0, header + row_bytes + 1));
  {
    io::RowLogReader reader(cut);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), "row 1", "truncated varint length prefix");
  }
  // Cut inside the header.
  testing::write_bytes(cut, bytes.substr(0, header - 3));
  EXPECT_THROWS_NAMING(CorruptInput, io::RowLogReader{cut}, cut, "the header", "cut inside its header");
  // Cut at a message boundary: only a declared count tells.
  const std::string declared = dir.file("declared.pb");
  write_row_log(declared, d, rows, /*declare=*/true);
  const std::string declared_bytes = read_bytes(declared);
  truncate_file(declared, declared_bytes.size() - row_bytes);
  {
    io::RowLogReader reader(declared);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    REQUIRE(reader.next(rec));
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), declared, "ends after 2 rows", "header declares 3");
  }

  // CSV cut inside its last line.
  const std::string csv = dir.file("cut.csv");
  write_text(csv, "0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,0.");
  {
    io::CsvRowReader reader(csv);
    io::RowRecord rec;
    REQUIRE(reader.next(rec));
    REQUIRE(reader.next(rec));
    EXPECT_THROWS_NAMING(CorruptInput, reader.next(rec), csv, "line 3 (row 2)", "2 fields, expected 3");
  }

  // IDX: a plain file is checked against its header when opened; a gzipped one where it ends.
  const std::string idx_bytes = idx_float64_bytes(3, 1, 2, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
  const std::string idx = dir.file("cut.idx");
  testing::write_bytes(idx, idx_bytes.substr(0, idx_bytes.size() - 5));
  EXPECT_THROWS_NAMING(CorruptInput, io::IdxRowReader{idx}, "IDX " + idx, "short file", "expected " + std::to_string(idx_bytes.size()));
  const std::string gz = dir.file("cut.idx.gz");
  write_gzip(gz, idx_bytes);
  const std::string gz_bytes = read_bytes(gz);
  testing::write_bytes(gz, gz_bytes.substr(0, gz_bytes.size() - 20));
  {
    bool threw = false;
    std::uint64_t delivered = 0;
    try {
      io::IdxRowReader reader(gz);
      io::RowRecord rec;
      while (reader.next(rec)) ++delivered;
    } catch (const CorruptInput& e) {
      threw = true;
      INFO("rows delivered before: " << delivered << "; " << e.what());
      CHECK_THAT(std::string(e.what()), Contains("IDX " + gz) && Contains("uncompressed byte offset"));
    }
    CHECK(threw);
  }

  // Ratings: a text file cut inside its last line; a ratings row log cut inside a row.
  const std::string data = dir.file("cut.data");
  write_text(data, "1\t10\t4\t881250949\n2\t11\t3\t881250950\n3\t1");
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(data), data + ":3", "expected 3 or 4 fields", "got 2");
  const std::string ratings_pb = dir.file("cut_ratings.pb");
  const std::string rbytes = row_log_header_bytes(4, 0) + sparse_row_bytes({0, 1}, {4, 3}) + sparse_row_bytes({2, 3}, {1, 5});
  testing::write_bytes(ratings_pb, rbytes.substr(0, rbytes.size() - 4));
  EXPECT_THROWS_NAMING(CorruptInput, completion::read_ratings(ratings_pb), ratings_pb, "row 1", "truncated message");
}

// =================================================================================================
// CSV first line: header or row
// =================================================================================================

// Found here (input hardening, "rows dropped silently by header guessing"): a first line with one
// field that is not a number — a typo, a byte-order mark, a trailing comma, quoted numbers — was taken
// for a header and the row lost, with nothing skipped; pandas' numeric header 0,1,2 was read as a row.
TEST_CASE("bad input: a CSV first line that is not clearly a header or a row", "[bad-input][csv-header]") {
  testing::TempDir dir;
  io::RowSourceOptions automatic, yes, no;
  yes.csv_header = io::parse_csv_header("yes");
  no.csv_header = io::parse_csv_header("no");
  io::RowRecord rec;

  const std::string typo = dir.file("typo.csv");
  write_text(typo, "0.1,0.2x,0.3\n0.4,0.5,0.6\n");
  EXPECT_THROWS_NAMING(CorruptInput, io::CsvRowReader{typo}, "csv " + typo, "line 1",
                       "field 2 (\"0.2x\") is not a number", "fields 1, 3 (\"0.1\", \"0.3\") are", "--header yes",
                       "--header no");
  EXPECT_THROWS_NAMING(CorruptInput, io::open_row_source(typo, io::RowFormat::automatic, automatic), typo, "line 1",
                       "--header yes");
  {
    auto source = io::open_row_source(typo, io::RowFormat::automatic, no);
    EXPECT_THROWS_NAMING(CorruptInput, source->next(rec), typo, "line 1 (row 0), field 2 (column 1)", "\"0.2x\" is not a number");
  }

  const std::string pandas = dir.file("pandas.csv");
  write_text(pandas, "0,1,2\n0.1,0.2,0.3\n");
  EXPECT_THROWS_NAMING(CorruptInput, io::open_row_source(pandas), pandas, "line 1", "its fields are 0,1,2", "pandas",
                       "--header yes");
  {
    auto source = io::open_row_source(pandas, io::RowFormat::automatic, yes);
    REQUIRE(source->next(rec));
    CHECK(rec.dense == Eigen::Vector3d(0.1, 0.2, 0.3));
    CHECK(source->non_row_lines().header == 1);
    CHECK_FALSE(source->next(rec));
  }

  const std::string quoted = dir.file("quoted.csv");
  write_text(quoted, "\"0.1\",\"0.2\"\n\"0.3\",\"0.4\"\n");
  EXPECT_THROWS_NAMING(CorruptInput, io::open_row_source(quoted), quoted, "line 1", "every field is a quoted number",
                       "--header no");
  {
    auto source = io::open_row_source(quoted, io::RowFormat::automatic, no);
    REQUIRE(source->next(rec));
    CHECK(rec.dense == Eigen::Vector2d(0.1, 0.2));
  }

  const std::string comma = dir.file("comma.csv");
  write_text(comma, "0.1,0.2,\n0.3,0.4,\n");
  for (const io::RowSourceOptions& options : {automatic, no}) {
    auto source = io::open_row_source(comma, io::RowFormat::automatic, options);
    EXPECT_THROWS_NAMING(CorruptInput, source->next(rec), comma, "line 1 (row 0), field 3 (column 2)",
                         "the line ends with a comma");
  }

  // A UTF-8 byte-order mark is not part of the first field; UTF-16 is refused.
  const std::string bom = dir.file("bom.csv");
  write_text(bom, "\xEF\xBB\xBF" "0.1,0.2\n0.3,0.4\n");
  {
    auto source = io::open_row_source(bom);
    REQUIRE(source->next(rec));
    CHECK(rec.dense == Eigen::Vector2d(0.1, 0.2));
    CHECK(rec.line == 1);
    REQUIRE(source->next(rec));
    CHECK(source->skipped() == 0);
    CHECK(source->non_row_lines().total() == 0);
  }
  const std::string utf16 = dir.file("utf16.csv");
  write_text(utf16, std::string("\xFF\xFE" "0\0.\0" "1\0\n\0", 10));
  EXPECT_THROWS_NAMING(CorruptInput, io::open_row_source(utf16), utf16, "UTF-16 byte-order mark");
}

// =================================================================================================
// A damaged gzip input read in part
// =================================================================================================

// Found here (input hardening): a byte flipped late in a .gz input read with a row limit gave
// other rows and exit 0 — the gzip CRC-32 is at the end of the stream. The reader now says the
// integrity is unverified, and verify_rest() checks it.
TEST_CASE("bad input: a damaged gzip IDX read only in part", "[bad-input][gzip-partial]") {
  testing::TempDir dir;
  // 40,000 items of 8 float64 (2.5 MB): far past what zlib inflates ahead of the first rows.
  std::vector<double> values(40000 * 8);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.3 * std::sin(1.0 + 0.37 * static_cast<double>(i));
  const std::string gz = dir.file("rows.idx.gz");
  write_gzip(gz, idx_float64_bytes(40000, 1, 8, values));
  std::string bytes = read_bytes(gz);
  bytes[bytes.size() - 3000] = static_cast<char>(bytes[bytes.size() - 3000] ^ 0x04);
  testing::write_bytes(gz, bytes);

  io::RowRecord rec;
  {
    auto source = io::open_row_source(gz);
    for (int r = 0; r < 100; ++r) REQUIRE(source->next(rec));  // as with --limit 100: no error
    CHECK(source->integrity() == io::Integrity::unverified);
    EXPECT_THROWS_NAMING(CorruptInput, source->verify_rest(), "IDX " + gz, "uncompressed byte offset",
                         "gzip data corrupt", "after 100 rows read");
  }
  {
    auto source = io::open_row_source(gz);
    EXPECT_THROWS_NAMING(CorruptInput, [&] { while (source->next(rec)) {} }(), "IDX " + gz, "gzip data corrupt");
  }
}

// =================================================================================================
// Corrupt checkpoint
// =================================================================================================

namespace {

// A checkpoint of a seeded vector sum (d = 3) with an accountant, after 5 rows (2 releases, 1 pending).
std::string vector_checkpoint(privacy::PrivacyAccountant& acc, int rows = 5) {
  stream::ContinualVectorSum sum(3, sum_options(), acc);
  for (int i = 0; i < rows; ++i) sum.update(small_row(3, 0.1 * (i + 1)));
  return sum.save();
}

}  // namespace

TEST_CASE("bad input: a corrupt checkpoint or ledger", "[bad-input][corrupt-checkpoint]") {
  testing::TempDir dir;
  privacy::PrivacyAccountant acc(privacy::EpsDelta(2.0, 1e-6));
  const std::string bytes = vector_checkpoint(acc);

  using Sum = stream::ContinualVectorSum;
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(std::string("\xff\xff\xff\xff\xff", 5), 3, sum_options(), test_budget::unaccounted()),
                       "continual sum checkpoint", "without the CRC-32 trailer");
  EXPECT_THROWS_NAMING(CorruptInput,
                       Sum::load(base::seal_message(std::string("\xff\xff\xff\xff\xff", 5)), 3, sum_options(), test_budget::unaccounted()),
                       "continual sum checkpoint", "do not parse");
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(bytes.substr(0, bytes.size() / 2), 3, sum_options(), test_budget::unaccounted()),
                       "continual sum checkpoint");
  // Damaged bytes: the CRC-32 seal names the damage.
  std::string flipped = bytes;
  flipped[bytes.size() / 3] = static_cast<char>(flipped[bytes.size() / 3] ^ 0x10);
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(flipped, 3, sum_options(), test_budget::unaccounted()), "continual sum checkpoint",
                       "CRC-32 mismatch");
  // Tampered messages are sealed again, so the checks behind the seal are the ones that refuse them.
  auto resealed = [](proto::ContinualSumCheckpoint m) {
    m.clear_crc32();
    return base::seal_message(m.SerializeAsString());
  };
  // Another format version.
  proto::ContinualSumCheckpoint msg;
  REQUIRE(msg.ParseFromString(bytes));
  msg.set_format_version(2);
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(resealed(msg), 3, sum_options(), test_budget::unaccounted()), "format_version 2");
  // Inconsistent progress; a wrong-length sum; a broken seeded state; a corrupt ledger inside.
  REQUIRE(msg.ParseFromString(bytes));
  msg.set_rows(100);
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(resealed(msg), 3, sum_options(), test_budget::unaccounted()), "inconsistent progress",
                       "rows 100");
  REQUIRE(msg.ParseFromString(bytes));
  msg.mutable_exact_sum()->RemoveLast();
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(resealed(msg), 3, sum_options(), test_budget::unaccounted()), "exact_sum holds 2 values",
                       "expected 3");
  REQUIRE(msg.ParseFromString(bytes));
  msg.mutable_source()->mutable_generator()->RemoveLast();
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(resealed(msg), 3, sum_options(), test_budget::unaccounted()), "3 generator words",
                       "expected 4");
  REQUIRE(msg.ParseFromString(bytes));
  for (auto& w : *msg.mutable_source()->mutable_generator()) w = 0;
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(resealed(msg), 3, sum_options(), test_budget::unaccounted()), "all zero");
  REQUIRE(msg.ParseFromString(bytes));
  msg.set_ledger(base::seal_message("\xff\xff\xff"));
  privacy::PrivacyAccountant restored(privacy::EpsDelta(2.0, 1e-6));
  EXPECT_THROWS_NAMING(CorruptInput, Sum::load(resealed(msg), 3, sum_options(), restored),
                       "privacy ledger", "not a PrivacyLedger message");

  // Files: the path is named; a missing file too.
  const std::string path = dir.file("sum.ckpt");
  testing::write_bytes(path, bytes.substr(0, bytes.size() - 7));
  EXPECT_THROWS_NAMING(CorruptInput, base::load_file<Sum>(path, 3, sum_options(), test_budget::unaccounted()), "checkpoint " + path);
  EXPECT_THROWS_NAMING(CorruptInput, base::load_file<Sum>(dir.file("missing.ckpt"), 3, sum_options(), test_budget::unaccounted()),
                       "checkpoint " + dir.file("missing.ckpt"), "cannot open");

  // Every proper prefix of the checkpoint is refused (the seal goes first).
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("checkpoint cut to " << n << " of " << bytes.size() << " bytes");
    CHECK_THROWS_AS(Sum::load(bytes.substr(0, n), 3, sum_options(), test_budget::unaccounted()), CorruptInput);
  }

  // The accountant's own ledger.
  EXPECT_THROWS_NAMING(CorruptInput, privacy::PrivacyAccountant::load(std::string("\xff\xff\xff", 3)),
                       "privacy ledger", "without the CRC-32 trailer");
  EXPECT_THROWS_NAMING(CorruptInput, privacy::PrivacyAccountant::load(base::seal_message("\xff\xff\xff")),
                       "privacy ledger", "not a PrivacyLedger message");
  const std::string ledger = acc.save();
  REQUIRE(privacy::PrivacyAccountant::load(ledger).ledger().size() == 1);
}

// Found here: a checkpoint cut at a field boundary before any release (steps = 0) lost its ledger
// (field 21) and was accepted, and a ledger cut at a charge boundary read as a shorter valid ledger.
// Fixed by the CRC-32 seal (dpstream/base/message_seal.hpp): every cut is refused.
TEST_CASE("bad input: a truncated checkpoint or ledger is refused at every cut", "[bad-input][corrupt-checkpoint]") {
  privacy::PrivacyAccountant acc(privacy::EpsDelta(2.0, 1e-6));
  const std::string bytes = vector_checkpoint(acc, /*rows=*/1);  // 1 row pending, no release yet
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("checkpoint cut to " << n << " of " << bytes.size() << " bytes");
    privacy::PrivacyAccountant restored(privacy::EpsDelta(2.0, 1e-6));
    CHECK_THROWS_AS(stream::ContinualVectorSum::load(bytes.substr(0, n), 3, sum_options(), restored),
                    CorruptInput);
  }
  acc.charge_pure("second", 0.1);
  const std::string ledger = acc.save();
  for (std::size_t n = 0; n < ledger.size(); ++n) {
    INFO("ledger cut to " << n << " of " << ledger.size() << " bytes");
    CHECK_THROWS_AS(privacy::PrivacyAccountant::load(ledger.substr(0, n)), CorruptInput);
  }
}

// =================================================================================================
// Checkpoint made with other parameters
// =================================================================================================

TEST_CASE("bad input: a checkpoint made with other parameters", "[bad-input][other-parameters]") {
  testing::TempDir dir;
  privacy::PrivacyAccountant acc(privacy::EpsDelta(2.0, 1e-6));
  const std::string bytes = vector_checkpoint(acc);
  const auto base = sum_options();
  using Sum = stream::ContinualVectorSum;

  auto refused = [&](const stream::ContinualSumOptions& o, Index d, const std::string& field, const std::string& got,
                     const std::string& want) {
    INFO("field " << field);
    EXPECT_THROWS_NAMING(CorruptInput, Sum::load(bytes, d, o, test_budget::unaccounted()), field + " is " + got,
                         "the stream being restored has " + want, "other parameters");
  };
  refused(base, 4, "dimension", "3", "4");
  auto o = base;
  o.horizon = 16;
  refused(o, 3, "horizon", "8", "16");
  o = base;
  o.block_rows = 3;
  refused(o, 3, "block_rows", "2", "3");
  o = base;
  o.privacy.row_norm_bound = 2.0;
  refused(o, 3, "row_norm_bound", "1", "2");
  o = base;
  o.privacy.relation = privacy::Neighbours::replace_row;
  refused(o, 3, "relation", "zero_out_row", "replace_row");
  o = base;
  o.privacy.target = privacy::EpsDelta(0.5, 1e-6);
  refused(o, 3, "epsilon", "1", "0.5");
  o = base;
  o.privacy.target = privacy::EpsDelta(1.0, 1e-7);
  refused(o, 3, "delta", "1e-06", "1e-07");
  o = base;
  o.privacy.calibration = privacy::Calibration::paper;
  o.privacy.target = privacy::EpsDelta(1.0, 1e-6);
  refused(o, 3, "calibration", "tight", "paper");
  o = base;
  o.strategy = stream::NoiseStrategy::honaker_tree;
  refused(o, 3, "strategy", "plain", "honaker");
  o = base;
  o.shape = privacy::SymmetricNoiseShape::goe;
  refused(o, 3, "shape", "paper_symmetric", "goe");
  o = base;
  o.privacy.noise.seed = 8;
  refused(o, 3, "seed", "7", "8");
  o = base;
  o.privacy.noise.seed.reset();
  refused(o, 3, "noise source", "seeded", "secure");
  // A vector sum's checkpoint restored as a covariance.
  EXPECT_THROWS_NAMING(CorruptInput, stream::ContinualCovariance::load(bytes, 3, base, test_budget::unaccounted()), "value_kind is vector",
                       "has covariance");
  // Through a file: the path is named too.
  const std::string path = dir.file("sum.ckpt");
  testing::write_bytes(path, bytes);
  EXPECT_THROWS_NAMING(CorruptInput, base::load_file<Sum>(path, 4, base, test_budget::unaccounted()), "checkpoint " + path, "dimension is 3");
  // The right parameters restore it.
  CHECK(base::load_file<Sum>(path, 3, base, test_budget::unaccounted()).rows() == 5);
}

// =================================================================================================
// Budget exhausted
// =================================================================================================

TEST_CASE("bad input: a release past the privacy budget", "[bad-input][budget]") {
  // The accountant: the label, the ε it would reach, the budget; the ledger is unchanged.
  privacy::PrivacyAccountant acc(privacy::EpsDelta(1.0, 1e-6));
  acc.charge_pure("first", 0.8);
  EXPECT_THROWS_NAMING(BudgetExhausted, acc.charge_pure("second", 0.5), "privacy budget exhausted", "charge 'second'",
                       "epsilon=1", "nothing was charged");
  EXPECT_THROWS_NAMING(BudgetExhausted, acc.charge_approx("approx", privacy::EpsDelta(0.5, 0.0)), "charge 'approx'");
  EXPECT_THROWS_NAMING(BudgetExhausted, acc.charge_gaussian("gauss", 1.0, 0.5), "charge 'gauss'");
  EXPECT_THROWS_NAMING(BudgetExhausted, acc.charge_zcdp("zcdp", 1.0), "charge 'zcdp'");
  CHECK(acc.ledger().size() == 1);

  // Mechanisms: nothing is released (the value is untouched).
  privacy::PrivacyAccountant spent = spent_accountant();
  privacy::SeededNoiseSource noise(1);
  VectorXd value = small_row(3);
  const privacy::GaussianMechanism gauss(1.0, privacy::EpsDelta(1.0, 1e-6));
  EXPECT_THROWS_NAMING(BudgetExhausted, gauss.add_noise(value, noise, spent, "my release"), "charge 'my release'");
  CHECK(value == small_row(3));
  EXPECT_THROWS_NAMING(BudgetExhausted, privacy::LaplaceMechanism(1, 0.5).add_noise(value, noise, spent), "'laplace'");
  EXPECT_THROWS_NAMING(BudgetExhausted, privacy::HuberMechanism(1, 1).add_noise(value, noise, spent), "'huber'");
  CHECK(value == small_row(3));
  const privacy::SymmetricGaussianMechanism sym({});
  EXPECT_THROWS_NAMING(BudgetExhausted, sym.release(small_symmetric(3), noise, spent), "budget exhausted");

  // ContinualSum: charged at construction; a fixed horizon refuses rows past it.
  EXPECT_THROWS_NAMING(BudgetExhausted, stream::ContinualVectorSum(3, sum_options(), spent), "continual vector sum");
  stream::ContinualSumOptions so = sum_options();
  so.horizon = 2;
  so.block_rows = 1;
  stream::ContinualVectorSum vsum(3, so, test_budget::unaccounted());
  vsum.update(small_row(3));
  vsum.update(small_row(3));
  EXPECT_THROWS_NAMING(BudgetExhausted, vsum.update(small_row(3)), "calibrated for 2 releases of 1 rows",
                       "at row 2");
  stream::ContinualCovariance csum(3, so, test_budget::unaccounted());
  EXPECT_THROWS_NAMING(BudgetExhausted, csum.update_block(small_rows(3, 3)), "3 more rows at row 0");
  CHECK(csum.rows() == 0);

  // PCA estimators.
  pca::GaussianPcaOptions gpo;
  gpo.mechanism.privacy.noise.seed = 1;
  pca::GaussianPca gpca(3, gpo);
  EXPECT_THROWS_NAMING(BudgetExhausted, gpca.release(small_rows(4, 3), spent), "Gaussian PCA");
  pca::NoisyPowerMethodOptions npo;
  npo.privacy.noise.seed = 1;
  pca::NoisyPowerMethod npm(3, npo);
  EXPECT_THROWS_NAMING(BudgetExhausted, npm.run(small_rows(4, 3), spent), "noisy power method");
  npo.runs = 2;
  pca::NoisyPowerMethod two_runs(3, npo);
  two_runs.run(small_rows(4, 3), test_budget::unaccounted());
  two_runs.run(small_rows(4, 3), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(BudgetExhausted, two_runs.run(small_rows(4, 3), test_budget::unaccounted()), "covers 2 run(s)", "all made");
  pca::StreamingPrivatePcaOptions spo;
  spo.horizon_rows = 2;
  spo.refresh.privacy.noise.seed = 1;
  EXPECT_THROWS_NAMING(BudgetExhausted, pca::StreamingPrivatePca(3, spo, spent), "streaming private PCA");
  pca::StreamingPrivatePca spca(3, spo, test_budget::unaccounted());
  spca.update(small_row(3));
  spca.update(small_row(3));
  EXPECT_THROWS_NAMING(BudgetExhausted, spca.update(small_row(3)), "calibrated for 2 rows", "row 2 is past it");
  pca::PrivateOjaOptions opo;
  opo.iterations = 2;
  opo.privacy.noise.seed = 1;
  pca::PrivateOja oja(opo);
  EXPECT_THROWS_NAMING(BudgetExhausted, oja.run(small_rows(4, 3), spent), "private oja");
  EXPECT_THROWS_NAMING(BudgetExhausted, pca::InputPerturbation({}).perturb(small_rows(4, 3), noise, spent),
                       "input perturbation");
  pca::FindAndProjectOptions fpp;
  fpp.oversampling = 0;
  EXPECT_THROWS_NAMING(BudgetExhausted, pca::PrivateFindAndProject(fpp).release(small_rows(4, 3), noise, spent), "pfp");

  // Completion: the trainers charge first; a stream of refreshes refuses one past R.
  const completion::RatingsMatrix ratings = small_ratings();
  completion::PrivateFrankWolfe fw(fw_options());
  EXPECT_THROWS_NAMING(BudgetExhausted, fw.train(ratings, spent), "private frank-wolfe");
  completion::AlsOptions ao = als_options();
  ao.mode = completion::AlsMode::rigorous;
  ao.mechanism = completion::AlsMechanism::gaussian;
  completion::PrivateAls als(ao);
  EXPECT_THROWS_NAMING(BudgetExhausted, als.train(ratings, spent), "private als");
  CHECK(spent.ledger().size() == 1);

  completion::StreamingCompletionOptions sco;
  sco.items = 4;
  sco.refresh_every = 1;
  sco.planned_refreshes = 1;
  int trained = 0;
  completion::StreamingCompletion sc(sco, [&](const completion::RatingsMatrix&, const completion::RefreshBudget&,
                                              privacy::PrivacyAccountant&) {
    ++trained;
    return completion::RatingPredictor([](Index, Index) { return 3.0; });
  });
  sc.add_user({{0, 4.0}});
  EXPECT_THROWS_NAMING(BudgetExhausted, sc.add_user({{1, 2.0}}), "refresh 2 refused", "split into 1 refreshes",
                       "1 users wait");
  CHECK(sc.users() == 2);  // the user is kept
  CHECK(trained == 1);
  CHECK(sc.has_model());
}

// =================================================================================================
// ε ≤ 0 (and NaN / +inf ε)
// =================================================================================================

TEST_CASE("bad input: epsilon <= 0, NaN or infinite", "[bad-input][epsilon]") {
  for (const double eps : {0.0, -1.0, -0.0, kNaN, kInf}) {
    INFO("epsilon " << eps);
    const std::string got = "got " + base::format_value(eps);
    // Every estimator and mechanism takes its target as an EpsDelta, refused here, before any of them.
    EXPECT_THROWS_NAMING(InvalidParameter, privacy::EpsDelta(eps, 1e-6), "epsilon must be finite and > 0", got);
    // The entry points that take ε as a plain number.
    EXPECT_THROWS_NAMING(InvalidParameter, privacy::LaplaceMechanism(1.0, eps), "epsilon", got);
    EXPECT_THROWS_NAMING(InvalidParameter, privacy::HuberMechanism::for_epsilon(1.0, eps), "epsilon", got);
    privacy::PrivacyAccountant acc(privacy::EpsDelta(1.0, 1e-6));
    EXPECT_THROWS_NAMING(InvalidParameter, acc.charge_pure("x", eps), "epsilon", got);
    CHECK(acc.ledger().empty());
    EXPECT_THROWS_NAMING(InvalidParameter, privacy::Zcdp(eps), "rho", got);
    privacy::SeededNoiseSource noise(1);
    EXPECT_THROWS_NAMING(InvalidParameter,
                         pca::private_iteration_count(small_symmetric(3), eps, pca::EntryChange::single_entry, noise, test_budget::unaccounted()),
                         "epsilon");
    EXPECT_THROWS_NAMING(InvalidParameter,
                         completion::faithful_noise_variance_for_epsilon(completion::AlsMechanism::laplace, eps),
                         "epsilon");
  }
}

// =================================================================================================
// δ ≥ 1 (and δ < 0, NaN; δ = 0 where a Gaussian needs δ > 0)
// =================================================================================================

TEST_CASE("bad input: delta >= 1, negative or NaN; delta = 0 for a Gaussian", "[bad-input][delta]") {
  for (const double delta : {1.0, 1.5, -1e-6, kNaN, kInf}) {
    INFO("delta " << delta);
    const std::string got = "got " + base::format_value(delta);
    EXPECT_THROWS_NAMING(InvalidParameter, privacy::EpsDelta(1.0, delta), "delta must be in [0, 1)", got);
    EXPECT_THROWS_NAMING(InvalidParameter, privacy::GaussianMechanism::with_sigma(1.0, 5.0).guarantee(delta), "delta");
    completion::AlsOptions ao = als_options();
    ao.report_delta = delta;
    EXPECT_THROWS_NAMING(InvalidParameter, completion::PrivateAls(ao), "report_delta must be in (0, 1)", got);
    EXPECT_THROWS_NAMING(InvalidParameter, pca::gaussian_dp_epsilon(1.0, delta), "delta must be in (0, 1)", got);
    EXPECT_THROWS_NAMING(InvalidParameter,
                         completion::faithful_noise_variance_for_epsilon(completion::AlsMechanism::gaussian, 1.0, 5.0, delta),
                         "delta must be in (0, 1)");
  }

  // δ = 0 is pure DP: valid for an EpsDelta, refused by every Gaussian calibration (naming delta).
  const privacy::EpsDelta pure(1.0, 0.0);
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::GaussianMechanism(1.0, pure), "delta must be > 0", "got 0");
  privacy::SymmetricGaussianMechanism::Options so;
  so.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, privacy::SymmetricGaussianMechanism{so}, "delta must be > 0");
  stream::ContinualSumOptions cso = sum_options();
  cso.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, stream::ContinualVectorSum(3, cso, test_budget::unaccounted()), "delta must be > 0");
  pca::GaussianPcaOptions gpo;
  gpo.mechanism.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::GaussianPca(3, gpo), "delta must be > 0");
  pca::NoisyPowerMethodOptions npo;
  npo.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::NoisyPowerMethod(3, npo), "delta must be > 0");
  pca::PrivateOjaOptions opo;
  opo.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::PrivateOja{opo}, "target.delta must be > 0");
  pca::InputPerturbationOptions ipo;
  ipo.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::InputPerturbation{ipo}, "delta must be in (0, 1)", "got 0");
  pca::FindAndProjectOptions fpp;
  fpp.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::PrivateFindAndProject{fpp}, "delta");
  completion::FrankWolfeOptions fo = fw_options();
  fo.privacy.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, completion::PrivateFrankWolfe{fo}, "target.delta must be > 0");
  completion::AlsOptions ao = als_options();
  ao.mode = completion::AlsMode::rigorous;
  ao.mechanism = completion::AlsMechanism::gaussian;
  ao.target = pure;
  EXPECT_THROWS_NAMING(InvalidParameter, completion::PrivateAls{ao}, "target.delta must be > 0");
  completion::StreamingCompletionOptions sco;
  sco.budget = pure;
  EXPECT_THROWS_NAMING(InvalidParameter,
                       completion::StreamingCompletion(sco, [](const completion::RatingsMatrix&, const completion::RefreshBudget&,
                                                               privacy::PrivacyAccountant&) {
                         return completion::RatingPredictor([](Index, Index) { return 0.0; });
                       }),
                       "delta must be > 0");
}

// Found here: NoisyPowerMethod (and so StreamingPrivatePca) with the paper calibration and δ = 0 was
// accepted with σ = Δ·2ε⁻¹√(4R ln(1/δ)) = +inf; noisy_power_sigma now refuses δ = 0 on both paths.
TEST_CASE("bad input: paper-calibrated noisy power method refuses delta = 0", "[bad-input][delta]") {
  pca::NoisyPowerMethodOptions npo;
  npo.privacy.calibration = privacy::Calibration::paper;
  npo.privacy.target = privacy::EpsDelta(0.5, 0.0);
  EXPECT_THROWS_NAMING(InvalidParameter, pca::NoisyPowerMethod(3, npo), "delta");
  pca::StreamingPrivatePcaOptions spo;
  spo.horizon_rows = 4;
  spo.refresh.privacy.calibration = privacy::Calibration::paper;
  spo.refresh.privacy.target = privacy::EpsDelta(0.5, 0.0);
  EXPECT_THROWS_NAMING(InvalidParameter, pca::StreamingPrivatePca(3, spo, test_budget::unaccounted()), "delta");
}

// =================================================================================================
// k > d
// =================================================================================================

TEST_CASE("bad input: k larger than the dimension", "[bad-input][k-too-large]") {
  privacy::SeededNoiseSource noise(1);
  pca::GaussianPcaOptions gpo;
  gpo.k = 4;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::GaussianPca(3, gpo), "GaussianPca", "k must be in [1, 3]", "got 4");
  pca::NoisyPowerMethodOptions npo;
  npo.k = 4;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::NoisyPowerMethod(3, npo), "NoisyPowerMethod", "k must be in [1, 3]", "got 4");
  pca::StreamingPrivatePcaOptions spo;
  spo.horizon_rows = 4;
  spo.refresh.k = 4;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::StreamingPrivatePca(3, spo, test_budget::unaccounted()), "k must be in [1, 3]", "got 4");
  pca::FplOptions fpo;
  fpo.k = 4;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::FplOnlinePca(3, fpo), "FplOnlinePca", "k must be in [1, 3]", "got 4");
  pca::InputPerturbationOptions ipo;
  ipo.k = 4;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::InputPerturbation(ipo).release(small_rows(5, 3), noise, test_budget::unaccounted()), "k = 4",
                       "min(m, n) = 3");
  pca::FindAndProjectOptions fpp;
  fpp.k = 3;
  fpp.oversampling = 1;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::PrivateFindAndProject(fpp).release(small_rows(5, 3), noise, test_budget::unaccounted()),
                       "k + oversampling = 3 + 1");
  pca::RangeFinderOptions rfo;
  rfo.k = 4;
  rfo.oversampling = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::PrivateRangeFinder(rfo).release(small_rows(5, 3), noise, test_budget::unaccounted()), "4");
  pca::PpiOptions ppo;
  ppo.iterations = 2;
  ppo.coherence_bound = 3;
  ppo.k = 4;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::private_rank_k(small_symmetric(3), ppo, noise, test_budget::unaccounted()), "k must be in [1, 3]",
                       "got 4");
  pca::PrivateOjaOptions opo;
  opo.iterations = 2;
  opo.components = 4;
  opo.privacy.noise.seed = 1;
  pca::PrivateOja oja(opo);
  EXPECT_THROWS_NAMING(InvalidParameter, oja.run_components(small_rows(5, 3), test_budget::unaccounted()), "components 4");
  EXPECT_THROWS_NAMING(InvalidParameter, pca::top_k_eigen(small_symmetric(3), 4), "k must be in [1, 3]", "got 4");
  EXPECT_THROWS_NAMING(InvalidParameter, pca::top_k_svd(small_rows(5, 3), 4), "k must be in [1, 3]", "got 4");
  EXPECT_THROWS_NAMING(InvalidParameter, pca::sum_top_k_eigenvalues(small_symmetric(3), 4), "k must be in [1, 3]");

  // Completion has no k ≤ d constraint: ALS's rank may exceed the item count (each least-squares
  // solve is regularised by λ > 0, so it stays well posed), and Frank–Wolfe has no rank at all.
  completion::AlsOptions ao = als_options();
  ao.rank = 6;  // 4 items
  completion::PrivateAls als(ao);
  const completion::AlsResult model = als.train(small_ratings(), test_budget::unaccounted());
  CHECK(model.item_factors.cols() == 6);
  CHECK(std::isfinite(model.predict(0, 0)));
}

// =================================================================================================
// rank 0
// =================================================================================================

TEST_CASE("bad input: rank (k) 0", "[bad-input][rank-zero]") {
  privacy::SeededNoiseSource noise(1);
  pca::GaussianPcaOptions gpo;
  gpo.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::GaussianPca(3, gpo), "k must be in [1, 3]", "got 0");
  pca::NoisyPowerMethodOptions npo;
  npo.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::NoisyPowerMethod(3, npo), "k must be in [1, 3]", "got 0");
  pca::StreamingPrivatePcaOptions spo;
  spo.horizon_rows = 4;
  spo.refresh.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::StreamingPrivatePca(3, spo, test_budget::unaccounted()), "got 0");
  pca::FplOptions fpo;
  fpo.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::FplOnlinePca(3, fpo), "k must be in [1, 3]", "got 0");
  pca::InputPerturbationOptions ipo;
  ipo.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::InputPerturbation{ipo}, "k must be >= 1", "got 0");
  pca::FindAndProjectOptions fpp;
  fpp.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::PrivateFindAndProject{fpp}, "k must be >= 1", "got 0");
  pca::RangeFinderOptions rfo;
  rfo.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::PrivateRangeFinder{rfo}, "k must be >= 1", "got 0");
  pca::PpiOptions ppo;
  ppo.iterations = 2;
  ppo.coherence_bound = 3;
  ppo.k = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::private_rank_k(small_symmetric(3), ppo, noise, test_budget::unaccounted()), "k must be >= 1", "got 0");
  pca::PrivateOjaOptions opo;
  opo.components = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, pca::PrivateOja{opo}, "components must be >= 1", "got 0");
  EXPECT_THROWS_NAMING(InvalidParameter, pca::top_k_eigen(small_symmetric(3), 0), "got 0");
  EXPECT_THROWS_NAMING(InvalidParameter, pca::top_k_svd(small_rows(5, 3), 0), "got 0");
  completion::AlsOptions ao = als_options();
  ao.rank = 0;
  EXPECT_THROWS_NAMING(InvalidParameter, completion::PrivateAls{ao}, "PrivateAls", "rank must be >= 1", "got 0");
}

// =================================================================================================
// Unknown user or item
// =================================================================================================

TEST_CASE("bad input: an unknown user or item", "[bad-input][unknown-id]") {
  testing::TempDir dir;
  const completion::RatingsMatrix ratings = small_ratings();  // 3 users × 4 items

  // Models: predict names the user and the item and the model's shape.
  completion::PrivateAls als(als_options());
  const completion::AlsResult model = als.train(ratings, test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidParameter, model.predict(3, 0), "user 3", "outside 3 x 4");
  EXPECT_THROWS_NAMING(InvalidParameter, model.predict(0, 4), "item 4", "outside 3 x 4");
  EXPECT_THROWS_NAMING(InvalidParameter, model.predict(-1, 0), "user -1");
  completion::PrivateFrankWolfe fw(fw_options());
  const completion::FrankWolfeResult fw_model = fw.train(ratings, test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidParameter, fw_model.predict(3, 0), "user 3 outside [0, 3)");
  EXPECT_THROWS_NAMING(InvalidParameter, fw_model.predict(0, 4), "item 4 outside [0, 4)");
  EXPECT_THROWS_NAMING(InvalidParameter, completion::FrankWolfeUser(fw_options(), ratings, 3), "user 3 outside [0, 3)");
  EXPECT_THROWS_NAMING(InvalidParameter,
                       completion::local_user_factor(als_options(), ratings, 5, model.item_factors), "user 5");
  // Scoring a test set with an unknown user stops at it.
  const completion::RatingPredictor predict = [&](Index u, Index i) { return model.predict(u, i); };
  EXPECT_THROWS_NAMING(InvalidParameter, completion::rmse(predict, {{0, 0, 4.0}, {7, 0, 3.0}}), "user 7");

  // The ratings matrix itself.
  EXPECT_THROWS_NAMING(InvalidParameter, ratings.user_count(3), "user 3 outside [0, 3)");
  EXPECT_THROWS_NAMING(InvalidParameter, ratings.item_count(9), "item 9 outside [0, 4)");
  EXPECT_THROWS_NAMING(InvalidParameter, completion::RatingsMatrix(2, 2, {{0, 0, 1}, {0, 2, 1}}), "rating 1",
                       "item outside [0, 2)");

  // External ids: the look-ups say "not there" (nullopt); choosing unknown items is an error.
  const std::string path = dir.file("r.csv");
  write_text(path, "1,10,4\n2,11,3\n");
  const completion::RatingsTable table = completion::read_ratings(path);
  CHECK_FALSE(table.user_index(9999).has_value());
  CHECK_FALSE(table.item_index(12).has_value());
  CHECK(table.user_index(2).has_value());
  EXPECT_THROWS_NAMING(InvalidParameter, completion::keep_items(table, {10, 12}), "item id 12 is not in the table");

  // A streaming catalogue: an item outside it; no model before the first refresh.
  completion::StreamingCompletionOptions sco;
  sco.items = 4;
  sco.refresh_every = 5;
  completion::StreamingCompletion sc(sco, [](const completion::RatingsMatrix&, const completion::RefreshBudget&,
                                             privacy::PrivacyAccountant&) {
    return completion::RatingPredictor([](Index, Index) { return 0.0; });
  });
  EXPECT_THROWS_NAMING(InvalidParameter, sc.add_user({{4, 3.0}}), "user 0", "item 4", "outside [0, 4)");
  EXPECT_THROWS_NAMING(InvalidParameter, sc.model(), "no model before the first refresh");
}

// Found here: a Frank–Wolfe model of T = 1 round has no broadcast, and FrankWolfeResult::predict
// accepted any item (returning 0); the result now keeps the catalogue size (`items`).
TEST_CASE("bad input: Frank-Wolfe predict refuses an unknown item with one round", "[bad-input][unknown-id]") {
  completion::FrankWolfeOptions fo = fw_options();
  fo.iterations = 1;
  completion::PrivateFrankWolfe fw(fo);
  const completion::FrankWolfeResult model = fw.train(small_ratings(), test_budget::unaccounted());
  EXPECT_THROWS_NAMING(InvalidParameter, model.predict(0, 4), "item 4");
}

#undef EXPECT_THROWS_NAMING

}  // namespace test_bad_input
