// The release journal (base/release_journal.hpp): a stream restored from a checkpoint re-makes the
// releases published after it with the same noise, so fed other rows it would publish two versions
// of one release differing by exactly the rows' difference. With a journal, that release is
// refused before any subscriber sees it; the same rows give the same releases as before. The same
// for streaming Oja's steps.
#include <filesystem>
#include <fstream>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/release_journal.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "temp_dir.hpp"
#include "unaccounted.hpp"

namespace test_release_journal {

using namespace dpstream;
using namespace dpstream::stream;

namespace {

ContinualSumOptions journalled(const std::string& path, std::optional<std::uint64_t> seed) {
  ContinualSumOptions o;
  o.horizon = 8;
  o.block_rows = 2;
  o.privacy.noise.seed = seed;
  o.journal = path;
  return o;
}

Eigen::VectorXd row(double a, double b) { return (Eigen::VectorXd(2) << a, b).finished(); }

}  // namespace

TEST_CASE("after a restore, a release on other rows than the one published is refused unpublished", "[journal][privacy]") {
  for (const std::optional<std::uint64_t> seed : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{3}}) {
    INFO((seed ? "seeded" : "secure") << " noise");
    testing::TempDir dir;
    const ContinualSumOptions o = journalled(dir.file("releases.journal"), seed);
    std::string checkpoint;
    Eigen::MatrixXd published;
    {
      ContinualCovariance sum(2, o, test_budget::unaccounted());
      sum.update(row(0.6, 0.0));
      sum.update(row(0.0, 0.6));  // release 1
      checkpoint = sum.save();
      sum.update(row(0.3, 0.3));
      sum.update(row(0.5, -0.5));  // release 2, published; then the process crashes
      published = sum.noisy_prefix();
    }
    ContinualCovariance restored = ContinualCovariance::load(checkpoint, 2, o, test_budget::unaccounted());
    int seen = 0;
    restored.subscribe([&](const ContinualCovariance::Release&) { ++seen; });
    restored.update(row(0.3, 0.3));
    // Once only: the refusal leaves the stream refusing everything after (below).
    CHECK_THROWS_WITH(restored.update(row(0.5, 0.5)), Catch::Contains("differs from the one published before the restore"));
    CHECK(seen == 0);  // no subscriber saw it
    CHECK_THROWS_AS(restored.noisy_prefix(), InvalidParameter);  // nor can anyone read it
    CHECK_THROWS_AS(restored.save(), InvalidParameter);
    CHECK_THROWS_AS(restored.update(row(0.1, 0.1)), InvalidParameter);

    // From the checkpoint again, with the rows fed before: the same release, then new ones recorded.
    ContinualCovariance again = ContinualCovariance::load(checkpoint, 2, o, test_budget::unaccounted());
    again.update(row(0.3, 0.3));
    again.update(row(0.5, -0.5));
    CHECK(again.noisy_prefix() == published);  // the secure source's state is restored too
    again.update(row(0.2, 0.0));
    again.update(row(0.0, 0.2));  // release 3: new, appended
    CHECK(std::filesystem::file_size(o.journal) == 40 + 3 * 40);  // header, then a record a release
  }
}

