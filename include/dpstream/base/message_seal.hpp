// A CRC-32 trailer for serialized protobuf messages (checkpoints, ledgers).
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
