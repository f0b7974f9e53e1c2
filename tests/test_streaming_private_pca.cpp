// StreamingPrivatePca's checkpoints (save / load, streaming_private_pca.hpp): the estimator fits the
// streaming contract (estimator.hpp), a restored one continues bit for bit, and its restore obeys the
// restore rules (stream/restore_rules.hpp): the accountant is never lowered, and a refresh published
// after the checkpoint is never published again on other rows.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/estimator.hpp"
#include "dpstream/pca/streaming_private_pca.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "temp_dir.hpp"
#include "unaccounted.hpp"

namespace test_streaming_private_pca {

using namespace dpstream;
using Catch::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using pca::StreamingPrivatePca;
using privacy::EpsDelta;
using privacy::PrivacyAccountant;

static_assert(StreamingEstimator<StreamingPrivatePca, Index, const pca::StreamingPrivatePcaOptions&,
                                 const privacy::Budget&>);

namespace {

constexpr Index kDim = 6;

pca::StreamingPrivatePcaOptions options(const std::string& journal = "") {
  pca::StreamingPrivatePcaOptions o;
  o.horizon_rows = 65;  // 7 refreshes: 6 of 10 rows, then one at the horizon
  o.refresh_every = 10;
  o.refresh.k = 2;
  o.refresh.privacy.noise.seed = 5;
  o.journal = journal;
  return o;
}

// Seeded rows of norm ≤ 0.9, inside the default row bound 1 after rounding.
MatrixXd rows(Index n, unsigned seed) {
  std::srand(seed);
  MatrixXd x = MatrixXd::Random(n, kDim);
  for (Index i = 0; i < n; ++i) x.row(i) *= 0.9 / std::max(0.9, x.row(i).norm());
  return x;
}

// Every refresh's subspace, as published.
struct Published {
  std::vector<MatrixXd> vectors;
  std::vector<Eigen::VectorXd> values;
  void listen(StreamingPrivatePca& s) {
    s.subscribe([this](const StreamingPrivatePca::Refresh& r) {
      vectors.push_back(r.subspace.vectors);
      values.push_back(r.subspace.values);
    });
  }
};

}  // namespace

TEST_CASE("StreamingPrivatePca: a restored estimator continues bit for bit and adopts the saved ledger",
          "[streaming_pca][checkpoint]") {
  const MatrixXd x = rows(65, 3);
  PrivacyAccountant accountant(EpsDelta(2.0, 1e-6));
  StreamingPrivatePca original(kDim, options(), accountant);
  original.update_block(x.topRows(25));  // refreshes at 10 and 20, 5 rows pending
  const std::string bytes = original.save();
  Published before;
  before.listen(original);
  original.update_block(x.bottomRows(40));  // refreshes 3-7
  REQUIRE(before.vectors.size() == 5);

  PrivacyAccountant fresh(EpsDelta(2.0, 1e-6));
  StreamingPrivatePca restored = StreamingPrivatePca::load(bytes, kDim, options(), fresh);
  CHECK(fresh.save() == accountant.save());  // the checkpoint's ledger, adopted: nothing charged twice
  CHECK(restored.rows() == 25);
  CHECK(restored.refreshes() == 2);
  Published after;
  after.listen(restored);
  restored.update_block(x.bottomRows(40));
  REQUIRE(after.vectors.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(after.vectors[i] == before.vectors[i]);  // the same noise: bit for bit
    CHECK(after.values[i] == before.values[i]);
  }

  // Saved without an accountant: the one given now is charged for the stream, as construction would.
  StreamingPrivatePca unaccounted(kDim, options(), test_budget::unaccounted());
  unaccounted.update_block(x.topRows(25));
  PrivacyAccountant later(EpsDelta(2.0, 1e-6));
  StreamingPrivatePca charged = StreamingPrivatePca::load(unaccounted.save(), kDim, options(), later);
  CHECK(later.ledger().size() == 1);
  CHECK(later.spent().epsilon == Approx(accountant.spent().epsilon));
}

TEST_CASE("StreamingPrivatePca: a checkpoint of other options or damaged bytes is refused, naming why",
          "[streaming_pca][checkpoint]") {
  StreamingPrivatePca s(kDim, options(), test_budget::unaccounted());
  s.update_block(rows(25, 3));
  const std::string bytes = s.save();
  pca::StreamingPrivatePcaOptions other = options();
  other.refresh_every = 5;
  CHECK_THROWS_NAMING(StreamingPrivatePca::load(bytes, kDim, other, test_budget::unaccounted()), CorruptInput,
                      Contains("streaming PCA checkpoint: refresh_every is 10"));
  other = options();
  other.refresh.privacy.noise.seed = 6;
  CHECK_THROWS_NAMING(StreamingPrivatePca::load(bytes, kDim, other, test_budget::unaccounted()), CorruptInput,
                      Contains("seed is 5"));
  CHECK_THROWS_NAMING(StreamingPrivatePca::load(bytes, kDim + 1, options(), test_budget::unaccounted()), CorruptInput,
                      Contains("dimension is 6"));
  CHECK_THROWS_AS(StreamingPrivatePca::load(bytes.substr(0, bytes.size() / 2), kDim, options(),
                                            test_budget::unaccounted()),
                  CorruptInput);
}

TEST_CASE("StreamingPrivatePca: a restore never lowers the accountant nor re-publishes a refresh on other rows",
          "[streaming_pca][checkpoint][restore][journal][privacy]") {
  testing::TempDir dir;
  const pca::StreamingPrivatePcaOptions o = options(dir.file("pca.journal"));
  const MatrixXd x = rows(35, 3);
  PrivacyAccountant shared(EpsDelta(3.0, 1e-6));
  std::string checkpoint;
  MatrixXd third;  // refresh 3, published after the checkpoint
  {
    StreamingPrivatePca s(kDim, o, shared);
    s.update_block(x.topRows(25));
    checkpoint = s.save();
    s.update_block(x.bottomRows(10));
    third = s.current().vectors;
  }
  shared.charge_pure("since the checkpoint", 0.5);  // the checkpoint's ledger is now the lower one
  const std::string spent = shared.save();

  StreamingPrivatePca same_rows = StreamingPrivatePca::load(checkpoint, kDim, o, shared);
  CHECK(shared.save() == spent);  // merged, never lowered: the later charge stays
  same_rows.update_block(x.bottomRows(10));  // the same rows: the journalled refresh, again
  CHECK(same_rows.current().vectors == third);

  StreamingPrivatePca other_rows = StreamingPrivatePca::load(checkpoint, kDim, o, shared);
  bool published = false;
  other_rows.subscribe([&](const StreamingPrivatePca::Refresh&) { published = true; });
  CHECK_THROWS_AS(other_rows.update_block(0.5 * x.bottomRows(10)), InvalidParameter);
  CHECK_FALSE(published);
  CHECK_THROWS_AS(other_rows.update(x.row(0).transpose()), InvalidParameter);  // unusable after a refusal
  CHECK(shared.save() == spent);

  CHECK_THROWS_NAMING(StreamingPrivatePca::load(checkpoint, kDim, options(), shared), CorruptInput,
                      Contains("streaming PCA checkpoint: restore refused") && Contains("release journal"));
}

}  // namespace test_streaming_private_pca
