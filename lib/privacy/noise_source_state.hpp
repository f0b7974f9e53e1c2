// The noise source's state as checkpoints hold it (continual_sum.proto's SeededSourceState and
// SecureSourceState, in the fields `seeded`, `source` and `secure_source` of every checkpoint message
// that has a source of its own: ContinualSumCheckpoint, StreamingOjaCheckpoint). A library-internal
// header: the generated message types are not part of the public API.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "continual_sum.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::privacy {

// Writes `source`'s state into `msg` (a secure source's key as ratcheted at the last release: it can
// make later noise only).
template <class Message>
void put_noise_source(const NoiseSource& source, Message& msg) {
  if (const auto* seeded = dynamic_cast<const SeededNoiseSource*>(&source)) {
    msg.set_seeded(true);
    const auto state = seeded->state();
    proto::SeededSourceState& s = *msg.mutable_source();
    s.set_seed(state.seed);
    s.mutable_generator()->Add(state.generator.begin(), state.generator.end());
    s.mutable_pending()->Add(state.pending.begin(), state.pending.end());
  } else if (const auto* secure = dynamic_cast<const SecureNoiseSource*>(&source)) {
    const auto state = secure->state();
    proto::SecureSourceState& s = *msg.mutable_secure_source();
    s.set_key(state.key.data(), state.key.size());
    s.set_block_counter(state.block_counter);
    s.mutable_pending()->Add(state.pending.begin(), state.pending.end());
  }
}

// The source `msg` holds; CorruptInput prefixed with `what` ("continual sum checkpoint") if it is
// malformed. A secure source without its key is refused: a restore would re-draw the noise of
// releases the crashed process already published after the checkpoint, two draws of one release that
// an observer could average.
template <class Message>
std::unique_ptr<NoiseSource> get_noise_source(const Message& msg, const std::string& what) {
  try {
    if (msg.seeded()) {
      SeededNoiseSource::State state;
      state.seed = msg.source().seed();
      if (msg.source().generator_size() != 4)
        throw InvalidParameter("seeded source state has " + std::to_string(msg.source().generator_size()) +
                               " generator words, expected 4");
      std::copy(msg.source().generator().begin(), msg.source().generator().end(), state.generator.begin());
      state.pending.assign(msg.source().pending().begin(), msg.source().pending().end());
      return SeededNoiseSource::from_state(state);
    }
    if (!msg.has_secure_source() || msg.secure_source().key().size() != 32)
      throw InvalidParameter("a secure source's checkpoint without its 32-byte source key (a restore would re-draw "
                             "the noise of releases made after it)");
    SecureNoiseSource::State state;
    std::copy(msg.secure_source().key().begin(), msg.secure_source().key().end(), state.key.begin());
    state.block_counter = msg.secure_source().block_counter();
    state.pending.assign(msg.secure_source().pending().begin(), msg.secure_source().pending().end());
    return SecureNoiseSource::from_state(state);
  } catch (const InvalidParameter& e) {
    throw CorruptInput(what + ": " + e.what());
  }
}

}  // namespace dpstream::privacy
