#include "dpstream/privacy/params.hpp"

#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::privacy {

using base::format_value;
using base::require_positive;

EpsDelta::EpsDelta(double epsilon, double delta) : epsilon_(epsilon), delta_(delta) {
  require_positive("epsilon", epsilon);
  // Written so that NaN fails: every comparison with NaN is false.
  if (!(delta >= 0.0 && delta < 1.0)) {
    throw InvalidParameter("delta must be in [0, 1), got " + format_value(delta));
  }
}

std::string EpsDelta::to_string() const {
  return "(epsilon=" + format_value(epsilon_) + ", delta=" + format_value(delta_) + ")";
}

Zcdp::Zcdp(double rho) : rho_(rho) { require_positive("rho", rho); }

std::string Zcdp::to_string() const { return "rho=" + format_value(rho_); }

const char* to_string(Calibration c) noexcept {
  switch (c) {
    case Calibration::paper: return "paper";
    case Calibration::tight: return "tight";
  }
  return "unknown";
}

Calibration parse_calibration(const std::string& text) {
  for (const Calibration c : {Calibration::paper, Calibration::tight})
    if (text == to_string(c)) return c;
  throw InvalidParameter("calibration '" + base::printable(text) + "': expected paper or tight");
}

const char* to_string(Neighbours n) noexcept {
  switch (n) {
    case Neighbours::add_remove_row: return "add_remove_row";
    case Neighbours::replace_row: return "replace_row";
    case Neighbours::zero_out_row: return "zero_out_row";
  }
  return "unknown";
}

const char* describe(Neighbours n) noexcept {
  switch (n) {
    case Neighbours::add_remove_row: return "one row added or removed";
    case Neighbours::replace_row: return "one row replaced by another in the same slot";
    case Neighbours::zero_out_row:
      return "one row zeroed, its slot kept (a removal that shifts later rows is not covered)";
  }
  return "unknown";
}

Neighbours parse_neighbours(const std::string& text) {
  for (const Neighbours n : {Neighbours::add_remove_row, Neighbours::replace_row, Neighbours::zero_out_row})
    if (text == to_string(n)) return n;
  throw InvalidParameter("neighbours '" + base::printable(text) + "': expected add_remove_row, replace_row or zero_out_row");
}

std::string stream_relation_from_checkpoint(const std::string& stored) {
  return stored == "add_remove_row" ? "zero_out_row" : stored;
}

void require_stream_relation(const char* who, Neighbours relation) {
  if (relation == Neighbours::zero_out_row || relation == Neighbours::replace_row) return;
  throw InvalidParameter(std::string(who) + ": relation " + to_string(relation) +
                         " is not a stream's guarantee (removing a row shifts every later row into other "
                         "steps); expected zero_out_row (a row zeroed, its slot kept) or replace_row");
}

}  // namespace dpstream::privacy
