#include "dpstream/io/csv_rows.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::io {

namespace {

std::string csv_name(const std::string& path) { return "csv " + path; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool double_quoted(std::string_view field) { return field.size() >= 2 && field.front() == '"' && field.back() == '"'; }

void split(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  for (;;) {
    const std::size_t comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return;
    line.remove_prefix(comma + 1);
  }
}

bool parse_number(std::string_view field, double& value) {
  if (!field.empty() && field.front() == '+') {
    field.remove_prefix(1);
    if (field.empty() || field.front() == '-' || field.front() == '+') return false;
  }
  if (field.empty()) return false;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, value);
  if (ptr != end) return false;
  if (ec == std::errc()) return true;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves the value alone out of range; strtod gives ±inf or the underflowed value.
    const std::string copy(field);
    value = std::strtod(copy.c_str(), nullptr);
    return true;
  }
  return false;
}

// A data field: a number, or a number wrapped in double quotes (its content read as it is).
bool parse_field(std::string_view field, double& value) {
  if (double_quoted(field)) field = field.substr(1, field.size() - 2);
  return parse_number(field, value);
}

// What a field of the first line says about it being a header.
enum class FieldKind { empty, number, quoted_number, name };

FieldKind classify(std::string_view field) {
  double ignored = 0;
  if (field.empty()) return FieldKind::empty;
  if (parse_number(field, ignored)) return FieldKind::number;
  if (double_quoted(field) && parse_number(field.substr(1, field.size() - 2), ignored)) return FieldKind::quoted_number;
  return FieldKind::name;
}

bool ends_with_comma(std::string_view line) {
  const std::string_view t = trim(line);
  return !t.empty() && t.back() == ',';
}

std::string unquote(std::string_view field) {
  if (field.size() < 2 || field.front() != '"' || field.back() != '"') return std::string(field);
  std::string s;
  field = field.substr(1, field.size() - 2);
  for (std::size_t i = 0; i < field.size(); ++i) {
    s += field[i];
    if (field[i] == '"' && i + 1 < field.size() && field[i + 1] == '"') ++i;
  }
  return s;
}

