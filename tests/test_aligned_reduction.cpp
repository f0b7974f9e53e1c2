// Reductions over memory Eigen did not allocate give the same bits wherever the values sit: the
// linalg helper, RowGuard's unit scaling, RegretMeter::add_gains, RatingsMatrix::mean (a sparse
// matrix's values) and VectorAccumulator::update_block (the column sums of the caller's rows).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/linalg/aligned_reduction.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/stream/accumulators.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "sanitized_build.hpp"

namespace test_aligned_reduction {

using namespace dpstream;

namespace {

// Values of both signs over twelve binades: the order of the additions shows in the last bits.
Eigen::VectorXd spread_values(Eigen::Index n, std::uint64_t seed) {
  privacy::SeededNoiseSource source(seed);  // any fixed data will do
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = (source.uniform_open() - 0.3) * static_cast<double>(1 << (i % 12));
  return v;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// n doubles starting `offset` doubles past a 64-byte boundary (the widest packet, AVX-512's) of `storage`.
double* placed(std::vector<double>& storage, Eigen::Index n, int offset) {
  storage.assign(static_cast<std::size_t>(n) + 16, 0.0);
  auto address = reinterpret_cast<std::uintptr_t>(storage.data());
  const auto skip = static_cast<std::ptrdiff_t>(((64 - address % 64) % 64) / sizeof(double));
  return storage.data() + skip + offset;
}

}  // namespace

TEST_CASE("aligned_sum: a VectorXd's sum() at every offset") {
  std::vector<double> storage;
  for (const Eigen::Index n : std::vector<Eigen::Index>{0, 1, 7, 33, 1001}) {
    const Eigen::VectorXd held = spread_values(n, 7 + static_cast<std::uint64_t>(n));
    for (int offset = 0; offset < 8; ++offset) {
      double* at = placed(storage, n, offset);
      Eigen::Map<Eigen::VectorXd>(at, n) = held;
      INFO("n = " << n << ", offset " << offset << " doubles");
      CHECK(same_bits(linalg::aligned_sum(at, n), held.sum()));
      const auto stable_norm = [](const auto& v) { return v.stableNorm(); };
      CHECK(same_bits(linalg::reduce_as_aligned(at, n, stable_norm), held.stableNorm()));
    }
  }
}

TEST_CASE("RowGuard unit scaling: the same row scales to the same bits wherever it sits") {
  // Entries up to ~1e163 overflow norm()'s squares, so stableNorm() decides: the path whose blocks
  // followed the row's address (norm() itself reads from the first entry wherever the row is).
  const Eigen::Index d = 784;
  stream::RowGuardOptions options{d, 1.0, stream::OverNormPolicy::clip};
  options.scaling = stream::RowScaling::unit;
  std::vector<double> storage;
  for (std::uint64_t r = 0; r < 20; ++r) {
    const Eigen::VectorXd row = spread_values(d, 100 + r) * 1e160;
    Eigen::VectorXd own = row;  // the caller's own VectorXd: the reference bits
    stream::RowGuard reference(options);
    reference.admit(own);
    for (int offset = 1; offset < 8; ++offset) {
      Eigen::Map<Eigen::VectorXd> elsewhere(placed(storage, d, offset), d);
      elsewhere = row;
      stream::RowGuard guard(options);
      guard.admit(elsewhere);
      INFO("row " << r << ", offset " << offset << " doubles");
      REQUIRE(std::memcmp(elsewhere.data(), own.data(), sizeof(double) * d) == 0);
    }
  }
}

TEST_CASE("RegretMeter::add_gains: the same total wherever the caller's gains sit") {
  const Eigen::Index n = 1001;
  const Eigen::VectorXd held = spread_values(n, 5).cwiseAbs();  // gains are nonnegative
  eval::RegretMeter reference(3, 1, {"learner"});
  reference.add_gains(0, held);
  std::vector<double> storage;
  for (int offset = 1; offset < 8; ++offset) {
    eval::RegretMeter meter(3, 1, {"learner"});
    Eigen::Map<Eigen::VectorXd> elsewhere(placed(storage, n, offset), n);
    elsewhere = held;
    meter.add_gains(0, elsewhere);
    INFO("offset " << offset << " doubles");
    CHECK(same_bits(meter.gain(0), reference.gain(0)));
  }
}

TEST_CASE("VectorAccumulator::update_block: the same column sums wherever the caller's rows sit") {
  // 1001 rows (odd: every column of the block starts at another residue) of d = 5, column-major as
  // a MatrixXd, at every offset; the reference is each column's sum held in a VectorXd.
  const Eigen::Index n = 1001, d = 5;
  Eigen::MatrixXd held(n, d);
  for (Eigen::Index j = 0; j < d; ++j) held.col(j) = spread_values(n, 40 + static_cast<std::uint64_t>(j));
  Eigen::VectorXd expected(d);
  for (Eigen::Index j = 0; j < d; ++j) expected(j) = Eigen::VectorXd(held.col(j)).sum();
  std::vector<double> storage;
  for (int offset = 0; offset < 8; ++offset) {
    Eigen::Map<Eigen::MatrixXd> elsewhere(placed(storage, n * d, offset), n, d);
    elsewhere = held;
    stream::VectorAccumulator sum(d);
    sum.update_block(elsewhere);
    INFO("offset " << offset << " doubles");
    for (Eigen::Index j = 0; j < d; ++j) CHECK(same_bits(sum.sum()(j), expected(j)));
  }
}

TEST_CASE("RatingsMatrix::mean: the same bits whichever address the heap gives its values") {
  // The sparse matrix's values come from operator new[]. Between builds (all kept) a live block of
  // 64 KiB + 16·(s mod 4) bytes, larger than any a build frees, is taken from the top of the heap
  // and moves the next build's values by 16 bytes more each time. The reference is the values' sum
  // held in a VectorXd.
  privacy::SeededNoiseSource source(99);
  std::vector<completion::Rating> ratings;
  for (int i = 0; i < 3000; ++i)
    ratings.push_back({i % 97, (i * 31) % 89, (source.uniform_open() - 0.3) * static_cast<double>(1 << (i % 12))});
  const completion::RatingsMatrix first(97, 89, ratings);
  const auto& by_user = first.by_user();
  const Eigen::VectorXd held = Eigen::Map<const Eigen::VectorXd>(by_user.valuePtr(), by_user.nonZeros());
  const double expected = held.sum() / static_cast<double>(first.size());
  std::vector<std::vector<char>> shifts;
  std::vector<std::unique_ptr<completion::RatingsMatrix>> builds;
  std::set<std::uintptr_t> residues;
  for (int s = 0; s < 16; ++s) {
    shifts.emplace_back(65536 + 16 * static_cast<std::size_t>(s % 4) + 8);
    builds.push_back(std::make_unique<completion::RatingsMatrix>(97, 89, ratings));
    const auto address = reinterpret_cast<std::uintptr_t>(builds.back()->by_user().valuePtr());
    residues.insert(address % 64);
    INFO("build " << s << ", values " << address % 64 << " bytes past a 64-byte boundary");
    CHECK(same_bits(builds.back()->mean(), expected));
  }
  // Under glibc's heap the builds put the values at more than one alignment, or the check above
  // tested nothing. (The sanitizers' allocator places blocks of this size by its own rules.)
  if (!dpstream::testing::kSanitizedBuild) CHECK(residues.size() >= 2);
}

}  // namespace test_aligned_reduction
