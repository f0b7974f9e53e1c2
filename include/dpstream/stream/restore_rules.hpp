// The restore rules: what every restore of a publishing stream from its checkpoint obeys, written
// once, here. ContinualSum::load and pca::StreamingPrivateOja::load (and through them
// dpstream-replay's --checkpoint and the Python package's restore) call restore_publication once
// everything else in the checkpoint is known good, and nothing else opens a stream's journal or
// restores a ledger for a stream.
//
//  1. Never lower an accountant's spend. A checkpoint's ledger is merged into the accountant the
//     restored stream charges (privacy::PrivacyAccountant::restore: the common prefix, then every
//     charge either side made since), never written over it: an accountant charged by other
//     mechanisms since the checkpoint keeps those charges, and a fresh one adopts the checkpoint's.
//     A checkpoint saved without an accountant charges the one given now (`charge_afresh`, the
//     stream's own charge, as its construction would have made): its releases are spent either way.
//     A merged ledger over the budget is refused (BudgetExhausted) and the accountant is unchanged.
//  2. Never re-release a published step on other rows. A checkpointed stream keeps its noise, so a
//     stream restored after a crash re-makes the releases published after its checkpoint with the
//     same noise: on other rows, two published versions of one release would differ by exactly
//     the rows' difference. The stream's release journal (base/release_journal.hpp) records every
//     release before it is published; the restored stream opens it at the checkpoint's step and may
//     publish a journalled step again only with the same digest. A checkpoint that kept a journal is
//     refused without one, and one that kept none is refused with one (its past releases cannot be
//     checked); a journal of another stream, or shorter than the checkpoint, is refused.
//
// The journal is checked first and the accountant last, so that a refusal leaves the accountant as
// it was. Every refusal names the checkpoint (`what`) and "restore refused".
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dpstream/base/release_journal.hpp"
#include "dpstream/privacy/budget.hpp"

namespace dpstream::stream {

// What a checkpoint records of what its stream had published when it was written.
struct Publication {
  std::uint64_t steps = 0;  // releases published
  std::string journal_id;   // the stream's journal id ("": it kept no journal)
  std::string ledger;       // its accountant's ledger (PrivacyAccountant::save; "": none)
};

// Applies both rules for a stream restored from `published` that goes on with the journal at
// `journal_path` ("": none) and charges `budget` (an unaccounted budget: nothing restored or charged;
// a stream that charged its whole pass when first built passes an unaccounted one and an empty ledger). Returns the restored stream's journal.
// CorruptInput or InvalidParameter for a journal the rules refuse, BudgetExhausted or CorruptInput
// for a ledger the accountant refuses; std::runtime_error for I/O errors.
base::StreamJournal restore_publication(const Publication& published, const std::string& journal_path,
                                        const privacy::Budget& budget,
                                        const std::function<void()>& charge_afresh, const std::string& what);

}  // namespace dpstream::stream