// `fields 1, 3 ("id", "x")`: the 1-based columns and texts of fields[which], the first four of them.
std::string field_list(const std::vector<std::string_view>& fields, const std::vector<std::size_t>& which) {
  constexpr std::size_t kShown = 4;
  std::string columns = which.size() == 1 ? "field " : "fields ", texts;
  for (std::size_t i = 0; i < which.size() && i < kShown; ++i) {
    columns += (i ? ", " : "") + std::to_string(which[i] + 1);
    texts += (i ? ", " : "") + base::quote_input(fields[which[i]]);
  }
  if (which.size() > kShown) {
    columns += " and " + std::to_string(which.size() - kShown) + " more";
    texts += ", ...";
  }
  return columns + " (" + texts + ")";
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Reader

void CsvRowReader::FileCloser::operator()(std::FILE* f) const noexcept { std::fclose(f); }

CsvRowReader::CsvRowReader(const std::string& path, CsvHeader header, bool skip_malformed)
    : RowSource(path, skip_malformed) {
  file_.reset(std::fopen(path.c_str(), "rbe"));
  if (!file_) throw CorruptInput(csv_name(path) + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(::fileno(file_.get()), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
    throw CorruptInput(csv_name(path) + ": empty file (0 bytes)");
  lines_ = std::make_unique<LineReader>(file_.get(), csv_name(path));

  do {
    if (!read_line())
      throw CorruptInput(csv_name(path) + ": no header or data line (" + std::to_string(line_number_) +
                         " lines, all blank or comments)");
  } while (non_row_line());
  split(line_, fields_);
  const bool is_header = header == CsvHeader::present || (header == CsvHeader::detect && detect_header());
  dimension_ = static_cast<Eigen::Index>(fields_.size());
  if (is_header) {
    for (const auto field : fields_) column_names_.push_back(unquote(field));
    header_ends_with_comma_ = ends_with_comma(line_);
    ++non_row_.header;
  } else {
    pending_ = true;
  }
}

bool CsvRowReader::non_row_line() {
  const std::string_view t = trim(line_);
  if (t.empty()) {
    ++non_row_.blank;
    return true;
  }
  if (t.front() == '#') {
    ++non_row_.comment;
    return true;
  }
  return false;
}

bool CsvRowReader::detect_header() const {
  std::vector<std::size_t> names, numbers, quoted_numbers;
  for (std::size_t j = 0; j < fields_.size(); ++j) {
    switch (classify(fields_[j])) {
      case FieldKind::name: names.push_back(j); break;
      case FieldKind::number: numbers.push_back(j); break;
      case FieldKind::quoted_number: quoted_numbers.push_back(j); break;
      case FieldKind::empty: break;  // an unnamed column (pandas' index) or a missing value: says nothing
    }
  }
  const std::string line = csv_name(path_) + ": line " + std::to_string(line_number_) +
                           ": cannot tell whether this first line (comments and blank lines aside) is a header or a row: ";
  const std::string choose =
      "; pass --header yes if it is a header (its fields name the columns) or --header no if it is a row";
  if (!names.empty() && !numbers.empty())
    throw CorruptInput(line + field_list(fields_, names) + (names.size() == 1 ? " is not a number" : " are not numbers") +
                       " but " + field_list(fields_, numbers) + (numbers.size() == 1 ? " is" : " are") +
                       choose);
  if (!names.empty()) return true;  // names, and maybe quoted numbers (CsvRowWriter quotes numeric names)
  if (!numbers.empty()) {
    // pandas writes a DataFrame whose columns have no names with the header 0,1,…,d−1.
    bool pandas = fields_.size() >= 2;
    for (std::size_t j = 0; j < fields_.size() && pandas; ++j) pandas = fields_[j] == std::to_string(j);
    if (pandas)
      throw CorruptInput(line + "its fields are " +
                         (fields_.size() <= 4 ? std::string(trim(line_)) : "0,1,...," + std::to_string(fields_.size() - 1)) +
                         ", the header pandas writes for columns without names, or a row" + choose);
    return false;  // numbers, and maybe quoted numbers or empty fields: a row (checked as one)
  }
  if (!quoted_numbers.empty())
    throw CorruptInput(line + "every field is a quoted number, " + field_list(fields_, quoted_numbers) +
                       ": a header of numeric names or a row written with every field quoted" + choose);
  return false;  // empty fields only: a row, refused as one
}

CsvRowReader::~CsvRowReader() = default;

bool CsvRowReader::read_line() {
  std::string_view raw;
  if (!lines_->next(raw)) return false;
  line_number_ = lines_->line_number();
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  line_ = raw;  // a byte-order mark is the line reader's (without_byte_order_mark)
  return true;
}

std::string CsvRowReader::where(std::uint64_t row_index) const {
  return csv_name(path_) + ": line " + std::to_string(line_number_) + " (row " + std::to_string(row_index) + ")";
}

bool CsvRowReader::next(RowRecord& out) {
  for (;;) {
    if (pending_) {
      pending_ = false;
    } else {
      do {
        if (!read_line()) return false;
      } while (non_row_line());
    }
    const std::uint64_t index = row_index_++;
    split(line_, fields_);
    const bool trailing_comma = ends_with_comma(line_);
    const Eigen::Index expected_fields = dimension_ + (unit_field_ >= 0 ? 1 : 0);
    if (static_cast<Eigen::Index>(fields_.size()) != expected_fields) {
      std::string count = column_names_.empty() ? " (the first data line's count)" : " (the header's count";
      if (!column_names_.empty())
        count += header_ends_with_comma_ ? ", whose line ends with a comma: its last field is empty)" : ")";
      malformed(where(index) + ": " + std::to_string(fields_.size()) + " fields, expected " + std::to_string(expected_fields) +
                count + (trailing_comma ? "; the line ends with a comma" : ""));
      continue;
    }
    if (unit_field_ >= 0 && !take_unit_field(index)) continue;
    out.dense.resize(dimension_);
    Eigen::Index bad = -1;
    for (Eigen::Index j = 0; j < dimension_ && bad < 0; ++j)
      if (!parse_field(fields_[static_cast<std::size_t>(j)], out.dense[j])) bad = j;
    if (bad >= 0) {
      const std::string_view field = fields_[static_cast<std::size_t>(bad)];
      std::string why = " is not a number";
      if (field.empty())
        why += bad + 1 == dimension_ && trailing_comma ? " (an empty field: the line ends with a comma)" : " (an empty field)";
      // Fields count from 1 as the line's text does (like lines); columns from 0 as the row's
      // indices do (like rows, and as RowGuard's messages name them).
      const Eigen::Index field_number = bad + 1 + (unit_field_ >= 0 && bad >= unit_field_ ? 1 : 0);
      malformed(where(index) + ", field " + std::to_string(field_number) + " (column " + std::to_string(bad) +
                "): " + base::quote_input(field) + why);
      continue;
    }
    out.set_dense_position(index, line_number_);
    if (unit_field_ >= 0) {
      out.unit.assign(unit_text_);
      out.has_unit = true;
    }
    ++returned_;
    return true;
  }
}

// ---------------------------------------------------------------------------------------------------
// Writer

CsvRowWriter::CsvRowWriter(const std::string& path, Eigen::Index dimension,
                           const std::vector<std::string>& column_names, base::ExistingFile existing)
    : path_(path), dimension_(dimension) {
  if (dimension <= 0)
    throw InvalidParameter(csv_name(path) + ": dimension must be > 0, got " + std::to_string(dimension));
  if (!column_names.empty() && static_cast<Eigen::Index>(column_names.size()) != dimension)
    throw InvalidParameter(csv_name(path) + ": " + std::to_string(column_names.size()) + " column names for dimension " +
                           std::to_string(dimension));
  std::string header;
  for (std::size_t j = 0; j < column_names.size(); ++j) {
    const std::string& name = column_names[j];
    if (name.find_first_of(",\"\r\n") != std::string::npos)
      throw InvalidParameter(csv_name(path) + ": column name " + std::to_string(j + 1) + " " + base::quote_input(name) +
                             " holds a comma, quote or line break");
    double ignored = 0;
    // A name that reads as a number is quoted, so the reader still detects the header.
    const bool numeric = parse_number(trim(name), ignored);
    header += (j ? "," : "") + (numeric ? "\"" + name + "\"" : name);
  }
  try {
    staged_ = std::make_unique<base::StagedFile>(path, existing);
  } catch (const std::runtime_error& e) {
    rethrow_with_message(csv_name(path) + ": cannot create: " + e.what());
  }
  // A stream of its own over a duplicate of the staged descriptor: fclose closes the duplicate, and
  // the StagedFile then syncs and renames (or, without close(), removes) the temporary.
  const int fd = ::dup(staged_->fd());
  file_ = fd < 0 ? nullptr : ::fdopen(fd, "w");
  if (file_ == nullptr) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(csv_name(path) + ": cannot open a stream: " + std::strerror(err));
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
  if (!column_names.empty()) {
    header += '\n';
    if (std::fwrite(header.data(), 1, header.size(), file_) != header.size())
      throw std::runtime_error(csv_name(path) + ": cannot write the header: " + std::strerror(errno));
    bytes_ += header.size();
  }
}

CsvRowWriter::~CsvRowWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void CsvRowWriter::write(const Eigen::Ref<const Eigen::VectorXd>& row) {
  if (file_ == nullptr) throw InvalidParameter(csv_name(path_) + ": write after close()");
  if (row.size() != dimension_)
    throw InvalidParameter(csv_name(path_) + ": row " + std::to_string(rows_) + " has dimension " +
                           std::to_string(row.size()) + ", expected " + std::to_string(dimension_));
  line_.clear();
  char buf[32];
  for (Eigen::Index j = 0; j < row.size(); ++j) {
    if (j) line_ += ',';
    const auto result = std::to_chars(buf, buf + sizeof buf, row[j]);  // shortest exact form
    line_.append(buf, result.ptr);
  }
  line_ += '\n';
  if (std::fwrite(line_.data(), 1, line_.size(), file_) != line_.size())
    throw std::runtime_error(csv_name(path_) + ": cannot write row " + std::to_string(rows_) + ": " +
                             std::strerror(errno));
  bytes_ += line_.size();
  ++rows_;
}

void CsvRowWriter::close() {
  if (file_ == nullptr) return;
  const bool failed = std::ferror(file_) != 0;
  const int closed = std::fclose(file_);
  const int err = errno;
  file_ = nullptr;
  if (failed || closed != 0) {
    staged_.reset();  // removes the temporary: nothing is written at the path
    throw std::runtime_error(csv_name(path_) + ": cannot flush and close: " + std::strerror(err));
  }
  try {
    staged_->commit();
  } catch (const std::runtime_error& e) {
    rethrow_with_message(csv_name(path_) + ": " + e.what());
  }
}

}  // namespace dpstream::io
