// dpstream error types. Every error names what was wrong and where.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace dpstream {

// A parameter given at construction is out of its domain (ε ≤ 0, δ ≥ 1, a NaN, ...).
// The message names the parameter and the value received.
class InvalidParameter : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// An error that names one row keeps the row's index and the reason (what was wrong, without "row N: ",
// a file or a line) typed beside its message, so that a caller naming the row its own way — a file's
// row and line, a part's place in the stream — takes reason() and never parses what().
struct RowReason {
  std::uint64_t row_index;
  std::string reason;
};

inline std::string row_message(std::uint64_t row_index, const std::string& reason) {
  return "row " + std::to_string(row_index) + ": " + reason;
}

// An input row failed validation in RowGuard (wrong dimension, NaN/Inf, norm over the bound).
// The message names the row index and, where it applies, the column.
class InvalidRow : public std::invalid_argument {
 public:
  // what(): "row N: reason".
  InvalidRow(std::uint64_t row_index, const std::string& reason)
      : InvalidRow(row_message(row_index, reason), row_index, reason) {}
  // The same row and reason under a message the caller wrote whole (one naming the file and line, say).
  static InvalidRow with_message(std::uint64_t row_index, const std::string& message, const std::string& reason) {
    return InvalidRow(message, row_index, reason);
  }
  std::uint64_t row_index() const noexcept { return row_->row_index; }
  const std::string& reason() const noexcept { return row_->reason; }
  // The same reason at another index (a part's row named by its place in the stream): "row M: reason".
  InvalidRow at_row(std::uint64_t row_index) const { return InvalidRow(row_index, reason()); }

 private:
  InvalidRow(const std::string& message, std::uint64_t row_index, const std::string& reason)
      : std::invalid_argument(message), row_(std::make_shared<const RowReason>(RowReason{row_index, reason})) {}
  std::shared_ptr<const RowReason> row_;  // shared: copying an exception must not throw
};

// A release would spend more privacy than the accountant's budget allows. Nothing was released.
class BudgetExhausted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A component would need more memory than the limit allows (dpstream/base/memory_limit.hpp). Thrown
// before anything is allocated; the message names the dimension, the bytes and the limit.
// One met at a row (a new unit over the units' state budget) keeps the row typed, as InvalidRow does.
class ResourceLimit : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // A limit met at one row: what() = "row N: reason".
  ResourceLimit(std::uint64_t row_index, const std::string& reason)
      : std::runtime_error(row_message(row_index, reason)),
        row_(std::make_shared<const RowReason>(RowReason{row_index, reason})) {}
  // The same limit (and row, if it names one) under a message the caller wrote whole.
  ResourceLimit with_message(const std::string& message) const {
    ResourceLimit copy(message);
    copy.row_ = row_;
    return copy;
  }
  // The row it was met at; none for a limit met before any row (a constructor's, a dimension's).
  std::optional<std::uint64_t> row_index() const noexcept {
    return row_ ? std::optional<std::uint64_t>(row_->row_index) : std::nullopt;
  }
  // What the limit was, without the row: what() itself when no row is named.
  std::string reason() const { return row_ ? row_->reason : std::string(what()); }

 private:
  std::shared_ptr<const RowReason> row_;
};

// Serialized state (ledger, checkpoint, log) is corrupt or was made with other parameters.
class CorruptInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Inside a catch block: the exception being handled, thrown again with `message` (which the caller
// builds from its what(), adding where it happened) as the same dpstream type — InvalidRow with its
// row index and reason, InvalidParameter, BudgetExhausted, ResourceLimit (its row kept), CorruptInput —
// so that whoever catches it further up (a tool's exit status, Python's exception class) can still
// tell a refusal for memory from corrupt input or a bad parameter. Any other std::exception becomes a `Fallback` (a
// std::runtime_error unless the caller says otherwise); anything else is rethrown unchanged.
template <class Fallback = std::runtime_error>
[[noreturn]] void rethrow_with_message(const std::string& message) {
  try {
    throw;
  } catch (const InvalidRow& e) {
    throw InvalidRow::with_message(e.row_index(), message, e.reason());
  } catch (const InvalidParameter&) {
    throw InvalidParameter(message);
  } catch (const BudgetExhausted&) {
    throw BudgetExhausted(message);
  } catch (const ResourceLimit& e) {
    throw e.with_message(message);
  } catch (const CorruptInput&) {
    throw CorruptInput(message);
  } catch (const std::exception&) {
    throw Fallback(message);
  }
}

// What was wrong, without where: an error naming a row gives its reason() (no "row N: "), any other
// its what(). For a caller that names the row its own way (rethrow_with_message(where + ": " + ...)).
inline std::string reason_without_row(const std::exception& e) {
  if (const auto* row = dynamic_cast<const InvalidRow*>(&e)) return row->reason();
  if (const auto* limit = dynamic_cast<const ResourceLimit*>(&e)) return limit->reason();
  return e.what();
}

}  // namespace dpstream
