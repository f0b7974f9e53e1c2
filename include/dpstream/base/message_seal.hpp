// Persistence, one pattern, and the one sealed envelope of everything the library persists.
//
// Every stateful type has one save / load pair, declared beside it in its header, that moves its whole
// state to and from its Protobuf message (lib/proto/):
//   void save(proto::M& out) const
//   load(const proto::M& in, …)
// load is static and returns the object where loading builds it from what its constructor takes (the
// stream's dimension and options, its budget: PrivacyAccountant, stream::ContinualSum,
// pca::StreamingPrivateOja, pca::StreamingPrivatePca); it is a member that fills in an object built
// from its options where the owner built it first (the continual-release noise strategies, the
// online-PCA session's learners, meter, stationary estimate and nonnegative reader, each of which
// also has state() / restore(State) for copies in memory, and whose State has the same pair for the
// messages that nest it). load throws CorruptInput naming the field that does not fit (saved bytes
// are never InvalidParameter: base/saved_state.hpp). The accumulators' pack()/unpack() are not a
// persistence: they are the packed coordinates of a sum, which the owners' messages hold.
//
// A type persisted on its own adds bytes: `std::string save() const` and `static load(bytes, …)`,
// its message in the envelope below (seal / unseal), and nothing else: the ledger, the continual
// sum's and the streaming estimators' checkpoints, a BlockAggregate part. save_file / load_file
// write and read such bytes as a file (atomically, base/atomic_file.hpp). A container of several
// objects' savings is a list of parts (session/session_parts.hpp: dpstream-replay's checkpoint,
// sealed as a whole). A publishing stream restored from its checkpoint obeys the restore rules,
// written once (stream/restore_rules.hpp).
//
// The envelope. Protobuf parses any prefix of a message that is cut at a field boundary as a valid,
// shorter message: a ledger cut after its third charge reads as a ledger of three charges, and budget
// spent silently disappears. The seal is protobuf field 99 (wire type fixed32) appended after the
// message's own fields, holding the CRC-32 (zlib) of every byte before it, so a cut anywhere (the
// trailer goes first) or a flipped bit is refused. The trailer is itself a well-formed field, so
// the sealed bytes still parse as the message (each .proto declares `optional fixed32 crc32 = 99`).
// A sealed message has a kind (the name every refusal starts with) and a format version (field
// `format_version`, written by seal and checked by unseal; a message without one, as dpstream-replay's
// file whose version is inside, is versioned by its reader).
//
// Fuzzing builds (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, the libFuzzer convention) still require
// the trailer but skip comparing the CRC, so mutated inputs reach the parsers behind it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "dpstream/base/atomic_file.hpp"
#include "dpstream/base/errors.hpp"

namespace dpstream::base {

// What a sealed message is: its name in every refusal, and the format_version written and read.
struct SealedKind {
  const char* name;
  std::uint32_t format_version;
};

// `message_bytes` followed by the seal.
std::string seal_message(std::string message_bytes);

// CorruptInput "`what`: ..." unless `bytes` ends in a seal whose CRC matches what precedes it.
void check_message_seal(const std::string& bytes, const std::string& what);

// CorruptInput "`what`: format_version V, this build reads R".
[[noreturn]] void refuse_format_version(const std::string& what, std::uint32_t version, std::uint32_t reads);

// CorruptInput "`what`: N bytes do not parse: not a <Type> message (…)"; `type_name` is the
// message's full Protobuf name (GetTypeName()).
[[noreturn]] void refuse_unparsed(const std::string& what, std::size_t bytes, const std::string& type_name);

// The bytes of the file at `path`. CorruptInput "checkpoint PATH: cannot open: …".
std::string read_saved_file(const std::string& path);

template <class Message>
concept VersionedMessage = requires(Message& m) { m.set_format_version(std::uint32_t{1}); };

// The envelope: `message` (its format_version set to the kind's) in sealed bytes.
template <class Message>
std::string seal(Message message, const SealedKind& kind) {
  if constexpr (VersionedMessage<Message>) message.set_format_version(kind.format_version);
  return seal_message(message.SerializeAsString());
}

// The message in sealed `bytes`. CorruptInput naming `what` (default: the kind's name): no seal or
// a CRC mismatch, bytes that do not parse, another format_version (named).
template <class Message>
Message unseal(const std::string& bytes, const SealedKind& kind, const std::string& what = {}) {
  const std::string& name = what.empty() ? std::string(kind.name) : what;
  check_message_seal(bytes, name);  // a message cut at a field boundary would parse
  Message message;
  if (!message.ParseFromString(bytes)) refuse_unparsed(name, bytes.size(), message.GetTypeName());
  if constexpr (VersionedMessage<Message>)
    if (message.format_version() != kind.format_version)
      refuse_format_version(name, message.format_version(), kind.format_version);
  return message;
}

// A type persisted on its own, written to `path` atomically (mode 0600: saved state is raw data).
template <class T>
void save_file(const std::string& path, const T& object) {
  write_file_atomically(path, object.save());  // removes its own temporary, and nothing else
}

// T::load(the bytes in `path`, built_from…); a refusal is CorruptInput "checkpoint PATH: …".
template <class T, class... BuiltFrom>
T load_file(const std::string& path, BuiltFrom&&... built_from) {
  const std::string bytes = read_saved_file(path);
  try {
    return T::load(bytes, std::forward<BuiltFrom>(built_from)...);
  } catch (const CorruptInput& e) {
    throw CorruptInput("checkpoint " + path + ": " + e.what());
  }
}

}  // namespace dpstream::base
