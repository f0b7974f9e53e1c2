// The restore rules (stream/restore_rules.hpp), written once: the helper itself, and every stream
// that publishes from a checkpoint — ContinualSum and StreamingPrivateOja — going through it: their
// refusals carry the rule's "restore refused", a lowered ledger is merged, never adopted.
#include <cstdint>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/release_journal.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/restore_rules.hpp"
#include "temp_dir.hpp"
#include "unaccounted.hpp"

namespace test_restore_rules {

using namespace dpstream;
using namespace dpstream::stream;
using Catch::Contains;
using privacy::EpsDelta;
using privacy::PrivacyAccountant;

namespace {

ContinualSumOptions sum_options(const std::string& journal) {
  ContinualSumOptions o;
  o.horizon = 8;
  o.block_rows = 1;
  o.privacy.target = EpsDelta(1.0, 1e-6);
  o.privacy.noise.seed = 2;
  o.journal = journal;
  return o;
}

pca::StreamingPrivateOjaOptions oja_options(const std::string& journal) {
  pca::StreamingPrivateOjaOptions o;
  o.k = 1;
  o.batch_rows = 2;
  o.privacy.noise.seed = 4;
  o.journal = journal;
  return o;
}

}  // namespace

TEST_CASE("restore_publication: a lowered ledger is merged, a missing one charged afresh, none without an accountant",
          "[restore][privacy]") {
  PrivacyAccountant saved(EpsDelta(3.0, 1e-6));
  saved.charge_pure("the stream", 0.5);
  const std::string checkpoint_ledger = saved.save();

  // The accountant has spent more since the checkpoint: the checkpoint's ledger is lower, and
  // adopting it would drop the later charge. Merged: unchanged.
  PrivacyAccountant later = PrivacyAccountant::load(checkpoint_ledger);
  later.charge_pure("since the checkpoint", 1.0);
  const std::string later_before = later.save();
  int afresh = 0;
  const auto count = [&] { ++afresh; };
  restore_publication({3, "", checkpoint_ledger}, "", later, count, "test checkpoint");
  CHECK(later.save() == later_before);
  CHECK(later.spent().basic_epsilon == Approx(1.5));

  // A fresh accountant adopts it; one charged elsewhere keeps both.
  PrivacyAccountant fresh(EpsDelta(3.0, 1e-6));
  restore_publication({3, "", checkpoint_ledger}, "", fresh, count, "test checkpoint");
  CHECK(fresh.save() == checkpoint_ledger);
  PrivacyAccountant elsewhere(EpsDelta(3.0, 1e-6));
  elsewhere.charge_pure("elsewhere", 0.25);
  restore_publication({3, "", checkpoint_ledger}, "", elsewhere, count, "test checkpoint");
  CHECK(elsewhere.spent().basic_epsilon == Approx(0.75));
  CHECK(afresh == 0);

  // A checkpoint without a ledger: the stream's own charge, once; no accountant: nothing.
  restore_publication({3, "", ""}, "", fresh, count, "test checkpoint");
  CHECK(afresh == 1);
  restore_publication({3, "", checkpoint_ledger}, "", test_budget::unaccounted(), count, "test checkpoint");
  CHECK(afresh == 1);

  // Over the budget together: refused, naming the rule, the accountant unchanged.
  PrivacyAccountant full(EpsDelta(3.0, 1e-6));
  full.charge_pure("most of it", 2.75);
  const std::string full_before = full.save();
  CHECK_THROWS_NAMING(restore_publication({3, "", checkpoint_ledger}, "", full, count, "test checkpoint"),
                      BudgetExhausted, Contains("test checkpoint: restore refused") && Contains("lowers"));
  CHECK(full.save() == full_before);
}

TEST_CASE("restore_publication: the journal is checked first, a refusal leaves the accountant as it was",
          "[restore][journal]") {
  testing::TempDir dir;
  PrivacyAccountant saved(EpsDelta(3.0, 1e-6));
  saved.charge_pure("the stream", 0.5);
  PrivacyAccountant accountant(EpsDelta(3.0, 1e-6));
  const std::string empty = accountant.save();
  const auto never = [] { FAIL("charged before the journal was checked"); };
  const std::string id(32, 'x');  // a stream that kept a journal
  // Kept one, given none; kept none, given one; given a file that is not there.
  CHECK_THROWS_NAMING(restore_publication({1, id, saved.save()}, "", accountant, never, "ck"), CorruptInput,
                      Contains("ck: restore refused") && Contains("release journal"));
  CHECK_THROWS_NAMING(restore_publication({1, "", ""}, dir.file("j"), accountant, never, "ck"), CorruptInput,
                      Contains("ck: restore refused") && Contains("release journal"));
  CHECK_THROWS_NAMING(restore_publication({1, id, saved.save()}, dir.file("missing"), accountant, never, "ck"),
                      CorruptInput, Contains("ck: restore refused") && Contains("other rows"));
  CHECK(accountant.save() == empty);
}

TEST_CASE("every stream restored from a checkpoint goes through the restore rules", "[restore][journal][privacy]") {
  testing::TempDir dir;
  const Eigen::VectorXd row = Eigen::VectorXd::Constant(2, 0.5);

  SECTION("ContinualSum: a lowered ledger merged, a journal of another stream refused") {
    PrivacyAccountant shared(EpsDelta(3.0, 1e-6));
    const ContinualSumOptions o = sum_options(dir.file("sum.journal"));
    std::string checkpoint;
    {
      ContinualCovariance sum(2, o, shared);
      sum.update(row);
      checkpoint = sum.save();
    }
    shared.charge_pure("since the checkpoint", 0.5);  // the checkpoint's ledger is now the lower one
    const double spent = shared.spent().basic_epsilon;
    ContinualCovariance restored = ContinualCovariance::load(checkpoint, 2, o, shared);
    CHECK(shared.spent().basic_epsilon == spent);
    ContinualCovariance other(2, sum_options(dir.file("other.journal")), test_budget::unaccounted());
    const ContinualSumOptions elsewhere = sum_options(dir.file("other.journal"));
    CHECK_THROWS_NAMING(ContinualCovariance::load(checkpoint, 2, elsewhere, shared),
                        CorruptInput, Contains("continual sum checkpoint: restore refused") && Contains("other rows"));
    CHECK(shared.spent().basic_epsilon == spent);
  }

  SECTION("StreamingPrivateOja: a journal of another stream, or none, refused") {
    const pca::StreamingPrivateOjaOptions o = oja_options(dir.file("oja.journal"));
    std::string checkpoint;
    {
      pca::StreamingPrivateOja oja(2, o, test_budget::unaccounted());
      oja.update_block(Eigen::MatrixXd::Constant(2, 2, 0.5));
      checkpoint = oja.save();
    }
    pca::StreamingPrivateOja restored = pca::StreamingPrivateOja::load(checkpoint, 2, o);
    pca::StreamingPrivateOja other(2, oja_options(dir.file("other.journal")), test_budget::unaccounted());
    CHECK_THROWS_NAMING(pca::StreamingPrivateOja::load(checkpoint, 2, oja_options(dir.file("other.journal"))),
                        CorruptInput, Contains("streaming Oja checkpoint: restore refused") && Contains("other rows"));
    CHECK_THROWS_NAMING(pca::StreamingPrivateOja::load(checkpoint, 2, oja_options("")), CorruptInput,
                        Contains("streaming Oja checkpoint: restore refused") && Contains("release journal"));
  }
}

}  // namespace test_restore_rules
