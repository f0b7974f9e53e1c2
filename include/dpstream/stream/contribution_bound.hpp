// ContributionBound: at most k rows of one privacy unit reach a stream, decided row by row.
//
//   source ──▶ ContributionBound ──▶ RowGuard ──▶ ContinualSum (participation = the same k, b)
//
// Rows carry a key naming their unit (a user, a device: an opaque string; integers as their decimal
// text). For each row the bound keeps it or drops it, looking only at the rows of the same unit seen
// before it and the block the row would go into (its position, which is public):
//  * a unit's first k rows are kept, later ones dropped (max_rows = k);
//  * with min_separation b ≥ 1, a row is also dropped when its unit's last kept row is in a block less
//    than b before this one (so a unit has at most one row a block, in blocks at least b apart).
// So the decision for a row never depends on another unit's rows, and removing (zeroing) one unit's
// rows changes no other unit's decisions: the kept stream has at most k rows of each unit, in the
// pattern participation.hpp's sensitivity bound covers.
//
// Counts: dropped rows are counted by reason. The counts depend on the raw data (how many rows each
// unit sent) and are NOT differentially private: a report that shows them says so.
//
// Memory: the state is one entry a unit (its kept rows and last block), held until the stream ends:
// kBytesPerUnit = 96 bytes a unit (a hash-table node with its key inline, up to 15 bytes, and its share
// of the buckets), plus the key's length + 24 for keys over 15 bytes (a heap copy). It grows with the
// number of distinct units, so it is bounded: the options give a budget (default a quarter of the
// memory limit, memory_limit.hpp), refused at construction if over the limit, and the first row whose
// new unit would take the state over it is refused (ResourceLimit naming the row) before it is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "dpstream/stream/participation.hpp"

namespace dpstream::stream {

struct ContributionBoundOptions {
  Participation participation;        // k = max_rows ≥ 1, b = min_separation (0: rows may share a block)
  std::uint64_t max_state_bytes = 0;  // budget of the per-unit state; 0: memory_limit() / 4
};

struct ContributionBoundCounts {
  std::uint64_t seen = 0;        // rows presented
  std::uint64_t kept = 0;        // rows passed on
  std::uint64_t over_rows = 0;   // dropped: the unit already had k rows kept
  std::uint64_t too_close = 0;   // dropped: the unit's last kept row is fewer than b blocks before
  std::uint64_t units = 0;       // distinct units seen
  std::uint64_t dropped() const noexcept { return over_rows + too_close; }
};

class ContributionBound {
 public:
  static constexpr std::uint64_t kBytesPerUnit = 96;
  // The state bytes one unit with a key of `key_bytes` bytes takes (above).
  static std::uint64_t unit_state_bytes(std::size_t key_bytes) noexcept {
    return kBytesPerUnit + (key_bytes > 15 ? key_bytes + 24 : 0);
  }

  // InvalidParameter for a bad participation (max_rows = 0); ResourceLimit when the budget
  // is over the memory limit or cannot hold one unit.
  explicit ContributionBound(const ContributionBoundOptions& options);

  // Row `row_index` (for messages) of the unit `key`, to go into 0-based release block `block`:
  // true = keep it, false = dropped (counted). Blocks must not decrease from row to row.
  // InvalidRow naming the row for a missing key (nullptr: a row without one, when others have one) or
  // an empty one, or a block before the previous row's; ResourceLimit naming the row and the budget
  // when its unit is new and the state would exceed the budget. Nothing changes when it throws.
  bool admit(const std::string* key, std::uint64_t row_index, std::uint64_t block);
  bool admit(std::string_view key, std::uint64_t row_index, std::uint64_t block);

  const ContributionBoundCounts& counts() const noexcept { return counts_; }
  const Participation& participation() const noexcept { return participation_; }
  std::uint64_t state_bytes() const noexcept { return state_bytes_; }
  std::uint64_t max_state_bytes() const noexcept { return max_state_bytes_; }
  // A worst-case count of units the budget holds (all keys ≤ 15 bytes).
  std::uint64_t max_units() const noexcept { return max_state_bytes_ / kBytesPerUnit; }

 private:
  struct UnitState {
    std::uint32_t kept = 0;
    std::uint64_t last_block = 0;
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>{}(key); }
  };
  UnitState& unit(std::string_view key, std::uint64_t row_index);

  Participation participation_;
  std::uint64_t max_state_bytes_;
  std::uint64_t state_bytes_ = 0;
  std::uint64_t last_block_ = 0;
  std::unordered_map<std::string, UnitState, KeyHash, std::equal_to<>> units_;
  ContributionBoundCounts counts_;
};

}  // namespace dpstream::stream
