#include "dpstream/io/row_source.hpp"

#include <cctype>

#include "dpstream/base/errors.hpp"
#include "dpstream/io/csv_rows.hpp"
#include "dpstream/io/idx_rows.hpp"
#include "dpstream/io/row_log.hpp"

namespace dpstream::io {

void RowSource::malformed(const std::string& message) {
  if (!skip_malformed_) throw CorruptInput(message);
  if (skipped_ == 0) first_skip_reason_ = message;
  ++skipped_;
}

RowFormat parse_row_format(std::string_view name) {
  if (name == "pb") return RowFormat::pb;
  if (name == "csv") return RowFormat::csv;
  if (name == "idx") return RowFormat::idx;
  if (name == "auto") return RowFormat::automatic;
  throw InvalidParameter("row format \"" + std::string(name) + "\" is not one of pb, csv, idx, auto");
}

const char* to_string(Integrity integrity) noexcept {
  switch (integrity) {
    case Integrity::unverified: return "unverified";
    case Integrity::verified: return "verified";
    case Integrity::no_checksum: break;
  }
  return "none";
}

const char* to_string(CsvHeader header) noexcept {
  switch (header) {
    case CsvHeader::present: return "present";
    case CsvHeader::absent: return "absent";
    case CsvHeader::detect: break;
  }
  return "detect";
}

CsvHeader parse_csv_header(std::string_view text) {
  if (text == "detect" || text == "auto") return CsvHeader::detect;
  if (text == "present" || text == "yes") return CsvHeader::present;
  if (text == "absent" || text == "no") return CsvHeader::absent;
  throw InvalidParameter("CSV header '" + std::string(text) + "': expected detect, present or absent (or auto, yes, no)");
}

const char* to_string(RowFormat format) {
  switch (format) {
    case RowFormat::pb: return "pb";
    case RowFormat::csv: return "csv";
    case RowFormat::idx: return "idx";
    case RowFormat::synthetic: return "synthetic";
    case RowFormat::automatic: break;
  }
  return "auto";
}

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

RowFormat format_from_path(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool gzipped = ends_with(name, ".gz");
  if (gzipped) name.resize(name.size() - 3);
  auto idx_like = [&] {
    if (ends_with(name, ".idx") || ends_with(name, "-ubyte") || ends_with(name, ".ubyte")) return true;
    // .idx1 ... .idx4 (some mirrors name files that way)
    const auto dot = name.find_last_of('.');
    if (dot == std::string::npos) return false;
    const std::string_view ext = std::string_view(name).substr(dot + 1);
    return ext.size() == 4 && ext.substr(0, 3) == "idx" && std::isdigit(static_cast<unsigned char>(ext[3]));
  };
  if (idx_like()) return RowFormat::idx;
  const bool pb = ends_with(name, ".pb") || ends_with(name, ".rowlog");
  const bool csv = ends_with(name, ".csv");
  if ((pb || csv) && gzipped)
    throw InvalidParameter(path + ": gzip is read for IDX files only; decompress the " +
                           std::string(pb ? "row log" : "CSV") + " first");
  if (pb) return RowFormat::pb;
  if (csv) return RowFormat::csv;
  throw InvalidParameter(path + ": cannot tell the row format from the name (.pb/.rowlog, .csv, .idx/-ubyte[.gz]); "
                         "give it explicitly");
}

std::unique_ptr<RowSource> open_row_source(const std::string& path, RowFormat format,
                                           const RowSourceOptions& options) {
  if (format == RowFormat::automatic) format = format_from_path(path);
  // Refused rather than ignored: a caller asking for 1/255 on a CSV would otherwise get raw values.
  if (options.scale != 1.0 && format != RowFormat::idx)
    throw InvalidParameter(path + ": scale is an option of the IDX reader only, got " + std::to_string(options.scale) +
                           " for a " + to_string(format) + " source");
  if (!options.unit_column.empty() && format != RowFormat::csv)
    throw InvalidParameter(path + ": a unit column is an option of the CSV reader only (" + to_string(format) +
                           " source; a row log carries the unit in each row's `unit` field)");
  switch (format) {
    case RowFormat::pb: return std::make_unique<RowLogReader>(path, options.skip_malformed);
    case RowFormat::csv: {
      auto csv = std::make_unique<CsvRowReader>(path, options.csv_header, options.skip_malformed);
      if (!options.unit_column.empty()) csv->use_unit_column(options.unit_column);
      return csv;
    }
    case RowFormat::idx: return std::make_unique<IdxRowReader>(path, options.scale);
    case RowFormat::synthetic:
      throw InvalidParameter(path + ": synthetic rows are generated, not read from a file (io::SyntheticRowSource)");
    case RowFormat::automatic: break;
  }
  throw InvalidParameter(path + ": no reader for the row format");
}

}  // namespace dpstream::io
