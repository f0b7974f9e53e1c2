#include "dpstream/stream/contribution_bound.hpp"

#include "dpstream/base/errors.hpp"
#include "dpstream/base/memory_limit.hpp"

namespace dpstream::stream {

namespace {

std::uint64_t checked_budget(const ContributionBoundOptions& options) {
  check_participation(options.participation);
  const std::uint64_t budget = options.max_state_bytes != 0 ? options.max_state_bytes : memory_limit() / 4;
  if (budget < ContributionBound::kBytesPerUnit)
    throw ResourceLimit("contribution bound: a state budget of " + bytes_text(static_cast<double>(budget)) +
                        " cannot hold one unit (" + std::to_string(ContributionBound::kBytesPerUnit) + " bytes a unit)");
  require_memory("the per-unit state of a contribution bound (" + std::to_string(ContributionBound::kBytesPerUnit) +
                     " bytes a unit, " + std::to_string(budget / ContributionBound::kBytesPerUnit) + " units)",
                 static_cast<double>(budget));
  return budget;
}

}  // namespace

ContributionBound::ContributionBound(const ContributionBoundOptions& options)
    : participation_(options.participation), max_state_bytes_(checked_budget(options)) {}

ContributionBound::UnitState& ContributionBound::unit(std::string_view key, std::uint64_t row_index) {
  if (const auto found = units_.find(key); found != units_.end()) return found->second;
  const std::uint64_t bytes = unit_state_bytes(key.size());
  if (state_bytes_ + bytes > max_state_bytes_)
    throw ResourceLimit(row_index, "its unit is distinct unit number " + std::to_string(units_.size() + 1) +
                                       ", and the per-unit state (" + std::to_string(kBytesPerUnit) +
                                       " bytes a unit, more for keys over 15 bytes) would exceed its budget of " +
                                       bytes_text(static_cast<double>(max_state_bytes_)) +
                                       " (a quarter of the memory limit unless set; "
                                       "raise --max-memory, or bound fewer distinct units)");
  state_bytes_ += bytes;
  ++counts_.units;
  return units_.emplace(std::string(key), UnitState{}).first->second;
}

bool ContributionBound::admit(const std::string* key, std::uint64_t row_index, std::uint64_t block) {
  if (key == nullptr)
    throw InvalidRow(row_index, "no unit key: every row must carry one when contributions are bounded (" +
                                    std::to_string(counts_.seen) + " rows before it were presented)");
  return admit(std::string_view(*key), row_index, block);
}

bool ContributionBound::admit(std::string_view key, std::uint64_t row_index, std::uint64_t block) {
  if (key.empty()) throw InvalidRow(row_index, "empty unit key: every row needs a non-empty one");
  if (block < last_block_)
    throw InvalidRow(row_index, "block " + std::to_string(block) + " is before the previous row's block " +
                                    std::to_string(last_block_) + " (blocks must not decrease)");
  UnitState& state = unit(key, row_index);
  last_block_ = block;
  ++counts_.seen;
  if (state.kept >= participation_.max_rows) {
    ++counts_.over_rows;
    return false;
  }
  // Separation b: the next kept row must be in block last + b or later (b ≥ 1: never the same block).
  if (participation_.min_separation != 0 && state.kept > 0 && block - state.last_block < participation_.min_separation) {
    ++counts_.too_close;
    return false;
  }
  ++state.kept;
  state.last_block = block;
  ++counts_.kept;
  return true;
}

}  // namespace dpstream::stream
