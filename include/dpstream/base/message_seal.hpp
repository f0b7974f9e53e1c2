// A CRC-32 trailer for serialized protobuf messages (checkpoints, ledgers): the one envelope of
// everything the library persists.
//
// Persistence, one pattern. A stateful type's state goes to and from its Protobuf message (in
// lib/proto/) by one pair declared beside the type, in its header:
//   save(state, message)  and  load(message, ...) -> state
// (free functions on a plain State value, e.g. pca::save / pca::load for SubspaceTracker::State; or
// members save(message&) / load(const message&) where the state is not a value, as the continual-
// release noise strategies). load throws CorruptInput naming the field that does not fit; the
// type's restore() checks the rest. A type persisted on its own adds the sealed bytes of its
// message, serialize() -> bytes and static deserialize(bytes, ...), which seal_message and
// check_message_seal below (PrivacyAccountant's ledger, ContinualSum's and StreamingPrivateOja's
// checkpoints, BlockAggregate parts); ContinualSum::save_checkpoint / load_checkpoint write and read
// those bytes as a file (base/atomic_file.hpp). A stream restored from its checkpoint obeys the
// restore rules (stream/restore_rules.hpp).
//
// Protobuf parses any prefix of a message that is cut at a field boundary as a valid, shorter
// message: a ledger cut after its third charge reads as a ledger of three charges, and budget
// spent silently disappears. The seal is protobuf field 99 (wire type fixed32) appended after the
// message's own fields, holding the CRC-32 (zlib) of every byte before it, so a cut anywhere (the
// trailer goes first) or a flipped bit is refused. The trailer is itself a well-formed field, so
// the sealed bytes still parse as the message (each .proto declares `optional fixed32 crc32 = 99`).
//
// Fuzzing builds (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, the libFuzzer convention) still require
// the trailer but skip comparing the CRC, so mutated inputs reach the parsers behind it.
#pragma once

#include <string>

namespace dpstream::base {

// `message_bytes` followed by the seal.
std::string seal_message(std::string message_bytes);

// CorruptInput "`what`: ..." unless `bytes` ends in a seal whose CRC matches what precedes it.
void check_message_seal(const std::string& bytes, const std::string& what);

}  // namespace dpstream::base
