#include "dpstream/session/session_slots.hpp"

#include <algorithm>

namespace dpstream::session {

using Eigen::Index;

SessionSlots session_slots(Index d, const OnlinePcaOptions& s) {
  SessionSlots slots;
  if (!s.private_stream()) return slots;
  const double dd = static_cast<double>(d) * static_cast<double>(d);
  // One more slot of each: a release, a packed sum, a block.
  const double bytes_a_slot = 8.0 * (dd + dd / 2 + static_cast<double>(d) * static_cast<double>(s.block));
  auto extra_within = [&](double budget, double most) {
    return static_cast<std::uint64_t>(std::clamp(budget / bytes_a_slot, 0.0, most));
  };
  if (!s.nonnegative) {
    slots.releases += extra_within(kPrivateBufferBytes, 2);
    slots.sums = std::max(slots.sums, slots.releases);
    return slots;
  }
  const std::uint64_t extra = extra_within(kNonnegativeBufferBytes, 6);
  slots.releases = std::max<std::uint64_t>(3, 2 + extra);
  slots.sums = slots.releases;
  slots.ring = std::max<std::uint64_t>(slots.ring, slots.releases + 4);
  slots.projections = 2;
  return slots;
}

double extra_slot_matrices(const SessionSlots& slots) {
  const SessionSlots usual;
  auto more = [](std::uint64_t have, std::uint64_t usual_count) {
    return static_cast<double>(have) - static_cast<double>(usual_count);
  };
  return more(slots.releases, usual.releases) + more(slots.sums, usual.sums) / 2 +
         more(slots.projections, usual.projections);
}

}  // namespace dpstream::session
