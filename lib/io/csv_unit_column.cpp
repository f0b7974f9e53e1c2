// CsvRowReader's unit column (csv_rows.hpp): which field holds each row's unit key, and taking it out
// of the row's fields.
#include <algorithm>
#include <charconv>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/text.hpp"
#include "dpstream/io/csv_rows.hpp"

namespace dpstream::io {

namespace {

std::string names_text(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 8;
  std::string t;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) t += (i ? ", " : "") + base::quote_input(names[i]);
  if (names.size() > kShown) t += ", ... (" + std::to_string(names.size()) + " columns)";
  return t;
}

std::string_view unquoted_key(std::string_view field) {
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') field = field.substr(1, field.size() - 2);
  return field;
}

}  // namespace

void CsvRowReader::use_unit_column(const std::string& name_or_index) {
  const std::string what = "csv " + path_ + ": unit column " + base::quote_input(name_or_index, 200);
  if (row_index_ != 0 || unit_field_ >= 0)
    throw InvalidParameter(what + ": the unit column must be chosen once, before the first row is read");
  std::ptrdiff_t field = -1;
  const auto named = std::find(column_names_.begin(), column_names_.end(), name_or_index);
  if (named != column_names_.end()) {
    field = named - column_names_.begin();
  } else {
    std::size_t index = 0;
    const char* end = name_or_index.data() + name_or_index.size();
    const auto [ptr, ec] = std::from_chars(name_or_index.data(), end, index);
    if (name_or_index.empty() || ec != std::errc() || ptr != end)
      throw CorruptInput(what + ": no column has that name" +
                         (column_names_.empty() ? std::string(" (the file has no header: give a 0-based index)")
                                                : " (the header's names: " + names_text(column_names_) + ")"));
    if (index >= static_cast<std::size_t>(dimension_))
      throw CorruptInput(what + ": index " + std::to_string(index) + " is past the last column (" +
                         std::to_string(dimension_) + " columns, indices from 0)");
    field = static_cast<std::ptrdiff_t>(index);
  }
  if (dimension_ < 2)
    throw CorruptInput(what + ": it is the only column, which leaves no values");
  unit_field_ = field;
  --dimension_;
  if (!column_names_.empty()) column_names_.erase(column_names_.begin() + field);
}

bool CsvRowReader::take_unit_field(std::uint64_t row_index) {
  const auto at = fields_.begin() + unit_field_;
  const std::string_view key = unquoted_key(*at);
  if (key.empty()) {
    malformed(where(row_index) + ", field " + std::to_string(unit_field_ + 1) +
              ": empty unit key (the unit column must name every row's unit)");
    return false;
  }
  unit_text_.assign(key);
  fields_.erase(at);
  return true;
}

}  // namespace dpstream::io