TEST_CASE("what the user must keep: the journal, with the checkpoint, of the same stream", "[journal]") {
  testing::TempDir dir;
  const ContinualSumOptions o = journalled(dir.file("a.journal"), 5);
  ContinualCovariance sum(2, o, test_budget::unaccounted());
  sum.update_block(Eigen::MatrixXd::Constant(4, 2, 0.5));  // releases 1 and 2
  const std::string checkpoint = sum.save();

  // A new stream refuses an existing journal (it is another stream's).
  CHECK_THROWS_NAMING(ContinualCovariance(2, o, test_budget::unaccounted()), InvalidParameter, Catch::Contains("exists"));
  // The checkpoint of a stream with a journal is restored with it, and only with it.
  ContinualSumOptions none = o;
  none.journal.clear();
  CHECK_THROWS_NAMING(ContinualCovariance::load(checkpoint, 2, none, test_budget::unaccounted()), CorruptInput,
                      Catch::Contains("release journal"));
  ContinualSumOptions missing = o;
  missing.journal = dir.file("missing.journal");
  CHECK_THROWS_AS(ContinualCovariance::load(checkpoint, 2, missing, test_budget::unaccounted()), CorruptInput);
  ContinualSumOptions other = o;
  other.journal = dir.file("b.journal");
  ContinualCovariance another(2, other, test_budget::unaccounted());
  CHECK_THROWS_NAMING(ContinualCovariance::load(checkpoint, 2, other, test_budget::unaccounted()), CorruptInput,
                      Catch::Contains("another stream"));
  // An older copy of the journal (fewer releases than the checkpoint) is refused.
  std::filesystem::copy_file(o.journal, dir.file("old.journal"));
  std::filesystem::resize_file(dir.file("old.journal"), 40 + 40);
  ContinualSumOptions old = o;
  old.journal = dir.file("old.journal");
  CHECK_THROWS_NAMING(ContinualCovariance::load(checkpoint, 2, old, test_budget::unaccounted()), CorruptInput, Catch::Contains("holds 1"));
  // A record cut by a crash (never fdatasync'ed, so never published) is dropped.
  {
    std::ofstream torn(o.journal, std::ios::binary | std::ios::app);
    torn << "partial";
  }
  ContinualCovariance restored = ContinualCovariance::load(checkpoint, 2, o, test_budget::unaccounted());
  restored.update_block(Eigen::MatrixXd::Constant(2, 2, 0.5));
  CHECK(std::filesystem::file_size(o.journal) == 40 + 3 * 40);
}

TEST_CASE("streaming Oja: a restored step on other rows is refused unpublished; the same rows, the same step", "[journal][privacy]") {
  for (const std::optional<std::uint64_t> seed : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{3}}) {
    INFO((seed ? "seeded" : "secure") << " noise");
    testing::TempDir dir;
    pca::StreamingPrivateOjaOptions o;
    o.k = 1;
    o.batch_rows = 2;
    o.batch_growth = 1.0;  // fixed minibatches of 2: the second block is step 2
    o.privacy.noise.seed = seed;
    o.scale_share = 0.25;  // the histogram's release is journalled too
    o.journal = dir.file("oja.journal");
    Eigen::MatrixXd first(2, 3), second(2, 3), other(2, 3);
    first << 0.5, 0.1, 0.0, 0.2, 0.6, 0.1;
    second << 0.3, 0.3, 0.3, -0.4, 0.2, 0.5;
    other = second;
    other(1, 2) = -0.5;
    std::string checkpoint;
    Eigen::MatrixXd published;
    {
      pca::StreamingPrivateOja oja(3, o, test_budget::unaccounted());
      oja.update_block(first);
      checkpoint = oja.save();
      oja.subscribe([&](const pca::StreamingPrivateOja::Release& r) { published = r.noisy_sum; });
      oja.update_block(second);  // step 2, published; then the process crashes
    }
    pca::StreamingPrivateOja restored = pca::StreamingPrivateOja::load(checkpoint, 3, o);
    int seen = 0;
    restored.subscribe([&](const pca::StreamingPrivateOja::Release&) { ++seen; });
    CHECK_THROWS_WITH(restored.update_block(other), Catch::Contains("differs from the one published before the restore"));
    CHECK(seen == 0);
    CHECK_THROWS_AS(restored.save(), InvalidParameter);
    pca::StreamingPrivateOja again = pca::StreamingPrivateOja::load(checkpoint, 3, o);
    Eigen::MatrixXd remade;
    again.subscribe([&](const pca::StreamingPrivateOja::Release& r) { remade = r.noisy_sum; });
    again.update_block(second);
    CHECK(remade == published);
    pca::StreamingPrivateOjaOptions none = o;
    none.journal.clear();
    CHECK_THROWS_AS(pca::StreamingPrivateOja::load(checkpoint, 3, none), CorruptInput);
  }
}

TEST_CASE("a stream without a journal writes none and restores as before", "[journal]") {
  ContinualSumOptions o;
  o.horizon = 4;
  o.privacy.noise.seed = 1;
  ContinualCovariance sum(2, o, test_budget::unaccounted());
  sum.update(row(0.5, 0.5));
  ContinualCovariance restored = ContinualCovariance::load(sum.save(), 2, o, test_budget::unaccounted());
  sum.update(row(0.1, 0.2));
  restored.update(row(0.1, 0.2));
  CHECK(restored.noisy_prefix() == sum.noisy_prefix());
}

}  // namespace test_release_journal
