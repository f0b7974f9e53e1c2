// A session's state as a list of parts: each part is one stateful object's own saved bytes (its
// sealed save() or its save(message)'s message: base/message_seal.hpp), named, so that a container (dpstream-replay's checkpoint file,
// sealed: tools/replay/checkpoint.hpp) holds them without knowing what they are, and a part added
// later does not change the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpstream::session {

struct SessionPart {
  std::string name;   // which object: "continual_sum", "private_learner", "ftl", "meter", ...
  std::string bytes;  // its own serialization
};

struct SessionParts {
  std::uint64_t blocks = 0;  // blocks replayed = releases made (every one full)
  std::vector<SessionPart> parts;

  // The part named `name`; nullptr if absent.
  const SessionPart* find(const std::string& name) const {
    for (const SessionPart& p : parts)
      if (p.name == name) return &p;
    return nullptr;
  }
};

}  // namespace dpstream::session
