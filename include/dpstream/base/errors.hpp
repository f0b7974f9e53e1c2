// dpstream error types. Every error names what was wrong and where.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dpstream {

// A parameter given at construction is out of its domain (ε ≤ 0, δ ≥ 1, a NaN, ...).
// The message names the parameter and the value received.
class InvalidParameter : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// An input row failed validation in RowGuard (wrong dimension, NaN/Inf, norm over the bound).
// The message names the row index and, where it applies, the column.
class InvalidRow : public std::invalid_argument {
 public:
  InvalidRow(std::uint64_t row_index, const std::string& what)
      : std::invalid_argument("row " + std::to_string(row_index) + ": " + what), row_index_(row_index) {}
  // The same row under a message the caller wrote whole (one naming the file and line, say).
  static InvalidRow with_message(std::uint64_t row_index, const std::string& message) {
    return InvalidRow(message, row_index);
  }
  std::uint64_t row_index() const noexcept { return row_index_; }

 private:
  InvalidRow(const std::string& message, std::uint64_t row_index)
      : std::invalid_argument(message), row_index_(row_index) {}
  std::uint64_t row_index_;
};

// A release would spend more privacy than the accountant's budget allows. Nothing was released.
class BudgetExhausted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A component would need more memory than the limit allows (dpstream/base/memory_limit.hpp). Thrown
// before anything is allocated; the message names the dimension, the bytes and the limit.
class ResourceLimit : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Serialized state (ledger, checkpoint, log) is corrupt or was made with other parameters.
class CorruptInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Inside a catch block: the exception being handled, thrown again with `message` (which the caller
// builds from its what(), adding where it happened) as the same dpstream type — InvalidRow with its
// row index, InvalidParameter, BudgetExhausted, ResourceLimit, CorruptInput — so that whoever catches
// it further up (a tool's exit status, Python's exception class) can still tell a refusal for memory
// from corrupt input or a bad parameter. Any other std::exception becomes a `Fallback` (a
// std::runtime_error unless the caller says otherwise); anything else is rethrown unchanged.
template <class Fallback = std::runtime_error>
[[noreturn]] void rethrow_with_message(const std::string& message) {
  try {
    throw;
  } catch (const InvalidRow& e) {
    throw InvalidRow::with_message(e.row_index(), message);
  } catch (const InvalidParameter&) {
    throw InvalidParameter(message);
  } catch (const BudgetExhausted&) {
    throw BudgetExhausted(message);
  } catch (const ResourceLimit&) {
    throw ResourceLimit(message);
  } catch (const CorruptInput&) {
    throw CorruptInput(message);
  } catch (const std::exception&) {
    throw Fallback(message);
  }
}

}  // namespace dpstream
