// Reading saved state: bytes are refused as CorruptInput, never as InvalidParameter.
//
// A type's load(message) checks the fields it reads (CorruptInput); its restore(State) and the
// validated constructors and functions behind it (EpsDelta, a conversion at a budget's δ, a meter's
// or a learner's restore) throw InvalidParameter, which is right for a State or a value a caller
// passes in, and wrong when the value came from a ledger, a checkpoint, a noise state or a saved
// session: there the caller did nothing wrong, the bytes are bad. Every load runs the part
// of its work that turns bytes into objects through from_saved_state, which re-throws such a
// refusal as CorruptInput prefixed with what was being read. Only the arguments the caller passes
// (the options a checkpoint is restored into) stay InvalidParameter: check them before the call.
#pragma once

#include <string>
#include <utility>

#include "dpstream/base/errors.hpp"

namespace dpstream::base {

// read(), with an InvalidParameter or InvalidRow it throws re-thrown as CorruptInput("what: …").
template <class Read>
decltype(auto) from_saved_state(const std::string& what, Read&& read) {
  try {
    return std::forward<Read>(read)();
  } catch (const InvalidParameter& e) {
    throw CorruptInput(what + ": " + e.what());
  } catch (const InvalidRow& e) {
    throw CorruptInput(what + ": " + e.what());
  }
}

}  // namespace dpstream::base
